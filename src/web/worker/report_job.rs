//! The worker's "Export report": the run shown last rendered by the same core renderer as
//! `gymscope report`, so the two files are the same bytes.

use super::super::protocol::{Download, Failure, Reply, ReportRequest};
use super::io::{BlobWriter, SpanReader};
use super::shown::{source, Shown, SHOWN};
use crate::health::{HealthBuilder, HealthReport};
use crate::names;
use crate::report::{self, ReportInput, ReportMeta, ReportQuery};
use crate::reward_group::DEFAULT_THRESHOLD;

pub fn run(request: ReportRequest) -> Result<Reply, Failure> {
    SHOWN.with(|shown| {
        let shown = shown.borrow();
        let date = request.date.filter(|d| !d.is_empty());
        // The query's matches, in the page's (task, rollout) keys, sorted once for every part.
        let query = request.query.map(|q| {
            let keys = q.keys.iter().map(|&(t, r)| (t as i64, r as i64)).collect();
            ReportQuery::new(q.source, keys)
        });
        let (input, name) = match shown.as_ref().ok_or("profile a run first")? {
            Shown::Run {
                profile,
                health,
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
                    query.as_ref(),
                )
                .map_err(|e| Failure::from(e.to_string()))?;
                // The Health section, as `gymscope report` computes it from the same two files:
                // computed with the profile (a row health cannot read costs the section, not
                // the report, as there).
                let input = match health {
                    Some(h) => input.with_health(HealthReport::clone(h)),
                    None => input,
                };
                // The Health section of the matches, from their rows, as the CLI's.
                let input = match &query {
                    Some(q) if input.health.is_some() => {
                        let builder = HealthBuilder::new(&rollouts.name(), DEFAULT_THRESHOLD);
                        match report::health_of_matches(profile, &q.keys, &mut lines, builder) {
                            Ok(h) => input.with_query_health(h),
                            Err(_) => input,
                        }
                    }
                    _ => input,
                };
                (input, rollouts.name())
            }
            Shown::Files(input) => {
                let mut input: ReportInput = ReportInput::clone(input);
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
        let input = match query {
            Some(q) => input.with_query(q),
            None => input,
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
