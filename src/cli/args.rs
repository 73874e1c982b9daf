//! Command-line flags, defined apart from their use.

use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;

#[derive(Parser, Debug)]
#[command(
    name = "gymscope",
    version,
    about = "Look at NVIDIA NeMo Gym rollout data: reward profiles, offline."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

// Parsed once per process: the size difference between variants does not matter.
#[allow(clippy::large_enum_variant)]
#[derive(Subcommand, Debug)]
pub enum Command {
    /// Reward profile of a collection: a drop-in for `gym eval profile` (`ng_reward_profile`).
    ///
    /// Writes `<rollouts stem>_reward_profiling.jsonl` and `<rollouts stem>_agent_metrics.json`
    /// next to the rollouts file (or in --out-dir) and prints upstream's summary.
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
    /// A shareable report: one self-contained HTML file (opens offline, from file://, mail or
    /// any static host) with the summary, agent and task tables, plots and some conversations.
    ///
    /// From a run (--inputs and --rollouts) or from existing profile outputs (--profile, with
    /// `*_agent_metrics.json` taken from next to it unless --agent-metrics says otherwise).
    Report(ReportArgs),
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
    /// Writes --output and `<output stem>.selection.json`, and prints the counts.
    SelectPivot(SelectPivotArgs),
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
}

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Text,
    Json,
}

#[derive(Args, Debug)]
pub struct ProfileArgs {
    /// The `*_materialized_inputs.jsonl` written by `gym eval run`.
    #[arg(long, value_name = "FILE")]
    pub inputs: PathBuf,
    /// The rollouts JSONL written by `gym eval run`.
    #[arg(long, value_name = "FILE")]
    pub rollouts: PathBuf,
    /// Profile the completed rollouts of a partial collection (tasks without rollouts are dropped).
    #[arg(long)]
    pub allow_partial_rollouts: bool,
    /// Write the two output files here instead of next to the rollouts file.
    #[arg(long, value_name = "DIR")]
    pub out_dir: Option<PathBuf>,
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
    /// The rollouts JSONL written by `gym eval run` (with --inputs).
    #[arg(long, value_name = "FILE", requires = "inputs")]
    pub rollouts: Option<PathBuf>,
    /// An existing `*_reward_profiling.jsonl` (upstream's or gymscope's) instead of a run.
    #[arg(long, value_name = "FILE", required_unless_present = "inputs")]
    pub profile: Option<PathBuf>,
    /// The `*_agent_metrics.json` for --profile (default: the one next to it, if any).
    #[arg(long, value_name = "FILE", requires = "profile")]
    pub agent_metrics: Option<PathBuf>,
    /// Output HTML file (default: `<stem>_report.html` next to the rollouts or profile file).
    #[arg(short = 'o', long, value_name = "FILE")]
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
}

#[derive(Args, Debug)]
pub struct CollectArgs {
    /// Input tasks JSONL (required for a fresh run).
    #[arg(short = 'i', long, value_name = "FILE")]
    pub input: Option<PathBuf>,
    /// Output rollouts JSONL; the other files are named after it.
    #[arg(short = 'o', long, value_name = "FILE")]
    pub output: PathBuf,
    /// Agent for rows without an `agent_ref`.
    #[arg(short = 'a', long, value_name = "NAME")]
    pub agent: Option<String>,
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
    /// Give up on one rollout after this long (recorded as a failure, retried on --resume).
    #[arg(long, value_name = "SECONDS")]
    pub timeout: Option<f64>,
    /// After Ctrl-C/SIGTERM, wait this long for in-flight rollouts.
    #[arg(long, value_name = "SECONDS", default_value_t = 30.0)]
    pub grace: f64,
    /// Run only slice I of N (0-based) of the materialized rows, into `<stem>-shardI-of-N.jsonl`.
    #[arg(long, value_name = "I/N")]
    pub shard: Option<String>,
    /// Join shard outputs into --output and aggregate once.
    #[arg(long)]
    pub merge: bool,
    /// With --merge: the shards' rollouts files (default: every `<output stem>-shardI-of-N.jsonl`).
    #[arg(value_name = "SHARD")]
    pub shards: Vec<PathBuf>,
    /// No progress bar.
    #[arg(long)]
    pub no_progress: bool,
}

/// Rewrites upstream's Hydra-style spellings (`++allow_partial_rollouts=True`,
/// `+rollouts_jsonl_fpath=...`) into gymscope's flags, so upstream command lines work unchanged.
pub fn normalize_legacy_args(args: impl IntoIterator<Item = String>) -> Vec<String> {
    let mut out = Vec::new();
    for arg in args {
        let Some(body) = arg.strip_prefix("++").or_else(|| arg.strip_prefix('+')) else {
            out.push(arg);
            continue;
        };
        let (name, value) = body.split_once('=').unwrap_or((body, "True"));
        let flag = match name {
            "materialized_inputs_jsonl_fpath" => Some("--inputs"),
            "rollouts_jsonl_fpath" => Some("--rollouts"),
            "allow_partial_rollouts" => {
                if matches!(value.to_ascii_lowercase().as_str(), "true" | "1" | "yes") {
                    out.push("--allow-partial-rollouts".into());
                }
                None
            }
            _ => {
                if !collect_override(name, value, &mut out) {
                    out.push(arg.clone());
                }
                None
            }
        };
        if let Some(flag) = flag {
            out.push(flag.into());
            out.push(value.into());
        }
    }
    out
}

