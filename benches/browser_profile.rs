//! Profiling a ~1 GB generated rollouts file in headless Chromium through the app (files read in
//! slices by the Web Worker): time to the profile, the page's JS heap and wasm memory, and the
//! worker's wasm memory, beside the native CLI's time on the same files.
//! Targets: under 8 s, memory under 400 MB. Needs dist/ and chromium (scripts/test.sh).
//!
//!   cargo bench --bench browser_profile          (BENCH_TASKS=45000 by default: ~1 GB)
#![allow(clippy::unwrap_used)] // a test or benchmark stops at what must hold

use gymscope_testkit::browser;
use gymscope_testkit::gen_run;
use gymscope_testkit::static_server;

use fantoccini::Locator;
use std::path::Path;
use std::time::Instant;

#[tokio::main]
async fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let tasks: usize = std::env::var("BENCH_TASKS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(45_000);
    // The same data as benches/profile.rs, larger.
    let (inputs, rollouts) = gen_run::generate(
        &root.join("target/bench-data"),
        &format!("bench_{tasks}"),
        tasks,
        4,
        3600,
    );
    let mb = |p: &Path| std::fs::metadata(p).unwrap().len() as f64 / 1e6;
    let (inputs_mb, rollouts_mb) = (mb(&inputs), mb(&rollouts));
    println!(
        "data: {} rollouts, rollouts file {rollouts_mb:.0} MB + inputs {inputs_mb:.0} MB",
        tasks * 4
    );

    let t = Instant::now();
    let out_dir = root.join("target/bench-data/out");
    let status = std::process::Command::new(env!("CARGO_BIN_EXE_gymscope"))
        .args(["profile", "--inputs"])
        .arg(&inputs)
        .arg("--rollouts")
        .arg(&rollouts)
        .arg("--out-dir")
        .arg(&out_dir)
        .stdout(std::process::Stdio::null())
        .status()
        .unwrap();
    assert!(status.success());
    let native = t.elapsed().as_secs_f64();

    let server = static_server::StaticServer::start(&root.join("dist"));
    let b = browser::Browser::start().await;
    b.client.goto(&server.url()).await.unwrap();
    b.wait_worker_ready().await;
    let input = b
        .client
        .find(Locator::Css("[data-testid=files]"))
        .await
        .unwrap();
    let t = Instant::now();
    input
        .send_keys(&format!("{}\n{}", inputs.display(), rollouts.display()))
        .await
        .unwrap();
    b.wait_text_for("[data-testid=status]", "Profile ready", 600)
        .await;
    let secs = t.elapsed().as_secs_f64();
    let mem = b
        .eval(
            "return [performance.memory ? performance.memory.usedJSHeapSize : 0,
                     Number(document.body.dataset.workerMemory || 0)]",
        )
        .await;
    let mem: Vec<f64> = serde_json::from_value(mem).unwrap();
    println!(
        "browser profile: {:.0} MB in {secs:.2} s ({:.0} MB/s); page JS heap {:.1} MB, worker wasm memory {:.1} MB",
        inputs_mb + rollouts_mb,
        (inputs_mb + rollouts_mb) / secs,
        mem[0] / 1e6,
        mem[1] / 1e6
    );
    println!("native gymscope profile on the same files: {native:.2} s");
    b.close().await;
}
