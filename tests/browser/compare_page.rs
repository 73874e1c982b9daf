//! The app's Compare page in real headless Chromium: the example pair, a task's rollouts side by
//! side, "Export report" byte-identical to `gymscope compare --report`, hostile text shown as
//! text and never run, no request after load. Needs `dist/` and chromium: scripts/test.sh.

use crate::common;
use crate::common::assert_contains;
use crate::common::assert_success;
use crate::common::browser::start_app;
use crate::common::gen_run;

use common::browser::Browser;
use common::static_server::StaticServer;
use serde_json::json;
use std::path::{Path, PathBuf};

fn example(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("assets/example-compare")
        .join(name)
}

async fn open_compare_page() -> (StaticServer, Browser) {
    let (server, b) = start_app("#compare").await;
    b.wait_testid("compare-status", "Choose both runs").await;
    (server, b)
}

#[tokio::test(flavor = "multi_thread")]
async fn the_example_pair_shows_the_clis_numbers() {
    let (server, b) = open_compare_page().await;
    let loaded = server.served();
    b.click_testid("compare-example").await;
    b.wait_testid("compare-status", "Compared: 24 paired tasks")
        .await;
    // The headline is the report's (same core renderer): compare with the CLI's JSON.
    let out = common::run_gymscope(&[
        "compare",
        example("base.jsonl").to_str().unwrap(),
        example("step200.jsonl").to_str().unwrap(),
        "--format",
        "json",
    ]);
    assert!(out.status.success());
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let summary = b.wait_testid("compare-summary", "24").await;
    for key in ["improved", "regressed", "unchanged"] {
        let n = doc[key].as_u64().unwrap().to_string();
        assert!(summary.contains(&n), "{key} {n} not in {summary}");
    }
    assert_eq!(b.count("[data-testid=compare-task-row]").await, 24);
    // Worst regression first, as in the CLI's `tasks`.
    let first = b
        .eval("return document.querySelector('[data-testid=compare-task-row]').dataset.taskA")
        .await;
    assert_eq!(first, json!(doc["tasks"][0]["task_a"].to_string()));
    server.assert_none_since(loaded, "no request after load");
    b.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_task_opens_both_runs_rollouts_side_by_side() {
    let (_server, b) = open_compare_page().await;
    b.click_testid("compare-example").await;
    b.wait_testid("compare-status", "Compared").await;
    b.click("[data-testid=compare-task-row]").await;
    b.wait_testid("compare-side-a", "rollout 0").await;
    b.wait_testid("compare-side-b", "rollout 3").await;
    assert_eq!(
        b.count("[data-testid=compare-side-a] [data-testid=compare-rollout]")
            .await,
        4
    );
    assert_eq!(
        b.count("[data-testid=compare-side-b] [data-testid=compare-rollout]")
            .await,
        4
    );
    b.close().await;
}

/// A task of more rollouts than the page shows: the side says how many of how many.
#[tokio::test(flavor = "multi_thread")]
async fn a_task_of_many_rollouts_says_how_many_it_shows() {
    let (_server, b) = open_compare_page().await;
    let tmp = tempfile::tempdir().unwrap();
    let many = [1.0; 12];
    let few = [0.0; 3];
    let mut files = Vec::new();
    for (side, rewards) in [("a", &many[..]), ("b", &few[..])] {
        let run = common::compare_runs::run(
            &[common::compare_runs::task(0, "two plus two", rewards)],
            0.5,
            0,
        );
        files.push(common::compare_runs::write_run(tmp.path(), side, &run));
    }
    for (testid, (inputs, rollouts)) in ["compare-a", "compare-b"].into_iter().zip(&files) {
        b.choose_files(testid, &[PathBuf::from(inputs), PathBuf::from(rollouts)])
            .await;
    }
    b.wait_testid("compare-status", "Compared: 1").await;
    b.click("[data-testid=compare-task-row]").await;
    let side_a = b.wait_testid("compare-side-a", "rollout 0").await;
    assert_contains(
        &side_a,
        "The first 8 of this task's 12 rollouts in this run.",
    );
    assert_eq!(
        b.count("[data-testid=compare-side-a] [data-testid=compare-rollout]")
            .await,
        8
    );
    assert_eq!(
        b.count("[data-testid=compare-side-b] [data-testid=compare-sampled]")
            .await,
        0
    );
    b.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn export_report_is_the_clis_report() {
    let (_server, b) = open_compare_page().await;
    b.choose_files(
        "compare-a",
        &[
            example("base_materialized_inputs.jsonl"),
            example("base.jsonl"),
        ],
    )
    .await;
    b.choose_files(
        "compare-b",
        &[
            example("step200.jsonl"),
            example("step200_materialized_inputs.jsonl"),
        ],
    )
    .await;
    b.wait_testid("compare-status", "Compared: 24").await;
    b.click_testid("compare-export").await;
    b.wait_testid("compare-report-download", "base_vs_step200_compare.html")
        .await;
    let html = b.link_text("compare-report-download").await;
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("cli.html");
    let cli = common::run_gymscope(&[
        "compare",
        example("base.jsonl").to_str().unwrap(),
        example("step200.jsonl").to_str().unwrap(),
        "--report",
        out.to_str().unwrap(),
    ]);
    assert_success(&cli);
    assert!(
        html == std::fs::read_to_string(&out).unwrap(),
        "the app's report differs from the CLI's"
    );
    b.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn model_text_is_shown_and_never_run() {
    let (_server, b) = open_compare_page().await;
    let tmp = tempfile::tempdir().unwrap();
    let (inputs, rollouts) = gen_run::hostile_run();
    let mut files = Vec::new();
    for side in ["a", "b"] {
        let (i, r) = (
            tmp.path().join(format!("{side}_materialized_inputs.jsonl")),
            tmp.path().join(format!("{side}.jsonl")),
        );
        std::fs::write(&i, &inputs).unwrap();
        std::fs::write(&r, &rollouts).unwrap();
        files.push([i, r]);
    }
    b.choose_files("compare-a", &files[0]).await;
    b.choose_files("compare-b", &files[1]).await;
    b.wait_testid("compare-status", "Compared: 3").await;
    b.wait_testid("compare-tasks", "<img src=x onerror").await;
    b.click("[data-testid=compare-task-row]").await;
    b.wait_testid("compare-side-a", "rollout 0").await;
    b.eval(
        "document.querySelectorAll('[data-testid=compare-rollout]').forEach(d => d.open = true)",
    )
    .await;
    b.assert_no_script_ran().await;
    assert_eq!(
        b.count("main img, main script, [data-testid=compare-summary] a[href^=javascript]")
            .await,
        0
    );
    b.close().await;
}

/// Formats a p-value as the page does (`compare::text::p_value`: four decimals, trailing zeros
/// trimmed).
/// A p-value as the verdict table shows it: for people, two significant digits (issue 60).
fn shown_p(p: f64) -> String {
    gymscope::figures::p_value(Some(p))
}

#[tokio::test(flavor = "multi_thread")]
async fn three_runs_dropped_at_once_get_a_verdict_row_each() {
    let (_server, b) = open_compare_page().await;
    // A third run: the baseline's files again, under another name.
    let tmp = tempfile::tempdir().unwrap();
    let (again_inputs, again) = (
        tmp.path().join("again_materialized_inputs.jsonl"),
        tmp.path().join("again.jsonl"),
    );
    std::fs::copy(example("base_materialized_inputs.jsonl"), &again_inputs).unwrap();
    std::fs::copy(example("base.jsonl"), &again).unwrap();
    // No baseline dropdown before there are runs to choose from (issue 44, item 6).
    assert_eq!(b.count("[data-testid=compare-baseline]").await, 0);
    b.choose_files(
        "compare-runs",
        &[
            example("step200.jsonl"),
            example("base_materialized_inputs.jsonl"),
            again.clone(),
            example("base.jsonl"),
            again_inputs,
            example("step200_materialized_inputs.jsonl"),
        ],
    )
    .await;
    // Runs in name order: again.jsonl is the baseline until another is chosen.
    b.wait_testid("compare-status", "Compared: 24").await;
    b.eval(
        "const s = document.querySelector('[data-testid=compare-baseline]');
         s.value = '1'; s.dispatchEvent(new Event('change'));",
    )
    .await;
    b.wait_testid("compare-summary", "Baseline base.jsonl")
        .await;
    // The runs chosen are listed by name.
    b.wait_testid(
        "compare-runs-names",
        "3 runs: again.jsonl, base.jsonl, step200.jsonl",
    )
    .await;
    // The details follow the candidate picked (issue 44, item 4): the headline's B, and the
    // paired tasks' means.
    let headline = b
        .eval_str("return document.querySelector('#headline .runs').textContent")
        .await;
    assert!(headline.contains("B again.jsonl"), "{headline}");
    let means_b = || async {
        b.eval("return Array.from(document.querySelectorAll('[data-testid=compare-task-row]')).map(r => r.cells[4].textContent).join(' ')")
            .await
    };
    let before = means_b().await;
    b.eval(
        "const s = document.querySelector('[data-testid=compare-candidate]');
         s.value = '1'; s.dispatchEvent(new Event('change'));",
    )
    .await;
    b.wait_text("#headline .runs", "B step200.jsonl").await;
    assert_ne!(
        means_b().await,
        before,
        "the paired tasks are step200's now"
    );
    b.click("[data-testid=compare-task-row]").await;
    b.wait_text("[data-testid=compare-side-b] h3", "B · task")
        .await;
    let rows = b
        .eval(
            "return Array.from(document.querySelectorAll('#verdict-table tbody tr'))
               .filter(r => r.cells[1].textContent === 'reward')
               .map(r => [r.cells[0].textContent, r.cells[7].textContent, r.cells[8].textContent]);",
        )
        .await;
    // The CLI on the same three runs, the same baseline.
    let out = common::run_gymscope(&[
        "compare",
        example("base.jsonl").to_str().unwrap(),
        again.to_str().unwrap(),
        example("step200.jsonl").to_str().unwrap(),
        "--format",
        "json",
    ]);
    assert!(out.status.success());
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let want: Vec<serde_json::Value> = doc["candidates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            let r = &c["metrics"]["reward"];
            json!([
                c["name"],
                shown_p(r["p_holm"].as_f64().unwrap()),
                r["verdict"]
            ])
        })
        .collect();
    assert_eq!(
        rows,
        json!(want),
        "a row per candidate, as the CLI judges it"
    );
    assert_eq!(
        rows[0],
        json!(["again.jsonl", "1.0", "no detectable difference"])
    );
    // A flipped task of the first candidate (the one whose tasks the page lists) is one click
    // from its rollouts, on this page: with step200.jsonl the baseline, again.jsonl has flips.
    b.eval(
        "const s = document.querySelector('[data-testid=compare-baseline]');
         s.value = '2'; s.dispatchEvent(new Event('change'));",
    )
    .await;
    b.wait_testid("compare-summary", "Baseline step200.jsonl")
        .await;
    b.click("[data-testid=compare-summary] a.flip").await;
    b.wait_testid("compare-side-a", "rollout 0").await;
    assert_eq!(b.eval("return location.hash").await, json!("#compare"));
    b.close().await;
}

/// Only the reward has a good direction: a verifier field's or the tokens' change is drawn
/// neutral, not green or red (issue 44, item 5); the agents' swatches are whole squares, not
/// circles clipped into teardrops (item 13).
#[tokio::test(flavor = "multi_thread")]
async fn only_the_reward_is_coloured_better_or_worse() {
    let (_server, b) = open_compare_page().await;
    b.click_testid("compare-example").await;
    b.wait_testid("compare-status", "Compared").await;
    let coloured: Vec<(String, String, String)> = serde_json::from_value(
        b.eval(
            "return Array.from(document.querySelectorAll('#verdict-table tbody tr')).map(r => [r.cells[1].textContent, r.cells[4].querySelector('.delta').className, r.cells[8].textContent])",
        )
        .await,
    )
    .unwrap();
    assert!(
        coloured.iter().any(|(m, _, _)| m == "judge_score"),
        "{coloured:?}"
    );
    // Issue 60, item 8: and only with a verdict (the colour follows it).
    for (metric, class, verdict) in &coloured {
        let judged = class.contains("better") || class.contains("worse");
        let found = verdict != "no detectable difference";
        assert_eq!(
            judged,
            metric == "reward" && found,
            "{metric}: {class} ({verdict})"
        );
    }
    assert_eq!(
        b.count("[data-testid=compare-summary] .delta.up.worse, [data-testid=compare-summary] .delta.down.better").await,
        0
    );
    let swatch: Vec<String> = serde_json::from_value(
        b.eval(
            "const s = getComputedStyle(document.querySelector('[data-testid=compare-summary] svg.swatch')); return [s.borderRadius, s.width, s.height]",
        )
        .await,
    )
    .unwrap();
    assert_eq!(swatch, ["2px", "10px", "10px"]);
    b.close().await;
}
