//! `gymscope profile`: streams both files from disk through the core profile and writes the three
//! output files (NeMo Gym v0.7.0's) atomically, as a set.

use super::args::ProfileArgs;
use crate::health::{HealthBuilder, HealthError, HealthReport};
use crate::native::profile_files::{output_paths, read_profile_with, write_outputs};
use crate::native::run_files::check_run_files;
use crate::profile::Profile;
use crate::render;
use anyhow::Result;
use std::path::Path;

pub fn run(args: &ProfileArgs) -> Result<()> {
    let inputs_path = args.inputs.as_ref().ok_or_else(|| {
        crate::native::UsageError(
            "give --inputs (the run's *_materialized_inputs.jsonl), unless --rollouts is ATIF"
                .into(),
        )
    })?;
    check_run_files(inputs_path, &args.rollouts)?;
    // Outputs are checked before the read, so a refusal costs nothing.
    output_paths(inputs_path, &args.rollouts, args.out_dir.as_deref())?;
    let profile = profile_run(
        inputs_path,
        &args.rollouts,
        args.allow_partial_rollouts,
        args.max_line_bytes,
    )?;
    let [profiling, metrics, repeats] = write_outputs(
        &profile,
        inputs_path,
        &args.rollouts,
        args.out_dir.as_deref(),
    )?;
    crate::say_part!(
        "{}",
        render::summary_text(
            &profile,
            &profiling.display().to_string(),
            &metrics.display().to_string(),
            &repeats.display().to_string()
        )
    );
    // The command ends here: the exit returns the profile's memory at once, where freeing its
    // rows one by one was the run's last 50 ms, on one thread (perf, the dense bench). In a
    // host's process (the Python module) it is freed: the process goes on.
    if !crate::native::out::capturing() {
        std::mem::forget(profile);
    }
    Ok(())
}

/// Streams a run's two files through [`ProfileBuilder`] (shared by `profile`, `report` and
/// `compare`).
pub(super) fn profile_run(
    inputs: &Path,
    rollouts: &Path,
    allow_partial_rollouts: bool,
    max_line_bytes: u64,
) -> Result<Profile> {
    profile_run_with(
        inputs,
        rollouts,
        allow_partial_rollouts,
        max_line_bytes,
        None,
    )
    .map(|(profile, _)| profile)
}

/// [`profile_run`], with rollout health (`report`; never `profile`) in the same read. The profile's errors come first; the health result is the caller's to judge.
pub(super) fn profile_run_with(
    inputs: &Path,
    rollouts: &Path,
    allow_partial_rollouts: bool,
    max_line_bytes: u64,
    health: Option<HealthBuilder>,
) -> Result<(Profile, Option<Result<HealthReport, HealthError>>)> {
    let mut progress = super::progress::FileProgress::new(&[inputs, rollouts]);
    let read = read_profile_with(
        inputs,
        rollouts,
        allow_partial_rollouts,
        max_line_bytes,
        health,
        |n| progress.advance(n),
    );
    progress.finish();
    read
}
