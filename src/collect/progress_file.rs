//! `collect --progress-file`: the count of finished rollouts published as a plain integer in
//! `<output stem>_progress` (or the path given), replaced atomically, for orchestrators that
//! show a batch job's progress (the convention NeMo Gym PR #2638 proposes: one file per shard,
//! summed by the reader). Best effort: a failed write is said once and never stops the run.

use crate::native::files::Cleared;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// The file is rewritten at most this often while rollouts finish.
const EVERY: Duration = Duration::from_secs(1);

pub struct ProgressFile {
    path: PathBuf,
    cleared: Cleared,
    /// Rollouts finished before this run (a resume's done and terminal rows).
    seed: u64,
    written: Option<(u64, Instant)>,
    warned: bool,
}

impl ProgressFile {
    /// Publishes `seed` at once (0 on a fresh run).
    pub fn start(path: PathBuf, cleared: Cleared, seed: u64) -> ProgressFile {
        let mut p = ProgressFile {
            path,
            cleared,
            seed,
            written: None,
            warned: false,
        };
        p.publish(0, true);
        p
    }

    /// `finished` rollouts of this run: written when it changed, at most once a second unless
    /// `now` (the end).
    pub fn publish(&mut self, finished: u64, now: bool) {
        let n = self.seed + finished;
        match self.written {
            Some((w, _)) if w == n => return,
            Some((_, at)) if !now && at.elapsed() < EVERY => return,
            _ => {}
        }
        let written = self
            .cleared
            .write_file(&self.path, |f| -> anyhow::Result<()> {
                use std::io::Write;
                writeln!(f, "{n}")?;
                Ok(())
            });
        match written {
            Ok(()) => self.written = Some((n, Instant::now())),
            Err(e) if !self.warned => {
                self.warned = true;
                crate::note!(
                    "Warning: the progress file could not be written (the run goes on): {e:#}"
                );
            }
            Err(_) => {}
        }
    }
}
