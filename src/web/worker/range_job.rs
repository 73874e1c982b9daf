//! A pool worker's job (`pool`): one byte range of a file read for its task
//! (`read::in_order::read_range`: the profile with or without health, one of a query's reads, a
//! pivot file's checks or a build's conversion), each part posted as postcard bytes as soon as
//! it is read, so the recording worker records while this one reads on.

use super::super::protocol::{Failure, RangeTask, ReaderCosts, Reply, Request};
use super::file_stream::FileStream;
use super::io::{memory_bytes, now_ms, post};
use crate::joint_read::pooled as joint;
use crate::pivot::{checked::LineChecker, PivotOptions};
use crate::pivot_build::pooled::{ConverterSetup, RangeConverter, RangeStart};
use crate::pivot_build::Converter;
use crate::query::pooled::{QueryRead, RangeReader};
use crate::query::{Query, RunFacts};
use crate::read::batch::LineBatch;
use crate::read::in_order::{Part, RangeParts};
use crate::read::jsonl::DEFAULT_MAX_LINE_BYTES;
use crate::read::ranges::ByteRange;
use serde::Serialize;
use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use web_sys::File;

thread_local! {
    /// Requests waiting for the one before them to finish (`enqueue`).
    static QUEUE: RefCell<VecDeque<Request>> = const { RefCell::new(VecDeque::new()) };
    static DRAINING: Cell<bool> = const { Cell::new(false) };
    /// The query's matching read, set up once for its ranges (`Request::MatchSetup`).
    static MATCHING: RefCell<Option<RangeReader>> = const { RefCell::new(None) };
    /// The pivot validation's checks, set up once for its ranges (`Request::PivotSetup`).
    static CHECKING: RefCell<Option<LineChecker>> = const { RefCell::new(None) };
    /// A build's converter and where each of its ranges starts (`Request::ConvertSetup`).
    static CONVERTING: RefCell<Option<(Converter, Vec<RangeStart>)>> = const { RefCell::new(None) };
}

/// Takes the setup of a build's conversion.
fn set_up_converting(setup: &[u8], starts: Vec<RangeStart>) -> Result<(), Failure> {
    CONVERTING.with(|c| *c.borrow_mut() = None);
    let converter = ConverterSetup::from_bytes(setup)?.converter();
    CONVERTING.with(|c| *c.borrow_mut() = Some((converter, starts)));
    Ok(())
}

/// Takes the setup of a pivot validation's ranges.
fn set_up_checking(options: PivotOptions) {
    CHECKING.with(|c| *c.borrow_mut() = Some(LineChecker::new(options)));
}

/// Takes the setup of a query's matching read.
fn set_up_matching(expr: &str, facts: &[u8]) -> Result<(), Failure> {
    // No earlier query's reader outlives a setup, even one that fails.
    MATCHING.with(|m| *m.borrow_mut() = None);
    let query = Query::parse(expr).map_err(|e| Failure::from(e.to_string()))?;
    let facts = RunFacts::from_bytes(facts)?;
    MATCHING.with(|m| *m.borrow_mut() = Some(RangeReader::matching(query, facts)));
    Ok(())
}

/// Takes a pool worker's request: ranges and setups run one at a time in the order they came
/// (a range's read awaits its file's stream, and the pool sends a second range ahead).
pub fn enqueue(request: Request) {
    QUEUE.with(|q| q.borrow_mut().push_back(request));
    if !DRAINING.with(|d| d.replace(true)) {
        wasm_bindgen_futures::spawn_local(drain());
    }
}

async fn drain() {
    while let Some(request) = QUEUE.with(|q| q.borrow_mut().pop_front()) {
        let done = match request {
            Request::ReadRange {
                file,
                range,
                index,
                task,
            } => {
                run(&file, range, index, task).await;
                Ok(())
            }
            Request::ConvertSetup { setup, starts } => set_up_converting(&setup.to_vec(), starts),
            Request::PivotSetup { options } => {
                set_up_checking(options);
                Ok(())
            }
            // A failed setup fails each of its ranges (no reader is set up).
            Request::MatchSetup { expr, facts } => set_up_matching(&expr, &facts.to_vec()),
            _ => Err(Failure::from("a reading worker was sent another job")),
        };
        if let Err(failure) = done {
            post(&Reply::Failed(failure));
        }
    }
    DRAINING.with(|d| d.set(false));
}

