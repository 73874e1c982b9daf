//! The native command line: parses flags and hands each command to its module.

mod args;
mod build_pivot;
mod collect;
mod collect_args;
mod compare;
mod compare_entries;
mod compare_gym;
mod export;
mod health;
mod health_check;
mod hydra_args;
mod profile;
mod progress;
mod query;
mod report;
mod select_pivot;
mod select_tasks;
mod validate_atif;
mod validate_pivot;
mod value_parsers;
mod watch;
mod watch_args;

use clap::Parser;
use std::process::ExitCode;

pub use args::{Cli, Command};
pub use hydra_args::normalize_legacy_args;

/// Runs the CLI with the process arguments; errors are printed as `Error: …` with exit code 1, or
/// 2 for a usage error (a bad flag, a pipe as an input, an output that is an input).
pub fn run() -> ExitCode {
    run_args(std::env::args())
}

/// Runs a command in this process with what it prints captured (the Python module's commands):
/// its exit code (as [`run`]'s) and its output as a pipe would have had it. `args` start with
/// the program's name.
pub fn run_captured(args: Vec<String>) -> (u8, crate::native::out::Captured) {
    let (code, captured) = crate::native::out::capture(|| run_args(args));
    let code = (0..=u8::MAX).find(|&c| ExitCode::from(c) == code);
    (code.unwrap_or(1), captured)
}

/// Runs the CLI in this process with `args` (the program's name first), printing as the binary
/// does; its exit code. The Python wheel's `gymscope` command: the extension serves it, so the
/// wheel holds one copy of the core (docs/python.md).
pub fn run_in_process(args: Vec<String>) -> u8 {
    let code = run_args(args);
    (0..=u8::MAX)
        .find(|&c| ExitCode::from(c) == code)
        .unwrap_or(1)
}

/// The command line being run, as given ([`run_args`]): what a report records as its command.
/// In a host's process (the Python module) the process's own arguments are the host's.
static INVOCATION: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());

/// The arguments of the command being run, the program's name first.
pub(crate) fn invocation() -> Vec<String> {
    INVOCATION.lock().map(|a| a.clone()).unwrap_or_default()
}

fn run_args(args: impl IntoIterator<Item = String>) -> ExitCode {
    let args: Vec<String> = args.into_iter().collect();
    crate::native::files::forget_reads();
    if let Ok(mut given) = INVOCATION.lock() {
        given.clone_from(&args);
    }
    let args = match normalize_legacy_args(args) {
        Ok(args) => args,
        Err(e) => {
            crate::note!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) if e.use_stderr() => {
            // A host capturing the output (the Python module) gets the message as text.
            if crate::native::out::capturing() {
                crate::note!("{}", e.render().to_string().trim_end());
            } else {
                let _ = e.print();
            }
            return ExitCode::from(2);
        }
        // `--help`, `--version`: printed as every command prints, so that a stdout that fails
        // (`> /dev/full`) is an error (exit 1) and a closed pipe is quiet.
        Err(e) => {
            let text = if crate::native::out::stdout_is_terminal() {
                e.render().ansi().to_string()
            } else {
                e.render().to_string()
            };
            crate::native::out::stdout_bytes(text.as_bytes());
            return match crate::native::out::finish() {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    crate::note!("Error: could not write standard output: {e}");
                    ExitCode::FAILURE
                }
            };
        }
    };
    // `--example`: the embedded example run, on disk while the command runs.
    let (command, _example) = match with_example(cli.command) {
        Ok(c) => c,
        Err(e) => {
            crate::note!("Error: the embedded example could not be written: {e}");
            return ExitCode::FAILURE;
        }
    };
    // A run given as ATIF: converted to a Gym run on disk for the command's length.
    let (command, _atif) = match with_atif(command, cli.rewards.as_deref()) {
        Ok(c) => c,
        Err(e) => {
            crate::note!("Error: {e:#}");
            return if e.downcast_ref::<crate::native::UsageError>().is_some() {
                ExitCode::from(2)
            } else {
                ExitCode::FAILURE
            };
        }
    };
    let result = match command {
        Command::Profile(args) => profile::run(&args).map(|()| ExitCode::SUCCESS),
        Command::ValidatePivot(args) => validate_pivot::run(&args),
        Command::Collect(args) => collect::run(&args),
        Command::Aggregate(args) => collect::aggregate(&args),
        Command::Export(args) => export::run(&args),
        Command::ValidateAtif(args) => validate_atif::run(&args),
        Command::Report(args) => report::run(&args).map(|()| ExitCode::SUCCESS),
        Command::Compare(args) => compare::run(&args),
        Command::BuildPivot(args) => build_pivot::run(&args),
        Command::SelectPivot(args) => select_pivot::run(&args),
        Command::SelectTasks(args) => select_tasks::run(&args),
        Command::Health(args) => health::run(&args),
        Command::HealthCheck(args) => health_check::run(&args),
        Command::Query(args) => query::run(&args),
        Command::Watch(args) => watch::run(&args),
    };
    // Whatever the command printed last is flushed; a stdout that failed (not a closed pipe)
    // makes a command that succeeded fail, naming standard output.
    let result = result.and_then(|code| match crate::native::out::finish() {
        Ok(()) => Ok(code),
        Err(e) => Err(anyhow::Error::new(e).context("could not write standard output")),
    });
    match result {
        Ok(code) => code,
        Err(e) => {
            crate::note!("Error: {e:#}");
            if e.downcast_ref::<crate::native::UsageError>().is_some() {
                ExitCode::from(2)
            } else {
                ExitCode::FAILURE
            }
        }
    }
}

