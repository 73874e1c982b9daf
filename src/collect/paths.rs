//! The files derived from `--output`, named as upstream's `pathlib` calls name them.

use std::path::{Path, PathBuf};

/// Python's `Path.stem`: the file name without its last extension (a leading dot is no extension).
fn stem(path: &Path) -> String {
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    match name.rfind('.') {
        Some(0) | None => name.into_owned(),
        Some(dot) => name[..dot].to_string(),
    }
}

fn sibling(path: &Path, name: String) -> PathBuf {
    path.with_file_name(name)
}

/// `out/rollouts.jsonl` → `out/rollouts_materialized_inputs.jsonl`.
pub fn materialized(output: &Path) -> PathBuf {
    sibling(
        output,
        format!("{}_materialized_inputs.jsonl", stem(output)),
    )
}

/// `out/rollouts.jsonl` → `out/rollouts_failures.jsonl`.
pub fn failures(output: &Path) -> PathBuf {
    sibling(output, format!("{}_failures.jsonl", stem(output)))
}

/// `out/rollouts.jsonl` → `out/rollouts_aggregate_metrics.json`.
pub fn aggregate_metrics(output: &Path) -> PathBuf {
    sibling(output, format!("{}_aggregate_metrics.json", stem(output)))
}

/// Where shard `i` of `n` writes: `out/rollouts.jsonl` → `out/rollouts-shard2-of-8.jsonl`, so one
/// command line (a Slurm array job) serves every shard.
pub fn shard_output(output: &Path, i: u32, n: u32) -> PathBuf {
    let name = output.file_name().unwrap_or_default().to_string_lossy();
    let suffix = &name[stem(output).len()..];
    sibling(output, format!("{}-shard{i}-of-{n}{suffix}", stem(output)))
}

/// Recognises a name written by [`shard_output`] for this output: returns `(i, n)`.
pub fn parse_shard_name(output: &Path, candidate: &str) -> Option<(u32, u32)> {
    let name = output.file_name()?.to_string_lossy().into_owned();
    let stem = stem(output);
    let suffix = &name[stem.len()..];
    let middle = candidate
        .strip_prefix(&format!("{stem}-shard"))?
        .strip_suffix(suffix)?;
    let (i, n) = middle.split_once("-of-")?;
    let (i, n) = (i.parse().ok()?, n.parse().ok()?);
    (i < n).then_some((i, n))
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
