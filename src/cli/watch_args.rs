//! The flags of `gymscope watch`.

use clap::{Args, ValueEnum};
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct WatchArgs {
    /// Rollouts files being collected, globs of them (`results/rollouts-shard*.jsonl`, quoted),
    /// or folders (each `X.jsonl` beside an `X_materialized_inputs.jsonl`). A materialized-inputs
    /// file names its rollouts file.
    #[arg(value_name = "PATH|GLOB", required = true)]
    pub paths: Vec<PathBuf>,
    /// Print one snapshot and exit.
    #[arg(long)]
    pub once: bool,
    /// `text` (redrawn in place on a terminal, 80 columns) or `json` (one object per snapshot,
    /// a line each).
    #[arg(long, value_enum, default_value = "text")]
    pub format: WatchFormat,
    /// Seconds between refreshes.
    #[arg(long, value_parser = interval, value_name = "SECONDS", default_value_t = 2.0)]
    pub interval: f64,
    /// Call a shard stalled after this many minutes without a new row.
    #[arg(long, value_parser = minutes, value_name = "MINUTES", default_value_t = 10.0)]
    pub stall_after: f64,
    /// Refuse lines longer than N bytes (default 1 GiB).
    #[arg(long, value_parser = super::value_parsers::line_limit, value_name = "N", default_value_t = crate::read::jsonl::DEFAULT_MAX_LINE_BYTES)]
    pub max_line_bytes: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum WatchFormat {
    Text,
    Json,
}

fn interval(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if (0.05..=3600.0).contains(&v) => Ok(v),
        Ok(_) => Err("must be between 0.05 and 3600 seconds".into()),
        Err(_) => Err(format!("`{s}` is not a number of seconds")),
    }
}

fn minutes(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if (0.0..=100_000.0).contains(&v) => Ok(v),
        Ok(_) => Err("must be between 0 and 100000 minutes".into()),
        Err(_) => Err(format!("`{s}` is not a number of minutes")),
    }
}
