//! The reward profile (`gym eval profile`): streams the materialized-inputs and rollouts files,
//! joins them by rollout key, and computes per-task and per-agent statistics as upstream does.
//!
//! Memory grows with the number of rollouts and numeric fields only: each rollout keeps its key,
//! its numbers and the byte span of its line, never its text.

mod compute;
mod scan;

pub use scan::ProfileBuilder;

use crate::error::RolloutKey;
use crate::json::Num;
use crate::jsonl::LineSpan;
use crate::record::{key, AgentField, KeyId, KeyTable, Reward};

/// An agent's group key: a name, or a number when a rollout's numeric `agent_name` field
/// replaces it (upstream lets that column win).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct AgentKey {
    pub name: Box<str>,
    /// `true` when the key came from a number; it is then written as a JSON number.
    pub numeric: bool,
}

impl AgentKey {
    pub(crate) fn from_num(n: Num) -> Self {
        let mut buf = Vec::new();
        let _ = n.write_json(&mut buf);
        AgentKey {
            name: String::from_utf8_lossy(&buf).into(),
            numeric: true,
        }
    }
}

/// One rollout row, reduced to its numbers.
#[derive(Debug)]
pub struct RolloutRecord {
    pub key: RolloutKey,
    pub(crate) top: Box<[(KeyId, Option<Num>)]>,
    pub(crate) usage: Box<[(KeyId, Option<Num>)]>,
    /// `reward` verbatim, when present.
    pub reward: Option<Reward>,
    /// The rollout row's own `agent_ref.name`, used when its input row has none.
    pub(crate) agent: AgentField,
    /// Where the rollout's line is, to show it again on demand.
    pub span: LineSpan,
}

impl RolloutRecord {
    /// The row's metric values in upstream's frame order: `result | response.usage` (a usage key
    /// overrides a same-named top-level key in its position), numbers only.
    pub fn metric_values(&self, mut f: impl FnMut(KeyId, Num)) {
        for &(k, v) in &self.top {
            let v = match self.usage.iter().find(|(u, _)| *u == k) {
                Some(&(_, usage_value)) => usage_value,
                None => v,
            };
            if let Some(v) = v {
                f(k, v);
            }
        }
        for &(k, v) in &self.usage {
            if let (Some(v), false) = (v, self.top.iter().any(|(t, _)| *t == k)) {
                f(k, v);
            }
        }
    }

    /// Numeric `response.usage` fields, in order (for `rollout_infos`).
    pub fn usage_numbers(&self) -> impl Iterator<Item = (KeyId, Num)> + '_ {
        self.usage.iter().filter_map(|&(k, v)| v.map(|v| (k, v)))
    }

    /// Numeric top-level fields except the reward (for `rollout_infos`).
    pub fn top_numbers(&self) -> impl Iterator<Item = (KeyId, Num)> + '_ {
        self.top
            .iter()
            .filter(|(k, _)| *k != key::REWARD)
            .filter_map(|&(k, v)| v.map(|v| (k, v)))
    }
}

/// Options of a profile run.
#[derive(Clone, Copy, Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct ProfileOptions {
    /// Profile completed rollouts of a partial collection instead of failing on missing ones.
    pub allow_partial_rollouts: bool,
}

/// Statistics of one metric column in one group; `None` where upstream writes no key.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ColumnSummary {
    pub mean: Option<f64>,
    pub max: Option<Num>,
    pub min: Option<Num>,
    pub median: Option<f64>,
    pub std: Option<f64>,
}

/// One row of `*_reward_profiling.jsonl`.
#[derive(Debug)]
pub struct TaskProfile {
    pub task: i64,
    /// One entry per [`Profile::columns`] entry.
    pub columns: Vec<ColumnSummary>,
    /// The materialized row written as `sample`.
    pub sample: LineSpan,
    pub num_rollouts: usize,
    pub expected_num_rollouts: usize,
    /// This task's rollouts in [`Profile::rollouts`], ascending rollout index.
    pub rollouts: std::ops::Range<usize>,
}

impl TaskProfile {
    pub fn missing_num_rollouts(&self) -> usize {
        self.expected_num_rollouts - self.num_rollouts
    }
    pub fn completion_pct(&self) -> f64 {
        pct(self.num_rollouts, self.expected_num_rollouts)
    }
}

/// One entry of `*_agent_metrics.json`.
#[derive(Debug)]
pub struct AgentProfile {
    pub agent: AgentKey,
    pub columns: Vec<ColumnSummary>,
    pub num_rollouts: usize,
}

/// Upstream's completion summary.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct CompletionSummary {
    pub expected_rollout_rows: usize,
    pub completed_rollout_rows: usize,
    pub total_input_rows: usize,
    pub complete_input_rows: usize,
    pub partial_input_rows: usize,
    pub missing_input_rows: usize,
}

impl CompletionSummary {
    pub fn completion_pct(&self) -> f64 {
        pct(self.completed_rollout_rows, self.expected_rollout_rows)
    }
    pub fn missing_rollout_rows(&self) -> usize {
        self.expected_rollout_rows - self.completed_rollout_rows
    }
}

fn pct(done: usize, expected: usize) -> f64 {
    if expected == 0 {
        100.0
    } else {
        100.0 * done as f64 / expected as f64
    }
}

/// A finished profile: everything needed to write both output files and show them.
#[derive(Debug)]
pub struct Profile {
    pub keys: KeyTable,
    /// Metric columns, in upstream's order.
    pub columns: Vec<KeyId>,
    /// max/min are integers only when every metric column is an integer in every rollout.
    pub all_int: bool,
    pub tasks: Vec<TaskProfile>,
    pub agents: Vec<AgentProfile>,
    /// Matched rollouts, ascending (task, rollout).
    pub rollouts: Vec<RolloutRecord>,
    pub summary: CompletionSummary,
    /// Things upstream would crash on that were handled, for the user to know.
    pub warnings: Vec<String>,
    /// Each rollout's agent, as an index into `agents` (`None`: no agent name).
    pub rollout_agent: Vec<Option<usize>>,
}

impl Profile {
    pub fn column_name(&self, column: usize) -> &str {
        self.keys.name(self.columns[column])
    }
}
