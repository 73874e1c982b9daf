//! File handling for collection: setting aside a torn last line. (Streaming lines and atomic
//! writes are [`crate::native`]'s, shared by every command.)

use super::key::parse_row;
use super::CollectError;
use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

/// Where upstream looks for a relative `--input`: under each `NEMO_GYM_EXTRA_ROOTS` root
/// (`:`-separated, empty entries skipped), then the working directory. (Upstream also looks under
/// its own install root, which gymscope does not have.) The first file found wins; the error
/// names every place looked.
pub fn resolve_input(path: &Path, extra_roots: Option<&str>) -> Result<PathBuf, CollectError> {
    if path.is_absolute() {
        return if path.exists() {
            Ok(path.to_path_buf())
        } else {
            Err(not_found(path, &[path.to_path_buf()]))
        };
    }
    let mut tried = Vec::new();
    let roots = extra_roots
        .unwrap_or_default()
        .split(':')
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .chain([PathBuf::new()]);
    for root in roots {
        let candidate = root.join(path);
        if candidate.exists() {
            return Ok(candidate);
        }
        tried.push(candidate);
    }
    Err(not_found(path, &tried))
}

fn not_found(path: &Path, tried: &[PathBuf]) -> CollectError {
    let places: Vec<String> = tried.iter().map(|p| format!("'{}'", p.display())).collect();
    CollectError::Config(format!(
        "Input file not found: '{}' (--input). Looked at {} (relative paths are searched under NEMO_GYM_EXTRA_ROOTS, then the working directory). Check the path is spelled correctly.",
        path.display(),
        places.join(", ")
    ))
}

pub fn io_err(path: &Path, e: std::io::Error) -> CollectError {
    CollectError::Config(format!("'{}': {e}", path.display()))
}

/// A torn last line that was moved out of an output file.
pub struct SetAside {
    pub to: PathBuf,
    pub bytes: u64,
}

/// What [`set_aside_torn_tail`] did to a file's last line.
pub enum TornTail {
    /// A whole JSON object that lacked only its newline: the newline was added (v0.7.0 keeps it).
    Completed,
    /// A torn line, moved aside.
    SetAside(SetAside),
}

/// If the file's last line is not a JSON object (torn by a crash), moves it to `<file>.torn`
/// (appended, so nothing is ever lost) and truncates the file to its last complete line, so that
/// rollout simply runs again; a whole object that lacks only its newline gets it, as NeMo Gym
/// v0.7.0 repairs it (`rollout_collection.py` `_repair_torn_tail`).
pub fn set_aside_torn_tail(path: &Path) -> Result<Option<TornTail>, CollectError> {
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
    let whole = parse_row(tail.strip_suffix(b"\n").unwrap_or(&tail)).is_ok();
    if whole && last[0] == b'\n' {
        return Ok(None);
    }
    if whole {
        file.seek(SeekFrom::End(0)).map_err(err)?;
        file.write_all(b"\n").map_err(err)?;
        file.sync_all().map_err(err)?;
        return Ok(Some(TornTail::Completed));
    }
    let to = crate::names::beside(path, crate::names::torn);
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
    Ok(Some(TornTail::SetAside(SetAside {
        to,
        bytes: tail.len() as u64,
    })))
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_inputs_are_searched_under_the_extra_roots_first() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a"), dir.path().join("b"));
        std::fs::create_dir_all(b.join("data")).unwrap();
        std::fs::write(b.join("data/in.jsonl"), b"{}\n").unwrap();
        let roots = format!("{}::{}", a.display(), b.display());
        let found = resolve_input(Path::new("data/in.jsonl"), Some(&roots)).unwrap();
        assert_eq!(found, b.join("data/in.jsonl"));
        let e = resolve_input(Path::new("data/none.jsonl"), Some(&roots))
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("Input file not found: 'data/none.jsonl' (--input). Looked at '"),
            "{e}"
        );
        for place in [a.join("data/none.jsonl"), b.join("data/none.jsonl")] {
            assert!(e.contains(&format!("'{}'", place.display())), "{e}");
        }
        assert!(
            e.contains(", 'data/none.jsonl'"),
            "the working directory last: {e}"
        );
    }

    #[test]
    fn torn_tail_is_set_aside() {
        let dir = std::env::temp_dir().join(format!("gymscope-files-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("r.jsonl");
        std::fs::write(&p, b"{\"a\":1}\n{\"a\":2}\n{\"a\":").unwrap();
        let Some(TornTail::SetAside(s)) = set_aside_torn_tail(&p).unwrap() else {
            panic!("not set aside")
        };
        assert_eq!(std::fs::read(&p).unwrap(), b"{\"a\":1}\n{\"a\":2}\n");
        assert_eq!(std::fs::read(&s.to).unwrap(), b"{\"a\":\n");
        assert!(set_aside_torn_tail(&p).unwrap().is_none());
        std::fs::write(&p, b"{\"a\":1}\ngarbage\n").unwrap();
        assert!(set_aside_torn_tail(&p).unwrap().is_some());
        assert_eq!(std::fs::read(&p).unwrap(), b"{\"a\":1}\n");
        std::fs::write(&p, b"{\"a\":").unwrap();
        set_aside_torn_tail(&p).unwrap().unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"");
        // A whole object that lacks only its newline is kept and completed (as v0.7.0).
        std::fs::write(&p, b"{\"a\":1}\n{\"a\":2}").unwrap();
        assert!(matches!(
            set_aside_torn_tail(&p).unwrap(),
            Some(TornTail::Completed)
        ));
        assert_eq!(std::fs::read(&p).unwrap(), b"{\"a\":1}\n{\"a\":2}\n");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
