//! Files read while they grow (`gymscope watch`): each refresh reads only the bytes appended
//! since the last one, checks that the file is still the one read (its inode and first bytes),
//! and hands the bytes to the core's [`crate::watch::Watch`]. The one door for a growing file:
//! only regular files are followed (a FIFO or device has no "appended since"), and a file not
//! there yet is simply not read.

use crate::watch::{FileKind, Watch, HEAD_BYTES};
use anyhow::{Context, Result};
use std::os::unix::fs::{FileExt, MetadataExt};
use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

/// Bytes read per call: a 10 GB file first seen is read in pieces, never whole.
const READ_BYTES: usize = 8 << 20;

/// Seconds since the Unix epoch: the watch's clock, the same as files' modification times.
pub fn now() -> f64 {
    seconds(SystemTime::now())
}

fn seconds(t: SystemTime) -> f64 {
    t.duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

/// Reads what `path` gained since the last refresh into `watch` (nothing when it does not exist
/// yet). `buf` is reused across calls.
pub fn refresh(
    watch: &mut Watch,
    shard: usize,
    kind: FileKind,
    path: &Path,
    buf: &mut Vec<u8>,
) -> Result<()> {
    let meta = match std::fs::metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e).with_context(|| format!("could not read '{}'", path.display())),
    };
    if !meta.is_file() {
        return Err(super::UsageError(format!(
            "'{}' is not a regular file: watch follows files that a collection appends to",
            path.display()
        ))
        .into());
    }
    let file = std::fs::File::open(path)
        .with_context(|| format!("could not read '{}'", path.display()))?;
    // The length and identity of the open file: a rename after the stat is seen next time.
    let meta = file
        .metadata()
        .with_context(|| format!("could not read '{}'", path.display()))?;
    let len = meta.len();
    let written = meta.modified().map_or_else(|_| now(), seconds);
    let mut head = vec![0u8; HEAD_BYTES.min(usize::try_from(len).unwrap_or(HEAD_BYTES))];
    file.read_exact_at(&mut head, 0)
        .with_context(|| format!("could not read '{}'", path.display()))?;
    let identity = meta.dev().rotate_left(32) ^ meta.ino();
    let mut at = watch.check(shard, kind, len, Some(identity), &head);
    buf.resize(READ_BYTES, 0);
    while at < len {
        let n = usize::try_from(len - at).map_or(READ_BYTES, |n| n.min(READ_BYTES));
        file.read_exact_at(&mut buf[..n], at)
            .with_context(|| format!("could not read '{}'", path.display()))?;
        watch.feed(shard, kind, &buf[..n], written);
        at += n as u64;
    }
    Ok(())
}

/// Whether `rollouts`' collection has ended: its `*_aggregate_metrics.json`, written last, is
/// there and no older than the rollouts file (gymscope keeps an earlier run's metrics file until
/// the new one is written; docs/collect.md).
pub fn writer_done(rollouts: &Path, aggregate: &Path) -> bool {
    let modified = |p: &Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
    match (modified(aggregate), modified(rollouts)) {
        (Some(a), Some(r)) => a >= r,
        _ => false,
    }
}
