//! `gymscope report`: one self-contained HTML file from a run (both files streamed through the
//! profile, conversations read back by span) or from existing profile outputs.

use super::args::ReportArgs;
use super::atomic::AtomicFile;
use super::profile_cmd::feed;
use crate::names;
use crate::profile::{ProfileBuilder, ProfileOptions};
use crate::render::SeekSource;
use crate::report::{self, ReportInput, ReportMeta, Source};
use anyhow::{bail, Context, Result};
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

pub fn run(args: &ReportArgs) -> Result<()> {
    let (input, default_output) = match (&args.inputs, &args.rollouts, &args.profile) {
        (Some(inputs), Some(rollouts), _) => from_run(args, inputs, rollouts)?,
        (_, _, Some(profile)) => from_files(args, profile)?,
        _ => bail!("give --inputs and --rollouts (a run), or --profile (its outputs)"),
    };
    let html = report::render(&input);
    let path = args.output.clone().unwrap_or(default_output);
    let mut out = AtomicFile::create(&path)?;
    out.write_all(html.as_bytes())?;
    out.commit()?;
    println!(
        "Report: {} ({:.1} MB, {} tasks, {} rollouts)",
        path.display(),
        html.len() as f64 / 1e6,
        input.tasks.rows.len(),
        input.points.len()
    );
    Ok(())
}

fn exists(path: &Path, flag: &str) -> Result<()> {
    if !path.exists() {
        bail!(
            "Input file not found: '{}' ({flag}). Check the path is spelled correctly.",
            path.display()
        );
    }
    Ok(())
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

fn from_run(args: &ReportArgs, inputs: &Path, rollouts: &Path) -> Result<(ReportInput, PathBuf)> {
    exists(inputs, "--inputs")?;
    exists(rollouts, "--rollouts")?;
    let inputs_name = inputs.display().to_string();
    let rollouts_name = rollouts.display().to_string();
    let mut builder = ProfileBuilder::new(&inputs_name, &rollouts_name);
    let mut buf = vec![0u8; 4 << 20];
    feed(inputs, &inputs_name, &mut buf, |c| builder.push_inputs(c))?;
    feed(rollouts, &rollouts_name, &mut buf, |c| {
        builder.push_rollouts(c)
    })?;
    drop(buf);
    let profile = builder.finish(ProfileOptions {
        allow_partial_rollouts: args.allow_partial_rollouts,
    })?;
    for warning in &profile.warnings {
        eprintln!("Warning: {warning}");
    }

    let mut lines =
        SeekSource(File::open(rollouts).with_context(|| format!("opening '{rollouts_name}'"))?);
    let meta = ReportMeta {
        title: args
            .title
            .clone()
            .unwrap_or_else(|| names::report_title(&names::file_name_of(rollouts)).to_string()),
        sources: vec![source(inputs)?, source(rollouts)?],
        date: args.date.clone(),
    };
    let output = names::beside(rollouts, names::report);
    let input = ReportInput::from_run(
        &profile,
        meta,
        &mut lines,
        &rollouts_name,
        args.conversations,
    )?;
    Ok((input, output))
}

fn from_files(args: &ReportArgs, profile: &Path) -> Result<(ReportInput, PathBuf)> {
    exists(profile, "--profile")?;
    let profile_file = names::file_name_of(profile);
    let metrics = match &args.agent_metrics {
        Some(path) => {
            exists(path, "--agent-metrics")?;
            Some(path.clone())
        }
        None => Some(names::beside(profile, |n| {
            names::agent_metrics_of_profile(n)
        }))
        .filter(|p| p.exists()),
    };
    let read =
        |path: &Path| std::fs::read(path).with_context(|| format!("reading '{}'", path.display()));
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
            .unwrap_or_else(|| names::report_title(&profile_file).to_string()),
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
    Ok((input, names::sibling(profile, names::report(&profile_file))))
}
