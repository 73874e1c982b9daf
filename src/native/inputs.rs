//! Checks on a command's files before anything is read or written: inputs that cannot be read
//! twice (pipes), and outputs that are one of the inputs (compared by identity, not by text).

use std::fs::Metadata;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::Path;

/// A mistake in how the command was called: exit code 2, before anything is written.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct UsageError(pub String);

/// An input file as given on the command line, with the flag that named it.
#[derive(Clone, Copy)]
pub struct Input<'a> {
    pub path: &'a Path,
    pub flag: &'a str,
}

impl<'a> Input<'a> {
    /// The input at `path`, given by `flag` (named in every message about it).
    pub const fn new(path: &'a Path, flag: &'a str) -> Self {
        Input { path, flag }
    }
}

/// The input must exist (exit 1, upstream's wording) and be a regular file or device. A pipe,
/// socket (`--inputs <(…)`) or directory is refused at once (exit 2): gymscope reads its inputs
/// twice, the second time by offset, and would hang or fail half-way on them.
pub fn check_input(input: Input, reads_twice: bool) -> anyhow::Result<()> {
    let meta = match std::fs::metadata(input.path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => anyhow::bail!(
            "Input file not found: '{}' ({}). Check the path is spelled correctly.",
            input.path.display(),
            input.flag
        ),
        Err(e) => anyhow::bail!("Could not read '{}': {e}", input.path.display()),
    };
    let kind = meta.file_type();
    let what = if kind.is_dir() {
        Some("a directory")
    } else if kind.is_fifo() {
        Some("a pipe")
    } else if kind.is_socket() {
        Some("a socket")
    } else {
        None
    };
    match what {
        Some("a directory") => Err(UsageError(format!(
            "'{}' ({}) is a directory, not a file",
            input.path.display(),
            input.flag
        ))
        .into()),
        Some(what) if reads_twice => Err(UsageError(format!(
            "'{}' ({}) is {what}: gymscope reads its inputs twice (the second time by offset), so they must be regular files; save it to a file first",
            input.path.display(),
            input.flag
        ))
        .into()),
        Some("a pipe") => wait_for_writer(input, WRITER_WAIT),
        _ => Ok(()),
    }
}

/// How long a command read once waits for a writer to open a named pipe it is given.
pub const WRITER_WAIT: std::time::Duration = std::time::Duration::from_secs(5);

/// Pipes opened by [`wait_for_writer`], by path, until the read takes them ([`open_input`]):
/// opening a pipe again could wait for ever once its writer has written everything and closed.
static HELD_PIPES: std::sync::Mutex<Vec<(std::path::PathBuf, std::fs::File)>> =
    std::sync::Mutex::new(Vec::new());

/// Opens an input for its one read: the pipe [`check_input`] already opened for `path` if there
/// is one, else the file.
pub fn open_input(path: &Path) -> std::io::Result<std::fs::File> {
    if let Ok(mut held) = HELD_PIPES.lock() {
        if let Some(i) = held.iter().position(|(p, _)| p == path) {
            return Ok(held.swap_remove(i).1);
        }
    }
    std::fs::File::open(path)
}

/// A pipe read once: opening it waits for a writer, for ever when none comes (a `mkfifo` pipe
/// nobody writes to). The open is tried on a thread for `wait`; without a writer by then the
/// input is refused by name instead of hanging. A pipe with its writer (`<(…)`, `cat x |`)
/// opens at once.
fn wait_for_writer(input: Input, wait: std::time::Duration) -> anyhow::Result<()> {
    let (tx, rx) = std::sync::mpsc::channel();
    let path = input.path.to_path_buf();
    std::thread::spawn(move || {
        let _ = tx.send(std::fs::File::open(path));
    });
    match rx.recv_timeout(wait) {
        Ok(Ok(file)) => {
            if let Ok(mut held) = HELD_PIPES.lock() {
                held.push((input.path.to_path_buf(), file));
            }
            Ok(())
        }
        Ok(Err(e)) => anyhow::bail!("Could not read '{}': {e}", input.path.display()),
        Err(_) => Err(UsageError(format!(
            "'{}' ({}) is a named pipe and no writer opened it within {} s: start the writer first, or give a file",
            input.path.display(),
            input.flag,
            wait.as_secs()
        ))
        .into()),
    }
}

fn identity(meta: &Metadata) -> (u64, u64) {
    (meta.dev(), meta.ino())
}

