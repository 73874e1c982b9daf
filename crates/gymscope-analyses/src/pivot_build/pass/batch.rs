//! The second pass on several threads, with the one-thread result.
//!
//! Converting a line (parse, trajectory, decision points, prefix bytes, pivot ids, self-check)
//! depends on nothing but the line and the first pass's group counts, so it can run anywhere:
//! [`PivotBuilder::cut`] copies lines into a [`ConvertBatch`] in file order, a [`Converter`] turns
//! a batch into [`Converted`] lines on any thread, and [`PivotBuilder::apply`] takes them back
//! in order. Only three things tie a line to the lines before it: a pivot id already written by an
//! earlier line (a duplicate), `--limit` and the row's stamped `_ng_task_index`. A converter
//! works as if no pivot had been written yet and without a limit; `apply` stamps the rows, and
//! converts again on its own thread, with the real state, any line whose result could differ (one
//! of its ids was written before, the limit falls inside it, or it failed the build), so the
//! output is byte for byte that of converting every line in order.

use super::PivotBuilder;
use crate::pivot_build::conversational::ConvCounts;
use crate::pivot_build::{BuildError, Metrics};
use crate::read::jsonl;

/// Source bytes per batch: enough lines to be worth a hand-off, little enough that the batches
/// in flight and their (several times larger) output stay small.
const BATCH_BYTES: usize = 1 << 20;

/// The most rows a converter makes for one line. A line whose rows grow past it (a trajectory
/// of thousands of steps: its rows grow with the square of its steps) is left to `apply`, which
/// converts it again on the builder that hands its rows to the writer as they come.
pub const HANDOFF_BYTES: usize = 16 << 20;

/// Lines of the source in file order, blank lines left out.
#[derive(Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct ConvertBatch {
    bytes: Vec<u8>,
    lines: Vec<BatchLine>,
}

#[derive(Clone, Copy, Debug, serde::Serialize, serde::Deserialize)]
struct BatchLine {
    end: usize,
    /// Physical line number, for messages.
    line: u64,
    /// The line's place among non-blank lines.
    trajectory_id: u64,
}

impl ConvertBatch {
    /// The lines with their `BatchLine`s.
    fn each(&self) -> impl Iterator<Item = (&BatchLine, &[u8])> {
        let mut start = 0;
        self.lines.iter().map(move |l| {
            let bytes = &self.bytes[start..l.end];
            start = l.end;
            (l, bytes)
        })
    }

    pub fn is_empty(&self) -> bool {
        self.lines.is_empty()
    }

    /// Adds a line unless it is blank; returns whether it is a row (`trajectory_id` is its place
    /// among the rows, `line` its line number).
    pub(super) fn push(&mut self, line: u64, trajectory_id: u64, bytes: &[u8]) -> bool {
        if is_blank(bytes) {
            return false;
        }
        self.bytes.extend_from_slice(bytes);
        self.lines.push(BatchLine {
            end: self.bytes.len(),
            line,
            trajectory_id,
        });
        true
    }
}

/// Blank as `convert_line` sees it: valid UTF-8 and only white space (not a row).
pub fn is_blank(bytes: &[u8]) -> bool {
    !matches!(bytes.first(), Some(b'{' | b'['))
        && simdutf8::basic::from_utf8(bytes).is_ok_and(|t| t.trim().is_empty())
}

/// One batch converted: the rows and audit records of its lines, and what `apply` needs to
/// check and count each line.
#[derive(Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct Converted {
    rows: Vec<u8>,
    audit: Vec<u8>,
    /// Ends of the rows in `rows`.
    row_ends: Vec<usize>,
    /// Every pivot id a line looked up, then the ids it wrote (`LineResult` has the ranges).
    ids: Vec<[u8; 16]>,
    lines: Vec<LineResult>,
}

#[derive(Debug, serde::Serialize, serde::Deserialize)]
struct LineResult {
    metrics: Metrics,
    single_groups: [u64; 3],
    conv: ConvCounts,
    /// End of the ids looked up, then of those written, in `Converted::ids`.
    ids_checked_end: usize,
    ids_end: usize,
    row_ends_end: usize,
    audit_end: usize,
    /// False when the line failed the build: `apply` converts it again to say so.
    exact: bool,
}

