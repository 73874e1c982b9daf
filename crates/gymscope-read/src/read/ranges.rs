//! A file cut into byte ranges that readers with no shared memory (the app's Web Workers) read
//! on their own. A range owns the lines that start inside it: its reader skips to the first line
//! start (a byte after a newline), reads past its end only to finish the line it began there,
//! and numbers lines from 1. Recorded in range order with the earlier ranges' line counts added
//! (`read::in_order::InOrder`), the lines, spans and errors are those of one reader of the whole
//! file: a line over the limit is found by the range that owns its start.

use super::batch::LineBatch;
use super::RowKind;
use crate::read::jsonl::{LineSplitter, LineTooLong, SplitError};

/// Bytes `start..end` of the file of `kind`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ByteRange {
    pub kind: RowKind,
    pub start: u64,
    pub end: u64,
}

impl ByteRange {
    pub fn len(&self) -> u64 {
        self.end - self.start
    }

    pub fn is_empty(&self) -> bool {
        self.end == self.start
    }
}

/// A file of `size` bytes in ranges of about `piece` bytes (the last one shorter).
pub fn plan(kind: RowKind, size: u64, piece: u64) -> Vec<ByteRange> {
    let piece = piece.max(1);
    (0..size.div_ceil(piece))
        .map(|i| ByteRange {
            kind,
            start: i * piece,
            end: ((i + 1) * piece).min(size),
        })
        .collect()
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Phase {
    /// Looking for the first line that starts inside the range.
    Seek,
    /// Cutting the lines of the range's bytes.
    Lines,
    /// Past the range's end, finishing the line that started before it.
    Tail,
    Done,
}

/// Cuts one range's lines into batches as its bytes are pushed, from [`RangeCutter::next_at`].
pub struct RangeCutter {
    range: ByteRange,
    /// The file offset of the next byte to push.
    at: u64,
    phase: Phase,
    splitter: LineSplitter,
    max_line: u64,
    pending: Option<LineBatch>,
}

impl RangeCutter {
    pub fn new(range: ByteRange, max_line: u64) -> Self {
        // The byte before the range says whether a line starts at its first byte.
        let (at, phase) = match range.start {
            0 => (0, Phase::Lines),
            s => (s - 1, Phase::Seek),
        };
        RangeCutter {
            range,
            at,
            phase: if range.is_empty() { Phase::Done } else { phase },
            splitter: LineSplitter::starting_at(0, max_line),
            max_line,
            pending: None,
        }
    }

    /// Where the next pushed bytes must start, or `None` once the range is read.
    pub fn next_at(&self) -> Option<u64> {
        (self.phase != Phase::Done).then_some(self.at)
    }

    /// Lines cut so far.
    pub fn lines(&self) -> u64 {
        self.splitter.lines()
    }

    /// Takes the next bytes of the file (`eof`: they end it), handing each full batch to `full`
    /// and, once the range is read, the last one. On a line over the limit the lines before it
    /// are handed out and the error carries the line's number within the range.
    pub fn push(
        &mut self,
        mut chunk: &[u8],
        eof: bool,
        mut full: impl FnMut(LineBatch),
    ) -> Result<(), LineTooLong> {
        let end = self.range.end;
        while self.phase != Phase::Done {
            let from = self.at;
            match self.phase {
                Phase::Seek => {
                    // A line starts at p in start..end when byte p - 1 is a newline.
                    let scan = (end - 1).saturating_sub(from).min(chunk.len() as u64) as usize;
                    if let Some(i) = memchr::memchr(b'\n', &chunk[..scan]) {
                        self.at = from + i as u64 + 1;
                        self.splitter = LineSplitter::starting_at(self.at, self.max_line);
                        self.phase = Phase::Lines;
                        chunk = &chunk[i + 1..];
                    } else if from + scan as u64 >= end - 1 || eof {
                        self.phase = Phase::Done; // no line starts in the range
                    } else {
                        self.at += chunk.len() as u64;
                        return Ok(());
                    }
                }
                Phase::Lines => {
                    let n = (end - from).min(chunk.len() as u64) as usize;
                    self.split(&chunk[..n], &mut full)?;
                    chunk = &chunk[n..];
                    if self.at == end {
                        self.phase = if self.splitter.is_mid_line() {
                            Phase::Tail
                        } else {
                            Phase::Done
                        };
                    } else if eof {
                        self.phase = Phase::Done;
                    } else {
                        return Ok(());
                    }
                }
                Phase::Tail => {
                    if let Some(i) = memchr::memchr(b'\n', chunk) {
                        self.split(&chunk[..=i], &mut full)?;
                    } else {
                        self.split(chunk, &mut full)?;
                        if !eof {
                            return Ok(());
                        }
                    }
                    self.phase = Phase::Done;
                }
                Phase::Done => {}
            }
        }
        self.end_lines(&mut full);
        Ok(())
    }

    /// Cuts `bytes` (the next of the range's lines) into the pending batch.
    fn split(&mut self, bytes: &[u8], full: &mut impl FnMut(LineBatch)) -> Result<(), LineTooLong> {
        self.at += bytes.len() as u64;
        let (kind, pending) = (self.range.kind, &mut self.pending);
        let pushed = self.splitter.push(bytes, |span, line| {
            let batch = pending.get_or_insert_with(|| LineBatch::new(kind));
            batch.push(span, line);
            if batch.is_full() {
                full(std::mem::replace(batch, LineBatch::new(kind)));
            }
            Ok::<_, std::convert::Infallible>(())
        });
        pushed.map_err(|e| {
            self.phase = Phase::Done;
            if let Some(batch) = self.pending.take().filter(|b| !b.is_empty()) {
                full(batch);
            }
            match e {
                SplitError::TooLong(t) => t,
                SplitError::Line(never) => match never {},
            }
        })
    }

    /// The range is read: its last line (at the end of the file, without a newline) and batch.
    fn end_lines(&mut self, full: &mut impl FnMut(LineBatch)) {
        let kind = self.range.kind;
        super::batch::flush_last(&mut self.splitter, &mut self.pending, kind, full);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::read::jsonl::LineSpan;

    /// Every range of `data` cut in pushes of `step` bytes: the lines (spans renumbered from
    /// the earlier ranges' counts) and the first line over the limit, numbered in the file.
    fn cut_in_ranges(
        data: &[u8],
        piece: u64,
        step: usize,
        max: u64,
    ) -> (Vec<(LineSpan, Vec<u8>)>, Option<LineTooLong>) {
        let mut out = Vec::new();
        let mut before = 0;
        for range in plan(RowKind::Rollout, data.len() as u64, piece) {
            let mut cutter = RangeCutter::new(range, max);
            let mut batches = Vec::new();
            let mut result = Ok(());
            while let (Some(at), Ok(())) = (cutter.next_at(), &result) {
                let at = at as usize;
                let stop = (at + step).min(data.len());
                result = cutter.push(&data[at..stop], stop == data.len(), |b| batches.push(b));
            }
            for b in &batches {
                for (span, line) in b.lines() {
                    let span = LineSpan {
                        line: span.line + before,
                        ..span
                    };
                    out.push((span, line.to_vec()));
                }
            }
            if let Err(t) = result {
                let line = t.line + before;
                return (out, Some(LineTooLong { line, ..t }));
            }
            before += cutter.lines();
        }
        (out, None)
    }

    fn cut_whole(data: &[u8], max: u64) -> (Vec<(LineSpan, Vec<u8>)>, Option<LineTooLong>) {
        let mut out = Vec::new();
        let mut s = LineSplitter::with_max_line_bytes(max);
        let pushed = s.push(data, |span, line| {
            out.push((span, line.to_vec()));
            Ok::<_, ()>(())
        });
        if let Err(SplitError::TooLong(t)) = pushed {
            return (out, Some(t));
        }
        let _ = s.finish(|span, line| {
            out.push((span, line.to_vec()));
            Ok::<_, ()>(())
        });
        (out, None)
    }

    #[test]
    fn ranges_give_the_lines_of_one_reader_for_every_cut() {
        let files: [&[u8]; 8] = [
            b"{\"a\":1}\n{\"b\":22}\n\n{\"c\":333}\n",
            b"{\"a\":1}\r\n{\"b\":2}\r\nlast without newline",
            b"\n\n\n",
            b"x",
            b"\xEF\xBB\xBF{}\n{}\n",
            b"short\na much longer line that crosses several ranges of a few bytes\nz\n",
            b"ab\ncd\nef\ngh\nij\n",
            b"",
        ];
        for data in files {
            let whole = cut_whole(data, 1 << 20);
            for piece in [1, 2, 3, 5, 8, 13, 64, 1 << 20] {
                for step in [1, 2, 7, 4096] {
                    assert_eq!(
                        cut_in_ranges(data, piece, step, 1 << 20),
                        whole,
                        "{:?} piece {piece} step {step}",
                        String::from_utf8_lossy(data)
                    );
                }
            }
        }
    }

    #[test]
    fn a_line_over_the_limit_is_found_by_the_range_that_owns_it() {
        let data = b"ok\nfine\nthis line is too long\nnever read\n";
        let whole = cut_whole(data, 10);
        assert_eq!(whole.1.map(|t| t.line), Some(3));
        for piece in [1, 3, 4, 9, 17, 100] {
            for step in [1, 5, 64] {
                assert_eq!(
                    cut_in_ranges(data, piece, step, 10),
                    whole,
                    "{piece} {step}"
                );
            }
        }
    }

    #[test]
    fn a_range_inside_one_line_reads_no_further_than_its_end() {
        let mut data = b"x\n".to_vec();
        data.extend(std::iter::repeat_n(b'y', 1000));
        data.extend(b"\nz\n");
        let range = ByteRange {
            kind: RowKind::Rollout,
            start: 100,
            end: 200,
        };
        let mut cutter = RangeCutter::new(range, 1 << 20);
        let mut batches = 0;
        cutter.push(&data[99..], true, |_| batches += 1).unwrap();
        assert_eq!((batches, cutter.lines(), cutter.next_at()), (0, 0, None));
    }
}
