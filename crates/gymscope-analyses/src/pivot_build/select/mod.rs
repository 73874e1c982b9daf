//! PivotRL selection (`gymscope select-pivot`, docs/pivots.md "Pivot datasets"; the rules of upstream's
//! `.agents/skills/nemo-gym-pivot-datasets/SKILL.md` @07d6b0d): the pivots whose on-policy
//! rollouts had mixed rewards, tied to their profile rows by `pivot_id` (from the profile's
//! `sample.pivot_info`) or else by `_ng_task_index` = the pivot's position in its file.
//!
//! Fed in chunks: the profile first ([`ProfileIndex`]), then the pivot file ([`Selector`]),
//! which decides on every pivot once ([`Decisions`]); a [`Plan`] for any options is made from
//! those without reading again: the byte spans of the rows to write, in output order, each with
//! its `profile_info`. Memory: the profile's rewards and one entry per pivot, never the rows.

use crate::read::jsonl::LineSpan;

mod plan;
mod scan;
mod stats;
pub use plan::Decisions;
pub use scan::{ProfileIndex, Selector};
use serde_json::{Map, Value};
pub use stats::{deciles, Breakdown, Tally};
use std::collections::HashMap;

/// What selection decided about one pivot: unprofiled, too few rollouts, or its rollouts' class.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
pub enum Class {
    Unprofiled,
    InsufficientRollouts,
    AllSuccess,
    AllFailure,
    Mixed,
}

impl Class {
    pub const ALL: [Class; 5] = [
        Class::Unprofiled,
        Class::InsufficientRollouts,
        Class::AllSuccess,
        Class::AllFailure,
        Class::Mixed,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Class::Unprofiled => "unprofiled",
            Class::InsufficientRollouts => "insufficient_rollouts",
            Class::AllSuccess => "all_success",
            Class::AllFailure => "all_failure",
            Class::Mixed => "mixed",
        }
    }

    pub fn parse(s: &str) -> Option<Class> {
        Class::ALL.into_iter().find(|c| c.as_str() == s)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Sort {
    None,
    Difficulty,
    Variance,
}

#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SelectOptions {
    pub min_rollouts: u32,
    pub success_threshold: f64,
    pub keep: Vec<Class>,
    pub max_pivots: Option<u64>,
    pub difficulty_threshold: Option<f64>,
    /// PivotRL's λ_diff: keep a pivot when its on-policy rewards vary and their mean is below it.
    pub max_mean: Option<f64>,
    /// Drop a pivot whose prefix and expected action equal an earlier kept pivot's.
    pub dedupe_prefix: bool,
    /// Split off this share for validation, by source trajectory (`trajectory_id`).
    pub val_fraction: Option<f64>,
    pub seed: u64,
    pub sort: Sort,
}

impl Default for SelectOptions {
    fn default() -> Self {
        SelectOptions {
            min_rollouts: 8,
            success_threshold: crate::reward_group::DEFAULT_THRESHOLD,
            keep: vec![Class::Mixed],
            max_pivots: None,
            difficulty_threshold: None,
            max_mean: None,
            dedupe_prefix: false,
            val_fraction: None,
            seed: 0,
            sort: Sort::None,
        }
    }
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{message}")]
pub struct SelectError {
    pub message: String,
}

pub(crate) fn error(message: String) -> SelectError {
    SelectError { message }
}

/// One pivot's outcome.
#[derive(Clone, Debug)]
pub struct Decision {
    pub span: LineSpan,
    pub class: Class,
    pub pass_rate: f64,
    pub variance: f64,
    pub profile_info: Option<Value>,
    /// What the statistics and the split group by: `trajectory_id` (as JSON text),
    /// `meta_info.depth`, the expected action's tool (`message` for a text pivot).
    pub trajectory: Option<String>,
    pub depth: Option<u64>,
    pub tool: String,
    /// SHA-256 of the prefix and expected action, with `--dedupe-prefix`.
    pub prefix: Option<[u8; 32]>,
}

/// Counts of `<selected stem>.selection.json`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SelectionCounts {
    pub pivots: u64,
    pub profiled: u64,
    pub classes: HashMap<Class, u64>,
    pub dropped_above_difficulty_threshold: u64,
    pub dropped_easiest: u64,
    pub dropped_max_mean: u64,
    pub dropped_duplicate_prefix: u64,
    pub kept: u64,
    pub validation: u64,
    pub rollouts_per_pivot: std::collections::BTreeMap<u64, u64>,
    pub breakdown: stats::Breakdown,
}

impl SelectionCounts {
    pub fn class(&self, c: Class) -> u64 {
        self.classes.get(&c).copied().unwrap_or(0)
    }

