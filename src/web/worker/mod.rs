//! Runs inside the Web Worker: takes one [`Request`] at a time, runs its job on the core and
//! posts [`Reply`]s (progress, then a result or a failure). Built by Trunk (`data-type="worker"`).

mod compare_job;
mod compare_read;
mod curate_job;
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
        let request = decode::<Request>(e.data()).map_err(Failure::from);
        // The jobs that post their own replies, later or in parts.
        match &request {
            Ok(Request::ReadRange {
                file,
                range,
                index,
                task,
            }) => return range_job::run(file, *range, *index, *task),
            Ok(Request::ConvertSetup { setup, starts }) => {
                if let Err(failure) = range_job::set_up_converting(&setup.to_vec(), starts.clone())
                {
                    post(&Reply::Failed(failure));
                }
                return;
            }
            Ok(Request::BuildPivots {
                file,
                options,
                workers,
            }) if *workers > 1
                && pivot_build_pool::pooled(file, options.clone(), *workers).is_ok() =>
            {
                return
            }
            Ok(Request::PivotSetup { options }) => {
                return range_job::set_up_checking(options.clone())
            }
            Ok(Request::ValidatePivot {
                file,
                options,
                workers,
            }) if *workers > 1 && pivot_job::pooled(file, options.clone(), *workers).is_ok() => {
                return
            }
            Ok(Request::MatchSetup { expr, facts }) => {
                // A failed setup fails each of its ranges (no reader is set up).
                if let Err(failure) = range_job::set_up_matching(expr, &facts.to_vec()) {
                    post(&Reply::Failed(failure));
                }
                return;
            }
            // A pool that cannot start (no nested workers) leaves this worker to read alone.
            Ok(Request::Profile {
                inputs,
                rollouts,
                options,
                upstream,
                workers,
            }) if *workers > 1 => {
                let pooled = profile_finish::pooled(inputs, rollouts, *options, upstream, *workers);
                if pooled.is_ok() {
                    return;
                }
            }
            Ok(Request::Query {
                inputs,
                rollouts,
                expr,
                workers,
            }) if *workers > 1 && query_job::pooled(inputs, rollouts, expr, *workers).is_ok() => {
                return
            }
            Ok(Request::Compare {
                a,
                b,
                more,
                options,
                workers,
            }) if *workers > 1 && {
                let sides = [a, b].into_iter().chain(more).cloned().collect();
                compare_read::pooled(sides, *options, *workers).is_ok()
            } =>
            {
                return
            }
            _ => {}
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
        Request::ValidatePivot { file, options, .. } => pivot_job::run(&file, options),
        Request::BuildPivots { file, options, .. } => pivot_build_job::build(&file, options),
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
            workers: _,
        } => compare_job::run(a, b, more, options),
        Request::CompareCandidate { index } => compare_job::candidate(index),
        Request::CompareTask { index } => compare_job::task(index),
        Request::CompareReport(request) => compare_job::report(request),
        Request::Query {
            inputs,
            rollouts,
            expr,
            workers: _,
        } => query_job::run(&inputs, &rollouts, &expr),
        Request::GroupField {
            inputs,
            field,
            tasks,
        } => group_job::run(&inputs, &field, &tasks),
        Request::ReadRange { .. }
        | Request::MatchSetup { .. }
        | Request::PivotSetup { .. }
        | Request::ConvertSetup { .. } => Err(Failure::from("a range is read by a pool worker")),
    }
}
