//! What an analysis that reads whole files is to every reading driver: a [`Job`]. Each batch of
//! complete lines ([`LineBatch`]) is parsed into a part on any thread, by the job's parse function
//! (pure, so it runs where the driver puts it), and the parts are recorded by the job in file
//! order. Three drivers run a job:
//!
//! - [`OneThread`] (here): the lines cut, parsed and recorded as they come, on the calling thread
//!   (the app's one-worker reads, the tests' reference);
//! - `native::in_order::read_in_order` (the native face): this thread cuts and records, one
//!   thread per core parses;
//! - [`super::in_order::InOrder`] (the app's pool): readers that share no memory each read byte
//!   ranges, and their parts are recorded in file order.
//!
//! Whatever the driver, the job sees the same parts in the same order, so its result and its
//! first error are those of one reader of the whole files.

use super::batch::{self, LineBatch};
use super::jsonl::{LineSplitter, LineTooLong};
use super::RowKind;

/// An analysis that reads whole files, as the drivers run it (module doc).
pub trait Job {
    /// A batch's parse, as the job's parse function makes it on whatever thread.
    type Part;
    type Error;
    /// Records a batch's part, in file order. The part's lines are numbered in its file from
    /// `before + 1` (`before` is 0 where the whole file was cut at once, else the lines of the
    /// file's earlier byte ranges). An error ends the read.
    fn record(&mut self, part: Self::Part, before: u64) -> Result<(), Self::Error>;
    /// A line over the limit (its line number in its file) ends the read of the files, after
    /// every line before it was recorded: the job's error, or (`Ok`) a finding the job keeps.
    fn too_long(&mut self, kind: RowKind, too_long: LineTooLong) -> Result<(), Self::Error>;
    /// The error of a byte range whose file could not be read (why, as the reader says).
    fn read_failed(&mut self, kind: RowKind, cause: String) -> Self::Error;
    /// The job has stopped the read early (`--limit` reached, the pivot validator's
    /// `--fail-fast`): nothing after what it has recorded counts.
    fn is_stopped(&self) -> bool {
        false
    }
}

/// The one-thread driver: each file's chunks, in order, cut into batches that are parsed and
/// recorded at once. Files are fed one after the other (`push` with a new kind ends the one
/// before); `finish` ends the last.
pub struct OneThread<J: Job, P> {
    job: J,
    parse: P,
    max_line: u64,
    splitter: LineSplitter,
    pending: Option<LineBatch>,
    /// The file being cut, and whether a line over the limit ended the read.
    kind: Option<RowKind>,
    over: bool,
}

impl<J: Job, P: FnMut(&LineBatch) -> J::Part> OneThread<J, P> {
    /// Runs `job`, each batch parsed by `parse`, lines over `max_line` bytes refused.
    pub fn new(job: J, max_line: u64, parse: P) -> Self {
        OneThread {
            job,
            parse,
            max_line,
            splitter: LineSplitter::with_max_line_bytes(max_line),
            pending: None,
            kind: None,
            over: false,
        }
    }

    /// Feeds the next chunk of the file of `kind`.
    pub fn push(&mut self, kind: RowKind, chunk: &[u8]) -> Result<(), J::Error> {
        if self.kind != Some(kind) {
            self.end_file()?;
            self.kind = Some(kind);
        }
        if self.is_done() {
            return Ok(());
        }
        let mut cut = Vec::new();
        let over = batch::cut(
            &mut self.splitter,
            &mut self.pending,
            kind,
            chunk,
            &mut |b| cut.push(b),
        );
        self.record_all(cut)?;
        if let Err(t) = over {
            self.over = true;
            if !self.job.is_stopped() {
                self.job.too_long(kind, t)?;
            }
        }
        Ok(())
    }

    /// Refuses lines longer than `max` bytes instead (before the first chunk).
    #[must_use]
    pub fn with_max_line_bytes(mut self, max: u64) -> Self {
        self.max_line = max;
        self.splitter = LineSplitter::with_max_line_bytes(max);
        self
    }

    /// Ends the last file (its last line, even without a newline) and gives the job back.
    pub fn finish(mut self) -> Result<J, J::Error> {
        self.end_file()?;
        Ok(self.job)
    }

    /// Ends the last file, keeping the job ([`Self::into_job`]) whatever the result.
    pub fn end(&mut self) -> Result<(), J::Error> {
        self.end_file()
    }

    /// The job, as recorded so far.
    pub fn into_job(self) -> J {
        self.job
    }

    pub fn job(&self) -> &J {
        &self.job
    }

    pub fn job_mut(&mut self) -> &mut J {
        &mut self.job
    }

    /// Whether nothing more can be recorded.
    pub fn is_done(&self) -> bool {
        self.over || self.job.is_stopped()
    }

    /// Lines cut so far from the file being read (a progress figure).
    pub fn lines_read(&self) -> u64 {
        self.splitter.lines()
    }

