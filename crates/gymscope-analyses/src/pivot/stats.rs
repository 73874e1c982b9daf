//! `--stats`: the metrics the pivot skill asks a conversion to report, computed from the file:
//! rows rejected by reason, action types, expected tools, depth, source reward groups (the
//! PivotRL selection signal) and provenance coverage of the fields that exist.

use super::checks::{get_path, Check, RowFacts};
use super::summary::ranked;
use super::tree::{Interest, Json};
use crate::figures::percent_of;
use crate::json::Num;
use crate::reward_group::{classify, RewardGroup, DEFAULT_THRESHOLD};
use std::collections::{BTreeMap, HashMap};

/// Provenance fields converters write; coverage is reported for those present in any row.
const PROVENANCE: [&str; 12] = [
    "uuid",
    "trajectory_id",
    "task_id",
    "rollout_id",
    "meta_info.turn",
    "meta_info.step",
    "meta_info.assistant_depth",
    "meta_info.depth",
    "source_model_info.reward_mean",
    "source_model_info.rewards",
    "conversation_info",
    "tool_use_info",
];
const DEPTHS: [&str; 4] = [
    "meta_info.depth",
    "meta_info.assistant_depth",
    "meta_info.turn",
    "meta_info.step",
];

#[derive(Debug, Default, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Stats {
    pub rows: u64,
    pub valid: u64,
    pub rejected_by_check: BTreeMap<Check, u64>,
    pub action_types: BTreeMap<String, u64>,
    pub expected_tools: HashMap<String, u64>,
    /// For each depth field, rows per value.
    pub depths: BTreeMap<String, BTreeMap<i64, u64>>,
    /// Source reward group per row: `all-0`, `all-1`, `mixed`.
    pub reward_groups: BTreeMap<String, u64>,
    pub provenance: BTreeMap<String, u64>,
}

/// The parts of a row `--stats` reads besides the checked ones.
pub fn add_interest(interest: &mut Interest) {
    interest.key("meta_info").all = true;
    interest.key("source_model_info").all = true;
    interest.key("expected_action").all = true;
}

impl Stats {
    pub fn add_row(&mut self, row: &Json, facts: Option<&RowFacts>, first_failure: Option<Check>) {
        self.rows += 1;
        match (facts, first_failure) {
            (Some(facts), _) => {
                self.valid += 1;
                *self
                    .action_types
                    .entry(facts.action_type.to_string())
                    .or_default() += 1;
                for tool in &facts.expected_tools {
                    *self.expected_tools.entry(tool.clone()).or_default() += 1;
                }
            }
            (None, Some(check)) => *self.rejected_by_check.entry(check).or_default() += 1,
            (None, None) => {}
        }
        for field in PROVENANCE {
            if get_path(row, field).is_some() {
                *self.provenance.entry(field.to_string()).or_default() += 1;
            }
        }
        for field in DEPTHS {
            if let Some(Json::Num(Num::Int(d))) = get_path(row, field) {
                *self
                    .depths
                    .entry(field.to_string())
                    .or_default()
                    .entry(*d)
                    .or_default() += 1;
            }
        }
        if let Some(group) = reward_group(row) {
            *self.reward_groups.entry(group.to_string()).or_default() += 1;
        }
    }

    /// Adds the counts of rows read after these (another reader's, in file order).
    pub fn merge(&mut self, later: Stats) {
        self.rows += later.rows;
        self.valid += later.valid;
        add_counts(&mut self.rejected_by_check, later.rejected_by_check);
        add_counts(&mut self.action_types, later.action_types);
        for (tool, n) in later.expected_tools {
            *self.expected_tools.entry(tool).or_default() += n;
        }
        for (field, values) in later.depths {
            add_counts(self.depths.entry(field).or_default(), values);
        }
        add_counts(&mut self.reward_groups, later.reward_groups);
        add_counts(&mut self.provenance, later.provenance);
    }

    /// `count / total (pct)` lines, as the skill's reference converters print them.
    pub fn text(&self) -> String {
        let line = |name: &str, n: u64, total: u64| {
            format!("  {name}: {n} / {total} ({})\n", percent_of(n, total))
        };
        let mut out = format!("stats:\n  rows: {}\n", self.rows);
        out.push_str(&line("valid", self.valid, self.rows));
        if !self.rejected_by_check.is_empty() {
            out.push_str("rejected_rows_by_first_failure:\n");
            for (check, n) in &self.rejected_by_check {
                out.push_str(&line(
                    &format!("{} {}", check.id(), check.title()),
                    *n,
                    self.rows,
                ));
            }
        }
        out.push_str("action_type:\n");
        for (ty, n) in &self.action_types {
            out.push_str(&line(ty, *n, self.valid));
        }
        if !self.expected_tools.is_empty() {
            out.push_str("expected_tool (top 25):\n");
            for (tool, n) in ranked(&self.expected_tools).into_iter().take(25) {
                out.push_str(&line(tool, n, self.valid));
            }
        }
        for (field, values) in &self.depths {
            out.push_str(&format!("{field}:\n"));
            for (value, n) in values {
                out.push_str(&line(&value.to_string(), *n, self.rows));
            }
        }
        if !self.reward_groups.is_empty() {
            out.push_str("source_reward_group:\n");
            for (group, n) in &self.reward_groups {
                out.push_str(&line(group, *n, self.rows));
            }
        }
        if !self.provenance.is_empty() {
            out.push_str("provenance_coverage:\n");
            for (field, n) in &self.provenance {
                out.push_str(&line(field, *n, self.rows));
            }
        }
        out
    }
}

fn add_counts<K: Ord>(into: &mut BTreeMap<K, u64>, from: BTreeMap<K, u64>) {
    for (key, n) in from {
        *into.entry(key).or_default() += n;
    }
}

/// PivotRL's grouping of the source trajectory group by its rewards (the core classifier, default
/// threshold). With only `reward_mean`, the mean decides: at the threshold or above every rollout
/// passed, at 0 or below none did, between some did.
fn reward_group(row: &Json) -> Option<&'static str> {
    let group = match get_path(row, "source_model_info.rewards") {
        Some(Json::Arr(items)) => classify(
            items.iter().map(|v| match v {
                Json::Num(n) => Some(n.as_f64()),
                Json::Bool(b) => Some(f64::from(u8::from(*b))),
                _ => None,
            }),
            DEFAULT_THRESHOLD,
        ),
        _ => match get_path(row, "source_model_info.reward_mean") {
            Some(Json::Num(n)) if n.as_f64() >= DEFAULT_THRESHOLD => RewardGroup::AllSuccess,
            Some(Json::Num(n)) if n.as_f64() <= 0.0 => RewardGroup::AllFailure,
            Some(Json::Num(_)) => RewardGroup::Mixed,
            _ => return None,
        },
    };
    (group != RewardGroup::NoReward).then_some(group.label())
}
