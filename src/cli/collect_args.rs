//! The flags of the commands that talk to NeMo Gym's servers or check a run directory:
//! `collect` (a drop-in for `gym eval run --no-serve`) and `health-check`.

use super::value_parsers::{finite, line_limit};
use crate::collect::shard::Shard;
use clap::Args;
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct CollectArgs {
    /// Input tasks JSONL (required for a fresh run).
    #[arg(short = 'i', long, value_name = "FILE")]
    pub input: Option<PathBuf>,
    /// Output rollouts JSONL; the other files are named after it.
    #[arg(short = 'o', long, value_name = "OUT.jsonl")]
    pub output: PathBuf,
    /// Route every row to this agent, replacing any `agent_ref` in the data (NeMo Gym v0.7.0:
    /// `agent_map._default`; a warning lists the names it replaced).
    #[arg(short = 'a', long, value_name = "NAME")]
    pub agent: Option<String>,
    /// Re-route rows by their `agent_ref.name` or `task_source`: `{old: new, _default: A}`
    /// (v0.7.0 `agent_map`).
    #[arg(long, value_name = "{NAME: AGENT, ...}")]
    pub agent_map: Option<String>,
    /// Run each matching row once per listed agent, keyed by its `agent_ref.name` or
    /// `task_source`: `{key: [agent_a, agent_b]}` (v0.7.0 `fan_out`).
    #[arg(long, value_name = "{KEY: [AGENT, ...]}")]
    pub fan_out: Option<String>,
    /// How rows without a taskset are routed: `agent` (through their agent's environment
    /// server), `legacy` (all to --environment-server-name) or `taskset` (refused).
    #[arg(long, value_name = "MODE")]
    pub environment_routing_mode: Option<String>,
    /// The environment server of every flat row with `--environment-routing-mode legacy`.
    #[arg(long, value_name = "SERVER")]
    pub environment_server_name: Option<String>,
    /// Taskset rows' environment servers: `{taskset: server}`.
    #[arg(long, value_name = "{TASKSET: SERVER, ...}")]
    pub environment_server_routes: Option<String>,
    /// Start the repeats round by round (abcabc) instead of each task's back to back (aabbcc).
    #[arg(long)]
    pub interleave_repeats: bool,
    /// On --resume, retry rollouts whose last failure is a timeout or an environment fault even
    /// when marked terminal; `skipped` stays terminal (v0.7.0 `retry_terminal_timeouts`).
    #[arg(long)]
    pub retry_terminal_timeouts: bool,
    /// On --resume, move main rows marked `invalid_judge_response` to the failures sidecar
    /// (class `judge_invalid` unless they have one) and run them again (v0.7.0
    /// `retry_invalid_judge_responses`).
    #[arg(long)]
    pub retry_invalid_judge_responses: bool,
    /// On --resume, start the rows whose failed attempts recorded a duration first, longest
    /// first (v0.7.0 `dispatch_longest_first`).
    #[arg(long)]
    pub dispatch_longest_first: bool,
    /// Exit 1 (`EVAL FAILED: …`) unless every materialized rollout is in --output (v0.7.0
    /// `require_complete`; gymscope exits 3 for an incomplete run anyway).
    #[arg(long)]
    pub require_complete: bool,
    /// Count the rollouts whose last failure has one of these classes as scored zeros, in the
    /// aggregate metrics only (comma-separated, repeatable; v0.7.0
    /// `count_failure_classes_as_zero`).
    #[arg(long, value_name = "CLASS,...", value_delimiter = ',')]
    pub count_failure_classes_as_zero: Vec<String>,
    /// Count materialized rollouts that left no row at all as scored zeros, in the aggregate
    /// metrics only (v0.7.0 `count_missing_rollouts_as_zero`).
    #[arg(long)]
    pub count_missing_rollouts_as_zero: bool,
    /// Stop starting rollouts this many seconds after dispatch began, or earlier when less time
    /// is left than --drain-margin-s (else the p75 of finished rollouts): the rest write no row
    /// and run on --resume (v0.7.0 `dispatch_budget_s`; needs --concurrency).
    #[arg(long, value_parser = seconds, value_name = "SECONDS")]
    pub dispatch_budget_s: Option<f64>,
    /// The time a rollout needs left to be started under --dispatch-budget-s.
    #[arg(long, value_parser = seconds, value_name = "SECONDS", requires = "dispatch_budget_s")]
    pub drain_margin_s: Option<f64>,
    /// Skip the check that each resources server declaring `allowed_agents` accepts the type of
    /// the agent its rows run on (also the head config's `allow_unsupported_pairing` and
    /// `NEMO_GYM_ALLOW_UNSUPPORTED_PAIRING=1`, as v0.7.0 reads them).
    #[arg(long)]
    pub allow_unsupported_pairing: bool,
    /// Take only the first N input lines (0 = all).
    #[arg(long, value_name = "N")]
    pub limit: Option<u64>,
    /// Rollouts per task: an int, or per agent as `{agent_a: 4, _default: 1}`.
    #[arg(long, value_name = "N|{AGENT: N, ...}")]
    pub num_repeats: Option<String>,
    /// Rollouts in flight at once (default: unlimited, as upstream; in practice 1024).
    #[arg(long, value_name = "N")]
    pub concurrency: Option<usize>,
    /// Continue an interrupted collection from its files.
    #[arg(long)]
    pub resume: bool,
    /// Override `responses_create_params.temperature` in every row.
    #[arg(long, value_name = "T", allow_hyphen_values = true)]
    pub temperature: Option<String>,
    /// Override `responses_create_params.top_p` in every row.
    #[arg(long, value_name = "P")]
    pub top_p: Option<String>,
    /// Override `responses_create_params.max_output_tokens` in every row.
    #[arg(long, value_name = "N")]
    pub max_output_tokens: Option<String>,
    /// Override any `responses_create_params` field (repeatable; values typed as Hydra types them).
    #[arg(long = "responses-create-params", value_name = "KEY=VALUE")]
    pub responses_create_params: Vec<String>,
    /// Skip `/aggregate_metrics` and the metrics file.
    #[arg(long)]
    pub disable_aggregation: bool,
    /// The head server started by `gym env start` / `ng_run`.
    #[arg(long, value_name = "HOST:PORT", default_value = "127.0.0.1:11000")]
    pub head_server: String,
    /// Abort the run on an agent's HTTP error, as upstream does (default: record it in the
    /// failures sidecar and retry it on --resume).
    #[arg(long)]
    pub fail_fast: bool,
    /// v0.7.0's `route_failures_to_sidecar=true`, gymscope's way anyway: a failed `/run` becomes
    /// a sidecar row (the line saying so is printed).
    #[arg(long, conflicts_with = "fail_fast")]
    pub route_failures_to_sidecar: bool,
    /// Give up on one rollout after this long (recorded as a failure, retried on --resume).
    #[arg(long, value_parser = seconds, value_name = "SECONDS")]
    pub timeout: Option<f64>,
    /// After Ctrl-C/SIGTERM, wait this long for in-flight rollouts.
    #[arg(long, value_parser = seconds, value_name = "SECONDS", default_value_t = 30.0)]
    pub grace: f64,
    /// Run only slice I of N (0-based) of the materialized rows, into `<stem>-shardI-of-N.jsonl`.
    #[arg(long, value_name = "I/N", value_parser = parse_shard)]
    pub shard: Option<Shard>,
    /// Join shard outputs into --output and aggregate once.
    #[arg(long, conflicts_with = "shard")]
    pub merge: bool,
    /// With --merge: merge the shards there are when some of the N are missing (named), and
    /// exit 3 as an unfinished collection does.
    #[arg(long, requires = "merge")]
    pub allow_missing_shards: bool,
    /// With --merge: the shards' rollouts files (default: every `<output stem>-shardI-of-N.jsonl`).
    #[arg(value_name = "SHARD")]
    pub shards: Vec<PathBuf>,
    /// No progress bar.
    #[arg(long)]
    pub no_progress: bool,
    /// Publish the count of finished rollouts, a plain integer replaced atomically as they
    /// finish, in `<output stem>_progress` beside --output (or OUT): for orchestrators and
    /// `gymscope watch` (NeMo Gym PR #2638's convention). Off by default.
    #[arg(long, value_name = "OUT", num_args = 0..=1)]
    #[allow(clippy::option_option)] // clap's three cases: absent, the flag alone, with a path
    pub progress_file: Option<Option<PathBuf>>,
    /// Refuse lines longer than N bytes (default 1 GiB): a file that never ends a line fails
    /// with its name and line instead of filling memory.
    #[arg(long, value_parser = line_limit, value_name = "N", default_value_t = crate::read::jsonl::DEFAULT_MAX_LINE_BYTES)]
    pub max_line_bytes: u64,
    /// Put `seed=<rollout index>` into `responses_create_params.metadata.extra_body` of every
    /// materialized row (upstream's `+num_repeats_add_seed=true`).
    #[arg(long)]
    pub num_repeats_add_seed: bool,
    /// Accepted for `gym eval run --no-serve` command lines: gymscope never starts servers.
    #[arg(long)]
    pub no_serve: bool,
    /// Skip upstream's end-of-run health reports (`quality_summary.json`,
    /// `rollout_verdicts.jsonl`; see docs/collect.md "Observability").
    #[arg(long)]
    pub no_health_check: bool,
    /// Health check ids to skip (comma-separated, repeatable; unknown ids are refused).
    #[arg(long = "health-check-ignore", value_name = "ID,...")]
    pub health_check_ignore: Vec<String>,
    /// Accepted for upstream command lines (upstream's worker processes); gymscope checks in
    /// one streaming read.
    #[arg(long, value_name = "N")]
    pub health_check_workers: Option<usize>,
    /// `observability_enabled`: read the model servers' capture files into each row
    /// (needs --model-call-capture-dir; docs/collect.md "Observability").
    #[arg(long)]
    pub observability: bool,
    /// `model_call_capture_dir`: the absolute directory the model servers write
    /// `<rollout id>.capture.jsonl` into.
    #[arg(long, value_name = "DIR")]
    pub model_call_capture_dir: Option<PathBuf>,
    /// Accepted for older command lines: with observability, `ng_perf` (turns, tool calls,
    /// latency) is written into each row anyway, as NeMo Gym v0.7.0 does.
    /// Off by default: the pinned upstream collector (07d6b0d) writes none.
    #[arg(long, requires = "observability")]
    pub ng_perf: bool,
}

