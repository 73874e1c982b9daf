//! The Health page in real headless Chromium: the example run's rates coloured by their
//! thresholds (and said to have no flags), warn/bad rates in their colours, a rate cell becoming
//! the profile page's query (the bar, the task table, the URL hash; Clear clears it), badges in the rollout
//! view marking the offending items, hostile agent and tool names shown as text. Needs `dist/`
//! and chromium: scripts/test.sh.

use crate::common;
use crate::common::assert_contains;
use crate::common::browser::start_app;

use common::browser::Browser;
use common::static_server::StaticServer;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

/// A hostile agent name and tool name: shown as text, never run.
const EVIL_AGENT: &str = "<img src=x onerror=\"window.__pwned=1\">agent&a=b";
const EVIL_TOOL: &str = "</script><script>window.__pwned=2</script>";
const PLAIN: &str = "plain_agent";

fn msg(text: &str) -> Value {
    json!({"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": text}]})
}

fn call(name: &str, args: &str, id: &str) -> Value {
    json!({"type": "function_call", "name": name, "arguments": args, "call_id": id})
}

fn out(id: &str, output: &str) -> Value {
    json!({"type": "function_call_output", "call_id": id, "output": output})
}

/// Four tasks of two rollouts. `EVIL_AGENT`: task 0 rollout 1 has a tool error (1 of its 4
/// calls, > 20 %: bad), task 1 rollout 0 loops on `EVIL_TOOL` three times (1 of 4 rollouts: bad).
/// `PLAIN`: task 2's two rollouts are truncated (2 of 4: bad), task 3 rollout 0 has one error
/// output among 10 calls (10 %: warn).
fn run(dir: &Path) -> [PathBuf; 2] {
    let usage = json!({"input_tokens": 10, "output_tokens": 20, "total_tokens": 30});
    let rows: Vec<(i64, i64, &str, f64, Value)> = vec![
        (
            0,
            0,
            EVIL_AGENT,
            1.0,
            json!({"output": [msg("42")], "usage": usage}),
        ),
        (
            0,
            1,
            EVIL_AGENT,
            0.0,
            json!({"output": [call("lookup", "{}", "e"), out("e", "Error: <b>no such id</b>"), msg("sorry")], "usage": usage}),
        ),
        (
            1,
            0,
            EVIL_AGENT,
            0.0,
            json!({"output": [
            call(EVIL_TOOL, "{\"q\": 1}", "l1"), out("l1", "nothing"),
            call(EVIL_TOOL, "{ \"q\": 1 }", "l2"), out("l2", "nothing"),
            call(EVIL_TOOL, "{\"q\":1}", "l3"), out("l3", "nothing"),
            msg("giving up")], "usage": usage}),
        ),
        (
            1,
            1,
            EVIL_AGENT,
            1.0,
            json!({"output": [msg("done")], "usage": usage}),
        ),
        (
            2,
            0,
            PLAIN,
            0.0,
            json!({"status": "incomplete", "incomplete_details": {"reason": "max_output_tokens"},
            "output": [msg("first"), msg("and then the answer is")], "usage": usage}),
        ),
        (
            2,
            1,
            PLAIN,
            0.0,
            json!({"status": "incomplete", "incomplete_details": {"reason": "max_output_tokens"},
            "output": [msg("cut")], "usage": usage}),
        ),
        (
            3,
            0,
            PLAIN,
            1.0,
            json!({"output": (0..9).flat_map(|i| {
                let id = format!("c{i}");
                [call("lookup", &format!("{{\"id\": {i}}}"), &id), out(&id, "ok")]
            }).chain([call("lookup", "{\"id\": 99}", "c99"), out("c99", "Traceback (most recent call last):"), msg("ok")])
            .collect::<Vec<_>>(), "usage": usage}),
        ),
        (
            3,
            1,
            PLAIN,
            1.0,
            json!({"output": [msg("ok")], "usage": usage}),
        ),
    ];
    let (mut inputs, mut rollouts) = (String::new(), String::new());
    for (task, rollout, agent, reward, response) in rows {
        let params = json!({"input": [{"role": "user", "content": format!("task {task}")}]});
        let key = json!({"_ng_task_index": task, "_ng_rollout_index": rollout, "agent_ref": {"name": agent}});
        let mut input = key.clone();
        input["responses_create_params"] = params.clone();
        let mut row = key;
        row["responses_create_params"] = params;
        row["response"] = response;
        row["reward"] = json!(reward);
        inputs += &format!("{input}\n");
        rollouts += &format!("{row}\n");
    }
    let (i, r) = (
        dir.join("health_materialized_inputs.jsonl"),
        dir.join("health.jsonl"),
    );
    std::fs::write(&i, inputs).unwrap();
    std::fs::write(&r, rollouts).unwrap();
    [r, i]
}

