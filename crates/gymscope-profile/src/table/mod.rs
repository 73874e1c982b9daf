//! The profile as display tables (per task, per agent) and summary lines: what the web app shows,
//! computed here so the page only lays it out. Cell headers are the output files' keys.

pub mod key_figures;

use crate::json::Num;
use crate::profile::{AcrossRepeats, ColumnSummary, Profile};
use std::collections::HashMap;

/// `1 agent`, `3 agents`: counts in summary lines, the app's and the text reports'.
pub fn plural(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{} {noun}s", crate::figures::count(n))
    }
}

/// One shown value: short text for reading ([`Cell::text`]), and the exact JSON number as
/// written in the files ([`Cell::exact`]). Kept as the number, the texts made when shown: a
/// report of a million tasks holds tens of millions of cells.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Cell {
    pub value: Option<Num>,
}

impl Cell {
    pub fn num(value: Option<Num>) -> Cell {
        Cell { value }
    }
    pub fn count(n: usize) -> Cell {
        Cell {
            value: Some(Num::Int(i64::try_from(n).unwrap_or(i64::MAX))),
        }
    }
    /// The value for reading (`–` when absent).
    pub fn text(&self) -> String {
        self.value
            .map_or_else(|| "–".into(), |n| short_number(n.as_f64()))
    }
    /// The value exactly as the output file writes it (`""` when the file has no such key).
    pub fn exact(&self) -> String {
        let mut exact = Vec::new();
        if let Some(n) = self.value {
            let _ = n.write_json(&mut exact);
        }
        String::from_utf8_lossy(&exact).into_owned()
    }
}

/// Rounds for display: up to 4 decimals, no trailing zeros; full precision stays in `exact`.
pub fn short_number(v: f64) -> String {
    if !v.is_finite() {
        return "∞".into();
    }
    if v.abs() >= 1e9 || (v != 0.0 && v.abs() < 1e-4) {
        return format!("{v:.3e}");
    }
    let s = format!("{v:.4}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" {
        "0".into()
    } else {
        s.to_string()
    }
}

#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Row {
    /// The task index, or the agent name.
    pub key: String,
    pub cells: Vec<Cell>,
}

#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Table {
    /// Header of each cell column: `mean/reward`, …, `num_rollouts`.
    pub headers: Vec<String>,
    pub rows: Vec<Row>,
}

const STATS: [&str; 5] = ["mean", "max", "min", "median", "std"];

fn stat_headers(p: &Profile) -> Vec<String> {
    let names: Vec<&str> = (0..p.columns.len()).map(|c| p.column_name(c)).collect();
    stat_headers_of(&names)
}

/// `mean/c`, `max/c`, `min/c`, `median/c`, `std/c` for each metric column `c`, in this order
/// (also used by the report when it reads the tables back from the output files).
pub fn stat_headers_of(columns: &[&str]) -> Vec<String> {
    columns
        .iter()
        .flat_map(|c| STATS.iter().map(move |s| format!("{s}/{c}")))
        .collect()
}

/// The cells of [`stat_headers_of`] for one row.
pub fn stat_cells<'a>(
    columns: impl IntoIterator<Item = &'a ColumnSummary> + 'a,
) -> impl Iterator<Item = Cell> + 'a {
    columns.into_iter().flat_map(|s| {
        [
            Cell::num(s.mean.map(Num::Float)),
            Cell::num(s.max),
            Cell::num(s.min),
            Cell::num(s.median.map(Num::Float)),
            Cell::num(s.std.map(Num::Float)),
        ]
    })
}

const TASK_COUNTS: [&str; 4] = [
    "num_rollouts",
    "expected_num_rollouts",
    "missing_num_rollouts",
    "reward_profile_completion_pct",
];

/// Headers of the task table: every statistic metric by metric, then the rollout counts.
pub fn task_headers(p: &Profile) -> Vec<String> {
    let mut headers = stat_headers(p);
    headers.extend(TASK_COUNTS.map(String::from));
    headers
}

