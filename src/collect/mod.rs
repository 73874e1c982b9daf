//! `gymscope collect`'s driver against running NeMo Gym servers (`gym eval run --no-serve`):
//! files, HTTP, signals and progress around the core's plain-data collection
//! (`gymscope_core::collect`, re-exported here so `collect::key` is one path).
//! - [`files`]: torn-tail repair, `NEMO_GYM_EXTRA_ROOTS`
//! - [`discover`]: the head server's config; [`head`]: its fetch and `/aggregate_metrics`
//! - [`http`]: the hyper client
//! - [`evidence`]: the end-of-run health reports
//! - [`history`]: the run's record on disk (exit 3)
//! - [`options`]: what to collect; [`command`]: a fresh run or a resume, end to end;
//!   [`fresh`]: its materialization step
//! - [`run`]: the tokio driver, writer thread, signals; [`zeros`]: the rows counted as scored
//!   zeros (v0.7.0)
//! - [`merge`]: `--merge`; [`aggregate_shards`]: `gymscope aggregate` (`gym eval aggregate`);
//!   [`progress`]: indicatif
//!
//! The command's flags are `cli::collect`'s.

pub use gymscope_core::collect::*;

pub mod aggregate_shards;
pub mod command;
pub mod discover;
pub mod evidence;
pub mod files;
pub mod fresh;
pub mod head;
pub mod history;
pub mod http;
pub mod merge;
pub mod options;
pub mod progress;
pub mod progress_file;
pub mod run;
pub mod zeros;

use crate::native::{atomic::WriteError, read::ReadError};

impl From<WriteError> for CollectError {
    fn from(e: WriteError) -> Self {
        CollectError::Config(e.to_string())
    }
}

impl From<ReadError> for CollectError {
    fn from(e: ReadError) -> Self {
        match e {
            ReadError::TooLong { file, line, limit } => CollectError::line(
                &file,
                line,
                format!("longer than {limit} bytes (the limit; raise it with --max-line-bytes)"),
            ),
            e => CollectError::Config(e.to_string()),
        }
    }
}
