//! Command-line flags, defined apart from their use.

use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;

pub use super::collect_args::{AggregateArgs, CollectArgs, HealthCheckArgs};
use super::value_parsers::{finite, line_limit, match_limit, positive, probability};
pub use super::watch_args::WatchArgs;

#[derive(Parser, Debug)]
#[command(
    name = "gymscope",
    version,
    about = "Look at NVIDIA NeMo Gym rollout data: reward profiles, offline."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
    /// Rewards for a run given as ATIF (a folder or file of ATIF trajectories): a Gym rollouts
    /// file, or JSONL rows of `trajectory_id` and `reward`. Any command that reads a run.
    #[arg(long, global = true, value_name = "FILE")]
    pub rewards: Option<PathBuf>,
}

// Parsed once per process: the size difference between variants does not matter.
#[allow(clippy::large_enum_variant)]
#[derive(Subcommand, Debug)]
pub enum Command {
    /// Reward profile of a collection: a drop-in for NeMo Gym v0.7.0's `gym eval profile`.
    ///
    /// Writes `<rollouts stem>_reward_profiling.jsonl`, `<rollouts stem>_agent_metrics.json` and
    /// `<rollouts stem>_repeat_level_metrics.json` next to the rollouts file (or in --out-dir)
    /// and prints upstream's summary. Rollouts whose `mask_sample` is true are left out of the
    /// statistics and counted in the completion.
    Profile(ProfileArgs),
    /// Check a pivot dataset (PivotRL) against the row contract: a drop-in for NeMo Gym's
    /// `validate_pivot_dataset.py`, reporting every error.
    ///
    /// Exit code 0 when every row is valid (upstream's summary on stdout), 1 when not (errors on
    /// stderr, upstream's `validation failed: line N: ...` first), 2 on a usage error.
    // As upstream's argparse: unambiguous flag prefixes work (`--agent`), a repeated flag's last
    // value wins.
    #[command(infer_long_args = true, args_override_self = true)]
    ValidatePivot(ValidatePivotArgs),
    /// Collect rollouts from running NeMo Gym servers: a drop-in for `gym eval run --no-serve`
    /// (`ng_collect_rollouts`), resumable and loss-free.
    ///
    /// Writes `<output stem>_materialized_inputs.jsonl` before sending anything, appends each
    /// rollout to --output (or `<stem>_failures.jsonl`), then `<stem>_aggregate_metrics.json`.
    Collect(CollectArgs),
    /// Merge and score rollouts collected in shards: a drop-in for NeMo Gym v0.7.0's
    /// `gym eval aggregate`.
    ///
    /// Writes --output (the rows of every file --input-glob matches, sorted by rollout key),
    /// `<output stem>_aggregate_metrics.json` (one entry per environment server, from the
    /// servers behind --head-server) and the health reports; says which rollouts the score
    /// misses, from the shards' `_failures.jsonl`.
    // argparse's rules, as upstream's command: a repeated flag's last value wins (`store`),
    // unambiguous prefixes work.
    #[command(infer_long_args = true, args_override_self = true)]
    Aggregate(AggregateArgs),
    /// Export rollouts' trajectories (`ng_trajectory`) as ATIF v1.7: a drop-in for NeMo Gym
    /// v0.7.0's `gym eval export --format atif`, byte for byte.
    ///
    /// Writes a new folder --output-dir with `<task>-<rollout>.json` per rollout and
    /// `manifest.jsonl` (each file's indices and SHA-256). All or nothing: any row that ATIF
    /// cannot carry completely is listed with its line and reason, and nothing is written.
    // argparse's rules, as upstream's command: a repeated flag's last value wins (`store`),
    // unambiguous prefixes work.
    #[command(infer_long_args = true, args_override_self = true)]
    Export(ExportArgs),
    /// Check ATIF trajectory files against the ATIF v1.7 schema as Harbor's validator does
    /// (versions 1.0 to 1.7), listing every error with its file, step and field.
    ///
    /// PATH is a file or a folder (every ATIF `.json` below it, Harbor's trials included).
    /// Exit code 0 when every file is valid, 1 when any error is found, 2 on a usage error.
    ValidateAtif(ValidateAtifArgs),
    /// A shareable report: one self-contained HTML file (opens offline, from file://, mail or
    /// any static host) with the summary, agent and task tables, plots and some conversations.
    ///
    /// From a run (--inputs and --rollouts) or from existing profile outputs (--profile, with
    /// `*_agent_metrics.json` taken from next to it unless --agent-metrics says otherwise).
    Report(ReportArgs),
    /// Compare a baseline with one or more candidate runs of the same tasks: is each better,
    /// on which tasks, at what token cost, and is the difference real? Tasks are paired by
    /// content; per metric a paired bootstrap 95% interval, a sign-flip permutation p-value
    /// (Holm across candidates) and a verdict; the minimum detectable effect; flips by task.
    ///
    /// Each run is a rollouts file (its `*_materialized_inputs.jsonl` taken from next to it),
    /// `INPUTS:ROLLOUTS`, a `*_reward_profiling.jsonl`, or a `*_aggregate_metrics.json` (paired
    /// by task index); recognized by content.
    Compare(CompareArgs),
    /// Build a pivot dataset (PivotRL) from rollouts or chat trajectories: one row per assistant
    /// decision point of the successful source trajectories.
    ///
    /// Writes OUT and, next to it, `<out stem>.skipped.jsonl` (every skip with its reason),
    /// `<out stem>.metrics.json`, `<out stem>.info.md` and `<out stem>.gym.yaml` (the Gym config
    /// that serves the dataset). Exit code 1 when no pivot was written.
    BuildPivot(BuildPivotArgs),
    /// Keep the pivots whose on-policy rollouts had mixed rewards (PivotRL's selection), from the
    /// pivot file and the reward profile of its collected rollouts.
    ///
    /// Writes --output, `<output stem>.selection.json`, `<output stem>.gym.yaml` (the build's
    /// config pointed at the selection) and, with --val-fraction, `<output stem>.val.jsonl`;
    /// prints the counts.
    SelectPivot(SelectPivotArgs),
    /// Choose tasks to train or evaluate on from a reward profile: a pass-rate or mean-reward
    /// band, a task-level query, a seeded (stratified) sample, a train/validation split.
    ///
    /// Writes each kept task's `sample` (the task as given to `gym eval run`) to --output, in
    /// task order, `<output stem>.selection.json` (counts and options) and, with
    /// --val-fraction, `<output stem>.val.jsonl`. Exit code 1 when no task is kept.
    SelectTasks(SelectTasksArgs),
    /// Rollout health: what went wrong in a run (truncated or empty answers, tool errors,
    /// malformed arguments, loops, tasks that never pass), per agent with the thresholds shown.
    ///
    /// Reads the rollouts file (and `<stem>_failures.jsonl`, upstream's `quality_summary.json` /
    /// `rollout_verdicts.jsonl` when they sit beside it). Findings never change the exit code
    /// unless --fail-on says so (exit 3).
    Health(HealthArgs),
    /// Find the rollouts where an expression holds: `gymscope query run.jsonl 'reward == 0 and
    /// output ~ "\\boxed"'` (the language: docs/query.md "gymscope query").
    ///
    /// A table on a terminal, `TASK ROLLOUT` keys otherwise; `--format jsonl` writes the matching
    /// rows byte for byte. A malformed expression is a usage error (exit 2) naming its column.
    Query(QueryArgs),
    /// Follow a run while it is collected, across shards: counts and ETA, reward per agent with
    /// its interval, failures, health, a line per shard (docs/watch.md). Ends when it is complete.
    Watch(WatchArgs),
    /// NeMo Gym's rollout health check on a finished run (`gym eval health-check`): upstream's
    /// check catalog over each row's `ng_trajectory`, writing `quality_summary.json` and
    /// `rollout_verdicts.jsonl` into RUN_DIR, then gymscope's behaviour line.
    // argparse's rules, as upstream's command: a repeated flag's last value wins (`store`),
    // unambiguous prefixes work.
    #[command(infer_long_args = true, args_override_self = true)]
    HealthCheck(HealthCheckArgs),
}

