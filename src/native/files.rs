//! The one door for every file a command touches (docs/files.md says the rules by file kind).
//!
//! - **Streams** (JSONL rows, read once or twice): [`super::inputs::check_input`] then
//!   [`super::read`], which opens through [`super::inputs::open_input`].
//! - **Whole documents** (metrics, results, manifests, rewards, config): [`read_document`], with a
//!   size cap, so `/dev/zero` or a giant file is refused by name instead of exhausting memory,
//!   and a FIFO by the same policy as a stream read once.
//! - **Folders**: [`entries`], bounded, sorted, and never descending (a symlink loop is a name).
//! - **Globs**: [`glob_files`], Python's `glob.glob` without `recursive=True`, as v0.7.0's
//!   `gym eval aggregate` expands `--input-glob` (`**` is `*`).
//! - **Outputs**: a [`FilePlan`] names every input (each file a glob or folder expanded to
//!   included) and every output, side outputs too; [`FilePlan::clear`] checks each output against
//!   the whole set, and only its [`Cleared`] creates output files ([`Cleared::create`]): the
//!   atomic writer has no other public constructor, so a command cannot write unchecked.

use super::atomic::{AtomicFile, WriteError};
use super::inputs::{check_distinct_outputs, check_input, check_output, open_input, Input};
use super::UsageError;
use anyhow::{bail, Context, Result};
use std::io::Read;
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};

/// The cap on a whole JSON document read into memory (metrics, results, rewards, manifests):
/// far above any such file Gym writes (kilobytes), far below the machine's memory.
pub const DOCUMENT_CAP: u64 = 64 << 20;

/// At most this many entries of one folder are listed (a folder of ATIF files, a Harbor job).
pub const MAX_FOLDER_ENTRIES: usize = 1_000_000;

/// What a path names, without opening it (opening a FIFO would wait for a writer).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Missing,
    File,
    Folder,
    Fifo,
    Device,
    Socket,
}

/// The kind of `path` after symlinks; a symlink loop or an unreadable path is an error naming it.
pub fn kind(path: &Path) -> Result<Kind> {
    match std::fs::metadata(path) {
        Ok(m) => {
            let t = m.file_type();
            Ok(if t.is_dir() {
                Kind::Folder
            } else if t.is_fifo() {
                Kind::Fifo
            } else if t.is_socket() {
                Kind::Socket
            } else if t.is_char_device() || t.is_block_device() {
                Kind::Device
            } else {
                Kind::File
            })
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Kind::Missing),
        Err(e) => bail!("could not read '{}': {e}", path.display()),
    }
}

/// Reads a whole document of at most `cap` bytes. A folder or socket is a usage error (exit 2);
/// a FIFO is read once its writer comes (refused by name after [`super::inputs::WRITER_WAIT`]);
/// a device or file is read up to the cap, and over it is an error naming the file and the cap.
pub fn read_document(path: &Path, flag: &str, cap: u64) -> Result<Vec<u8>> {
    check_input(Input { path, flag }, false)?;
    if kind(path)? == Kind::Socket {
        return Err(UsageError(format!(
            "'{}' ({flag}) is a socket, not a file",
            path.display()
        ))
        .into());
    }
    let file = open_input(path).with_context(|| format!("could not read '{}'", path.display()))?;
    let mut bytes = Vec::new();
    file.take(cap + 1)
        .read_to_end(&mut bytes)
        .with_context(|| format!("could not read '{}' ({flag})", path.display()))?;
    if bytes.len() as u64 > cap {
        bail!(
            "'{}' ({flag}) is over the {} MiB limit for a whole JSON document",
            path.display(),
            cap >> 20
        );
    }
    Ok(bytes)
}

/// The paths in a folder, sorted; at most [`MAX_FOLDER_ENTRIES`]. Nothing is followed: a symlink
/// loop in it is an entry like any other (reading it fails by name later).
pub fn entries(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut all = Vec::new();
    for e in std::fs::read_dir(dir)
        .with_context(|| format!("could not read the folder '{}'", dir.display()))?
    {
        let e = e.with_context(|| format!("could not read the folder '{}'", dir.display()))?;
        if all.len() == MAX_FOLDER_ENTRIES {
            bail!(
                "the folder '{}' has over {MAX_FOLDER_ENTRIES} entries",
                dir.display()
            );
        }
        all.push(e.path());
    }
    all.sort();
    Ok(all)
}