/// The task table as numbers, tasks × [`task_headers`], NaN where the file has no key.
pub fn task_stat_values(p: &Profile) -> Vec<f64> {
    let mut out = Vec::with_capacity(p.tasks.len() * (p.columns.len() * 5 + TASK_COUNTS.len()));
    let num = |v: Option<Num>| v.map_or(f64::NAN, Num::as_f64);
    for t in &p.tasks {
        for s in &t.columns {
            out.extend([
                num(s.mean.map(Num::Float)),
                num(s.max),
                num(s.min),
                num(s.median.map(Num::Float)),
                num(s.std.map(Num::Float)),
            ]);
        }
        out.extend([
            t.num_rollouts as f64,
            t.expected_num_rollouts as f64,
            t.missing_num_rollouts() as f64,
            t.completion_pct(),
        ]);
    }
    out
}

/// Every statistic of every task, metric by metric, then the rollout counts.
pub fn task_table(p: &Profile) -> Table {
    let headers = task_headers(p);
    let rows = p
        .tasks
        .iter()
        .map(|t| {
            let mut cells: Vec<Cell> = stat_cells(&t.columns).collect();
            cells.push(Cell::count(t.num_rollouts));
            cells.push(Cell::count(t.expected_num_rollouts));
            cells.push(Cell::count(t.missing_num_rollouts()));
            cells.push(Cell::num(Some(Num::Float(t.completion_pct()))));
            Row {
                key: t.task.to_string(),
                cells,
            }
        })
        .collect();
    Table { headers, rows }
}

/// Every statistic per agent, over its rollouts; then, as v0.7.0's `*_agent_metrics.json` has
/// them, each repeat mean's spread across repeats and the masked-rollout coverage.
pub fn agent_table(p: &Profile) -> Table {
    let mut headers = stat_headers(p);
    // Across-repeats metrics in order of first appearance over the agents.
    let mut across: Vec<usize> = Vec::new();
    let mut listed = vec![false; p.columns.len()];
    for a in &p.agents {
        // The agents' numeric names spread across repeats (upstream's quirk) are not shown.
        for x in a.across.iter().filter(|x| x.column < p.columns.len()) {
            if !std::mem::replace(&mut listed[x.column], true) {
                across.push(x.column);
            }
        }
    }
    for &c in &across {
        headers.extend(across_headers(p.column_name(c)));
    }
    let coverage = p.agents.iter().any(|a| a.coverage.is_some());
    if coverage {
        headers.extend(COVERAGE.map(String::from));
    }
    headers.push("rollouts".into());
    let rows = p
        .agents
        .iter()
        .map(|a| {
            let mut cells: Vec<Cell> = stat_cells(&a.columns).collect();
            // Looked up, not searched: a run may have thousands of metric columns.
            let of_column: HashMap<usize, &AcrossRepeats> =
                a.across.iter().map(|x| (x.column, x)).collect();
            for &c in &across {
                match of_column.get(&c) {
                    Some(x) => {
                        let s = &x.spread;
                        let (low, high) = s.ci.unzip();
                        cells.extend(
                            [
                                Some(s.mean),
                                Some(s.median),
                                Some(s.std),
                                Some(s.min),
                                Some(s.max),
                                Some(s.sem),
                                low,
                                high,
                            ]
                            // An overflow is `null` in the file: shown as absent.
                            .map(|v| Cell::num(v.filter(|v| v.is_finite()).map(Num::Float))),
                        );
                    }
                    None => cells.extend(ACROSS.map(|_| Cell::num(None))),
                }
            }
            if coverage {
                let c = a.coverage.unwrap_or_default();
                let counts = [
                    c.measured_rollouts,
                    c.masked_rollouts,
                    c.measured_tasks,
                    c.fully_masked_tasks,
                ];
                cells.extend(counts.map(|n| match a.coverage {
                    Some(_) => Cell::count(n),
                    None => Cell::num(None),
                }));
            }
            cells.push(Cell::count(a.num_rollouts));
            Row {
                key: a.agent.name.to_string(),
                cells,
            }
        })
        .collect();
    Table { headers, rows }
}

