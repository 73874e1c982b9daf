//! The worker's query: a run's files read with the core's [`QueryRun`] (the inputs for agents,
//! a first read for task aggregates when asked, then the matching read), with progress; the
//! page maps the keys back to its points.

use super::super::protocol::{Failure, Reply};
use super::io::{feed, post_progress};
use crate::chunks::Flow;
use crate::jsonl::LineSplitter;
use crate::query::{Query, QueryRun};
use web_sys::File;

pub fn run(inputs: &File, rollouts: &File, expr: &str) -> Result<Reply, Failure> {
    let query = Query::parse(expr).map_err(|e| Failure::from(e.to_string()))?;
    let mut run = QueryRun::new(query, crate::reward_group::DEFAULT_THRESHOLD, false);
    lines(inputs, None, |line| run.input_line(line))?;
    let size = rollouts.size() as u64;
    let reads = if run.needs_first_read() { 2 } else { 1 };
    let total = size * reads;
    if reads == 2 {
        lines(rollouts, Some((0, total)), |line| run.first_read_line(line))?;
    }
    let mut keys = Vec::new();
    lines(rollouts, Some(((reads - 1) * size, total)), |line| {
        if let Some(m) = run.line(line, &[])? {
            keys.push((m.key.0 as f64, m.key.1 as f64));
        }
        Ok(())
    })?;
    Ok(Reply::QueryMatched { keys })
}

/// Each line of `file` to `each`, errors naming the file and line; progress as `(bytes read
/// before, total)` when given.
fn lines(
    file: &File,
    progress: Option<(u64, u64)>,
    mut each: impl FnMut(&[u8]) -> Result<(), String>,
) -> Result<(), Failure> {
    let name = file.name();
    let mut splitter = LineSplitter::with_max_line_bytes(crate::jsonl::DEFAULT_MAX_LINE_BYTES);
    let mut count = 0u64;
    let named = |line: u64, e: String| Failure::from(format!("'{name}' line {line}: {e}"));
    feed::<Failure>(file, |chunk, done| {
        splitter
            .push(chunk, |span, line| {
                count += 1;
                each(line).map_err(|e| named(span.line, e))
            })
            .map_err(|e| match e {
                crate::jsonl::SplitError::Line(f) => f,
                crate::jsonl::SplitError::TooLong(t) => {
                    named(t.line, format!("is longer than {} bytes", t.limit))
                }
            })?;
        if let Some((before, total)) = progress {
            post_progress(before + done, total, count);
        }
        Ok(Flow::Continue)
    })?;
    splitter.finish(|span, line| each(line).map_err(|e| named(span.line, e)))
}
