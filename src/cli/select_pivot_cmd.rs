use super::args::SelectPivotArgs;
use anyhow::Result;
use std::process::ExitCode;
pub fn run(_a: &SelectPivotArgs) -> Result<ExitCode> {
    todo!()
}
