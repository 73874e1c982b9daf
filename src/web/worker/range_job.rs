//! A pool worker's job (`pool`): one byte range of a file read for its task
//! (`read::in_order::read_range`: the profile with or without health, one of a query's reads, a
//! pivot file's checks or a build's conversion), each part posted as postcard bytes as soon as
//! it is read, so the recording worker records while this one reads on.

use super::super::protocol::{Failure, RangeTask, Reply};
use super::io::{memory_bytes, post, SyncFile, SLICE};
use crate::joint_read::pooled as joint;
use crate::pivot::{checked::LineChecker, PivotOptions};
use crate::pivot_build::pooled::{ConverterSetup, RangeConverter, RangeStart};
use crate::pivot_build::Converter;
use crate::query::pooled::{QueryRead, RangeReader};
use crate::query::{Query, RunFacts};
use crate::read::batch::LineBatch;
use crate::read::in_order::{read_range, Part};
use crate::read::jsonl::DEFAULT_MAX_LINE_BYTES;
use crate::read::ranges::ByteRange;
use serde::Serialize;
use std::cell::RefCell;
use web_sys::File;

thread_local! {
    /// The query's matching read, set up once for its ranges (`Request::MatchSetup`).
    static MATCHING: RefCell<Option<RangeReader>> = const { RefCell::new(None) };
    /// The pivot validation's checks, set up once for its ranges (`Request::PivotSetup`).
    static CHECKING: RefCell<Option<LineChecker>> = const { RefCell::new(None) };
    /// A build's converter and where each of its ranges starts (`Request::ConvertSetup`).
    static CONVERTING: RefCell<Option<(Converter, Vec<RangeStart>)>> = const { RefCell::new(None) };
}

/// Takes the setup of a build's conversion.
pub fn set_up_converting(setup: &[u8], starts: Vec<RangeStart>) -> Result<(), Failure> {
    CONVERTING.with(|c| *c.borrow_mut() = None);
    let converter = ConverterSetup::from_bytes(setup)?.converter();
    CONVERTING.with(|c| *c.borrow_mut() = Some((converter, starts)));
    Ok(())
}

/// Takes the setup of a pivot validation's ranges.
pub fn set_up_checking(options: PivotOptions) {
    CHECKING.with(|c| *c.borrow_mut() = Some(LineChecker::new(options)));
}

/// Takes the setup of a query's matching read.
pub fn set_up_matching(expr: &str, facts: &[u8]) -> Result<(), Failure> {
    // No earlier query's reader outlives a setup, even one that fails.
    MATCHING.with(|m| *m.borrow_mut() = None);
    let query = Query::parse(expr).map_err(|e| Failure::from(e.to_string()))?;
    let facts = RunFacts::from_bytes(facts)?;
    MATCHING.with(|m| *m.borrow_mut() = Some(RangeReader::matching(query, facts)));
    Ok(())
}

pub fn run(file: &File, range: ByteRange, index: u32, task: RangeTask) {
    let read = match task {
        RangeTask::Profile => read(file, range, index, joint::lines),
        RangeTask::ProfileOnly => read(file, range, index, crate::profile::parse_batch),
        RangeTask::Query(QueryRead::Matches) => MATCHING.with(|m| match &mut *m.borrow_mut() {
            Some(reader) => read(file, range, index, |b| reader.lines(b)),
            None => Err("a matching read came before its setup".into()),
        }),
        RangeTask::Pivot => CHECKING.with(|c| match &*c.borrow() {
            Some(checker) => read(file, range, index, |b| checker.batch(b)),
            None => Err("a pivot range came before its setup".into()),
        }),
        RangeTask::Convert => CONVERTING.with(|c| match &mut *c.borrow_mut() {
            Some((converter, starts)) => {
                let start = starts.get(index as usize).copied().unwrap_or_default();
                let mut reader = RangeConverter::new(converter, start);
                read(file, range, index, |b| reader.lines(b))
            }
            None => Err("a build's range came before its setup".into()),
        }),
        RangeTask::Query(q) => {
            let mut reader = RangeReader::new(q);
            read(file, range, index, |b| reader.lines(b))
        }
    };
    if let Err(e) = read {
        post(&Reply::Failed(Failure::from(e)));
    }
}

fn read<L: Serialize + serde::de::DeserializeOwned>(
    file: &File,
    range: ByteRange,
    index: u32,
    lines: impl FnMut(&LineBatch) -> L,
) -> Result<(), String> {
    let send = |part: Part<L>| {
        let end = matches!(part, Part::End { .. } | Part::Failed(_));
        let bytes = js_sys::Uint8Array::from(part.to_bytes().as_slice());
        post(&Reply::RangePart {
            index,
            bytes,
            memory: memory_bytes(),
            end,
        });
        Ok::<(), String>(())
    };
    let read = SyncFile::open(file).and_then(|reader| {
        read_range(
            range,
            reader.size(),
            DEFAULT_MAX_LINE_BYTES,
            SLICE as u64,
            |start, end| reader.read_range(start, end),
            lines,
            send,
        )
    });
    // The file could not be read: the read's error, recorded in its place in file order.
    match read {
        Ok(()) => Ok(()),
        Err(cause) => send(Part::Failed(cause)),
    }
}
