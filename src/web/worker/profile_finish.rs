//! A run's read is over: its profile and health finished and its view posted, then its two output
//! files written while the profile is on screen. The read itself is this worker's
//! (`profile_job::run`) or its pool's ([`pooled`]).

use super::super::protocol::{Download, Failure, RangeTask, ReadStats, Reply, UpstreamFiles};
use super::io::{now_ms, post, BlobWriter, SpanReader, WINDOW};
use super::pool;
use super::shown::{profiled, Shown, SHOWN};
use super::verdict_files::read_upstream;
use crate::health::{HealthBuilder, HealthError};
use crate::inspect::health::{attach, HealthState, PointSignals};
use crate::inspect::model::{self, SnippetTap};
use crate::inspect::upstream;
use crate::joint_read::pooled::Both;
use crate::names;
use crate::profile::{ProfileBuilder, ProfileOptions};
use crate::read::ranges::plan;
use crate::record::RowKind;
use crate::render;
use crate::reward_group::DEFAULT_THRESHOLD;
use std::collections::HashMap;
use web_sys::File;

/// The builders of a run's read: the profile's, and rollout health's in the same read, each
/// line walked once for both (`joint_read`).
pub fn builders(
    inputs: &File,
    rollouts: &File,
) -> (ProfileBuilder, Result<HealthBuilder, HealthError>) {
    let mut health = HealthBuilder::new(&rollouts.name(), DEFAULT_THRESHOLD);
    health.expect_inputs();
    (
        ProfileBuilder::new(inputs.name(), rollouts.name()),
        Ok(health),
    )
}

/// Profiles a run read by a pool of `workers` (`pool`); the reply is posted when it is done.
pub fn pooled(
    inputs: &File,
    rollouts: &File,
    options: ProfileOptions,
    upstream: &UpstreamFiles,
    workers: u32,
) -> Result<(), Failure> {
    let total = (inputs.size() + rollouts.size()) as u64;
    let piece = pool::piece(total, workers);
    let mut ranges = plan(RowKind::Input, inputs.size() as u64, piece);
    ranges.extend(plan(RowKind::Rollout, rollouts.size() as u64, piece));
    let (builder, health) = builders(inputs, rollouts);
    let read = pool::Read {
        files: pool::Files {
            inputs: inputs.clone(),
            rollouts: rollouts.clone(),
        },
        ranges,
        task: RangeTask::Profile,
        setup: None,
        recorder: Both {
            builder,
            health,
            inputs_name: inputs.name(),
        },
        progress: (0, total),
    };
    let (inputs, rollouts, upstream) = (inputs.clone(), rollouts.clone(), upstream.clone());
    pool::read(workers, read, move |both, read| {
        let reply = finish(
            both.builder,
            both.health,
            &inputs,
            &rollouts,
            options,
            &upstream,
            read,
        );
        post(&reply.unwrap_or_else(Reply::Failed));
    })
}

/// The read is over: the profile and health finished and the view posted; then both output
/// files written (the profile is on screen meanwhile) and returned as [`Reply::Downloads`].
pub fn finish(
    builder: ProfileBuilder,
    health: Result<HealthBuilder, HealthError>,
    inputs: &File,
    rollouts: &File,
    options: ProfileOptions,
    upstream_files: &UpstreamFiles,
    read: ReadStats,
) -> Result<Reply, Failure> {
    let finished_at = now_ms();
    let profile = builder.finish(options)?;
    let health = health.and_then(|h| {
        let points = PointSignals::of(&h);
        h.finish().map(|report| (report, points))
    });
    let stats_ms = now_ms() - finished_at;

    // The prompt snippets come with the output files (`SnippetTap`): they read each task's
    // sample line, which writing the profiling file reads anyway.
    let (mut view, mut cols) =
        model::build(&profile, &inputs.name(), &rollouts.name(), &HashMap::new());
    let health = match health {
        Ok((mut report, points)) => {
            attach(&mut view, &mut cols, &report, &points);
            match read_upstream(upstream_files) {
                Ok(None) => {}
                Ok(Some((found, index))) => {
                    upstream::attach(&mut view, &mut cols, &found, index.as_ref());
                    // The exported report's Health section shows them, as `gymscope report`
                    // does with the files beside the rollouts.
                    report.upstream = Some(found);
                }
                Err(e) => upstream::attach_error(&mut view, e.to_string()),
            }
            Some(Box::new(report))
        }
        Err(e) => {
            view.health = HealthState::Failed(e.to_string());
            None
        }
    };
    let read = ReadStats {
        finish_ms: now_ms() - finished_at,
        stats_ms,
        posted_at: js_sys::Date::now(),
        ..read
    };
    post(&profiled(view, &cols, Vec::new(), true, read));

    let rendered_at = now_ms();
    let mut samples = SpanReader::new(inputs, WINDOW, |_, _| {})?;
    let mut profiling = BlobWriter::new();
    let mut tap = SnippetTap::new(&mut samples);
    render::write_reward_profiling(&profile, &mut tap, &inputs.name(), &mut profiling)
        .map_err(|e| Failure::from(e.to_string()))?;
    let snippets = tap.snippets(&profile);
    drop(samples);
    let mut metrics = BlobWriter::new();
    render::write_agent_metrics(&mut metrics, &profile)
        .map_err(|e| Failure::from(e.to_string()))?;
    let mut repeats = BlobWriter::new();
    render::write_repeat_level_metrics(&mut repeats, &profile)
        .map_err(|e| Failure::from(e.to_string()))?;
    let profiling = profiling.finish("application/jsonl")?;
    let profiling_name = names::reward_profiling(&rollouts.name());
    // The page's pass band reads the file offered here, so its tasks are the download's.
    super::curate_job::remember(&profiling, &profiling_name)?;
    let downloads = vec![
        Download {
            blob: profiling,
            name: profiling_name,
        },
        Download {
            blob: metrics.finish("application/json")?,
            name: names::agent_metrics(&rollouts.name()),
        },
        Download {
            blob: repeats.finish("application/json")?,
            name: names::repeat_level_metrics(&rollouts.name()),
        },
    ];
    SHOWN.with(|s| {
        *s.borrow_mut() = Some(Shown::Run {
            profile,
            health,
            inputs: inputs.clone(),
            rollouts: rollouts.clone(),
        });
    });
    Ok(Reply::Downloads {
        downloads,
        render_ms: now_ms() - rendered_at,
        snippets,
    })
}
