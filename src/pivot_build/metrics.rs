//! Conversion metrics (spec §f): the counts a user needs before training, as
//! `<out stem>.metrics.json` and the markdown `<out stem>.info.md`. No clock values: the files
//! are part of the deterministic output.

use super::skips::Reason;
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;

/// Counters filled while building.
#[derive(Clone, Debug, Default)]
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
    pub coverage: BTreeMap<&'static str, u64>,
    pub selfcheck_passed: u64,
    pub selfcheck_failed: u64,
    /// Rows that lost a tool-call pivot because the source had no tool schemas.
    pub pivots_lost_without_tools: u64,
    /// The tau2 layout's cleaning counts.
    pub conversational: Option<[u64; 3]>,
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

/// `c / t` as a percentage with two decimals (`pivot.md` §2.6).
pub fn pct(c: u64, t: u64) -> String {
    if t == 0 {
        "0.00%".into()
    } else {
        format!("{:.2}%", (c as f64 / t as f64) * 100.0)
    }
}

fn cell(c: u64, t: u64) -> String {
    format!("{c} / {t} ({})", pct(c, t))
}

/// Sorted by descending count, then key.
fn sorted(m: &BTreeMap<String, u64>) -> Vec<(&String, u64)> {
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

const GROUPS: [&str; 3] = ["all_success", "all_failure", "mixed"];

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
                self.coverage.get(k).copied().unwrap_or(0).into(),
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

    /// `info.md`.
    pub fn markdown(&self, paths: &Paths) -> String {
        let pivots = self.pivot_rows_written;
        let get = |m: &BTreeMap<String, u64>, k: &str| m.get(k).copied().unwrap_or(0);
        let summary: Vec<Vec<String>> = vec![
            vec!["input".into(), paths.input.clone()],
            vec!["output".into(), paths.output.clone()],
            vec!["source_format".into(), self.source_format.clone()],
            vec!["agent_ref".into(), paths.agent_ref.clone()],
            vec!["source_rows_seen".into(), self.source_rows_seen.to_string()],
            vec![
                "source_rows_used".into(),
                cell(self.source_rows_used, self.source_rows_seen),
            ],
            vec![
                "trajectories_with_pivots".into(),
                cell(self.trajectories_with_pivots, self.source_rows_used),
            ],
            vec!["decision_points".into(), self.decision_points.to_string()],
            vec!["pivot_rows_written".into(), pivots.to_string()],
            vec![
                "function_call pivots".into(),
                cell(get(&self.action_types, "function_call"), pivots),
            ],
            vec![
                "message pivots".into(),
                cell(get(&self.action_types, "message"), pivots),
            ],
            vec![
                "skipped decision points".into(),
                cell(self.skipped_decision_points(), self.decision_points),
            ],
            vec![
                "pivots_with_target_reasoning".into(),
                cell(self.with_target_reasoning, pivots),
            ],
            vec![
                "pivots_with_target_content".into(),
                cell(self.with_target_content, pivots),
            ],
            vec!["multistep_pivots".into(), cell(self.multistep, pivots)],
            vec![
                "selfcheck".into(),
                format!(
                    "{} / {} passed",
                    self.selfcheck_passed,
                    self.selfcheck_passed + self.selfcheck_failed
                ),
            ],
        ];
        let mut out = String::from("# Pivot Dataset Metrics\n\n");
        out.push_str("meta_info: `turn` = user messages in the prefix; `step`, `assistant_depth` = `depth` are the pivot's own 1-based position (assistant turns since the last user message / in the prefix, + 1).\n\n");
        let mut warnings = Vec::new();
        if get(&self.action_types, "message") * 2 > pivots {
            warnings.push("more than half of the pivots are messages: the verifier rewards any text for them (`--tool-calls-only` keeps tool calls only)".to_string());
        }
        if self.pivots_lost_without_tools > 0 {
            warnings.push(format!(
                "{} tool-call decision points were skipped because the source recorded no tool schemas (pass `--tools FILE`)",
                self.pivots_lost_without_tools
            ));
        }
        for w in warnings {
            out.push_str(&format!("> Warning: {w}\n\n"));
        }
        let sections: Vec<Section> = vec![
            ("Summary", vec!["metric", "value"], summary),
            (
                "Skip Reasons",
                vec!["reason", "count", "pct_of_decision_points"],
                Reason::ALL
                    .iter()
                    .map(|r| {
                        vec![
                            r.as_str().into(),
                            self.skip(*r).to_string(),
                            pct(self.skip(*r), self.decision_points),
                        ]
                    })
                    .collect(),
            ),
            (
                "Expected Action Type Distribution",
                vec!["value", "count", "pct_of_pivots"],
                self.dist_rows(&self.action_types, usize::MAX),
            ),
            (
                "Expected Tool Distribution",
                vec!["value", "count", "pct_of_pivots"],
                self.dist_rows(&self.tools, 25),
            ),
            (
                "Turn Step Distribution",
                vec!["value", "count", "pct_of_pivots"],
                self.dist_rows(&self.turn_step, usize::MAX),
            ),
            (
                "Assistant Depth Distribution",
                vec!["value", "count", "pct_of_pivots"],
                self.dist_rows(&self.depth, usize::MAX),
            ),
            (
                "Source Reward Groups",
                vec!["group", "tasks", "trajectories"],
                GROUPS
                    .iter()
                    .enumerate()
                    .map(|(i, g)| {
                        vec![
                            g.to_string(),
                            self.group_tasks[i].to_string(),
                            self.group_trajectories[i].to_string(),
                        ]
                    })
                    .collect(),
            ),
        ];
        let parts: Vec<String> = sections
            .into_iter()
            .map(|(title, header, rows)| format!("## {title}\n\n{}", table(&header, &rows)))
            .collect();
        out.push_str(&parts.join("\n"));
        out
    }

    fn dist_rows(&self, m: &BTreeMap<String, u64>, top: usize) -> Vec<Vec<String>> {
        sorted(m)
            .into_iter()
            .take(top)
            .map(|(k, c)| vec![k.clone(), c.to_string(), pct(c, self.pivot_rows_written)])
            .collect()
    }
}

/// A report section: title, header cells, rows.
type Section<'a> = (&'a str, Vec<&'a str>, Vec<Vec<String>>);

/// A markdown table, each column padded to its widest cell.
fn table(header: &[&str], rows: &[Vec<String>]) -> String {
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count().max(3)).collect();
    for r in rows {
        for (w, c) in widths.iter_mut().zip(r) {
            *w = (*w).max(c.chars().count());
        }
    }
    let line = |cells: Vec<String>| -> String {
        let padded: Vec<String> = cells
            .iter()
            .zip(&widths)
            .map(|(c, w)| format!("{c:<w$}"))
            .collect();
        format!("| {} |\n", padded.join(" | "))
    };
    let mut out = line(header.iter().map(|h| h.to_string()).collect());
    out.push_str(&line(widths.iter().map(|w| "-".repeat(*w)).collect()));
    for r in rows {
        out.push_str(&line(r.clone()));
    }
    out
}
