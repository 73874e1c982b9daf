//! The pivot builder page (`#pivot-build`) in real headless Chromium, against the CLI on the same
//! upstream example files: the counts, every file byte for byte, a pivot beside its rollout, the
//! verdict, hostile text, and the selection from a pivot file and its profile. Needs `dist/`
//! and chromium: scripts/test.sh.

use crate::common;
use crate::common::assert_contains;
use crate::common::browser::{start_app, start_app_sized};
use crate::common::run_gymscope_in as gymscope_in;

use common::browser::Browser;
use common::static_server::StaticServer;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::Output;

const AGENT: &str = "tasks_pivot_single_step_tool_use_with_argument_comparison_agent";

fn upstream(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/pivot-build/upstream")
        .join(name)
}

/// A copy of `source` in a fresh folder, and `build-pivot` run on it with `flags`.
fn cli_build(source: &Path, flags: &[&str]) -> (tempfile::TempDir, String, Output) {
    cli_build_as(source, AGENT, flags)
}

/// [`cli_build_as`], which must succeed.
fn cli_built(source: &Path, agent: &str, flags: &[&str]) -> (tempfile::TempDir, String) {
    let (dir, out, cli) = cli_build_as(source, agent, flags);
    assert!(cli.status.success(), "{cli:?}");
    (dir, out)
}

/// [`cli_build`] for the pivot agent `agent`.
fn cli_build_as(source: &Path, agent: &str, flags: &[&str]) -> (tempfile::TempDir, String, Output) {
    let dir = tempfile::tempdir().unwrap();
    let name = source.file_name().unwrap().to_str().unwrap().to_string();
    std::fs::copy(source, dir.path().join(&name)).unwrap();
    let out = format!("{}_pivots.jsonl", name.strip_suffix(".jsonl").unwrap());
    let mut args = vec![
        "build-pivot",
        "--input",
        &name,
        "--output",
        &out,
        "--agent-ref",
        agent,
        "--relative-paths",
    ];
    args.extend_from_slice(flags);
    let output = gymscope_in(dir.path(), &args);
    (dir, out, output)
}

async fn open_page() -> (StaticServer, Browser, usize) {
    let (server, b) = start_app("#pivot-build").await;
    b.wait_testid("pb-status", "Choose a rollouts file").await;
    b.set_text("pb-agent-ref", AGENT).await;
    let loaded = server.served();
    (server, b, loaded)
}

async fn attr(b: &Browser, testid: &str, name: &str) -> String {
    b.eval(&format!(
        "return document.querySelector('[data-testid={testid}]').getAttribute('{name}')"
    ))
    .await
    .as_str()
    .unwrap()
    .to_string()
}

async fn skip_counts(b: &Browser) -> Value {
    b.eval("const m = {}; document.querySelectorAll('[data-testid=pb-skip]').forEach(r => m[r.dataset.reason] = Number(r.dataset.count)); return m").await
}

