//! The worker's profile jobs: a run's two files streamed into the core profile, both output
//! files as Blobs, and the inspector's view; or existing profile files shown directly. The run
//! shown last is kept for a later report request.

use super::super::protocol::{Failure, ReadStats, Reply, UpstreamFiles};
use super::io::{feed, now_ms, post_progress, read_all};
use super::profile_finish::{builders, finish};
use super::shown::{profiled, source, Shown, SHOWN};
use crate::error::ProfileError;
use crate::inspect::model;
use crate::joint_read::pooled::{self as joint, Both};
use crate::names;
use crate::profile::ProfileOptions;
use crate::read::chunks::Flow;
use crate::read::job::OneThread;
use crate::record::RowKind;
use crate::report::{ReportInput, ReportMeta};
use web_sys::File;

impl From<ProfileError> for Failure {
    fn from(e: ProfileError) -> Failure {
        Failure {
            message: e.to_string(),
            missing_rollouts: e.is_missing_rollouts(),
        }
    }
}

/// Profiles a run read by this worker alone (`pool` reads it with more).
pub fn run(
    inputs: &File,
    rollouts: &File,
    options: ProfileOptions,
    upstream_files: &UpstreamFiles,
) -> Result<Reply, Failure> {
    let started = now_ms();
    let taken_at = js_sys::Date::now();
    let (builder, health) = builders(inputs, rollouts);
    let total = (inputs.size() + rollouts.size()) as u64;
    let inputs_size = inputs.size() as u64;
    let max_line = builder.max_line_bytes();
    let both = Both {
        builder,
        health,
        inputs_name: inputs.name(),
    };
    // The one-thread driver of the pool's job (`read::job`).
    let mut read = OneThread::new(both, max_line, joint::lines);
    for (file, kind, before) in [
        (inputs, RowKind::Input, 0),
        (rollouts, RowKind::Rollout, inputs_size),
    ] {
        feed::<Failure>(file, |chunk, done| {
            read.push(kind, chunk)?;
            post_progress(before + done, total, read.lines_read());
            Ok(Flow::Continue)
        })?;
    }
    let Both {
        builder, health, ..
    } = read.finish()?;
    let read = ReadStats {
        workers: 1,
        read_ms: now_ms() - started,
        taken_at,
        ..ReadStats::default()
    };
    finish(
        builder,
        health,
        inputs,
        rollouts,
        options,
        upstream_files,
        read,
    )
}

/// Shows an existing `*_reward_profiling.jsonl` (and `*_agent_metrics.json`) directly.
pub fn run_files(profiling: &File, metrics: Option<&File>) -> Result<Reply, Failure> {
    let profiling_bytes = read_all(profiling)?;
    let metrics_bytes = metrics.map(read_all).transpose()?;
    let name = profiling.name();
    let meta = ReportMeta {
        title: names::report_title(&name).to_string(),
        sources: std::iter::once(profiling)
            .chain(metrics)
            .map(source)
            .collect(),
        date: None,
    };
    let metrics_name = metrics.map(File::name).unwrap_or_default();
    let input = ReportInput::from_profile_files(
        meta,
        (&name, &profiling_bytes),
        metrics_bytes.as_deref().map(|b| (metrics_name.as_str(), b)),
        usize::MAX,
    )
    .map_err(|e| Failure::from(e.to_string()))?;
    drop(profiling_bytes);
    let (view, cols) = model::from_report_input(&input);
    SHOWN.with(|s| *s.borrow_mut() = Some(Shown::Files(Box::new(input))));
    super::curate_job::remember(profiling, &name)?;
    Ok(profiled(
        view,
        &cols,
        Vec::new(),
        false,
        ReadStats::default(),
    ))
}
