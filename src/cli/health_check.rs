//! `gymscope health-check RUN_DIR`: upstream's `gym eval health-check` on a finished run — the
//! reports written into RUN_DIR by `collect::evidence`, the lines (or the summary) printed.

use super::args::HealthCheckArgs;
use crate::collect::evidence::write_reports;
use crate::health::checks::{normalize_ignored, QUALITY_SUMMARY, ROLLOUT_VERDICTS};
use crate::native::files::clear_outputs;
use crate::native::{check_input, Input, UsageError};
use anyhow::{bail, Context, Result};
use std::process::ExitCode;

pub fn run(args: &HealthCheckArgs) -> Result<ExitCode> {
    if !args.run_dir.is_dir() {
        bail!("Run directory not found: {}", args.run_dir.display());
    }
    let rollouts = if args.rollouts_file.is_absolute() {
        args.rollouts_file.clone()
    } else {
        args.run_dir.join(&args.rollouts_file)
    };
    // Only a missing file is "not found"; a directory, a pipe or a device is `check_input`'s to judge.
    if !rollouts.exists() {
        bail!("Rollout JSONL not found: {}", rollouts.display());
    }
    if args.workers == Some(0) {
        return Err(UsageError("--workers must be at least 1".into()).into());
    }
    let ignored = normalize_ignored(args.ignore_checks.as_slice()).map_err(UsageError)?;
    let input = Input::new(&rollouts, "--rollouts-file");
    check_input(input, false)?;
    let (summary, verdicts) = (
        args.run_dir.join(QUALITY_SUMMARY),
        args.run_dir.join(ROLLOUT_VERDICTS),
    );
    let cleared = clear_outputs(
        &[input],
        &[
            (&summary, "the health report"),
            (&verdicts, "the health report"),
        ],
    )?;
    let lines = write_reports(
        std::slice::from_ref(&rollouts),
        &args.run_dir,
        ignored,
        args.max_line_bytes,
        &cleared,
    )?;
    // Upstream's two lines on stdout; gymscope's behaviour line, an addition, on stderr.
    let (lines, behaviour) = lines.rsplit_once('\n').unwrap_or((&lines, ""));
    if !behaviour.is_empty() {
        crate::note!("{behaviour}");
    }
    let out = if args.json {
        let path = args.run_dir.join(QUALITY_SUMMARY);
        let text = std::fs::read(&path).with_context(|| format!("reading '{}'", path.display()))?;
        let v: serde_json::Value = serde_json::from_slice(&text)?;
        format!("{v}\n")
    } else {
        format!("{lines}\n")
    };
    crate::say_part!("{out}");
    Ok(ExitCode::SUCCESS)
}