/// `--format` of `query`.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum QueryFormat {
    /// Task, rollout, agent, reward, output tokens, line, the first text match.
    Table,
    /// `TASK ROLLOUT` per line, in file order.
    Keys,
    /// The matching rows as they are in the file.
    Jsonl,
    /// One document: count, expression, keys, per-agent counts.
    Json,
    /// A JSON object per matching rollout: task, rollout, agent, reward, token counts, tool
    /// calls, turns, health flags, then its numeric fields (`gymscope.rollouts()`'s columns).
    Rows,
}

#[derive(Args, Debug)]
pub struct QueryArgs {
    /// `ROLLOUTS EXPR`, or `EXPR` alone with --rollouts.
    #[arg(value_name = "ROLLOUTS EXPR", num_args = 1..=2, required = true)]
    pub positional: Vec<String>,
    /// Query the embedded example run (three agents, 30 tasks × 4 repeats): give only the expression.
    #[arg(long, conflicts_with_all = ["rollouts", "inputs"])]
    pub example: bool,
    /// The rollouts JSONL (instead of the first positional), as for `profile`.
    #[arg(long, value_name = "FILE")]
    pub rollouts: Option<PathBuf>,
    /// The run's `*_materialized_inputs.jsonl`: the agent of a rollout row without `agent_ref`.
    #[arg(long, value_name = "FILE")]
    pub inputs: Option<PathBuf>,
    /// Output: `table` on a terminal, `keys` otherwise, unless given.
    #[arg(long, value_enum)]
    pub format: Option<QueryFormat>,
    /// Print only the number of matching rollouts.
    #[arg(long)]
    pub count: bool,
    /// Stop after N matches (at least 1; `--count` counts without printing).
    #[arg(long, value_name = "N", value_parser = match_limit)]
    pub limit: Option<u64>,
    /// Extra table columns (fields of the language: `wer,usage.total_tokens`).
    #[arg(long, value_name = "A,B,…", value_delimiter = ',')]
    pub fields: Vec<String>,
    /// A field the run does not have is an error (listing the fields it has), not a missing value.
    #[arg(long)]
    pub strict: bool,
    /// `task.pass_rate` and `task.group` count a rollout as passing at reward >= X.
    #[arg(long, value_parser = finite, value_name = "X", default_value_t = crate::reward_group::DEFAULT_THRESHOLD)]
    pub pass_threshold: f64,
    /// `health.*` judge every rollout as one action (see `health --single-step`).
    #[arg(long)]
    pub single_step: bool,
    /// Refuse lines longer than N bytes (default 1 GiB).
    #[arg(long, value_parser = line_limit, value_name = "N", default_value_t = crate::read::jsonl::DEFAULT_MAX_LINE_BYTES)]
    pub max_line_bytes: u64,
}

