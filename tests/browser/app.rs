//! The web app in real headless Chromium: fixture files chosen through the file inputs give the
//! same profile as upstream's expected files; downloads hold the same data; errors are shown.
//! Needs `dist/` (scripts/trunk.sh build --release), chromium and chromedriver: scripts/test.sh
//! provides all three.

use crate::common;
use crate::common::assert_contains;
use crate::common::assert_success;
use crate::common::run_on;

use common::browser::{dist, Browser};
use common::static_server::StaticServer;
use common::*;
use serde_json::Value;

const TABLE_JS: &str = r"
    const rows = Array.from(document.querySelectorAll('[data-testid=TESTID] tbody tr[data-key]'));
    return rows.map(tr => [tr.dataset.key,
        Object.fromEntries(Array.from(tr.querySelectorAll('td[data-key]')).map(td => [td.dataset.key, td.dataset.value]))]);
";

/// The shown table as (row key, {header: exact value}) pairs.
async fn table(b: &Browser, testid: &str) -> Vec<(String, serde_json::Map<String, Value>)> {
    let v = b.eval(&TABLE_JS.replace("TESTID", testid)).await;
    v.as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r[0].as_str().unwrap().to_string(),
                r[1].as_object().unwrap().clone(),
            )
        })
        .collect()
}

/// Every shown statistic equals the expected row's value; a blank cell means the key is absent.
fn assert_row_matches(shown: &serde_json::Map<String, Value>, expected: &Value, what: &str) {
    assert!(!shown.is_empty(), "{what}: no cells");
    for (key, cell) in shown {
        let cell = cell.as_str().unwrap();
        match expected.get(key) {
            None if key.contains('/') => {
                assert_eq!(cell, "", "{what} {key}: shown but absent upstream");
            }
            None => {} // a count the page adds (rollouts per agent); not in upstream's file
            Some(want) => {
                let got: Value =
                    serde_json::from_str(cell).unwrap_or_else(|_| panic!("{what} {key}: {cell:?}"));
                assert_json_eq(&got, want, &format!("{what} {key}"));
            }
        }
    }
    let stat_keys = expected
        .as_object()
        .unwrap()
        .keys()
        .filter(|k| k.contains('/'));
    for key in stat_keys {
        assert!(shown.contains_key(key), "{what}: {key} not shown");
    }
}

async fn check_fixture(b: &Browser, name: &str, first: bool) {
    let dir = fixtures_dir().join(name);
    let expected = dir.join("expected");
    let rollouts = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.to_str().unwrap().ends_with("rollouts.jsonl"))
        .unwrap();
    let stem = rollouts.file_stem().unwrap().to_str().unwrap().to_string();
    let inputs = dir.join(format!("{stem}_materialized_inputs.jsonl"));
    if first {
        // One picker at a time, into empty slots.
        b.choose_file("inputs-file", &inputs).await;
        b.choose_file("rollouts-file", &rollouts).await;
    } else {
        // Both at once: one picker after the other would first profile the new inputs with the
        // last run's rollouts, and the second choice would cancel that job (a fresh worker).
        b.choose_files("files", &[inputs, rollouts.clone()]).await;
    }
    b.wait_testid("status", "Profile ready").await;
    // The zone folds into one line naming the files, so the run starts on the first screen.
    b.wait_testid(
        "loaded-files",
        &format!("Loaded: {stem}_materialized_inputs.jsonl + {stem}.jsonl"),
    )
    .await;
    let folded = b
        .eval("return getComputedStyle(document.querySelector('[data-testid=inputs-file]').closest('.file-buttons')).display")
        .await;
    assert_eq!(folded, serde_json::json!("none"), "the pickers fold away");
    b.click_testid("change-files").await;
    b.wait_testid("rollouts-name", &format!("{stem}.jsonl"))
        .await;

    let stdout = std::fs::read_to_string(expected.join("stdout.txt")).unwrap();
    let summary = b.wait_testid("summary", "Reward profile completion").await;
    for line in stdout.lines().skip(1).take(2) {
        assert!(
            summary.contains(line),
            "{name}: summary {summary:?} lacks {line:?}"
        );
    }

    let want_rows: Vec<Value> =
        std::fs::read_to_string(expected.join(format!("{stem}_reward_profiling.jsonl")))
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
    let shown = table(b, "task-table").await;
    assert_eq!(shown.len(), want_rows.len(), "{name}: task rows");
    for ((task, cells), want) in shown.iter().zip(&want_rows) {
        assert_eq!(
            task,
            &want["_ng_task_index"].to_string(),
            "{name}: task order"
        );
        assert_row_matches(cells, want, &format!("{name} task {task}"));
    }

    let want_agents: Value = serde_json::from_str(
        &std::fs::read_to_string(expected.join(format!("{stem}_agent_metrics.json"))).unwrap(),
    )
    .unwrap();
    let shown = table(b, "agent-metrics").await;
    assert_eq!(
        shown.len(),
        want_agents.as_array().unwrap().len(),
        "{name}: agents"
    );
    for ((agent, cells), want) in shown.iter().zip(want_agents.as_array().unwrap()) {
        assert_eq!(agent, want["agent_ref"]["name"].as_str().unwrap());
        assert_row_matches(cells, want, &format!("{name} agent {agent}"));
    }

    // The downloads hold upstream's data (as data, and in fact byte for byte).
    let got = b.download_text("download-profiling").await;
    let want =
        std::fs::read_to_string(expected.join(format!("{stem}_reward_profiling.jsonl"))).unwrap();
    assert_profiles_eq(&got, &want, name);
    assert_eq!(got, want);
    let got = b.download_text("download-agent-metrics").await;
    let want =
        std::fs::read_to_string(expected.join(format!("{stem}_agent_metrics.json"))).unwrap();
    assert_json_eq(
        &serde_json::from_str(&got).unwrap(),
        &serde_json::from_str(&want).unwrap(),
        name,
    );
    assert_eq!(got, want, "{name}: agent metrics bytes");
    let got = b.download_text("download-repeat-level-metrics").await;
    let want = std::fs::read_to_string(expected.join(format!("{stem}_repeat_level_metrics.json")))
        .unwrap();
    assert_eq!(got, want, "{name}: repeat-level metrics bytes");
}

