//! One reading driver for readers that share no memory (the app's pool of Web Workers): each
//! reads byte ranges of a run's files on its own ([`read_range`]: cut with `read::ranges`,
//! each batch of lines turned into a job's own result), sends its [`Part`]s as bytes, and one
//! [`InOrder`] hands them to the [`Job`] in file order, numbering the lines. Every
//! job that reads whole files in the pool goes through here: the profile with health
//! (`joint_read::pooled`) and the query's three reads (`query::pooled`); what each records, and
//! the first error in file order, are those of one reader of the whole files.

use super::job::Job;
use crate::read::batch::LineBatch;
use crate::read::jsonl::LineTooLong;
use crate::read::ranges::{ByteRange, RangeCutter};
use serde::de::DeserializeOwned;
use serde::Serialize;
use std::collections::{BTreeMap, VecDeque};

/// What a range's reader sends, in order: its batches' results, then its end.
#[derive(serde::Serialize, serde::Deserialize)]
pub enum Part<L> {
    /// A batch's result, its lines numbered from 1 within the range.
    Lines(L),
    /// The range is read: how many lines it held, or the line over the limit that stopped it.
    End {
        lines: u64,
        too_long: Option<LineTooLong>,
    },
    /// The range's file could not be read past here (why): the read's error, in its place in
    /// file order, so an error in an earlier range still comes first.
    Failed(String),
}

impl<L: Serialize + DeserializeOwned> Part<L> {
    pub fn to_bytes(&self) -> Vec<u8> {
        // The results are plain data (numbers, strings, vectors, enums): postcard writes them all.
        postcard::to_allocvec(self).unwrap_or_default()
    }

    pub fn from_bytes(bytes: &[u8]) -> Result<Part<L>, String> {
        postcard::from_bytes(bytes).map_err(|e| format!("a reading worker's reply: {e}"))
    }
}

/// Reads `range` of a file of `size` bytes, `slice` bytes per `read(start, end)`, each batch of
/// its lines turned into a result by `lines` and handed to `part` (the last is [`Part::End`]).
pub fn read_range<L, E>(
    range: ByteRange,
    size: u64,
    max_line: u64,
    slice: u64,
    mut read: impl FnMut(u64, u64) -> Result<Vec<u8>, E>,
    mut lines: impl FnMut(&LineBatch) -> L,
    mut part: impl FnMut(Part<L>) -> Result<(), E>,
) -> Result<(), E> {
    let mut parts = RangeParts::new(range, max_line);
    while let Some(at) = parts.next_at() {
        let stop = (at + slice.max(1)).min(size);
        let bytes = read(at, stop)?;
        // A file cut short since it was chosen ends here, as a streaming read would.
        let eof = stop == size || (bytes.len() as u64) < stop - at;
        parts.push(&bytes, eof, &mut lines, &mut part)?;
    }
    Ok(())
}

/// [`read_range`]'s loop for a reader that is handed the bytes (a stream): push the file's
/// bytes from [`RangeParts::next_at`] on, in order, until it says the range is read; the parts
/// are [`read_range`]'s.
pub struct RangeParts {
    cutter: RangeCutter,
    batches: Vec<LineBatch>,
    /// [`Part::End`] was handed out.
    ended: bool,
}

impl RangeParts {
    pub fn new(range: ByteRange, max_line: u64) -> RangeParts {
        RangeParts {
            cutter: RangeCutter::new(range, max_line),
            batches: Vec::new(),
            ended: false,
        }
    }

    /// Where the next pushed bytes start in the file, or `None` once the range's end is sent.
    pub fn next_at(&self) -> Option<u64> {
        if self.ended {
            None
        } else {
            self.cutter.next_at()
        }
    }

    /// Takes the next bytes (`eof`: the file ends with them; an empty push with `eof` ends a
    /// stream), handing each full batch's result to `part`, then [`Part::End`] once the range
    /// is read or a line is over the limit.
    pub fn push<L, E>(
        &mut self,
        bytes: &[u8],
        eof: bool,
        mut lines: impl FnMut(&LineBatch) -> L,
        mut part: impl FnMut(Part<L>) -> Result<(), E>,
    ) -> Result<(), E> {
        if self.ended {
            return Ok(());
        }
        let batches = &mut self.batches;
        let cut = self.cutter.push(bytes, eof, |b| batches.push(b));
        for batch in self.batches.drain(..) {
            part(Part::Lines(lines(&batch)))?;
        }
        let too_long = match cut {
            Err(t) => Some(t),
            Ok(()) if self.cutter.next_at().is_none() => None,
            Ok(()) => return Ok(()),
        };
        self.ended = true;
        part(Part::End {
            lines: self.cutter.lines(),
            too_long,
        })
    }
}

