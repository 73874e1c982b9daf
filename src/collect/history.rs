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