/// The files one pattern names, as Python's `glob.glob(pattern)` (v0.7.0 calls it without
/// `recursive=True`, so `**` matches one path component like `*`), sorted by their text. A
/// pattern cannot descend further than it has components, so a symlink loop is bounded; a file
/// reached twice through a link (`d/*/r.jsonl` with `d/self -> .`) is kept once, under its first
/// name, so no shard is merged twice.
pub fn glob_files(pattern: &str, flag: &str) -> std::result::Result<Vec<PathBuf>, UsageError> {
    let mut flat = String::with_capacity(pattern.len());
    for c in pattern.chars() {
        if !(c == '*' && flat.ends_with('*')) {
            flat.push(c);
        }
    }
    let options = glob::MatchOptions {
        case_sensitive: true,
        require_literal_separator: true,
        // Python's glob: `*` does not match a leading dot.
        require_literal_leading_dot: true,
    };
    let mut matches: Vec<PathBuf> = glob::glob_with(&flat, options)
        .map_err(|e| UsageError(format!("{flag}: pattern `{pattern}`: {e}")))?
        .filter_map(std::result::Result::ok)
        .collect();
    matches.sort_by(|a, b| a.to_string_lossy().cmp(&b.to_string_lossy()));
    let mut seen = std::collections::HashSet::new();
    matches.retain(|p| {
        use std::os::unix::fs::MetadataExt;
        std::fs::metadata(p).map_or(true, |m| seen.insert((m.dev(), m.ino())))
    });
    Ok(matches)
}

thread_local! {
    /// The files read by the steps before a command's own (an ATIF folder's trajectories and
    /// results, `--rewards`), by thread: a host (the Python module) may run commands on several.
    static READ: std::cell::RefCell<Vec<(PathBuf, String)>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Records a file read before the command's plan is made, so no output of the command replaces
/// it ([`FilePlan::clear`]).
pub fn note_read(path: &Path, flag: &str) {
    READ.with(|r| r.borrow_mut().push((path.to_path_buf(), flag.to_string())));
}

/// Forgets the files [`note_read`] recorded: a new command starts.
pub fn forget_reads() {
    READ.with(|r| r.borrow_mut().clear());
}

/// Checks `outputs` against `inputs` ([`FilePlan::clear`]) in one call.
pub fn clear_outputs(
    inputs: &[Input],
    outputs: &[(&Path, &str)],
) -> std::result::Result<Cleared, UsageError> {
    let mut plan = FilePlan::new();
    for i in inputs {
        plan.input(i.path, i.flag);
    }
    for (o, flag) in outputs {
        plan.output(*o, flag);
    }
    plan.clear()
}

/// At most this many files are open at once for reads by offset ([`Handles`]): far under the
/// usual `ulimit -n` of 1024, whatever the number of shards.
pub const MAX_OPEN: usize = 64;

/// Many files read by offset (merged shards) through at most [`MAX_OPEN`] open handles: a file
/// is opened when first read and closed when the table is full (v0.7.0 opens one shard at a time).
pub struct Handles<'a> {
    paths: &'a [PathBuf],
    open: Vec<(usize, std::fs::File)>,
}

impl<'a> Handles<'a> {
    pub fn new(paths: &'a [PathBuf]) -> Handles<'a> {
        Handles {
            paths,
            open: Vec::new(),
        }
    }

    /// Fills `buf` from file `file` at `offset`; errors name the file.
    pub fn read_exact_at(&mut self, file: usize, buf: &mut [u8], offset: u64) -> Result<()> {
        use std::os::unix::fs::FileExt;
        let path = &self.paths[file];
        let at = if let Some(at) = self.open.iter().position(|(i, _)| *i == file) {
            at
        } else {
            if self.open.len() == MAX_OPEN {
                self.open.remove(0);
            }
            let f = std::fs::File::open(path)
                .with_context(|| format!("could not read '{}'", path.display()))?;
            self.open.push((file, f));
            self.open.len() - 1
        };
        self.open[at]
            .1
            .read_exact_at(buf, offset)
            .with_context(|| format!("could not read '{}'", path.display()))
    }
}

/// Every file a command reads and writes, named before anything is written.
#[derive(Default)]
pub struct FilePlan {
    inputs: Vec<(PathBuf, String)>,
    outputs: Vec<(PathBuf, String)>,
}

impl FilePlan {
    pub fn new() -> FilePlan {
        FilePlan::default()
    }

    /// An input the command reads (a main file, a sidecar, each file a glob or folder expands
    /// to); `flag` is how messages name where it came from.
    pub fn input(&mut self, path: impl Into<PathBuf>, flag: &str) -> &mut FilePlan {
        self.inputs.push((path.into(), flag.to_string()));
        self
    }

    /// An output the command may write, side outputs (`*.info.md`, health reports) included.
    pub fn output(&mut self, path: impl Into<PathBuf>, flag: &str) -> &mut FilePlan {
        self.outputs.push((path.into(), flag.to_string()));
        self
    }

