//! Conversion metrics (docs/pivots.md "Pivot datasets"; shaped after the metrics file of upstream's
//! `.agents/skills/nemo-gym-pivot-datasets/scripts/reference/tool_messages_to_pivot_dataset_reference.py`
//! @07d6b0d): the counts a user needs before training, as
//! `<out stem>.metrics.json` and the markdown `<out stem>.info.md`. No clock values: the files
//! are part of the deterministic output.

use super::skips::Reason;
use crate::figures::percent_of;
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;

mod info;

/// Counters filled while building.
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct Metrics {
    pub source_format: String,
    pub source_rows_seen: u64,
    pub invalid_source_rows: u64,
    pub source_rows_used: u64,
    pub trajectories_with_pivots: u64,
    pub decision_points: u64,
    pub pivot_rows_written: u64,
    pub nameless_tool_calls: u64,
    pub tools_parameters_filled: u64,
    pub skips: BTreeMap<Reason, u64>,
    pub multi_tool_counts: BTreeMap<String, u64>,
    pub action_types: BTreeMap<String, u64>,
    pub tools: BTreeMap<String, u64>,
    pub turn_step: BTreeMap<String, u64>,
    pub depth: BTreeMap<String, u64>,
    pub with_target_reasoning: u64,
    pub with_target_content: u64,
    pub multistep: u64,
    pub multistep_with_prior_reasoning: u64,
    /// Task groups by class: all_success, all_failure, mixed.
    pub group_tasks: [u64; 3],
    /// Source rows by their group's class.
    pub group_trajectories: [u64; 3],
    pub coverage: BTreeMap<String, u64>,
    pub selfcheck_passed: u64,
    pub selfcheck_failed: u64,
    /// Rows that lost a tool-call pivot because the source had no tool schemas.
    pub pivots_lost_without_tools: u64,
    /// The tau2 layout's cleaning counts.
    pub conversational: Option<[u64; 3]>,
}

impl Metrics {
    /// Adds the counts of lines converted elsewhere (`pass::batch`). Every field is named, so a
    /// new counter cannot be forgotten here; the ones set at the end of a build are not summed.
    pub fn absorb(&mut self, line: Metrics) {
        let Metrics {
            source_format: _,
            source_rows_seen,
            invalid_source_rows,
            source_rows_used,
            trajectories_with_pivots,
            decision_points,
            pivot_rows_written,
            nameless_tool_calls,
            tools_parameters_filled,
            skips,
            multi_tool_counts,
            action_types,
            tools,
            turn_step,
            depth,
            with_target_reasoning,
            with_target_content,
            multistep,
            multistep_with_prior_reasoning,
            group_tasks: _,
            group_trajectories,
            coverage,
            selfcheck_passed,
            selfcheck_failed,
            pivots_lost_without_tools,
            conversational: _,
        } = line;
        fn add<K: Ord>(to: &mut BTreeMap<K, u64>, from: BTreeMap<K, u64>) {
            for (k, n) in from {
                *to.entry(k).or_default() += n;
            }
        }
        self.source_rows_seen += source_rows_seen;
        self.invalid_source_rows += invalid_source_rows;
        self.source_rows_used += source_rows_used;
        self.trajectories_with_pivots += trajectories_with_pivots;
        self.decision_points += decision_points;
        self.pivot_rows_written += pivot_rows_written;
        self.nameless_tool_calls += nameless_tool_calls;
        self.tools_parameters_filled += tools_parameters_filled;
        add(&mut self.skips, skips);
        add(&mut self.multi_tool_counts, multi_tool_counts);
        add(&mut self.action_types, action_types);
        add(&mut self.tools, tools);
        add(&mut self.turn_step, turn_step);
        add(&mut self.depth, depth);
        self.with_target_reasoning += with_target_reasoning;
        self.with_target_content += with_target_content;
        self.multistep += multistep;
        self.multistep_with_prior_reasoning += multistep_with_prior_reasoning;
        for (total, n) in self.group_trajectories.iter_mut().zip(group_trajectories) {
            *total += n;
        }
        add(&mut self.coverage, coverage);
        self.selfcheck_passed += selfcheck_passed;
        self.selfcheck_failed += selfcheck_failed;
        self.pivots_lost_without_tools += pivots_lost_without_tools;
    }
}

/// Paths as given, for the header of both files.
#[derive(Clone, Debug, Default)]
pub struct Paths {
    pub input: String,
    pub output: String,
    pub config: String,
    pub skipped: String,
    pub agent_ref: String,
}

pub(crate) fn cell(c: u64, t: u64) -> String {
    format!("{c} / {t} ({})", percent_of(c, t))
}

/// Sorted by descending count, then key.
pub(crate) fn sorted(m: &BTreeMap<String, u64>) -> Vec<(&String, u64)> {
    let mut v: Vec<_> = m.iter().map(|(k, c)| (k, *c)).collect();
    v.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(b.0)));
    v
}

fn dist(m: &BTreeMap<String, u64>) -> Value {
    Value::Object(
        sorted(m)
            .into_iter()
            .map(|(k, c)| (k.clone(), c.into()))
            .collect(),
    )
}