/// Reads one range for `task`, its parts posted as it goes. The task's setup is taken out of
/// its slot for the read (nothing else runs meanwhile: `enqueue`) and put back after.
async fn run(file: &File, range: ByteRange, index: u32, task: RangeTask) {
    let missing = |what: &str| Err(format!("a {what} came before its setup"));
    let read = match task {
        RangeTask::Profile => read(file, range, index, joint::lines).await,
        RangeTask::ProfileOnly => read(file, range, index, crate::profile::parse_batch).await,
        RangeTask::Query(QueryRead::Matches) => match MATCHING.with(|m| m.borrow_mut().take()) {
            Some(mut reader) => {
                let read = read(file, range, index, |b| reader.lines(b)).await;
                MATCHING.with(|m| *m.borrow_mut() = Some(reader));
                read
            }
            None => missing("matching read"),
        },
        RangeTask::Pivot => match CHECKING.with(|c| c.borrow_mut().take()) {
            Some(checker) => {
                let read = read(file, range, index, |b| checker.batch(b)).await;
                CHECKING.with(|c| *c.borrow_mut() = Some(checker));
                read
            }
            None => missing("pivot range"),
        },
        RangeTask::Convert => match CONVERTING.with(|c| c.borrow_mut().take()) {
            Some((mut converter, starts)) => {
                let start = starts.get(index as usize).copied().unwrap_or_default();
                let mut reader = RangeConverter::new(&mut converter, start);
                let read = read(file, range, index, |b| reader.lines(b)).await;
                CONVERTING.with(|c| *c.borrow_mut() = Some((converter, starts)));
                read
            }
            None => missing("build's range"),
        },
        RangeTask::Query(q) => {
            let mut reader = RangeReader::new(q);
            read(file, range, index, |b| reader.lines(b)).await
        }
    };
    if let Err(e) = read {
        post(&Reply::Failed(Failure::from(e)));
    }
}

/// Reads `range` of `file` from a stream of the file (`File.stream()`: measured faster than
/// `FileReaderSync` slices, and the browser reads on while the lines are parsed; docs/
/// performance.md), each batch's result posted as postcard bytes.
async fn read<L: Serialize + serde::de::DeserializeOwned>(
    file: &File,
    range: ByteRange,
    index: u32,
    mut lines: impl FnMut(&LineBatch) -> L,
) -> Result<(), String> {
    // Where the range's time goes, for the browser benchmark (`ReadStats::readers`).
    let costs = Cell::new(ReaderCosts::default());
    let timed = |f: fn(&mut ReaderCosts) -> &mut f64, t0: f64| {
        let mut c = costs.get();
        *f(&mut c) += now_ms() - t0;
        costs.set(c);
    };
    let mut send = |part: Part<L>| {
        let t0 = now_ms();
        let end = matches!(part, Part::End { .. } | Part::Failed(_));
        let bytes = js_sys::Uint8Array::from(part.to_bytes().as_slice());
        timed(|c| &mut c.send_ms, t0);
        post(&Reply::RangePart {
            index,
            bytes,
            memory: memory_bytes(),
            end,
            costs: costs.get(),
        });
        Ok::<(), String>(())
    };
    let mut parse = |batch: &LineBatch| {
        let t0 = now_ms();
        let part = lines(batch);
        timed(|c| &mut c.parse_ms, t0);
        part
    };
    let mut parts = RangeParts::new(range, DEFAULT_MAX_LINE_BYTES);
    let mut stream = None;
    let mut chunk = Vec::new();
    let read = async {
        while let Some(at) = parts.next_at() {
            let t0 = now_ms();
            let stream = match &mut stream {
                Some(s) => s,
                None => stream.insert(FileStream::open(file, at)?),
            };
            let more = stream.next_into(&mut chunk).await?;
            timed(|c| &mut c.io_ms, t0);
            parts.push(&chunk, !more, &mut parse, &mut send)?;
        }
        Ok::<(), String>(())
    };
    let read = read.await;
    if let Some(stream) = stream {
        stream.cancel(); // the rest of the file is not this range's
    }
    // The file could not be read: the read's error, recorded in its place in file order.
    match read {
        Ok(()) => Ok(()),
        Err(cause) => send(Part::Failed(cause)),
    }
}
