//! A run's aggregate entries from its rollouts (and the materialized inputs beside them), for
//! `compare --baseline` on a run without `*_aggregate_metrics.json`: profiled as `profile` does,
//! shaped by the core (`gym_report::entries_from_profile`).

use super::args::CompareArgs;
use super::profile::profile_run;
use crate::compare::gym_report::{entries_from_profile, Entries};
use crate::names;
use crate::render::SeekSource;
use anyhow::{bail, Context, Result};
use std::fs::File;
use std::path::Path;

pub fn from_rollouts(rollouts: &Path, args: &CompareArgs) -> Result<Entries> {
    let inputs = names::beside(rollouts, names::materialized_inputs);
    if !inputs.is_file() {
        bail!(
            "'{}' has no aggregate metrics beside it, and its materialized inputs '{}' are not \
             there to compute them from",
            rollouts.display(),
            inputs.display()
        );
    }
    let profile = profile_run(
        &inputs,
        rollouts,
        args.allow_partial_rollouts,
        args.max_line_bytes,
    )?;
    let name = inputs.display().to_string();
    let file = File::open(&inputs).with_context(|| format!("opening '{name}'"))?;
    Ok(entries_from_profile(
        &profile,
        &mut SeekSource(file),
        &name,
    )?)
}
