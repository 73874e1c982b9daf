//! The worker's query: a run's files read with the core's [`QueryRun`] (the inputs when the
//! expression names `agent`, a first read for task aggregates when asked, then the matching
//! read), with progress; the
//! page maps the keys back to its points. Read by this worker alone ([`run`]) or by its pool
//! ([`pooled`]: the same three reads in ranges, `query::pooled`).

use super::super::protocol::{Failure, RangeTask, Reply, Request};
use super::io::{feed, post, post_progress};
use super::pool::{self, Files, Read};
use crate::query::pooled::{line_error, too_long_error, QueryRead, Recorded};
use crate::query::{Query, QueryRun};
use crate::read::chunks::Flow;
use crate::read::jsonl::{LineSplitter, SplitError};
use crate::read::ranges::plan;
use crate::record::RowKind;
use web_sys::File;

fn start(expr: &str) -> Result<QueryRun, Failure> {
    let query = Query::parse(expr).map_err(|e| Failure::from(e.to_string()))?;
    Ok(QueryRun::new(
        query,
        crate::reward_group::DEFAULT_THRESHOLD,
        false,
    ))
}

fn matched(keys: &[(i64, i64)], workers: u32) -> Reply {
    let keys = keys.iter().map(|&(t, r)| (t as f64, r as f64)).collect();
    Reply::QueryMatched { keys, workers }
}

pub fn run(inputs: &File, rollouts: &File, expr: &str) -> Result<Reply, Failure> {
    let mut run = start(expr)?;
    if run.needs_agents() {
        lines(inputs, None, |line| run.input_line(line))?;
    }
    let size = rollouts.size() as u64;
    let reads = if run.needs_first_read() { 2 } else { 1 };
    let total = size * reads;
    if reads == 2 {
        lines(rollouts, Some((0, total)), |line| run.first_read_line(line))?;
    }
    let mut keys = Vec::new();
    lines(rollouts, Some(((reads - 1) * size, total)), |line| {
        keys.extend(run.line(line, &[])?.map(|m| m.key));
        Ok(())
    })?;
    Ok(matched(&keys, 1))
}

/// Each line of `file` to `each`, errors naming the file and line; progress as `(bytes read
/// before, total)` when given.
pub(super) fn lines(
    file: &File,
    progress: Option<(u64, u64)>,
    mut each: impl FnMut(&[u8]) -> Result<(), String>,
) -> Result<(), Failure> {
    let name = file.name();
    let mut splitter =
        LineSplitter::with_max_line_bytes(crate::read::jsonl::DEFAULT_MAX_LINE_BYTES);
    let mut count = 0u64;
    let named = |line: u64, e: String| Failure::from(line_error(&name, line, &e));
    feed::<Failure>(file, |chunk, done| {
        splitter
            .push(chunk, |span, line| {
                count += 1;
                each(line).map_err(|e| named(span.line, e))
            })
            .map_err(|e| match e {
                SplitError::Line(f) => f,
                SplitError::TooLong(t) => Failure::from(too_long_error(&name, t)),
            })?;
        if let Some((before, total)) = progress {
            post_progress(before + done, total, count);
        }
        Ok(Flow::Continue)
    })?;
    splitter.finish(|span, line| each(line).map_err(|e| named(span.line, e)))
}

/// The query read by a pool of `workers`: the inputs, the first read when asked, the matching
/// read, each in ranges; the reply is posted when the last is done.
pub fn pooled(inputs: &File, rollouts: &File, expr: &str, workers: u32) -> Result<(), Failure> {
    let run = start(expr)?;
    let reads = if run.needs_first_read() { 2 } else { 1 };
    let agents = run.needs_agents();
    let job = Job {
        inputs: inputs.clone(),
        rollouts: rollouts.clone(),
        expr: expr.to_string(),
        workers,
        total: (if agents { inputs.size() } else { 0.0 } + rollouts.size() * f64::from(reads))
            as u64,
    };
    let recorded = Recorded {
        run,
        matches: Vec::new(),
        file: inputs.name(),
    };
    if agents {
        job.read(QueryRead::Agents, recorded, 0, None)
    } else {
        // The page wants keys alone: the inputs are read only for `agent`.
        job.next(QueryRead::Agents, recorded, 0)
    }
}

/// A pooled query's files and figures, carried from one read to the next.
struct Job {
    inputs: File,
    rollouts: File,
    expr: String,
    workers: u32,
    total: u64,
}

impl Job {
    /// Starts `what` with `before` bytes of the job read; the read after it follows.
    fn read(
        self,
        what: QueryRead,
        recorded: Recorded,
        before: u64,
        setup: Option<Request>,
    ) -> Result<(), Failure> {
        let (kind, file) = match what {
            QueryRead::Agents => (RowKind::Input, &self.inputs),
            QueryRead::Tasks | QueryRead::Matches => (RowKind::Rollout, &self.rollouts),
        };
        let size = file.size() as u64;
        let read = Read {
            files: Files {
                inputs: self.inputs.clone(),
                rollouts: self.rollouts.clone(),
            },
            ranges: plan(kind, size, pool::piece(size, self.workers)),
            task: RangeTask::Query(what),
            setup,
            recorder: recorded,
            progress: (before, self.total),
        };
        pool::read(self.workers, read, move |recorded, _| {
            if let Err(failure) = self.next(what, recorded, before + size) {
                post(&Reply::Failed(failure));
            }
        })
    }

    /// `done` is read: the next read, or the reply.
    fn next(self, done: QueryRead, mut recorded: Recorded, before: u64) -> Result<(), Failure> {
        recorded.file = self.rollouts.name();
        if done == QueryRead::Agents {
            recorded.run.facts.label_inputs();
        }
        match done {
            QueryRead::Agents if recorded.run.needs_first_read() => {
                self.read(QueryRead::Tasks, recorded, before, None)
            }
            QueryRead::Agents | QueryRead::Tasks => {
                let setup = Request::MatchSetup {
                    expr: self.expr.clone(),
                    facts: js_sys::Uint8Array::from(recorded.run.facts.to_bytes().as_slice()),
                };
                self.read(QueryRead::Matches, recorded, before, Some(setup))
            }
            QueryRead::Matches => {
                post(&matched(&recorded.matches, self.workers));
                Ok(())
            }
        }
    }
}
