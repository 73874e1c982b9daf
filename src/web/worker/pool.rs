//! Every core on one run: this worker starts a pool of nested workers, hands them byte ranges
//! of the files (`range_job`) and records their parts in file order (`joint_read::ranges`), so
//! the profile, health, errors and downloads are one worker's. Nothing is shared (static hosts
//! cannot enable SharedArrayBuffer): `File` slices go out, parsed rows come back as bytes.
//! Event-driven: each reply of a pool worker moves the job on; the last one finishes it.
//! Terminating this worker (the page's Cancel) terminates its pool.

use super::super::protocol::{
    decode, encode, Failure, ReadStats, Reply, Request, UpstreamFiles, WORKER_URL,
};
use super::io::{now_ms, post, post_progress};
use super::{profile_finish, profile_job};
use crate::joint_read::ranges::{InOrder, RangePart};
use crate::profile::ranges::{plan, ByteRange};
use crate::profile::ProfileOptions;
use crate::record::RowKind;
use std::cell::RefCell;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{File, MessageEvent, Worker, WorkerOptions, WorkerType};

/// Ranges in flight per pool worker: the second waits in its queue, so none waits for a reply.
const IN_FLIGHT: usize = 2;
/// Range sizes: several per worker (the last ones end together), each large enough to be cheap.
const MIN_RANGE: u64 = 1 << 20;
const MAX_RANGE: u64 = 32 << 20;

struct Reader {
    worker: Worker,
    ready: bool,
    in_flight: usize,
    _on_message: Closure<dyn FnMut(MessageEvent)>,
}

struct Job {
    order: InOrder,
    /// The pool's figures so far (its size, the recording time, the largest worker memory).
    read: ReadStats,
    started: f64,
    ranges: Vec<ByteRange>,
    sent: usize,
    total: u64,
    inputs: File,
    rollouts: File,
    options: ProfileOptions,
    upstream: UpstreamFiles,
}

#[derive(Default)]
struct Pool {
    readers: Vec<Reader>,
    job: Option<Job>,
    /// Workers of a failed job, terminated; dropped when the next job starts (not in their own handler).
    retired: Vec<Reader>,
}

thread_local! {
    static POOL: RefCell<Pool> = RefCell::new(Pool::default());
}

/// Starts profiling a run with `workers` pool workers; the reply is posted when they are done.
pub fn profile(
    inputs: &File,
    rollouts: &File,
    options: ProfileOptions,
    upstream: &UpstreamFiles,
    workers: u32,
) -> Result<(), Failure> {
    let workers = workers.max(1) as usize;
    let total = (inputs.size() + rollouts.size()) as u64;
    let piece = (total / (4 * workers as u64)).clamp(MIN_RANGE, MAX_RANGE);
    let mut ranges = plan(RowKind::Input, inputs.size() as u64, piece);
    ranges.extend(plan(RowKind::Rollout, rollouts.size() as u64, piece));
    let (builder, health) = profile_job::builders(inputs, rollouts);
    let order = InOrder::new(builder, health, &inputs.name(), ranges.clone());
    POOL.with(|pool| {
        let mut pool = pool.borrow_mut();
        pool.retired.clear();
        while pool.readers.len() < workers {
            let reader = spawn(pool.readers.len())?;
            pool.readers.push(reader);
        }
        pool.job = Some(Job {
            order,
            read: ReadStats {
                workers: workers as u32,
                ..ReadStats::default()
            },
            started: now_ms(),
            ranges,
            sent: 0,
            total,
            inputs: inputs.clone(),
            rollouts: rollouts.clone(),
            options,
            upstream: upstream.clone(),
        });
        Ok::<_, Failure>(())
    })?;
    step(None);
    Ok(())
}

fn spawn(index: usize) -> Result<Reader, Failure> {
    let options = WorkerOptions::new();
    options.set_type(WorkerType::Classic);
    let worker = Worker::new_with_options(WORKER_URL, &options)
        .map_err(|e| Failure::from(format!("cannot start a reading worker: {e:?}")))?;
    let on_message = Closure::<dyn FnMut(MessageEvent)>::new(move |e: MessageEvent| {
        let reply = decode::<Reply>(e.data()).unwrap_or_else(|e| Reply::Failed(e.into()));
        step(Some((index, reply)));
    });
    worker.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
    Ok(Reader {
        worker,
        ready: false,
        in_flight: 0,
        _on_message: on_message,
    })
}

/// Moves the job on with a pool worker's reply (`None`: the job has just started).
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
            if j.order.is_done() {
                Ok(true)
            } else {
                send(readers, j).map(|()| false)
            }
        });
        match result {
            Err(failure) => {
                // Ranges still queued in the pool are for a job that is over: a fresh pool.
                for reader in readers.drain(..) {
                    reader.worker.terminate();
                    retired.push(reader);
                }
                *job = None;
                Some(Err(failure))
            }
            Ok(true) => job.take().map(Ok),
            Ok(false) => None,
        }
    });
    match outcome {
        Some(Ok(job)) => {
            let read = ReadStats {
                read_ms: now_ms() - job.started,
                ..job.read
            };
            let (builder, health) = job.order.into_builders();
            let reply = profile_finish::finish(
                builder,
                health,
                &job.inputs,
                &job.rollouts,
                job.options,
                &job.upstream,
                read,
            )
            .unwrap_or_else(Reply::Failed);
            post(&reply);
        }
        Some(Err(failure)) => post(&Reply::Failed(failure)),
        None => {}
    }
}

/// Takes one reply of pool worker `r` into the job.
fn take(
    readers: &mut [Reader],
    job: Option<&mut Job>,
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
        } => {
            let Some(job) = job else { return Ok(()) };
            job.read.reader_memory = job.read.reader_memory.max(memory);
            let t0 = now_ms();
            let part = RangePart::from_bytes(&bytes.to_vec())?;
            if matches!(part, RangePart::End { .. }) {
                readers[r].in_flight -= 1;
            }
            let accepted = job.order.accept(index as usize, part);
            job.read.record_ms += now_ms() - t0;
            accepted?;
            let (bytes, lines) = job.order.done();
            post_progress(bytes, job.total, lines);
            Ok(())
        }
        Reply::Failed(failure) => Err(failure),
        _ => Err(Failure::from("a reading worker sent an unexpected reply")),
    }
}

/// Hands out ranges to the ready workers, never more than a few ranges ahead of the one being
/// recorded (parts of later ranges wait in memory until their turn).
fn send(readers: &mut [Reader], job: &mut Job) -> Result<(), Failure> {
    let ahead = job.order.recording() + IN_FLIGHT * readers.len() + 1;
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
            RowKind::Input => &job.inputs,
            RowKind::Rollout => &job.rollouts,
        };
        let request = Request::ReadRange {
            file: file.clone(),
            range,
            index: job.sent as u32,
        };
        let message = encode(&request)?;
        reader
            .worker
            .post_message(&message)
            .map_err(|e| Failure::from(format!("cannot reach a reading worker: {e:?}")))?;
        reader.in_flight += 1;
        job.sent += 1;
    }
    Ok(())
}
