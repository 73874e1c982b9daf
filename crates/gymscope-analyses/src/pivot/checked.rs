//! A run of lines checked on its own ([`LineChecker`] → [`Checked`]): every row through the
//! checks, with no state carried from the rows before it, its lines numbered from 1 within the
//! run. `validate::ReportBuilder` adds runs in file order, so one reader of a whole file and many
//! readers of its byte ranges (`pivot::pooled`) make the same report.

use super::checks::{self, Check, Finding, Path, RowChecker};
use super::fix::{FixedRows, Fixer};
use super::rules::Rules;
use super::summary::Summary;
use super::tree;
use super::{depth, stats, PivotOptions};
use crate::read::batch::LineBatch;
use std::collections::BTreeMap;

/// What a run of lines adds to a file's report; lines numbered from 1 within the run.
#[derive(Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct Checked {
    /// Physical lines checked (a lone CR ends one, as Python's universal newlines read).
    pub lines: u64,
    /// Non-blank lines.
    pub rows: u64,
    pub invalid_rows: u64,
    /// The run's first findings, in order: as many as a report keeps in detail, columns located.
    pub findings: Vec<Finding>,
    /// Every finding, counted by check.
    pub counts: BTreeMap<Check, u64>,
    pub summary: Summary,
    pub stats: Option<stats::Stats>,
    pub fixed: Option<FixedRows>,
    /// The run stopped at a line after which nothing is read (`--fail-fast`, invalid UTF-8).
    pub stopped: bool,
}

/// Checks runs of lines.
pub struct LineChecker {
    rules: Rules,
    fixer: Option<Fixer>,
}

impl LineChecker {
    pub fn new(options: PivotOptions) -> LineChecker {
        let fixer = options.fix.then(|| Fixer::new(options.agent_ref.clone()));
        LineChecker {
            rules: Rules::new(options),
            fixer,
        }
    }

    pub fn options(&self) -> &PivotOptions {
        &self.rules.options
    }

    /// A fresh run.
    pub fn start(&self) -> Checked {
        let options = &self.rules.options;
        Checked {
            stats: options.stats.then(stats::Stats::default),
            fixed: options.fix.then(FixedRows::default),
            ..Checked::default()
        }
    }

    /// A batch of lines checked as one run (on any thread), to be added in file order
    /// (`validate::ReportBuilder`, a `read::job::Job`).
    pub fn batch(&self, batch: &LineBatch) -> Checked {
        let mut run = self.start();
        for (span, bytes) in batch.lines() {
            self.line(&mut run, span.offset, bytes);
            if run.stopped {
                break;
            }
        }
        run
    }

    /// Checks a line as the splitter cut it (at `\n`, without `\r\n`), starting at byte `offset`
    /// of the file: a lone `\r` inside it also ends a line, as Python's universal newlines read.
    pub fn line(&self, run: &mut Checked, offset: u64, bytes: &[u8]) {
        if memchr::memchr(b'\r', bytes).is_none() {
            // The usual line: one piece (found without a byte-by-byte split).
            return self.physical_line(run, offset, bytes);
        }
        let mut at = offset;
        for piece in bytes.split(|&b| b == b'\r') {
            self.physical_line(run, at, piece);
            at += piece.len() as u64 + 1;
        }
    }

    /// One physical line at byte `offset`, unless the run has stopped.
    fn physical_line(&self, run: &mut Checked, offset: u64, bytes: &[u8]) {
        if !run.stopped {
            run.lines += 1;
            self.one_line(run, offset, bytes);
        }
    }

    fn one_line(&self, run: &mut Checked, offset: u64, bytes: &[u8]) {
        let line_no = run.lines;
        let span = Some((offset, u32::try_from(bytes.len()).unwrap_or(u32::MAX)));
        let text = match simdutf8::compat::from_utf8(bytes) {
            Ok(text) => text,
            Err(e) => {
                run.rows += 1;
                let column = String::from_utf8_lossy(&bytes[..e.valid_up_to()])
                    .chars()
                    .count()
                    + 1;
                let why = "invalid UTF-8 (the file must be UTF-8 text; reading stopped here)";
                self.json_error(run, line_no, span, column, why.into());
                // Upstream's validator stops here too (its `UnicodeDecodeError` is uncaught), and
                // a binary file or device (`/dev/urandom`) would otherwise be read forever.
                run.stopped = true;
                return;
            }
        };
        if is_python_blank(text) {
            return;
        }
        run.rows += 1;
        // The file's first line is the one at its first byte (a run does not know its number).
        if offset == 0 && text.starts_with('\u{feff}') {
            let why = "Unexpected UTF-8 BOM (save the file as UTF-8 without BOM)";
            self.json_error(run, line_no, span, 1, why.into());
            return;
        }
        let (depth, too_deep) = depth::measure(text.as_bytes());
        if let Some(at) = too_deep {
            let column = char_column(text, at + 1);
            let message = format!("nesting deeper than {} levels", depth::MAX_DEPTH);
            self.json_error(run, line_no, span, column, message);
            return;
        }
        let done = depth::with_stack_for(depth, || self.check_row(run, line_no, span, text));
        if done.is_none() {
            let message = format!("could not start a thread to read {depth} levels of nesting");
            self.json_error(run, line_no, span, 1, message);
        }
    }