/// Converts batches anywhere: a builder of its own that has the first pass's results, no limit,
/// no stamping and no memory of earlier lines.
pub struct Converter {
    scratch: PivotBuilder,
}

impl Clone for Converter {
    fn clone(&self) -> Self {
        Converter {
            scratch: self.scratch.scratch(),
        }
    }
}

impl Converter {
    /// A converter on `scratch`, a builder made as [`PivotBuilder::scratch`] makes one.
    pub(super) fn on(scratch: PivotBuilder) -> Converter {
        Converter { scratch }
    }

    /// Hands back a rows buffer once written, so the next batch's rows reuse its memory.
    pub fn give_back(&mut self, buffer: Vec<u8>) {
        self.scratch.give_back(buffer);
    }

    pub fn run(&mut self, batch: &ConvertBatch) -> Converted {
        let b = &mut self.scratch;
        let mut out = Converted {
            lines: Vec::with_capacity(batch.lines.len()),
            ..Converted::default()
        };
        for (l, bytes) in batch.each() {
            b.row_index = l.trajectory_id;
            b.line = l.line;
            let (rows_start, ends_start) = (b.rows.len(), b.row_ends.len());
            b.convert_line(bytes);
            let too_big = std::mem::take(&mut b.too_big);
            if too_big {
                b.rows.truncate(rows_start);
                b.row_ends.truncate(ends_start);
            }
            let exact = b.error.take().is_none() && !std::mem::take(&mut b.done) && !too_big;
            out.ids.append(&mut b.checked);
            let ids_checked_end = out.ids.len();
            out.ids.extend(b.dedup.drain());
            out.row_ends.append(&mut b.row_ends);
            out.audit.append(&mut b.audit);
            out.lines.push(LineResult {
                metrics: std::mem::take(&mut b.metrics),
                single_groups: std::mem::take(&mut b.single_groups),
                conv: std::mem::take(&mut b.conv_counts),
                ids_checked_end,
                ids_end: out.ids.len(),
                row_ends_end: out.row_ends.len(),
                audit_end: out.audit.len(),
                exact,
            });
        }
        out.rows = std::mem::take(&mut b.rows);
        out
    }
}

impl PivotBuilder {
    /// A builder with this one's settings and first-pass results and nothing else.
    pub(super) fn scratch(&self) -> PivotBuilder {
        let mut options = self.options.clone();
        options.limit = None;
        options.stamp_task_index = false;
        let mut b = PivotBuilder::new(self.file.clone(), options);
        b.format = self.format;
        b.groups = self.groups.clone();
        b.handoff_limit = Some(self.handoff_bytes);
        b
    }

    /// A converter for the second pass (after `start_conversion`), one per thread.
    pub fn converter(&self) -> Converter {
        Converter {
            scratch: self.scratch(),
        }
    }

    /// Cuts the next chunk of the second pass into batches of whole lines, in order.
    pub fn cut(&mut self, chunk: &[u8]) -> Vec<ConvertBatch> {
        let mut batches = vec![ConvertBatch::default()];
        let pushed = jsonl::push_held_lines(
            self,
            |b| &mut b.splitter,
            chunk,
            |b, span, bytes| {
                let batch = batches.last_mut().expect("one batch at least");
                b.add_line(batch, span.line, bytes);
                if batch.bytes.len() >= BATCH_BYTES {
                    batches.push(ConvertBatch::default());
                }
            },
        );
        if let Err(t) = pushed {
            self.cut_error
                .get_or_insert_with(|| BuildError::new(t.in_file(&self.file)));
        }
        batches.retain(|b| !b.is_empty());
        batches
    }

    /// The last line, when the source does not end with a newline.
    pub fn cut_end(&mut self) -> ConvertBatch {
        let mut batch = ConvertBatch::default();
        jsonl::finish_held_lines(
            self,
            |b| &mut b.splitter,
            |b, span, bytes| {
                b.add_line(&mut batch, span.line, bytes);
            },
        );
        batch
    }