/// The three groups a pivot build counts, in the order its metrics name them.
pub const GROUPS: [&str; 3] = ["all_success", "all_failure", "mixed"];

impl Metrics {
    pub fn skipped_decision_points(&self) -> u64 {
        self.skips
            .iter()
            .filter(|(r, _)| !r.is_row_level())
            .map(|(_, c)| c)
            .sum()
    }

    pub fn skip(&self, r: Reason) -> u64 {
        self.skips.get(&r).copied().unwrap_or(0)
    }

    pub fn skipped_rows(&self) -> u64 {
        self.skips
            .iter()
            .filter(|(r, _)| r.is_row_level())
            .map(|(_, c)| c)
            .sum()
    }

    /// The one-line outcome `build-pivot` prints and the app shows. Both skip counts are
    /// named: "0 skipped" beside thousands of skipped source rows read as a contradiction.
    pub fn headline(&self) -> String {
        format!(
            "pivots: {} rows from {} of {} source rows ({} source rows skipped; {} decision points, {} of them skipped); selfcheck: {} / {} passed",
            self.pivot_rows_written,
            self.trajectories_with_pivots,
            self.source_rows_seen,
            self.skipped_rows(),
            self.decision_points,
            self.skipped_decision_points(),
            self.selfcheck_passed,
            self.selfcheck_passed + self.selfcheck_failed
        )
    }

    /// The most frequent skip reasons (for the "nothing written" message).
    pub fn top_skips(&self, n: usize) -> Vec<(Reason, u64)> {
        let mut v: Vec<(Reason, u64)> = self
            .skips
            .iter()
            .filter(|(_, c)| **c > 0)
            .map(|(r, c)| (*r, *c))
            .collect();
        v.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        v.truncate(n);
        v
    }

    pub fn to_json(&self, paths: &Paths) -> Value {
        let mut counts = Map::new();
        for (k, v) in [
            ("source_rows_seen", self.source_rows_seen),
            ("invalid_source_rows", self.invalid_source_rows),
            ("below_min_reward", self.skip(Reason::BelowMinReward)),
            (
                "source_group_filtered",
                self.skip(Reason::SourceGroupFiltered),
            ),
            ("source_rows_used", self.source_rows_used),
            ("trajectories_with_pivots", self.trajectories_with_pivots),
            ("decision_points", self.decision_points),
            ("pivot_rows_written", self.pivot_rows_written),
            ("skipped_decision_points", self.skipped_decision_points()),
            ("nameless_tool_calls", self.nameless_tool_calls),
            ("tools_parameters_filled", self.tools_parameters_filled),
            ("selfcheck_passed", self.selfcheck_passed),
            ("selfcheck_failed", self.selfcheck_failed),
        ] {
            counts.insert(k.into(), v.into());
        }
        if let Some([seed, user_tools, unconvertible]) = self.conversational {
            counts.insert("skipped_seed_assistant_messages".into(), seed.into());
            counts.insert("dropped_user_tool_messages".into(), user_tools.into());
            counts.insert(
                "dropped_unconvertible_messages".into(),
                unconvertible.into(),
            );
        }
        let skip_reasons: Map<String, Value> = Reason::ALL
            .iter()
            .map(|r| (r.as_str().to_string(), self.skip(*r).into()))
            .collect();
        let groups = |a: &[u64; 3]| -> Value {
            Value::Object(
                GROUPS
                    .iter()
                    .zip(a)
                    .map(|(g, c)| (g.to_string(), (*c).into()))
                    .collect(),
            )
        };
        let coverage: Map<String, Value> = [
            "_ng_task_index",
            "_ng_rollout_index",
            "task_id",
            "uuid",
            "reward",
        ]
        .iter()
        .map(|k| {
            (
                k.to_string(),
                self.coverage.get(*k).copied().unwrap_or(0).into(),
            )
        })
        .collect();
        json!({
            "input": paths.input, "output": paths.output, "source_format": self.source_format,
            "agent_ref": paths.agent_ref, "config_output": paths.config, "skipped_output": paths.skipped,
            "counts": counts,
            "skip_reasons": skip_reasons,
            "skipped_multi_tool_count_distribution": dist(&self.multi_tool_counts),
            "action_type_distribution": dist(&self.action_types),
            "tool_distribution": dist(&self.tools),
            "turn_step_distribution": dist(&self.turn_step),
            "assistant_depth_distribution": dist(&self.depth),
            "pivot_content": {
                "pivots_with_target_reasoning": self.with_target_reasoning,
                "pivots_with_target_content": self.with_target_content,
                "multistep_pivots": self.multistep,
                "multistep_pivots_with_prior_step_reasoning": self.multistep_with_prior_reasoning,
            },
            "source_reward_groups": {"tasks": groups(&self.group_tasks), "trajectories": groups(&self.group_trajectories)},
            "provenance_coverage": coverage,
        })
    }

    /// `metrics.json`: pretty-printed with a 2-space indent and a trailing newline.
    pub fn json_text(&self, paths: &Paths) -> String {
        let mut s = serde_json::to_string_pretty(&self.to_json(paths))
            .expect("serializing a JSON value cannot fail");
        s.push('\n');
        s
    }
}
