//! The data of `gymscope collect` (`gym eval run --no-serve`): plain data in, plain data out,
//! tested natively. The driver (files, HTTP, signals, progress) is the root package's
//! `collect`, which re-exports this module.
//! - [`key`]: rollout keys as Python compares them, parsing rows as orjson does
//! - [`paths`]: the names of the files derived from `--output`
//! - [`hydra`]: Hydra-typed override values (`0.5`, `{a: 4}`)
//! - [`materialize`]: input rows → materialized rows, exactly as upstream
//! - [`routing`]: an input row's route (`agent_map`, `fan_out`, taskset rows, routing modes)
//! - [`resume`]: which rows still need to run, from both output files
//! - [`environment`]: environment servers (v0.7.0): where a row's `/run` and aggregation go,
//!   and the `_ng_environment_server` / `_ng_result_type` stamp
//! - [`episode`]: a taskset row's episode request and the record of the server's reply
//! - [`route`]: where a result goes (main file, failures sidecar, nowhere) and what is merged into it
//! - [`latency`]: the per-task latency lines after a run (v0.7.0)
//! - [`task_source`]: the agent a `task_source` row runs on, and unknown agents refused (v0.7.0)
//! - [`shard`]: the deterministic `--shard i/n` slice
//! - [`aggregate`]: the `/aggregate_metrics` request and the metrics file
//! - [`counted`]: rollouts counted as scored zeros in the aggregate request (v0.7.0)
//! - [`observe`]: model-call capture records (`observe::capture`), the `ng_trajectory` of a
//!   result (`observe::projection`) and `ng_perf` (`observe::perf`)
//! - [`observations`]: harness agents' `ng_agent_observations`: validated, joined with the
//!   captured calls, folded into the trajectory; [`claude_compaction`]: Claude Code's compaction
//!   summary calls associated first

pub mod aggregate;
pub mod claude_compaction;
pub mod counted;
pub mod environment;
pub mod episode;
pub mod hydra;
pub mod key;
pub mod latency;
pub mod materialize;
pub mod observations;
pub mod observe;
pub mod paths;
pub mod resume;
pub mod route;
pub mod routing;
pub mod seed;
pub mod shard;
pub mod task_source;

/// A failure in the collection's data, named by file and line where there is one.
#[derive(Debug, thiserror::Error)]
pub enum CollectError {
    #[error("'{file}' line {line}: {msg}")]
    Line {
        file: String,
        line: u64,
        msg: String,
    },
    #[error("{0}")]
    Config(String),
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

impl CollectError {
    pub fn line(file: &str, line: u64, msg: impl Into<String>) -> Self {
        CollectError::Line {
            file: file.to_string(),
            line,
            msg: msg.into(),
        }
    }
}

pub type Row = serde_json::Map<String, serde_json::Value>;
