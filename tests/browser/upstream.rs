//! NeMo Gym's evidence in the app, in real headless Chromium: upstream's verdict files
//! (`quality_summary.json`, `rollout_verdicts.jsonl`, recognized by content whatever their names)
//! dropped with the run or after it, shown on the Health page and as a rollout's badge, hostile
//! check ids as text; a row's `ng_trajectory` shown turn by turn with its model calls' tokens and
//! durations and its tool timings; output items' generated token counts. Needs `dist/` and
//! chromium: scripts/test.sh.

use crate::common;
use crate::common::assert_contains;
use crate::common::browser::start_app;

use common::browser::Browser;
use common::static_server::StaticServer;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

/// A check id that would run if it were HTML.
const EVIL_CHECK: &str = "<img src=x onerror=\"window.__pwned=3\">check&x";

fn msg(text: &str) -> Value {
    json!({"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": text}]})
}

/// upstream's simple_agent shape: a tool call answered with HTTP 422, then the answer.
fn trajectory() -> Value {
    let mref = json!({"type": "responses_api_models", "name": "policy"});
    let call = |id: &str, resp: &str, ms: f64, prompt: u64, completion: u64| {
        json!({"model_call_id": id, "started_at": 1.0, "completed_at": 2.0, "duration_ms": ms,
            "request": null, "response": null,
            "response_metadata": {"response_id": resp, "model_ref": mref, "model": "policy-7b", "dialect": "responses",
                "status_code": 200, "response_status": "completed", "finish_reason": null, "error_category": null,
                "latency_ttft_ms": null},
            "token_stats": {"prompt_tokens": prompt, "completion_tokens": completion, "reasoning_tokens": null,
                "total_tokens": prompt + completion, "cached_tokens": null}})
    };
    json!({"schema_version": "1.0", "task_id": "0", "rollout_id": "0-0",
        "invocations": [{"kind": "agent_invocation", "invocation_id": "root", "parent_invocation_id": null,
            "spawned_by_tool_call_id": null, "status": "completed", "duration_ms": null, "error_type": null,
            "model_calls": [], "conversation": []}],
        "turns": [
            {"invocation_id": "root", "task_id": "0", "rollout_id": "0-0", "turn_no": 1, "timestamp": 1.0,
             "question": [], "answer": [{"type": "function_call", "name": "lookup", "call_id": "call-1", "arguments": "{\"id\": 7}"}],
             "reasoning_content": null, "resolved": null, "step_count": 1,
             "model_calls": [{"model_call_id": null, "model_ref": mref, "response_id": "resp-tool"}]},
            {"invocation_id": "root", "task_id": "0", "rollout_id": "0-0", "turn_no": 2, "timestamp": 2.0,
             "question": [], "answer": [msg("the answer is 7")],
             "reasoning_content": null, "resolved": true, "step_count": 1,
             "model_calls": [{"model_call_id": "mc-2", "model_ref": null, "response_id": null}]}],
        "model_calls": [call("mc-1", "resp-tool", 800.0, 40, 12), call("mc-2", "resp-final", 1500.0, 61, 9)],
        "tool_calls": [{"kind": "tool_call", "invocation_id": "root", "tool_call_id": "call-1", "sandbox_id": null,
            "tool_name": "lookup", "started_at": 2.0, "completed_at": 2.1, "duration_ms": 95.0, "timing_source": "executor",
            "status": "failed", "error_type": "http_422", "output": "bad id"}],
        "gaps": []})
}

/// Two tasks of two rollouts: (0, 0) carries `ng_trajectory`; (0, 1)'s answer carries vLLM's
/// `generation_token_ids`; (1, 0) is truncated (a worst rollout). Returns the run's two files.
fn run(dir: &Path) -> Vec<PathBuf> {
    let usage = json!({"input_tokens": 10, "output_tokens": 20, "total_tokens": 30});
    let mut with_ids = msg("four");
    with_ids["generation_token_ids"] = json!([11, 12, 13, 14, 15]);
    with_ids["prompt_token_ids"] = json!([1, 2]);
    with_ids["generation_log_probs"] = json!([0.0, 0.0, 0.0, 0.0, 0.0]);
    let rows = [
        (
            0,
            0,
            json!({"output": [
            {"type": "function_call", "name": "lookup", "call_id": "call-1", "arguments": "{\"id\": 7}"},
            {"type": "function_call_output", "call_id": "call-1", "output": "bad id"},
            msg("the answer is 7")], "usage": usage}),
        ),
        (0, 1, json!({"output": [with_ids], "usage": usage})),
        (
            1,
            0,
            json!({"status": "incomplete", "incomplete_details": {"reason": "max_output_tokens"},
            "output": [msg("cut")], "usage": usage}),
        ),
        (1, 1, json!({"output": [msg("ok")], "usage": usage})),
    ];
    let (mut inputs, mut rollouts) = (String::new(), String::new());
    for (task, rollout, response) in rows {
        let key = json!({"_ng_task_index": task, "_ng_rollout_index": rollout, "agent_ref": {"name": "agent"}});
        let mut input = key.clone();
        input["responses_create_params"] =
            json!({"input": [{"role": "user", "content": format!("task {task}")}]});
        let mut row = input.clone();
        row["response"] = response;
        row["reward"] = json!(1.0);
        if (task, rollout) == (0, 0) {
            row["ng_trajectory"] = trajectory();
        }
        inputs += &format!("{input}\n");
        rollouts += &format!("{row}\n");
    }
    let (i, r) = (dir.join("inputs.jsonl"), dir.join("rollouts.jsonl"));
    std::fs::write(&i, inputs).unwrap();
    std::fs::write(&r, rollouts).unwrap();
    vec![r, i]
}