/// `gym eval run` / `ng_collect_rollouts` config keys → `gymscope collect` flags. Returns false
/// for keys it does not know.
fn collect_override(name: &str, value: &str, out: &mut Vec<String>) -> bool {
    let truthy = || matches!(value.to_ascii_lowercase().as_str(), "true" | "1" | "yes");
    let mut flag = |f: &str, v: &str| {
        out.push(f.into());
        out.push(v.into());
    };
    match name {
        "input_jsonl_fpath" => flag("--input", value),
        "output_jsonl_fpath" => flag("--output", value),
        "agent_name" => flag("--agent", value),
        "limit" => flag("--limit", value),
        "num_repeats" => flag("--num-repeats", value),
        "num_samples_in_parallel" => flag("--concurrency", value),
        "head_server" => flag("--head-server", &head_server_from_dict(value)),
        "resume_from_cache" | "disable_aggregation" => {
            if truthy() {
                out.push(
                    if name == "resume_from_cache" {
                        "--resume"
                    } else {
                        "--disable-aggregation"
                    }
                    .into(),
                );
            }
        }
        _ => match name.strip_prefix("responses_create_params.") {
            Some(key) => flag("--responses-create-params", &format!("{key}={value}")),
            None if name == "responses_create_params" => {
                flag("--responses-create-params", &format!("={value}"))
            }
            None => return false,
        },
    }
    true
}

/// `{host: H, port: P}` → `H:P` (left as is when it is not that shape, for clap to report).
fn head_server_from_dict(value: &str) -> String {
    let Ok(serde_json::Value::Object(m)) = crate::collect::hydra::parse(value) else {
        return value.to_string();
    };
    let part = |k: &str| match m.get(k) {
        Some(serde_json::Value::String(s)) => s.clone(),
        Some(v) => v.to_string(),
        None => String::new(),
    };
    let host = if m.contains_key("host") {
        part("host")
    } else {
        "127.0.0.1".into()
    };
    let port = if m.contains_key("port") {
        part("port")
    } else {
        "11000".into()
    };
    format!("{host}:{port}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn upstream_spellings_map_to_flags() {
        let args = [
            "gymscope",
            "profile",
            "+materialized_inputs_jsonl_fpath=m.jsonl",
            "++rollouts_jsonl_fpath=r.jsonl",
            "++allow_partial_rollouts=True",
        ];
        let cli = Cli::try_parse_from(normalize_legacy_args(args.map(String::from))).unwrap();
        let Command::Profile(p) = cli.command else {
            panic!("parsed as profile")
        };
        assert_eq!(p.inputs, PathBuf::from("m.jsonl"));
        assert_eq!(p.rollouts, PathBuf::from("r.jsonl"));
        assert!(p.allow_partial_rollouts);
        let off = normalize_legacy_args(["++allow_partial_rollouts=False".to_string()]);
        assert!(off.is_empty());
    }

    #[test]
    fn collect_upstream_spellings_map_to_flags() {
        let args = [
            "gymscope",
            "collect",
            "+agent_name=A",
            "+input_jsonl_fpath=in.jsonl",
            "+output_jsonl_fpath=o.jsonl",
            "+num_repeats={a: 2, _default: 1}",
            "+num_samples_in_parallel=8",
            "+resume_from_cache=true",
            "++responses_create_params.temperature=0.5",
            "+head_server={host: 127.0.0.2, port: 12000}",
        ];
        let cli = Cli::try_parse_from(normalize_legacy_args(args.map(String::from))).unwrap();
        let Command::Collect(c) = cli.command else {
            panic!("not collect")
        };
        assert_eq!(c.agent.as_deref(), Some("A"));
        assert_eq!(c.input, Some(PathBuf::from("in.jsonl")));
        assert_eq!(c.num_repeats.as_deref(), Some("{a: 2, _default: 1}"));
        assert_eq!(c.concurrency, Some(8));
        assert!(c.resume);
        assert_eq!(c.responses_create_params, ["temperature=0.5"]);
        assert_eq!(c.head_server, "127.0.0.2:12000");
    }
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
    #[arg(long, value_name = "X", default_value_t = 1.0)]
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
    #[arg(long, value_name = "PATH")]
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
    #[arg(long, value_name = "X", default_value_t = 0.1)]
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
    #[arg(long, value_name = "FILE")]
    pub output: PathBuf,
    /// Pivots with fewer rollouts are `insufficient_rollouts`.
    #[arg(long, value_name = "N", default_value_t = 8)]
    pub min_rollouts: u32,
    /// A rollout succeeds when its reward is at least this.
    #[arg(long, value_name = "X", default_value_t = 1.0)]
    pub success_threshold: f64,
    /// Classes to keep (default `mixed`; also `all_success`, `all_failure`, `unprofiled`,
    /// `insufficient_rollouts`, for inspection).
    #[arg(long, value_name = "CLASSES", default_value = "mixed")]
    pub keep: String,
    /// Keep at most N pivots, dropping the easiest (highest pass rate) first.
    #[arg(long, value_name = "N")]
    pub max_pivots: Option<u64>,
    /// Drop pivots whose pass rate is above T (T > 0).
    #[arg(long, value_name = "T")]
    pub difficulty_threshold: Option<f64>,
    /// Output order: file order, ascending pass rate, or descending reward variance.
    #[arg(long, value_enum, default_value_t = SortArg::None)]
    pub sort: SortArg,
}
