//! Renders a validation [`Report`]: upstream's lines first (so scripts that read them keep
//! working), then every error grouped by check; or [`PivotView`], the same report as plain data
//! (the CLI's `--format json`, and what the web worker sends to the page).

use crate::pivot::checks::{Check, Finding};
use crate::pivot::summary::ranked;
use crate::pivot::Report;
use crate::table::plural;
use serde::{Deserialize, Serialize};

/// A validation report as plain data.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PivotView {
    pub file: String,
    pub valid: bool,
    pub rows: u64,
    pub invalid_rows: u64,
    pub errors_total: u64,
    /// Upstream's verdict line: `validation failed: line N: …` (absent when valid).
    pub upstream_error: Option<String>,
    pub groups: Vec<CheckGroup>,
    pub stopped_early: bool,
    /// Upstream's success summary text (over the valid rows).
    pub summary_text: String,
    pub agent_ref: Vec<(String, u64)>,
    pub expected_tool: Vec<(String, u64)>,
    pub stats_text: Option<String>,
    pub fix: Option<FixView>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CheckGroup {
    pub check: Check,
    pub id: String,
    pub title: String,
    pub count: u64,
    /// The errors of this check kept in detail.
    pub findings: Vec<Finding>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FixView {
    pub written: u64,
    pub changed: u64,
    pub unfixable: Vec<(u64, String)>,
}

impl PivotView {
    /// The verdict in one sentence, as the page shows it.
    pub fn verdict(&self) -> String {
        if self.valid {
            format!("Valid: {} rows pass every check.", self.rows)
        } else {
            format!(
                "Invalid: {} in {} of {}.",
                plural(self.errors_total as usize, "error"),
                self.invalid_rows,
                plural(self.rows as usize, "row")
            )
        }
    }

    /// What the fixed copy holds, in a sentence that says why when it holds nothing.
    pub fn fix_note(&self) -> Option<String> {
        let f = self.fix.as_ref()?;
        Some(if f.written == 0 {
            format!(
                "The fixed copy is empty: {} a fix cannot repair (listed below).",
                if f.unfixable.len() == 1 && self.rows == 1 {
                    "the one row has an error".to_string()
                } else {
                    format!(
                        "{} of {} have errors",
                        f.unfixable.len(),
                        plural(self.rows as usize, "row")
                    )
                }
            )
        } else {
            format!(
                "{} written: {} changed by a fix, {} left out because a fix cannot repair them.",
                plural(f.written as usize, "row"),
                f.changed,
                f.unfixable.len()
            )
        })
    }

    pub fn new(report: &Report) -> PivotView {
        let groups = report
            .counts
            .iter()
            .map(|(check, count)| CheckGroup {
                check: *check,
                id: check.id().into(),
                title: check.title().into(),
                count: *count,
                findings: report
                    .findings
                    .iter()
                    .filter(|f| f.check == *check)
                    .cloned()
                    .collect(),
            })
            .collect();
        let owned = |v: Vec<(&str, u64)>| v.into_iter().map(|(k, n)| (k.to_string(), n)).collect();
        PivotView {
            file: report.file.clone(),
            valid: report.is_valid(),
            rows: report.rows,
            invalid_rows: report.invalid_rows,
            errors_total: report.total_errors(),
            upstream_error: report
                .first
                .as_ref()
                .map(|f| format!("validation failed: {}", f.upstream_message())),
            groups,
            stopped_early: report.stopped_early,
            summary_text: report.summary.text(),
            agent_ref: owned(ranked(&report.summary.agents)),
            expected_tool: owned(ranked(&report.summary.expected_tools)),
            stats_text: report.stats.as_ref().map(crate::pivot::stats::Stats::text),
            fix: report.fix.as_ref().map(|f| FixView {
                written: f.written,
                changed: f.changed,
                unfixable: f.unfixable.clone(),
            }),
        }
    }

    /// Text for stderr when the file is invalid: upstream's `validation failed: …` line, then
    /// (unless stopped early) each check with its count and the errors kept in detail.
    pub fn failure_text(&self) -> String {
        let Some(first) = &self.upstream_error else {
            return String::new();
        };
        let mut out = format!("{first}\n");
        // A run stopped at its first error (`--fail-fast`, a first line too long or not UTF-8):
        // the verdict line says it all. One stopped later lists what it found before the stop.
        if self.stopped_early && self.errors_total <= 1 {
            return out;
        }
        let t = self.errors_total;
        let rows = if self.groups.iter().any(|g| g.check == Check::E) {
            String::new()
        } else {
            format!(" in {} of {} rows", self.invalid_rows, self.rows)
        };
        out.push_str(&format!(
            "\n{}: {t} error{}{rows}\n",
            self.file,
            if t == 1 { "" } else { "s" }
        ));
        let mut shown = 0;
        for g in &self.groups {
            out.push_str(&format!("\n[{}] {}: {}\n", g.id, g.title, g.count));
            for f in &g.findings {
                let found = if f.found == "(missing)" {
                    String::new()
                } else {
                    format!(" (found {})", f.found)
                };
                out.push_str(&format!(
                    "  {}  {}{found}\n",
                    location(&self.file, f),
                    f.message
                ));
                shown += 1;
            }
        }
        if shown < t {
            out.push_str(&format!(
                "\n(showing {shown} of {t} errors; --max-errors N shows more)\n"
            ));
        }
        out
    }
}

/// `file:line:column`, as editors and terminals link it.
pub fn location(file: &str, f: &Finding) -> String {
    match (f.check, f.column) {
        (Check::E, _) => file.to_string(),
        (_, Some(c)) => format!("{file}:{}:{c}", f.line),
        (_, None) => format!("{file}:{}", f.line),
    }
}
