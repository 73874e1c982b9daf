//! The pivot validator page in real headless Chromium: a valid file shows upstream's summary,
//! an invalid one every error grouped by check with the row shown on click (escaped), and the
//! fixed copy downloads and validates. Needs `dist/` and chromium: scripts/test.sh.

use crate::common;
use crate::common::assert_success;

use common::browser::{dist, Browser};
use common::static_server::StaticServer;
use fantoccini::Locator;
use std::path::Path;

async fn click(b: &Browser, testid: &str) {
    b.click_testid(testid).await;
}

/// The pivot page, loaded, with its worker ready; returns the request count at that point.
async fn open_pivot_page() -> (StaticServer, Browser, usize) {
    let server = StaticServer::start(&dist());
    let b = Browser::start().await;
    b.open_app(&server.url(), "#pivot").await; // the worker is started, and fetched, with the page
    b.wait_testid("pivot-status", "Choose a pivot JSONL file")
        .await;
    let loaded = server.served();
    (server, b, loaded)
}

fn upstream_example() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/pivot/upstream/example.jsonl")
}

const AGENT: &str = "single_step_tool_use_with_argument_comparison_agent";

#[tokio::test(flavor = "multi_thread")]
async fn errors_are_grouped_by_check_and_a_click_marks_the_value() {
    let (_server, b, _) = open_pivot_page().await;
    b.choose_file("pivot-file", &upstream_example()).await;
    b.wait_testid("pivot-verdict", "Invalid: 10 errors in 5 of 5 rows")
        .await;
    b.wait_testid(
        "pivot-upstream",
        "validation failed: line 1: missing required key 'agent_ref'",
    )
    .await;
    let groups = b.eval("return Array.from(document.querySelectorAll('[data-testid=pivot-group]')).map(g => g.dataset.check)").await;
    assert_eq!(groups, serde_json::json!(["R2", "P2"]));
    // A group says what its check asks in words, with its name set apart (issue 44, item 10).
    let first = b
        .eval("return document.querySelector('[data-testid=pivot-group] summary').textContent")
        .await;
    let first = first.as_str().unwrap();
    assert!(
        first.contains(" — 5 errors") && first.ends_with("R2") && !first.contains('['),
        "{first}"
    );
    let findings = b
        .client
        .find_all(Locator::Css("[data-testid=pivot-finding]"))
        .await
        .unwrap();
    assert_eq!(findings.len(), 10);
    findings[5].click().await.unwrap(); // first P2 finding: metadata null on line 1
    b.wait_testid_holding("pivot-row", "\"metadata\"", "\"responses_create_params\"")
        .await;
    let marked = b.eval("return Array.from(document.querySelectorAll('[data-testid=pivot-row] mark')).map(m => m.textContent)").await;
    assert_eq!(marked, serde_json::json!(["null"]));
    b.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn the_fixed_copy_is_valid_and_its_summary_is_the_clis() {
    let (_server, b, _) = open_pivot_page().await;
    b.set_text("pivot-agent-ref", AGENT).await;
    click(&b, "pivot-fix").await;
    b.choose_file("pivot-file", &upstream_example()).await;
    b.wait_testid_holding(
        "pivot-fix-download",
        "5 rows, 5 changed",
        "example.fixed.jsonl",
    )
    .await;
    let fixed = b.link_text("pivot-fix-download").await;
    let tmp = tempfile::tempdir().unwrap();
    let fixed_path = tmp.path().join("example.fixed.jsonl");
    std::fs::write(&fixed_path, fixed).unwrap();
    let out = common::run_gymscope(&[
        "validate-pivot",
        "--path",
        fixed_path.to_str().unwrap(),
        "--agent-ref",
        AGENT,
    ]);
    assert_success(&out);
    // The valid file: upstream's summary, exactly as the CLI prints it.
    click(&b, "pivot-fix").await;
    b.choose_file("pivot-file", &fixed_path).await;
    let summary = b.wait_testid("pivot-summary", "rows: 5").await;
    let cli = String::from_utf8(out.stdout).unwrap();
    assert_eq!(summary.trim(), cli.trim());
    b.wait_testid("pivot-verdict", "Valid: 5 rows").await;
    b.close().await;
}

/// One error is "1 error", and a fixed copy with nothing in it says why instead of offering an
/// empty download (issue 44, item 10).
#[tokio::test(flavor = "multi_thread")]
async fn an_empty_fixed_copy_says_why() {
    let (_server, b, _) = open_pivot_page().await;
    click(&b, "pivot-fix").await;
    let tmp = tempfile::tempdir().unwrap();
    let broken = tmp.path().join("broken.jsonl");
    std::fs::write(&broken, "{\"responses_create_params\": \n").unwrap();
    b.choose_file("pivot-file", &broken).await;
    b.wait_testid("pivot-verdict", "Invalid: 1 error in 1 of 1 row.")
        .await;
    b.wait_testid(
        "pivot-fix-note",
        "The fixed copy is empty: the one row has an error a fix cannot repair",
    )
    .await;
    let links = b
        .eval("return document.querySelectorAll('[data-testid=pivot-fix-download]').length")
        .await;
    assert_eq!(links, 0, "no download of an empty file");
    b.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn model_text_is_shown_never_run_and_nothing_is_fetched() {
    let (server, b, loaded_requests) = open_pivot_page().await;
    let tmp = tempfile::tempdir().unwrap();
    let hostile = tmp.path().join("hostile.jsonl");
    std::fs::write(
        &hostile,
        r#"{"responses_create_params":{"input":[{"role":"user","content":"<img src=x onerror=window.__pwned=1>"}],"tools":[],"tool_choice":"<script>window.__pwned=2</script>"},"expected_action":{"type":"message","content":"x"},"agent_ref":{"type":"responses_api_agents","name":"single_step_tool_use_with_argument_comparison_agent"}}"#,
    )
    .unwrap();
    b.choose_file("pivot-file", &hostile).await;
    b.wait_testid(
        "pivot-upstream",
        "tool_choice should be 'auto', found '<script>",
    )
    .await;
    click(&b, "pivot-finding").await;
    b.wait_testid("pivot-row", "<img src=x onerror=window.__pwned=1>")
        .await;
    b.assert_no_script_ran().await;
    assert_eq!(
        b.count("[data-testid=pivot-row] img, [data-testid=pivot-row] script")
            .await,
        0
    );
    server.assert_none_since(loaded_requests, "no request after load");
    b.close().await;
}
