//! `gymscope health`: streams the rollouts file (read on every core) and the materialized inputs
//! and the failures file beside it through the core [`HealthBuilder`], adds upstream's verdict files when they sit
//! beside the rollouts, and prints the text report or the JSON document.

use super::args::{FailOn, HealthArgs, HealthFormat};
use crate::health::upstream::{self, RolloutVerdicts, Upstream};
use crate::health::{read_rollout_batch, HealthBuilder, HealthReport, Level};
use crate::names;
use crate::native::files::clear_outputs;
use crate::native::in_order::{read_in_order, ReadFile};
use crate::native::parallel;
use crate::native::read::{for_each_chunk, for_each_line};
use crate::native::{check_input, Input};
use crate::read::batch::LineBatch;
use crate::record::RowKind;
use anyhow::Result;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

pub fn run(args: &HealthArgs) -> Result<ExitCode> {
    let rollouts = args
        .rollouts
        .as_ref()
        .or(args.rollouts_flag.as_ref())
        .ok_or_else(|| {
            crate::native::UsageError("give the rollouts file (ROLLOUTS or --rollouts)".into())
        })?;
    let mut inputs = vec![Input::new(rollouts, "ROLLOUTS")];
    if let Some(path) = &args.inputs {
        inputs.push(Input {
            path,
            flag: "--inputs",
        });
    }
    for input in &inputs {
        check_input(*input, false)?;
    }
    let failures = failures_beside(rollouts);
    let output = args.write.then(|| names::beside(rollouts, names::health));
    // Every file read beside the rollouts is an input too (upstream's verdict files).
    let summary = names::sibling(rollouts, upstream::QUALITY_SUMMARY);
    let verdicts = names::sibling(rollouts, upstream::ROLLOUT_VERDICTS);
    let mut all = inputs.clone();
    if let Some(f) = &failures {
        all.push(Input::new(f, "failures file"));
    }
    for path in [&summary, &verdicts] {
        all.push(Input {
            path,
            flag: "read beside the rollouts",
        });
    }
    let outs: Vec<(&Path, &str)> = output.iter().map(|o| (o.as_path(), "--write")).collect();
    let cleared = clear_outputs(&all, &outs)?;
    let rollouts_name = rollouts.display().to_string();
    let mut builder = HealthBuilder::new(&rollouts_name, args.pass_threshold)
        .with_max_line_bytes(args.max_line_bytes)
        .single_step(args.single_step);
    if let Some(path) = &args.inputs {
        let name = path.display().to_string();
        for_each_chunk::<anyhow::Error>(path, &name, |chunk| {
            builder.push_inputs(&name, chunk)?;
            Ok(true)
        })?;
    }
    if let Some(path) = &failures {
        push_failures(&mut builder, path)?;
    }
    read_rollouts(&mut builder, rollouts, &rollouts_name)?;
    let mut report = builder.finish()?;
    report.upstream = upstream_beside(rollouts, args.max_line_bytes)?;

    let json = document(&report)?;
    match args.format {
        HealthFormat::Json => crate::say_part!("{json}"),
        HealthFormat::Text => crate::say_part!("{}", crate::health::text(&report)),
    }
    if let Some(out) = &output {
        let mut file = cleared.create(out)?;
        file.write_all(json.as_bytes())?;
        file.commit()?;
        crate::note!("Health: {}", out.display());
    }
    let level = match args.fail_on {
        None => return Ok(ExitCode::SUCCESS),
        Some(FailOn::Bad) => Level::Bad,
        Some(FailOn::Warn) => Level::Warn,
    };
    let findings = report.findings(level);
    if findings.is_empty() {
        return Ok(ExitCode::SUCCESS);
    }
    crate::note!(
        "health: {} rate(s) above the {} threshold (--fail-on)",
        findings.len(),
        if level == Level::Bad { "bad" } else { "warn" }
    );
    Ok(ExitCode::from(3))
}

/// Feeds the rollouts file on every core (`native::in_order`, the builder as the job): the
/// report and the first error are the one-thread read's; a line over the limit is reported after
/// the lines before it.
fn read_rollouts(builder: &mut HealthBuilder, path: &Path, name: &str) -> Result<()> {
    builder.start_rollouts()?;
    let file = ReadFile {
        path,
        name,
        kind: RowKind::Rollout,
    };
    let readers = (0..parallel::workers()).map(|_| |batch: LineBatch| read_rollout_batch(&batch));
    let max_line = builder.max_line_bytes();
    read_in_order(&[file], max_line, builder, readers, |_, _| {
        Ok::<_, anyhow::Error>(())
    })
}

/// The JSON document (2-space indent, newline-terminated).
fn document(report: &HealthReport) -> Result<String> {
    let mut json = serde_json::to_string_pretty(report)?;
    json.push('\n');
    Ok(json)
}

/// `<stem>_failures.jsonl` beside the rollouts, when it is there.
pub(super) fn failures_beside(rollouts: &Path) -> Option<PathBuf> {
    Some(names::beside(rollouts, names::failures)).filter(|p| p.is_file())
}

pub(super) fn push_failures(builder: &mut HealthBuilder, path: &Path) -> Result<()> {
    let name = path.display().to_string();
    for_each_chunk::<anyhow::Error>(path, &name, |chunk| {
        builder.push_failures(&name, chunk)?;
        Ok(true)
    })
}

/// Upstream's `quality_summary.json` / `rollout_verdicts.jsonl` in the rollouts' directory.
pub(super) fn upstream_beside(rollouts: &Path, max_line: u64) -> Result<Option<Upstream>> {
    let summary = names::sibling(rollouts, upstream::QUALITY_SUMMARY);
    let verdicts = names::sibling(rollouts, upstream::ROLLOUT_VERDICTS);
    let mut found = Upstream::default();
    if summary.is_file() {
        let name = summary.display().to_string();
        let mut bytes = Vec::new();
        for_each_line::<anyhow::Error>(&summary, &name, max_line, |_, line, newline| {
            bytes.extend_from_slice(line);
            if newline {
                bytes.push(b'\n');
            }
            Ok(true)
        })?;
        found.quality_summary = Some(upstream::quality_summary(&name, &bytes)?);
    }
    if verdicts.is_file() {
        let name = verdicts.display().to_string();
        let mut v = RolloutVerdicts::new(&name);
        for_each_line::<anyhow::Error>(&verdicts, &name, max_line, |span, line, _| {
            v.line(span.line, line)?;
            Ok(true)
        })?;
        found.rollout_verdicts = Some(v);
    }
    Ok((found.quality_summary.is_some() || found.rollout_verdicts.is_some()).then_some(found))
}