/// The app, loaded, with its worker ready; returns the request count at that point.
async fn open_app() -> (StaticServer, Browser, usize) {
    let server = StaticServer::start(&dist());
    let b = Browser::start().await;
    b.open_app(&server.url(), "").await; // the worker is started, and fetched, with the page
    b.wait_testid("status", "Choose both files").await;
    let loaded = server.served();
    (server, b, loaded)
}

#[tokio::test(flavor = "multi_thread")]
async fn the_embedded_example_is_one_click_away() {
    let (server, b, loaded) = open_app().await;
    b.load_example().await;
    b.wait_testid(
        "summary",
        "Reward profile completion: 120/120 rollout rows (100.00%)",
    )
    .await;
    b.wait_testid("task-count", "30 of 30 tasks").await;
    // A run worth a first look (issue 44, item 14): three agents on the plot's legend and in
    // the agent lines, and a binned mean drawn across the repeats.
    let agents = b
        .eval("return document.querySelectorAll('[data-testid=agent-line]').length")
        .await;
    assert_eq!(agents, 3);
    if let Ok(path) = std::env::var("GYMSCOPE_SCREENSHOT") {
        std::fs::write(path, b.client.screenshot().await.unwrap()).unwrap();
    }
    server.assert_none_since(loaded, "no request after load");
    b.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn web_app_profiles_fixtures_like_upstream() {
    let (server, b, loaded) = open_app().await;
    for (i, name) in ["blackjack", "cvdp", "ether0", "longmt_eval", "asr_with_pc"]
        .into_iter()
        .enumerate()
    {
        check_fixture(&b, name, i == 0).await;
    }
    // Everything ran locally: no request left the page after it loaded.
    server.assert_none_since(loaded, "requests");
    b.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn rows_without_index_keys_name_file_line_and_field() {
    // Upstream crashes on them; the page names the file, line and field.
    let (_server, b, _) = open_app().await;
    let dir = fixtures_dir().join("polymath");
    b.choose_file(
        "inputs-file",
        &dir.join("example_rollouts_materialized_inputs.jsonl"),
    )
    .await;
    b.choose_file("rollouts-file", &dir.join("example_rollouts.jsonl"))
        .await;
    let err = b.wait_testid("status", "is missing").await;
    assert_contains(
        &err,
        "'example_rollouts.jsonl' line 1: field `_ng_task_index` is missing",
    );
    b.close().await;
}

/// What NeMo Gym v0.7.0 added, in the page: the reward per repeat with its interval (the rows
/// of the CLI's `*_repeat_level_metrics.json`), the agents' across-repeats keys, and the reward
/// across repeats said in the summary.
#[tokio::test(flavor = "multi_thread")]
async fn the_page_shows_the_reward_per_repeat_and_across_repeats() {
    let tmp = tempfile::tempdir().unwrap();
    let (inputs, rollouts) = gen_run::generate_agentic(tmp.path(), "rollouts", 40, 4, 1500);
    let out = run_on("profile", &inputs, &rollouts, &[]);
    assert!(out.status.success());
    let read = |name: &str| -> Value {
        serde_json::from_str(&std::fs::read_to_string(tmp.path().join(name)).unwrap()).unwrap()
    };
    let repeats = read("rollouts_repeat_level_metrics.json");
    let repeats = repeats.as_array().unwrap();
    assert!(repeats.len() >= 8, "three agents, four repeats");

    let (_server, b, _) = open_app().await;
    b.choose_files("files", &[inputs, rollouts]).await;
    b.wait_testid("status", "Profile ready").await;
    let shown = table(&b, "repeat-metrics").await;
    assert_eq!(shown.len(), repeats.len());
    for ((agent, cells), want) in shown.iter().zip(repeats) {
        assert_eq!(agent, want["agent_ref"]["name"].as_str().unwrap());
        assert_eq!(cells["repeat"], want["_ng_rollout_index"].to_string());
        assert_eq!(cells["tasks"], want["sample_count"].to_string());
        for (shown_as, key) in [
            ("mean reward", "mean/reward"),
            ("95% CI low", "ci_low_95/reward"),
            ("95% CI high", "ci_high_95/reward"),
        ] {
            let got: f64 = cells[shown_as].as_str().unwrap().parse().unwrap();
            assert_eq!(got, want[key].as_f64().unwrap(), "{agent} {key}");
        }
        assert_eq!(cells["missing"], want["missing_count"].to_string());
    }
    let agents = read("rollouts_agent_metrics.json");
    for ((agent, cells), want) in table(&b, "agent-metrics")
        .await
        .iter()
        .zip(agents.as_array().unwrap())
    {
        assert_row_matches(cells, want, &format!("agent {agent}"));
        assert!(
            cells.contains_key("ci_low_95_across_repeats/mean/reward"),
            "{agent}"
        );
    }
    let notes = b.eval("return Array.from(document.querySelectorAll('[data-testid=repeat-note]')).map(p => p.textContent)").await;
    let notes: Vec<&str> = crate::common::str_items(&notes);
    assert!(
        notes
            .iter()
            .any(|n| n.starts_with("Mean reward across repeats (95 % CI): ")
                && n.contains(", 4 repeats)")),
        "{notes:?}"
    );
    b.close().await;
}

/// A run whose only rollout carries no number at all (no reward, no usage): the CLI profiles it
/// (the task row has no columns) and so must the page, not stall on its first line.
#[tokio::test(flavor = "multi_thread")]
async fn a_run_without_any_number_still_profiles() {
    let tmp = tempfile::tempdir().unwrap();
    let inputs = tmp.path().join("bare_materialized_inputs.jsonl");
    let rollouts = tmp.path().join("bare.jsonl");
    std::fs::write(
        &inputs,
        "{\"_ng_task_index\":0,\"_ng_rollout_index\":0,\"agent_ref\":{\"name\":\"a\"},\"responses_create_params\":{\"input\":[]}}\n",
    )
    .unwrap();
    std::fs::write(
        &rollouts,
        "{\"_ng_task_index\":0,\"_ng_rollout_index\":0,\"response\":{\"output\":[]}}\n",
    )
    .unwrap();
    let out = run_on("profile", &inputs, &rollouts, &[]);
    assert_success(&out);
    let (_server, b, _) = open_app().await;
    b.choose_files("files", &[inputs, rollouts]).await;
    b.wait_testid("status", "Profile ready").await;
    b.wait_testid(
        "summary",
        "Reward profile completion: 1/1 rollout rows (100.00%)",
    )
    .await;
    assert_eq!(table(&b, "task-table").await.len(), 1);
    b.wait_testid("no-plot", "Nothing to plot").await;
    // The rollout opens from its task.
    b.open_first_rollout("").await;
    b.close().await;
}