/// The app at `hash` with the generated run loaded.
async fn open_run(hash: &str) -> (tempfile::TempDir, StaticServer, Browser) {
    let tmp = tempfile::tempdir().unwrap();
    let (server, b) = start_app(hash).await;
    b.choose_files("files", &run(tmp.path())).await;
    b.wait_testid("status", "Profile ready").await;
    (tmp, server, b)
}

/// Each rate cell of `agent`: rate → level.
async fn levels(b: &Browser, agent: &str) -> serde_json::Map<String, Value> {
    let script = format!(
        "const cells = Array.from(document.querySelectorAll('[data-testid=rate-cell]')).filter(c => c.dataset.agent === {});
         return Object.fromEntries(cells.map(c => [c.dataset.rate, c.dataset.level]));",
        json!(agent)
    );
    b.eval(&script)
        .await
        .as_object()
        .cloned()
        .unwrap_or_default()
}

/// The computed colour of a rate cell, and of the theme's variable `var`.
async fn colours(b: &Browser, agent: &str, rate: &str, var: &str) -> (String, String) {
    let script = format!(
        "const cell = Array.from(document.querySelectorAll('[data-testid=rate-cell][data-rate={rate}]')).find(c => c.dataset.agent === {});
         const probe = document.createElement('span');
         probe.style.color = 'var({var})';
         document.body.appendChild(probe);
         const want = getComputedStyle(probe).color;
         probe.remove();
         return [getComputedStyle(cell).color, want];",
        json!(agent)
    );
    serde_json::from_value(b.eval(&script).await).unwrap()
}

/// The rollout view's items marked with `flag`, as `index:kind` (prompt items first).
async fn marked(b: &Browser, flag: &str) -> Value {
    let script = format!(
        "return Array.from(document.querySelectorAll('[data-testid=rollout-view] [data-testid=rollout-item]')).map((e, i) => [i, e.dataset.kind, (e.dataset.flags || '').split(' ').includes('{flag}')]).filter(x => x[2]).map(x => x[0] + ':' + x[1])"
    );
    b.eval(&script).await
}

