//! The run's record on disk (native): successes in the main file and attempts in the failures
//! sidecar, read for `--resume` and again after a run to tell whether every rollout succeeded.

use super::files;
use super::key::{parse_row, RolloutKey};
use super::resume::{Counts, History};
use super::CollectError;
use crate::native::read::for_each_line;
use anyhow::Result;
use std::path::Path;

/// Reads both files into `history`; a torn last line (an interrupted write) is first set aside.
pub fn read(output: &Path, failures: &Path, max_line: u64, history: &mut History) -> Result<()> {
    for p in [output, failures] {
        if p.exists() {
            if let Some(files::TornTail::SetAside(s)) = files::set_aside_torn_tail(p)? {
                // v0.7.0's line, then where gymscope kept the bytes.
                crate::say!(
                    "Dropped a truncated final line ({} bytes) from {} before resuming.",
                    s.bytes,
                    p.display()
                );
                crate::say!("(kept in '{}'; that rollout runs again)", s.to.display());
            }
        }
    }
    let name = output.display().to_string();
    for_each_line::<CollectError>(output, &name, max_line, |span, line, _| {
        let row = parse_row(line).map_err(|e| CollectError::line(&name, span.line, e))?;
        history.add_main(&row, &name, span.line)?;
        Ok(true)
    })?;
    if failures.exists() {
        let name = failures.display().to_string();
        for_each_line::<CollectError>(failures, &name, max_line, |span, line, _| {
            if line.iter().all(u8::is_ascii_whitespace) {
                return Ok(true);
            }
            let row = parse_row(line).map_err(|e| CollectError::line(&name, span.line, e))?;
            history.add_failure(&row);
            Ok(true)
        })?;
    }
    Ok(())
}

/// After a run: the counts of a fresh plan over the materialized rows (what is unfinished, and
/// what `--resume` would retry).
pub fn outcome(
    materialized: &Path,
    output: &Path,
    failures: &Path,
    max_attempts: u32,
    retry_terminal_timeouts: bool,
    max_line: u64,
) -> Result<Counts> {
    let mut history = History::default();
    history.retry_terminal_timeouts = retry_terminal_timeouts;
    read(output, failures, max_line, &mut history)?;
    let mut plan = history.plan(max_attempts);
    let name = materialized.display().to_string();
    for_each_line::<CollectError>(materialized, &name, max_line, |span, line, _| {
        let row = parse_row(line).map_err(|e| CollectError::line(&name, span.line, e))?;
        if let Some(key) = RolloutKey::of(&row) {
            plan.count(&key);
        }
        Ok(true)
    })?;
    Ok(plan.counts)
}

/// `require_complete`'s count (v0.7.0 `check_completion`): distinct (stage, task, rollout) in the
/// main file against the materialized rows.
pub fn completion(materialized: &Path, output: &Path, max_line: u64) -> Result<(u64, u64)> {
    use super::key::KeyPart;
    let mut done: std::collections::HashSet<(Option<KeyPart>, RolloutKey)> =
        std::collections::HashSet::new();
    let name = output.display().to_string();
    for_each_line::<CollectError>(output, &name, max_line, |span, line, _| {
        let row = parse_row(line).map_err(|e| CollectError::line(&name, span.line, e))?;
        if let Some(key) = RolloutKey::of(&row) {
            let stage = row
                .get(crate::gym::keys::STAGE_INDEX)
                .filter(|v| !v.is_null())
                .map(KeyPart::of);
            done.insert((stage, key));
        }
        Ok(true)
    })?;
    let mut expected = 0u64;
    let name = materialized.display().to_string();
    for_each_line::<CollectError>(materialized, &name, max_line, |_, _, _| {
        expected += 1;
        Ok(true)
    })?;
    Ok((done.len() as u64, expected))
}