/// Upstream's two files under names that say nothing (recognition is by content).
fn verdict_files(dir: &Path) -> Vec<PathBuf> {
    let summary = json!({"run": {"ignored_checks": [], "artifacts": {"records": 5, "captures": 1, "coverage": {}},
        "verdicts": {"healthy": 1, "unhealthy": 2, "unobserved": 2},
        "issues": {EVIL_CHECK: 1, "record_unreadable": 1, "model_call_failed": 0},
        "stats": {}},
        "tasks": {"1": {"repeats": 2, "healthy": 0, "unhealthy": 1, "unobserved": 1, "flags": []}}});
    let verdicts = [
        json!({"_ng_task_index": 0, "_ng_rollout_index": 0, "rollout_id": "0-0", "verdict": "healthy", "findings": [], "unobserved": []}),
        json!({"_ng_task_index": 0, "_ng_rollout_index": 1, "rollout_id": "0-1", "verdict": "unobserved", "findings": [], "unobserved": ["agent_turn_hollow"]}),
        json!({"_ng_task_index": 1, "_ng_rollout_index": 0, "rollout_id": "1-0", "verdict": "unhealthy",
               "findings": [{"check": EVIL_CHECK, "detail": {"why": "<b>bold</b>"}}], "unobserved": []}),
        json!({"_ng_task_index": 1, "_ng_rollout_index": 1, "rollout_id": "1-1", "verdict": "unobserved", "findings": [], "unobserved": ["agent_turn_hollow"]}),
        json!({"_ng_task_index": "__unreadable_record__:input-0:line-9", "_ng_rollout_index": 0, "rollout_id": "u-0", "verdict": "unhealthy",
               "findings": [{"check": "record_unreadable", "detail": {}}], "unobserved": []}),
    ];
    let (s, v) = (dir.join("summary-a.json"), dir.join("verdicts-b.jsonl"));
    std::fs::write(&s, serde_json::to_string_pretty(&summary).unwrap()).unwrap();
    std::fs::write(
        &v,
        verdicts
            .iter()
            .map(|l| format!("{l}\n"))
            .collect::<String>(),
    )
    .unwrap();
    vec![s, v]
}

/// The app at `hash` with `files` chosen together.
async fn open_with(files: &[PathBuf], hash: &str) -> (StaticServer, Browser) {
    let (server, b) = start_app(hash).await;
    b.choose_files("files", files).await;
    b.wait_testid("status", "Profile ready").await;
    (server, b)
}

