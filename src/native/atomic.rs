//! The one way gymscope writes an output file: into a hidden temporary file beside it, renamed
//! into place only when complete, so a failure, Ctrl-C or a full disk never leaves a truncated
//! output or a stray temporary file.
//!
//! Every error names the output file. A temporary file that exists is registered, so a signal
//! that ends the process (SIGINT, SIGTERM, SIGHUP) removes it first (see [`super::signals`]).
//! The output's folder is created when missing, for every command alike. An output that is a
//! device or a FIFO (`-o /dev/null`, `-o /dev/stdout`, a named pipe) is written in place: a
//! rename would replace the device node with a file.

use super::signals;
use crate::names;
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

/// An output file being written. Dropped without [`AtomicFile::commit`], it removes itself.
pub struct AtomicFile {
    path: PathBuf,
    /// The temporary file renamed into place; `None` when written in place (a device, a FIFO).
    tmp: Option<PathBuf>,
    writer: Option<BufWriter<File>>,
    /// Registration for removal on a signal.
    guard: Option<signals::TempGuard>,
}

/// Writing failed; the message names the output file.
#[derive(Debug, thiserror::Error)]
#[error("could not write '{file}': {cause}")]
pub struct WriteError {
    pub file: String,
    pub cause: io::Error,
}

impl AtomicFile {
    /// Only [`super::files::Cleared`] calls it: outputs are created once checked against inputs.
    pub(super) fn create(path: &Path) -> Result<AtomicFile, WriteError> {
        let err = |cause| WriteError {
            file: path.display().to_string(),
            cause,
        };
        let dir = path
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        match std::fs::metadata(path) {
            Ok(m) if m.is_dir() => {
                return Err(err(io::Error::new(
                    io::ErrorKind::IsADirectory,
                    "it is a directory",
                )))
            }
            Ok(m) if !m.is_file() => {
                let file = File::options().write(true).open(path).map_err(err)?;
                return Ok(AtomicFile {
                    path: path.to_path_buf(),
                    tmp: None,
                    writer: Some(BufWriter::with_capacity(1 << 20, file)),
                    guard: None,
                });
            }
            _ => {}
        }
        std::fs::create_dir_all(dir).map_err(err)?;
        let tmp = dir.join(names::temp(
            &path.file_name().unwrap_or_default().to_string_lossy(),
            std::process::id(),
        ));
        // Registered before it exists, so there is no moment a signal could leave it behind.
        let guard = signals::TempGuard::register(&tmp);
        let file = File::create(&tmp).map_err(err)?;
        Ok(AtomicFile {
            path: path.to_path_buf(),
            tmp: Some(tmp),
            writer: Some(BufWriter::with_capacity(1 << 20, file)),
            guard: Some(guard),
        })
    }

    /// The final path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The temporary file being written (`None` when written in place): a staging file can be
    /// read back before it is dropped (and so removed) uncommitted.
    pub fn temp_path(&self) -> Option<&Path> {
        self.tmp.as_deref()
    }

    /// Flushes, syncs and renames the file into place; on any failure the temporary file is
    /// removed (by `Drop`) and the error names the output.
    pub fn commit(mut self) -> Result<(), WriteError> {
        let result = (|| {
            let writer = self.writer.as_mut().expect("open until committed");
            writer.flush()?;
            match &self.tmp {
                Some(tmp) => {
                    writer.get_ref().sync_all()?;
                    std::fs::rename(tmp, &self.path)
                }
                None => Ok(()), // a device or FIFO: written in place, nothing to sync or rename
            }
        })();
        match result {
            Ok(()) => {
                self.writer = None; // renamed: nothing left to remove
                self.guard = None;
                Ok(())
            }
            Err(cause) => Err(self.error(cause)),
        }
    }

    fn error(&self, cause: io::Error) -> WriteError {
        WriteError {
            file: self.path.display().to_string(),
            cause,
        }
    }

    /// An I/O error of this file, with its name in the message (`No space left on device`
    /// alone does not say which file).
    fn named(&self, e: io::Error) -> io::Error {
        io::Error::new(e.kind(), self.error(e))
    }
}

