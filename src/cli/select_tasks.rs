//! `gymscope select-tasks`: reads the profile once into one small entry per task (the core
//! decides: `gymscope::curate`), then copies each kept task's `sample` (read back by byte span)
//! to the output and the validation file, and writes the counts.

use super::args::SelectTasksArgs;
use super::build_pivot::refuse_overwrite;
use super::select_pivot::{commit_with_counts, copy_rows, stream};
use crate::curate::{self, curated_row, TaskOptions, TaskReader};
use crate::names;
use crate::native::atomic::AtomicFile;
use crate::native::inputs::{check_input, Input};
use crate::native::UsageError;
use crate::query::Query;
use anyhow::{bail, Result};
use std::io::Write;
use std::process::ExitCode;

fn options(args: &SelectTasksArgs) -> Result<TaskOptions> {
    let filter = match &args.filter {
        Some(source) => Some(Query::parse(source).map_err(|e| {
            let caret = " ".repeat(e.column.saturating_sub(1));
            UsageError(format!("--where, {e}\n  {source}\n  {caret}^"))
        })?),
        None => None,
    };
    let options = TaskOptions {
        pass_threshold: args.pass_threshold,
        min_pass: args.min_pass,
        max_pass: args.max_pass,
        min_mean: args.min_mean,
        max_mean: args.max_mean,
        drop_saturated: args.drop_saturated,
        min_rollouts: args.min_rollouts,
        filter,
        max_tasks: args.max_tasks,
        seed: args.seed,
        stratify: args.stratify.clone(),
        target_pass: args.target_pass,
        val_fraction: args.val_fraction,
        group_by: args.group_by.clone(),
        annotate: args.annotate,
    };
    options.check().map_err(UsageError)?;
    Ok(options)
}

pub fn run(args: &SelectTasksArgs) -> Result<ExitCode> {
    let options = options(args)?;
    let out_name = names::file_name_of(&args.output);
    let selection_path = names::sibling(&args.output, names::pivot_selection(&out_name));
    let val_path = names::sibling(&args.output, names::validation_split(&out_name));
    // The profile is read twice (decided, then copied by span): no pipes.
    check_input(Input::new(&args.profile, "--profile"), true)?;
    let mut outputs = vec![args.output.as_path(), selection_path.as_path()];
    if options.val_fraction.is_some() {
        outputs.push(&val_path);
    }
    let cleared = refuse_overwrite(&args.profile, &outputs)?;

    let mut reader = TaskReader::new(args.profile.display().to_string(), &options);
    stream(&args.profile, |c| reader.push(c))?;
    let mut entries = reader.finish()?;
    let plan = curate::plan(&mut entries, &options);
    if plan.counts.kept == 0 {
        // An empty dataset would be collected or trained on as if it were a selection.
        bail!(
            "no task selected from '{}': {}",
            args.profile.display(),
            plan.counts.why_empty()
        );
    }
    let info = |i: usize| options.annotate.then(|| entries[i].profile_info());
    // Every file is written whole before any is renamed into place: a failure (a full disk, a
    // signal) leaves the previous set as it was, never a new file beside old ones.
    let write = |path: &std::path::Path, rows: &[usize]| -> Result<AtomicFile> {
        let infos: Vec<_> = rows.iter().map(|&i| info(i)).collect();
        let mut out = cleared.create(path)?;
        copy_rows(
            &args.profile,
            rows.iter()
                .zip(&infos)
                .map(|(&i, info)| (entries[i].span, info.as_ref())),
            &mut out,
            curated_row,
        )?;
        Ok(out)
    };
    let mut files = vec![write(&args.output, &plan.kept)?];
    if options.val_fraction.is_some() {
        files.push(write(&val_path, &plan.validation)?);
    }
    commit_with_counts(
        &cleared,
        files,
        &selection_path,
        &plan.counts.to_json(&options),
    )?;
    let stdout = &mut crate::native::out::Stdout;
    write!(stdout, "{}", plan.counts.text())?;
    writeln!(stdout, "curated tasks: {}", args.output.display())?;
    if options.val_fraction.is_some() {
        writeln!(stdout, "validation tasks: {}", val_path.display())?;
    }
    writeln!(stdout, "selection: {}", selection_path.display())?;
    Ok(ExitCode::SUCCESS)
}