    pub fn to_json(&self) -> Value {
        let mut m = Map::new();
        m.insert("pivots".into(), self.pivots.into());
        m.insert("profiled".into(), self.profiled.into());
        for c in [
            Class::Unprofiled,
            Class::InsufficientRollouts,
            Class::AllSuccess,
            Class::AllFailure,
            Class::Mixed,
        ] {
            m.insert(c.as_str().into(), self.class(c).into());
        }
        m.insert(
            "dropped_above_difficulty_threshold".into(),
            self.dropped_above_difficulty_threshold.into(),
        );
        m.insert("dropped_easiest".into(), self.dropped_easiest.into());
        m.insert("dropped_max_mean".into(), self.dropped_max_mean.into());
        m.insert(
            "dropped_duplicate_prefix".into(),
            self.dropped_duplicate_prefix.into(),
        );
        m.insert("kept".into(), self.kept.into());
        m.insert("validation".into(), self.validation.into());
        let per: Map<String, Value> = self
            .rollouts_per_pivot
            .iter()
            .map(|(n, c)| (n.to_string(), (*c).into()))
            .collect();
        m.insert("rollouts_per_pivot".into(), Value::Object(per));
        self.breakdown.add_to(&mut m);
        Value::Object(m)
    }

    /// Why a selection kept nothing, in words a user can act on (`select-pivot` and the page
    /// say it instead of writing an empty file).
    pub fn why_empty(&self, options: &SelectOptions) -> String {
        if self.pivots == 0 {
            return "the pivots file has no rows".into();
        }
        if self.profiled == 0 {
            return format!(
                "none of the {} pivots is in the profile (profile the on-policy rollouts of these pivots: collect, then profile)",
                self.pivots
            );
        }
        let short = self.class(Class::InsufficientRollouts);
        if short == self.profiled {
            let counts: Vec<String> = self.rollouts_per_pivot.keys().map(u64::to_string).collect();
            let counts = counts.join(" or ");
            return format!(
                "every profiled pivot has {counts} rollouts; --min-rollouts is {}: collect with --num-repeats {} or lower it",
                options.min_rollouts, options.min_rollouts
            );
        }
        let keep: Vec<&str> = options.keep.iter().map(|c| c.as_str()).collect();
        let mut found: Vec<String> = Class::ALL
            .iter()
            .filter(|&&c| self.class(c) > 0)
            .map(|&c| format!("{} {}", self.class(c), c.as_str()))
            .collect();
        if self.dropped_above_difficulty_threshold > 0 {
            found.push(format!(
                "{} dropped above --difficulty-threshold",
                self.dropped_above_difficulty_threshold
            ));
        }
        if self.dropped_max_mean > 0 {
            found.push(format!(
                "{} dropped by --max-mean (no variance, or mean not below it)",
                self.dropped_max_mean
            ));
        }
        if self.validation > 0 {
            found.push(format!("{} sent to validation", self.validation));
        }
        format!(
            "no pivot is in the kept classes ({}): {}; --keep others or collect more repeats",
            keep.join(", "),
            found.join(", ")
        )
    }

    /// The counts as a markdown table, `count / pivots (pct)` cells.
    pub fn markdown(&self) -> String {
        let j = self.to_json();
        let mut out = String::from("| selection | count |\n| --- | --- |\n");
        for (k, v) in j.as_object().into_iter().flatten() {
            if let Some(c) = v.as_u64() {
                let cell = if k == "pivots" {
                    c.to_string()
                } else {
                    format!(
                        "{c} / {} ({})",
                        self.pivots,
                        crate::figures::percent_of(c, self.pivots)
                    )
                };
                out.push_str(&format!("| {k} | {cell} |\n"));
            }
        }
        out.push_str(&self.breakdown.text());
        out
    }
}

/// What to write: the rows' spans in output order, each with the `profile_info` to append.
#[derive(Debug)]
pub struct Plan {
    pub selected: Vec<Decision>,
    /// With `val_fraction`: the pivots split off for validation, in output order.
    pub validation: Vec<Decision>,
    pub counts: SelectionCounts,
}

/// A selected row: the original pivot row with `profile_info` right after `pivot_info`.
pub fn selected_row(line: &[u8], profile_info: Option<&Value>) -> Result<Vec<u8>, String> {
    let row: Map<String, Value> = serde_json::from_slice(line).map_err(|e| e.to_string())?;
    let mut out = Map::with_capacity(row.len() + 1);
    let has_pivot_info = row.contains_key("pivot_info");
    for (k, v) in row {
        let after = k == "pivot_info";
        out.insert(k, v);
        if after {
            if let Some(info) = profile_info {
                out.insert("profile_info".into(), info.clone());
            }
        }
    }
    if !has_pivot_info {
        if let Some(info) = profile_info {
            out.insert("profile_info".into(), info.clone());
        }
    }
    let mut bytes = serde_json::to_vec(&Value::Object(out)).map_err(|e| e.to_string())?;
    bytes.push(b'\n');
    Ok(bytes)
}
