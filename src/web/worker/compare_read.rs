//! A comparison's runs read by this worker's pool (`pool`): each run's two files in byte ranges
//! for the profile alone (`profile::pooled`), one run after another; a profiling file is read
//! here as it is small. The sides, and so the comparison, are one worker's (`compare_job`).

use super::super::protocol::{CompareInput, Failure, RangeTask, Reply};
use super::compare_job::{compared, load, run_side, size, Side};
use super::io::post;
use super::pool::{self, Files, Read};
use crate::compare::CompareOptions;
use crate::profile::ProfileBuilder;
use crate::read::ranges::plan;
use crate::record::RowKind;
use std::collections::VecDeque;

/// Compares `inputs` (the baseline first) read by a pool of `workers`; the reply is posted when
/// the last side is compared. An error is posted as the reply; only a pool that cannot start
/// is returned (the worker then reads alone).
pub fn pooled(
    inputs: Vec<CompareInput>,
    options: CompareOptions,
    workers: u32,
) -> Result<(), Failure> {
    let total = inputs.iter().map(size).sum();
    let loading = Loading {
        sides: Vec::with_capacity(inputs.len()),
        inputs: inputs.into(),
        options,
        workers,
        total,
        done: 0,
        pooled: false,
    };
    loading.next()
}

/// The sides read so far, and the ones to read.
struct Loading {
    inputs: VecDeque<CompareInput>,
    sides: Vec<Side>,
    options: CompareOptions,
    workers: u32,
    total: u64,
    done: u64,
    /// A run was read by the pool (profiling files are read here).
    pooled: bool,
}

impl Loading {
    /// Reads the next side (a run in the pool), or compares them all.
    fn next(mut self) -> Result<(), Failure> {
        let Some(input) = self.inputs.pop_front() else {
            let workers = if self.pooled { self.workers } else { 1 };
            post(&compared(self.sides, self.options, workers).unwrap_or_else(Reply::Failed));
            return Ok(());
        };
        let bytes = size(&input);
        let (inputs, rollouts) = match input {
            CompareInput::Run { inputs, rollouts } => (inputs, rollouts),
            profiling => {
                match load(profiling, self.total, self.done) {
                    Ok(side) => self.sides.push(side),
                    Err(failure) => {
                        post(&Reply::Failed(failure));
                        return Ok(());
                    }
                }
                self.done += bytes;
                return self.next();
            }
        };
        let piece = pool::piece(bytes, self.workers);
        let mut ranges = plan(RowKind::Input, inputs.size() as u64, piece);
        ranges.extend(plan(RowKind::Rollout, rollouts.size() as u64, piece));
        let read = Read {
            files: Files {
                inputs: inputs.clone(),
                rollouts: rollouts.clone(),
            },
            ranges,
            task: RangeTask::ProfileOnly,
            setup: None,
            recorder: ProfileBuilder::new(inputs.name(), rollouts.name()),
            progress: (self.done, self.total),
        };
        let workers = self.workers;
        self.pooled = true;
        pool::read(workers, read, move |builder, _| {
            let side = run_side(builder, inputs, rollouts);
            let next = side.and_then(|side| {
                self.sides.push(side);
                self.done += bytes;
                self.next()
            });
            if let Err(failure) = next {
                post(&Reply::Failed(failure));
            }
        })
    }
}
