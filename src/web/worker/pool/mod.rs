//! Every core on one read: this worker starts a pool of nested workers, hands them byte ranges
//! of a run's files (`range_job`) and records their parts in file order (`read::in_order::InOrder`),
//! so what a job records and its errors are one worker's. The one reading driver of the jobs
//! that read whole runs: the profile with health, the query's reads, the compared runs. Nothing
//! is shared (static hosts cannot enable SharedArrayBuffer): `File` slices go out, results come
//! back as bytes. Event-driven: each reply of a pool worker moves the read on; the last hands
//! the recorder to what follows (a reply, or the job's next read). Cancel terminates the pool.

mod read;
mod reader;
mod recording;

pub use read::{piece, Files, Read};

use super::super::protocol::{encode, Failure, RangeTask, ReadStats, Reply, Request};
use super::io::{now_ms, post, post_progress};
use crate::read::in_order::InOrder;
use crate::read::job::Job;
use crate::read::ranges::ByteRange;
use crate::record::RowKind;
use reader::{spawn, unreachable, Reader};
use recording::{Recording, Then};
use serde::de::DeserializeOwned;
use serde::Serialize;
use std::cell::RefCell;

/// Ranges in flight per pool worker: the second waits in its queue, so none waits for a reply.
const IN_FLIGHT: usize = 2;

/// The read in flight: its recording, the ranges sent so far, its figures.
struct InFlight {
    recording: Box<dyn Recording>,
    task: RangeTask,
    /// The setup each reader takes before its first range (`Read::setup`, encoded).
    setup: Option<wasm_bindgen::JsValue>,
    /// The pool's figures so far (its size, the recording time, the largest worker memory).
    read: ReadStats,
    started: f64,
    ranges: Vec<ByteRange>,
    sent: usize,
    files: Files,
    /// Progress: bytes done before this read, and the job's whole.
    before: u64,
    total: u64,
}

#[derive(Default)]
struct Pool {
    readers: Vec<Reader>,
    job: Option<InFlight>,
    /// Workers of a failed job, terminated; dropped when the next job starts (not in their own handler).
    retired: Vec<Reader>,
}

thread_local! {
    static POOL: RefCell<Pool> = RefCell::new(Pool::default());
}

/// Starts `read` with `workers` pool workers; `then` gets its recorder when every range is
/// recorded. A failure is posted as the job's reply.
pub fn read<R>(
    workers: u32,
    read: Read<R>,
    then: impl FnOnce(R, ReadStats) + 'static,
) -> Result<(), Failure>
where
    R: Job + 'static,
    R::Part: Serialize + DeserializeOwned,
    R::Error: Into<Failure>,
{
    let taken_at = js_sys::Date::now();
    let workers = workers.max(1) as usize;
    let setup = read.setup.as_ref().map(encode).transpose()?;
    POOL.with(|pool| {
        let mut pool = pool.borrow_mut();
        pool.retired.clear();
        while pool.readers.len() < workers {
            let reader = spawn(pool.readers.len())?;
            pool.readers.push(reader);
        }
        // Each reader takes the setup before its first range of this read (`send`): one still
        // loading would drop a message posted now.
        for reader in &mut pool.readers {
            reader.set_up = false;
        }
        pool.job = Some(InFlight {
            recording: Box::new(Then {
                order: InOrder::new(read.recorder, read.ranges.clone()),
                then: Box::new(then),
            }),
            task: read.task,
            setup,
            read: ReadStats {
                workers: workers as u32,
                taken_at,
                ..ReadStats::default()
            },
            started: now_ms(),
            ranges: read.ranges,
            sent: 0,
            files: read.files,
            before: read.progress.0,
            total: read.progress.1,
        });
        Ok::<_, Failure>(())
    })?;
    step(None);
    Ok(())
}

