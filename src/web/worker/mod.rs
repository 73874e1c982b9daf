//! Runs inside the Web Worker: takes one [`Request`] at a time, runs its job on the core and
//! posts [`Reply`]s (progress, then a result or a failure). Built by Trunk (`data-type="worker"`).

mod compare_job;
mod compare_read;
mod curate_job;
mod file_stream;
mod group_job;
mod io;
mod pivot_build_job;
mod pivot_build_pool;
mod pivot_job;
mod pool;
mod profile_finish;
mod profile_job;
mod query_job;
mod range_job;
mod report_job;
mod select_job;
mod shown;
mod verdict_files;

use super::protocol::{decode, Failure, Reply, Request};
use io::post;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{DedicatedWorkerGlobalScope, MessageEvent};

pub fn start() {
    console_error_panic_hook::set_once();
    let scope: DedicatedWorkerGlobalScope = js_sys::global().unchecked_into();
    let handler = Closure::<dyn FnMut(MessageEvent)>::new(move |e: MessageEvent| {
        let answer = match decode::<Request>(e.data()) {
            Ok(request) => handle(request),
            Err(e) => Some(Err(Failure::from(e))),
        };
        if let Some(reply) = answer {
            post(&reply.unwrap_or_else(Reply::Failed));
        }
    });
    scope.set_onmessage(Some(handler.as_ref().unchecked_ref()));
    handler.forget(); // the handler lives as long as the worker
    post(&Reply::Ready);
}

/// A pool of `workers` started by `start`; false leaves this worker to do the job alone (one
/// worker asked for, or a pool that cannot start: no nested workers).
fn pool_started<E>(workers: u32, start: impl FnOnce() -> Result<(), E>) -> bool {
    workers > 1 && start().is_ok()
}

/// Runs a request's job: its reply, or `None` when the job posts its own replies (a pool's read,
/// a pool worker's range, a pool worker's setup).
fn handle(request: Request) -> Option<Result<Reply, Failure>> {
    Some(match request {
        Request::Profile {
            inputs,
            rollouts,
            options,
            upstream,
            workers,
        } => {
            let pool = || profile_finish::pooled(&inputs, &rollouts, options, &upstream, workers);
            if pool_started(workers, pool) {
                return None;
            }
            profile_job::run(&inputs, &rollouts, options, &upstream)
        }
        Request::ProfileFiles { profiling, metrics } => {
            profile_job::run_files(&profiling, metrics.as_ref())
        }
        Request::ValidatePivot {
            file,
            options,
            workers,
        } => {
            if pool_started(workers, || {
                pivot_job::pooled(&file, options.clone(), workers)
            }) {
                return None;
            }
            pivot_job::run(&file, options)
        }
        Request::BuildPivots {
            file,
            options,
            workers,
        } => {
            let pool = || pivot_build_pool::pooled(&file, options.clone(), workers);
            if pool_started(workers, pool) {
                return None;
            }
            pivot_build_job::build(&file, options)
        }
        Request::SelectPivots {
            pivots,
            profile,
            config,
            options,
        } => select_job::select(&pivots, &profile, config.as_ref(), &options),
        Request::PlanPivots { options, files } => select_job::plan(&options, files),
        Request::CurateTasks(band) => curate_job::run(band),
        Request::Report(request) => report_job::run(request),
        Request::Compare {
            a,
            b,
            more,
            options,
            workers,
        } => {
            let sides = || [&a, &b].into_iter().chain(&more).cloned().collect();
            if pool_started(workers, || compare_read::pooled(sides(), options, workers)) {
                return None;
            }
            compare_job::run(a, b, more, options)
        }
        Request::CompareCandidate { index } => compare_job::candidate(index),
        Request::CompareTask { index } => compare_job::task(index),
        Request::CompareReport(request) => compare_job::report(request),
        Request::Query {
            inputs,
            rollouts,
            expr,
            workers,
        } => {
            if pool_started(workers, || {
                query_job::pooled(&inputs, &rollouts, &expr, workers)
            }) {
                return None;
            }
            query_job::run(&inputs, &rollouts, &expr)
        }
        Request::GroupField {
            inputs,
            field,
            tasks,
        } => group_job::run(&inputs, &field, &tasks),
        // A pool worker's ranges and their setups, one at a time in order (`range_job`).
        request @ (Request::ReadRange { .. }
        | Request::ConvertSetup { .. }
        | Request::PivotSetup { .. }
        | Request::MatchSetup { .. }) => {
            range_job::enqueue(request);
            return None;
        }
    })
}
