//! The end-of-run health reports (native): one read of the rollouts file(s) feeds upstream's
//! check catalog ([`EvidenceChecker`]) and gymscope's behavioural signals ([`HealthBuilder`]);
//! `quality_summary.json` and `rollout_verdicts.jsonl` are written atomically in the output
//! directory, and the three terminal lines returned. Used by `collect`, `collect --merge` and
//! `health-check`.

use crate::health::checks::{EvidenceChecker, QUALITY_SUMMARY, ROLLOUT_VERDICTS};
use crate::health::{behaviour_line, HealthBuilder};
use crate::native::files::{Cleared, FilePlan};
use crate::native::read::for_each_line;
use anyhow::Result;
use std::io::Write;
use std::path::{Path, PathBuf};

/// Checks `rollouts` (in order), writes both reports into `out_dir`, and returns upstream's two
/// lines plus the behaviour line. `ignored` must be normalized (`checks::normalize_ignored`).
pub fn write_reports(
    rollouts: &[PathBuf],
    out_dir: &Path,
    ignored: Vec<String>,
    max_line: u64,
    cleared: &Cleared,
) -> Result<String> {
    let mut checker = EvidenceChecker::new(ignored);
    let first = rollouts
        .first()
        .map(|p| p.display().to_string())
        .unwrap_or_default();
    let mut behaviour = Some(HealthBuilder::new(
        &first,
        crate::reward_group::DEFAULT_THRESHOLD,
    ));
    let mut behaviour_error = None;
    for (source, path) in rollouts.iter().enumerate() {
        let name = path.display().to_string();
        for_each_line::<anyhow::Error>(path, &name, max_line, |span, line, _| {
            checker.line(&name, source, span.line, line);
            // Behaviour needs keyed rows; a row it cannot read stops only its line.
            if let Some(b) = behaviour.as_mut() {
                if let Err(e) = b.rollout_line(span.line, line) {
                    behaviour_error = Some(e.to_string());
                    behaviour = None;
                }
            }
            Ok(true)
        })?;
    }
    let reports = checker.finish();
    let summary_path = out_dir.join(QUALITY_SUMMARY);
    let verdicts_path = out_dir.join(ROLLOUT_VERDICTS);
    if !out_dir.as_os_str().is_empty() {
        std::fs::create_dir_all(out_dir)?;
    }
    let mut f = cleared.create(&summary_path)?;
    reports.write_summary(&mut f)?; // buffered by `AtomicFile`
    f.commit()?;
    let mut f = cleared.create(&verdicts_path)?;
    for line in reports.verdict_lines() {
        f.write_all(&line)?;
    }
    f.commit()?;
    let mut out = reports.lines(&summary_path.display().to_string());
    out.push('\n');
    match (behaviour.map(HealthBuilder::finish), behaviour_error) {
        (Some(Ok(h)), _) => out.push_str(&behaviour_line(&h)),
        (Some(Err(e)), _) => out.push_str(&format!("Behaviour: not computed ({e})")),
        (None, Some(e)) => out.push_str(&format!("Behaviour: not computed ({e})")),
        (None, None) => out.push_str("Behaviour: not computed"),
    }
    Ok(out)
}

/// The end of a collection: the reports beside `rollouts`, printed; a failure is a warning,
/// never the run's failure (health is report-only).
pub fn print_reports(rollouts: &Path, ignored: &[String], max_line: u64, cleared: &Cleared) {
    match write_reports(
        &[rollouts.to_path_buf()],
        &report_dir(rollouts),
        ignored.to_vec(),
        max_line,
        cleared,
    ) {
        Ok(lines) => crate::say!("{lines}"),
        Err(e) => crate::note!("Warning: rollout health check failed: {e:#}"),
    }
}

/// The two reports written beside `rollouts` ([`report_dir`]), as outputs of `plan`.
pub fn plan_reports(plan: &mut FilePlan, rollouts: &Path) {
    let dir = report_dir(rollouts);
    plan.output(dir.join(QUALITY_SUMMARY), "the health report")
        .output(dir.join(ROLLOUT_VERDICTS), "the health report");
}

/// The directory upstream writes the reports into: the first rollouts file's.
pub fn report_dir(rollouts: &Path) -> PathBuf {
    rollouts.parent().map(Path::to_path_buf).unwrap_or_default()
}