/// Moves the read on with a pool worker's reply (`None`: the read has just started).
fn step(reply: Option<(usize, Reply)>) {
    let outcome = POOL.with(|pool| {
        let mut pool = pool.borrow_mut();
        let Pool {
            readers,
            job,
            retired,
        } = &mut *pool;
        let result = match reply {
            Some((r, reply)) => take(readers, job.as_mut(), r, reply),
            None => Ok(()),
        };
        let j = job.as_mut()?;
        let result = result.and_then(|()| {
            if j.recording.state().done {
                Ok(true)
            } else {
                send(readers, j).map(|()| false)
            }
        });
        match result {
            Err(failure) => {
                retire(readers, retired);
                *job = None;
                Some(Err(failure))
            }
            Ok(true) => {
                // A read the recorder ended early (`--fail-fast`) leaves ranges in the pool.
                if readers.iter().any(|r| r.in_flight > 0) {
                    retire(readers, retired);
                }
                job.take().map(Ok)
            }
            Ok(false) => None,
        }
    });
    // Outside the pool's borrow: what follows may start the job's next read.
    match outcome {
        Some(Ok(job)) => {
            let read = ReadStats {
                read_ms: now_ms() - job.started,
                ..job.read
            };
            job.recording.finish(read);
        }
        Some(Err(failure)) => post(&Reply::Failed(failure)),
        None => {}
    }
}

/// Ranges still queued in the pool are for a read that is over: a fresh pool for the next.
fn retire(readers: &mut Vec<Reader>, retired: &mut Vec<Reader>) {
    for reader in readers.drain(..) {
        reader.worker.terminate();
        retired.push(reader);
    }
}

/// Takes one reply of pool worker `r` into the read.
fn take(
    readers: &mut [Reader],
    job: Option<&mut InFlight>,
    r: usize,
    reply: Reply,
) -> Result<(), Failure> {
    match reply {
        Reply::Ready => {
            readers[r].ready = true;
            Ok(())
        }
        Reply::RangePart {
            index,
            bytes,
            memory,
            end,
            costs,
        } => {
            let Some(job) = job else { return Ok(()) };
            job.read.reader_memory = job.read.reader_memory.max(memory);
            if end {
                readers[r].in_flight -= 1;
                job.read.readers.add(costs);
            }
            let t0 = now_ms();
            let bytes = bytes.to_vec();
            let copied = now_ms() - t0;
            let accepted = job.recording.accept(index as usize, &bytes);
            job.read.record_ms += now_ms() - t0;
            job.read.decode_ms += copied + accepted?;
            let state = job.recording.state();
            post_progress(job.before + state.bytes, job.total, state.lines);
            Ok(())
        }
        Reply::Failed(failure) => Err(failure),
        _ => Err(Failure::from("a reading worker sent an unexpected reply")),
    }
}

/// Hands out ranges to the ready workers, never more than a few ranges ahead of the one being
/// recorded (parts of later ranges wait in memory until their turn).
fn send(readers: &mut [Reader], job: &mut InFlight) -> Result<(), Failure> {
    let ahead = job.recording.state().recording + IN_FLIGHT * readers.len() + 1;
    while job.sent < job.ranges.len().min(ahead) {
        let Some(reader) = readers
            .iter_mut()
            .filter(|r| r.ready && r.in_flight < IN_FLIGHT)
            .min_by_key(|r| r.in_flight)
        else {
            return Ok(());
        };
        let range = job.ranges[job.sent];
        let file = match range.kind {
            RowKind::Input => &job.files.inputs,
            RowKind::Rollout => &job.files.rollouts,
        };
        let request = Request::ReadRange {
            file: file.clone(),
            range,
            index: job.sent as u32,
            task: job.task,
        };
        let message = encode(&request)?;
        if let (Some(setup), false) = (&job.setup, reader.set_up) {
            reader.worker.post_message(setup).map_err(unreachable)?;
            reader.set_up = true;
        }
        reader.worker.post_message(&message).map_err(unreachable)?;
        reader.in_flight += 1;
        job.sent += 1;
    }
    Ok(())
}
