//! The worker's profile jobs: a run's two files streamed into the core profile, both output
//! files as Blobs, and the inspector's view; or existing profile files shown directly. The run
//! shown last is kept for a later report request.

use super::super::protocol::{
    Download, Failure, JsColumns, Profiled, ReadStats, Reply, UpstreamFiles,
};
use super::io::{
    feed, memory_bytes, now_ms, post_progress, read_all, BlobWriter, SpanReader, WINDOW,
};
use super::verdict_files::read_upstream;
use crate::chunks::Flow;
use crate::error::ProfileError;
use crate::health::{HealthBuilder, HealthError, HealthReport};
use crate::inspect::health::{attach, HealthState, PointSignals};
use crate::inspect::model::{self, Columns, InspectView};
use crate::inspect::upstream;
use crate::joint_read::{self, record_both};
use crate::names;
use crate::profile::{Profile, ProfileBuilder, ProfileOptions};
use crate::record::RowKind;
use crate::render;
use crate::report::{ReportInput, ReportMeta, Source};
use crate::reward_group::DEFAULT_THRESHOLD;
use std::cell::RefCell;
use std::collections::HashMap;
use web_sys::File;

/// The run shown last: a profile with its files (and its health, computed in the same read),
/// or a report input read from profile files.
pub enum Shown {
    Run {
        profile: Profile,
        health: Option<Box<HealthReport>>,
        inputs: File,
        rollouts: File,
    },
    Files(ReportInput),
}

thread_local! {
    pub static SHOWN: RefCell<Option<Shown>> = const { RefCell::new(None) };
}

impl From<ProfileError> for Failure {
    fn from(e: ProfileError) -> Failure {
        Failure {
            message: e.to_string(),
            missing_rollouts: e.is_missing_rollouts(),
        }
    }
}

pub fn source(file: &File) -> Source {
    Source {
        name: file.name(),
        bytes: file.size() as u64,
    }
}

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

/// Profiles a run read by this worker alone (`pool` reads it with more).
pub fn run(
    inputs: &File,
    rollouts: &File,
    options: ProfileOptions,
    upstream_files: &UpstreamFiles,
) -> Result<Reply, Failure> {
    let started = now_ms();
    let (mut builder, mut health) = builders(inputs, rollouts);
    let total = (inputs.size() + rollouts.size()) as u64;
    let inputs_size = inputs.size() as u64;
    let inputs_name = inputs.name();
    let mut cut = Vec::new();
    for (file, kind, before) in [
        (inputs, RowKind::Input, 0),
        (rollouts, RowKind::Rollout, inputs_size),
    ] {
        feed::<Failure>(file, |chunk, done| {
            // Lines before one over the limit are recorded first: one may be the first error.
            let r = builder.cut(kind, chunk, |batch| cut.push(batch));
            for batch in cut.drain(..) {
                let (parsed, lines) = joint_read::parse_batch(&batch);
                record_both(&mut builder, &mut health, &inputs_name, parsed, lines)?;
            }
            r?;
            post_progress(before + done, total, builder.lines_read());
            Ok(Flow::Continue)
        })?;
        builder.cut_end(kind, |batch| cut.push(batch));
        for batch in cut.drain(..) {
            let (parsed, lines) = joint_read::parse_batch(&batch);
            record_both(&mut builder, &mut health, &inputs_name, parsed, lines)?;
        }
    }
    let read = ReadStats {
        workers: 1,
        read_ms: now_ms() - started,
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

/// The read is over: the profile and health finished, both output files written, the view.
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
    let rendered_at = now_ms();

    // The samples are read back for the profiling file; each one's prompt snippet on the way.
    let mut snippet_at: HashMap<u64, String> = HashMap::new();
    let mut samples = SpanReader::new(inputs, WINDOW, |span, line| {
        snippet_at.insert(span.offset, model::snippet(line));
    })?;
    let mut profiling = BlobWriter::new();
    render::write_reward_profiling(&profile, &mut samples, &inputs.name(), &mut profiling)
        .map_err(|e| Failure::from(e.to_string()))?;
    drop(samples);
    let mut metrics = BlobWriter::new();
    render::write_agent_metrics(&mut metrics, &profile)
        .map_err(|e| Failure::from(e.to_string()))?;
    let viewed_at = now_ms();
    let snippets: HashMap<i64, String> = profile
        .tasks
        .iter()
        .filter_map(|t| snippet_at.remove(&t.sample.offset).map(|s| (t.task, s)))
        .collect();
    let (mut view, mut cols) = model::build(&profile, &inputs.name(), &rollouts.name(), &snippets);
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
    ];
    SHOWN.with(|s| {
        *s.borrow_mut() = Some(Shown::Run {
            profile,
            health,
            inputs: inputs.clone(),
            rollouts: rollouts.clone(),
        });
    });
    let read = ReadStats {
        finish_ms: now_ms() - finished_at,
        stats_ms: rendered_at - finished_at,
        render_ms: viewed_at - rendered_at,
        ..read
    };
    Ok(profiled(view, &cols, downloads, read))
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
    SHOWN.with(|s| *s.borrow_mut() = Some(Shown::Files(input)));
    super::curate_job::remember(profiling, &name)?;
    Ok(profiled(view, &cols, Vec::new(), ReadStats::default()))
}

fn profiled(view: InspectView, cols: &Columns, downloads: Vec<Download>, read: ReadStats) -> Reply {
    let read = ReadStats {
        memory: memory_bytes(),
        ..read
    };
    Reply::Profiled(Box::new(Profiled {
        view,
        columns: JsColumns::from(cols),
        downloads,
        read,
    }))
}
