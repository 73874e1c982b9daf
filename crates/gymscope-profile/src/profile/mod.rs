//! The reward profile (`gym eval profile`): streams the materialized-inputs and rollouts files,
//! joins them by rollout key, and computes per-task and per-agent statistics as upstream does.
//!
//! Memory grows with the number of rollouts and numeric fields only: each rollout keeps its key,
//! its numbers and the byte span of its line, never its text.

mod batch;
mod compute;
mod coverage;
pub mod labels;
mod pooled;
mod repeats;
mod scan;

pub use coverage::Coverage;
pub use repeats::{AcrossRepeats, RepeatEntry};

pub use batch::{parse_batch, parse_batch_with, ParsedBatch};
pub use scan::parse_line;
pub use scan::ProfileBuilder;

use crate::error::RolloutKey;
use crate::json::Num;
use crate::read::jsonl::LineSpan;
use crate::record::{key, IndexKind, KeyId, KeyTable, Reward};
use std::collections::{HashMap, HashSet};

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
    /// What `_ng_task_index` and `_ng_rollout_index` were in the row: `rollout_infos` writes
    /// them as read (v0.7.0 `rollout_info_from_result`).
    pub kinds: (IndexKind, IndexKind),
    pub(crate) top: Box<[(KeyId, Option<Num>)]>,
    pub(crate) usage: Box<[(KeyId, Option<Num>)]>,
    /// `reward` verbatim, when present.
    pub reward: Option<Reward>,
    /// `mask_sample` was truthy: the rollout is not a measurement (kept out of the profile's
    /// statistics, counted in its completion).
    pub masked: bool,
    /// Where the rollout's line is, to show it again on demand.
    pub span: LineSpan,
}

