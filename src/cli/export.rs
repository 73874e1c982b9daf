//! `gymscope export --format atif`: the core's batch export ([`crate::atif::export_batch`], its
//! lines converted on every core) written as NeMo Gym v0.7.0 writes it: into a hidden staging
//! folder beside the output, renamed into place only when every row converted, so a refusal, an
//! error or Ctrl-C leaves nothing.

use super::args::ExportArgs;
use crate::atif::export_batch::{Batch, LineExport};
use crate::native::in_order::{read_in_order, ReadFile};
use crate::native::read::ReadError;
use crate::native::{check_input, parallel, signals, Input, UsageError};
use crate::read::batch::LineBatch;
use crate::read::job::Job;
use crate::read::jsonl::LineTooLong;
use crate::record::RowKind;
use anyhow::{bail, Context, Result};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Removes the staging folder unless it was renamed into place, and the folders made for the
/// output (deepest first, each only if still empty), so a refusal leaves the disk as it was.
struct Staging {
    dir: Option<PathBuf>,
    made: Vec<PathBuf>,
    kept: bool,
}

impl Drop for Staging {
    fn drop(&mut self) {
        if !self.kept {
            if let Some(dir) = &self.dir {
                let _ = std::fs::remove_dir_all(dir);
            }
            for dir in &self.made {
                if std::fs::remove_dir(dir).is_err() {
                    break;
                }
            }
        }
    }
}

/// Creates `dir` and its missing ancestors; returns those it made, deepest first.
fn create_folders(dir: &Path) -> Result<Vec<PathBuf>> {
    let made: Vec<PathBuf> = dir
        .ancestors()
        .take_while(|a| a.symlink_metadata().is_err())
        .map(Path::to_path_buf)
        .collect();
    std::fs::create_dir_all(dir)
        .with_context(|| format!("could not create the folder '{}'", dir.display()))?;
    Ok(made)
}

pub fn run(args: &ExportArgs) -> Result<ExitCode> {
    // The files first: a folder given as --rollouts is named as what it is, not as the blank
    // session id its name would give.
    let input = Input::new(&args.rollouts, "--rollouts");
    check_input(input, false)?;
    // v0.7.0's export config has no defaults for either (exit 2, in its words).
    let missing: Vec<&str> = [
        ("session_id", args.session_id.is_none()),
        ("agent_version", args.agent_version.is_none()),
    ]
    .iter()
    .filter(|(_, m)| *m)
    .map(|(k, _)| *k)
    .collect();
    if let Some(first) = missing.first() {
        return Err(UsageError(format!(
            "missing required configuration: {}. Provide each via its flag (see --help) or as a +{first}=<value> override.",
            missing.join(", ")
        ))
        .into());
    }
    let session_id = args.session_id.clone().unwrap_or_default();
    let agent_version = args.agent_version.clone().unwrap_or_default();
    for (key, value) in [
        ("session_id", &session_id),
        ("agent_version", &agent_version),
    ] {
        let why = if value.is_empty() {
            "String should have at least 1 character"
        } else if crate::atif::strict_model::is_blank(value) {
            "Value error, must contain a non-whitespace character"
        } else {
            continue;
        };
        return Err(UsageError(format!("invalid configuration: {key} ({why}).")).into());
    }
    // `new/..` names the folder it resolves to (here, an existing one), not `new`.
    let output = crate::native::inputs::lexical(
        &std::path::absolute(&args.output_dir)
            .with_context(|| format!("could not resolve '{}'", args.output_dir.display()))?,
    );
    if output.symlink_metadata().is_ok() {
        bail!("Output path already exists: {}", output.display());
    }
    let parent = output.parent().unwrap_or(Path::new("/"));
    let made = create_folders(parent)?;
    let name = output
        .file_name()
        .unwrap_or_default()
        .to_string_lossy()
        .into_owned();
    let staging_dir = parent.join(format!(".{name}.tmp-{}", std::process::id()));
    // Made before the staging folder, so a failure to create that one still removes them.
    let mut staging = Staging {
        dir: None,
        made,
        kept: false,
    };
    std::fs::create_dir(&staging_dir)
        .with_context(|| format!("could not create '{}'", staging_dir.display()))?;
    let staging_dir = staging.dir.insert(staging_dir).clone();
    // Ctrl-C, SIGTERM and a closed terminal are checked between rows, so the staging folder
    // goes with the process.
    let _handled = signals::handled_elsewhere_with_hangup();

    let file_name = args.rollouts.display().to_string();
    let batch = Batch::new(&session_id, &agent_version);
    let converter = batch.converter().clone();
    let mut job = ExportJob {
        batch,
        staging_dir: &staging_dir,
        file_name: &file_name,
    };
    // Lines convert on every core and are written in file order (`native::in_order`).
    let converters = (0..parallel::workers()).map(|_| |b: LineBatch| converter.batch(&b));
    let file = ReadFile {
        path: &args.rollouts,
        name: &file_name,
        kind: RowKind::Rollout,
    };
    let read = read_in_order(
        &[file],
        args.max_line_bytes,
        &mut job,
        converters,
        |_, _| match signals::caught() {
            Some(_) => Err(anyhow::Error::msg("interrupted")),
            None => Ok(()),
        },
    );
    if let Some(code) = interrupted() {
        return Ok(code);
    }
    read?;
    let batch = job.batch;
    let manifest = batch
        .finish()
        .map_err(|e| anyhow::Error::msg(naming_the_file(&e, &file_name)))?;
    let manifest_path = staging_dir.join("manifest.jsonl");
    std::fs::write(&manifest_path, manifest)
        .with_context(|| format!("could not write '{}'", manifest_path.display()))?;
    if let Some(code) = interrupted() {
        return Ok(code);
    }
    if output.symlink_metadata().is_ok() {
        bail!(
            "Output path was created during export: {}",
            output.display()
        );
    }
    set_mode_755(&staging_dir)?;
    std::fs::rename(&staging_dir, &output)
        .with_context(|| format!("could not move the export into '{}'", output.display()))?;
    staging.kept = true;
    crate::say!(
        "Exported {} ATIF trajectory file(s) to {}",
        batch.count(),
        output.display()
    );
    crate::say!("Manifest: {}", output.join("manifest.jsonl").display());
    Ok(ExitCode::SUCCESS)
}

