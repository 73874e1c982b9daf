//! The native command line: parses flags and hands each command to its module.

mod args;
mod atomic;
mod build_pivot_cmd;
mod collect_cmd;
mod collect_merge;
mod pivot_cmd;
mod profile_cmd;
mod report_cmd;
mod select_pivot_cmd;

use clap::Parser;
use std::process::ExitCode;

pub use args::{normalize_legacy_args, Cli, Command};

/// Runs the CLI with the process arguments; errors are printed as `Error: …` with exit code 1.
pub fn run() -> ExitCode {
    let cli = match Cli::try_parse_from(normalize_legacy_args(std::env::args())) {
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
        Command::BuildPivot(args) => build_pivot_cmd::run(&args),
        Command::SelectPivot(args) => select_pivot_cmd::run(&args),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("Error: {e:#}");
            ExitCode::FAILURE
        }
    }
}
