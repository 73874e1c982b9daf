//! Profiling a ~1 GB generated run in headless Chromium through the app, read by one worker and
//! by a pool (`?workers=N`), on each bench shape: time to the profile, how it splits (the pool's
//! read, the recording worker's share of it, what follows the read), the page's JS heap, the
//! recording worker's and the largest pool worker's wasm memory, the longest main-thread task
//! while the files were read, beside the native CLI's time on the same files; the serial part in
//! its pieces (the page before the job, recording, statistics, the view, the reply from its post
//! to the frame that draws it) and the pool workers' own time (file reads, parsing, posting);
//! then a text query of the query bar over the same files, read by as many workers.
//! Targets (issue 61): 250 MB/s to the profile with two workers, the serial part under 1.5 s.
//! Targets (issue 28): the read with two workers ≥ 1.7× one; end to end twice the one-worker
//! figure; memory under 400 MB a worker; no main-thread task over 50 ms while reading.
//! Needs dist/ and chromium (scripts/test.sh).
//!
//!   cargo bench --bench browser_profile      (BENCH_TASKS=45000: ~1 GB a shape)
//!   BENCH_SHAPES=agentic BENCH_WORKERS=1,2,4 cargo bench --bench browser_profile
#![allow(clippy::unwrap_used)] // a test or benchmark stops at what must hold

use gymscope_testkit::bench;
use gymscope_testkit::browser;
use gymscope_testkit::gen_run;
use gymscope_testkit::static_server;

use std::path::{Path, PathBuf};
use std::time::Instant;

/// The bench shapes of benches/profile.rs, larger.
fn generate(shape: &str, dir: &Path, tasks: usize) -> (PathBuf, PathBuf) {
    match shape {
        "simple" => gen_run::generate(dir, &format!("bench_{tasks}"), tasks, 4, 3600),
        "agentic" => gen_run::generate_agentic(dir, &format!("agentic_{tasks}"), tasks, 4, 4500),
        "dense" => gen_run::generate_dense(dir, &format!("dense_{tasks}"), tasks, 4),
        other => panic!("unknown shape {other} (simple, agentic, dense)"),
    }
}

fn list(var: &str, default: &str) -> Vec<String> {
    std::env::var(var)
        .unwrap_or_else(|_| default.to_string())
        .split(',')
        .map(str::to_string)
        .collect()
}

/// Watches the page's main thread for long tasks before the files are dropped.
const WATCH_LONG_TASKS: &str = "window.__long = [];
    new PerformanceObserver(l => l.getEntries().forEach(e => window.__long.push([e.startTime, e.duration])))
      .observe({type: 'longtask'});";

const FILES_READY: &str = "return !!document.querySelector('[data-testid=download-profiling]')";

/// The read's figures the page leaves on <body>, the JS heap, and the longest main-thread task
/// that ended before the profile arrived (the profile's own arrival is a task of its own).
const READ_FIGURES: &str = "const d = document.body.dataset;
    const mark = performance.getEntriesByName('gymscope:profiled').pop();
    const before = (window.__long || []).filter(([s, t]) => !mark || s + t < mark.startTime);
    return [Number(d.readWorkers), Number(d.readMs), Number(d.recordMs), Number(d.finishMs),
            Number(d.workerMemory), Number(d.readerMemory),
            performance.memory ? performance.memory.usedJSHeapSize : 0,
            Math.max(0, ...before.map(([, t]) => t)), Number(d.statsMs), Number(d.renderMs),
            Number(d.decodeMs), Number(d.readerIoMs), Number(d.readerParseMs),
            Number(d.readerSendMs), Number(d.chosenAt), Number(d.takenAt), Number(d.postedAt),
            Number(d.arrivedAt), Number(d.shownAt), Number(d.decodedAt)]";

/// A text query no row holds, applied from the query bar.
const TEXT_QUERY: &str = "const i = document.querySelector('[data-testid=query-input]');
    i.value = 'output ~ \"no rollout says this\"';
    i.dispatchEvent(new Event('input', {bubbles: true}));
    document.querySelector('[data-testid=query-apply]').click();";

const QUERY_SAID: &str =
    "const e = document.querySelector('[data-testid=query-count], [data-testid=query-error]');
    return e ? e.textContent : ''";