    fn add_line(&mut self, batch: &mut ConvertBatch, line: u64, bytes: &[u8]) {
        if batch.push(line, self.cut_rows, bytes) {
            self.cut_rows += 1;
        }
    }

    /// The second pass without converters: every line of the chunk converted in order against
    /// this builder's state. The reference the batch path is tested against.
    pub fn convert_each_line(&mut self, chunk: &[u8]) -> bool {
        self.convert_batches(chunk, Self::apply_each_line)
    }

    /// `convert_each_line` for the last line of a source without a final newline.
    pub fn convert_each_line_end(&mut self) -> bool {
        if self.done || self.error.is_some() {
            return false;
        }
        let batch = self.cut_end();
        self.apply_each_line(&batch)
    }

    fn apply_each_line(&mut self, batch: &ConvertBatch) -> bool {
        for (l, bytes) in batch.each() {
            if self.done || self.error.is_some() {
                break;
            }
            self.row_index = l.trajectory_id;
            self.line = l.line;
            self.convert_line(bytes);
        }
        if self.error.is_none() {
            self.error = self.cut_error.take();
        }
        !self.done && self.error.is_none()
    }

    /// Takes a converted batch back, in file order. Returns false once done or failed.
    pub fn apply(&mut self, batch: &ConvertBatch, converted: Converted) -> bool {
        let Converted {
            rows,
            audit,
            row_ends,
            ids,
            lines,
        } = converted;
        let stamp = self.options.stamp_task_index;
        // `rows[copied..]` is not in `self.rows` yet: runs of taken lines are copied at once (or
        // the buffer moved whole) unless rows are stamped one by one.
        let (mut copied, mut row_start) = (0, 0);
        let (mut rows_from, mut ids_from, mut audit_from) = (0, 0, 0);
        for ((l, bytes), r) in batch.each().zip(lines) {
            if self.done || self.error.is_some() {
                break;
            }
            let line_rows = &row_ends[rows_from..r.row_ends_end];
            let line_end = line_rows.last().copied().unwrap_or(row_start);
            let again = !r.exact
                || ids[ids_from..r.ids_checked_end]
                    .iter()
                    .any(|id| self.dedup.contains(id))
                || self.options.limit.is_some_and(|limit| {
                    self.metrics.pivot_rows_written + line_rows.len() as u64 >= limit
                });
            if again {
                self.rows.extend_from_slice(&rows[copied..row_start]);
                copied = line_end;
                self.row_index = l.trajectory_id;
                self.line = l.line;
                self.convert_line(bytes);
            } else {
                if stamp {
                    let written = self.metrics.pivot_rows_written;
                    let mut start = row_start;
                    for (place, &end) in (written..).zip(line_rows) {
                        self.push_stamped(&rows[start..end], place);
                        start = end;
                    }
                    copied = line_end;
                }
                self.audit
                    .extend_from_slice(&audit[audit_from..r.audit_end]);
                self.dedup.extend(&ids[r.ids_checked_end..r.ids_end]);
                self.metrics.absorb(r.metrics);
                for (total, n) in self.single_groups.iter_mut().zip(r.single_groups) {
                    *total += n;
                }
                self.conv_counts.absorb(r.conv);
            }
            row_start = line_end;
            (rows_from, ids_from, audit_from) = (r.row_ends_end, r.ids_end, r.audit_end);
        }
        if copied == 0 && row_start == rows.len() && self.rows.is_empty() {
            self.rows = rows; // every row taken as converted: no copy
        } else {
            self.rows.extend_from_slice(&rows[copied..row_start]);
        }
        if self.error.is_none() {
            self.error = self.cut_error.take();
        }
        !self.done && self.error.is_none()
    }

    /// Appends a converted row stamped with its place (`--stamp-task-index`): the stamp is the
    /// row's last member, so it goes before the closing `}` and newline.
    fn push_stamped(&mut self, row: &[u8], place: u64) {
        let body = row.strip_suffix(b"}\n").unwrap_or(row);
        self.rows.extend_from_slice(body);
        self.rows.extend_from_slice(b",\"_ng_task_index\":");
        self.rows
            .extend_from_slice(itoa::Buffer::new().format(place).as_bytes());
        self.rows.extend_from_slice(b"}\n");
    }
}
