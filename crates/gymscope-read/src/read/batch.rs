//! Complete lines of one file, cut from the chunks that held them: what the profile's reading
//! (`batch`), health's and the joint read hand to other threads.

use super::RowKind;
use crate::read::jsonl::{LineSpan, LineSplitter, LineTooLong, SplitError};

/// About this many bytes of complete lines make a batch: large enough that each batch's own costs
/// (its field-name table, merged when recorded; a hand-over between threads) are spread thin,
/// small enough that two per thread stay a few tens of MB. `cargo bench --bench profile`, agentic
/// run: 256 KiB 1.04 s, 1 MiB 1.09–1.18 s, 4 MiB 0.95–0.99 s.
pub const BATCH_BYTES: usize = 4 << 20;

/// Complete lines of one file, copied out of the chunks that held them.
pub struct LineBatch {
    kind: RowKind,
    bytes: Vec<u8>,
    /// Each line's span in the file and where it starts in `bytes`.
    lines: Vec<(LineSpan, usize)>,
}

impl LineBatch {
    pub fn new(kind: RowKind) -> Self {
        LineBatch {
            kind,
            bytes: Vec::with_capacity(BATCH_BYTES + BATCH_BYTES / 4),
            lines: Vec::new(),
        }
    }

    pub fn push(&mut self, span: LineSpan, line: &[u8]) {
        self.lines.push((span, self.bytes.len()));
        self.bytes.extend_from_slice(line);
    }

    pub fn is_full(&self) -> bool {
        self.bytes.len() >= BATCH_BYTES
    }

    pub fn is_empty(&self) -> bool {
        self.lines.is_empty()
    }

    /// Which file the lines are of.
    pub fn kind(&self) -> RowKind {
        self.kind
    }

    /// The lines with their spans (without the newline), in file order.
    pub fn lines(&self) -> impl Iterator<Item = (LineSpan, &[u8])> + '_ {
        self.lines.iter().enumerate().map(|(i, &(span, start))| {
            let end = self
                .lines
                .get(i + 1)
                .map_or(self.bytes.len(), |next| next.1);
            (span, &self.bytes[start..end])
        })
    }
}

/// Cuts `chunk` (the next bytes of a file of `kind`) into lines and the lines into batches,
/// `pending` being the one that fills up, each full one handed to `full`. On a line over the
/// limit, the lines cut before it are handed out too: the caller records them before it reports
/// the limit, since one of them may hold the first error.
pub fn cut(
    splitter: &mut LineSplitter,
    pending: &mut Option<LineBatch>,
    kind: RowKind,
    chunk: &[u8],
    full: &mut impl FnMut(LineBatch),
) -> Result<(), LineTooLong> {
    let pushed = splitter.push(chunk, |span, line| {
        let batch = pending.get_or_insert_with(|| LineBatch::new(kind));
        batch.push(span, line);
        if batch.is_full() {
            full(std::mem::replace(batch, LineBatch::new(kind)));
        }
        Ok::<_, std::convert::Infallible>(())
    });
    match pushed {
        Ok(()) => Ok(()),
        Err(SplitError::TooLong(t)) => {
            if let Some(batch) = pending.take().filter(|b| !b.is_empty()) {
                full(batch);
            }
            Err(t)
        }
        Err(SplitError::Line(never)) => match never {},
    }
}

/// Hands out the splitter's last line (a file's end without a newline) and the pending batch:
/// the end of a file's cut (`batch`) or of a range's (`ranges`).
pub fn flush_last(
    splitter: &mut LineSplitter,
    pending: &mut Option<LineBatch>,
    kind: RowKind,
    full: &mut impl FnMut(LineBatch),
) {
    let Ok(()) = splitter.finish(|span, line| {
        pending
            .get_or_insert_with(|| LineBatch::new(kind))
            .push(span, line);
        Ok::<_, std::convert::Infallible>(())
    });
    if let Some(batch) = pending.take().filter(|b| !b.is_empty()) {
        full(batch);
    }
}