#[tokio::test(flavor = "multi_thread")]
async fn verdict_files_dropped_with_the_run_show_on_the_health_page() {
    let tmp = tempfile::tempdir().unwrap();
    let mut files = run(tmp.path());
    files.extend(verdict_files(tmp.path()));
    let (_server, b) = open_with(&files, "").await;
    let roles = b.wait_testid("file-roles", "rollout_verdicts.jsonl").await;
    assert_contains(&roles, "summary-a.json — NeMo Gym health summary");
    b.click_testid("tab-health").await;
    b.wait_testid_holding("health-upstream-verdicts", "unhealthy 2", "healthy 1")
        .await;
    // Findings per check id, the ones with none counted but not listed.
    let issues = b
        .wait_testid("health-upstream-issues", "record_unreadable")
        .await;
    assert!(!issues.contains("model_call_failed"), "{issues}");
    b.wait_testid("health-upstream", "checks without findings: 1")
        .await;
    let rollouts = b
        .wait_testid("health-upstream-rollouts", "5 rollouts")
        .await;
    assert_contains(&rollouts, "4 of the run's 4 rollouts have a verdict");
    // Upstream's unhealthy rollouts: the run's one opens; the unreadable record is named.
    let unhealthy = b
        .wait_testid(
            "health-upstream-unhealthy",
            "__unreadable_record__:input-0:line-9",
        )
        .await;
    assert_contains(&unhealthy, "task 1 · rollout 0 (1-0)");
    assert_eq!(b.count("[data-testid=health-upstream-open]").await, 1);
    // The worst rollouts carry upstream's verdict beside gymscope's reason.
    b.wait_testid_holding("health-worst-upstream", "unhealthy · ", EVIL_CHECK)
        .await;
    b.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn verdict_files_dropped_after_the_run_are_read_with_it() {
    let tmp = tempfile::tempdir().unwrap();
    let (_server, b) = open_with(&run(tmp.path()), "").await;
    b.click_testid("tab-health").await;
    b.wait_testid("health-headline", "4 rollouts").await;
    assert_eq!(
        b.eval("return document.querySelectorAll('[data-testid=health-upstream]').length")
            .await,
        json!(0),
        "nothing of upstream's without its files"
    );
    b.click_testid("tab-profile").await;
    b.choose_files("files", &verdict_files(tmp.path())).await;
    b.wait_testid("status", "Profile ready").await;
    b.click_testid("tab-health").await;
    b.wait_testid("health-upstream-rollouts", "4 of the run's 4")
        .await;
    b.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn hostile_check_ids_are_text_on_the_page_and_in_the_badge() {
    let tmp = tempfile::tempdir().unwrap();
    let mut files = run(tmp.path());
    files.extend(verdict_files(tmp.path()));
    let (_server, b) = open_with(&files, "").await;
    b.click_testid("tab-health").await;
    b.wait_testid_holding("health-upstream-issues", "onerror=", EVIL_CHECK)
        .await;
    // Open upstream's unhealthy rollout: its badge names the check as text.
    b.click_testid("health-upstream-open").await;
    b.wait_testid_holding(
        "rollout-upstream-verdict",
        "NeMo Gym: unhealthy",
        EVIL_CHECK,
    )
    .await;
    b.assert_inert("main img, main script").await;
    b.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_rollouts_badge_says_what_upstream_could_not_observe() {
    let tmp = tempfile::tempdir().unwrap();
    let mut files = run(tmp.path());
    files.extend(verdict_files(tmp.path()));
    let (_server, b) = open_with(&files, "#profile&task=0&rollout=1").await;
    b.wait_testid("rollout-upstream-verdict", "NeMo Gym: unobserved")
        .await;
    let title = b
        .eval("return document.querySelector('[data-testid=rollout-upstream-verdict]').title")
        .await;
    assert_eq!(title, json!("not observed: agent_turn_hollow"));
    b.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn ng_trajectory_turns_show_with_tokens_and_tool_timings() {
    let tmp = tempfile::tempdir().unwrap();
    let (_server, b) = open_with(&run(tmp.path()), "#profile&task=0&rollout=0").await;
    let turns = b
        .wait_testid("rollout-trajectory", "Turns (ng_trajectory)")
        .await;
    assert_eq!(
        b.eval("return Array.from(document.querySelectorAll('[data-testid=rollout-turn] .turn-head')).map(e => e.textContent)")
            .await,
        json!(["Turn 1 of 2 · 1 tool step so far", "Turn 2 of 2 · 1 tool step so far"])
    );
    // Per-call tokens and durations (the first call found by its response id).
    assert_eq!(
        b.eval("return Array.from(document.querySelectorAll('[data-testid=rollout-model-call]')).map(e => e.textContent)")
            .await,
        json!([
            "policy-7b · 40 prompt + 12 completion tokens · 800 ms",
            "policy-7b · 61 prompt + 9 completion tokens · 1.50 s"
        ])
    );
    // The tool call's timing beside it, its output under it.
    assert!(turns.contains("tool failed (http_422) · 95 ms"), "{turns}");
    assert!(turns.contains("bad id"), "{turns}");
    assert!(turns.contains("the answer is 7"), "{turns}");
    // response.output stays one click away, closed (no flag points into it).
    assert_eq!(
        b.eval("return document.querySelector('[data-testid=rollout-recorded]').open")
            .await,
        json!(false)
    );
    b.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn output_items_show_their_generated_token_count() {
    let tmp = tempfile::tempdir().unwrap();
    let (_server, b) = open_with(&run(tmp.path()), "#profile&task=0&rollout=1").await;
    b.wait_text_holding(
        "[data-testid=rollout-view] [data-testid=item-note]",
        "tokens generated",
        "5 tokens generated",
    )
    .await;
    // Without ng_trajectory the response is shown as recorded, with no turns.
    assert_eq!(
        b.count("[data-testid=rollout-trajectory], [data-testid=rollout-recorded]")
            .await,
        0
    );
    b.close().await;
}
