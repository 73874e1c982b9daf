//! Benchmark of `gymscope report` on a generated run of 25,000 tasks × 4 = 100,000 rollouts
//! (~2.5 KB per rollout line, shuffled): the HTML file's size, the time to write it (from the run and
//! from the profile's files), and in headless Chromium from a file:// URL the time until the page
//! is interactive (its script done) and the time of a sort. Bars: < 12 MB, < 2 s.
//! Needs chromium + chromedriver (CHROMEDRIVER=/usr/bin/chromedriver).
//!
//!   cargo bench --bench report            (data is generated once into target/bench-data/)
//!   BENCH_TASKS=2500 cargo bench --bench report
#![allow(clippy::unwrap_used)] // a test or benchmark stops at what must hold

use gymscope_testkit::bench;
use gymscope_testkit::browser;
use gymscope_testkit::gen_run;

use std::process::Command;
use std::time::{Duration, Instant};

fn gymscope(args: &[&str]) -> f64 {
    bench::time_ok(Command::new(env!("CARGO_BIN_EXE_gymscope")).args(args))
}

#[tokio::main]
async fn main() {
    if bench::listing_only() {
        return;
    }
    let tasks = bench::env_usize("BENCH_TASKS", 25_000);
    let dir = bench::data_dir();
    let name = format!("report_{tasks}x4");
    let (inputs, rollouts) = gen_run::generate(&dir, &name, tasks, 4, 1500);
    let size = bench::file_mb;
    println!(
        "data: {} rollouts / {tasks} tasks, rollouts {:.0} MB + inputs {:.0} MB",
        tasks * 4,
        size(&rollouts),
        size(&inputs)
    );
    let out = dir.join(format!("{name}_report.html"));
    let (i, r, o) = (
        inputs.to_str().unwrap(),
        rollouts.to_str().unwrap(),
        out.to_str().unwrap(),
    );
    let mut times: Vec<f64> = (0..3)
        .map(|_| gymscope(&["report", "--inputs", i, "--rollouts", r, "-o", o]))
        .collect();
    times.sort_by(f64::total_cmp);
    println!(
        "gymscope report (from the run, 20 tasks' conversations): {:.2} MB, best {:.2} s",
        size(&out),
        times[0]
    );
    let out_dir = dir.join("report-out");
    gymscope(&[
        "profile",
        "--inputs",
        i,
        "--rollouts",
        r,
        "--out-dir",
        out_dir.to_str().unwrap(),
    ]);
    let profiling = out_dir.join(format!("{name}_reward_profiling.jsonl"));
    let from_files = out_dir.join(format!("{name}_report.html"));
    let secs = gymscope(&["report", "--profile", profiling.to_str().unwrap()]);
    println!(
        "gymscope report --profile (from the files, {:.0} MB): {:.2} MB, {secs:.2} s",
        size(&profiling),
        size(&from_files)
    );

    let b = browser::Browser::start().await;
    let url = format!("file://{}", out.display());
    for run in 0..3 {
        b.client.goto("about:blank").await.unwrap();
        let t = Instant::now();
        b.client.goto(&url).await.unwrap();
        let ready = loop {
            let v = b
                .eval("return document.documentElement.getAttribute('data-ready')")
                .await;
            if let Some(ms) = v.as_str() {
                break ms.parse::<f64>().unwrap();
            }
            assert!(
                t.elapsed() < Duration::from_secs(60),
                "the page never became ready"
            );
            tokio::time::sleep(Duration::from_millis(10)).await;
        };
        let wall = t.elapsed().as_secs_f64();
        let sort = b
            .eval("const t = performance.now(); document.querySelectorAll('#task-table thead th')[1].click(); return performance.now() - t")
            .await;
        let filter = b
            .eval("const t = performance.now(); const f = document.getElementById('task-filter'); f.value = '`mean/reward` < 0.5'; f.dispatchEvent(new Event('input')); return performance.now() - t")
            .await;
        let script = b
            .eval("return document.documentElement.getAttribute('data-script-ms')")
            .await;
        let parsed = b
            .eval(
                "const n = performance.getEntriesByType('navigation')[0]; return n.domInteractive",
            )
            .await;
        let heap = b
            .eval("return performance.memory ? performance.memory.usedJSHeapSize : 0")
            .await;
        println!(
            "chromium run {run}: interactive {:.0} ms after navigation start (HTML parsed at {:.0} ms, script {} ms; {wall:.2} s wall with WebDriver); sort {:.0} ms; JS heap {:.0} MB",
            ready,
            parsed.as_f64().unwrap_or(0.0),
            script.as_str().unwrap_or("?"),
            sort.as_f64().unwrap_or(0.0),
            heap.as_f64().unwrap_or(0.0) / 1e6
        );
        let _ = filter;
    }
    b.close().await;
}