#[derive(Args, Debug)]
pub struct AggregateArgs {
    /// The rollouts files: a glob, or globs separated by commas (each shard's
    /// `_failures.jsonl` and `_materialized_inputs.jsonl` are skipped).
    #[arg(short = 'i', long, value_name = "GLOB[,GLOB...]", value_hint = clap::ValueHint::FilePath)]
    pub input_glob: String,
    /// The merged rollouts; the metrics go to `<stem>_aggregate_metrics.json` beside it and the
    /// health reports into its folder.
    #[arg(short = 'o', long, value_name = "OUT.jsonl")]
    pub output: PathBuf,
    /// Do not write the merged rollouts (upstream's `+merge_shards=false`): score the shards as
    /// they are.
    #[arg(long)]
    pub no_merge_shards: bool,
    /// The head server started by `gym env start` (the servers that score the rollouts).
    #[arg(long, value_name = "HOST:PORT", default_value = "127.0.0.1:11000")]
    pub head_server: String,
    /// Skip the health reports (`quality_summary.json`, `rollout_verdicts.jsonl`).
    #[arg(long)]
    pub no_health_check: bool,
    /// Health check ids to skip (comma-separated, repeatable; unknown ids are refused).
    #[arg(long = "health-check-ignore", value_name = "ID,...")]
    pub health_check_ignore: Vec<String>,
    /// Accepted for upstream command lines (upstream's worker processes); gymscope checks in
    /// one streaming read.
    #[arg(long, value_name = "N")]
    pub health_check_workers: Option<usize>,
    /// Count the rollouts whose last failure (in their shard's sidecar) has one of these classes
    /// as scored zeros, in the metrics only (v0.7.0 `count_failure_classes_as_zero`).
    #[arg(long, value_name = "CLASS,...", value_delimiter = ',')]
    pub count_failure_classes_as_zero: Vec<String>,
    /// Count materialized rollouts that left no row in their shard as scored zeros, in the
    /// metrics only (v0.7.0 `count_missing_rollouts_as_zero`).
    #[arg(long)]
    pub count_missing_rollouts_as_zero: bool,
    /// Refuse lines longer than N bytes (default 1 GiB).
    #[arg(long, value_parser = line_limit, value_name = "N", default_value_t = crate::read::jsonl::DEFAULT_MAX_LINE_BYTES)]
    pub max_line_bytes: u64,
}

