//! Pivot validation in headless Chromium on the generated ~500 MB file of `benches/pivot.rs`
//! (run that bench first, or this one generates nothing and says so), read by one worker and by
//! the pool (`?workers=N`): time from choosing the file to the verdict, MB/s, and the page's JS
//! heap. Needs dist/ and chromium (scripts/test.sh).
//!
//!   cargo bench --bench pivot && BENCH_WORKERS=1,2,4 cargo bench --bench browser_pivot
#![allow(clippy::unwrap_used)] // a test or benchmark stops at what must hold

use gymscope_testkit::browser;
use gymscope_testkit::static_server;

use std::path::Path;
use std::time::Instant;

#[tokio::main]
async fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mb: usize = std::env::var("BENCH_PIVOT_MB")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(500);
    let data = root.join(format!("target/bench-data/pivot_{mb}mb.jsonl"));
    if !data.exists() {
        eprintln!(
            "{} is missing: run `cargo bench --bench pivot` first",
            data.display()
        );
        std::process::exit(1);
    }
    let size = std::fs::metadata(&data).unwrap().len() as f64 / 1e6;
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
    b.close().await;
}