/// True when both paths name the same file (after symlinks, hard links included).
pub fn same_file(a: &Path, b: &Path) -> bool {
    match (std::fs::metadata(a), std::fs::metadata(b)) {
        (Ok(a), Ok(b)) => identity(&a) == identity(&b),
        _ => false,
    }
}

/// `a/missing/../b` → `a/b`: what a path names once its missing directories are created.
pub fn lexical(path: &Path) -> std::path::PathBuf {
    use std::path::Component;
    let mut out = std::path::PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir
                if matches!(out.components().next_back(), Some(Component::Normal(_))) =>
            {
                out.pop();
            }
            c => out.push(c),
        }
    }
    out
}

/// Refuses (exit 2, before writing) an output that is one of the inputs. An output that does not
/// exist yet cannot be one, unless its path only fails to resolve through a directory that does
/// not exist yet (`-o new/../shard0.jsonl`, where the directory would be created).
pub fn check_output(output: &Path, inputs: &[Input]) -> Result<(), UsageError> {
    let resolved = if output.exists() {
        output.to_path_buf()
    } else {
        lexical(output)
    };
    for input in inputs {
        if same_file(&resolved, input.path) {
            return Err(UsageError(format!(
                "refusing to write '{}': it is the input '{}' ({}); choose another output",
                output.display(),
                input.path.display(),
                input.flag
            )));
        }
    }
    Ok(())
}

/// Refuses (exit 2, before writing) two outputs of one command that are the same file: the
/// second would replace the first (`build-pivot --config-out p.jsonl --output p.jsonl`).
pub fn check_distinct_outputs(outputs: &[(&Path, &str)]) -> Result<(), UsageError> {
    let key = |p: &Path| lexical(&std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf()));
    for (i, (a, flag_a)) in outputs.iter().enumerate() {
        for (b, flag_b) in &outputs[..i] {
            if key(a) == key(b) || same_file(a, b) {
                return Err(UsageError(format!(
                    "'{}' is both {flag_b} and {flag_a}: choose two files",
                    a.display()
                )));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outputs_are_compared_by_identity() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a.jsonl");
        std::fs::write(&a, b"{}\n").unwrap();
        let link = dir.path().join("sub/../link.jsonl"); // resolved once `sub` exists
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        std::os::unix::fs::symlink(&a, dir.path().join("link.jsonl")).unwrap();
        let hard = dir.path().join("hard.jsonl");
        std::fs::hard_link(&a, &hard).unwrap();
        let inputs = [Input::new(&a, "--inputs")];
        for out in [&a, &link, &hard] {
            let e = check_output(out, &inputs).unwrap_err();
            assert!(e.0.contains("--inputs"), "{e}");
        }
        assert!(check_output(&dir.path().join("new.jsonl"), &inputs).is_ok());
        let through_missing = dir.path().join("missing/../a.jsonl");
        assert!(check_output(&through_missing, &inputs).is_err());
    }

    #[test]
    #[allow(unsafe_code)] // libc::mkfifo makes the FIFO under test
    fn pipes_are_refused_when_read_twice_and_waited_on_when_read_once() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("p");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let input = Input::new(&fifo, "--rollouts");
        let e = check_input(input, true).unwrap_err();
        assert!(e.downcast_ref::<UsageError>().is_some());
        assert!(e.to_string().contains("is a pipe"), "{e}");
        assert!(e.to_string().contains("twice"), "{e}");
        // Read once: taken when a writer opens it (within the wait), refused by name when none
        // does.
        let e = wait_for_writer(input, std::time::Duration::from_millis(200)).unwrap_err();
        assert!(e.downcast_ref::<UsageError>().is_some());
        assert!(e.to_string().contains("no writer"), "{e}");
        // A second pipe (the first one's open is still waiting on its thread).
        let fed = dir.path().join("fed");
        let c = std::ffi::CString::new(fed.to_str().unwrap()).unwrap();
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let writer = {
            let fed = fed.clone();
            std::thread::spawn(move || std::fs::write(&fed, b"{}\n"))
        };
        let input = Input::new(&fed, "--rollouts");
        assert!(check_input(input, false).is_ok());
        writer.join().unwrap().unwrap();
        let e = check_input(Input::new(dir.path(), "--path"), false).unwrap_err();
        assert!(e.to_string().contains("is a directory"), "{e}");
    }
}
