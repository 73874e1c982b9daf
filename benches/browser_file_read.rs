//! How fast a web worker in headless Chromium reads a large `File`, by each way the app could:
//! `FileReaderSync` slice by slice (the reads the app made until issue 61), `Blob.arrayBuffer()`
//! one slice at a time, the same with the next slice already asked for while one is used, and
//! `File.stream()`; each by one worker over the whole file, then by two workers at once over its
//! halves, as the app's pool reads. Nothing is parsed: this is the floor under the app's read
//! (issue 61). Prints MB/s of each.
//!
//!   cargo bench --bench browser_file_read     (BENCH_TASKS=45000: a 1.1 GB rollouts file)
//!   BENCH_SLICE_MB=4 cargo bench --bench browser_file_read
#![allow(clippy::unwrap_used)] // a test or benchmark stops at what must hold

use gymscope_testkit::bench;
use gymscope_testkit::browser;
use gymscope_testkit::gen_run;
use gymscope_testkit::static_server;

/// A page with a file input and a worker that reads `[start, end)` of the chosen file by `mode`,
/// touching every 4096th byte (so nothing is skipped), and replies with the time it took.
const PAGE: &str = r#"<!doctype html><input type="file" data-testid="files">
<script>
const code = `
onmessage = async (e) => {
  const { file, start, end, slice, mode, work } = e.data;
  let touched = 0;
  // The parse's stand-in: \`work\` ms of CPU per MB read.
  const use = (buf) => {
    const a = new Uint8Array(buf);
    for (let i = 0; i < a.length; i += 4096) touched += a[i];
    const until = performance.now() + work * a.length / 1e6;
    while (performance.now() < until) {}
  };
  const t0 = performance.now();
  if (mode === 'sync') {
    const r = new FileReaderSync();
    for (let a = start; a < end; a += slice) use(r.readAsArrayBuffer(file.slice(a, Math.min(a + slice, end))));
  } else if (mode === 'async') {
    for (let a = start; a < end; a += slice) use(await file.slice(a, Math.min(a + slice, end)).arrayBuffer());
  } else if (mode === 'ahead') {
    let next = file.slice(start, Math.min(start + slice, end)).arrayBuffer();
    for (let a = start; a < end; a += slice) {
      const now = await next;
      const b = a + slice;
      next = b < end ? file.slice(b, Math.min(b + slice, end)).arrayBuffer() : null;
      use(now);
    }
  } else if (mode === 'stream') {
    const r = file.slice(start, end).stream().getReader();
    for (;;) { const { done, value } = await r.read(); if (done) break; use(value.buffer); }
  }
  postMessage([performance.now() - t0, touched]);
};`;
const url = URL.createObjectURL(new Blob([code], { type: 'text/javascript' }));
window.readBy = (workers, mode, slice, work) => new Promise((resolve) => {
  const file = document.querySelector('input').files[0];
  const t0 = performance.now();
  let left = workers;
  const each = [];
  for (let w = 0; w < workers; w++) {
    const worker = new Worker(url);
    const start = Math.floor(file.size * w / workers), end = Math.floor(file.size * (w + 1) / workers);
    worker.onmessage = (e) => {
      each.push(e.data[0]);
      worker.terminate();
      if (--left === 0) resolve([performance.now() - t0, file.size, ...each]);
    };
    worker.postMessage({ file, start, end, slice, mode, work });
  }
});
</script>"#;

#[tokio::main]
async fn main() {
    let Some(root) = bench::root() else {
        return;
    };
    let tasks = bench::env_usize("BENCH_TASKS", 45_000);
    let slice = bench::env_usize("BENCH_SLICE_MB", 8) << 20;
    let (_, rollouts) = gen_run::generate(
        &root.join("target/bench-data"),
        &format!("bench_{tasks}"),
        tasks,
        4,
        3600,
    );
    let page = tempfile::tempdir().unwrap();
    std::fs::write(page.path().join("index.html"), PAGE).unwrap();
    let server = static_server::StaticServer::start(page.path());
    let b = browser::Browser::start().await;
    b.client.goto(&server.url()).await.unwrap();
    b.choose_files("files", std::slice::from_ref(&rollouts))
        .await;
    println!(
        "{} MB, {} MiB slices",
        bench::file_mb(&rollouts).round(),
        slice >> 20
    );
    let work = bench::env_usize("BENCH_WORK_US_PER_MB", 0) as f64 / 1e3;
    for workers in [1, 2] {
        for mode in ["sync", "async", "ahead", "stream"] {
            let mut best = f64::MAX;
            let mut size = 0.0;
            for _ in 0..2 {
                let script = format!(
                    "const done = arguments[arguments.length - 1]; readBy({workers}, '{mode}', {slice}, {work}).then(done);"
                );
                let r: Vec<f64> = serde_json::from_value(b.eval_async(&script).await).unwrap();
                best = best.min(r[0]);
                size = r[1] / 1e6;
            }
            println!(
                "  {workers} worker(s), {mode:>6}: {:.2} s = {:.0} MB/s",
                best / 1e3,
                size / (best / 1e3)
            );
        }
    }
    b.close().await;
}
