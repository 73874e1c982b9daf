//! The files derived from `--output`, as paths: thin wrappers over [`crate::names`], where every
//! name is made.

use crate::names;
use std::path::{Path, PathBuf};

/// `out/rollouts.jsonl` → `out/rollouts_materialized_inputs.jsonl`.
pub fn materialized(output: &Path) -> PathBuf {
    names::beside(output, names::materialized_inputs)
}

/// `out/rollouts.jsonl` → `out/rollouts_failures.jsonl`.
pub fn failures(output: &Path) -> PathBuf {
    names::beside(output, names::failures)
}

/// `out/rollouts.jsonl` → `out/rollouts_aggregate_metrics.json`.
pub fn aggregate_metrics(output: &Path) -> PathBuf {
    names::beside(output, names::aggregate_metrics)
}

/// Where shard `i` of `n` writes: `out/rollouts.jsonl` → `out/rollouts-shard2-of-8.jsonl`, so one
/// command line (a Slurm array job) serves every shard.
pub fn shard_output(output: &Path, i: u32, n: u32) -> PathBuf {
    names::beside(output, |name| names::shard(name, i, n))
}

/// Recognises a name written by [`shard_output`] for this output: returns `(i, n)`.
pub fn parse_shard_name(output: &Path, candidate: &str) -> Option<(u32, u32)> {
    names::parse_shard(&names::file_name_of(output), candidate)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_upstream() {
        let out = Path::new("out/rollouts.jsonl");
        assert_eq!(
            materialized(out),
            Path::new("out/rollouts_materialized_inputs.jsonl")
        );
        assert_eq!(failures(out), Path::new("out/rollouts_failures.jsonl"));
        assert_eq!(
            aggregate_metrics(out),
            Path::new("out/rollouts_aggregate_metrics.json")
        );
        assert_eq!(
            materialized(Path::new("a.b.jsonl")),
            Path::new("a.b_materialized_inputs.jsonl")
        );
        assert_eq!(
            materialized(Path::new("r")),
            Path::new("r_materialized_inputs.jsonl")
        );
    }

    #[test]
    fn shard_names_round_trip() {
        let out = Path::new("out/rollouts.jsonl");
        let s = shard_output(out, 2, 8);
        assert_eq!(s, Path::new("out/rollouts-shard2-of-8.jsonl"));
        assert_eq!(
            parse_shard_name(out, "rollouts-shard2-of-8.jsonl"),
            Some((2, 8))
        );
        assert_eq!(parse_shard_name(out, "rollouts-shard8-of-8.jsonl"), None);
        assert_eq!(
            parse_shard_name(out, "rollouts-shard2-of-8_failures.jsonl"),
            None
        );
    }
}
