//! The one streaming read loop: a reader's bytes in chunks of the caller's buffer, each handed to
//! a consumer that may stop early. The CLI reads files through it and the web worker reads
//! `File`s through it (`FileReaderSync` behind a `Read`), so both feed the core the same way.

use std::io::{self, Read};

/// Whether to go on reading after a chunk.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flow {
    Continue,
    Stop,
}

/// Feeds `reader` to `each` in chunks of at most `buf.len()` bytes until the end or a
/// [`Flow::Stop`]; returns the bytes read. Read errors become `E` through `read_error`.
pub fn for_each_chunk<R: Read, E>(
    reader: &mut R,
    buf: &mut [u8],
    mut each: impl FnMut(&[u8]) -> Result<Flow, E>,
    read_error: impl Fn(io::Error) -> E,
) -> Result<u64, E> {
    let mut total = 0u64;
    loop {
        let n = match reader.read(buf) {
            Ok(0) => return Ok(total),
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(read_error(e)),
        };
        total += n as u64;
        if each(&buf[..n])? == Flow::Stop {
            return Ok(total);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_cover_the_input_and_stop_early() {
        let data: Vec<u8> = (0..=255).collect();
        let mut buf = [0u8; 100];
        let mut seen = Vec::new();
        let n = for_each_chunk(
            &mut &data[..],
            &mut buf,
            |c| {
                seen.extend_from_slice(c);
                Ok::<_, String>(Flow::Continue)
            },
            |e| e.to_string(),
        )
        .unwrap();
        assert_eq!((n, seen), (256, data.clone()));
        let mut calls = 0;
        let n = for_each_chunk(
            &mut &data[..],
            &mut buf,
            |_| {
                calls += 1;
                Ok::<_, String>(Flow::Stop)
            },
            |e| e.to_string(),
        )
        .unwrap();
        assert_eq!((n, calls), (100, 1));
    }

    #[test]
    fn read_errors_are_mapped() {
        struct Broken;
        impl Read for Broken {
            fn read(&mut self, _: &mut [u8]) -> io::Result<usize> {
                Err(io::Error::other("disk on fire"))
            }
        }
        let err = for_each_chunk(
            &mut Broken,
            &mut [0u8; 4],
            |_| Ok(Flow::Continue),
            |e| format!("reading 'x': {e}"),
        );
        assert_eq!(err, Err("reading 'x': disk on fire".to_string()));
    }
}
