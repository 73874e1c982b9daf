//! What a read in the pool is: the files its ranges are of, their size, the task and the
//! recorder.

use super::super::super::protocol::{RangeTask, Request};
use crate::read::job::Job;
use crate::read::ranges::ByteRange;
use web_sys::File;

/// Range sizes: several per worker (the last ones end together), each large enough to be cheap.
const MIN_RANGE: u64 = 1 << 20;
const MAX_RANGE: u64 = 32 << 20;

/// The range size for `total` bytes read by `workers`.
pub fn piece(total: u64, workers: u32) -> u64 {
    (total / (4 * u64::from(workers.max(1)))).clamp(MIN_RANGE, MAX_RANGE)
}

/// The files a read's ranges are of, by kind.
pub struct Files {
    pub inputs: File,
    pub rollouts: File,
}

impl Files {
    /// One file read alone (a pivot dataset): its ranges are planned as `RowKind::Rollout`.
    pub fn one(file: &File) -> Files {
        Files {
            inputs: file.clone(),
            rollouts: file.clone(),
        }
    }
}

/// One read in the pool.
pub struct Read<R: Job> {
    pub files: Files,
    /// Each file's ranges in file order, the files in the order they are recorded.
    pub ranges: Vec<ByteRange>,
    pub task: RangeTask,
    /// A request every pool worker takes before its first range (a query's matching setup, a pivot validation's options).
    pub setup: Option<Request>,
    pub recorder: R,
    /// Progress: bytes done before this read, and the job's whole.
    pub progress: (u64, u64),
}
