//! What to collect: the options a fresh run or a resume reads (the CLI fills them from flags).

use super::shard::Shard;
use std::path::PathBuf;

/// What to collect: `gymscope collect`'s flags, as given (values typed where they are used).
pub struct CollectOptions {
    pub input: Option<PathBuf>,
    pub output: PathBuf,
    pub agent: Option<String>,
    /// The v0.7.0 routing keys, as given (Hydra-typed where they are used).
    pub agent_map: Option<String>,
    pub fan_out: Option<String>,
    pub environment_routing_mode: Option<String>,
    pub environment_server_name: Option<String>,
    pub environment_server_routes: Option<String>,
    pub interleave_repeats: bool,
    /// v0.7.0's `retry_terminal_timeouts` (resume's terminal rule).
    pub retry_terminal_timeouts: bool,
    /// v0.7.0's `retry_invalid_judge_responses`: on resume, main rows with a truthy
    /// `invalid_judge_response` move to the sidecar and run again.
    pub retry_invalid_judge_responses: bool,
    /// v0.7.0's `dispatch_longest_first`: on resume, rows with known durations start first.
    pub dispatch_longest_first: bool,
    /// v0.7.0's `require_complete`: exit 1 unless every materialized rollout succeeded.
    pub require_complete: bool,
    /// v0.7.0's counted zeros: sidecar classes, and materialized rollouts without any row.
    pub count_failure_classes_as_zero: Vec<String>,
    pub count_missing_rollouts_as_zero: bool,
    /// Skip v0.7.0's agent/verifier pairing check.
    pub allow_unsupported_pairing: bool,
    pub limit: Option<u64>,
    pub num_repeats: Option<String>,
    pub num_repeats_add_seed: bool,
    pub concurrency: Option<usize>,
    pub resume: bool,
    pub temperature: Option<String>,
    pub top_p: Option<String>,
    pub max_output_tokens: Option<String>,
    pub responses_create_params: Vec<String>,
    pub disable_aggregation: bool,
    pub head_server: String,
    pub fail_fast: bool,
    /// Given `route_failures_to_sidecar=true` (v0.7.0 prints a line saying so).
    pub route_failures_to_sidecar: bool,
    pub timeout: Option<f64>,
    pub grace: f64,
    pub shard: Option<Shard>,
    pub no_progress: bool,
    /// `--progress-file`: `Some("")` for `<output stem>_progress` beside the output.
    pub progress_file: Option<std::path::PathBuf>,
    pub max_line_bytes: u64,
    /// The command line that continues this run, printed after a stop.
    pub resume_command: String,
    /// Upstream's end-of-run health reports, with these ignored check ids; `None`:
    /// `--no-health-check`.
    pub health_check: Option<Vec<String>>,
    /// `observability_enabled` with `model_call_capture_dir`: read the model servers' capture
    /// files into each row.
    pub capture_dir: Option<PathBuf>,
    /// v0.7.0's `dispatch_budget_s` (seconds) and `drain_margin_s`.
    pub dispatch_budget_s: Option<f64>,
    pub drain_margin_s: Option<f64>,
}
