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
        let Command::Profile(p) = cli.command;
        assert_eq!(p.inputs, PathBuf::from("m.jsonl"));
        assert_eq!(p.rollouts, PathBuf::from("r.jsonl"));
        assert!(p.allow_partial_rollouts);
        let off = normalize_legacy_args(["++allow_partial_rollouts=False".to_string()]);
        assert!(off.is_empty());
    }
}
