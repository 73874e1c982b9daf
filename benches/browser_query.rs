//! The app's text query over a large run in headless Chromium (the built app, dist/): a run of
//! about 1 GB (`gen_run::generate_agentic`, 52,000 tasks × 4 rollouts of 4.5 KB) loaded with one
//! worker (`?workers=1`), then text expressions typed into the query bar, each timed in the page
//! from Apply to the match count shown (the worker reads the whole rollouts file again for a
//! text predicate). Target (issue 43): at least 2× faster than before the prefilter skipped rows
//! unread (figures in docs/performance.md). Needs dist/ (`scripts/trunk.sh build --release`)
//! and chromium.
//!
//!   cargo bench --bench browser_query               (BENCH_TASKS=52000 by default)
//!   BENCH_WORKERS=2 cargo bench --bench browser_query
#![allow(clippy::unwrap_used)] // a benchmark stops at what must hold

use gymscope_testkit::bench;
use gymscope_testkit::browser;
use gymscope_testkit::gen_run;
use gymscope_testkit::static_server;
use std::path::Path;

const EXPRESSIONS: [&str; 4] = [
    r#"text ~ "zq9zq9zq9""#,
    r"output ~ /\bdeadline\b/i",
    r#"output ~ "proof proof proof""#,
    r#"reward == 0 and output ~ "proof proof""#,
];

#[tokio::main]
async fn main() {
    if bench::listing_only() {
        return;
    }
    let env = |k: &str, d: usize| {
        std::env::var(k)
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(d)
    };
    let (tasks, workers) = (env("BENCH_TASKS", 52_000), env("BENCH_WORKERS", 1));
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let (inputs, rollouts) = gen_run::generate_agentic(
        &root.join("target/bench-data"),
        &format!("agentic_{tasks}"),
        tasks,
        4,
        4500,
    );
    let mb = bench::file_mb(&rollouts);
    println!(
        "data: {} rollouts, rollouts file {mb:.0} MB; {workers} worker(s)",
        tasks * 4
    );
    let server = static_server::StaticServer::start(&browser::dist());
    let b = browser::Browser::start().await;
    b.open_app(&server.url(), &format!("?workers={workers}"))
        .await;
    b.choose_files("files", &[inputs, rollouts]).await;
    b.wait_text_for("[data-testid=status]", "Profile ready", 1800)
        .await;
    for expr in EXPRESSIONS {
        let mut best = f64::INFINITY;
        let mut count = String::new();
        for _ in 0..2 {
            b.click_testid("query-clear").await;
            let quoted = serde_json::json!(expr);
            // Timed in the page; polled from here (a long read outlasts WebDriver's script
            // timeout).
            b.eval(&format!(
                "window.__queryMs = null;
                 const i = document.querySelector('[data-testid=query-input]');
                 i.value = {quoted}; i.dispatchEvent(new Event('input'));
                 const t0 = performance.now();
                 document.querySelector('[data-testid=query-apply]').click();
                 const poll = () => {{
                   const c = document.querySelector('[data-testid=query-count]');
                   const e = document.querySelector('[data-testid=query-error]');
                   if (c || e) window.__queryMs = performance.now() - t0; else setTimeout(poll, 5);
                 }};
                 poll();
                 return 0"
            ))
            .await;
            let ms = loop {
                tokio::time::sleep(std::time::Duration::from_millis(100)).await;
                if let Some(ms) = b.eval("return window.__queryMs").await.as_f64() {
                    break ms;
                }
            };
            best = best.min(ms);
            count = b
                .eval("return document.querySelector('[data-testid=query-count]')?.textContent || document.querySelector('[data-testid=query-error]')?.textContent || ''")
                .await
                .as_str()
                .unwrap_or_default()
                .to_string();
        }
        println!(
            "  {expr:<44} {:>6.2} s  {:>5.0} MB/s   {count}",
            best / 1000.0,
            mb / (best / 1000.0)
        );
    }
    b.close().await;
}
