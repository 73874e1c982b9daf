//! The validator: a pivot JSONL fed in chunks, every row through upstream's checks, every error
//! reported (or upstream's first only, `--fail-fast`), upstream's success summary, optional
//! `--stats` and a normalized `--fix` copy.

use super::checks::{self, Check, Finding, Path, RowChecker};
use super::summary::Summary;
use super::tree::{self, Interest};
use super::{depth, fix, stats, PivotOptions};
use crate::jsonl::{self, LineSplitter, LineTooLong};
use std::collections::BTreeMap;

/// The outcome of validating one file.
#[derive(Debug, Default)]
pub struct Report {
    pub file: String,
    /// Non-blank lines read.
    pub rows: u64,
    pub invalid_rows: u64,
    /// The first `max_errors` findings, in file order.
    pub findings: Vec<Finding>,
    /// Every finding, counted by check.
    pub counts: BTreeMap<Check, u64>,
    /// Upstream's verdict: the first finding of the file.
    pub first: Option<Finding>,
    /// Over the valid rows (upstream prints it only when all rows are valid).
    pub summary: Summary,
    pub stats: Option<stats::Stats>,
    pub fix: Option<fix::FixReport>,
    /// The run stopped at the first error (`--fail-fast`).
    pub stopped_early: bool,
}

impl Report {
    pub fn is_valid(&self) -> bool {
        self.counts.is_empty()
    }
    pub fn total_errors(&self) -> u64 {
        self.counts.values().sum()
    }
}

/// Validates a pivot JSONL fed in chunks.
pub struct PivotValidator {
    options: PivotOptions,
    any_field_groups: Vec<Vec<String>>,
    interest: Interest,
    splitter: LineSplitter,
    line: u64,
    report: Report,
    stats: Option<stats::Stats>,
    fixer: Option<fix::Fixer>,
}

impl PivotValidator {
    pub fn new(file: impl Into<String>, options: PivotOptions) -> Self {
        let any_field_groups = options
            .require_any_fields
            .iter()
            .map(|g| {
                g.split(',')
                    .map(str::trim)
                    .filter(|p| !p.is_empty())
                    .map(String::from)
                    .collect::<Vec<_>>()
            })
            .filter(|g: &Vec<String>| !g.is_empty())
            .collect();
        let mut interest = base_interest();
        for path in options
            .require_fields
            .iter()
            .chain(options.require_any_fields.iter())
        {
            for p in path.split(',').map(str::trim).filter(|p| !p.is_empty()) {
                interest.add_path(p);
            }
        }
        if options.gym_models {
            interest.key("responses_create_params").all = true;
        }
        let stats = options.stats.then(stats::Stats::default);
        if stats.is_some() {
            stats::add_interest(&mut interest);
        }
        let fixer = options
            .fix
            .then(|| fix::Fixer::new(options.agent_ref.clone()));
        PivotValidator {
            any_field_groups,
            interest,
            splitter: LineSplitter::new(),
            line: 0,
            report: Report {
                file: file.into(),
                ..Report::default()
            },
            stats,
            fixer,
            options,
        }
    }

    /// Feeds the next chunk. Returns false once `--fail-fast` has stopped the run.
    pub fn push(&mut self, chunk: &[u8]) -> bool {
        if self.report.stopped_early {
            return false;
        }
        let pushed = jsonl::push_held_lines(
            self,
            |v| &mut v.splitter,
            chunk,
            |v, span, bytes| {
                v.physical_lines(span.offset, bytes);
            },
        );
        if let Err(t) = pushed {
            self.line_too_long(t);
        }
        !self.report.stopped_early
    }

    /// Refuses lines longer than `max` bytes (default 1 GiB): the line is reported and reading stops.
    pub fn with_max_line_bytes(mut self, max: u64) -> Self {
        self.splitter = LineSplitter::with_max_line_bytes(max);
        self
    }

    /// A line over the limit is an error on that line, and the end of the run: nothing after it
    /// can be read without holding it whole.
    fn line_too_long(&mut self, t: LineTooLong) {
        // Physical lines (a lone CR ends one too), as every other finding counts them.
        let line = self.line + 1;
        let finding = Finding {
            line,
            span: None,
            column: None,
            path: Path::default(),
            check: Check::E,
            // The file named, as every other command's line-limit error names it.
            message: format!(
                "'{}' line {line} is longer than {} bytes (the limit; raise it with --max-line-bytes)",
                self.report.file, t.limit
            ),
            found: "a line too long".into(),
        };
        self.record(vec![finding]);
        self.report.stopped_early = true;
    }

    /// Bytes of the fixed copy produced so far (with `fix`); the caller writes them out.
    pub fn take_fixed(&mut self) -> Vec<u8> {
        self.fixer
            .as_mut()
            .map(fix::Fixer::take_output)
            .unwrap_or_default()
    }

    /// Lines read so far.
    pub fn lines_read(&self) -> u64 {
        self.line
    }

    pub fn finish(mut self) -> (Report, Vec<u8>) {
        jsonl::finish_held_lines(
            &mut self,
            |v| &mut v.splitter,
            |v, span, bytes| {
                v.physical_lines(span.offset, bytes);
            },
        );
        if self.report.rows == 0 && !self.report.stopped_early {
            let message = format!("{} contains no JSONL rows", self.report.file);
            let finding = Finding {
                line: 0,
                span: None,
                column: None,
                path: Path::default(),
                check: Check::E,
                message,
                found: "no rows".into(),
            };
            self.record(vec![finding]);
        }
        let fixed = self.take_fixed();
        self.report.stats = self.stats.take();
        self.report.fix = self.fixer.take().map(fix::Fixer::into_report);
        (self.report, fixed)
    }

