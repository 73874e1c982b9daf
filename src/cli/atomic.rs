//! Output files written through a temporary file in the same directory and renamed into place
//! only when complete, so an interrupted run never leaves a truncated file.

use anyhow::{Context, Result};
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

pub struct AtomicFile {
    path: PathBuf,
    tmp: PathBuf,
    writer: Option<BufWriter<File>>,
}

impl AtomicFile {
    pub fn create(path: &Path) -> Result<AtomicFile> {
        let dir = path
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        let file_name = path.file_name().unwrap_or_default().to_string_lossy();
        let tmp = dir.join(format!(".{file_name}.{}.tmp", std::process::id()));
        let file = File::create(&tmp).with_context(|| format!("writing '{}'", path.display()))?;
        Ok(AtomicFile {
            path: path.to_path_buf(),
            tmp,
            writer: Some(BufWriter::with_capacity(1 << 20, file)),
        })
    }

    /// Flushes, syncs and renames the file into place.
    pub fn commit(mut self) -> Result<()> {
        let writer = self.writer.take().expect("not committed twice");
        let file = writer
            .into_inner()
            .map_err(std::io::IntoInnerError::into_error)?;
        file.sync_all()?;
        std::fs::rename(&self.tmp, &self.path)
            .with_context(|| format!("writing '{}'", self.path.display()))
    }
}

impl Write for AtomicFile {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.writer
            .as_mut()
            .expect("open until committed")
            .write(buf)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.writer.as_mut().expect("open until committed").flush()
    }
}

impl Drop for AtomicFile {
    fn drop(&mut self) {
        if self.writer.is_some() {
            let _ = std::fs::remove_file(&self.tmp); // not committed: leave no partial file
        }
    }
}