    fn end_file(&mut self) -> Result<(), J::Error> {
        let Some(kind) = self.kind.take() else {
            return Ok(());
        };
        let mut splitter = std::mem::replace(
            &mut self.splitter,
            LineSplitter::with_max_line_bytes(self.max_line),
        );
        if self.is_done() {
            return Ok(());
        }
        let mut cut = Vec::new();
        batch::flush_last(&mut splitter, &mut self.pending, kind, &mut |b| cut.push(b));
        self.record_all(cut)
    }

    fn record_all(&mut self, batches: Vec<LineBatch>) -> Result<(), J::Error> {
        for b in batches {
            if self.job.is_stopped() {
                break;
            }
            let part = (self.parse)(&b);
            self.job.record(part, 0)?;
        }
        Ok(())
    }
}

/// A job for the drivers' tests (here and `native::in_order`, through the `testing` feature).
#[cfg(any(test, feature = "testing"))]
pub mod testing {
    use super::{Job, LineBatch, LineTooLong, RowKind};

    /// A line as recorded: its file, number and text up to the first space.
    pub type Line = (RowKind, u64, String);

    /// Records each line; a line starting with `!` is an error; stops itself (inside a batch, as
    /// a real job does) once it holds `stop_after` lines.
    #[derive(Default)]
    pub struct Lines {
        pub seen: Vec<Line>,
        pub stop_after: Option<usize>,
    }

    impl Lines {
        /// What it recorded, one `Kind<line>:<text>` each.
        pub fn texts(&self) -> Vec<String> {
            let text = |(kind, line, text): &Line| format!("{kind:?}{line}:{text}");
            self.seen.iter().map(text).collect()
        }
    }

    /// Its parse of a batch.
    pub fn parse(batch: &LineBatch) -> Vec<Line> {
        let text = |line: &[u8]| {
            let text = String::from_utf8_lossy(line);
            text.split(' ').next().unwrap_or_default().to_string()
        };
        let lines = batch.lines();
        lines
            .map(|(span, line)| (batch.kind(), span.line, text(line)))
            .collect()
    }

    impl Job for Lines {
        type Part = Vec<Line>;
        type Error = String;
        fn record(&mut self, part: Vec<Line>, before: u64) -> Result<(), String> {
            for (kind, line, text) in part {
                if self.is_stopped() {
                    break;
                }
                if text.starts_with('!') {
                    return Err(format!("bad line {}", line + before));
                }
                self.seen.push((kind, line + before, text));
            }
            Ok(())
        }
        fn too_long(&mut self, _: RowKind, t: LineTooLong) -> Result<(), String> {
            Err(format!("line {} too long", t.line))
        }
        fn read_failed(&mut self, _: RowKind, cause: String) -> String {
            cause
        }
        fn is_stopped(&self) -> bool {
            self.stop_after.is_some_and(|n| self.seen.len() >= n)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::testing::{parse, Lines};
    use super::*;

    fn run(job: Lines, files: &[(RowKind, &[u8])], max: u64) -> Result<Lines, String> {
        let mut read = OneThread::new(job, max, parse);
        for (kind, data) in files {
            for chunk in data.chunks(3) {
                read.push(*kind, chunk)?;
            }
        }
        read.finish()
    }

    #[test]
    fn files_are_numbered_on_their_own_and_a_last_line_without_newline_counts() {
        let files: [(RowKind, &[u8]); 2] = [
            (RowKind::Input, b"ab\ncd"),
            (RowKind::Rollout, b"ef\r\ngh\n"),
        ];
        let done = run(Lines::default(), &files, 100).unwrap();
        assert_eq!(
            done.texts(),
            ["Input1:ab", "Input2:cd", "Rollout1:ef", "Rollout2:gh"]
        );
    }

    #[test]
    fn a_line_over_the_limit_comes_after_an_error_before_it() {
        let files: [(RowKind, &[u8]); 1] = [(RowKind::Rollout, b"a\n!b\nlong line\n")];
        let failed = run(Lines::default(), &files, 5).err();
        assert_eq!(failed, Some("bad line 2".into()));
        let files: [(RowKind, &[u8]); 1] = [(RowKind::Rollout, b"a\nb\nlong line\nc\n")];
        let failed = run(Lines::default(), &files, 5).err();
        assert_eq!(failed, Some("line 3 too long".into()));
    }

    #[test]
    fn a_stopped_job_records_nothing_more() {
        let job = Lines {
            stop_after: Some(2),
            ..Lines::default()
        };
        let files: [(RowKind, &[u8]); 2] = [
            (RowKind::Input, b"a\nb\nc\n"),
            (RowKind::Rollout, b"!\nlong line\n"),
        ];
        let done = run(job, &files, 5).unwrap();
        assert_eq!(done.texts(), ["Input1:a", "Input2:b"]);
    }
}
