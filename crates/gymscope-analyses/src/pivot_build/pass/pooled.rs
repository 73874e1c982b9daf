//! The second pass in byte ranges, by readers that share no memory (the app's pool): the first
//! pass, read in order, notes where each range's lines start among the source's rows and lines
//! ([`RangeStarts`]); each reader gets a converter made from the first pass's results
//! ([`ConverterSetup`]) and converts its range's batches numbered from there ([`RangeConverter`]);
//! the builder takes them back in file order (`read::job::Job`), as `apply` takes a
//! thread's batches, so the rows, audit and metrics are those of one reader.

use super::batch::{ConvertBatch, Converted, Converter};
use super::PivotBuilder;
use crate::pivot_build::source::Groups;
use crate::pivot_build::{BuildError, BuildOptions, SourceFormat};
use crate::read::batch::LineBatch;
use crate::read::job::Job;
use crate::read::jsonl::{LineSpan, LineTooLong};
use crate::read::ranges::ByteRange;
use crate::record::RowKind;
use std::sync::Arc;

/// Where a range's first line sits in the source: the rows (non-blank lines) and the lines
/// before it.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct RangeStart {
    pub rows_before: u64,
    pub lines_before: u64,
}

/// Each range's [`RangeStart`], found while the first pass reads the lines in order.
pub struct RangeStarts {
    /// Where each range begins: it owns the lines that start at or after it (and before the next).
    begins: Vec<u64>,
    starts: Vec<RangeStart>,
    rows: u64,
    lines: u64,
}

impl RangeStarts {
    pub fn new(ranges: &[ByteRange]) -> RangeStarts {
        RangeStarts {
            begins: ranges.iter().map(|r| r.start).collect(),
            starts: Vec::with_capacity(ranges.len()),
            rows: 0,
            lines: 0,
        }
    }

    /// The source's next line, as the first pass's splitter cuts it.
    pub fn line(&mut self, span: LineSpan, bytes: &[u8]) {
        while let Some(&begin) = self.begins.get(self.starts.len()) {
            if begin > span.offset {
                break;
            }
            self.starts.push(RangeStart {
                rows_before: self.rows,
                lines_before: span.line - 1,
            });
        }
        self.lines = span.line;
        if !super::batch::is_blank(bytes) {
            self.rows += 1;
        }
    }

    /// Every range's start (a range no line starts in begins where the source ends).
    pub fn finish(mut self) -> Vec<RangeStart> {
        while self.starts.len() < self.begins.len() {
            self.starts.push(RangeStart {
                rows_before: self.rows,
                lines_before: self.lines,
            });
        }
        self.starts
    }
}

/// The [`RangeStart`] of each batch of a source cut whole (the native second pass,
/// `native::in_order::read_stamped`): its rows counted on the reading thread, in file order, as
/// the first pass counts them for ranges.
#[derive(Default)]
pub struct BatchStarts {
    rows: u64,
}

impl BatchStarts {
    /// The next batch's start; its line numbers are already the file's.
    pub fn next(&mut self, batch: &LineBatch) -> RangeStart {
        let start = RangeStart {
            rows_before: self.rows,
            lines_before: 0,
        };
        let rows = batch.lines().filter(|(_, b)| !super::batch::is_blank(b));
        self.rows += rows.count() as u64;
        start
    }
}

/// What a reader needs to convert lines anywhere: the first pass's results and the options.
#[derive(serde::Serialize, serde::Deserialize)]
pub struct ConverterSetup {
    file: String,
    options: BuildOptions,
    format: Option<SourceFormat>,
    groups: Groups,
    handoff_bytes: usize,
}

impl ConverterSetup {
    pub fn to_bytes(&self) -> Vec<u8> {
        // Strings, numbers, maps and JSON values (`--tools`): postcard writes them all.
        postcard::to_allocvec(self).unwrap_or_default()
    }

    pub fn from_bytes(bytes: &[u8]) -> Result<ConverterSetup, String> {
        postcard::from_bytes(bytes).map_err(|e| format!("a converter's setup: {e}"))
    }

    /// The converter it describes.
    pub fn converter(self) -> Converter {
        let mut b = PivotBuilder::new(self.file, self.options);
        b.format = self.format;
        b.groups = Arc::new(self.groups);
        b.handoff_limit = Some(self.handoff_bytes);
        Converter::on(b)
    }
}

impl PivotBuilder {
    /// The error of a source line over the limit.
    pub fn line_too_long(&self, t: LineTooLong) -> BuildError {
        BuildError::new(t.in_file(&self.file))
    }

    /// Keeps `e` as the build's error unless an earlier one stands (`finish` returns it): a
    /// line over the limit met after the lines before it were taken.
    pub fn keep_error(&mut self, e: BuildError) {
        self.error.get_or_insert(e);
    }

    /// The setup of converters for the pool's readers (after `start_conversion`).
    pub fn converter_setup(&self) -> ConverterSetup {
        let scratch = self.scratch();
        ConverterSetup {
            file: scratch.file,
            options: scratch.options,
            format: scratch.format,
            groups: (*scratch.groups).clone(),
            handoff_bytes: self.handoff_bytes,
        }
    }
}

/// A batch of a range's lines and what its converter made of them.
#[derive(serde::Serialize, serde::Deserialize)]
pub struct ConvertedBatch {
    batch: ConvertBatch,
    converted: Converted,
}

/// Converts one range's batches, its rows and lines numbered from its [`RangeStart`].
pub struct RangeConverter<'c> {
    converter: &'c mut Converter,
    next_row: u64,
    lines_before: u64,
}

impl<'c> RangeConverter<'c> {
    pub fn new(converter: &'c mut Converter, start: RangeStart) -> RangeConverter<'c> {
        RangeConverter {
            converter,
            next_row: start.rows_before,
            lines_before: start.lines_before,
        }
    }

    pub fn lines(&mut self, lines: &LineBatch) -> ConvertedBatch {
        let mut batch = ConvertBatch::default();
        for (span, bytes) in lines.lines() {
            if batch.push(self.lines_before + span.line, self.next_row, bytes) {
                self.next_row += 1;
            }
        }
        let converted = self.converter.run(&batch);
        ConvertedBatch { batch, converted }
    }
}

/// The builder takes a range's batches back in file order, as `apply` takes a thread's.
impl Job for PivotBuilder {
    type Part = ConvertedBatch;
    type Error = BuildError;

    /// The batch's lines carry their own numbers (from the first pass).
    fn record(&mut self, part: ConvertedBatch, _before: u64) -> Result<(), BuildError> {
        self.apply(&part.batch, part.converted);
        Ok(())
    }

    fn too_long(&mut self, _: RowKind, t: LineTooLong) -> Result<(), BuildError> {
        Err(self.line_too_long(t))
    }

    fn read_failed(&mut self, _: RowKind, cause: String) -> BuildError {
        BuildError::new(format!("Could not read '{}': {cause}", self.file))
    }

    /// `--limit` reached, or a line failed the build (`finish` says which).
    fn is_stopped(&self) -> bool {
        self.done || self.error.is_some()
    }
}
