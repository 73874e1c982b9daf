//! The worker's pivot validation: the file streamed through the core validator by this worker
//! ([`run`]) or checked in ranges by its pool ([`pooled`], `pivot::pooled`); the fixed copy (if
//! asked for) kept as JS byte arrays outside wasm memory and joined into a Blob.

use super::super::protocol::{Failure, RangeTask, Reply, Request};
use super::io::{feed, post, post_progress, BlobWriter};
use super::pivot_build_job::write;
use super::pool::{self, Files, Read};
use crate::inspect::pivot::PivotView;
use crate::pivot::checked::Checked;
use crate::pivot::validate::ReportBuilder;
use crate::pivot::{PivotOptions, PivotValidator, Report};
use crate::read::chunks::Flow;
use crate::read::job::Job;
use crate::read::jsonl::LineTooLong;
use crate::read::ranges::plan;
use crate::record::RowKind;
use web_sys::File;

pub fn run(file: &File, options: PivotOptions) -> Result<Reply, Failure> {
    let fix = options.fix;
    let total = file.size() as u64;
    let mut validator = PivotValidator::new(file.name(), options);
    let mut fixed = fix.then(BlobWriter::new);
    feed::<Failure>(file, |chunk, done| {
        let go_on = validator.push(chunk);
        if let Some(out) = &mut fixed {
            write(out, &validator.take_fixed())?;
        }
        post_progress(done, total, validator.lines_read());
        Ok(if go_on { Flow::Continue } else { Flow::Stop })
    })?;
    let (report, rest) = validator.finish();
    checked(&report, rest, fixed, 1)
}

fn checked(
    report: &Report,
    rest: Vec<u8>,
    fixed: Option<BlobWriter>,
    workers: u32,
) -> Result<Reply, Failure> {
    let fixed = match fixed {
        Some(mut out) => {
            write(&mut out, &rest)?;
            Some(out.finish("application/jsonl")?)
        }
        None => None,
    };
    Ok(Reply::PivotChecked {
        view: Box::new(PivotView::new(report)),
        fixed,
        workers,
    })
}

/// The validation read by a pool of `workers`; the reply is posted when every range is added.
pub fn pooled(file: &File, options: PivotOptions, workers: u32) -> Result<(), Failure> {
    let size = file.size() as u64;
    let recorder = Validating {
        builder: ReportBuilder::new(file.name(), &options),
        fixed: options.fix.then(BlobWriter::new),
    };
    let read = Read {
        files: Files::one(file),
        ranges: plan(RowKind::Rollout, size, pool::piece(size, workers)),
        task: RangeTask::Pivot,
        setup: Some(Request::PivotSetup { options }),
        recorder,
        progress: (0, size),
    };
    pool::read(workers, read, move |v: Validating, _| {
        let (report, rest) = v.builder.finish();
        post(&checked(&report, rest, v.fixed, workers).unwrap_or_else(Reply::Failed));
    })
}

/// The report's builder, its fixed copy's bytes moved out of wasm memory as each run is added.
struct Validating {
    builder: ReportBuilder,
    fixed: Option<BlobWriter>,
}

impl Job for Validating {
    type Part = Checked;
    type Error = Failure;

    fn record(&mut self, run: Checked, _before: u64) -> Result<(), Failure> {
        self.builder.add(run);
        match &mut self.fixed {
            Some(out) => write(out, &self.builder.take_fixed()),
            None => Ok(()),
        }
    }

    fn too_long(&mut self, _: RowKind, t: LineTooLong) -> Result<(), Failure> {
        self.builder.line_too_long(t);
        Ok(())
    }

    fn read_failed(&mut self, kind: RowKind, cause: String) -> Failure {
        Failure::from(self.builder.read_failed(kind, cause))
    }

    fn is_stopped(&self) -> bool {
        self.builder.is_stopped()
    }
}