/// `--format` of `health`.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum HealthFormat {
    Text,
    Json,
}

/// `--fail-on` of `health`: the level of a rate that makes the exit code 3.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum FailOn {
    Bad,
    Warn,
}

#[derive(Args, Debug)]
pub struct HealthArgs {
    /// The rollouts JSONL written by `gym eval run` (or `gymscope collect`).
    #[arg(value_name = "ROLLOUTS", required_unless_present_any = ["rollouts_flag", "example"])]
    pub rollouts: Option<PathBuf>,
    /// The embedded example run (three agents, 30 tasks × 4 repeats, with its materialized inputs).
    #[arg(long, conflicts_with_all = ["rollouts", "rollouts_flag", "inputs", "write"])]
    pub example: bool,
    /// The rollouts JSONL, as a flag (as for `profile` and `query`).
    #[arg(long = "rollouts", value_name = "FILE", conflicts_with = "rollouts")]
    pub rollouts_flag: Option<PathBuf>,
    /// The run's `*_materialized_inputs.jsonl`: what was expected, for missing tasks, missing
    /// rollouts and coverage (unknown without it).
    #[arg(long, value_name = "FILE")]
    pub inputs: Option<PathBuf>,
    /// Output on stdout: the text report or the JSON document (see docs/health.md "Rollout health").
    #[arg(long, value_enum, default_value = "text")]
    pub format: HealthFormat,
    /// A rollout passes when its reward is at least X.
    #[arg(long, value_parser = finite, value_name = "X", default_value_t = crate::reward_group::DEFAULT_THRESHOLD)]
    pub pass_threshold: f64,
    /// Exit with code 3 when a rate passes its `bad` (or `warn`) threshold.
    #[arg(long, value_enum, value_name = "LEVEL")]
    pub fail_on: Option<FailOn>,
    /// Also write the JSON document to `<rollouts stem>_gymscope_health.json` beside the rollouts.
    #[arg(long)]
    pub write: bool,
    /// Judge every rollout as one action (a tool call is its answer), as for a run of pivot rows;
    /// without it a rollout is single-step when its row or materialized input carries
    /// `expected_action` or its agent is a single-step one (docs/health.md "Single-step runs").
    #[arg(long)]
    pub single_step: bool,
    /// Refuse lines longer than N bytes (default 1 GiB).
    #[arg(long, value_parser = line_limit, value_name = "N", default_value_t = crate::read::jsonl::DEFAULT_MAX_LINE_BYTES)]
    pub max_line_bytes: u64,
}