/// Hands the parts of every range to a [`Job`] in file order, whatever order they arrive in.
pub struct InOrder<R: Job> {
    job: R,
    ranges: Vec<ByteRange>,
    /// The range being recorded, and the lines of its file's earlier ranges.
    next: usize,
    lines_before: u64,
    /// Parts of later ranges, until their turn.
    held: BTreeMap<usize, VecDeque<Part<R::Part>>>,
    /// A line over the limit ended the read.
    over: bool,
    bytes_done: u64,
    lines_done: u64,
}

impl<R: Job> InOrder<R> {
    /// `ranges`: each file's in file order, the files in the order they are recorded.
    pub fn new(job: R, ranges: Vec<ByteRange>) -> Self {
        InOrder {
            job,
            ranges,
            next: 0,
            lines_before: 0,
            held: BTreeMap::new(),
            over: false,
            bytes_done: 0,
            lines_done: 0,
        }
    }

    /// Takes a part of range `index`; records it and every held part now in order. The first
    /// error in file order stops the read; so does the job, and parts after it are dropped.
    pub fn accept(&mut self, index: usize, part: Part<R::Part>) -> Result<(), R::Error> {
        if self.is_done() {
            return Ok(());
        }
        if index != self.next {
            self.held.entry(index).or_default().push_back(part);
            return Ok(());
        }
        self.record(part)?;
        loop {
            if self.is_done() {
                self.held.clear();
                break;
            }
            let Some(parts) = self.held.get_mut(&self.next) else {
                break;
            };
            let Some(part) = parts.pop_front() else {
                self.held.remove(&self.next);
                break;
            };
            self.record(part)?;
        }
        Ok(())
    }

    fn record(&mut self, part: Part<R::Part>) -> Result<(), R::Error> {
        let range = self.ranges[self.next];
        match part {
            Part::Lines(lines) => self.job.record(lines, self.lines_before),
            Part::Failed(cause) => Err(self.job.read_failed(range.kind, cause)),
            Part::End { lines, too_long } => {
                if let Some(t) = too_long {
                    let line = t.line + self.lines_before;
                    self.over = true;
                    return self.job.too_long(range.kind, LineTooLong { line, ..t });
                }
                self.held.remove(&self.next);
                self.bytes_done += range.len();
                self.lines_done += lines;
                self.next += 1;
                let same_file = self.ranges.get(self.next).map(|r| r.kind) == Some(range.kind);
                self.lines_before = if same_file {
                    self.lines_before + lines
                } else {
                    0
                };
                Ok(())
            }
        }
    }

    /// Every range is recorded, or the read ended early (a line over the limit, the job).
    pub fn is_done(&self) -> bool {
        self.next == self.ranges.len() || self.over || self.job.is_stopped()
    }

    /// The range being recorded (every earlier one is).
    pub fn recording(&self) -> usize {
        self.next
    }

    /// Bytes and lines of the ranges recorded so far.
    pub fn done(&self) -> (u64, u64) {
        (self.bytes_done, self.lines_done)
    }

    /// The job, every range recorded.
    pub fn into_job(self) -> R {
        self.job
    }
}

