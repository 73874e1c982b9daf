//! The worker's comparison: each side reduced to the core's `RunTasks` (a run profiled from its
//! two files, or a profiling file read), compared, and kept for the side-by-side view of a task
//! and for "Export report" (the bytes `gymscope compare --report` writes).

use super::super::protocol::{CompareInput, Compared, Download, Failure, Reply, ReportRequest};
use super::io::{feed, post_progress, BlobWriter, SpanReader, WINDOW};
use super::profile_job::source;
use crate::chunks::Flow;
use crate::compare::multi::{self, MultiComparison, RunLabel, DEFAULT_ALPHA};
use crate::compare::{self, CompareOptions, Comparison, ProfilingFileReader, RunTasks};
use crate::names;
use crate::profile::{ProfileBuilder, ProfileOptions};
use crate::report::ReportMeta;
use std::cell::RefCell;
use web_sys::File;

/// A side as compared: its reduced tasks and the file its lines are read back from.
struct Side {
    tasks: RunTasks,
    /// The rollouts file (a run) or the profiling file.
    lines: File,
    /// Its files as the report lists them (inputs before rollouts).
    files: Vec<File>,
}

struct Shown {
    a: Side,
    b: Side,
    comparison: Comparison,
    /// The comparison judged (verdicts, power, flips) as `gymscope compare A B` does by default.
    judged: MultiComparison,
}

thread_local! {
    static SHOWN: RefCell<Option<Shown>> = const { RefCell::new(None) };
}

fn failure(e: impl std::fmt::Display) -> Failure {
    Failure::from(e.to_string())
}

/// The side's shown name: its lines file's name (the CLI's, for the same files).
fn load(input: CompareInput, total: u64, done_before: u64) -> Result<Side, Failure> {
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
            let mut builder = ProfileBuilder::new(inputs.name(), rollouts.name());
            let size = inputs.size() as u64;
            feed::<Failure>(&inputs, |chunk, done| {
                builder.push_inputs(chunk)?;
                post_progress(done_before + done, total, builder.lines_read());
                Ok(Flow::Continue)
            })?;
            feed::<Failure>(&rollouts, |chunk, done| {
                builder.push_rollouts(chunk)?;
                post_progress(done_before + size + done, total, builder.lines_read());
                Ok(Flow::Continue)
            })?;
            let profile = builder.finish(ProfileOptions::default())?;
            let mut samples = SpanReader::new(&inputs, WINDOW, |_, _| {})?;
            let tasks =
                RunTasks::from_profile(&profile, &mut samples, &inputs.name(), &rollouts.name())
                    .map_err(failure)?;
            Ok(Side {
                tasks,
                lines: rollouts.clone(),
                files: vec![inputs, rollouts],
            })
        }
    }
}

fn size(input: &CompareInput) -> u64 {
    match input {
        CompareInput::Profiling { file } => file.size() as u64,
        CompareInput::Run { inputs, rollouts } => (inputs.size() + rollouts.size()) as u64,
    }
}

pub fn run(a: CompareInput, b: CompareInput, options: CompareOptions) -> Result<Reply, Failure> {
    let (size_a, total) = (size(&a), size(&a) + size(&b));
    let a = load(a, total, 0)?;
    let b = load(b, total, size_a)?;
    let comparison = compare::compare(&a.tasks, &b.tasks, options).map_err(failure)?;
    // Labels are the file names (a browser has no paths), as the CLI's for distinct names.
    let label = |s: &Side| RunLabel {
        label: s.tasks.name.clone(),
        path: s.tasks.name.clone(),
        tasks: s.tasks.tasks.len(),
    };
    let candidate = multi::candidate(
        &a.tasks,
        &b.tasks,
        label(&b),
        comparison.clone(),
        DEFAULT_ALPHA,
        None,
    );
    let judged = multi::judge(label(&a), vec![candidate], DEFAULT_ALPHA, None);
    let reply = Reply::Compared(Box::new(Compared {
        summary_html: compare::report::summary_html_with(&comparison, Some(&judged)),
        comparison: comparison.clone(),
    }));
    SHOWN.with(|s| {
        *s.borrow_mut() = Some(Shown {
            a,
            b,
            comparison,
            judged,
        });
    });
    Ok(reply)
}

pub fn task(index: usize) -> Result<Reply, Failure> {
    SHOWN.with(|s| {
        let s = s.borrow();
        let s = s.as_ref().ok_or("compare two runs first")?;
        let mut src_a = SpanReader::new(&s.a.lines, 0, |_, _| {})?;
        let mut src_b = SpanReader::new(&s.b.lines, 0, |_, _| {})?;
        let pair = compare::conversations::task_conversations(
            &s.comparison,
            index,
            (&s.a.tasks, &s.a.lines.name(), &mut src_a),
            (&s.b.tasks, &s.b.lines.name(), &mut src_b),
        )
        .map_err(failure)?;
        Ok(Reply::ComparedTask(Box::new(pair)))
    })
}

pub fn report(request: ReportRequest) -> Result<Reply, Failure> {
    SHOWN.with(|s| {
        let s = s.borrow();
        let s = s.as_ref().ok_or("compare two runs first")?;
        let c = &s.comparison;
        let meta = ReportMeta {
            title: Some(request.title)
                .filter(|t| !t.is_empty())
                .unwrap_or_else(|| compare::report::default_title(c)),
            sources: s.a.files.iter().chain(&s.b.files).map(source).collect(),
            date: request.date.filter(|d| !d.is_empty()),
        };
        let mut src_a = SpanReader::new(&s.a.lines, 0, |_, _| {})?;
        let mut src_b = SpanReader::new(&s.b.lines, 0, |_, _| {})?;
        let conversations = compare::conversations::read(
            c,
            (&s.a.tasks, &s.a.lines.name(), &mut src_a),
            (&s.b.tasks, &s.b.lines.name(), &mut src_b),
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