#[derive(Args, Debug)]
pub struct ValidatePivotArgs {
    /// The pivot JSONL file.
    #[arg(long, value_name = "FILE")]
    pub path: PathBuf,
    /// Every row's `agent_ref.name` must equal NAME (also the name `--fix` fills in).
    #[arg(long, value_name = "NAME")]
    pub agent_ref: Option<String>,
    /// Do not require expected tool names to appear in `responses_create_params.tools`.
    #[arg(long)]
    pub no_check_tool_names: bool,
    /// Require a non-null value at a dotted path (e.g. `meta_info.depth`). Repeatable.
    #[arg(long, value_name = "DOTTED")]
    pub require_field: Vec<String>,
    /// Require a non-null value at one of comma-separated dotted paths. Repeatable.
    #[arg(long, value_name = "A,B,...")]
    pub require_any_field: Vec<String>,
    /// Accept `function_call_batch` expected actions (parallel calls; the resource server
    /// supports them, upstream's validator does not).
    #[arg(long)]
    pub allow_batch: bool,
    /// Stop at the first error, as upstream does.
    #[arg(long)]
    pub fail_fast: bool,
    /// Show at most N errors in detail (all are counted).
    #[arg(long, value_name = "N", default_value_t = 50)]
    pub max_errors: usize,
    /// Output format: `text`, or `json` (one document on stdout, for machines).
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// Write a normalized copy that passes to OUT: drops null fields of
    /// `responses_create_params`, fills `agent_ref` from --agent-ref; lists rows it cannot fix.
    #[arg(long, value_name = "OUT")]
    pub fix: Option<PathBuf>,
    /// Also print conversion metrics: rejected rows by reason, action types, tools, depth,
    /// source reward groups, provenance coverage.
    #[arg(long)]
    pub stats: bool,
    /// Refuse lines longer than N bytes (default 1 GiB): a file that never ends a line fails
    /// with its name and line instead of filling memory.
    #[arg(long, value_parser = line_limit, value_name = "N", default_value_t = crate::read::jsonl::DEFAULT_MAX_LINE_BYTES)]
    pub max_line_bytes: u64,
    /// A NeMo Gym checkout: also check every row's `responses_create_params` against Gym's
    /// Pydantic request model (unknown keys, input items, tools, `stream`, `metadata`), as
    /// upstream's `--gym-repo` does; gymscope checks the same rules itself.
    #[arg(long, value_name = "DIR")]
    pub gym_repo: Option<PathBuf>,
}

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Text,
    Json,
}

#[derive(Args, Debug)]
pub struct ProfileArgs {
    /// The `*_materialized_inputs.jsonl` written by `gym eval run` (not needed when --rollouts
    /// is ATIF).
    #[arg(long, value_name = "FILE")]
    pub inputs: Option<PathBuf>,
    /// The rollouts JSONL written by `gym eval run`, or ATIF trajectories (a folder Gym's
    /// export or Harbor wrote, a folder of ATIF files, one ATIF file).
    #[arg(long, value_name = "FILE")]
    pub rollouts: PathBuf,
    /// Profile the completed rollouts of a partial collection (tasks without rollouts are dropped).
    #[arg(long)]
    pub allow_partial_rollouts: bool,
    /// Write the two output files here instead of next to the rollouts file.
    #[arg(long, value_name = "OUT_DIR")]
    pub out_dir: Option<PathBuf>,
    /// Refuse lines longer than N bytes (default 1 GiB): a file that never ends a line fails
    /// with its name and line instead of filling memory.
    #[arg(long, value_parser = line_limit, value_name = "N", default_value_t = crate::read::jsonl::DEFAULT_MAX_LINE_BYTES)]
    pub max_line_bytes: u64,
}

#[derive(Args, Debug)]
pub struct ExportArgs {
    /// Output trajectory format (ATIF is the one there is).
    #[arg(long, value_enum, default_value_t = ExportFormat::Atif)]
    pub format: ExportFormat,
    /// Gym rollouts JSONL to export.
    #[arg(long, value_name = "FILE")]
    pub rollouts: PathBuf,
    /// New folder for the exported trajectories (an existing path is refused).
    #[arg(long, value_name = "OUT_DIR")]
    pub output_dir: PathBuf,
    /// Stable identifier for the source evaluation run (`session_id`, and the first part of
    /// each `trajectory_id`). Default: the rollouts file's name without `.jsonl`.
    #[arg(long, value_name = "S")]
    pub session_id: Option<String>,
    /// Version of the agent that produced the rollouts (`agent.version`): required, as upstream.
    #[arg(long, value_name = "V")]
    pub agent_version: Option<String>,
    /// Refuse lines longer than N bytes (default 1 GiB).
    #[arg(long, value_parser = line_limit, value_name = "N", default_value_t = crate::read::jsonl::DEFAULT_MAX_LINE_BYTES)]
    pub max_line_bytes: u64,
}

#[derive(Args, Debug)]
pub struct ValidateAtifArgs {
    /// ATIF files or folders.
    #[arg(value_name = "PATH", required = true)]
    pub paths: Vec<PathBuf>,
    /// Do not check that local images the trajectories reference exist.
    #[arg(long)]
    pub no_validate_images: bool,
}

/// `--format` of `export`.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExportFormat {
    Atif,
}