    /// Parses and checks one row (measured within [`depth::MAX_DEPTH`]).
    fn check_row(&self, run: &mut Checked, line_no: u64, span: Option<(u64, u32)>, text: &str) {
        let rules = &self.rules;
        let row = match tree::parse(text, &rules.interest) {
            Ok(row) => row,
            Err(e) => {
                let column = char_column(text, e.column());
                let message = e.to_string();
                let message = message
                    .rfind(" at line ")
                    .map_or(message.as_str(), |at| &message[..at])
                    .to_string();
                self.json_error(run, line_no, span, column, message);
                return;
            }
        };
        let mut checker = RowChecker {
            options: &rules.options,
            any_field_groups: &rules.any_field_groups,
            line: line_no,
            fail_fast: rules.options.fail_fast,
            findings: Vec::new(),
        };
        let facts = checker.check(&row);
        let mut findings = checker.findings;
        if let Some(stats) = &mut run.stats {
            stats.add_row(&row, facts.as_ref(), findings.first().map(|f| f.check));
        }
        if let (Some(fixer), Some(out)) = (&self.fixer, &mut run.fixed) {
            fixer.row(out, line_no, text, findings.is_empty(), rules);
        }
        if let Some(facts) = facts {
            run.summary.add(&facts);
        } else {
            // Columns cost a second parse of the line: only for findings that will be shown.
            let budget = self.kept().saturating_sub(run.findings.len());
            for f in &mut findings {
                f.span = span;
            }
            for f in findings.iter_mut().take(budget) {
                f.column = checks::locate(text, &f.path).map(|at| char_column(text, at + 1));
            }
            self.record(run, findings);
        }
    }

    /// Findings a run keeps in detail: all a report shows, and at least its first.
    fn kept(&self) -> usize {
        self.rules.options.max_errors.max(1)
    }

    fn json_error(
        &self,
        run: &mut Checked,
        line: u64,
        span: Option<(u64, u32)>,
        column: usize,
        detail: String,
    ) {
        let finding = Finding {
            line,
            span,
            column: Some(column),
            path: Path::default(),
            check: Check::J,
            message: format!("invalid JSON: {detail}"),
            found: "not JSON".into(),
        };
        // Not JSON: nothing to normalize, so the fixed copy leaves the row out, and says so.
        if let Some(out) = &mut run.fixed {
            out.unfixable.push((line, finding.message.clone()));
        }
        self.record(run, vec![finding]);
    }

    fn record(&self, run: &mut Checked, findings: Vec<Finding>) {
        if findings.is_empty() {
            return;
        }
        run.invalid_rows += 1;
        for f in findings {
            *run.counts.entry(f.check).or_default() += 1;
            if run.findings.len() < self.kept() {
                run.findings.push(f);
            }
        }
        if self.rules.options.fail_fast {
            run.stopped = true;
        }
    }
}

/// Python's `not line.strip()`: Unicode whitespace plus the separators U+001C..U+001F.
fn is_python_blank(text: &str) -> bool {
    text.chars()
        .all(|c| c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c))
}

/// 1-based character column of the 1-based byte column `byte_column`.
fn char_column(text: &str, byte_column: usize) -> usize {
    let end = byte_column.saturating_sub(1).min(text.len());
    String::from_utf8_lossy(&text.as_bytes()[..end])
        .chars()
        .count()
        + 1
}

#[cfg(test)]
mod tests {
    use crate::pivot::{validate_bytes, PivotOptions};

    const VALID: &str = r#"{"responses_create_params":{"input":[{"role":"user","content":"hi"}],"tools":[{"type":"function","name":"search","parameters":{}}]},"expected_action":{"type":"message","content":"ok"},"agent_ref":{"type":"responses_api_agents","name":"a"}}"#;

    #[test]
    fn a_row_that_is_not_json_is_listed_as_left_out_of_the_fixed_copy() {
        let data = format!("{VALID}\n{{\"cut\": \n{VALID}\n");
        let options = PivotOptions {
            fix: true,
            ..PivotOptions::default()
        };
        let (report, fixed) = validate_bytes("p.jsonl", data.as_bytes(), options);
        let fix = report.fix.unwrap_or_default();
        assert_eq!((fix.written, fix.changed), (2, 0));
        assert_eq!(fix.unfixable.len(), 1, "{:?}", fix.unfixable);
        assert_eq!(fix.unfixable[0].0, 2);
        assert!(
            fix.unfixable[0].1.starts_with("line 2: invalid JSON: "),
            "{:?}",
            fix.unfixable
        );
        assert_eq!(fixed, format!("{VALID}\n{VALID}\n").into_bytes());
    }
}
