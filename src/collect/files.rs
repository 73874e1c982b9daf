//! File handling for collection: streaming JSONL lines, setting aside a torn last line, and
//! atomic whole-file writes.

use super::key::parse_row;
use super::CollectError;
use crate::jsonl::{LineSpan, LineSplitter};
use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

const CHUNK: usize = 1 << 20;

/// Calls `on_line(span, bytes, had_newline)` for each line of the file, in order; stops
/// early when `on_line` returns `Ok(false)`.
pub fn for_each_line(
    path: &Path,
    mut on_line: impl FnMut(LineSpan, &[u8], bool) -> Result<bool, CollectError>,
) -> Result<(), CollectError> {
    let mut file = File::open(path).map_err(|e| io_err(path, e))?;
    let mut splitter = LineSplitter::new();
    let mut buf = vec![0u8; CHUNK];
    let mut go_on = true;
    loop {
        let n = match file.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(io_err(path, e)),
        };
        // `Err(None)` is the early stop, not a failure.
        let r = splitter.push(&buf[..n], |span, line| {
            if !go_on {
                return Err(None);
            }
            go_on = on_line(span, line, true).map_err(Some)?;
            Ok(())
        });
        match r {
            Ok(()) => {}
            Err(None) => return Ok(()),
            Err(Some(e)) => return Err(e),
        }
        if !go_on {
            return Ok(());
        }
    }
    splitter.finish(|span, line| on_line(span, line, false).map(|_| ()))
}

pub fn io_err(path: &Path, e: std::io::Error) -> CollectError {
    CollectError::Config(format!("'{}': {e}", path.display()))
}

/// A torn last line that was moved out of an output file.
pub struct SetAside {
    pub to: PathBuf,
    pub bytes: u64,
}

/// If the file's last line was torn by a crash (no final newline, or not a JSON object), moves
/// it to `<file>.torn` (appended, so nothing is ever lost) and truncates the file to its last
/// complete line, so that rollout simply runs again.
pub fn set_aside_torn_tail(path: &Path) -> Result<Option<SetAside>, CollectError> {
    let err = |e| io_err(path, e);
    let mut file = OpenOptions::new()
        .read(true)
        .write(true)
        .open(path)
        .map_err(err)?;
    let len = file.metadata().map_err(err)?.len();
    if len == 0 {
        return Ok(None);
    }
    let mut last = [0u8];
    file.seek(SeekFrom::Start(len - 1)).map_err(err)?;
    file.read_exact(&mut last).map_err(err)?;
    let end = if last[0] == b'\n' { len - 1 } else { len };
    let start = last_line_start(&mut file, end).map_err(err)?;
    let mut tail = vec![0u8; (len - start) as usize];
    file.seek(SeekFrom::Start(start)).map_err(err)?;
    file.read_exact(&mut tail).map_err(err)?;
    let complete = last[0] == b'\n' && parse_row(tail.strip_suffix(b"\n").unwrap_or(&tail)).is_ok();
    if complete {
        return Ok(None);
    }
    let mut to = path.as_os_str().to_owned();
    to.push(".torn");
    let to = PathBuf::from(to);
    let mut aside = OpenOptions::new()
        .create(true)
        .append(true)
        .open(&to)
        .map_err(|e| io_err(&to, e))?;
    aside.write_all(&tail).map_err(|e| io_err(&to, e))?;
    if tail.last() != Some(&b'\n') {
        aside.write_all(b"\n").map_err(|e| io_err(&to, e))?;
    }
    aside.sync_all().map_err(|e| io_err(&to, e))?;
    file.set_len(start).map_err(err)?;
    file.sync_all().map_err(err)?;
    Ok(Some(SetAside {
        to,
        bytes: tail.len() as u64,
    }))
}

/// Offset just after the last `\n` before `end` (0 if none), reading backwards in blocks.
fn last_line_start(file: &mut File, end: u64) -> std::io::Result<u64> {
    let mut pos = end;
    let mut block = vec![0u8; 64 << 10];
    while pos > 0 {
        let n = block.len().min(pos as usize);
        pos -= n as u64;
        file.seek(SeekFrom::Start(pos))?;
        file.read_exact(&mut block[..n])?;
        if let Some(i) = memchr::memrchr(b'\n', &block[..n]) {
            return Ok(pos + i as u64 + 1);
        }
    }
    Ok(0)
}

/// Writes through a temporary file in the same directory, renamed over `path` when complete.
pub fn write_atomically(
    path: &Path,
    write: impl FnOnce(&mut std::io::BufWriter<File>) -> Result<(), CollectError>,
) -> Result<(), CollectError> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    let tmp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    let result = (|| {
        let mut w = std::io::BufWriter::with_capacity(
            1 << 20,
            File::create(&tmp).map_err(|e| io_err(&tmp, e))?,
        );
        write(&mut w)?;
        let file = w.into_inner().map_err(|e| io_err(&tmp, e.into_error()))?;
        file.sync_all().map_err(|e| io_err(&tmp, e))?;
        std::fs::rename(&tmp, path).map_err(|e| io_err(path, e))
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn torn_tail_is_set_aside() {
        let dir = std::env::temp_dir().join(format!("gymscope-files-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("r.jsonl");
        std::fs::write(&p, b"{\"a\":1}\n{\"a\":2}\n{\"a\":").unwrap();
        let s = set_aside_torn_tail(&p).unwrap().unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"{\"a\":1}\n{\"a\":2}\n");
        assert_eq!(std::fs::read(&s.to).unwrap(), b"{\"a\":\n");
        assert!(set_aside_torn_tail(&p).unwrap().is_none());
        std::fs::write(&p, b"{\"a\":1}\ngarbage\n").unwrap();
        assert!(set_aside_torn_tail(&p).unwrap().is_some());
        assert_eq!(std::fs::read(&p).unwrap(), b"{\"a\":1}\n");
        std::fs::write(&p, b"{\"a\":").unwrap();
        set_aside_torn_tail(&p).unwrap().unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"");
        let mut lines = Vec::new();
        std::fs::write(&p, b"a\nb\nc").unwrap();
        for_each_line(&p, |span, l, nl| {
            lines.push((span.line, l.to_vec(), nl));
            Ok(span.line < 2)
        })
        .unwrap();
        assert_eq!(lines, [(1, b"a".to_vec(), true), (2, b"b".to_vec(), true)]);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