#[derive(Args, Debug)]
pub struct ReportArgs {
    /// The `*_materialized_inputs.jsonl` written by `gym eval run` (with --rollouts).
    #[arg(
        long,
        value_name = "FILE",
        requires = "rollouts",
        conflicts_with = "profile"
    )]
    pub inputs: Option<PathBuf>,
    /// The rollouts JSONL written by `gym eval run` (with --inputs), or an ATIF run (a folder or
    /// file, which brings its own inputs).
    #[arg(long, value_name = "FILE", conflicts_with = "profile")]
    pub rollouts: Option<PathBuf>,
    /// An existing `*_reward_profiling.jsonl` (upstream's or gymscope's) instead of a run.
    #[arg(long, value_name = "FILE", required_unless_present_any = ["inputs", "rollouts", "example"])]
    pub profile: Option<PathBuf>,
    /// The embedded example run (three agents, 30 tasks × 4 repeats) instead of files of your own; the
    /// page is written to `example_report.html` here unless `-o` says where.
    #[arg(long, conflicts_with_all = ["inputs", "rollouts", "profile"])]
    pub example: bool,
    /// The `*_agent_metrics.json` for --profile (default: the one next to it, if any).
    #[arg(long, value_name = "FILE", requires = "profile")]
    pub agent_metrics: Option<PathBuf>,
    /// Output HTML file (default: `<stem>_report.html` next to the rollouts or profile file).
    #[arg(short = 'o', long, value_name = "OUT.html")]
    pub output: Option<PathBuf>,
    /// Title shown on the page (default: the rollouts file's stem).
    #[arg(long)]
    pub title: Option<String>,
    /// A date (or any text) shown under the title; none by default, so the same inputs give
    /// the same file.
    #[arg(long)]
    pub date: Option<String>,
    /// Tasks whose conversations are included (the first N tasks; with --profile, their prompts).
    #[arg(long, value_name = "N", default_value_t = crate::report::DEFAULT_CONVERSATION_TASKS)]
    pub conversations: usize,
    /// Profile the completed rollouts of a partial collection.
    #[arg(long)]
    pub allow_partial_rollouts: bool,
    /// Judge every rollout of the Health section as one action (see `health --single-step`).
    #[arg(long)]
    pub single_step: bool,
    /// Open the page filtered to the rollouts where EXPR holds (the query language of
    /// `gymscope query`; needs --inputs and --rollouts): its matches are stored in the page.
    #[arg(long, value_name = "EXPR", conflicts_with = "profile")]
    pub query: Option<String>,
    /// Refuse lines longer than N bytes (default 1 GiB): a file that never ends a line fails
    /// with its name and line instead of filling memory.
    #[arg(long, value_parser = line_limit, value_name = "N", default_value_t = crate::read::jsonl::DEFAULT_MAX_LINE_BYTES)]
    pub max_line_bytes: u64,
}

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum PairByArg {
    /// By the task's content (prompt, tools, instructions): robust to reordering.
    Content,
    /// By `_ng_task_index` (for a prompt change).
    Index,
}

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum CompareFormat {
    /// Each pair's headline, transitions and largest changes, then the verdicts, power, flips.
    Text,
    /// One document: the first candidate's two-run schema plus a `candidates` list.
    Json,
    /// GitHub Markdown for a pull request: summary, verdict table, power, largest flips.
    Md,
}

