//! The native command line: parses flags and hands each command to its module.

mod args;
mod build_pivot;
mod collect;
mod compare;
mod health;
mod health_check;
mod hydra_args;
mod profile;
mod progress;
mod query;
mod report;
mod select_pivot;
mod select_tasks;
mod validate_pivot;

use clap::Parser;
use std::process::ExitCode;

pub use args::{Cli, Command};
pub use hydra_args::normalize_legacy_args;

/// Runs the CLI with the process arguments; errors are printed as `Error: …` with exit code 1, or
/// 2 for a usage error (a bad flag, a pipe as an input, an output that is an input).
pub fn run() -> ExitCode {
    let args = match normalize_legacy_args(std::env::args()) {
        Ok(args) => args,
        Err(e) => {
            crate::note!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() {
                ExitCode::from(2)
            } else {
                ExitCode::SUCCESS
            };
        }
    };
    let result = match cli.command {
        Command::Profile(args) => profile::run(&args).map(|()| ExitCode::SUCCESS),
        Command::ValidatePivot(args) => validate_pivot::run(&args),
        Command::Collect(args) => collect::run(&args),
        Command::Report(args) => report::run(&args).map(|()| ExitCode::SUCCESS),
        Command::Compare(args) => compare::run(&args),
        Command::BuildPivot(args) => build_pivot::run(&args),
        Command::SelectPivot(args) => select_pivot::run(&args),
        Command::SelectTasks(args) => select_tasks::run(&args),
        Command::Health(args) => health::run(&args),
        Command::HealthCheck(args) => health_check::run(&args),
        Command::Query(args) => query::run(&args),
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