/// A command whose run is ATIF (a folder or an ATIF file where the rollouts go) as if it named
/// the Gym run it converts to ([`crate::native::atif_input`]); `--rewards` only goes with one.
fn with_atif(
    mut command: Command,
    rewards: Option<&std::path::Path>,
) -> anyhow::Result<(Command, Vec<crate::native::atif_input::AtifRunFiles>)> {
    use crate::native::atif_input::{is_atif_path, load};
    use std::path::PathBuf;
    let mut kept = Vec::new();
    let mut convert = |path: &PathBuf| -> anyhow::Result<Option<(PathBuf, PathBuf)>> {
        if !is_atif_path(path) {
            return Ok(None);
        }
        let (files, note) = load(path, rewards)?;
        crate::note!("{note}");
        let paths = (files.inputs.clone(), files.rollouts.clone());
        kept.push(files);
        Ok(Some(paths))
    };
    match &mut command {
        Command::Profile(a) => {
            if let Some((i, r)) = convert(&a.rollouts)? {
                if a.out_dir.is_none() {
                    a.out_dir = Some(atif_output_dir(&a.rollouts));
                }
                (a.inputs, a.rollouts) = (Some(i), r);
            }
        }
        Command::Health(a) => {
            for slot in [&mut a.rollouts, &mut a.rollouts_flag]
                .into_iter()
                .flatten()
            {
                if let Some((i, r)) = convert(slot)? {
                    converted_inputs(&mut a.inputs, i);
                    *slot = r;
                }
            }
        }
        Command::Query(a) => {
            if let Some(slot) = a.rollouts.as_mut() {
                if let Some((i, r)) = convert(slot)? {
                    converted_inputs(&mut a.inputs, i);
                    *slot = r;
                }
            } else if a.positional.len() == 2 {
                if let Some((i, r)) = convert(&PathBuf::from(&a.positional[0]))? {
                    converted_inputs(&mut a.inputs, i);
                    a.positional[0] = r.display().to_string();
                }
            }
        }
        Command::Report(a) => {
            if let Some(slot) = a.rollouts.as_mut() {
                let source = slot.clone();
                if let Some((i, r)) = convert(slot)? {
                    converted_inputs(&mut a.inputs, i);
                    *slot = r;
                    a.output.get_or_insert_with(|| {
                        atif_output_dir(&source).join(format!("{}_report.html", atif_stem(&source)))
                    });
                }
            }
        }
        Command::Compare(a) => {
            let atif_runs = a
                .runs
                .iter()
                .chain(&a.baseline)
                .chain(&a.candidates)
                .filter(|r| is_atif_path(std::path::Path::new(r)))
                .count();
            if rewards.is_some() && atif_runs > 1 {
                return Err(crate::native::UsageError(format!(
                    "--rewards names one ATIF run's rewards, and {atif_runs} runs are ATIF: convert each with its rewards (gymscope query RUN --rewards R --format jsonl) and compare the results"
                ))
                .into());
            }
            for run in &mut a.runs {
                if let Some((_, r)) = convert(&PathBuf::from(&*run))? {
                    *run = r.display().to_string();
                }
            }
        }
        Command::BuildPivot(a) => {
            if let Some((_, r)) = convert(&a.input)? {
                a.input = r;
            }
        }
        _ => {}
    }
    if rewards.is_some() && kept.is_empty() {
        return Err(crate::native::UsageError(
            "--rewards goes with a run given as ATIF (a folder or an ATIF file); Gym rollouts carry their rewards".into(),
        )
        .into());
    }
    Ok((command, kept))
}

