//! The worker's comparison: each run reduced to the core's `RunTasks` (a run profiled from its
//! two files, or a profiling file read), every candidate compared with the baseline and judged,
//! one candidate shown in detail at a time (the page switches), and "Export report" (the bytes
//! `gymscope compare --report` writes). A run's files are read by this worker ([`run`]) or by
//! its pool (`compare_read`).

use super::super::protocol::{CompareInput, Compared, Download, Failure, Reply, ReportRequest};
use super::io::{feed, post_progress, BlobWriter, SpanReader, WINDOW};
use super::shown::source;
use crate::compare::multi::{self, MultiComparison, RunLabel, DEFAULT_ALPHA};
use crate::compare::{self, CompareOptions, Comparison, ProfilingFileReader, RunTasks};
use crate::names;
use crate::profile::{parse_batch, ProfileBuilder, ProfileOptions};
use crate::read::chunks::Flow;
use crate::read::job::OneThread;
use crate::record::RowKind;
use crate::report::ReportMeta;
use std::cell::RefCell;
use web_sys::File;

/// A side as compared: its reduced tasks and the file its lines are read back from.
pub struct Side {
    tasks: RunTasks,
    /// The rollouts file (a run) or the profiling file.
    lines: File,
    /// Its files as the report lists them (inputs before rollouts).
    files: Vec<File>,
}

struct Shown {
    /// The baseline, then each candidate.
    sides: Vec<Side>,
    /// The comparison judged (verdicts, power, flips) as `gymscope compare A B` does by default.
    judged: MultiComparison,
    /// The candidate whose details the page shows (its place among the candidates).
    candidate: usize,
    /// How many workers read the runs' files.
    workers: u32,
}

impl Shown {
    fn comparison(&self) -> &Comparison {
        &self.judged.candidates[self.candidate].comparison
    }
    /// The page's view of the candidate shown.
    fn reply(&self) -> Reply {
        let comparison = self.comparison().clone();
        Reply::Compared(Box::new(Compared {
            summary_html: compare::report::summary_html_with(&comparison, Some(&self.judged)),
            comparison,
            workers: self.workers,
            candidates: self
                .judged
                .candidates
                .iter()
                .map(|c| c.run.label.clone())
                .collect(),
            candidate: self.candidate,
        }))
    }
}

thread_local! {
    static SHOWN: RefCell<Option<Shown>> = const { RefCell::new(None) };
}

fn failure(e: impl std::fmt::Display) -> Failure {
    Failure::from(e.to_string())
}

/// The side's shown name: its lines file's name (the CLI's, for the same files).
pub fn load(input: CompareInput, total: u64, done_before: u64) -> Result<Side, Failure> {
    match input {
        CompareInput::Profiling { file } => {
            let mut reader = ProfilingFileReader::new(&file.name(), &file.name());
            feed::<Failure>(&file, |chunk, done| {
                reader.push(chunk).map_err(failure)?;
                post_progress(done_before + done, total, 0);
                Ok(Flow::Continue)
            })?;
            Ok(Side {
                tasks: reader.finish().map_err(failure)?,
                lines: file.clone(),
                files: vec![file],
            })
        }
        CompareInput::Run { inputs, rollouts } => {
            let builder = ProfileBuilder::new(inputs.name(), rollouts.name());
            let size = inputs.size() as u64;
            // The one-thread driver of the profile's job (`read::job`).
            let max_line = builder.max_line_bytes();
            let mut read = OneThread::new(builder, max_line, parse_batch);
            for (file, kind, before) in [
                (&inputs, RowKind::Input, 0),
                (&rollouts, RowKind::Rollout, size),
            ] {
                feed::<Failure>(file, |chunk, done| {
                    read.push(kind, chunk)?;
                    post_progress(done_before + before + done, total, read.lines_read());
                    Ok(Flow::Continue)
                })?;
            }
            let builder = read.finish()?;
            run_side(builder, inputs, rollouts)
        }
    }
}

/// A run's side, its files read into `builder`.
pub fn run_side(builder: ProfileBuilder, inputs: File, rollouts: File) -> Result<Side, Failure> {
    let profile = builder.finish(ProfileOptions::default())?;
    let mut samples = SpanReader::new(&inputs, WINDOW, |_, _| {})?;
    let tasks = RunTasks::from_profile(&profile, &mut samples, &inputs.name(), &rollouts.name())
        .map_err(failure)?;
    Ok(Side {
        tasks,
        lines: rollouts.clone(),
        files: vec![inputs, rollouts],
    })
}

pub fn size(input: &CompareInput) -> u64 {
    match input {
        CompareInput::Profiling { file } => file.size() as u64,
        CompareInput::Run { inputs, rollouts } => (inputs.size() + rollouts.size()) as u64,
    }
}