#[derive(Args, Debug)]
pub struct CompareArgs {
    /// The baseline, then one or more candidates: each a rollouts file, `INPUTS:ROLLOUTS`, a
    /// `*_reward_profiling.jsonl` or a `*_aggregate_metrics.json`. With --baseline, all of these
    /// are candidates.
    #[arg(value_name = "RUN", value_hint = clap::ValueHint::AnyPath)]
    pub runs: Vec<String>,
    /// The embedded example comparison (two generated checkpoints of the same 24 tasks, the
    /// app's "Load the example comparison") instead of runs of your own.
    #[arg(long, conflicts_with_all = ["runs", "baseline", "candidates"])]
    pub example: bool,
    /// The baseline run's rollouts (NeMo Gym v0.7.0's `gym eval compare` spelling): also writes
    /// upstream's `compare_report.json` and `compare_report.md` from each run's
    /// `<stem>_aggregate_metrics.json` (computed from the rollouts when there is none).
    #[arg(long, value_name = "ROLLOUTS", value_hint = clap::ValueHint::FilePath)]
    pub baseline: Option<String>,
    /// The candidate runs, each paired with the baseline (commas or several values).
    #[arg(long, value_name = "RUN", num_args = 1.., value_delimiter = ',', value_hint = clap::ValueHint::FilePath)]
    pub candidates: Vec<String>,
    /// With --baseline: the baseline's aggregate metrics, when not `<stem>_aggregate_metrics.json`.
    #[arg(long, value_name = "FILE", requires = "baseline")]
    pub baseline_agg_metrics: Option<PathBuf>,
    /// With --baseline: the candidates' aggregate metrics, in --candidates order.
    #[arg(long, value_name = "FILE", requires = "baseline", num_args = 1.., value_delimiter = ',')]
    pub candidates_agg_metrics: Vec<PathBuf>,
    /// With --baseline: the agent to compare on every side (default: every agent both runs have).
    #[arg(long, value_name = "NAME", requires = "baseline")]
    pub agent: Option<String>,
    /// With --baseline: the agent read from the baseline's metrics.
    #[arg(long, value_name = "NAME", requires = "baseline")]
    pub baseline_agent: Option<String>,
    /// With --baseline: the agent read from each candidate's metrics, in --candidates order.
    #[arg(long, value_name = "NAME", requires = "baseline", num_args = 1.., value_delimiter = ',')]
    pub candidate_agents: Vec<String>,
    /// With --baseline: where `compare_report.*` go (default: the candidate's directory).
    #[arg(long, short = 'o', value_name = "OUT_DIR", requires = "baseline")]
    pub output_dir: Option<PathBuf>,
    /// With --baseline: which of `compare_report.md` and `.json` to write.
    #[arg(long, value_enum, default_value_t = ReportFormatArg::Both)]
    pub report_format: ReportFormatArg,
    /// `text`, `json` (one document) or `md` (GitHub Markdown).
    #[arg(long, value_enum, default_value_t = CompareFormat::Text)]
    pub format: CompareFormat,
    /// Significance level of the verdicts, after Holm's correction across the candidates.
    #[arg(long, value_parser = probability, value_name = "A", default_value_t = crate::compare::multi::DEFAULT_ALPHA)]
    pub alpha: f64,
    /// An effect on the mean reward to plan for: the repeats per task (or tasks) needed to
    /// detect it at 80% power.
    #[arg(long, value_parser = positive, value_name = "D")]
    pub effect: Option<f64>,
    /// Exit with code 3 when any candidate's mean reward is `worse` (for CI).
    #[arg(long)]
    pub fail_if_worse: bool,
    /// Also write a self-contained HTML comparison report here.
    #[arg(long, value_name = "OUT.html")]
    pub report: Option<PathBuf>,
    /// Title of the report (default: "A vs B" from the file names).
    #[arg(long)]
    pub title: Option<String>,
    /// A date (or any text) shown under the report's title; none by default.
    #[arg(long)]
    pub date: Option<String>,
    /// Regressed tasks whose conversations the report shows side by side (worst first).
    #[arg(long, value_name = "N", default_value_t = crate::report::DEFAULT_CONVERSATION_TASKS)]
    pub conversations: usize,
    /// Seed of the paired bootstrap (10,000 resamples) and of the permutation test: the same
    /// seed gives the same interval and p-values.
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub seed: u64,
    /// How tasks are paired.
    #[arg(long, value_enum, default_value_t = PairByArg::Content)]
    pub pair_by: PairByArg,
    /// A rollout succeeds when its reward is at least this (for the reward groups).
    #[arg(long, value_parser = finite, value_name = "X", default_value_t = crate::reward_group::DEFAULT_THRESHOLD)]
    pub pass_threshold: f64,
    /// Compare the completed rollouts of partial collections, as for `profile`.
    #[arg(long)]
    pub allow_partial_rollouts: bool,
    /// Refuse lines longer than N bytes (default 1 GiB), naming the file and line.
    #[arg(long, value_parser = line_limit, value_name = "N", default_value_t = crate::read::jsonl::DEFAULT_MAX_LINE_BYTES)]
    pub max_line_bytes: u64,
}

/// `--report-format` of `compare` (upstream's choices).
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReportFormatArg {
    Md,
    Json,
    Both,
}

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum SourceFormatArg {
    Auto,
    Responses,
    Chat,
    Conversational,
    Generic,
}

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReasoningArg {
    Keep,
    Drop,
}

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum MultiCallArg {
    Skip,
    Batch,
}

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum SelfcheckArg {
    Error,
    Skip,
}