    /// Python's universal newlines: a lone `\r` also ends a line (the splitter handled `\n`, `\r\n`).
    fn physical_lines(&mut self, offset: u64, bytes: &[u8]) {
        let mut at = offset;
        for piece in bytes.split(|&b| b == b'\r') {
            if self.report.stopped_early {
                return;
            }
            self.line += 1;
            self.one_line(at, piece);
            at += piece.len() as u64 + 1;
        }
    }

    fn one_line(&mut self, offset: u64, bytes: &[u8]) {
        let line_no = self.line;
        let span = Some((offset, u32::try_from(bytes.len()).unwrap_or(u32::MAX)));
        let text = match simdutf8::compat::from_utf8(bytes) {
            Ok(text) => text,
            Err(e) => {
                self.report.rows += 1;
                let column = String::from_utf8_lossy(&bytes[..e.valid_up_to()])
                    .chars()
                    .count()
                    + 1;
                self.json_error(
                    line_no,
                    span,
                    column,
                    "invalid UTF-8 (the file must be UTF-8 text; reading stopped here)".into(),
                );
                // Upstream's validator stops here too (its `UnicodeDecodeError` is uncaught), and
                // a binary file or device (`/dev/urandom`) would otherwise be read forever.
                self.report.stopped_early = true;
                return;
            }
        };
        if is_python_blank(text) {
            return;
        }
        self.report.rows += 1;
        if line_no == 1 && text.starts_with('\u{feff}') {
            self.json_error(
                line_no,
                span,
                1,
                "Unexpected UTF-8 BOM (save the file as UTF-8 without BOM)".into(),
            );
            return;
        }
        let (depth, too_deep) = depth::measure(text.as_bytes());
        if let Some(at) = too_deep {
            let column = char_column(text, at + 1);
            let message = format!("nesting deeper than {} levels", depth::MAX_DEPTH);
            self.json_error(line_no, span, column, message);
            return;
        }
        let done = depth::with_stack_for(depth, || self.check_row(line_no, span, text));
        if done.is_none() {
            let message = format!("could not start a thread to read {depth} levels of nesting");
            self.json_error(line_no, span, 1, message);
        }
    }

    /// Parses and checks one row (measured within [`depth::MAX_DEPTH`]).
    fn check_row(&mut self, line_no: u64, span: Option<(u64, u32)>, text: &str) {
        let row = match tree::parse(text, &self.interest) {
            Ok(row) => row,
            Err(e) => {
                let column = char_column(text, e.column());
                let message = e.to_string();
                let message = message
                    .rfind(" at line ")
                    .map_or(message.as_str(), |at| &message[..at])
                    .to_string();
                self.json_error(line_no, span, column, message);
                return;
            }
        };
        let mut checker = RowChecker {
            options: &self.options,
            any_field_groups: &self.any_field_groups,
            line: line_no,
            fail_fast: self.options.fail_fast,
            findings: Vec::new(),
        };
        let facts = checker.check(&row);
        let mut findings = checker.findings;
        if let Some(stats) = &mut self.stats {
            stats.add_row(&row, facts.as_ref(), findings.first().map(|f| f.check));
        }
        if let Some(fixer) = &mut self.fixer {
            fixer.row(
                line_no,
                text,
                findings.is_empty(),
                &self.options,
                &self.any_field_groups,
                &self.interest,
            );
        }
        if let Some(facts) = facts {
            self.report.summary.add(&facts);
        } else {
            // Columns cost a second parse of the line: only for findings that will be shown.
            let shown = self
                .options
                .max_errors
                .saturating_sub(self.report.findings.len());
            let budget = shown.max(usize::from(self.report.first.is_none()));
            for f in &mut findings {
                f.span = span;
            }
            for f in findings.iter_mut().take(budget) {
                f.column = checks::locate(text, &f.path).map(|at| char_column(text, at + 1));
            }
            self.record(findings);
        }
    }

    fn json_error(&mut self, line: u64, span: Option<(u64, u32)>, column: usize, detail: String) {
        let finding = Finding {
            line,
            span,
            column: Some(column),
            path: Path::default(),
            check: Check::J,
            message: format!("invalid JSON: {detail}"),
            found: "not JSON".into(),
        };
        self.record(vec![finding]);
    }

    fn record(&mut self, findings: Vec<Finding>) {
        if findings.is_empty() {
            return;
        }
        if findings[0].check != Check::E {
            self.report.invalid_rows += 1;
        }
        if self.report.first.is_none() {
            self.report.first = Some(findings[0].clone());
        }
        for f in findings {
            *self.report.counts.entry(f.check).or_default() += 1;
            if self.report.findings.len() < self.options.max_errors {
                self.report.findings.push(f);
            }
        }
        if self.options.fail_fast {
            self.report.stopped_early = true;
        }
    }
}

/// What every check reads; everything else in a row is skipped while parsing.
fn base_interest() -> Interest {
    let mut interest = Interest::default();
    interest.key("agent_ref").all = true;
    interest.key("expected_action").all = true;
    let params = interest.key("responses_create_params");
    params.key("tool_choice").all = true;
    params.key("parallel_tool_calls").all = true;
    let mut tool = Interest::default();
    tool.key("name").all = true;
    tool.key("function").key("name").all = true;
    params.key("tools").elements = Some(Box::new(tool));
    interest
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

/// Validates a whole in-memory file (tests, small inputs).
pub fn validate_bytes(file: &str, data: &[u8], options: PivotOptions) -> (Report, Vec<u8>) {
    let mut v = PivotValidator::new(file, options);
    for chunk in data.chunks(1 << 20) {
        if !v.push(chunk) {
            break;
        }
    }
    v.finish()
}
