//! The native command line: parses flags and hands each command to its module.

mod args;
mod build_pivot_cmd;
mod collect_cmd;
mod compare_cmd;
mod health_check_cmd;
mod health_cmd;
mod hydra_args;
mod pivot_cmd;
mod profile_cmd;
mod progress;
mod report_cmd;
mod select_pivot_cmd;

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
        Command::Profile(args) => profile_cmd::run(&args).map(|()| ExitCode::SUCCESS),
        Command::ValidatePivot(args) => pivot_cmd::run(&args),
        Command::Collect(args) => collect_cmd::run(&args),
        Command::Report(args) => report_cmd::run(&args).map(|()| ExitCode::SUCCESS),
        Command::Compare(args) => compare_cmd::run(&args).map(|()| ExitCode::SUCCESS),
        Command::BuildPivot(args) => build_pivot_cmd::run(&args),
        Command::SelectPivot(args) => select_pivot_cmd::run(&args),
        Command::Health(args) => health_cmd::run(&args),
        Command::HealthCheck(args) => health_check_cmd::run(&args),
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