#[derive(Args, Debug)]
pub struct BuildPivotArgs {
    /// Source file: Gym rollouts, tau2 rollouts, chat trajectories or generic candidate groups.
    #[arg(long, value_name = "FILE")]
    pub input: PathBuf,
    /// The pivot JSONL to write; the other outputs are named after it.
    #[arg(long, value_name = "OUT.jsonl")]
    pub output: PathBuf,
    /// `agent_ref.name` of every row and the agent block of the Gym config.
    #[arg(long, value_name = "NAME")]
    pub agent_ref: String,
    /// Source layout (default: detected from the first non-blank line).
    #[arg(long, value_enum, default_value_t = SourceFormatArg::Auto)]
    pub source_format: SourceFormatArg,
    /// A source rollout succeeds when its reward is at least this; only successes are converted.
    #[arg(long, value_parser = finite, value_name = "X", default_value_t = 1.0)]
    pub min_reward: f64,
    /// Dotted path of the reward (default `reward`; chat rows: `metadata.reward`).
    #[arg(long, value_name = "DOTTED")]
    pub reward_field: Option<String>,
    /// Dotted path that groups rollouts of one task (rows without it are a group of one).
    #[arg(long, value_name = "DOTTED", default_value = "_ng_task_index")]
    pub group_by: String,
    /// Task-group classes that may contribute pivots (`mixed`, `all_success`, `all_failure`).
    #[arg(long, value_name = "LIST", default_value = "mixed,all_success")]
    pub source_groups: String,
    /// Also use assistant turns inside `input` (after its first user message) as decision points.
    #[arg(long)]
    pub include_input_turns: bool,
    /// Keep earlier reasoning items in the prefix (`keep`) or remove them (`drop`).
    #[arg(long, value_enum, default_value_t = ReasoningArg::Keep)]
    pub reasoning: ReasoningArg,
    /// Only tool-call pivots (message targets are skipped as `message_pivot_disabled`).
    #[arg(long)]
    pub tool_calls_only: bool,
    /// Turns with several calls: `skip` (audit record), or `batch` (`function_call_batch` rows and
    /// a config with parallel rewarding; such rows need `validate-pivot --allow-batch`).
    #[arg(long, value_enum, default_value_t = MultiCallArg::Skip)]
    pub multi_call: MultiCallArg,
    /// Extra tool schemas (a JSON array, chat or Responses form) added when a name is missing.
    #[arg(long, value_name = "FILE")]
    pub tools: Option<PathBuf>,
    /// Do not require the expected tool among the tools.
    #[arg(long)]
    pub no_check_tool_names: bool,
    /// Skip all but the last of N or more consecutive calls of the same tool.
    #[arg(long, value_name = "N")]
    pub doom_loop_threshold: Option<u32>,
    /// Skip calls whose tool output reads like an error.
    #[arg(long)]
    pub skip_tool_errors: bool,
    /// Stop after N pivot rows.
    #[arg(long, value_name = "N")]
    pub limit: Option<u64>,
    /// Add a top-level `_ng_task_index` (the row's position) for files that will be sharded.
    #[arg(long)]
    pub stamp_task_index: bool,
    /// Write the Gym config here instead of `<out stem>.gym.yaml`.
    #[arg(long, value_name = "OUT.yaml")]
    pub config_out: Option<PathBuf>,
    /// License of the dataset entries (one Gym accepts).
    #[arg(long, default_value = "TBD")]
    pub license: String,
    /// Add a validation dataset entry with this path.
    #[arg(long, value_name = "PATH")]
    pub validation_path: Option<String>,
    /// Description of the resources server in the config.
    #[arg(long)]
    pub description: Option<String>,
    /// The comparator's word-overlap threshold for multi-word string arguments (0 to 0.5).
    #[arg(long, value_parser = finite, value_name = "X", default_value_t = 0.1)]
    pub word_count_similarity_threshold: f64,
    /// Write the dataset path in the config as given instead of absolute.
    #[arg(long)]
    pub relative_paths: bool,
    /// A row that does not score 1.0 with its own expected action: fail the build or skip it.
    #[arg(long, value_enum, default_value_t = SelfcheckArg::Error)]
    pub on_selfcheck_fail: SelfcheckArg,
}

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum SortArg {
    None,
    Difficulty,
    Variance,
}

