//! Runs inside the Web Worker: takes one [`Request`] at a time, runs its job on the core and
//! posts [`Reply`]s (progress, then a result or a failure). Built by Trunk (`data-type="worker"`).

mod compare_job;
mod curate_job;
mod io;
mod pivot_build_job;
mod pivot_job;
mod pool;
mod profile_finish;
mod profile_job;
mod query_job;
mod range_job;
mod report_job;
mod select_job;
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
        let request = decode::<Request>(e.data()).map_err(Failure::from);
        // The jobs that post their own replies, later or in parts.
        if let Ok(Request::ReadRange { file, range, index }) = &request {
            return range_job::run(file, *range, *index);
        }
        if let Ok(Request::Profile {
            inputs,
            rollouts,
            options,
            upstream,
            workers,
        }) = &request
        {
            // A pool that cannot start (no nested workers) leaves this worker to read alone.
            if *workers > 1 && pool::profile(inputs, rollouts, *options, upstream, *workers).is_ok()
            {
                return;
            }
        }
        post(&request.and_then(handle).unwrap_or_else(Reply::Failed));
    });
    scope.set_onmessage(Some(handler.as_ref().unchecked_ref()));
    handler.forget(); // the handler lives as long as the worker
    post(&Reply::Ready);
}

fn handle(request: Request) -> Result<Reply, Failure> {
    match request {
        Request::Profile {
            inputs,
            rollouts,
            options,
            upstream,
            workers: _,
        } => profile_job::run(&inputs, &rollouts, options, &upstream),
        Request::ProfileFiles { profiling, metrics } => {
            profile_job::run_files(&profiling, metrics.as_ref())
        }
        Request::ValidatePivot { file, options } => pivot_job::run(&file, options),
        Request::BuildPivots { file, options } => pivot_build_job::build(&file, options),
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
        } => compare_job::run(a, b, more, options),
        Request::CompareTask { index } => compare_job::task(index),
        Request::CompareReport(request) => compare_job::report(request),
        Request::Query {
            inputs,
            rollouts,
            expr,
        } => query_job::run(&inputs, &rollouts, &expr),
        Request::ReadRange { .. } => Err(Failure::from("a range is read by a pool worker")),
    }
}
