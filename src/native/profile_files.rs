//! A run's profile read from disk and written beside it, as `gymscope profile` does and the
//! Python module's `profile()` and `Profile.write()` do: both files streamed on every core
//! (`read_profile_with`), the three output files (NeMo Gym v0.7.0's) cleared against the inputs
//! (`output_paths`) and written as a set, the task rows on every core (`write_outputs`).

use crate::health::{HealthBuilder, HealthError, HealthReport};
use crate::names;
use crate::native::files::{clear_outputs, Cleared};
use crate::native::parallel::{self, OrderedPool};
use crate::native::run_files::check_run_files;
use crate::native::run_read::read_run;
use crate::native::Input;
use crate::profile::{Profile, ProfileOptions};
use crate::render::{self, SeekSource};
use anyhow::{Context, Result};
use std::fs::File;
use std::io::Write;
use std::path::{Component, Path, PathBuf};

/// The three output files' paths: beside the rollouts, or in `out_dir`; cleared against the
/// inputs ([`crate::native::files`]).
pub fn output_paths(
    inputs: &Path,
    rollouts: &Path,
    out_dir: Option<&Path>,
) -> Result<([PathBuf; 3], Cleared)> {
    let rollouts_file = names::file_name_of(rollouts);
    let dir = match out_dir {
        Some(dir) => dir.to_path_buf(),
        None => rollouts.parent().map(Path::to_path_buf).unwrap_or_default(),
    };
    let paths = [
        names::reward_profiling(&rollouts_file),
        names::agent_metrics(&rollouts_file),
        names::repeat_level_metrics(&rollouts_file),
    ]
    .map(|name| tidy(&dir.join(name)));
    let inputs = [
        Input::new(inputs, "--inputs"),
        Input::new(rollouts, "--rollouts"),
    ];
    let outputs: Vec<(&Path, &str)> = paths.iter().map(|p| (p.as_path(), "--out-dir")).collect();
    let cleared = clear_outputs(&inputs, &outputs)?;
    Ok((paths, cleared))
}

/// Writes a run's profile as `gymscope profile` does: `*_reward_profiling.jsonl`,
/// `*_agent_metrics.json` and `*_repeat_level_metrics.json` beside the rollouts or in
/// `out_dir` (created), each complete before any is renamed into place. Returns their paths.
pub fn write_outputs(
    profile: &Profile,
    inputs: &Path,
    rollouts: &Path,
    out_dir: Option<&Path>,
) -> Result<[PathBuf; 3]> {
    let ([profiling_path, metrics_path, repeats_path], cleared) =
        output_paths(inputs, rollouts, out_dir)?;
    if let Some(dir) = out_dir {
        std::fs::create_dir_all(dir)
            .with_context(|| format!("creating --out-dir '{}'", dir.display()))?;
    }
    let inputs_name = inputs.display().to_string();
    let mut out = cleared.create(&profiling_path)?;
    write_reward_profiling(profile, inputs, &inputs_name, &mut out)?;
    let mut metrics = cleared.create(&metrics_path)?;
    render::write_agent_metrics(&mut metrics, profile)?;
    let mut repeats = cleared.create(&repeats_path)?;
    render::write_repeat_level_metrics(&mut repeats, profile)?;
    out.commit()?;
    metrics.commit()?;
    repeats.commit()?;
    Ok([profiling_path, metrics_path, repeats_path])
}

/// A run's profile, read as `gymscope profile` reads it (the Python module's `profile()`).
pub fn read_profile(
    inputs: &Path,
    rollouts: &Path,
    allow_partial_rollouts: bool,
) -> Result<Profile> {
    check_run_files(inputs, rollouts)?;
    let max_line = crate::read::jsonl::DEFAULT_MAX_LINE_BYTES;
    read_profile_with(
        inputs,
        rollouts,
        allow_partial_rollouts,
        max_line,
        None,
        |_| {},
    )
    .map(|(profile, _)| profile)
}

/// Streams a run's two files through `ProfileBuilder`, with rollout health in the same read when
/// asked (see [`read_run`]); `on_bytes` hears how far the read is. The profile's errors come
/// first; the health result is the caller's to judge. Warnings go to stderr.
pub fn read_profile_with(
    inputs: &Path,
    rollouts: &Path,
    allow_partial_rollouts: bool,
    max_line_bytes: u64,
    health: Option<HealthBuilder>,
    on_bytes: impl FnMut(usize),
) -> Result<(Profile, Option<Result<HealthReport, HealthError>>)> {
    let (builder, health) = read_run(inputs, rollouts, max_line_bytes, health, on_bytes)?;
    let profile = builder.finish(ProfileOptions {
        allow_partial_rollouts,
    })?;
    for warning in &profile.warnings {
        crate::note!("Warning: {warning}");
    }
    Ok((profile, health))
}

/// Tasks per job when the reward profiling rows are written on every core.
const TASKS_PER_JOB: usize = 256;

/// `*_reward_profiling.jsonl`, its rows written on every core (each re-reads its tasks' `sample`
/// lines through its own handle on the inputs file) and put out in task order.
fn write_reward_profiling(
    profile: &Profile,
    inputs: &Path,
    inputs_name: &str,
    out: &mut impl Write,
) -> Result<()> {
    let sources = (0..parallel::workers())
        .map(|_| File::open(inputs).map(SeekSource))
        .collect::<std::io::Result<Vec<_>>>()
        .with_context(|| format!("opening '{inputs_name}'"))?;
    std::thread::scope(|scope| {
        let workers = sources.into_iter().map(|mut source| {
            // Room for about as much as the last job wrote, so a job's rows are not copied as
            // they grow.
            let mut last_len = 0;
            move |tasks: std::ops::Range<usize>| {
                let mut rows = Vec::with_capacity(last_len + last_len / 4);
                render::write_task_rows(profile, tasks, &mut source, inputs_name, &mut rows)?;
                last_len = rows.len();
                Ok(rows)
            }
        });
        let mut pool = OrderedPool::start(scope, workers);
        let mut put = |rows: Result<Vec<u8>, render::RenderError>| -> Result<()> {
            out.write_all(&rows?)?;
            Ok(())
        };
        let tasks = profile.tasks.len();
        for start in (0..tasks).step_by(TASKS_PER_JOB) {
            pool.send(start..tasks.min(start + TASKS_PER_JOB), &mut put)?;
        }
        pool.finish(&mut put)
    })
}

/// Python's `Path` drops `.` components (`./r.jsonl` prints as `r.jsonl`); so do we.
fn tidy(path: &Path) -> PathBuf {
    path.components()
        .filter(|c| *c != Component::CurDir)
        .collect()
}
