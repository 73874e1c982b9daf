//! `<out stem>.info.md`: the metrics as markdown tables (docs/pivots.md "Pivot datasets"), with
//! warnings a user should read before training.

use super::{cell, sorted, Metrics, Paths, GROUPS};
use crate::figures::percent_of;
use crate::markdown::escape;
use crate::pivot_build::skips::Reason;
use std::collections::BTreeMap;

impl Metrics {
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
            out.push_str(&format!("> Warning: {}\n\n", escape(&w)));
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
                            percent_of(self.skip(*r), self.decision_points),
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
            .map(|(k, c)| {
                vec![
                    k.clone(),
                    c.to_string(),
                    percent_of(c, self.pivot_rows_written),
                ]
            })
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
            *w = (*w).max(escape(c).chars().count());
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
    let mut out = line(
        header
            .iter()
            .map(std::string::ToString::to_string)
            .collect(),
    );
    out.push_str(&line(widths.iter().map(|w| "-".repeat(*w)).collect()));
    for r in rows {
        // Every cell may be a name from the run (a tool, a file, the agent): made literal.
        out.push_str(&line(r.iter().map(|c| escape(c)).collect()));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::{Metrics, Paths};

    /// Tool names, file names and the agent name are the run's: they went into the tables raw,
    /// where `|` split cells, a newline started a heading and HTML or links passed through.
    #[test]
    fn untrusted_names_stay_literal_in_info_md() {
        let hostile = "a|b\n# owned <img src=x onerror=alert(1)> [l](javascript:alert(1))";
        let mut m = Metrics {
            pivot_rows_written: 2,
            ..Metrics::default()
        };
        m.tools.insert(hostile.into(), 2);
        m.action_types.insert("function_call".into(), 2);
        let paths = Paths {
            input: format!("/runs/{hostile}.jsonl"),
            output: "o.jsonl".into(),
            agent_ref: hostile.into(),
            ..Paths::default()
        };
        let md = m.markdown(&paths);
        let mut html = String::new();
        let opts = pulldown_cmark::Options::ENABLE_TABLES;
        pulldown_cmark::html::push_html(&mut html, pulldown_cmark::Parser::new_ext(&md, opts));
        assert!(!html.contains("<img"), "{html}");
        assert!(!html.contains("<a "), "{html}");
        assert!(!html.contains("<h1>owned"), "{html}");
        // The tool's row is one row of three cells, its name whole.
        let literal = crate::html::escape(&hostile.replace('\n', " "));
        assert!(
            html.contains(&format!("<td>{literal}</td><td>2</td>")),
            "{html}"
        );
        assert_eq!(
            md.lines().filter(|l| l.contains("owned")).count(),
            3,
            "{md}"
        );
    }
}
