//! `gymscope select-pivot`: indexes the profile, decides on every pivot in the core, then copies
//! the selected rows (read back by byte span) with their `profile_info` and writes the counts.

use super::args::{SelectPivotArgs, SortArg};
use super::build_pivot::refuse_overwrite_all;
use crate::names;
use crate::native::atomic::AtomicFile;
use crate::native::files::{read_document, Cleared, DOCUMENT_CAP};
use crate::native::inputs::{check_input, Input};
use crate::native::read::for_each_chunk;
use crate::native::UsageError;
use crate::pivot_build::select::{
    selected_row, Class, ProfileIndex, SelectOptions, Selector, Sort,
};
use crate::read::jsonl::LineSpan;
use anyhow::{bail, Context, Result};
use serde_json::Value;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::Path;
use std::process::ExitCode;

/// Writes `counts` (pretty JSON) to `path`, then renames every file into place: each is written
/// whole before any is renamed, so a failure leaves the previous set as it was.
pub(super) fn commit_with_counts(
    cleared: &Cleared,
    mut files: Vec<AtomicFile>,
    path: &Path,
    counts: &Value,
) -> Result<()> {
    let mut json = serde_json::to_string_pretty(counts)?;
    json.push('\n');
    let mut sel = cleared.create(path)?;
    sel.write_all(json.as_bytes())?;
    files.push(sel);
    for f in files {
        f.commit()?;
    }
    Ok(())
}

/// Reads a file in chunks through the one native reader: feeds `path` to `each` until the end or until it returns `false` (a refused line).
pub(super) fn stream(path: &Path, mut each: impl FnMut(&[u8]) -> bool) -> Result<()> {
    for_each_chunk::<anyhow::Error>(path, &path.display().to_string(), |chunk| Ok(each(chunk)))
}

/// How a written row is made from the line read back and its `profile_info`.
pub(super) type MakeRow = fn(&[u8], Option<&Value>) -> Result<Vec<u8>, String>;

/// Writes the rows at `spans` of `path` (read back by byte span), each made by `row` from the
/// line and its `profile_info`.
pub(super) fn copy_rows<'i>(
    path: &Path,
    spans: impl Iterator<Item = (LineSpan, Option<&'i Value>)>,
    out: &mut impl Write,
    row: MakeRow,
) -> Result<()> {
    let mut file = File::open(path).with_context(|| format!("cannot read '{}'", path.display()))?;
    let mut line = Vec::new();
    for (span, info) in spans {
        line.resize(span.len as usize, 0);
        file.seek(SeekFrom::Start(span.offset))?;
        file.read_exact(&mut line)
            .with_context(|| format!("'{}' changed while reading", path.display()))?;
        let bytes = row(&line, info)
            .map_err(|e| anyhow::anyhow!("'{}' line {}: {e}", path.display(), span.line))?;
        out.write_all(&bytes)?;
    }
    Ok(())
}