impl RolloutRecord {
    /// The row's metric values in upstream's frame order: `result | response.usage` (a usage key
    /// overrides a same-named top-level key in its position), numbers only.
    pub fn metric_values(&self, mut f: impl FnMut(KeyId, Num)) {
        if self.usage.is_empty() {
            for &(k, v) in &self.top {
                if let Some(v) = v {
                    f(k, v);
                }
            }
            return;
        }
        // Few usage fields (the usual 3–6): linear lookups; many: a hash map, so rows with huge
        // numbers of fields stay linear.
        let many = self.usage.len() > 16;
        let usage_of: HashMap<KeyId, Option<Num>> = if many {
            self.usage.iter().copied().collect()
        } else {
            HashMap::new()
        };
        let in_usage = |k: KeyId| -> Option<Option<Num>> {
            if many {
                usage_of.get(&k).copied()
            } else {
                self.usage.iter().find(|(u, _)| *u == k).map(|&(_, v)| v)
            }
        };
        for &(k, v) in &self.top {
            if let Some(v) = in_usage(k).unwrap_or(v) {
                f(k, v);
            }
        }
        let top_keys: HashSet<KeyId> = if many || self.top.len() > 16 {
            self.top.iter().map(|(k, _)| *k).collect()
        } else {
            HashSet::new()
        };
        for &(k, v) in &self.usage {
            let in_top = if top_keys.is_empty() {
                self.top.iter().any(|(t, _)| *t == k)
            } else {
                top_keys.contains(&k)
            };
            if let (Some(v), false) = (v, in_top) {
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

/// The statistics of every metric column in one group (a task, an agent), stored only for the
/// columns the group has a value in: a column no rollout of the group has is all `None`, as
/// upstream writes no key for it. Memory is then bounded by the data, not by groups × columns
/// (4,000 tasks each with its own field took 1.7 GB dense).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ColumnSummaries {
    width: usize,
    /// Ascending column index.
    present: Vec<(u32, ColumnSummary)>,
}

/// `column_of`'s mark of a key that is not a metric column (`compute`, `repeats`).
const NO_COLUMN: u32 = u32::MAX;

const NO_VALUES: ColumnSummary = ColumnSummary {
    mean: None,
    max: None,
    min: None,
    median: None,
    std: None,
};

impl ColumnSummaries {
    /// `present` must be in ascending column order, each below `width`.
    pub fn new(width: usize, present: Vec<(u32, ColumnSummary)>) -> Self {
        debug_assert!(present.windows(2).all(|w| w[0].0 < w[1].0));
        ColumnSummaries { width, present }
    }

    /// The number of columns.
    pub fn len(&self) -> usize {
        self.width
    }

    pub fn is_empty(&self) -> bool {
        self.width == 0
    }

    /// Column `c`'s statistics (all `None` where the group has no value).
    pub fn get(&self, c: usize) -> &ColumnSummary {
        match self.present.binary_search_by_key(&(c as u32), |(k, _)| *k) {
            Ok(i) => &self.present[i].1,
            Err(_) => &NO_VALUES,
        }
    }

    /// Every column in order, `None`s included.
    pub fn iter(&self) -> impl Iterator<Item = &ColumnSummary> + '_ {
        let mut next = self.present.iter().peekable();
        (0..self.width).map(move |c| match next.peek() {
            Some((k, s)) if *k as usize == c => {
                next.next();
                s
            }
            _ => &NO_VALUES,
        })
    }

    /// Only the columns with a value in the group, with their index, in order.
    pub fn present(&self) -> impl Iterator<Item = (usize, &ColumnSummary)> + '_ {
        self.present.iter().map(|(c, s)| (*c as usize, s))
    }
}

impl std::ops::Index<usize> for ColumnSummaries {
    type Output = ColumnSummary;
    fn index(&self, c: usize) -> &ColumnSummary {
        assert!(c < self.width, "column {c} of {}", self.width);
        self.get(c)
    }
}

impl<'a> IntoIterator for &'a ColumnSummaries {
    type Item = &'a ColumnSummary;
    type IntoIter = Box<dyn Iterator<Item = &'a ColumnSummary> + 'a>;
    fn into_iter(self) -> Self::IntoIter {
        Box::new(self.iter())
    }
}

/// One row of `*_reward_profiling.jsonl`.
#[derive(Debug)]
pub struct TaskProfile {
    pub task: i64,
    /// How `_ng_task_index` is written: as pandas holds the column (floats when any row's is
    /// a float, bools when all are).
    pub task_kind: IndexKind,
    /// The agent label of a fan-out run's row: a task run by several agents has a row per
    /// agent (v0.7.0 `profile_from_data`, `per_agent`); `None` otherwise.
    pub agent: Option<AgentKey>,
    /// One entry per [`Profile::columns`] entry.
    pub columns: ColumnSummaries,
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
    pub columns: ColumnSummaries,
    pub num_rollouts: usize,
    /// `*_across_repeats/*`: each primary repeat-level metric across the agent's repeats (empty
    /// for an agent with one repeat).
    pub across: Vec<AcrossRepeats>,
    /// `coverage/*`, when some of the agent's rollouts were masked.
    pub coverage: Option<Coverage>,
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
    /// Upstream's first summary lines (the summary text, the app and the report print them).
    pub fn lines(&self) -> [String; 2] {
        [
            format!(
                "Reward profile completion: {}/{} rollout rows ({:.2}%)",
                self.completed_rollout_rows,
                self.expected_rollout_rows,
                self.completion_pct()
            ),
            format!(
                "Input rows: {} total; {} complete; {} partial; {} without rollouts dropped from output.",
                self.total_input_rows,
                self.complete_input_rows,
                self.partial_input_rows,
                self.missing_input_rows
            ),
        ]
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
    /// Matched measured rollouts, ascending (task, rollout); in a fan-out run ascending (task,
    /// agent label, rollout), those without a label last in their task (in no task row).
    pub rollouts: Vec<RolloutRecord>,
    pub summary: CompletionSummary,
    /// Things upstream would crash on that were handled, for the user to know.
    pub warnings: Vec<String>,
    /// Each rollout's agent, as an index into `agents` (`None`: no agent name).
    pub rollout_agent: Vec<Option<usize>>,
    /// Rollouts whose `mask_sample` was truthy, ascending key: in no statistic, counted in the
    /// completion (v0.7.0).
    pub masked: Vec<RolloutRecord>,
    /// `*_repeat_level_metrics.json`: per agent with two or more repeats, per repeat.
    pub repeats: Vec<RepeatEntry>,
    /// Agents whose every rollout was masked (or named otherwise than any agent row): coverage
    /// entries after the agent rows, in the order first met.
    pub coverage_only: Vec<(AgentKey, Coverage)>,
}

impl Profile {
    /// A metric column's name; [`Profile::agent_column`] is `agent_name`.
    pub fn column_name(&self, column: usize) -> &str {
        match self.columns.get(column) {
            Some(&k) => self.keys.name(k),
            None => "agent_name",
        }
    }

    /// The column index the repeat-level statistics give the agents' numeric names (one past
    /// the metric columns): v0.7.0's frame holds the name in a column `agent_name`, which
    /// `select_dtypes(include="number")` takes as a metric when every name is a number.
    pub fn agent_column(&self) -> usize {
        self.columns.len()
    }
}