/// v0.7.0's `retry_invalid_judge_responses` on resume (`migrate_invalid_judge_main_rows`): main
/// rows with a truthy `invalid_judge_response` (which older builds kept as zero-reward successes)
/// are appended to the sidecar (class kept or `judge_invalid`, `_ng_failure_terminal` removed,
/// `reuse_cached_deliverable` when their `deliverables_dir` holds a deliverable, marked
/// `_ng_migrated_invalid_judge_response`; once per (stage, task, rollout, attempt)), the sidecar
/// synced, then the main file rewritten without them. Returns how many were found.
pub fn migrate_invalid_judge_rows(
    output: &Path,
    failures: &Path,
    max_line: u64,
    cleared: &crate::native::files::Cleared,
) -> Result<u64> {
    use crate::gym::py;
    use serde_json::Value;
    use std::io::Write;
    const MARK: &str = "_ng_migrated_invalid_judge_response";
    if !output.exists() {
        return Ok(0);
    }
    let invalid = |row: &super::Row| row.get("invalid_judge_response").is_some_and(py::truthy);
    let out_name = output.display().to_string();
    let mut found = 0u64;
    for_each_line::<CollectError>(output, &out_name, max_line, |span, line, _| {
        if !line.iter().all(u8::is_ascii_whitespace) {
            let row = parse_row(line).map_err(|e| CollectError::line(&out_name, span.line, e))?;
            found += u64::from(invalid(&row));
        }
        Ok(true)
    })?;
    if found == 0 {
        return Ok(0);
    }
    let int = |v: Option<&Value>| v.and_then(Value::as_i64).unwrap_or(0);
    let migration_key = |row: &super::Row| {
        let part = |k: &str| super::key::KeyPart::of(row.get(k).unwrap_or(&Value::Null));
        (
            int(row.get("stage_index")),
            part(crate::gym::keys::TASK_INDEX),
            part(crate::gym::keys::ROLLOUT_INDEX),
            int(row.get(crate::gym::keys::ATTEMPT_INDEX)),
        )
    };
    let mut migrated = std::collections::HashSet::new();
    if failures.exists() {
        let name = failures.display().to_string();
        for_each_line::<CollectError>(failures, &name, max_line, |span, line, _| {
            if !line.iter().all(u8::is_ascii_whitespace) {
                let row = parse_row(line).map_err(|e| CollectError::line(&name, span.line, e))?;
                if row.get(MARK).is_some_and(py::truthy) {
                    migrated.insert(migration_key(&row));
                }
            }
            Ok(true)
        })?;
    }
    let mut kept = cleared.create(output)?;
    let mut side = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(failures)
        .map_err(|e| files::io_err(failures, e))?;
    for_each_line::<CollectError>(output, &out_name, max_line, |span, line, _| {
        let text = line.trim_ascii();
        if text.is_empty() {
            return Ok(true);
        }
        let row = parse_row(text).map_err(|e| CollectError::line(&out_name, span.line, e))?;
        if !invalid(&row) {
            kept.write_all(text)?;
            kept.write_all(b"\n")?;
            return Ok(true);
        }
        if !migrated.insert(migration_key(&row)) {
            return Ok(true);
        }
        let mut moved = row;
        let class = moved
            .get(crate::gym::keys::FAILURE_CLASS)
            .filter(|c| py::truthy(c))
            .cloned()
            .unwrap_or_else(|| "judge_invalid".into());
        moved.insert(crate::gym::keys::FAILURE_CLASS.into(), class);
        moved.shift_remove(crate::gym::keys::FAILURE_TERMINAL);
        if has_deliverable(moved.get("deliverables_dir")) {
            moved.insert("reuse_cached_deliverable".into(), true.into());
        } else {
            moved.shift_remove("reuse_cached_deliverable");
        }
        moved.insert(MARK.into(), true.into());
        side.write_all(&super::key::to_line(&moved))
            .map_err(|e| files::io_err(failures, e))?;
        Ok(true)
    })?;
    // Every retry record is durable before the rows leave the main file.
    side.sync_all().map_err(|e| files::io_err(failures, e))?;
    kept.commit()?;
    Ok(found)
}

/// A folder holding an agent's output artifact (v0.7.0 `deliverables.is_deliverable`: a file
/// other than its bookkeeping files).
fn has_deliverable(dir: Option<&serde_json::Value>) -> bool {
    const IGNORED: [&str; 7] = [
        "finish_params.json",
        "history.json",
        "history.pkl",
        "inprogress_history.json",
        "metadata.json",
        "log.txt",
        "reference_files",
    ];
    let Some(dir) = dir
        .and_then(serde_json::Value::as_str)
        .filter(|d| !d.is_empty())
    else {
        return false;
    };
    std::fs::read_dir(dir).is_ok_and(|entries| {
        entries.flatten().any(|e| {
            e.path().is_file() && !IGNORED.contains(&e.file_name().to_string_lossy().as_ref())
        })
    })
}