#[derive(Args, Debug)]
pub struct HealthCheckArgs {
    /// The run directory (`quality_summary.json` and `rollout_verdicts.jsonl` are written there).
    #[arg(value_name = "RUN_DIR")]
    pub run_dir: PathBuf,
    /// The rollouts file, relative to RUN_DIR unless absolute.
    #[arg(long, value_name = "FILE", default_value = "rollouts.jsonl")]
    pub rollouts_file: PathBuf,
    /// Accepted for upstream command lines; gymscope checks in one streaming read.
    #[arg(long, value_name = "N")]
    pub workers: Option<usize>,
    /// Check ids to skip (comma-separated; unknown ids are refused). Given twice, the last
    /// wins, as upstream's argparse `store` does.
    #[arg(
        long = "ignore-checks",
        visible_alias = "ignore",
        value_name = "ID,...",
        value_parser = check_ids
    )]
    pub ignore_checks: Option<String>,
    /// Print the summary document (compact JSON) instead of the lines.
    #[arg(long)]
    pub json: bool,
    /// Refuse lines longer than N bytes (default 1 GiB).
    #[arg(long, value_parser = line_limit, value_name = "N", default_value_t = crate::read::jsonl::DEFAULT_MAX_LINE_BYTES)]
    pub max_line_bytes: u64,
}

/// v0.7.0's `_split_comma_separated` (`nemo_gym/cli/main.py`): no empty entry (`a,,b`, `a,`).
fn check_ids(s: &str) -> Result<String, String> {
    if s.split(',').any(|id| id.trim().is_empty()) {
        return Err("check IDs must be a comma-separated list without empty entries".into());
    }
    Ok(s.to_string())
}

fn non_negative(s: &str) -> Result<f64, String> {
    match finite(s)? {
        v if v >= 0.0 => Ok(v),
        v => Err(format!("must be >= 0, got {v}")),
    }
}

/// The longest wait a flag in seconds takes (about 31 years): a longer one cannot be a clock's
/// deadline (`1e20` overflowed it, a panic).
const MAX_SECONDS: f64 = 1e9;

/// A duration in seconds: finite, not negative, at most [`MAX_SECONDS`] (a usage error, exit 2).
fn seconds(s: &str) -> Result<f64, String> {
    match non_negative(s)? {
        v if v <= MAX_SECONDS => Ok(v),
        v => Err(format!(
            "{v} seconds is longer than any run (at most {MAX_SECONDS:e})"
        )),
    }
}

fn parse_shard(s: &str) -> Result<Shard, String> {
    s.parse()
}
