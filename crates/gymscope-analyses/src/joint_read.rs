//! A run's lines read for the profile and rollout health at once (`health`, `report` and the
//! app want both): each rollout line is walked once by health's skimming reader, which hands the
//! profile's reader (`record::MemberReader`) every top-level value and `response.usage` as it
//! delimits them. Why: the two readers walked every line separately, and the second walk was a
//! third of the read's CPU time. A line either reader is unsure of is read by each alone, so
//! rows, signals and errors are exactly those of the separate reads (tested in
//! `tests/cli/health_skim.rs`).

use crate::error::ProfileError;
use crate::health::{self, HealthBuilder, HealthError, InputRead, RolloutRead};
use crate::profile::{self, ParsedBatch, ProfileBuilder};
use crate::read::batch::LineBatch;
use crate::read::jsonl::LineSpan;
use crate::record::{KeyTable, MemberReader, Row, RowError, RowKind};

pub mod pooled;

/// A batch's lines as health reads them, with their line numbers (a batch is of one file).
#[derive(serde::Serialize, serde::Deserialize)]
pub enum HealthLines {
    Inputs(Vec<(u64, Result<Option<InputRead>, String>)>),
    Rollouts(Vec<(u64, Result<Option<RolloutRead>, String>)>),
}

impl HealthLines {
    /// Numbers a range's lines in their file (`pooled`): `before` lines came earlier.
    pub fn renumber(&mut self, before: u64) {
        match self {
            HealthLines::Inputs(lines) => lines.iter_mut().for_each(|(n, _)| *n += before),
            HealthLines::Rollouts(lines) => lines.iter_mut().for_each(|(n, _)| *n += before),
        }
    }
}

/// Reads every line of `batch` for the profile ([`profile::parse_batch`]'s result) and for
/// health (recorded in order by [`record_health`]).
pub fn parse_batch(batch: &LineBatch) -> (ParsedBatch, HealthLines) {
    match batch.kind() {
        RowKind::Input => {
            let (parsed, lines) = read_lines(batch, input_line);
            (parsed, HealthLines::Inputs(lines))
        }
        RowKind::Rollout => {
            let (parsed, lines) = read_lines(batch, rollout_line);
            (parsed, HealthLines::Rollouts(lines))
        }
    }
}

/// Each line of `batch` read by `line`: the profile's rows, and health's reads by line number.
#[allow(clippy::type_complexity)] // health's own per-line results
fn read_lines<T>(
    batch: &LineBatch,
    line: fn(LineSpan, &[u8], &mut KeyTable) -> Both<T>,
) -> (ParsedBatch, Vec<(u64, Result<Option<T>, String>)>) {
    let mut reads = Vec::new();
    let parsed = profile::parse_batch_with(batch, |span, bytes, keys| {
        let (row, read) = line(span, bytes, keys);
        reads.push((span.line, read));
        row
    });
    (parsed, reads)
}

/// A line's two readings: the profile's row (or why not) and health's read (or why not).
pub type Both<T> = (Result<Row, RowError>, Result<Option<T>, String>);

/// One rollout line for both: in one walk when both readers are sure of it, else each alone.
pub fn rollout_line(span: LineSpan, line: &[u8], keys: &mut KeyTable) -> Both<RolloutRead> {
    one_line(
        span,
        line,
        keys,
        RowKind::Rollout,
        health::read_rollout_beside,
    )
    .unwrap_or_else(|| {
        (
            profile::parse_line(span, line, RowKind::Rollout, keys),
            health::read_rollout(line),
        )
    })
}

/// One materialized-inputs line for both, as [`rollout_line`].
pub fn input_line(span: LineSpan, line: &[u8], keys: &mut KeyTable) -> Both<InputRead> {
    one_line(span, line, keys, RowKind::Input, health::read_input_beside).unwrap_or_else(|| {
        (
            profile::parse_line(span, line, RowKind::Input, keys),
            health::read_input(line),
        )
    })
}

/// The one walk, when the line is plain and both readers are sure of it.
fn one_line<T>(
    span: LineSpan,
    line: &[u8],
    keys: &mut KeyTable,
    kind: RowKind,
    walk: impl FnOnce(&str, &mut MemberReader) -> Option<Result<T, String>>,
) -> Option<Both<T>> {
    // What the profile's `parse_line` and health's readers treat specially goes the separate way.
    let blank = line.iter().all(u8::is_ascii_whitespace);
    let bom = span.offset == 0 && line.starts_with(b"\xEF\xBB\xBF");
    if blank || bom {
        return None;
    }
    let text = simdutf8::basic::from_utf8(line).ok()?;
    let mut reader = MemberReader::new(kind, keys);
    let read = walk(text, &mut reader)?;
    Some((Ok(reader.finish()?), read.map(Some)))
}

/// Records a batch's health reads in file order; the first error stops the health read.
pub fn record_health(
    h: &mut HealthBuilder,
    inputs_name: &str,
    lines: HealthLines,
) -> Result<(), HealthError> {
    match lines {
        HealthLines::Inputs(lines) => {
            for (n, read) in lines {
                h.record_input(inputs_name, n, read)?;
            }
        }
        HealthLines::Rollouts(lines) => {
            for (n, read) in lines {
                h.record_rollout(n, read)?;
            }
        }
    }
    Ok(())
}

/// Records a batch read for both, in file order: the profile's rows (its first error stops the
/// read) and health's reads (health's first error stops only health: a row health cannot read
/// costs the Health page, not the profile).
pub fn record_both(
    builder: &mut ProfileBuilder,
    health: &mut Result<HealthBuilder, HealthError>,
    inputs_name: &str,
    parsed: ParsedBatch,
    lines: HealthLines,
) -> Result<(), ProfileError> {
    builder.record(parsed)?;
    if let Ok(h) = health {
        if let Err(e) = record_health(h, inputs_name, lines) {
            *health = Err(e);
        }
    }
    Ok(())
}
