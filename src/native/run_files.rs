//! A run's two input files (`--inputs`, `--rollouts`) checked before profiling: real files, two
//! different files, and each looking like what its flag says, by content as the web app sees it
//! ([`crate::inspect::detect`]), so swapped flags are named instead of failing later on keys.

use super::inputs::{check_input, same_file, Input, UsageError};
use crate::inspect::detect::{classify, FileKind};
use std::io::Read;
use std::path::Path;

/// Bytes read from each file's start to recognise it.
const HEAD: u64 = 64 << 10;

fn head(path: &Path) -> Vec<u8> {
    let mut buf = Vec::new();
    if let Ok(f) = std::fs::File::open(path) {
        let _ = f.take(HEAD).read_to_end(&mut buf);
    }
    buf
}

/// Both files exist and are regular files (they are read twice), are not one file, and are not
/// recognisably the other kind (or a profile output). Only a clear mismatch is refused: a file
/// whose first row says nothing either way is taken as given.
pub fn check_run_files(inputs: &Path, rollouts: &Path) -> anyhow::Result<()> {
    let i = Input::new(inputs, "--inputs");
    let r = Input::new(rollouts, "--rollouts");
    check_input(i, true)?;
    check_input(r, true)?;
    if same_file(inputs, rollouts) {
        return Err(UsageError(format!(
            "--inputs '{}' and --rollouts '{}' are the same file: give the run's `*_materialized_inputs.jsonl` and its rollouts file",
            inputs.display(),
            rollouts.display()
        ))
        .into());
    }
    // By content only (no name fallback): a name says little about what a file holds.
    let kind_i = classify(&head(inputs), "");
    let kind_r = classify(&head(rollouts), "");
    let looks = |input: Input, kind: FileKind| {
        format!(
            "'{}' ({}) looks like {}",
            input.path.display(),
            input.flag,
            kind.label()
        )
    };
    let problem = match (kind_i, kind_r) {
        (FileKind::Rollouts, FileKind::MaterializedInputs) => Some(format!(
            "{} and {}: are --inputs and --rollouts swapped?",
            looks(i, kind_i),
            looks(r, kind_r)
        )),
        (FileKind::RewardProfiling | FileKind::AgentMetrics | FileKind::Pivot, _) => Some(format!(
            "{}, not a run's materialized inputs",
            looks(i, kind_i)
        )),
        (_, FileKind::RewardProfiling | FileKind::AgentMetrics | FileKind::Pivot) => Some(format!(
            "{}, not a run's rollouts{}",
            looks(r, kind_r),
            if matches!(kind_r, FileKind::RewardProfiling) {
                " (for a report from profile outputs use `gymscope report --profile`)"
            } else {
                ""
            }
        )),
        _ => None,
    };
    match problem {
        Some(p) => Err(UsageError(p).into()),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn swapped_and_same_files_are_named() {
        let dir = tempfile::tempdir().unwrap();
        let m = dir.path().join("m.jsonl");
        let r = dir.path().join("r.jsonl");
        std::fs::write(
            &m,
            br#"{"responses_create_params":{"input":"q"},"_ng_task_index":0,"_ng_rollout_index":0}
"#,
        )
        .unwrap();
        std::fs::write(
            &r,
            br#"{"response":{"output":[]},"reward":1.0,"_ng_task_index":0,"_ng_rollout_index":0}
"#,
        )
        .unwrap();
        assert!(check_run_files(&m, &r).is_ok());
        let e = check_run_files(&r, &m).unwrap_err().to_string();
        assert!(e.contains("swapped"), "{e}");
        assert!(
            e.contains('\'') && e.contains("r.jsonl' (--inputs) looks like rollouts"),
            "{e}"
        );
        let e = check_run_files(&m, &m).unwrap_err();
        assert!(e.downcast_ref::<UsageError>().is_some());
        assert!(e.to_string().contains("same file"), "{e}");
        // A bare row says nothing either way: taken as given.
        let bare = dir.path().join("b.jsonl");
        std::fs::write(&bare, b"{\"_ng_task_index\":0,\"_ng_rollout_index\":0}\n").unwrap();
        assert!(check_run_files(&bare, &r).is_ok());
        assert!(check_run_files(&m, &bare).is_ok());
    }
}
