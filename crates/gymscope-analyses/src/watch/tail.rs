//! One growing file followed by its appended bytes: where reading stopped, the torn line held
//! until its end arrives, and whether the file is still the one read so far.
//!
//! A writer appends whole lines, but a read can land mid-line; that part waits. A file that got
//! shorter, or whose first bytes changed (a resume rewrites its files atomically, docs/collect.md
//! "Resume"), is read again from the start.

use crate::read::jsonl::{LineSpan, LineSplitter, SplitError, DEFAULT_MAX_LINE_BYTES};

/// How many of a file's first bytes identify it: a replaced file almost always differs there
/// (its first row's key or text), and the caller's identity (an inode) covers the rest.
pub const HEAD_BYTES: usize = 256;

/// Why a file is read again from its start.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Restart {
    /// It is shorter than what was read.
    Truncated,
    /// Its identity or first bytes changed: another file now has the name.
    Replaced,
}

impl Restart {
    pub fn describe(self) -> &'static str {
        match self {
            Restart::Truncated => "was truncated",
            Restart::Replaced => "was replaced",
        }
    }
}

/// Where a followed file stands.
pub struct Tail {
    splitter: LineSplitter,
    max_line: u64,
    /// Bytes read so far (the next read starts here).
    offset: u64,
    /// The file's first bytes as read (up to [`HEAD_BYTES`]).
    head: Vec<u8>,
    /// The caller's identity of the file (device and inode natively), when it has one.
    identity: Option<u64>,
    /// A line passed the limit: the rest of the file cannot be split into rows.
    stopped: bool,
}

impl Default for Tail {
    fn default() -> Self {
        Tail::new(DEFAULT_MAX_LINE_BYTES)
    }
}

impl Tail {
    pub fn new(max_line: u64) -> Tail {
        Tail {
            splitter: LineSplitter::with_max_line_bytes(max_line),
            max_line,
            offset: 0,
            head: Vec::new(),
            identity: None,
            stopped: false,
        }
    }

    /// The offset the next read starts at.
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// A line has begun and not ended yet.
    pub fn is_mid_line(&self) -> bool {
        !self.stopped && self.splitter.is_mid_line()
    }

    /// Checks the file as it is now (`len` bytes, `head` its first bytes, `identity` the
    /// caller's id of it) against what was read. When it is another file, forgets everything and
    /// says why: the caller then resets what it derived from the lines and reads from 0.
    pub fn check(&mut self, len: u64, identity: Option<u64>, head: &[u8]) -> Option<Restart> {
        let known = self.head.len().min(head.len());
        let why = if len < self.offset {
            Some(Restart::Truncated)
        } else if (identity.is_some() && self.identity.is_some() && identity != self.identity)
            || self.head[..known] != head[..known]
        {
            Some(Restart::Replaced)
        } else {
            None
        };
        if why.is_some() {
            *self = Tail::new(self.max_line);
        }
        if self.offset == 0 {
            self.identity = identity;
        }
        why
    }

    /// Feeds the bytes appended at [`Tail::offset`]: `on_line` gets each completed line.
    pub fn feed<E>(
        &mut self,
        bytes: &[u8],
        on_line: impl FnMut(LineSpan, &[u8]) -> Result<(), E>,
    ) -> Result<(), SplitError<E>> {
        if self.head.len() < HEAD_BYTES {
            let take = (HEAD_BYTES - self.head.len()).min(bytes.len());
            self.head.extend_from_slice(&bytes[..take]);
        }
        self.offset += bytes.len() as u64;
        if self.stopped {
            return Ok(());
        }
        let result = self.splitter.push(bytes, on_line);
        if let Err(SplitError::TooLong(_)) = &result {
            self.stopped = true;
        }
        result
    }

    /// The run is declared complete: a torn last line is now a line of its own (and an error if
    /// it does not parse, as in every other reader).
    pub fn finish<E>(
        &mut self,
        on_line: impl FnMut(LineSpan, &[u8]) -> Result<(), E>,
    ) -> Result<(), E> {
        if self.stopped {
            return Ok(());
        }
        self.splitter.finish(on_line)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(tail: &mut Tail, bytes: &[u8]) -> Vec<String> {
        let mut out = Vec::new();
        tail.feed(bytes, |_, l| {
            out.push(String::from_utf8_lossy(l).into_owned());
            Ok::<_, ()>(())
        })
        .unwrap();
        out
    }

    #[test]
    fn a_torn_line_waits_for_its_end() {
        let mut t = Tail::default();
        assert_eq!(lines(&mut t, b"{\"a\":1}\n{\"b\""), ["{\"a\":1}"]);
        assert!(t.is_mid_line());
        assert_eq!(lines(&mut t, b":2}\n"), ["{\"b\":2}"]);
        assert_eq!(t.offset(), 16);
    }

    #[test]
    fn a_shorter_or_different_file_is_read_again() {
        let mut t = Tail::default();
        assert_eq!(t.check(8, Some(1), b"{\"a\":1}\n"), None);
        lines(&mut t, b"{\"a\":1}\n");
        assert_eq!(t.check(16, Some(1), b"{\"a\":1}\n{\"b\":2}\n"), None);
        assert_eq!(t.check(4, Some(1), b"{\"a\""), Some(Restart::Truncated));
        assert_eq!(t.offset(), 0);
        lines(&mut t, b"{\"a\":1}\n");
        assert_eq!(t.check(8, Some(1), b"{\"z\":1}\n"), Some(Restart::Replaced));
        lines(&mut t, b"{\"z\":1}\n");
        assert_eq!(t.check(8, Some(2), b"{\"z\":1}\n"), Some(Restart::Replaced));
    }
}