/// The export as a reading job: each converted line recorded in file order, its file written
/// into the staging folder (after a refusal nothing more is written: the folder will not be
/// kept).
struct ExportJob<'a> {
    batch: Batch,
    staging_dir: &'a Path,
    file_name: &'a str,
}

impl Job for ExportJob<'_> {
    type Part = Vec<(u64, LineExport)>;
    type Error = anyhow::Error;

    fn record(&mut self, lines: Self::Part, _before: u64) -> Result<()> {
        for (line_no, export) in lines {
            let Some(exported) = self.batch.record(line_no, export) else {
                continue;
            };
            if self.batch.errors.is_empty() {
                let path = self.staging_dir.join(&exported.file_name);
                std::fs::write(&path, &exported.bytes)
                    .with_context(|| format!("could not write '{}'", path.display()))?;
            }
        }
        Ok(())
    }

    fn too_long(&mut self, _: RowKind, t: LineTooLong) -> Result<()> {
        let (file, line, limit) = (self.file_name.to_string(), t.line, t.limit);
        Err(ReadError::TooLong { file, line, limit }.into())
    }

    fn read_failed(&mut self, _: RowKind, cause: String) -> anyhow::Error {
        anyhow::anyhow!("Could not read '{}': {cause}", self.file_name)
    }
}

/// After Ctrl-C, SIGTERM or SIGHUP: the exit status a shell expects (128 + the signal); the staging
/// folder goes when `run` returns.
fn interrupted() -> Option<ExitCode> {
    let sig = signals::caught()?;
    crate::note!("Interrupted: nothing was written.");
    Some(crate::native::signals::exit_code(sig))
}

fn set_mode_755(dir: &Path) -> Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o755))
        .with_context(|| format!("could not set the permissions of '{}'", dir.display()))
}

/// Upstream's batch error with the file named on its first line, as gymscope's own detail
/// (`(gymscope: …)`, the form every export reason's extra takes): v0.7.0 names only lines.
fn naming_the_file(error: &str, file: &str) -> String {
    let (first, rest) = error
        .split_once('\n')
        .map_or((error, None), |(a, b)| (a, Some(b)));
    let named = format!("{first} (gymscope: '{file}')");
    match rest {
        Some(rest) => format!("{named}\n{rest}"),
        None => named,
    }
}
