//! `gymscope validate-pivot`: streams the file through the core validator, prints upstream's
//! summary or the grouped errors, and writes the `--fix` copy atomically.

use super::args::{Format, ValidatePivotArgs};
use crate::inspect::pivot::PivotView;
use crate::native::files::clear_outputs;
use crate::native::read::for_each_chunk;
use crate::native::{check_input, Input};
use crate::pivot::{PivotOptions, PivotValidator};
use anyhow::Result;
use std::io::Write;
use std::process::ExitCode;

pub fn run(args: &ValidatePivotArgs) -> Result<ExitCode> {
    let name = args.path.display().to_string();
    let options = PivotOptions {
        agent_ref: args.agent_ref.clone(),
        check_tool_names: !args.no_check_tool_names,
        require_fields: args.require_field.clone(),
        require_any_fields: args.require_any_field.clone(),
        allow_batch: args.allow_batch,
        fail_fast: args.fail_fast,
        max_errors: args.max_errors,
        stats: args.stats,
        fix: args.fix.is_some(),
        gym_models: args.gym_repo.is_some(),
    };
    if let Some(dir) = &args.gym_repo {
        if let Some(missing) = missing_gym_module(dir) {
            // Upstream's words: its import of Gym's validators failed.
            crate::note!(
                "validation failed: failed to import Gym validators from {}: No module named '{missing}'",
                python_path(dir)
            );
            return Ok(ExitCode::FAILURE);
        }
    }
    let input = Input::new(&args.path, "--path");
    // Read once, front to back: a pipe is fine here.
    check_input(input, false)?;
    let mut fixed = match &args.fix {
        Some(out) => {
            let cleared = clear_outputs(&[input], &[(out, "--fix")])?;
            Some(cleared.create(out)?)
        }
        None => None,
    };
    let mut validator =
        PivotValidator::new(&name, options).with_max_line_bytes(args.max_line_bytes);
    for_each_chunk::<anyhow::Error>(&args.path, &name, |chunk| {
        let go_on = validator.push(chunk);
        if let Some(out) = &mut fixed {
            out.write_all(&validator.take_fixed())?;
        }
        Ok(go_on)
    })?;
    let (report, rest) = validator.finish();
    // A validation that stopped early (a line over the limit, --fail-fast) has not seen every
    // row: a fixed copy would silently lack the rest, so none is written.
    let fixed_written = match fixed {
        Some(mut out) if !report.stopped_early => {
            out.write_all(&rest)?;
            out.commit()?;
            true
        }
        _ => false,
    };

    let view = PivotView::new(&report);
    let stdout = &mut crate::native::out::Stdout;
    let stderr = &mut crate::native::out::Stderr;
    match args.format {
        Format::Json => {
            serde_json::to_writer_pretty(&mut *stdout, &view)?;
            writeln!(stdout)?;
        }
        Format::Text if report.is_valid() => {
            write!(stdout, "{}", view.summary_text)?;
            if let Some(stats) = &view.stats_text {
                write!(stdout, "{stats}")?;
            }
        }
        Format::Text => {
            write!(stderr, "{}", view.failure_text())?;
            if let Some(stats) = &view.stats_text {
                write!(stderr, "\n{stats}")?;
            }
        }
    }
    if let (Some(out), false) = (&args.fix, fixed_written) {
        writeln!(
            stderr,
            "\nno fixed copy written to '{}': the validation stopped before the end of '{name}'",
            out.display()
        )?;
    }
    if let (Some(fix), Some(out), Format::Text, true) =
        (&view.fix, &args.fix, args.format, fixed_written)
    {
        writeln!(
            stderr,
            "\nfixed copy: {} rows written to '{}' ({} changed)",
            fix.written,
            out.display(),
            fix.changed
        )?;
        if !fix.unfixable.is_empty() {
            writeln!(
                stderr,
                "{} rows could not be fixed and were left out:",
                fix.unfixable.len()
            )?;
            for (_, why) in &fix.unfixable {
                writeln!(stderr, "  {why}")?;
            }
        }
    }
    Ok(
        if report.is_valid() && (fixed_written || args.fix.is_none()) {
            ExitCode::SUCCESS
        } else {
            ExitCode::FAILURE
        },
    )
}

/// The module Python could not import from `dir` (upstream puts `dir` first on `sys.path` and
/// imports `nemo_gym.openai_utils`), or `None` when the checkout has it.
fn missing_gym_module(dir: &std::path::Path) -> Option<&'static str> {
    if !dir.join("nemo_gym").is_dir() {
        Some("nemo_gym")
    } else if !dir.join("nemo_gym/openai_utils.py").is_file() {
        Some("nemo_gym.openai_utils")
    } else {
        None
    }
}

/// `str(Path(dir))` as Python prints it: no `.` components, no trailing slash.
fn python_path(dir: &std::path::Path) -> String {
    let tidy: std::path::PathBuf = dir
        .components()
        .filter(|c| *c != std::path::Component::CurDir)
        .collect();
    if tidy.as_os_str().is_empty() {
        ".".into()
    } else {
        tidy.display().to_string()
    }
}