pub fn run(args: &SelectPivotArgs) -> Result<ExitCode> {
    let keep = args
        .keep
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| {
            Class::parse(s).ok_or_else(|| {
                UsageError(format!("--keep: '{s}' is not one of mixed, all_success, all_failure, unprofiled, insufficient_rollouts"))
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    if args.difficulty_threshold.is_some_and(|t| t <= 0.0) {
        return Err(UsageError("--difficulty-threshold must be greater than 0".into()).into());
    }
    if let Some(f) = args.val_fraction.filter(|f| !(0.0..1.0).contains(f)) {
        return Err(UsageError(format!(
            "--val-fraction must be at least 0 and below 1, got {f}"
        ))
        .into());
    }
    let options = SelectOptions {
        min_rollouts: args.min_rollouts,
        success_threshold: args.success_threshold,
        keep,
        max_pivots: args.max_pivots,
        difficulty_threshold: args.difficulty_threshold,
        max_mean: args.max_mean,
        dedupe_prefix: args.dedupe_prefix,
        val_fraction: args.val_fraction,
        seed: args.seed,
        sort: match args.sort {
            SortArg::None => Sort::None,
            SortArg::Difficulty => Sort::Difficulty,
            SortArg::Variance => Sort::Variance,
        },
    };
    let out_name = names::file_name_of(&args.output);
    let selection_path = names::sibling(&args.output, names::pivot_selection(&out_name));
    let config_out = names::sibling(&args.output, names::pivot_gym_config(&out_name));
    let val_path = names::sibling(&args.output, names::validation_split(&out_name));
    let config_in = args
        .config
        .clone()
        .unwrap_or_else(|| names::beside(&args.pivots, names::pivot_gym_config));
    // The pivots are read twice (decided, then copied by span): no pipes.
    for (path, flag, twice) in [
        (&args.pivots, "--pivots", true),
        (&args.profile, "--profile", false),
    ] {
        check_input(Input { path, flag }, twice)?;
    }
    // Only a missing file "does not exist": a pipe or a device is `check_input`'s to judge.
    if !config_in.exists() {
        return Err(UsageError(format!(
            "no Gym config for the selection: '{}' does not exist; build-pivot writes it beside the pivots, or give --config FILE",
            config_in.display()
        ))
        .into());
    }
    check_input(Input::new(&config_in, "--config"), false)?;
    let mut outputs = vec![
        (args.output.as_path(), "--output"),
        (&selection_path, "the selection file"),
        (&config_out, "--config-out"),
    ];
    if args.val_fraction.is_some() {
        outputs.push((&val_path, "the validation file"));
    }
    let cleared = refuse_overwrite_all(
        &[
            (&args.pivots, "--pivots"),
            (&args.profile, "--profile"),
            (&config_in, "--config"),
        ],
        &outputs,
    )?;
    let config_text = String::from_utf8(read_document(&config_in, "--config", DOCUMENT_CAP)?)
        .map_err(|_| anyhow::anyhow!("'{}' is not UTF-8 text", config_in.display()))?;

    let mut index = ProfileIndex::new(args.profile.display().to_string());
    stream(&args.profile, |c| index.push(c))?;
    let index = index.finish()?;
    let mut selector = Selector::new(args.pivots.display().to_string(), index, options.clone());
    stream(&args.pivots, |c| selector.push(c))?;
    let plan = selector.finish()?;
    if plan.counts.kept == 0 {
        // An empty file would be trained on as if it were a selection: say why, write nothing.
        bail!(
            "no pivot selected from '{}': {}",
            args.pivots.display(),
            plan.counts.why_empty(&options)
        );
    }

    // Every file is written whole before any is renamed into place (as build-pivot's): a
    // failure leaves the previous set as it was, never a new file beside old ones.
    let write =
        |path: &Path, rows: &[crate::pivot_build::select::Decision]| -> Result<AtomicFile> {
            let mut out = cleared.create(path)?;
            copy_rows(
                &args.pivots,
                rows.iter().map(|d| (d.span, d.profile_info.as_ref())),
                &mut out,
                selected_row,
            )?;
            Ok(out)
        };
    // The config names the files as the build's did: absolute when it was.
    let shown = |p: &Path| {
        let absolute = config_text
            .lines()
            .any(|l| l.trim_start().starts_with("jsonl_fpath: /"));
        let p = if absolute {
            std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf())
        } else {
            p.to_path_buf()
        };
        p.display().to_string()
    };
    let split = args.val_fraction.is_some();
    let config = crate::pivot_build::config::retarget(
        &config_text,
        &shown(&args.output),
        split.then(|| shown(&val_path)).as_deref(),
    )
    .map_err(|e| anyhow::anyhow!("'{}': {e}", config_in.display()))?;
    let mut files = vec![write(&args.output, &plan.selected)?];
    if split {
        files.push(write(&val_path, &plan.validation)?);
    }
    let mut cfg = cleared.create(&config_out)?;
    cfg.write_all(config.as_bytes())?;
    files.push(cfg);
    commit_with_counts(&cleared, files, &selection_path, &plan.counts.to_json())?;
    let stdout = &mut crate::native::out::Stdout;
    write!(stdout, "{}", plan.counts.markdown())?;
    writeln!(stdout, "selected pivots: {}", args.output.display())?;
    if split {
        writeln!(stdout, "validation pivots: {}", val_path.display())?;
    }
    writeln!(
        stdout,
        "Gym config: {}\nselection: {}",
        config_out.display(),
        selection_path.display()
    )?;
    Ok(ExitCode::SUCCESS)
}
