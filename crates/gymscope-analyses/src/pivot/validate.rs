//! The validator: a pivot JSONL fed in chunks, every row through upstream's checks
//! (`checked`), every error reported (or upstream's first only, `--fail-fast`), upstream's
//! success summary, optional `--stats` and a normalized `--fix` copy. [`ReportBuilder`] adds
//! runs of checked lines in file order: one reader's chunks, or the pool's ranges (`pooled`).

use super::checked::{Checked, LineChecker};
use super::checks::{Check, Finding, Path};
use super::summary::Summary;
use super::{fix, stats, PivotOptions};
use crate::read::batch::LineBatch;
use crate::read::job::OneThread;
use crate::read::jsonl::{LineTooLong, DEFAULT_MAX_LINE_BYTES};
use crate::record::RowKind;
use std::collections::BTreeMap;

/// The outcome of validating one file.
#[derive(Debug, Default, PartialEq)]
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

/// A file's report made from its runs of lines, added in file order: the file-level findings
/// (a line over the limit, no rows), the error budget, and the fixed copy's bytes.
pub struct ReportBuilder {
    report: Report,
    max_errors: usize,
    fail_fast: bool,
    /// Physical lines of the runs added so far.
    lines: u64,
    stats: Option<stats::Stats>,
    fix: Option<fix::FixReport>,
    /// The fixed copy's bytes not yet taken.
    fixed: Vec<u8>,
}

impl ReportBuilder {
    pub fn new(file: impl Into<String>, options: &PivotOptions) -> ReportBuilder {
        ReportBuilder {
            report: Report {
                file: file.into(),
                ..Report::default()
            },
            max_errors: options.max_errors,
            fail_fast: options.fail_fast,
            lines: 0,
            stats: options.stats.then(stats::Stats::default),
            fix: options.fix.then(fix::FixReport::default),
            fixed: Vec::new(),
        }
    }

    /// Adds the next run of lines. Returns false once the file's reading has stopped (an
    /// earlier run stopped it, or this one does): nothing after it counts.
    pub fn add(&mut self, run: Checked) -> bool {
        if self.report.stopped_early {
            return false;
        }
        let before = self.lines;
        self.lines += run.lines;
        self.report.rows += run.rows;
        self.report.invalid_rows += run.invalid_rows;
        for (check, n) in run.counts {
            *self.report.counts.entry(check).or_default() += n;
        }
        for mut f in run.findings {
            f.line += before;
            if self.report.first.is_none() {
                self.report.first = Some(f.clone());
            }
            if self.report.findings.len() < self.max_errors {
                self.report.findings.push(f);
            }
        }
        self.report.summary.merge(run.summary);
        if let (Some(stats), Some(more)) = (&mut self.stats, run.stats) {
            stats.merge(more);
        }
        if let (Some(fix), Some(rows)) = (&mut self.fix, run.fixed) {
            fix.add(&rows, before);
            self.fixed.extend_from_slice(&rows.bytes);
        }
        self.report.stopped_early = run.stopped;
        !run.stopped
    }

    /// A line over the limit after the runs added: an error on that line, and the end of the
    /// run, since nothing after it can be read without holding it whole.
    pub fn line_too_long(&mut self, t: LineTooLong) {
        if self.report.stopped_early {
            return;
        }
        // Physical lines (a lone CR ends one too), as every other finding counts them.
        let line = self.lines + 1;
        // The file named, as every other command's line-limit error names it.
        let message = format!(
            "'{}' line {line} is longer than {} bytes (the limit; raise it with --max-line-bytes)",
            self.report.file, t.limit
        );
        self.file_error(line, message, "a line too long");
        self.report.stopped_early = true;
    }

    /// The file, as the report names it.
    pub fn file(&self) -> &str {
        &self.report.file
    }

    /// Physical lines of the runs added so far.
    pub fn lines(&self) -> u64 {
        self.lines
    }

    /// Whether the reading has stopped (the lines after are not read).
    pub fn is_stopped(&self) -> bool {
        self.report.stopped_early
    }

    /// Bytes of the fixed copy added since the last call (with `fix`); the caller writes them out.
    pub fn take_fixed(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.fixed)
    }

    /// The report, every run added, and the fixed copy's last bytes.
    pub fn finish(mut self) -> (Report, Vec<u8>) {
        if self.report.rows == 0 && !self.report.stopped_early {
            let message = format!("{} contains no JSONL rows", self.report.file);
            self.file_error(0, message, "no rows");
        }
        self.report.stats = self.stats.take();
        self.report.fix = self.fix.take();
        (self.report, self.fixed)
    }

    fn file_error(&mut self, line: u64, message: String, found: &str) {
        let finding = Finding {
            line,
            span: None,
            column: None,
            path: Path::default(),
            check: Check::E,
            message,
            found: found.into(),
        };
        if self.report.first.is_none() {
            self.report.first = Some(finding.clone());
        }
        *self.report.counts.entry(Check::E).or_default() += 1;
        if self.report.findings.len() < self.max_errors {
            self.report.findings.push(finding);
        }
        self.report.stopped_early |= self.fail_fast;
    }
}

/// A batch of lines checked as one run, on the one-thread driver.
type CheckBatch = Box<dyn FnMut(&LineBatch) -> Checked + Send>;

/// Validates a pivot JSONL fed in chunks: the report's job (`pooled`, a `read::job::Job`) on the
/// one-thread driver, each batch of lines one run.
pub struct PivotValidator {
    read: OneThread<ReportBuilder, CheckBatch>,
}

impl PivotValidator {
    pub fn new(file: impl Into<String>, options: PivotOptions) -> Self {
        let max = DEFAULT_MAX_LINE_BYTES;
        let builder = ReportBuilder::new(file, &options);
        let checker = LineChecker::new(options);
        let check: CheckBatch = Box::new(move |batch| checker.batch(batch));
        PivotValidator {
            read: OneThread::new(builder, max, check),
        }
    }

    /// Feeds the next chunk. Returns false once the reading has stopped (`--fail-fast`, …).
    pub fn push(&mut self, chunk: &[u8]) -> bool {
        // The report's only error is a file that cannot be read: not one fed in chunks.
        let Ok(()) = self.read.push(RowKind::Rollout, chunk) else {
            return false;
        };
        !self.read.is_done()
    }

    /// Refuses lines longer than `max` bytes (default 1 GiB): the line is reported and reading stops.
    #[must_use]
    pub fn with_max_line_bytes(self, max: u64) -> Self {
        PivotValidator {
            read: self.read.with_max_line_bytes(max),
        }
    }

    /// Bytes of the fixed copy produced so far (with `fix`); the caller writes them out.
    pub fn take_fixed(&mut self) -> Vec<u8> {
        self.read.job_mut().take_fixed()
    }

    /// Lines read so far.
    pub fn lines_read(&self) -> u64 {
        self.read.job().lines()
    }

    pub fn finish(mut self) -> (Report, Vec<u8>) {
        // The report's only error is a file that cannot be read: not one fed in chunks, so the
        // end's result is always `Ok`.
        let _ended = self.read.end();
        self.read.into_job().finish()
    }
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
