//! A pivot build whose conversion is read by the worker's pool: the first pass here (it notes
//! where each range starts, `pivot_build::pooled::RangeStarts`), then each range converted by a
//! pool worker set up with the first pass's results, the batches taken back in file order by
//! the builder, the rows checked, listed and stored as they come (as one worker's build).

use super::super::protocol::{Failure, RangeTask, Reply, Request};
use super::io::post;
use super::pivot_build_job::{finish, first_pass, FirstPass, Made};
use super::pool::{self, Files, Read};
use crate::inspect::pivot_build::PageBuild;
use crate::pivot_build::pooled::{ConvertedBatch, RangeStarts};
use crate::read::job::Job;
use crate::read::jsonl::LineTooLong;
use crate::read::ranges::plan;
use crate::record::RowKind;
use web_sys::File;

/// Ranges of at most this many source bytes: a range's rows (each with its whole prefix, several
/// times the source) wait in the recording worker until their turn.
const MAX_RANGE: u64 = 4 << 20;

/// Builds from `file`, its conversion read by a pool of `workers`; the reply is posted when done.
pub fn pooled(file: &File, options: PageBuild, workers: u32) -> Result<(), Failure> {
    let size = file.size() as u64;
    let ranges = plan(
        RowKind::Rollout,
        size,
        pool::piece(size, workers).min(MAX_RANGE),
    );
    let mut starts = RangeStarts::new(&ranges);
    let mut first = match first_pass(file, options, |span, line| starts.line(span, line)) {
        Ok(first) => first,
        // The build's own error: posted, not read again by one worker.
        Err(failure) => {
            post(&Reply::Failed(failure));
            return Ok(());
        }
    };
    let setup = Request::ConvertSetup {
        setup: js_sys::Uint8Array::from(first.builder.converter_setup().to_bytes().as_slice()),
        starts: starts.finish(),
    };
    let sources = std::mem::take(&mut first.sources);
    let made = Made::new(&first, sources);
    let read = Read {
        files: Files::one(file),
        ranges,
        task: RangeTask::Convert,
        setup: Some(setup),
        recorder: Building { first, made },
        progress: (size, 2 * size),
    };
    pool::read(workers, read, move |b: Building, _| {
        post(&finish(b.first, b.made, workers).unwrap_or_else(Reply::Failed));
    })
}

/// The builder taking the pool's batches back, and the rows it makes taken as they come.
struct Building {
    first: FirstPass,
    made: Made,
}

impl Job for Building {
    type Part = ConvertedBatch;
    type Error = Failure;

    fn record(&mut self, batch: ConvertedBatch, before: u64) -> Result<(), Failure> {
        let builder = &mut self.first.builder;
        builder.record(batch, before).map_err(|e| e.message)?;
        self.made.take(builder)
    }

    fn too_long(&mut self, kind: RowKind, t: LineTooLong) -> Result<(), Failure> {
        let builder = &mut self.first.builder;
        builder.too_long(kind, t).map_err(|e| e.message.into())
    }

    fn read_failed(&mut self, kind: RowKind, cause: String) -> Failure {
        Failure::from(self.first.builder.read_failed(kind, cause).message)
    }

    fn is_stopped(&self) -> bool {
        self.first.builder.is_stopped()
    }
}
