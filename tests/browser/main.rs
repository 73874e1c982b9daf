//! The built app (`dist/`) and the exported pages in real headless Chromium over WebDriver.
//! Needs `dist/` (scripts/trunk.sh build --release), chromium and chromedriver: scripts/test.sh
//! provides all three.
#![allow(clippy::unwrap_used)] // a test stops at what must hold

use gymscope_testkit as common;

mod app;
mod atif;
mod compare_page;
mod compare_report;
mod first_screen;
mod follow;
mod groups_and_rows;
mod health_page;
mod inspector;
mod pivot_build_page;
mod pivot_page;
mod plots;
mod pool;
mod pool_pivot;
mod query_bar;
mod report;
mod report_query;
mod round_three;
mod round_three_pages;
mod screenshots;
mod selection;
mod transcripts;
mod upstream;

/// The value of `script` once it is neither null nor false; stops the test after 20 s.
pub async fn wait_for(b: &common::browser::Browser, script: &str, what: &str) -> serde_json::Value {
    let t0 = std::time::Instant::now();
    loop {
        let v = b.eval(script).await;
        if !v.is_null() && v != serde_json::json!(false) {
            return v;
        }
        assert!(
            t0.elapsed() < std::time::Duration::from_secs(20),
            "timed out waiting for {what}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}

/// Opens the pass-rate band (its `<summary>`) and waits for its status line.
pub async fn open_pass_band(b: &common::browser::Browser) {
    b.eval("document.querySelector('[data-testid=pass-band] summary').click()")
        .await;
    b.wait_testid("band-status", "tasks kept").await;
}

/// On the pivot builder: chooses the pivots, the profile and the build's config, turns λ on and
/// selects; waits for the selection.
pub async fn select_with_lambda(
    b: &common::browser::Browser,
    pivots: &std::path::Path,
    profile: &std::path::Path,
    config: &std::path::Path,
) {
    b.choose_file("pb-pivots-file", pivots).await;
    b.choose_file("pb-profile-file", profile).await;
    b.choose_file("pb-config-file", config).await;
    b.eval("document.querySelector('[data-testid=pb-lambda-on]').click()")
        .await;
    b.click_testid("pb-select").await;
    b.wait_testid("pb-select-status", "selected").await;
}