impl Write for AtomicFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let r = self
            .writer
            .as_mut()
            .expect("open until committed")
            .write(buf);
        r.map_err(|e| self.named(e))
    }
    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        let r = self
            .writer
            .as_mut()
            .expect("open until committed")
            .write_all(buf);
        r.map_err(|e| self.named(e))
    }
    fn flush(&mut self) -> io::Result<()> {
        let r = self.writer.as_mut().expect("open until committed").flush();
        r.map_err(|e| self.named(e))
    }
}

impl Drop for AtomicFile {
    fn drop(&mut self) {
        if let Some(writer) = self.writer.take() {
            // Not committed: leave no partial file. The buffer is dropped unflushed on purpose.
            let (file, _) = writer.into_parts();
            drop(file);
            if let Some(tmp) = &self.tmp {
                let _ = std::fs::remove_file(tmp);
            }
        }
        self.guard = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temps(dir: &Path) -> Vec<String> {
        std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".tmp"))
            .collect()
    }

    #[test]
    fn commit_renames_and_failures_leave_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("o.json");
        let mut f = AtomicFile::create(&out).unwrap();
        f.write_all(b"abc").unwrap();
        assert_eq!(temps(dir.path()).len(), 1);
        f.commit().unwrap();
        assert_eq!(std::fs::read(&out).unwrap(), b"abc");
        assert!(temps(dir.path()).is_empty());

        // Dropped before commit (an error on the way): no temp, old file untouched.
        let mut f = AtomicFile::create(&out).unwrap();
        f.write_all(b"new").unwrap();
        drop(f);
        assert!(temps(dir.path()).is_empty());
        assert_eq!(std::fs::read(&out).unwrap(), b"abc");

        // The rename fails (the target became a directory): the error names it, no temp left.
        let target = dir.path().join("d");
        let f = AtomicFile::create(&target).unwrap();
        std::fs::create_dir(&target).unwrap();
        std::fs::write(target.join("x"), b"x").unwrap();
        let e = f.commit().unwrap_err();
        assert!(e.to_string().contains(&target.display().to_string()), "{e}");
        assert!(temps(dir.path()).is_empty());

        // A directory as the output is refused up front.
        let e = AtomicFile::create(dir.path()).err().unwrap();
        assert!(e.to_string().contains("directory"), "{e}");
    }

    #[test]
    fn a_missing_folder_is_created_and_a_device_is_written_in_place() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("a/b/o.json");
        let mut f = AtomicFile::create(&out).unwrap();
        f.write_all(b"x").unwrap();
        f.commit().unwrap();
        assert_eq!(std::fs::read(&out).unwrap(), b"x");

        // /dev/null stays a device; /dev/full says the disk is full, naming it.
        let null = Path::new("/dev/null");
        let mut f = AtomicFile::create(null).unwrap();
        f.write_all(b"x").unwrap();
        f.commit().unwrap();
        assert!(!std::fs::metadata(null).unwrap().is_file());
        let full = Path::new("/dev/full");
        if full.exists() {
            let mut f = AtomicFile::create(full).unwrap();
            let _ = f.write_all(b"x");
            let e = f.commit().unwrap_err();
            assert!(e.to_string().contains("/dev/full"), "{e}");
            assert_eq!(e.cause.raw_os_error(), Some(libc::ENOSPC), "{e}");
        }
    }

    #[test]
    fn a_full_disk_names_the_file_and_leaves_no_temp() {
        // /dev/full: every write fails with ENOSPC. Write through a file named in a temp dir by
        // replacing the writer's file after creation.
        let Ok(full) = File::options().write(true).open("/dev/full") else {
            return; // not on this system
        };
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("big.jsonl");
        let mut f = AtomicFile::create(&out).unwrap();
        f.writer = Some(BufWriter::with_capacity(16, full));
        let e = f.write_all(&[b'x'; 64]).unwrap_err();
        assert_eq!(e.raw_os_error(), None, "wrapped with the file's name");
        assert!(e.to_string().contains("big.jsonl"), "{e}");
        assert!(e.to_string().contains("No space left"), "{e}");
        drop(f);
        assert!(temps(dir.path()).is_empty());
    }
}