/// The across-repeats statistics in upstream's key order (`se` is the standard error).
const ACROSS: [&str; 8] = [
    "mean",
    "median",
    "std",
    "min",
    "max",
    "se",
    "ci_low_95",
    "ci_high_95",
];

/// The headers of column `c`'s repeat means across repeats (`mean_across_repeats/mean/c`, …).
pub fn across_headers(c: &str) -> [String; 8] {
    ACROSS.map(|s| format!("{s}_across_repeats/mean/{c}"))
}

/// v0.7.0's `coverage/*` keys of an agent row.
pub const COVERAGE: [&str; 4] = [
    "coverage/measured_rollouts",
    "coverage/masked_rollouts",
    "coverage/measured_tasks",
    "coverage/fully_masked_tasks",
];

/// v0.7.0's repeat-level metrics of the reward, a row per agent and repeat: the repeat, its
/// tasks, the agent's tasks it lacks, the mean reward and its 95 % t interval. `None` when no
/// agent has two repeats or the run has no reward.
pub fn repeat_table(p: &Profile) -> Option<Table> {
    let reward = (0..p.columns.len()).find(|&c| p.column_name(c) == "reward")?;
    if p.repeats.is_empty() {
        return None;
    }
    // Short headers: the table fits the inspector's left pane without scrolling.
    let headers = [
        "repeat",
        "tasks",
        "missing",
        "mean reward",
        "95% CI low",
        "95% CI high",
    ]
    .map(String::from)
    .to_vec();
    let rows = p
        .repeats
        .iter()
        .map(|e| {
            let spread = e.columns.iter().find(|(c, _)| *c == reward).map(|(_, s)| s);
            let (low, high) = spread.and_then(|s| s.ci).unzip();
            let float = |v: Option<f64>| Cell::num(v.map(Num::Float));
            Row {
                key: p.agents[e.agent].agent.name.to_string(),
                cells: vec![
                    Cell::num(Some(Num::Int(e.rollout))),
                    Cell::count(e.sample_count),
                    Cell::count(e.missing_count),
                    float(spread.map(|s| s.mean)),
                    float(low),
                    float(high),
                ],
            }
        })
        .collect();
    Some(Table { headers, rows })
}

/// An agent's mean reward across its repeats (v0.7.0's `mean/reward_across_repeats`), with its
/// 95 % interval and how many repeats it ran.
#[derive(Clone, Debug, PartialEq)]
pub struct RewardAcross {
    pub agent: String,
    pub mean: f64,
    pub ci: Option<(f64, f64)>,
    pub repeats: usize,
}

/// Every agent's [`RewardAcross`], in the profile's agent order.
pub fn reward_across(p: &Profile) -> Vec<RewardAcross> {
    p.agents
        .iter()
        .filter_map(|a| {
            let x = a
                .across
                .iter()
                .find(|x| p.column_name(x.column) == "reward")?;
            let repeats = p
                .repeats
                .iter()
                .filter(|e| p.agents[e.agent].agent == a.agent)
                .count();
            Some(RewardAcross {
                agent: a.agent.name.to_string(),
                mean: x.spread.mean,
                ci: x.spread.ci,
                repeats,
            })
        })
        .collect()
}