#[tokio::main]
async fn main() {
    let Some(root) = bench::root() else {
        return;
    };
    let tasks = bench::env_usize("BENCH_TASKS", 45_000);
    let server = static_server::StaticServer::start(&root.join("dist"));
    let b = browser::Browser::start().await;
    for shape in list("BENCH_SHAPES", "simple,agentic,dense") {
        let (inputs, rollouts) = generate(&shape, &root.join("target/bench-data"), tasks);
        let mb = bench::file_mb;
        let size = mb(&inputs) + mb(&rollouts);

        let t = Instant::now();
        bench::run_quiet(bench::profile_args(
            &mut std::process::Command::new(env!("CARGO_BIN_EXE_gymscope")),
            &inputs,
            &rollouts,
            &root.join("target/bench-data/out"),
        ));
        println!(
            "{shape}: {size:.0} MB ({} rollouts); native gymscope profile {:.2} s",
            tasks * 4,
            t.elapsed().as_secs_f64()
        );

        for workers in list("BENCH_WORKERS", "1,2,4") {
            b.open_app(&format!("{}?workers={workers}", server.url()), "")
                .await;
            b.eval(WATCH_LONG_TASKS).await;
            let t = Instant::now();
            b.choose_files("files", &[inputs.clone(), rollouts.clone()])
                .await;
            b.wait_text_for("[data-testid=status]", "Profile ready", 900)
                .await;
            let secs = t.elapsed().as_secs_f64();
            // The output files are written after the profile is shown.
            while b.eval(FILES_READY).await != true {
                tokio::time::sleep(std::time::Duration::from_millis(20)).await;
            }
            let files_secs = t.elapsed().as_secs_f64();
            // The frame after the view is set (`data-shown-at`) may come after the status text.
            let waited = Instant::now();
            while b.eval("return !!document.body.dataset.shownAt").await != true
                && waited.elapsed().as_secs() < 2
            {
                tokio::time::sleep(std::time::Duration::from_millis(20)).await;
            }
            // A figure an older build does not leave is NaN (JSON null).
            let f: Vec<f64> =
                serde_json::from_value::<Vec<Option<f64>>>(b.eval(READ_FIGURES).await)
                    .unwrap()
                    .into_iter()
                    .map(|x| x.unwrap_or(f64::NAN))
                    .collect();
            let (read, record, finish) = (f[1] / 1e3, f[2] / 1e3, f[3] / 1e3);
            // What more workers cannot share: recording in order, what follows the read, and
            // the page's side (the drop, the reply, the first frame).
            let serial = secs - (read - record);
            println!(
                "  workers={workers} ({} reading): {secs:.2} s = {:.0} MB/s | read {read:.2} s \
                 ({:.0} MB/s; recording {record:.2} s), after the read {finish:.2} s \
                 (statistics {:.2} s); output files {:.2} s more, ready at {files_secs:.2} s, \
                 serial share {serial:.2} s = {:.0}% | memory: recording worker {:.0} MB, \
                 largest pool worker {:.0} MB, page JS heap {:.0} MB | longest main-thread \
                 task while reading {:.0} ms",
                f[0],
                size / secs,
                size / read,
                f[8] / 1e3,
                f[9] / 1e3,
                100.0 * serial / secs,
                f[4] / 1e6,
                f[5] / 1e6,
                f[6] / 1e6,
                f[7]
            );
            // The serial part's pieces (ms since the epoch, the page's and workers' clocks):
            // the page before the worker took the job (choosing, recognizing the files, the
            // request), the reply from its post to the frame that draws it (transit, decoding,
            // the view), and the pool workers' own time summed over them.
            let (chosen, taken, posted, arrived, shown) = (f[14], f[15], f[16], f[17], f[18]);
            let decoded = f[19];
            let (io, parse, send) = (f[11] / 1e3, f[12] / 1e3, f[13] / 1e3);
            println!(
                "    serial pieces: page to job {:.2} s, recording {record:.2} s (decoding {:.2} \
                 s), statistics {:.2} s, the view {:.2} s, reply to screen {:.2} s (transit \
                 {:.2} s, decoding {:.2} s, drawing {:.2} s); from choosing to drawn {:.2} s",
                (taken - chosen) / 1e3,
                f[10] / 1e3,
                f[8] / 1e3,
                finish - f[8] / 1e3,
                (shown - posted) / 1e3,
                (arrived - posted) / 1e3,
                (decoded - arrived) / 1e3,
                (shown - decoded) / 1e3,
                (shown - chosen) / 1e3,
            );
            if io + parse + send > 0.0 {
                println!(
                    "    pool workers (summed): slices {io:.2} s, parsing {parse:.2} s \
                     ({:.0} MB/s a worker), encoding and posting {send:.2} s",
                    size / parse
                );
            }
            // The query bar's text search over the same files (the inputs, then the rollouts
            // matched; the prefilter answers rows without the text), read by as many workers.
            let t = Instant::now();
            b.eval(TEXT_QUERY).await;
            let said = loop {
                let v = b.eval(QUERY_SAID).await;
                if let Some(text) = v.as_str().filter(|t| !t.is_empty()) {
                    break text.to_string();
                }
                tokio::time::sleep(std::time::Duration::from_millis(20)).await;
            };
            let secs = t.elapsed().as_secs_f64();
            println!(
                "    text query: {secs:.2} s = {:.0} MB/s ({said})",
                size / secs
            );
        }
    }
    b.close().await;
}
