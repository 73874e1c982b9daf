//! The worker's "Export report": the run shown last rendered by the same core renderer as
//! `gymscope report`, so the two files are the same bytes.

use super::super::protocol::{Download, Failure, Reply, ReportRequest};
use super::io::{feed, BlobWriter, SpanReader};
use super::profile_job::{source, Shown, SHOWN};
use crate::chunks::Flow;
use crate::health::{HealthBuilder, HealthReport};
use crate::names;
use crate::report::{self, ReportInput, ReportMeta};
use crate::reward_group::DEFAULT_THRESHOLD;

/// Rollout health of a run, read from its files again (only when a report is exported, so
/// profiling in the app stays as fast as it was).
fn health(inputs: &web_sys::File, rollouts: &web_sys::File) -> Result<HealthReport, Failure> {
    let mut builder = HealthBuilder::new(&rollouts.name(), DEFAULT_THRESHOLD);
    let name = inputs.name();
    feed::<Failure>(inputs, |chunk, _| {
        builder
            .push_inputs(&name, chunk)
            .map_err(|e| Failure::from(e.to_string()))?;
        Ok(Flow::Continue)
    })?;
    feed::<Failure>(rollouts, |chunk, _| {
        builder
            .push_rollouts(chunk)
            .map_err(|e| Failure::from(e.to_string()))?;
        Ok(Flow::Continue)
    })?;
    builder.finish().map_err(|e| Failure::from(e.to_string()))
}

pub fn run(request: ReportRequest) -> Result<Reply, Failure> {
    SHOWN.with(|shown| {
        let shown = shown.borrow();
        let date = request.date.filter(|d| !d.is_empty());
        let (input, name) = match shown.as_ref().ok_or("profile a run first")? {
            Shown::Run {
                profile,
                inputs,
                rollouts,
            } => {
                // Conversations are scattered lines: read each alone (no window).
                let mut lines = SpanReader::new(rollouts, 0, |_, _| {})?;
                let meta = ReportMeta {
                    title: request.title,
                    sources: vec![source(inputs), source(rollouts)],
                    date,
                };
                let input = ReportInput::from_run(
                    profile,
                    meta,
                    &mut lines,
                    &rollouts.name(),
                    request.conversations,
                )
                .map_err(|e| Failure::from(e.to_string()))?;
                // The Health section, as `gymscope report` computes it from the same two files
                // (a row health cannot read costs the section, not the report, as there).
                let input = match health(inputs, rollouts) {
                    Ok(h) => input.with_health(h),
                    Err(_) => input,
                };
                (input, rollouts.name())
            }
            Shown::Files(input) => {
                let mut input: ReportInput = input.clone();
                input.meta.title = request.title;
                input.meta.date = date;
                input.prompts.truncate(request.conversations);
                let name = input
                    .meta
                    .sources
                    .first()
                    .map(|s| s.name.clone())
                    .unwrap_or_default();
                (input, name)
            }
        };
        let html = report::render(&input);
        let mut out = BlobWriter::new();
        std::io::Write::write_all(&mut out, html.as_bytes())
            .map_err(|e| Failure::from(e.to_string()))?;
        Ok(Reply::Report(Download {
            blob: out.finish("text/html")?,
            name: names::report(&name),
        }))
    })
}