async fn row_keys(b: &Browser) -> Vec<String> {
    let v = b.eval("return Array.from(document.querySelectorAll('[data-testid=task-row]')).map(r => r.dataset.key)").await;
    serde_json::from_value(v).unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn the_example_run_shows_its_rates_coloured_and_its_flags() {
    let (_server, b) = start_app("").await;
    b.load_example().await;
    b.click_testid("tab-health").await;
    b.wait_testid("health-headline", "120 rollouts · 9 flagged")
        .await;
    // The math agent is clean; the tool agent's folded city names come back as tool errors;
    // the code agent runs out of tokens on hard tasks.
    let math = levels(&b, "math_with_judge_simple_agent").await;
    assert_eq!(math.len(), 7, "{math:?}");
    assert!(math.values().all(|v| v == "ok"), "{math:?}");
    let (cell, ok) = colours(&b, "math_with_judge_simple_agent", "truncated", "--ok").await;
    assert_eq!(cell, ok, "an ok rate is in the ok colour");
    let tool = levels(&b, "example_single_tool_call_simple_agent").await;
    assert_eq!(tool["tool_error_calls"], "warn", "{tool:?}");
    let code = levels(&b, "code_gen_simple_agent").await;
    assert_eq!(
        (code["truncated"].as_str(), code["empty_answer"].as_str()),
        (Some("warn"), Some("bad")),
        "{code:?}"
    );
    b.wait_testid_holding("health-rates", "3 of 40 rollouts", "warn > 2 %, bad > 10 %")
        .await;
    // The buckets per agent (code, tool, math): 7 never-pass, 12 sometimes, 11 always in all.
    let buckets = b
        .eval("return Array.from(document.querySelectorAll('[data-testid=health-bucket-row] td[data-bucket]')).map(c => c.dataset.bucket + '=' + c.textContent)")
        .await;
    assert_eq!(
        buckets,
        json!([
            "never_pass=6",
            "sometimes_pass=2",
            "always_pass=2",
            "no_reward=0",
            "never_pass=0",
            "sometimes_pass=4",
            "always_pass=6",
            "no_reward=0",
            "never_pass=1",
            "sometimes_pass=6",
            "always_pass=3",
            "no_reward=0"
        ])
    );
    b.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn rates_past_their_thresholds_are_coloured_warn_and_bad() {
    let (_tmp, _server, b) = open_run("").await;
    b.click_testid("tab-health").await;
    b.wait_testid("health-headline", "8 rollouts · 5 flagged")
        .await;
    // The verdict names rates as the table does (issue 44, item 11).
    let verdict = b
        .wait_testid("health-verdict", "above their warning threshold")
        .await;
    assert!(
        verdict.contains("tool errors") && !verdict.contains("tool_error_calls"),
        "{verdict}"
    );
    let evil = levels(&b, EVIL_AGENT).await;
    assert_eq!(evil["tool_error_calls"], "bad", "{evil:?}");
    assert_eq!(evil["loops"], "bad", "{evil:?}");
    assert_eq!(evil["truncated"], "ok", "{evil:?}");
    let plain = levels(&b, PLAIN).await;
    assert_eq!(plain["truncated"], "bad", "{plain:?}");
    assert_eq!(plain["tool_error_calls"], "warn", "{plain:?}");
    let (cell, bad) = colours(&b, PLAIN, "truncated", "--bad").await;
    assert_eq!(cell, bad);
    let (cell, warn) = colours(&b, PLAIN, "tool_error_calls", "--warn").await;
    assert_eq!(cell, warn);
    let (cell, ok) = colours(&b, PLAIN, "loops", "--ok").await;
    assert_eq!(cell, ok);
    assert_ne!(bad, warn);
    b.wait_testid("health-findings", "plain_agent: truncated 50.0 %")
        .await;
    b.close().await;
}

/// The query bar's expression, once it is `want` (the bar takes a rate cell's query).
async fn wait_query(b: &Browser, want: &str) {
    let t0 = std::time::Instant::now();
    loop {
        let v = b
            .eval("return document.querySelector('[data-testid=query-input]')?.value ?? null")
            .await;
        if v == json!(want) {
            return;
        }
        assert!(
            t0.elapsed().as_secs() < 20,
            "the query bar shows {v}, not {want:?}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}

async fn wait_rows(b: &Browser, want: &[&str]) {
    let t0 = std::time::Instant::now();
    while row_keys(b).await != want {
        assert!(
            t0.elapsed().as_secs() < 20,
            "rows {:?}, not {want:?}",
            row_keys(b).await
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_rate_cell_becomes_the_query_of_the_profile_page() {
    let (_tmp, _server, b) = open_run("").await;
    assert_eq!(row_keys(&b).await, ["0", "1", "2", "3"]);
    b.click_testid("tab-health").await;
    b.wait_testid("health-headline", "8 rollouts").await;
    // The evil agent's tool-error cell: task 0 only (task 3's error is the other agent's).
    b.eval(&format!(
        "Array.from(document.querySelectorAll('[data-testid=rate-cell][data-rate=tool_error_calls]')).find(c => c.dataset.agent === {}).querySelector('button').click()",
        json!(EVIL_AGENT)
    ))
    .await;
    // One filter model: the cell is written as a query of the language, in the query bar.
    let want = format!(
        "health.tool_error == true and agent == {}",
        gymscope::query::string_literal(EVIL_AGENT)
    );
    wait_query(&b, &want).await;
    assert_eq!(
        b.eval("return document.querySelector('nav .tab.active').dataset.testid")
            .await,
        json!("tab-profile")
    );
    wait_rows(&b, &["0"]).await;
    // The task's flags column, and its rollout list narrowed to the matching rollout.
    let flags = b.wait_testid("task-flags", "tool error").await;
    assert!(!flags.contains("loop"), "{flags}");
    b.click("[data-testid=task-row][data-key='0']").await;
    let rollouts = b
        .wait_testid_holding(
            "task-rollouts",
            "1 not matching the query hidden",
            "rollout 1",
        )
        .await;
    assert!(!rollouts.contains("rollout 0 "), "{rollouts}");
    // The query is in the URL hash (`q=`), so a reload keeps it; no filter of its own.
    let hash = b.eval("return location.hash").await;
    let hash = hash.as_str().unwrap();
    assert!(hash.contains("q=health%2Etool%5Ferror"), "{hash}");
    assert!(!hash.contains("flag="), "{hash}");
    b.click_testid("query-clear").await;
    wait_rows(&b, &["0", "1", "2", "3"]).await;
    assert!(!b
        .eval("return location.hash")
        .await
        .as_str()
        .unwrap()
        .contains("q="));
    b.close().await;
}

/// A link of the former filter (`#profile&flag=truncated`) still opens the same tasks, now as
/// the query it stands for.
#[tokio::test(flavor = "multi_thread")]
async fn an_old_health_filter_link_applies_as_a_query() {
    let (_tmp, _server, b) = open_run("#profile&flag=truncated").await;
    wait_query(&b, "health.truncated == true").await;
    wait_rows(&b, &["2"]).await;
    b.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn rollout_badges_mark_the_offending_items() {
    // The loop: every call of the repeated signature (prompt item 0, then output items 1..).
    let (_tmp, _server, b) = open_run("#profile&task=1&rollout=0").await;
    let badges = b.wait_testid("rollout-flags", "loop: ").await;
    assert_contains(&badges, &format!("loop: {EVIL_TOOL} ×3"));
    assert_eq!(
        marked(&b, "loop").await,
        json!(["1:function_call", "3:function_call", "5:function_call"])
    );
    // The error output.
    b.click("[data-testid=task-row][data-key='0']").await;
    b.click("[data-testid=task-rollouts] button:nth-of-type(2)")
        .await;
    b.wait_testid("rollout-flags", "tool error: 1 of 1 calls")
        .await;
    assert_eq!(
        marked(&b, "tool_error").await,
        json!(["2:function_call_output"])
    );
    // The cut-off reply: the last item of a truncated rollout.
    b.click("[data-testid=task-row][data-key='2']").await;
    b.click("[data-testid=task-rollouts] button:nth-of-type(1)")
        .await;
    b.wait_testid("rollout-flags", "truncated (max_output_tokens)")
        .await;
    assert_eq!(marked(&b, "truncated").await, json!(["2:message"]));
    b.wait_text_holding(
        "[data-testid=rollout-view] .offending",
        "truncated",
        "and then the answer is",
    )
    .await;
    // A healthy rollout says so.
    b.click("[data-testid=task-row][data-key='1']").await;
    b.click("[data-testid=task-rollouts] button:nth-of-type(2)")
        .await;
    b.wait_testid("rollout-flags", "no health flags").await;
    b.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn hostile_agent_and_tool_names_are_shown_as_text() {
    let (_tmp, _server, b) = open_run("").await;
    b.click_testid("tab-health").await;
    let page = b
        .wait_testid("health-page", "onerror=\"window.__pwned=1\"")
        .await;
    assert!(
        page.contains(EVIL_AGENT),
        "the agent's name as text: {page}"
    );
    b.wait_testid_holding("health-worst", "loop: ", &format!("loop: {EVIL_TOOL} ×3"))
        .await;
    // A worst rollout opens on the profile page; its badge names the tool as text too.
    b.eval("Array.from(document.querySelectorAll('[data-testid=health-open-rollout]')).find(e => e.textContent.includes('task 1 · rollout 0')).click()")
        .await;
    b.wait_testid_holding("rollout-flags", "loop: ", EVIL_TOOL)
        .await;
    b.assert_inert("main img, main script, main b").await;
    b.close().await;
}