/// For the jobs' tests: every range of `files` (inputs, rollouts) read alone by `lines`, its
/// parts made the bytes a pool worker posts, then handed to `order` last range first (so each is
/// held until its turn). The first error in file order, as the pool meets it. For the tests of
/// the layers above too, through the `testing` feature.
#[cfg(any(test, feature = "testing"))]
pub fn record_last_first<R: Job>(
    order: &mut InOrder<R>,
    files: (&[u8], &[u8]),
    max: u64,
    slice: u64,
    mut lines: impl FnMut(&LineBatch) -> R::Part,
) -> Result<(), R::Error>
where
    R::Part: Serialize + DeserializeOwned,
{
    use super::RowKind;
    let ranges = order.ranges.clone();
    let parts: Vec<Vec<Vec<u8>>> = ranges
        .iter()
        .map(|r| {
            let data = match r.kind {
                RowKind::Input => files.0,
                RowKind::Rollout => files.1,
            };
            let mut sent = Vec::new();
            let read = |a: u64, b: u64| Ok::<_, ()>(data[a as usize..b as usize].to_vec());
            let size = data.len() as u64;
            let sent_ok = read_range(
                *r,
                size,
                max,
                slice,
                read,
                &mut lines,
                |p: Part<R::Part>| {
                    sent.push(p.to_bytes());
                    Ok(())
                },
            );
            assert!(sent_ok.is_ok());
            sent
        })
        .collect();
    for (i, sent) in parts.iter().enumerate().rev() {
        for bytes in sent {
            let part = Part::from_bytes(bytes).unwrap_or_else(|e| panic!("{e}"));
            order.accept(i, part)?;
        }
    }
    assert!(order.is_done());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::read::RowKind;

    /// Each batch's result: the line (within the range) of its first bad row.
    struct FirstBad;

    impl Job for FirstBad {
        type Part = Option<u64>;
        type Error = String;
        fn record(&mut self, bad: Option<u64>, before: u64) -> Result<(), String> {
            bad.map_or(Ok(()), |line| Err(format!("bad line {}", line + before)))
        }
        fn too_long(&mut self, _: RowKind, t: LineTooLong) -> Result<(), String> {
            Err(format!("line {} too long", t.line))
        }
        fn read_failed(&mut self, _: RowKind, cause: String) -> String {
            format!("could not read: {cause}")
        }
    }

    fn three_ranges() -> InOrder<FirstBad> {
        let range = |start| ByteRange {
            kind: RowKind::Rollout,
            start,
            end: start + 10,
        };
        InOrder::new(FirstBad, vec![range(0), range(10), range(20)])
    }

    fn end(lines: u64) -> Part<Option<u64>> {
        Part::End {
            lines,
            too_long: None,
        }
    }

    #[test]
    fn a_range_that_cannot_be_read_fails_in_its_place_in_file_order() {
        // The last range fails first; the middle one has a bad row: the bad row is the error.
        let mut order = three_ranges();
        assert_eq!(order.accept(2, Part::Failed("gone".into())), Ok(()));
        assert_eq!(order.accept(1, Part::Lines(Some(2))), Ok(()));
        assert_eq!(order.accept(0, Part::Lines(None)), Ok(()));
        assert_eq!(order.accept(0, end(4)), Err("bad line 6".into()));
        // The first range fails after the bad row of a later one arrived: the failure is first.
        let mut order = three_ranges();
        assert_eq!(order.accept(1, Part::Lines(Some(2))), Ok(()));
        assert_eq!(
            order.accept(0, Part::Failed("gone".into())),
            Err("could not read: gone".into())
        );
    }

    /// Each part as text: a batch's lines (within the range) and texts, or the end.
    fn parts_of(
        read: impl FnOnce(&mut dyn FnMut(Part<Vec<(u64, String)>>) -> Result<(), ()>),
    ) -> Vec<String> {
        let mut out = Vec::new();
        read(&mut |p| {
            out.push(match p {
                Part::Lines(l) => format!("{l:?}"),
                Part::End { lines, too_long } => format!("end {lines} {too_long:?}"),
                Part::Failed(why) => format!("failed {why}"),
            });
            Ok(())
        });
        out
    }

    fn texts(batch: &LineBatch) -> Vec<(u64, String)> {
        batch
            .lines()
            .map(|(span, line)| (span.line, String::from_utf8_lossy(line).into_owned()))
            .collect()
    }

    #[test]
    fn a_range_pushed_as_a_stream_gives_the_parts_of_one_read_by_slices() {
        // Lines of every length around the ranges' edges, one over the limit near the end.
        let mut file = String::new();
        for i in 0..400 {
            file.push_str(&"x".repeat(i * 7 % 50));
            file.push('\n');
        }
        file.push_str(&"y".repeat(90));
        file.push_str("\nlast");
        let file = file.as_bytes();
        let size = file.len() as u64;
        let mut over = 0;
        for (start, end) in [(0, 500), (499, 2000), (2000, size - 60), (size - 60, size)] {
            let range = ByteRange {
                kind: RowKind::Rollout,
                start,
                end,
            };
            let sliced = parts_of(|part| {
                let read = |a: u64, b: u64| Ok(file[a as usize..b as usize].to_vec());
                read_range(range, size, 64, 37, read, texts, part).unwrap();
            });
            for chunk in [1, 5, 64, 10_000] {
                let streamed = parts_of(|part| {
                    let mut parts = RangeParts::new(range, 64);
                    let mut at = parts.next_at().unwrap() as usize;
                    for piece in file[at..].chunks(chunk) {
                        if parts.next_at().is_none() {
                            break;
                        }
                        parts.push(piece, false, texts, &mut *part).unwrap();
                        at += piece.len();
                    }
                    // The stream ran out: an empty push ends it.
                    parts.push(&[], true, texts, &mut *part).unwrap();
                    assert_eq!(parts.next_at(), None);
                    assert!(at <= file.len());
                });
                assert_eq!(streamed, sliced, "range {start}..{end}, chunks of {chunk}");
            }
            assert!(sliced.last().unwrap().starts_with("end "), "{sliced:?}");
            over += usize::from(sliced.last().unwrap().contains("Some"));
        }
        assert_eq!(over, 1, "the line over the limit stops one range");
    }
}
