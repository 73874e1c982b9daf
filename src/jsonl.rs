//! Splits a byte stream fed in chunks of any size into JSONL lines, with their 1-based line
//! numbers and byte spans, copying only the lines that straddle two chunks.

/// Where a line sits in its file: enough to read it again later without keeping it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LineSpan {
    /// 1-based line number, as editors and upstream's messages count.
    pub line: u64,
    /// Byte offset of the line's first byte.
    pub offset: u64,
    /// Length in bytes, without the line terminator.
    pub len: u32,
}

/// Incremental line splitter. Feed chunks with [`LineSplitter::push`], then call
/// [`LineSplitter::finish`] for a last line without a terminating newline.
#[derive(Default)]
pub struct LineSplitter {
    carry: Vec<u8>,
    carry_offset: u64,
    next_offset: u64,
    line_no: u64,
}

impl LineSplitter {
    pub fn new() -> Self {
        Self::default()
    }

    /// Calls `on_line(span, bytes)` for every line completed by `chunk`. `bytes` excludes the
    /// `\n` and a `\r` before it (upstream reads in universal-newline mode). Stops at the first error.
    pub fn push<E>(
        &mut self,
        chunk: &[u8],
        mut on_line: impl FnMut(LineSpan, &[u8]) -> Result<(), E>,
    ) -> Result<(), E> {
        let chunk_offset = self.next_offset;
        self.next_offset += chunk.len() as u64;
        let mut start = 0usize;
        for nl in memchr::memchr_iter(b'\n', chunk) {
            if self.carry.is_empty() {
                self.emit(chunk_offset + start as u64, &chunk[start..nl], &mut on_line)?;
            } else {
                let mut line = std::mem::take(&mut self.carry);
                line.extend_from_slice(&chunk[start..nl]);
                let offset = self.carry_offset;
                let result = self.emit(offset, &line, &mut on_line);
                line.clear();
                self.carry = line; // keep the allocation
                result?;
            }
            start = nl + 1;
        }
        if start < chunk.len() {
            if self.carry.is_empty() {
                self.carry_offset = chunk_offset + start as u64;
            }
            self.carry.extend_from_slice(&chunk[start..]);
        }
        Ok(())
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
    fn trailing_newline_gives_no_extra_line() {
        assert_eq!(split(b"x\ny\n", 3).len(), 2);
        assert!(split(b"", 3).is_empty());
    }
}