pub fn run(
    a: CompareInput,
    b: CompareInput,
    more: Vec<CompareInput>,
    options: CompareOptions,
) -> Result<Reply, Failure> {
    let inputs: Vec<CompareInput> = [a, b].into_iter().chain(more).collect();
    let total: u64 = inputs.iter().map(size).sum();
    let mut done = 0;
    let mut sides = Vec::with_capacity(inputs.len());
    for input in inputs {
        let bytes = size(&input);
        sides.push(load(input, total, done)?);
        done += bytes;
    }
    compared(sides, options, 1)
}

/// Every side read: each candidate compared with the baseline and judged; the first kept.
pub fn compared(sides: Vec<Side>, options: CompareOptions, workers: u32) -> Result<Reply, Failure> {
    // Labels as the CLI's, from the names (a browser has no paths); distinct names stay as
    // they are, so "Export report" is the CLI's bytes.
    let names: Vec<&str> = sides.iter().map(|s| s.tasks.name.as_str()).collect();
    let labels = multi::labels(&names);
    let label = |i: usize| RunLabel {
        label: labels[i].clone(),
        path: labels[i].clone(),
        tasks: sides[i].tasks.tasks.len(),
    };
    let mut judged = Vec::with_capacity(sides.len() - 1);
    for (i, side) in sides.iter().enumerate().skip(1) {
        let c = compare::compare(&sides[0].tasks, &side.tasks, options).map_err(failure)?;
        let candidate = multi::candidate(
            &sides[0].tasks,
            &side.tasks,
            label(i),
            c,
            DEFAULT_ALPHA,
            None,
        );
        judged.push(candidate);
    }
    let judged = multi::judge(label(0), judged, DEFAULT_ALPHA, None);
    let shown = Shown {
        sides,
        judged,
        candidate: 0,
        workers,
    };
    let reply = shown.reply();
    SHOWN.with(|s| *s.borrow_mut() = Some(shown));
    Ok(reply)
}

/// The last comparison with candidate `index`'s details (headline, agents, plots, paired
/// tasks) in place of the one shown; the verdicts stay those of every candidate.
pub fn candidate(index: usize) -> Result<Reply, Failure> {
    SHOWN.with(|s| {
        let mut s = s.borrow_mut();
        let s = s.as_mut().ok_or("compare two runs first")?;
        if index >= s.judged.candidates.len() {
            return Err(format!("no candidate {index}").into());
        }
        s.candidate = index;
        Ok(s.reply())
    })
}

pub fn task(index: usize) -> Result<Reply, Failure> {
    SHOWN.with(|s| {
        let s = s.borrow();
        let s = s.as_ref().ok_or("compare two runs first")?;
        let (a, b) = (&s.sides[0], &s.sides[s.candidate + 1]);
        let mut src_a = SpanReader::new(&a.lines, 0, |_, _| {})?;
        let mut src_b = SpanReader::new(&b.lines, 0, |_, _| {})?;
        let pair = compare::conversations::task_conversations(
            s.comparison(),
            index,
            (&a.tasks, &a.lines.name(), &mut src_a),
            (&b.tasks, &b.lines.name(), &mut src_b),
        )
        .map_err(failure)?;
        Ok(Reply::ComparedTask(Box::new(pair)))
    })
}

pub fn report(request: ReportRequest) -> Result<Reply, Failure> {
    SHOWN.with(|s| {
        let s = s.borrow();
        let s = s.as_ref().ok_or("compare two runs first")?;
        // The report is `gymscope compare A B …`'s: its conversations are the first
        // candidate's, whichever the page shows.
        let (a, b) = (&s.sides[0], &s.sides[1]);
        let c = &s.judged.candidates[0].comparison;
        let meta = ReportMeta {
            title: Some(request.title)
                .filter(|t| !t.is_empty())
                .unwrap_or_else(|| compare::report::default_title(c)),
            sources: a.files.iter().chain(&b.files).map(source).collect(),
            date: request.date.filter(|d| !d.is_empty()),
        };
        let mut src_a = SpanReader::new(&a.lines, 0, |_, _| {})?;
        let mut src_b = SpanReader::new(&b.lines, 0, |_, _| {})?;
        let conversations = compare::conversations::read(
            c,
            (&a.tasks, &a.lines.name(), &mut src_a),
            (&b.tasks, &b.lines.name(), &mut src_b),
            request.conversations,
        )
        .map_err(failure)?;
        let html = compare::report::render_multi(&s.judged, &meta, &conversations)
            .ok_or("nothing compared")?;
        let mut out = BlobWriter::new();
        std::io::Write::write_all(&mut out, html.as_bytes()).map_err(failure)?;
        Ok(Reply::Report(Download {
            blob: out.finish("text/html")?,
            name: names::compare_report(&c.a_name, &c.b_name),
        }))
    })
}
