//! A run read while it is collected (`gymscope watch`, the app's "Follow"): each shard's
//! rollouts, materialized inputs and failures sidecar are fed the bytes appended since the last
//! refresh, and figures can be asked for at any time ([`Snapshot`]).
//!
//! ```text
//! check(shard, file, len, identity, head) -> offset   // the same file? else read from 0
//! feed(shard, file, bytes appended at offset, at)*    // whole lines counted, a torn one held
//! tick(now); snapshot(now)                            // rates, then the figures
//! finish()                                            // the run is over: a torn line is a row
//! ```
//!
//! A refresh costs the new bytes plus the run's tasks and agents, never the whole file; memory
//! grows with rollouts (their keys) and tasks, never with bytes. The caller reads the files and
//! owns the clock (seconds, any origin), so the core stays free of I/O.

mod shard;
mod snapshot;
mod tail;
mod text;

pub use shard::BadLine;
pub use snapshot::{AgentFigures, HealthRate, Interval, ShardFigures, Snapshot, Totals};
pub use tail::{Restart, Tail, HEAD_BYTES};
pub use text::{text, WIDTH};

use crate::read::jsonl::{SplitError, DEFAULT_MAX_LINE_BYTES};
use crate::record::KeyTable;
use shard::{Agents, Shard};

/// A shard's three files.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileKind {
    Rollouts = 0,
    Inputs = 1,
    Failures = 2,
}

impl FileKind {
    /// In the order a refresh reads them: the inputs name every row's agent.
    pub const ALL: [FileKind; 3] = [FileKind::Inputs, FileKind::Rollouts, FileKind::Failures];
}

/// How long a shard may go without a new row before it is called stalled (seconds).
pub const STALL_AFTER: f64 = 600.0;
/// The window the rows-per-minute rate is taken over (seconds).
pub const RATE_WINDOW: f64 = 300.0;
/// At most this many unreadable rows are kept to show (all are counted).
const MAX_BAD_LINES: usize = 20;

/// The run being watched.
pub struct Watch {
    shards: Vec<Shard>,
    agents: Agents,
    keys: KeyTable,
    max_line: u64,
    /// Lines about the files themselves (a restart), newest last.
    notes: Vec<String>,
    bad: Vec<BadLine>,
    bad_count: u64,
    stall_after: f64,
    finished: bool,
}

impl Default for Watch {
    fn default() -> Self {
        Watch::new(DEFAULT_MAX_LINE_BYTES)
    }
}

impl Watch {
    pub fn new(max_line: u64) -> Watch {
        Watch {
            shards: Vec::new(),
            agents: Agents::default(),
            keys: KeyTable::default(),
            max_line,
            notes: Vec::new(),
            bad: Vec::new(),
            bad_count: 0,
            stall_after: STALL_AFTER,
            finished: false,
        }
    }

    /// Calls a shard stalled after `seconds` without a new row.
    pub fn with_stall_after(mut self, seconds: f64) -> Watch {
        self.stall_after = seconds;
        self
    }

    /// Adds a shard by its files' names as they are shown: rollouts, materialized inputs,
    /// failures sidecar (in [`FileKind`]'s order). Returns its index.
    pub fn add_shard(&mut self, rollouts: String, inputs: String, failures: String) -> usize {
        self.shards
            .push(Shard::new([rollouts, inputs, failures], self.max_line));
        self.shards.len() - 1
    }

    pub fn shards(&self) -> usize {
        self.shards.len()
    }

    /// Where the next read of the file starts.
    pub fn offset(&self, shard: usize, file: FileKind) -> u64 {
        self.shards[shard].tails[file as usize].offset()
    }

    /// The file as it is now: `len` bytes, `identity` the caller's id of it (an inode), `head`
    /// its first [`HEAD_BYTES`] bytes (fewer when shorter). When it is not the file read so far,
    /// what it added is forgotten, a note says so, and the returned offset is 0.
    pub fn check(
        &mut self,
        shard: usize,
        file: FileKind,
        len: u64,
        identity: Option<u64>,
        head: &[u8],
    ) -> u64 {
        let s = &mut self.shards[shard];
        s.has_sidecar |= file == FileKind::Failures;
        if let Some(why) = s.tails[file as usize].check(len, identity, head) {
            self.notes.push(format!(
                "'{}' {}: read again from the start",
                s.paths[file as usize],
                why.describe()
            ));
            s.reset(file, self.max_line);
        }
        s.tails[file as usize].offset()
    }

    /// Feeds bytes appended to the file at [`Watch::offset`], seen at time `at`. A row that
    /// cannot be read is counted and kept to show; reading goes on.
    pub fn feed(&mut self, shard: usize, file: FileKind, bytes: &[u8], at: f64) {
        let Watch {
            shards,
            agents,
            keys,
            bad,
            bad_count,
            ..
        } = self;
        let s = &mut shards[shard];
        let mut tail = std::mem::take(&mut s.tails[file as usize]);
        let result = tail.feed(bytes, |span, line| {
            if let Err(b) = s.line(file, agents, keys, span, line, at) {
                *bad_count += 1;
                if bad.len() < MAX_BAD_LINES {
                    bad.push(b);
                }
            }
            Ok::<(), ()>(())
        });
        if let Err(SplitError::TooLong(t)) = result {
            *bad_count += 1;
            bad.push(BadLine {
                file: s.paths[file as usize].clone(),
                line: t.line,
                column: 1,
                message: format!(
                    "longer than {} bytes (the limit); the rest of the file is not read",
                    t.limit
                ),
            });
        }
        s.tails[file as usize] = tail;
    }

    /// Records every shard's count at `now`, for the rates.
    pub fn tick(&mut self, now: f64) {
        for s in &mut self.shards {
            s.sample(now, RATE_WINDOW);
        }
    }

    /// The writer of `shard` is done (its aggregate file appeared, say), though some of its
    /// materialized rows left no row (a drained dispatch budget writes none).
    pub fn declare_done(&mut self, shard: usize) {
        self.shards[shard].declared_done = true;
    }

    /// Whether every shard is complete.
    pub fn complete(&self) -> bool {
        !self.shards.is_empty() && self.shards.iter().all(Shard::complete)
    }

    /// The run is over: each file's torn last line is read as a row (and is an error when it
    /// does not parse).
    pub fn finish(&mut self, at: f64) {
        for i in 0..self.shards.len() {
            for file in FileKind::ALL {
                let mut tail = std::mem::take(&mut self.shards[i].tails[file as usize]);
                let (agents, keys) = (&mut self.agents, &mut self.keys);
                let s = &mut self.shards[i];
                let _ = tail.finish(|span, line| {
                    if let Err(b) = s.line(file, agents, keys, span, line, at) {
                        self.bad_count += 1;
                        if self.bad.len() < MAX_BAD_LINES {
                            self.bad.push(b);
                        }
                    }
                    Ok::<(), ()>(())
                });
                self.shards[i].tails[file as usize] = tail;
            }
        }
        self.finished = true;
    }
}

#[cfg(test)]
mod tests;
