//! Splits a byte stream fed in chunks of any size into JSONL lines, with their 1-based line
//! numbers and byte spans, copying only the lines that straddle two chunks.

/// Where a line sits in its file: enough to read it again later without keeping it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct LineSpan {
    /// 1-based line number, as editors and upstream's messages count.
    pub line: u64,
    /// Byte offset of the line's first byte.
    pub offset: u64,
    /// Length in bytes, without the line terminator.
    pub len: u32,
}

/// The default longest line: 1 GiB. A line that never ends (`/dev/zero`, a sparse file of NULs)
/// must fail with its line number, not grow memory until the allocator aborts.
pub const DEFAULT_MAX_LINE_BYTES: u64 = 1 << 30;

/// A line longer than the splitter's limit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct LineTooLong {
    /// 1-based number of the line that is too long.
    pub line: u64,
    /// The limit it passed, in bytes.
    pub limit: u64,
}

impl LineTooLong {
    /// `'FILE' line N is longer than L bytes (the limit)`: the message of the commands that name
    /// the file themselves.
    pub fn in_file(&self, file: &str) -> String {
        format!(
            "'{file}' line {} is longer than {} bytes (the limit)",
            self.line, self.limit
        )
    }
}

impl std::fmt::Display for LineTooLong {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        write!(
            f,
            "line {} is longer than {} bytes (the limit; raise it with --max-line-bytes)",
            self.line, self.limit
        )
    }
}

/// Why [`LineSplitter::push`] stopped: the line callback's error, or a line over the limit.
#[derive(Debug, PartialEq)]
pub enum SplitError<E> {
    Line(E),
    TooLong(LineTooLong),
}

impl<E> SplitError<E> {
    /// One error type for both: `too_long` turns the limit error into the caller's.
    pub fn into_error(self, too_long: impl FnOnce(LineTooLong) -> E) -> E {
        match self {
            SplitError::Line(e) => e,
            SplitError::TooLong(t) => too_long(t),
        }
    }
}

/// A held line longer than this reserves the whole limit at once (64-bit targets; see `hold`).
pub const DIRECT_RESERVE: usize = 16 << 20;

/// Incremental line splitter. Feed chunks with [`LineSplitter::push`], then call
/// [`LineSplitter::finish`] for a last line without a terminating newline.
pub struct LineSplitter {
    carry: Vec<u8>,
    carry_offset: u64,
    next_offset: u64,
    line_no: u64,
    max_line: u64,
}

impl Default for LineSplitter {
    fn default() -> Self {
        Self::with_max_line_bytes(DEFAULT_MAX_LINE_BYTES)
    }
}

impl LineSplitter {
    pub fn new() -> Self {
        Self::default()
    }

    /// A splitter that refuses lines longer than `max` bytes (without the terminator).
    pub fn with_max_line_bytes(max: u64) -> Self {
        LineSplitter {
            carry: Vec::new(),
            carry_offset: 0,
            next_offset: 0,
            line_no: 0,
            max_line: max.max(1),
        }
    }

    /// A splitter whose first byte is at `offset` of the file, at a line's start: spans carry
    /// file offsets, line numbers count from there (a range of a file read on its own).
    pub fn starting_at(offset: u64, max: u64) -> Self {
        LineSplitter {
            next_offset: offset,
            carry_offset: offset,
            ..Self::with_max_line_bytes(max)
        }
    }

    /// A line has begun and not yet ended.
    pub fn is_mid_line(&self) -> bool {
        !self.carry.is_empty()
    }

    fn check_len(&self, len: usize) -> Result<(), LineTooLong> {
        // A `\r` before the `\n` is not part of the line; allow for it.
        if len as u64 > self.max_line.saturating_add(1) {
            return Err(LineTooLong {
                line: self.line_no + 1,
                limit: self.max_line,
            });
        }
        Ok(())
    }

    /// Calls `on_line(span, bytes)` for every line completed by `chunk`. `bytes` excludes the
    /// `\n` and a `\r` before it (upstream reads in universal-newline mode). Stops at the first
    /// error, or at a line longer than the limit (before holding more than the limit in memory).
    pub fn push<E>(
        &mut self,
        chunk: &[u8],
        mut on_line: impl FnMut(LineSpan, &[u8]) -> Result<(), E>,
    ) -> Result<(), SplitError<E>> {
        let chunk_offset = self.next_offset;
        self.next_offset += chunk.len() as u64;
        let mut start = 0usize;
        for nl in memchr::memchr_iter(b'\n', chunk) {
            self.check_len(self.carry.len() + (nl - start))
                .map_err(SplitError::TooLong)?;
            if self.carry.is_empty() {
                self.emit(chunk_offset + start as u64, &chunk[start..nl], &mut on_line)
                    .map_err(SplitError::Line)?;
            } else {
                let mut line = std::mem::take(&mut self.carry);
                // Exactly: the line is whole now, and within the limit.
                line.reserve_exact(nl - start);
                line.extend_from_slice(&chunk[start..nl]);
                let offset = self.carry_offset;
                let result = self.emit(offset, &line, &mut on_line);
                line.clear();
                self.carry = line; // keep the allocation
                result.map_err(SplitError::Line)?;
            }
            start = nl + 1;
        }
        if start < chunk.len() {
            self.check_len(self.carry.len() + (chunk.len() - start))
                .map_err(SplitError::TooLong)?;
            if self.carry.is_empty() {
                self.carry_offset = chunk_offset + start as u64;
            }
            self.hold(&chunk[start..]);
        }
        Ok(())
    }

