//! `gymscope report`: one self-contained HTML file from a run (both files streamed through the
//! profile, conversations read back by span) or from existing profile outputs.

use super::args::ReportArgs;
use super::profile::profile_run_with;
use crate::health::HealthBuilder;
use crate::names;
use crate::native::files::{clear_outputs, Cleared};
use crate::native::read::{for_each_chunk, ReadError};
use crate::native::run_files::check_run_files;
use crate::native::{check_input, Input};
use crate::render::SeekSource;
use crate::report::{self, ReportInput, ReportMeta, ReportQuery, Source};
use anyhow::{bail, Context, Result};
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

/// Writes a rendered page to `path` and renames it into place.
pub(super) fn write_html(cleared: &Cleared, path: &Path, html: &str) -> Result<()> {
    let mut out = cleared.create(path)?;
    out.write_all(html.as_bytes())?;
    Ok(out.commit()?)
}

pub fn run(args: &ReportArgs) -> Result<()> {
    let (input, (path, cleared)) = match (&args.inputs, &args.rollouts, &args.profile) {
        (Some(inputs), Some(rollouts), _) => from_run(args, inputs, rollouts)?,
        (_, _, Some(profile)) => from_files(args, profile)?,
        (None, Some(rollouts), None) => {
            return Err(crate::native::UsageError(format!(
                "--rollouts '{}' needs --inputs (the run's *_materialized_inputs.jsonl), unless it is an ATIF run (a folder or an ATIF .json file)",
                rollouts.display()
            ))
            .into())
        }
        _ => bail!("give --inputs and --rollouts (a run), or --profile (its outputs)"),
    };
    let html = report::render(&input);
    write_html(&cleared, &path, &html)?;
    crate::say!(
        "Report: {} ({:.1} MB, {} tasks, {} rollouts)",
        path.display(),
        html.len() as f64 / 1e6,
        input.tasks.rows.len(),
        input.points.len()
    );
    if let Some(q) = &input.query {
        let why = if q.keys.is_empty() {
            ": the page opens with an empty table, saying so"
        } else {
            ""
        };
        crate::say!(
            "Query: {} of {} rollouts match `{}`{why}",
            q.keys.len(),
            input.points.len(),
            q.source
        );
    }
    Ok(())
}

/// The HTML file to write: `-o`, or the default; never one of the inputs (checked by identity,
/// before anything is read).
fn output_path(
    args: &ReportArgs,
    default: PathBuf,
    inputs: &[Input],
) -> Result<(PathBuf, Cleared)> {
    let path = args.output.clone().unwrap_or(default);
    let cleared = clear_outputs(inputs, &[(&path, "--output")])?;
    Ok((path, cleared))
}

/// A file read whole (`--profile`, `--agent-metrics`), with the line limit and UTF-8 checked as
/// `profile` checks them, so the messages are the same. Lines are checked where they lie in the
/// file's bytes (no second copy of a line), and the buffer is sized from the file's length, so
/// an endless line costs about `--max-line-bytes`, not three times it.
fn read_capped(path: &Path, max_line: u64) -> Result<Vec<u8>> {
    let name = path.display().to_string();
    let limit = usize::try_from(max_line.saturating_add(1)).unwrap_or(usize::MAX);
    let size = std::fs::metadata(path).map_or(0, |m| m.len());
    let mut bytes = Vec::with_capacity(
        usize::try_from(size)
            .unwrap_or(usize::MAX)
            .min(limit.saturating_add(crate::native::read::CHUNK)),
    );
    let (mut line_start, mut line_no) = (0usize, 1u64);
    let check = |line: &[u8], line_no: u64| -> Result<()> {
        if line.len() > limit {
            return Err(ReadError::TooLong {
                file: name.clone(),
                line: line_no,
                limit: max_line,
            }
            .into());
        }
        match simdutf8::compat::from_utf8(line) {
            Ok(_) => Ok(()),
            Err(e) => anyhow::bail!(
                "'{name}' line {line_no}, column {}: invalid UTF-8 (the file must be UTF-8 text)",
                String::from_utf8_lossy(&line[..e.valid_up_to()])
                    .chars()
                    .count()
                    + 1
            ),
        }
    };
    for_each_chunk::<anyhow::Error>(path, &name, |chunk| {
        let base = bytes.len();
        // The open line checked before the chunk is kept: an endless line stops at the limit
        // instead of growing the buffer past it (a doubling there was 2 GiB at the default).
        let open = base - line_start + memchr::memchr(b'\n', chunk).unwrap_or(chunk.len());
        if open > limit {
            return Err(ReadError::TooLong {
                file: name.clone(),
                line: line_no,
                limit: max_line,
            }
            .into());
        }
        bytes.extend_from_slice(chunk);
        for nl in memchr::memchr_iter(b'\n', chunk) {
            check(&bytes[line_start..base + nl], line_no)?;
            line_start = base + nl + 1;
            line_no += 1;
        }
        // The open line may already be too long: stop before reading on.
        if bytes.len() - line_start > limit {
            check(&bytes[line_start..], line_no)?;
        }
        Ok(true)
    })?;
    check(&bytes[line_start..], line_no)?;
    Ok(bytes)
}

/// The file's name and size: the page names its sources but never shows local paths.
fn source(path: &Path) -> Result<Source> {
    let meta = std::fs::metadata(path).with_context(|| format!("reading '{}'", path.display()))?;
    Ok(Source {
        name: path
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned(),
        bytes: meta.len(),
    })
}

