//! Pivot validation in headless Chromium on the generated ~500 MB file of `benches/pivot.rs`
//! (run that bench first, or this one generates nothing and says so), read by one worker and by
//! the pool (`?workers=N`): time from choosing the file to the verdict, MB/s, and the page's JS
//! heap. Needs dist/ and chromium (scripts/test.sh).
//!
//!   cargo bench --bench pivot && BENCH_WORKERS=1,2,4 cargo bench --bench browser_pivot
//!
//! Then the pivot builder on the rollouts of `BENCH_BUILD_PIVOT_MB=50 cargo bench --bench
//! build_pivot`, with each pool size.
#![allow(clippy::unwrap_used)] // a test or benchmark stops at what must hold

use gymscope_testkit::bench;
use gymscope_testkit::browser;
use gymscope_testkit::static_server;

use std::path::Path;
use std::time::Instant;

#[tokio::main]
async fn main() {
    let Some(root) = bench::root() else {
        return;
    };
    let mb = bench::env_usize("BENCH_PIVOT_MB", 500);
    let data = root.join(format!("target/bench-data/pivot_{mb}mb.jsonl"));
    if !data.exists() {
        eprintln!(
            "{} is missing: run `cargo bench --bench pivot` first",
            data.display()
        );
        std::process::exit(1);
    }
    let size = bench::file_mb(&data);
    let server = static_server::StaticServer::start(&root.join("dist"));
    let b = browser::Browser::start().await;
    let workers = std::env::var("BENCH_WORKERS").unwrap_or_else(|_| "1,2,4".into());
    for n in workers
        .split(',')
        .filter_map(|n| n.trim().parse::<u32>().ok())
    {
        b.client
            .goto(&format!("{}?workers={n}#pivot", server.url()))
            .await
            .unwrap();
        b.wait_worker_ready().await;
        let t = Instant::now();
        b.choose_file("pivot-file", &data).await;
        b.wait_text_for("[data-testid=pivot-verdict]", "Valid", 600)
            .await;
        let secs = t.elapsed().as_secs_f64();
        let read_by = b
            .eval("return Number(document.body.dataset.validateWorkers || 0)")
            .await;
        assert_eq!(read_by.as_u64(), Some(u64::from(n)), "the pool's size");
        let heap = b
            .eval("return performance.memory ? performance.memory.usedJSHeapSize : null")
            .await;
        println!(
            "browser validate-pivot, {n} worker(s): {size:.0} MB in {secs:.2} s, {:.0} MB/s; page JS heap {:.1} MB",
            size / secs,
            heap.as_f64().unwrap_or(0.0) / 1e6
        );
    }
    build(&b, &server.url(), root, &workers).await;
    b.close().await;
}

/// The pivot builder page on the rollouts of `benches/build_pivot.rs`
/// (`BENCH_BUILD_PIVOT_MB`, default 50; skipped when that bench has not made them): time from
/// choosing the file to the outcome line, with each pool size.
async fn build(b: &browser::Browser, base: &str, root: &Path, workers: &str) {
    let mb = bench::env_usize("BENCH_BUILD_PIVOT_MB", 50);
    let data = root.join(format!("target/bench-data/rollouts_{mb}mb.jsonl"));
    if !data.exists() {
        println!(
            "browser build-pivot: skipped ({} is missing: BENCH_BUILD_PIVOT_MB={mb} cargo bench --bench build_pivot)",
            data.display()
        );
        return;
    }
    let size = bench::file_mb(&data);
    for n in workers
        .split(',')
        .filter_map(|n| n.trim().parse::<u32>().ok())
    {
        b.client
            .goto(&format!("{base}?workers={n}#pivot-build"))
            .await
            .unwrap();
        b.wait_worker_ready().await;
        let agent = b
            .client
            .find(fantoccini::Locator::Css("[data-testid=pb-agent-ref]"))
            .await
            .unwrap();
        agent.send_keys("bench_pivot_agent").await.unwrap();
        let t = Instant::now();
        b.choose_file("pb-source-file", &data).await;
        let headline = b
            .wait_text_for("[data-testid=pb-headline]", "pivots: ", 1200)
            .await;
        let secs = t.elapsed().as_secs_f64();
        let read_by = b
            .eval("return Number(document.body.dataset.buildWorkers || 0)")
            .await;
        assert_eq!(read_by.as_u64(), Some(u64::from(n)), "the pool's size");
        println!(
            "browser build-pivot, {n} worker(s): {size:.0} MB in {secs:.2} s, {:.1} MB/s of input ({headline})",
            size / secs
        );
    }
}