/// What v0.7.0 adds to the run's summary, in words: how many rollouts were masked, and each
/// agent's mean reward across its repeats with the 95 % interval of that mean.
pub fn repeat_notes(p: &Profile) -> Vec<String> {
    let mut notes = Vec::new();
    if !p.masked.is_empty() {
        notes.push(format!(
            "Masked from quality metrics: {} rollout rows (kept in completion accounting above).",
            p.masked.len()
        ));
    }
    // One line for every agent: the summary stays short above the plot.
    let across: Vec<String> = reward_across(p)
        .into_iter()
        .map(|a| {
            let interval = a.ci.map_or(String::new(), |(low, high)| {
                format!("{} – {}, ", short_number(low), short_number(high))
            });
            format!(
                "{} {} ({interval}{} repeats)",
                a.agent,
                short_number(a.mean),
                a.repeats
            )
        })
        .collect();
    if !across.is_empty() {
        notes.push(format!(
            "Mean reward across repeats (95 % CI): {}",
            across.join(" · ")
        ));
    }
    notes
}

#[cfg(test)]
mod tests {
    #[test]
    fn counts_are_said_in_words() {
        assert_eq!(super::plural(1, "agent"), "1 agent");
        assert_eq!(super::plural(0, "agent"), "0 agents");
        assert_eq!(super::plural(3, "task"), "3 tasks");
    }

    use super::*;

    #[test]
    fn short_numbers_are_readable() {
        assert_eq!(short_number(0.2), "0.2");
        assert_eq!(short_number(1.0954451150103324), "1.0954");
        assert_eq!(short_number(165.0), "165");
        assert_eq!(short_number(-0.0), "0");
        assert_eq!(short_number(1.6996749443881478e-17), "1.700e-17");
    }

    /// Agent `a` with two repeats of three tasks (one rollout masked), agent `b` with one repeat.
    fn repeated_run() -> Profile {
        let (mut inputs, mut rollouts) = (String::new(), String::new());
        for (t, agent, repeats) in [(0, "a", 2), (1, "a", 2), (2, "a", 2), (3, "b", 1)] {
            for r in 0..repeats {
                inputs.push_str(&format!(
                    "{{\"agent_ref\":{{\"name\":\"{agent}\"}},\"_ng_task_index\":{t},\"_ng_rollout_index\":{r}}}\n"
                ));
                let mask = if (t, r) == (2, 1) {
                    ",\"mask_sample\":true"
                } else {
                    ""
                };
                rollouts.push_str(&format!(
                    "{{\"reward\":{}{mask},\"_ng_task_index\":{t},\"_ng_rollout_index\":{r}}}\n",
                    (t + r) % 2
                ));
            }
        }
        let options = crate::profile::ProfileOptions::default();
        crate::output::profile_bytes(inputs.as_bytes(), "i", rollouts.as_bytes(), "r", options)
            .unwrap()
    }

    #[test]
    fn repeats_are_a_table_and_the_summary_says_what_was_masked() {
        let p = repeated_run();
        let t = repeat_table(&p).unwrap();
        let rows: Vec<(String, Vec<String>)> = t
            .rows
            .iter()
            .map(|r| (r.key.clone(), r.cells.iter().map(Cell::exact).collect()))
            .collect();
        // Repeat 0: rewards 0, 1, 0; repeat 1: 1, 0 (task 2's masked), so one task missing.
        assert_eq!(rows[0].0, "a");
        assert_eq!(rows[0].1[..4], ["0", "3", "0", "0.3333333333333333"]);
        assert_eq!(rows[1].1[..4], ["1", "2", "1", "0.5"]);
        assert_eq!(rows.len(), 2, "agent b has one repeat: no row");
        let notes = repeat_notes(&p);
        assert_eq!(
            notes[0],
            "Masked from quality metrics: 1 rollout rows (kept in completion accounting above)."
        );
        // Repeat means 1/3 and 1/2: their mean, and a t interval on one degree of freedom.
        assert_eq!(
            notes[1],
            "Mean reward across repeats (95 % CI): a 0.4167 (-0.6422 – 1.4755, 2 repeats)"
        );
        let agents = agent_table(&p);
        assert!(agents
            .headers
            .contains(&"ci_high_95_across_repeats/mean/reward".to_string()));
        assert!(agents
            .headers
            .contains(&"coverage/masked_rollouts".to_string()));
    }
}