fn from_run(
    args: &ReportArgs,
    inputs: &Path,
    rollouts: &Path,
) -> Result<(ReportInput, (PathBuf, Cleared))> {
    let query = args
        .query
        .as_deref()
        .map(crate::native::query_read::parse_query)
        .transpose()?;
    check_run_files(inputs, rollouts)?;
    // Every file the report reads is an input, those beside the rollouts too (`collect
    // --resume` depends on the failures file).
    let failures = names::beside(rollouts, names::failures);
    let summary = names::sibling(rollouts, crate::health::upstream::QUALITY_SUMMARY);
    let verdicts = names::sibling(rollouts, crate::health::upstream::ROLLOUT_VERDICTS);
    let beside = "read beside --rollouts";
    let output = output_path(
        args,
        names::beside(rollouts, names::report),
        &[
            Input::new(inputs, "--inputs"),
            Input::new(rollouts, "--rollouts"),
            Input::new(&failures, beside),
            Input::new(&summary, beside),
            Input::new(&verdicts, beside),
        ],
    )?;
    let rollouts_name = rollouts.display().to_string();
    // Rollout health in the same read as the profile (the failures file and upstream's verdict
    // files beside the rollouts are small and read apart).
    let mut health = Some(
        HealthBuilder::new(&rollouts_name, crate::reward_group::DEFAULT_THRESHOLD)
            .with_max_line_bytes(args.max_line_bytes)
            .single_step(args.single_step),
    );
    if let (Some(failures), Some(h)) = (super::health::failures_beside(rollouts), health.as_mut()) {
        if let Err(e) = super::health::push_failures(h, &failures) {
            crate::note!("Warning: no Health section: {e:#}");
            health = None;
        }
    }
    let (profile, health) = profile_run_with(
        inputs,
        rollouts,
        args.allow_partial_rollouts,
        args.max_line_bytes,
        health,
    )?;
    // A row the profile accepts but health cannot read costs the section, not the report.
    let health = match health {
        Some(Ok(mut health)) => {
            match super::health::upstream_beside(rollouts, args.max_line_bytes) {
                Ok(upstream) => health.upstream = upstream,
                Err(e) => crate::note!("Warning: upstream's health files are not shown: {e:#}"),
            }
            Some(health)
        }
        Some(Err(e)) => {
            crate::note!("Warning: no Health section: {e}");
            None
        }
        None => None,
    };

    let mut lines =
        SeekSource(File::open(rollouts).with_context(|| format!("opening '{rollouts_name}'"))?);
    let meta = ReportMeta {
        title: args
            .title
            .clone()
            .unwrap_or_else(|| names::run_title(rollouts)),
        sources: vec![source(inputs)?, source(rollouts)?],
        date: args.date.clone(),
    };
    // The matches, by `gymscope query`'s own read of the run (the page stores their keys),
    // found first: the conversations shown are theirs.
    let query = match query {
        Some(q) => {
            let keys = crate::native::query_read::matching_keys(
                rollouts,
                inputs,
                &q,
                args.single_step,
                args.max_line_bytes,
            )?;
            Some(ReportQuery::new(q.source, keys))
        }
        None => None,
    };
    let input = ReportInput::from_run(
        &profile,
        meta,
        &mut lines,
        &rollouts_name,
        args.conversations,
        query.as_ref(),
    )?;
    let input = match health {
        Some(health) => input.with_health(health),
        None => input,
    };
    let input = match query {
        // The Health section of the matches, judged as the run's was, from their rows.
        Some(q) if input.health.is_some() => {
            let builder =
                HealthBuilder::new(&rollouts_name, crate::reward_group::DEFAULT_THRESHOLD)
                    .with_max_line_bytes(args.max_line_bytes)
                    .single_step(args.single_step);
            let health = report::health_of_matches(&profile, &q.keys, &mut lines, builder);
            let input = input.with_query(q);
            match health {
                Ok(h) => input.with_query_health(h),
                Err(e) => {
                    crate::note!("Warning: no Health section of the query's matches: {e}");
                    input
                }
            }
        }
        Some(q) => input.with_query(q),
        None => input,
    };
    Ok((input, output))
}

fn from_files(args: &ReportArgs, profile: &Path) -> Result<(ReportInput, (PathBuf, Cleared))> {
    check_input(Input::new(profile, "--profile"), false)?;
    let profile_file = names::file_name_of(profile);
    let metrics = match &args.agent_metrics {
        Some(path) => {
            check_input(
                Input {
                    path,
                    flag: "--agent-metrics",
                },
                false,
            )?;
            Some(path.clone())
        }
        None => Some(names::beside(profile, |n| {
            names::agent_metrics_of_profile(n)
        }))
        .filter(|p| p.exists()),
    };
    let mut inputs = vec![Input::new(profile, "--profile")];
    if let Some(m) = &metrics {
        inputs.push(Input::new(m, "--agent-metrics"));
    }
    let output = output_path(
        args,
        names::sibling(profile, names::report(&profile_file)),
        &inputs,
    )?;
    let read = |path: &Path| read_capped(path, args.max_line_bytes);
    let profiling_bytes = read(profile)?;
    let metrics_bytes = metrics.as_deref().map(read).transpose()?;
    let mut sources = vec![source(profile)?];
    if let Some(path) = &metrics {
        sources.push(source(path)?);
    }
    let meta = ReportMeta {
        title: args
            .title
            .clone()
            .unwrap_or_else(|| names::run_title(profile)),
        sources,
        date: args.date.clone(),
    };
    let profile_name = profile.display().to_string();
    let metrics_name = metrics.as_ref().map(|p| p.display().to_string());
    let input = ReportInput::from_profile_files(
        meta,
        (&profile_name, &profiling_bytes),
        metrics_name.as_deref().zip(metrics_bytes.as_deref()),
        args.conversations,
    )?;
    Ok((input, output))
}
