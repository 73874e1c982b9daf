//! Compares two runs of the same tasks: is B better than A, on which tasks, at what token cost?
//!
//! Target-independent, so the CLI (`gymscope compare`) and the web app's Web Worker share it:
//! nothing here touches a file. Each side is first reduced to a [`RunTasks`] (per task: a content
//! key, its agent, rollout outcomes and per-field means), from a freshly built [`Profile`] plus a
//! [`LineSource`] over its materialized inputs ([`RunTasks::from_profile`]), or from the bytes of
//! a `*_reward_profiling.jsonl` fed in chunks ([`ProfilingFileReader`]). Then [`compare`] pairs
//! the tasks and computes the summaries; [`to_json`], [`text`] and [`report`] present them.
//!
//! - `key`: a task's content key (canonical JSON of its first materialized row, digested);
//! - `side`: [`RunTasks`] from a profile; `profile_file`: from a profiling file;
//! - `pair`: pairing by content or by task index;
//! - `summary`: per-group means, transitions and the paired bootstrap;
//! - `document`: the JSON document; `text`: the terminal output; `report`: the HTML page;
//! - `aggregate`: a `*_aggregate_metrics.json` as a side paired by index, or Welch's test
//!   (`unpaired`: that comparison and its outputs);
//! - `gym_report`: NeMo Gym v0.7.0's `gym eval compare` report (`compare_report.json` and
//!   `.md`) from each run's aggregate entries;
//! - `conversations`: which rollout lines the report shows, and reading them back;
//! - `multi`: a baseline against several candidates, each judged (`verdict`: the sign-flip
//!   p-value, Holm, the verdict; `power`: the minimum detectable effect, repeats needed).
//!
//! [`Profile`]: crate::profile::Profile
//! [`LineSource`]: crate::render::LineSource

pub mod aggregate;
pub mod conversations;
mod document;
pub mod gym_report;
mod key;
pub mod markdown;
pub mod multi;
mod pair;
pub mod power;
mod profile_file;
pub mod report;
pub mod row_diff;
mod side;
mod summary;
pub mod text;
pub mod unpaired;
pub mod verdict;

pub use document::{multi_to_json, to_json};
pub use key::TaskKey;
pub use pair::compare;
pub use profile_file::ProfilingFileReader;
pub use side::{LineRef, RunKind, RunTasks, TaskEntry};
pub use summary::{
    bootstrap_ci, normal_ci, GroupSummary, IntervalMethod, MeanDelta, BOOTSTRAP_MAX_TASKS,
    BOOTSTRAP_RESAMPLES,
};

use crate::reward_group::{RewardGroup, DEFAULT_THRESHOLD};

/// How tasks of A and B are matched.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PairBy {
    /// By the task's content (its prompt, tools and instructions): robust to reordering.
    #[default]
    Content,
    /// By `_ng_task_index`: for a prompt change, where the contents differ on purpose.
    Index,
}

impl PairBy {
    pub fn as_str(self) -> &'static str {
        match self {
            PairBy::Content => "content",
            PairBy::Index => "index",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct CompareOptions {
    pub pair_by: PairBy,
    /// A rollout succeeds when its reward is at least this (the reward groups).
    pub pass_threshold: f64,
    /// Seed of the paired bootstrap: the same seed gives the same interval.
    pub seed: u64,
}

impl Default for CompareOptions {
    fn default() -> Self {
        CompareOptions {
            pair_by: PairBy::Content,
            pass_threshold: DEFAULT_THRESHOLD,
            seed: 0,
        }
    }
}

/// Why two runs cannot be compared (input errors are the profile's [`crate::error::ProfileError`]).
#[derive(Debug, thiserror::Error)]
pub enum CompareError {
    // Transparent: with `{0}` and a source, `{:#}` said the message twice ("X: X").
    #[error(transparent)]
    Profile(#[from] crate::error::ProfileError),
    #[error("'{file}' line {line}: {message}")]
    Sample {
        file: String,
        line: u64,
        message: String,
    },
    #[error(
        "no task of '{a}' is in '{b}' (paired by {by}: {a_tasks} tasks in A, {b_tasks} in B){hint}"
    )]
    NothingInCommon {
        a: String,
        b: String,
        by: &'static str,
        a_tasks: usize,
        b_tasks: usize,
        hint: &'static str,
    },
    #[error("'{file}' {at}: {message}")]
    Aggregate {
        file: String,
        at: String,
        message: String,
    },
    #[error("--pass-threshold must be a finite number, got {0}")]
    BadThreshold(f64),
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

/// One paired task: A's and B's numbers side by side.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct PairedTask {
    /// `_ng_task_index` in A and in B.
    pub task_a: i64,
    pub task_b: i64,
    /// Position in `a.tasks` / `b.tasks` (to find the task's rollouts again).
    pub pos_a: usize,
    pub pos_b: usize,
    /// A's agent name, when the task's row names one.
    pub agent: Option<String>,
    pub rollouts_a: u32,
    pub rollouts_b: u32,
    /// Mean reward over the rollouts with a numeric reward, summed in rollout-index order.
    pub mean_a: Option<f64>,
    pub mean_b: Option<f64>,
    /// `mean_b - mean_a`: exactly 0 when the rewards did not change.
    pub delta: Option<f64>,
    pub group_a: RewardGroup,
    pub group_b: RewardGroup,
    /// Mean `output_tokens` per rollout.
    pub tokens_a: Option<f64>,
    pub tokens_b: Option<f64>,
    /// Means of [`Comparison::fields`], A then B.
    pub fields_a: Vec<Option<f64>>,
    pub fields_b: Vec<Option<f64>>,
}

/// Everything the comparison found, ready to be printed or drawn (serializable, so a Web
/// Worker can hand it to the page).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Comparison {
    pub options: CompareOptions,
    /// The two runs' names (file names, never local paths).
    pub a_name: String,
    pub b_name: String,
    pub tasks_a: usize,
    pub tasks_b: usize,
    pub only_a: usize,
    pub only_b: usize,
    /// Sorted by delta ascending (worst regression first; tasks without a delta last), ties by
    /// `task_a`.
    pub tasks: Vec<PairedTask>,
    pub overall: GroupSummary,
    /// Per agent (A's agent name; `""` for tasks without one), by name.
    pub agents: Vec<(String, GroupSummary)>,
    /// Numeric fields present in both runs, besides `reward` and `output_tokens`.
    pub fields: Vec<String>,
    pub warnings: Vec<String>,
}
