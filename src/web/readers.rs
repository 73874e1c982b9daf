//! How many workers read a run's files for the profile, the query and the comparison, and a
//! pivot file for its validation (the worker's pool, `worker/pool`).

use super::protocol::CompareInput;

/// Most workers a run is read with: past this, recording in order is the bound (and each worker
/// holds its own copy of the app's wasm).
const MAX_READERS: u32 = 8;
/// Below this a run is read by the worker alone: starting a pool costs more than it saves.
const POOL_FROM_BYTES: f64 = 16e6;

/// How many workers read a run of `bytes`: `?workers=N` in the page's URL when given (tests and
/// benchmarks), else one per logical core (`navigator.hardwareConcurrency`) for a large run.
pub fn reading_workers(bytes: f64) -> u32 {
    let Some(window) = web_sys::window() else {
        return 1;
    };
    let asked = window
        .location()
        .search()
        .ok()
        .and_then(|q| workers_in_query(&q));
    let cores = window.navigator().hardware_concurrency() as u32;
    let chosen = match asked {
        Some(n) => n,
        None if bytes < POOL_FROM_BYTES => 1,
        None => cores,
    };
    chosen.clamp(1, MAX_READERS)
}

/// `N` of `workers=N` in a URL's query (`?a=b&workers=2`).
fn workers_in_query(query: &str) -> Option<u32> {
    query
        .trim_start_matches('?')
        .split('&')
        .find_map(|pair| pair.strip_prefix("workers="))
        .and_then(|n| n.parse().ok())
}

/// How many workers read the runs of a comparison (its largest run decides).
pub fn comparing_workers(a: &CompareInput, b: &CompareInput, more: &[CompareInput]) -> u32 {
    let run_bytes = |side: &CompareInput| match side {
        CompareInput::Run { inputs, rollouts } => inputs.size() + rollouts.size(),
        CompareInput::Profiling { .. } => 0.0,
    };
    let sides = [a, b].into_iter().chain(more);
    reading_workers(sides.map(run_bytes).fold(0.0, f64::max))
}

/// How many workers read a job's files, on `<body>` as `attribute`, for the tests and benches.
pub fn mark(attribute: &str, workers: u32) {
    if let Some(body) = gloo_utils::document().body() {
        let _ = body.set_attribute(attribute, &workers.to_string());
    }
}
