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
                out.push(arg.clone());
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
        let Command::Profile(p) = cli.command else { panic!("parsed as profile") };
        assert_eq!(p.inputs, PathBuf::from("m.jsonl"));
        assert_eq!(p.rollouts, PathBuf::from("r.jsonl"));
        assert!(p.allow_partial_rollouts);
        let off = normalize_legacy_args(["++allow_partial_rollouts=False".to_string()]);
        assert!(off.is_empty());
    }
}