/// The converted run's materialized inputs, in place of any `--inputs` given: the converted
/// rollouts are keyed by the conversion, which a Gym run's inputs do not follow.
fn converted_inputs(slot: &mut Option<std::path::PathBuf>, converted: std::path::PathBuf) {
    if let Some(given) = slot.replace(converted) {
        crate::note!(
            "Note: --inputs '{}' is not used: an ATIF run brings its own materialized inputs",
            given.display()
        );
    }
}

/// Where outputs named after an ATIF run go by default: beside it.
fn atif_output_dir(source: &std::path::Path) -> std::path::PathBuf {
    std::path::absolute(source)
        .ok()
        .and_then(|p| p.parent().map(std::path::Path::to_path_buf))
        .unwrap_or_default()
}

fn atif_stem(source: &std::path::Path) -> String {
    let name = source.file_name().unwrap_or_default().to_string_lossy();
    name.strip_suffix(".json").unwrap_or(&name).to_string()
}

/// A command given `--example` as if it named the embedded example's files, with the example
/// kept on disk by the returned guard.
fn with_example(
    mut command: Command,
) -> std::io::Result<(Command, Option<crate::native::example::ExampleRun>)> {
    use crate::native::example::{ExampleRun, TITLE};
    let wants = match &command {
        Command::Report(a) => a.example,
        Command::Health(a) => a.example,
        Command::Query(a) => a.example,
        Command::Compare(a) => a.example,
        _ => false,
    };
    if !wants {
        return Ok((command, None));
    }
    let run = if matches!(command, Command::Compare(_)) {
        ExampleRun::write_comparison()?
    } else {
        ExampleRun::write()?
    };
    let (inputs, rollouts) = (Some(run.inputs.clone()), Some(run.rollouts.clone()));
    match &mut command {
        Command::Report(a) => {
            (a.inputs, a.rollouts) = (inputs, rollouts);
            a.output.get_or_insert_with(|| "example_report.html".into());
            a.title.get_or_insert_with(|| TITLE.into());
        }
        Command::Health(a) => (a.inputs, a.rollouts) = (inputs, rollouts),
        Command::Query(a) => (a.inputs, a.rollouts) = (inputs, rollouts),
        // The baseline and the candidate (the fields hold the two runs' rollouts).
        Command::Compare(a) => {
            a.runs = [&run.inputs, &run.rollouts]
                .map(|p| p.display().to_string())
                .to_vec();
        }
        _ => {}
    }
    Ok((command, Some(run)))
}