    /// Checks every output against every input (by identity: symlinks, hard links and `../`
    /// included), the files already read this command ([`note_read`]: an ATIF folder's files,
    /// `--rewards`) among them, and against the other outputs; only then can outputs be created.
    pub fn clear(self) -> std::result::Result<Cleared, UsageError> {
        let read = READ.with(|r| r.borrow().clone());
        let inputs: Vec<Input> = self
            .inputs
            .iter()
            .chain(&read)
            .map(|(path, flag)| Input { path, flag })
            .collect();
        for (out, _) in &self.outputs {
            check_output(out, &inputs)?;
        }
        let outs: Vec<(&Path, &str)> = self
            .outputs
            .iter()
            .map(|(p, f)| (p.as_path(), f.as_str()))
            .collect();
        check_distinct_outputs(&outs)?;
        Ok(Cleared {
            outputs: self.outputs.into_iter().map(|(p, _)| key(&p)).collect(),
        })
    }
}

fn key(p: &Path) -> PathBuf {
    std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf())
}

/// Outputs checked by [`FilePlan::clear`]: the only way to create an output file. A clone
/// carries the same permission to a thread that writes one of them (`collect --progress-file`).
#[derive(Clone)]
pub struct Cleared {
    outputs: Vec<PathBuf>,
}

impl Cleared {
    /// Starts writing `path` atomically ([`AtomicFile`]); a path the plan did not name is refused
    /// (a command's own mistake, caught by the file-contract tests).
    pub fn create(&self, path: &Path) -> std::result::Result<AtomicFile, WriteError> {
        if !self.outputs.contains(&key(path)) {
            return Err(WriteError {
                file: path.display().to_string(),
                cause: std::io::Error::other(
                    "gymscope's own error: this output was not checked against the inputs",
                ),
            });
        }
        AtomicFile::create(path)
    }

    /// Writes `path` atomically with `write` ([`super::atomic::write_file`]), once cleared.
    pub fn write_file<E: From<WriteError> + From<std::io::Error>>(
        &self,
        path: &Path,
        write: impl FnOnce(&mut AtomicFile) -> std::result::Result<(), E>,
    ) -> std::result::Result<(), E> {
        let mut out = self.create(path)?;
        write(&mut out)?;
        out.commit()?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_document_over_its_cap_is_refused_by_name() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("m.json");
        std::fs::write(&p, b"{\"a\": 1}").unwrap();
        assert_eq!(read_document(&p, "--x", 100).unwrap(), b"{\"a\": 1}");
        let e = read_document(&p, "--x", 4).unwrap_err().to_string();
        assert!(e.contains("m.json") && e.contains("--x"), "{e}");
        let e = read_document(Path::new("/dev/zero"), "--x", 1 << 20).unwrap_err();
        assert!(e.to_string().contains("/dev/zero"), "{e}");
        let e = read_document(dir.path(), "--x", 100).unwrap_err();
        assert!(e.downcast_ref::<UsageError>().is_some(), "{e}");
    }

    #[test]
    fn globs_are_pythons_without_recursion_and_bounded_by_links() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::fs::create_dir_all(d.join("a/b")).unwrap();
        std::fs::write(d.join("r.jsonl"), b"").unwrap();
        std::fs::write(d.join("a/r.jsonl"), b"").unwrap();
        std::fs::write(d.join("a/b/r.jsonl"), b"").unwrap();
        std::os::unix::fs::symlink(d, d.join("a/loop")).unwrap();
        let got = glob_files(&format!("{}/**/r.jsonl", d.display()), "-i").unwrap();
        // One level, as `*`: a/r.jsonl only (a/loop/r.jsonl is d/r.jsonl, a file of its own).
        let names: Vec<String> = got
            .iter()
            .map(|p| p.strip_prefix(d).unwrap().display().to_string())
            .collect();
        assert_eq!(names, ["a/r.jsonl"]);
        let got = glob_files(&format!("{}/a/*/r.jsonl", d.display()), "-i").unwrap();
        assert_eq!(got.len(), 2, "{got:?}"); // a/b/r.jsonl, a/loop/r.jsonl (= d/r.jsonl)
        let got = glob_files(&format!("{}/a/*/*/r.jsonl", d.display()), "-i").unwrap();
        assert!(got.len() <= 2, "a loop does not multiply a file: {got:?}");
    }

    #[test]
    fn only_a_cleared_plan_creates_outputs() {
        let dir = tempfile::tempdir().unwrap();
        let input = dir.path().join("in.jsonl");
        std::fs::write(&input, b"{}\n").unwrap();
        let mut plan = FilePlan::new();
        plan.input(&input, "--in")
            .output(dir.path().join("out.jsonl"), "-o");
        let cleared = plan.clear().unwrap();
        assert!(cleared.create(&dir.path().join("other.jsonl")).is_err());
        let f = cleared.create(&dir.path().join("out.jsonl")).unwrap();
        f.commit().unwrap();
        let mut plan = FilePlan::new();
        plan.input(&input, "--in").output(&input, "-o");
        assert!(plan.clear().is_err());
    }
}
