//! The profile page's query bar in headless Chromium: a field query filters the task table and
//! the scatter from the loaded columns, the hash restores it on reload, a text query reads the
//! file in the worker with the core's evaluation, a malformed one names its column, and hostile
//! text in an expression stays text.

use crate::common::browser::start_app;
use crate::common::browser::{dist, Browser};
use crate::common::static_server::StaticServer;
use serde_json::Value;
use std::path::{Path, PathBuf};

fn partial() -> [PathBuf; 2] {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/generated/partial");
    [
        dir.join("rollouts.jsonl"),
        dir.join("rollouts_materialized_inputs.jsonl"),
    ]
}

async fn open(server: &StaticServer, hash: &str) -> Browser {
    let b = Browser::start().await;
    b.open_app(&server.url(), hash).await;
    b.choose_files("files", &partial()).await;
    b.wait_testid("status", "Missing rollout results").await;
    b.click("[data-testid=partial-offer]").await;
    b.wait_testid("status", "Profile ready").await;
    b
}

async fn rows(b: &Browser) -> Vec<String> {
    let v = b.eval("return Array.from(document.querySelectorAll('[data-testid=task-row]')).map(r => r.dataset.key)").await;
    serde_json::from_value(v).unwrap()
}

async fn points(b: &Browser) -> u64 {
    let v = b
        .eval("return Number(document.querySelector('[data-testid=scatter]').dataset.points)")
        .await;
    v.as_u64().unwrap()
}

/// Types `expr` into the query bar and applies it.
pub async fn query(b: &Browser, expr: &str) {
    let script = format!(
        "const i = document.querySelector('[data-testid=query-input]');
         i.value = {};
         i.dispatchEvent(new Event('input', {{bubbles: true}}));
         document.querySelector('[data-testid=query-apply]').click();",
        serde_json::to_string(expr).unwrap()
    );
    b.eval(&script).await;
}

/// The rollout rows of the fixture, read with serde (the reference).
fn fixture_rows() -> Vec<Value> {
    std::fs::read_to_string(&partial()[0])
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_field_query_filters_the_table_and_the_scatter_and_survives_a_reload() {
    let server = StaticServer::start(&dist());
    let b = open(&server, "").await;
    let all = points(&b).await;
    assert_eq!(all, 13);
    query(&b, "task == 5 or task == 12").await;
    let want = fixture_rows()
        .iter()
        .filter(|r| r["_ng_task_index"] == 5 || r["_ng_task_index"] == 12)
        .count();
    b.wait_testid(
        "query-count",
        &format!("{want} of 13 rollouts match · 2 tasks"),
    )
    .await;
    assert_eq!(rows(&b).await, ["5", "12"]);
    assert_eq!(points(&b).await, want as u64);
    // The hash carries it: a reload with the same files lands filtered.
    let hash = b.eval("return location.hash").await;
    let hash = hash.as_str().unwrap().to_string();
    assert!(hash.contains("q=task%20%3D%3D%205"), "{hash}");
    b.reload_at(&format!("{}{hash}", server.url())).await;
    b.choose_files("files", &partial()).await;
    b.wait_testid("status", "Missing rollout results").await;
    b.click("[data-testid=partial-offer]").await;
    b.wait_testid("query-count", "2 tasks").await;
    assert_eq!(rows(&b).await, ["5", "12"]);
    // Clearing shows everything again.
    b.click("[data-testid=query-clear]").await;
    b.wait_testid("task-count", "5 of 5 tasks").await;
    assert_eq!(points(&b).await, all);
    b.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_text_query_reads_the_file_in_the_worker() {
    let server = StaticServer::start(&dist());
    let b = open(&server, "").await;
    let rows_with = |word: &str| -> Vec<(i64, i64)> {
        fixture_rows()
            .iter()
            .filter(|r| {
                r["responses_create_params"]["input"][0]["content"]
                    .as_str()
                    .unwrap()
                    .contains(word)
            })
            .map(|r| {
                (
                    r["_ng_task_index"].as_i64().unwrap(),
                    r["_ng_rollout_index"].as_i64().unwrap(),
                )
            })
            .collect()
    };
    let want = rows_with("gamma");
    assert!(!want.is_empty() && want.len() < 13);
    let tasks: std::collections::BTreeSet<i64> = want.iter().map(|k| k.0).collect();
    query(&b, r#"prompt ~ "gamma" and reward >= 0"#).await;
    b.wait_testid(
        "query-count",
        &format!(
            "{} of 13 rollouts match · {} tasks",
            want.len(),
            tasks.len()
        ),
    )
    .await;
    assert_eq!(points(&b).await, want.len() as u64);
    b.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_malformed_or_hostile_query_is_said_and_stays_text() {
    let server = StaticServer::start(&dist());
    let b = open(&server, "").await;
    query(&b, "reward >> 1").await;
    b.wait_testid("query-error", "column 9: expected a value after `>`")
        .await;
    assert_eq!(rows(&b).await.len(), 5, "a malformed query filters nothing");
    let evil = r#"agent == "<img src=x onerror=window.__pwned=1>" or prompt ~ "<script>window.__pwned=2</script>""#;
    query(&b, evil).await;
    b.wait_testid("query-count", "0 of 13 rollouts match").await;
    let pwned = b.eval("return [window.__pwned === undefined, document.querySelectorAll('.query-bar img, .query-bar script').length]").await;
    assert_eq!(pwned, serde_json::json!([true, 0]));
    query(&b, "nope >").await;
    b.wait_testid_holding("query-error", "column", "expected a value after `>`")
        .await;
    b.close().await;
}

/// A slow regex over a large run (#42: `(?i)\w{60}c` reads about 1 MB a second) can be
/// cancelled: the bar says so at once, and the run stays loaded for the next query.
#[tokio::test(flavor = "multi_thread")]
async fn a_slow_text_query_can_be_cancelled_and_the_run_stays() {
    let tmp = tempfile::tempdir().unwrap();
    let (inputs, rollouts) = (
        tmp.path().join("slow_materialized_inputs.jsonl"),
        tmp.path().join("slow.jsonl"),
    );
    let (mut i, mut r) = (String::new(), String::new());
    let answer = "a".repeat(900);
    for t in 0..20_000 {
        i.push_str(&format!(
            r#"{{"_ng_task_index":{t},"_ng_rollout_index":0,"agent_ref":{{"name":"a"}}}}"#
        ));
        i.push('\n');
        r.push_str(&format!(
            r#"{{"_ng_task_index":{t},"_ng_rollout_index":0,"agent_ref":{{"name":"a"}},"reward":1.0,"response":{{"output":[{{"type":"message","role":"assistant","content":[{{"type":"output_text","text":"{answer} b"}}]}}]}}}}"#
        ));
        r.push('\n');
    }
    std::fs::write(&inputs, i).unwrap();
    std::fs::write(&rollouts, r).unwrap();
    let (_server, b) = start_app("").await;
    b.choose_files("files", &[inputs, rollouts]).await;
    b.wait_testid("status", "Profile ready").await;
    query(&b, r"output ~ /(?i)\w{60}c/").await;
    b.wait_testid("query-status", "Cancel").await;
    b.click("[data-testid=query-cancel]").await;
    b.wait_testid("query-status", "Cancelled.").await;
    // The run is still there: a field query answers from the loaded columns.
    query(&b, "task < 10").await;
    b.wait_testid("query-count", "10 of 20,000 rollouts match")
        .await;
    b.close().await;
}
