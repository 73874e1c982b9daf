//! The one native driver that streams a file: chunks (for the core's chunk-fed parsers) or lines
//! (for collection), with the line limit and the file's name in every error.

use crate::read::jsonl::{LineSpan, LineSplitter, SplitError};
use std::io::{self, Read};
use std::path::Path;

/// Chunk size for reading: large enough for full disk speed, small enough to stay in cache.
pub const CHUNK: usize = 4 << 20;

/// Reading failed: the file named, and the line where it is the line's fault.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    // Not `source`: the cause is part of this message and must not be printed twice.
    #[error("Could not read '{file}': {cause}")]
    Io { file: String, cause: io::Error },
    #[error(
        "'{file}' line {line} is longer than {limit} bytes (the limit; raise it with --max-line-bytes)"
    )]
    TooLong { file: String, line: u64, limit: u64 },
}

impl From<ReadError> for crate::error::ProfileError {
    fn from(e: ReadError) -> Self {
        use crate::error::ProfileError;
        match e {
            ReadError::Io { file, cause } => ProfileError::Io { file, cause },
            ReadError::TooLong { file, line, limit } => {
                ProfileError::LineTooLong { file, line, limit }
            }
        }
    }
}

fn io_error(name: &str, cause: io::Error) -> ReadError {
    ReadError::Io {
        file: name.to_string(),
        cause,
    }
}

/// Calls `push` with each chunk of the file, in order, until the end or until `push` returns
/// `Ok(false)`. `name` is how messages name the file.
pub fn for_each_chunk<E: From<ReadError>>(
    path: &Path,
    name: &str,
    mut push: impl FnMut(&[u8]) -> Result<bool, E>,
) -> Result<(), E> {
    let mut file = super::inputs::open_input(path).map_err(|e| io_error(name, e))?;
    let mut buf = vec![0u8; CHUNK];
    loop {
        let n = match file.read(&mut buf) {
            Ok(0) => return Ok(()),
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(io_error(name, e).into()),
        };
        if !push(&buf[..n])? {
            return Ok(());
        }
    }
}

/// Calls `on_line(span, bytes, had_newline)` for each line of the file, in order; stops early
/// when it returns `Ok(false)`. Lines longer than `max_line` bytes stop the read with an error
/// naming the file and line.
pub fn for_each_line<E: From<ReadError>>(
    path: &Path,
    name: &str,
    max_line: u64,
    mut on_line: impl FnMut(LineSpan, &[u8], bool) -> Result<bool, E>,
) -> Result<(), E> {
    let mut splitter = LineSplitter::with_max_line_bytes(max_line);
    let mut go_on = true;
    let too_long = |t: crate::read::jsonl::LineTooLong| ReadError::TooLong {
        file: name.to_string(),
        line: t.line,
        limit: t.limit,
    };
    for_each_chunk::<E>(path, name, |chunk| {
        // `None` is the early stop, not a failure.
        let r = splitter.push::<Option<E>>(chunk, |span, line| {
            if !go_on {
                return Err(None);
            }
            go_on = on_line(span, line, true).map_err(Some)?;
            Ok(())
        });
        match r {
            Ok(()) => Ok(go_on),
            Err(SplitError::Line(None)) => Ok(false),
            Err(SplitError::Line(Some(e))) => Err(e),
            Err(SplitError::TooLong(t)) => Err(too_long(t).into()),
        }
    })?;
    if go_on {
        splitter.finish(|span, line| on_line(span, line, false).map(|_| ()))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_stop_early_and_at_the_limit_naming_file_and_line() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("x.jsonl");
        std::fs::write(&p, b"a\nb\nc").unwrap();
        let mut lines = Vec::new();
        for_each_line::<ReadError>(&p, "x.jsonl", 100, |span, l, nl| {
            lines.push((span.line, l.to_vec(), nl));
            Ok(span.line < 2)
        })
        .unwrap();
        assert_eq!(lines, [(1, b"a".to_vec(), true), (2, b"b".to_vec(), true)]);
        let mut all = Vec::new();
        for_each_line::<ReadError>(&p, "x.jsonl", 100, |span, _, nl| {
            all.push((span.line, nl));
            Ok(true)
        })
        .unwrap();
        assert_eq!(all, [(1, true), (2, true), (3, false)]);

        std::fs::write(&p, b"ab\nabcdef\n").unwrap();
        let e = for_each_line::<ReadError>(&p, "x.jsonl", 4, |_, _, _| Ok(true)).unwrap_err();
        assert_eq!(
            e.to_string(),
            "'x.jsonl' line 2 is longer than 4 bytes (the limit; raise it with --max-line-bytes)"
        );
        let e = for_each_chunk::<ReadError>(dir.path(), "the dir", |_| Ok(true)).unwrap_err();
        let text = e.to_string();
        assert!(text.starts_with("Could not read 'the dir': "), "{text}");
        assert_eq!(text.matches("directory").count(), 1, "cause once: {text}");
    }
}