#[derive(Args, Debug)]
pub struct SelectPivotArgs {
    /// The pivot JSONL written by build-pivot.
    #[arg(long, value_name = "FILE")]
    pub pivots: PathBuf,
    /// `*_reward_profiling.jsonl` of the pivots' collected rollouts (`gymscope profile`).
    #[arg(long, value_name = "FILE")]
    pub profile: PathBuf,
    /// The selected pivots; `<stem>.selection.json` is written next to it.
    #[arg(long, value_name = "OUT.jsonl")]
    pub output: PathBuf,
    /// Pivots with fewer rollouts are `insufficient_rollouts`.
    #[arg(long, value_name = "N", default_value_t = 8)]
    pub min_rollouts: u32,
    /// A rollout succeeds when its reward is at least this.
    #[arg(long, value_parser = finite, value_name = "X", default_value_t = 1.0)]
    pub success_threshold: f64,
    /// Classes to keep (default `mixed`; also `all_success`, `all_failure`, `unprofiled`,
    /// `insufficient_rollouts`, for inspection).
    #[arg(long, value_name = "CLASSES", default_value = "mixed")]
    pub keep: String,
    /// Keep at most N pivots, dropping the easiest (highest pass rate) first.
    #[arg(long, value_name = "N")]
    pub max_pivots: Option<u64>,
    /// Drop pivots whose pass rate is above T (T > 0).
    #[arg(long, value_parser = finite, value_name = "T")]
    pub difficulty_threshold: Option<f64>,
    /// PivotRL's λ_diff: keep a pivot when its on-policy rewards vary and their mean is below X.
    #[arg(long, value_parser = finite, value_name = "X")]
    pub max_mean: Option<f64>,
    /// Drop a pivot whose prefix and expected action equal an earlier kept pivot's.
    #[arg(long)]
    pub dedupe_prefix: bool,
    /// Also write `<output stem>.val.jsonl`: this share of the kept pivots, whole source
    /// trajectories (`trajectory_id`) only, none in --output.
    #[arg(long, value_parser = finite, value_name = "F")]
    pub val_fraction: Option<f64>,
    /// The seed of the validation split.
    #[arg(long, value_name = "S", default_value_t = 0)]
    pub seed: u64,
    /// The build's Gym config (default `<pivots stem>.gym.yaml` beside --pivots); written again
    /// as `<output stem>.gym.yaml`, pointing at the selection.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Output order: file order, ascending pass rate, or descending reward variance.
    #[arg(long, value_enum, default_value_t = SortArg::None)]
    pub sort: SortArg,
}

#[derive(Args, Debug)]
pub struct SelectTasksArgs {
    /// `*_reward_profiling.jsonl` (`gym eval profile` or `gymscope profile`).
    #[arg(long, value_name = "FILE")]
    pub profile: PathBuf,
    /// The curated tasks, one JSON row each (an input dataset for `gym eval run`).
    #[arg(long, short = 'o', value_name = "OUT.jsonl")]
    pub output: PathBuf,
    /// A rollout passes when its reward is at least this.
    #[arg(long, alias = "success-threshold", value_parser = finite, value_name = "X", default_value_t = crate::reward_group::DEFAULT_THRESHOLD)]
    pub pass_threshold: f64,
    /// Keep tasks whose pass rate is at least A (inclusive).
    #[arg(long, value_parser = finite, value_name = "A", default_value_t = 0.0)]
    pub min_pass: f64,
    /// Keep tasks whose pass rate is at most B (inclusive).
    #[arg(long, value_parser = finite, value_name = "B", default_value_t = 1.0)]
    pub max_pass: f64,
    /// Keep tasks whose mean reward is at least X.
    #[arg(long, value_parser = finite, value_name = "X")]
    pub min_mean: Option<f64>,
    /// Keep tasks whose mean reward is at most X.
    #[arg(long, value_parser = finite, value_name = "X")]
    pub max_mean: Option<f64>,
    /// Keep only `mixed` tasks (drop those always or never solved).
    #[arg(long)]
    pub drop_saturated: bool,
    /// Drop tasks with fewer rollouts that have a numeric reward.
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub min_rollouts: u32,
    /// A task-level expression of the query language: `task.pass_rate`, `task.mean_reward`,
    /// `task.group`, `task`, `agent`, any profile column (`` `mean/wer` ``), `sample.FIELD`.
    #[arg(long = "where", value_name = "EXPR")]
    pub filter: Option<String>,
    /// Keep K of the selected tasks, sampled by --seed (written in task order).
    #[arg(long, value_name = "K")]
    pub max_tasks: Option<u64>,
    /// The seed of the sample and of the split.
    #[arg(long, value_name = "S", default_value_t = 0)]
    pub seed: u64,
    /// With --max-tasks: keep each value's share of `agent` or of a `sample` field.
    #[arg(long, value_name = "FIELD", requires = "max_tasks")]
    pub stratify: Option<String>,
    /// With --max-tasks: prefer tasks whose pass rate is nearest P.
    #[arg(long, value_parser = finite, value_name = "P", requires = "max_tasks")]
    pub target_pass: Option<f64>,
    /// Also write `<output stem>.val.jsonl` with round(F × kept) tasks, none in --output.
    #[arg(long, value_parser = finite, value_name = "F")]
    pub val_fraction: Option<f64>,
    /// With --val-fraction: no value of this `sample` field (or `agent`) in both files.
    #[arg(long, value_name = "FIELD", requires = "val_fraction")]
    pub group_by: Option<String>,
    /// Add `profile_info` (rollouts, rewards, mean, std, variance, group, pass rate) to each row.
    #[arg(long)]
    pub annotate: bool,
}

#[cfg(test)]
mod tests {
    /// clap's own consistency checks of the definition (conflicting names, bad defaults, …).
    #[test]
    fn the_command_line_definition_is_consistent() {
        use clap::CommandFactory;
        super::Cli::command().debug_assert();
    }
}