#[tokio::test(flavor = "multi_thread")]
async fn counts_and_every_file_are_the_clis() {
    let source = upstream("finance_agent_v2.example_rollouts.jsonl");
    let (dir, out, cli) = cli_build(&source, &["--min-reward", "0.5"]);
    assert!(cli.status.success(), "{cli:?}");
    let (_server, b, _) = open_page().await;
    b.set_text("pb-min-reward", "0.5").await;
    b.choose_file("pb-source-file", &source).await;
    let stdout = String::from_utf8(cli.stdout).unwrap();
    let headline = b.wait_testid("pb-headline", "pivots: ").await;
    assert_eq!(headline, stdout.lines().next().unwrap());
    let metrics: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.path().join(out.replace(".jsonl", ".metrics.json"))).unwrap(),
    )
    .unwrap();
    assert_eq!(skip_counts(&b).await, metrics["skip_reasons"]);
    assert_eq!(metrics["skip_reasons"]["below_min_reward"], json!(2)); // the filter took effect
    let kept = b.wait_testid("pb-kept", "").await;
    assert_eq!(kept, metrics["counts"]["pivot_rows_written"].to_string());
    let stem = out.strip_suffix(".jsonl").unwrap();
    for (testid, name) in [
        ("pb-download-rows", out.clone()),
        ("pb-download-audit", format!("{stem}.skipped.jsonl")),
        ("pb-download-metrics", format!("{stem}.metrics.json")),
        ("pb-download-info", format!("{stem}.info.md")),
        ("pb-download-config", format!("{stem}.gym.yaml")),
    ] {
        assert_eq!(attr(&b, testid, "download").await, name);
        let want = std::fs::read_to_string(dir.path().join(&name)).unwrap();
        assert!(
            b.link_text(testid).await == want,
            "{name} differs from the CLI's"
        );
    }
    b.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn mixed_only_filters_every_group_and_says_nothing_was_written() {
    let source = upstream("workplace_assistant.example_rollouts.jsonl");
    let (dir, out, cli) = cli_build(&source, &["--source-groups", "mixed"]);
    assert_eq!(cli.status.code(), Some(1), "{cli:?}");
    let (_server, b, _) = open_page().await;
    b.click_testid("pb-group-all_success").await; // leaves mixed only
    b.choose_file("pb-source-file", &source).await;
    b.wait_testid("pb-empty", "No pivot written").await;
    let metrics: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.path().join(out.replace(".jsonl", ".metrics.json"))).unwrap(),
    )
    .unwrap();
    assert_eq!(skip_counts(&b).await, metrics["skip_reasons"]);
    assert_eq!(metrics["skip_reasons"]["source_group_filtered"], json!(4));
    let links = b.eval("return Array.from(document.querySelectorAll('[data-testid^=pb-download]')).map(a => a.dataset.testid)").await;
    assert_eq!(
        links,
        json!([
            "pb-download-audit",
            "pb-download-metrics",
            "pb-download-info"
        ])
    );
    b.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_pivot_opens_beside_its_rollout_with_prefix_and_action_marked() {
    let source = upstream("workplace_assistant.example_rollouts.jsonl");
    let (dir, out) = cli_built(&source, AGENT, &[]);
    let rows: Vec<Value> = std::fs::read_to_string(dir.path().join(&out))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let (_server, b, _) = open_page().await;
    b.choose_file("pb-source-file", &source).await;
    b.wait_testid("pb-headline", "pivots: 11 rows").await;
    // Open the last tool-call pivot by its line number.
    let (i, last) = rows
        .iter()
        .enumerate()
        .rfind(|(_, r)| r["expected_action"]["type"] == "function_call")
        .unwrap();
    assert!(i > 0, "a pivot other than the first");
    b.set_text("pb-open-line", &(i + 1).to_string()).await;
    b.click_testid("pb-open").await;
    let title = b
        .wait_testid(
            "pb-pair-title",
            last["pivot_info"]["pivot_id"].as_str().unwrap(),
        )
        .await;
    assert_contains(&title, &format!("source row {}", last["trajectory_id"]));
    let marks = b.eval("return Array.from(document.querySelectorAll('[data-testid=pb-source-item]')).map(e => e.dataset.mark)").await;
    let marks: Vec<&str> = crate::common::str_items(&marks);
    let at = last["pivot_info"]["source_item_index"].as_u64().unwrap() as usize;
    assert!(marks[..at].iter().all(|m| *m == "prefix"), "{marks:?}");
    assert_eq!(marks[at], "action", "{marks:?}");
    let prefix_items = b
        .eval("return document.querySelectorAll('[data-testid=pb-prefix-item]').length")
        .await;
    assert_eq!(prefix_items, json!(at));
    assert_eq!(
        prefix_items,
        json!(last["responses_create_params"]["input"]
            .as_array()
            .unwrap()
            .len())
    );
    let action = b.eval("return Array.from(document.querySelectorAll('[data-testid=pb-source-item][data-mark=action]')).map(e => e.textContent).join('\\n')").await;
    let expected = b.wait_testid("pb-expected", "").await;
    let name = last["expected_action"]["name"].as_str().unwrap();
    assert!(expected.contains(name), "{expected}");
    assert!(action.as_str().unwrap().contains(name), "{action}");
    // The list opens rows too: the first pivot.
    b.click("[data-testid=pb-pivot][data-line='1']").await;
    b.wait_testid(
        "pb-pair-title",
        rows[0]["pivot_info"]["pivot_id"].as_str().unwrap(),
    )
    .await;
    b.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn the_validators_verdict_is_shown_for_what_was_built() {
    let source = upstream("newton_bench.example_rollouts.jsonl");
    let (dir, out) = cli_built(&source, AGENT, &["--min-reward", "0.5"]);
    let check = gymscope_in(
        dir.path(),
        &["validate-pivot", "--path", &out, "--agent-ref", AGENT],
    );
    assert!(check.status.success(), "{check:?}");
    let (_server, b, _) = open_page().await;
    b.set_text("pb-min-reward", "0.5").await;
    b.choose_file("pb-source-file", &source).await;
    b.wait_testid("pb-verdict", "Valid: 15 rows pass every check.")
        .await;
    b.wait_testid_holding("pb-command", "", "--min-reward 0.5")
        .await;
    b.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn model_text_is_shown_never_run_and_nothing_is_fetched() {
    let tmp = tempfile::tempdir().unwrap();
    let hostile = crate::common::write_in(
        tmp.path(),
        "hostile.jsonl",
        r#"{"responses_create_params":{"input":[{"role":"user","content":"<img src=x onerror=window.__pwned=1>","type":"message"}],"tools":[{"type":"function","name":"lookup","description":"<b>bold</b>","parameters":{"type":"object","properties":{"q":{"type":"string"}}}}]},"response":{"output":[{"type":"function_call","name":"lookup","arguments":"{\"q\":\"<script>window.__pwned=2</script>\"}","call_id":"c1","id":"fc1","status":"completed"}]},"reward":1.0}
"#,
    );
    let (server, b, loaded) = open_page().await;
    b.choose_file("pb-source-file", &hostile).await;
    b.wait_testid("pb-headline", "pivots: 1 rows").await;
    b.click("[data-testid=pb-pivot][data-line='1']").await;
    b.wait_testid("pb-source", "<img src=x onerror=window.__pwned=1>")
        .await;
    b.wait_testid("pb-expected", "<script>window.__pwned=2</script>")
        .await;
    b.assert_inert(
        "[data-testid=pb-pair] img, [data-testid=pb-pair] script, [data-testid=pb-pivots] script",
    )
    .await;
    server.assert_none_since(loaded, "no request after load");
    b.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn the_selection_from_pivots_and_profile_is_select_pivots() {
    let source = upstream("workplace_assistant.example_rollouts.jsonl");
    let (dir, out) = cli_built(&source, AGENT, &[]);
    // A profile of the pivots' on-policy rollouts: mixed, all_success, all_failure, too few.
    let pivots = std::fs::read_to_string(dir.path().join(&out)).unwrap();
    let mut profile = String::new();
    for (i, line) in pivots.lines().enumerate() {
        let row: Value = serde_json::from_str(line).unwrap();
        let rewards: Vec<f64> = match i % 4 {
            0 => vec![1.0, 0.0, 1.0, 0.0, 0.0, 1.0, 0.0, 0.0],
            1 => vec![1.0; 8],
            2 => vec![0.0; 8],
            _ => vec![1.0, 0.0],
        };
        let infos: Vec<Value> = rewards.iter().map(|r| json!({"reward": r})).collect();
        let p = json!({"_ng_task_index": i, "rollout_infos": infos,
            "sample": {"pivot_info": {"pivot_id": row["pivot_info"]["pivot_id"]}}});
        profile.push_str(&format!("{p}\n"));
    }
    let profile_name = "prof_rollouts_reward_profiling.jsonl";
    std::fs::write(dir.path().join(profile_name), profile).unwrap();
    let selected = out.replace(".jsonl", ".selected.jsonl");
    let sel = gymscope_in(
        dir.path(),
        &[
            "select-pivot",
            "--pivots",
            &out,
            "--profile",
            profile_name,
            "--output",
            &selected,
        ],
    );
    assert!(sel.status.success(), "{sel:?}");
    let stdout = String::from_utf8(sel.stdout).unwrap();
    let table = &stdout[..stdout.find("selected pivots:").unwrap()];

    let (_server, b, _) = open_page().await;
    b.choose_file("pb-pivots-file", &dir.path().join(&out))
        .await;
    b.choose_file("pb-profile-file", &dir.path().join(profile_name))
        .await;
    b.click_testid("pb-select").await;
    b.wait_testid("pb-select-status", "3 pivots selected").await;
    let counts = b.wait_testid("pb-select-counts", "mixed").await;
    // The CLI's table as a table (no raw Markdown on the page), cell for cell, and each line
    // under it as written.
    let want_cells: Vec<String> = table
        .lines()
        .filter(|l| l.starts_with('|') && !l.starts_with("| ---"))
        .flat_map(|l| {
            l.trim()
                .trim_matches('|')
                .split(" | ")
                .map(|c| c.trim().to_string())
        })
        .collect();
    let cells = b
        .eval("return [...document.querySelectorAll('[data-testid=pb-select-counts] th, [data-testid=pb-select-counts] td')].map(e => e.textContent.trim())")
        .await;
    assert_eq!(cells, serde_json::json!(want_cells));
    assert!(!counts.contains("| ---"), "{counts}");
    for line in table
        .lines()
        .filter(|l| !l.starts_with('|') && !l.trim().is_empty())
    {
        assert!(counts.contains(line.trim()), "{line:?} in {counts}");
    }
    assert_eq!(attr(&b, "pb-download-selected", "download").await, selected);
    let want = std::fs::read_to_string(dir.path().join(&selected)).unwrap();
    assert!(
        b.link_text("pb-download-selected").await == want,
        "selected rows differ"
    );
    let selection = selected.replace(".selected.jsonl", ".selected.selection.json");
    let want = std::fs::read_to_string(dir.path().join(&selection)).unwrap();
    assert_eq!(b.link_text("pb-download-selection").await, want);
    b.close().await;
}

/// With a run loaded on the Profile page and no file chosen here, Build converts that run's
/// rollouts (the embedded example): the same pivots as the CLI on the same file.
#[tokio::test(flavor = "multi_thread")]
async fn the_run_loaded_on_the_profile_page_is_the_source() {
    // No agent typed: the name suggested from the source's file (issue 44, item 7).
    const SUGGESTED: &str = "example_single_step_tool_use_with_argument_comparison_agent";
    let source =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("assets/example-run/example_rollouts.jsonl");
    let (dir, out, cli) = cli_build_as(&source, SUGGESTED, &[]);
    assert!(cli.status.success(), "{cli:?}");
    let (_server, b) = start_app_sized("#profile", 1440, 900).await;
    b.click_testid("load-example").await;
    b.wait_testid("task-count", "task").await;
    b.click_testid("tab-pivot-build").await;
    b.wait_testid_holding(
        "pb-source-name",
        "example_rollouts.jsonl",
        "loaded on the Profile page",
    )
    .await;
    let field = b
        .eval("const i = document.querySelector('[data-testid=pb-agent-ref]'); return [i.value, i.placeholder]")
        .await;
    assert_eq!(field, serde_json::json!(["", SUGGESTED]));
    b.click_testid("pb-build").await;
    let headline = b.wait_testid("pb-headline", "pivots: ").await;
    let stdout = String::from_utf8(cli.stdout).unwrap();
    assert_eq!(headline, stdout.lines().next().unwrap());
    // Both skip counts are named, so neither reads as the other.
    assert!(
        headline.contains("source rows skipped;") && headline.contains("of them skipped"),
        "{headline}"
    );
    let rows = std::fs::read_to_string(dir.path().join(&out)).unwrap();
    assert!(!rows.is_empty());
    assert!(
        b.link_text("pb-download-rows").await == rows,
        "rows differ from the CLI's"
    );
    // A pivot opened from the list is brought into view, and the page never widens.
    b.click("[data-testid=pb-pivot]").await;
    b.wait_testid("pb-pair-title", "Pivot").await;
    tokio::time::sleep(std::time::Duration::from_millis(600)).await;
    let (top, overflow) = serde_json::from_value::<(f64, f64)>(
        b.eval(
            "return [document.querySelector('[data-testid=pb-pair]').getBoundingClientRect().top,
                     document.documentElement.scrollWidth - document.documentElement.clientWidth]",
        )
        .await,
    )
    .unwrap();
    // (Scrolled into view, its top may sit a subpixel above 0.)
    assert!((-1.0..450.0).contains(&top), "the pivot starts at {top} px");
    assert_eq!(overflow, 0.0, "the page scrolls sideways");
    b.close().await;
}