    /// Appends to the held line, growing its buffer by doubling but never past the limit (a
    /// `Vec`'s own doubling held up to twice `--max-line-bytes` of a line with no end). On 64-bit
    /// targets a line past [`DIRECT_RESERVE`] reserves the limit at once: address space only,
    /// its pages resident as the line fills them, and no earlier buffer left behind (the native
    /// allocator keeps freed pages), so an endless line costs about the limit, not twice it.
    /// In wasm32 memory grows for real when reserved, so there the buffer keeps doubling.
    fn hold(&mut self, bytes: &[u8]) {
        let needed = self.carry.len() + bytes.len();
        if needed > self.carry.capacity() {
            let cap_limit = usize::try_from(self.max_line.saturating_add(2)).unwrap_or(usize::MAX);
            let grown = if cfg!(target_pointer_width = "64") && needed > DIRECT_RESERVE {
                cap_limit.max(needed)
            } else {
                (self.carry.capacity() * 2)
                    .max(needed)
                    .min(cap_limit.max(needed))
            };
            self.carry.reserve_exact(grown - self.carry.len());
        }
        self.carry.extend_from_slice(bytes);
    }

    /// Emits a final line that has no trailing newline, if any.
    pub fn finish<E>(
        &mut self,
        mut on_line: impl FnMut(LineSpan, &[u8]) -> Result<(), E>,
    ) -> Result<(), E> {
        if self.carry.is_empty() {
            return Ok(());
        }
        let line = std::mem::take(&mut self.carry);
        let offset = self.carry_offset;
        self.emit(offset, &line, &mut on_line)
    }

    /// Number of lines emitted so far.
    pub fn lines(&self) -> u64 {
        self.line_no
    }

    fn emit<E>(
        &mut self,
        offset: u64,
        mut bytes: &[u8],
        on_line: &mut impl FnMut(LineSpan, &[u8]) -> Result<(), E>,
    ) -> Result<(), E> {
        self.line_no += 1;
        if let [rest @ .., b'\r'] = bytes {
            bytes = rest;
        }
        // Lines longer than 4 GiB are reported by the parser long before this matters; saturate.
        let len = u32::try_from(bytes.len()).unwrap_or(u32::MAX);
        on_line(
            LineSpan {
                line: self.line_no,
                offset,
                len,
            },
            bytes,
        )
    }
}

/// [`LineSplitter::push`] on a splitter that `owner` holds, for a line callback that needs
/// `owner` itself: the splitter (which `held` finds in `owner`) is lent out for the call and
/// put back after it, whatever the result.
pub fn push_held<T, E>(
    owner: &mut T,
    held: fn(&mut T) -> &mut LineSplitter,
    chunk: &[u8],
    mut on_line: impl FnMut(&mut T, LineSpan, &[u8]) -> Result<(), E>,
) -> Result<(), SplitError<E>> {
    let mut splitter = std::mem::take(held(owner));
    let result = splitter.push(chunk, |span, bytes| on_line(owner, span, bytes));
    *held(owner) = splitter;
    result
}

/// [`LineSplitter::finish`] on a splitter that `owner` holds, as [`push_held`]; the file is over,
/// so `owner` is left a fresh splitter (line numbers from 1 again, for a next pass).
pub fn finish_held<T, E>(
    owner: &mut T,
    held: fn(&mut T) -> &mut LineSplitter,
    mut on_line: impl FnMut(&mut T, LineSpan, &[u8]) -> Result<(), E>,
) -> Result<(), E> {
    let mut splitter = std::mem::take(held(owner));
    splitter.finish(|span, bytes| on_line(owner, span, bytes))
}

/// [`push_held`] for a line callback that cannot fail: only a line over the limit stops it.
pub fn push_held_lines<T>(
    owner: &mut T,
    held: fn(&mut T) -> &mut LineSplitter,
    chunk: &[u8],
    mut on_line: impl FnMut(&mut T, LineSpan, &[u8]),
) -> Result<(), LineTooLong> {
    push_held(owner, held, chunk, |o, span, bytes| {
        on_line(o, span, bytes);
        Ok::<_, std::convert::Infallible>(())
    })
    .map_err(|e| match e {
        SplitError::Line(never) => match never {},
        SplitError::TooLong(t) => t,
    })
}

/// [`finish_held`] for a line callback that cannot fail.
pub fn finish_held_lines<T>(
    owner: &mut T,
    held: fn(&mut T) -> &mut LineSplitter,
    mut on_line: impl FnMut(&mut T, LineSpan, &[u8]),
) {
    let Ok(()) = finish_held(owner, held, |o, span, bytes| {
        on_line(o, span, bytes);
        Ok::<_, std::convert::Infallible>(())
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(data: &[u8], chunk: usize) -> Vec<(LineSpan, Vec<u8>)> {
        let mut out = Vec::new();
        let mut s = LineSplitter::new();
        for c in data.chunks(chunk.max(1)) {
            s.push::<()>(c, |span, l| {
                out.push((span, l.to_vec()));
                Ok(())
            })
            .unwrap();
        }
        s.finish::<()>(|span, l| {
            out.push((span, l.to_vec()));
            Ok(())
        })
        .unwrap();
        out
    }

    #[test]
    fn same_lines_and_spans_for_every_chunk_size() {
        let data = b"{\"a\":1}\r\n\n{\"b\":22}\nlast";
        let want = split(data, data.len());
        assert_eq!(want.len(), 4);
        assert_eq!(want[0].1, b"{\"a\":1}");
        assert_eq!(want[1].1, b"");
        assert_eq!(
            want[2].0,
            LineSpan {
                line: 3,
                offset: 10,
                len: 8
            }
        );
        assert_eq!(
            want[3].0,
            LineSpan {
                line: 4,
                offset: 19,
                len: 4
            }
        );
        for chunk in 1..data.len() {
            assert_eq!(split(data, chunk), want, "chunk size {chunk}");
        }
        for (span, bytes) in &want {
            let at = span.offset as usize;
            assert_eq!(&data[at..at + span.len as usize], &bytes[..]);
        }
    }

    #[test]
    fn a_line_over_the_limit_stops_at_any_chunk_size_without_holding_it() {
        let data = b"12345\nabcdefghij\nxy\n";
        for chunk in 1..data.len() {
            let mut s = LineSplitter::with_max_line_bytes(6);
            let mut lines = 0;
            let mut err = None;
            for c in data.chunks(chunk) {
                if let Err(e) = s.push::<()>(c, |_, _| {
                    lines += 1;
                    Ok(())
                }) {
                    err = Some(e);
                    break;
                }
                assert!(s.carry.len() <= 7, "chunk {chunk}: carry stays bounded");
            }
            assert_eq!(lines, 1, "chunk {chunk}");
            assert_eq!(
                err,
                Some(SplitError::TooLong(LineTooLong { line: 2, limit: 6 })),
                "chunk {chunk}"
            );
        }
        // Exactly at the limit, with or without a CR, is accepted.
        assert_eq!(split(b"123456\r\n123456", 2).len(), 2);
        let mut s = LineSplitter::with_max_line_bytes(6);
        assert!(s.push::<()>(b"123456\r\n123456\n", |_, _| Ok(())).is_ok());
    }

    #[test]
    fn a_held_splitter_is_lent_to_its_owner_and_keeps_its_carry() {
        struct Owner {
            splitter: LineSplitter,
            lines: Vec<(u64, Vec<u8>)>,
        }
        let mut o = Owner {
            splitter: LineSplitter::new(),
            lines: Vec::new(),
        };
        let record = |o: &mut Owner, span: LineSpan, l: &[u8]| {
            o.lines.push((span.line, l.to_vec()));
            Ok::<_, ()>(())
        };
        for chunk in [&b"a\nb"[..], b"c\nd"] {
            push_held(&mut o, |o| &mut o.splitter, chunk, record).unwrap();
        }
        finish_held(&mut o, |o| &mut o.splitter, record).unwrap();
        let want: Vec<(u64, Vec<u8>)> =
            vec![(1, b"a".to_vec()), (2, b"bc".to_vec()), (3, b"d".to_vec())];
        assert_eq!(o.lines, want);
    }

    #[test]
    fn trailing_newline_gives_no_extra_line() {
        assert_eq!(split(b"x\ny\n", 3).len(), 2);
        assert!(split(b"", 3).is_empty());
    }

    /// A line with no end is held in at most about the limit: the buffer's doubling was capped
    /// at nothing, so a 1 GiB limit held up to 2 GiB before the error.
    #[test]
    fn a_line_without_end_is_held_in_no_more_than_the_limit() {
        let limit = 1_000_000u64;
        let mut s = LineSplitter::with_max_line_bytes(limit);
        let chunk = vec![b'x'; 65_536];
        let mut refused = false;
        for _ in 0..40 {
            match s.push(&chunk, |_, _| Ok::<(), ()>(())) {
                Ok(()) => assert!(
                    s.carry.capacity() as u64 <= limit + 2,
                    "{}",
                    s.carry.capacity()
                ),
                Err(SplitError::TooLong(t)) => {
                    assert_eq!((t.line, t.limit), (1, limit));
                    refused = true;
                    break;
                }
                Err(SplitError::Line(())) => unreachable!(),
            }
        }
        assert!(refused, "the line over the limit is refused");
        // A long line that ends within the limit is still read whole.
        let mut s = LineSplitter::with_max_line_bytes(limit);
        let mut got = 0;
        for piece in [&chunk[..], &chunk[..], b"x\n"] {
            s.push(piece, |_, line| {
                got = line.len();
                Ok::<(), ()>(())
            })
            .unwrap();
        }
        assert_eq!(got, 2 * 65_536 + 1);
    }
}
