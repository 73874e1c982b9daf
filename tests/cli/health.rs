//! `gymscope health` on NeMo Gym's example runs (expectations read off the fixture rows), its
//! JSON schema, upstream's verdict files, `--fail-on bad`, `--write`, and the report's Health
//! section with hostile text.

use crate::common;
use crate::common::assert_contains;
use crate::common::assert_exit;
use crate::common::assert_success;
use crate::common::gen_run;
use crate::common::run_gymscope as gymscope;
use crate::common::run_on;

use serde_json::Value;
use std::path::{Path, PathBuf};

fn fixture(name: &str) -> (PathBuf, PathBuf) {
    let dir = common::fixtures_dir().join(name);
    let stem = if dir.join("example_rollouts.jsonl").exists() {
        "example_rollouts"
    } else {
        "example_math_rollouts"
    };
    (
        dir.join(format!("{stem}.jsonl")),
        dir.join(format!("{stem}_materialized_inputs.jsonl")),
    )
}

fn json(args: &[&str]) -> Value {
    let out = gymscope(args);
    assert_success(&out);
    serde_json::from_slice(&out.stdout).unwrap()
}

fn health_of(name: &str) -> Value {
    let (rollouts, inputs) = fixture(name);
    json(&[
        "health",
        rollouts.to_str().unwrap(),
        "--inputs",
        inputs.to_str().unwrap(),
        "--format",
        "json",
    ])
}

/// Per example: agent, rollouts, truncated, empty_answer, ended_on_tool, loops, tool_calls,
/// malformed_arguments, tool_error_calls, usage missing, and never/sometimes/always-pass tasks.
/// Rows without `agent_ref` take their materialized input's agent (as the collector merges it).
/// Read off the rows: circle_click's five rollouts end on the click's output with no message;
/// Claude Code's Bash answered `Exit code 1` / `Exit code 2` twice of 7 calls; Hermes's sandbox
/// answered `{"status": "error"}` twice of 3 and every usage is all zeros.
#[allow(clippy::type_complexity)]
const EXPECTED: &[(&str, Option<&str>, [u64; 8], [u64; 3])] = &[
    (
        "asr_with_pc",
        Some("asr_with_pc_simple_agent"),
        [5, 0, 0, 0, 0, 0, 0, 0],
        [5, 0, 0],
    ),
    (
        "blackjack",
        Some("blackjack_gymnasium_agent"),
        [5, 0, 0, 0, 0, 0, 0, 0],
        [0, 1, 0],
    ),
    (
        "circle_click",
        Some("circle_click_simple_agent"),
        [5, 0, 5, 5, 0, 5, 0, 0],
        [3, 0, 2],
    ),
    (
        "circle_count",
        Some("circle_count_simple_agent"),
        [5, 0, 0, 0, 0, 0, 0, 0],
        [2, 0, 3],
    ),
    (
        "claude_code_agent",
        Some("math_with_judge_claude_code_agent"),
        [5, 0, 0, 0, 0, 7, 0, 2],
        [4, 0, 1],
    ),
    (
        "cvdp",
        Some("cvdp_agent"),
        [5, 0, 0, 0, 0, 0, 0, 0],
        [5, 0, 0],
    ),
    (
        "ether0",
        Some("ether0_simple_agent"),
        [5, 0, 0, 0, 0, 0, 0, 0],
        [1, 0, 4],
    ),
    (
        "example_multi_turn_gymnasium",
        Some("example_multi_turn_gymnasium_agent"),
        [5, 0, 0, 0, 0, 0, 0, 0],
        [0, 0, 5],
    ),
    (
        "grl_sokoban",
        Some("grl_sokoban_gymnasium_agent"),
        [5, 0, 0, 0, 0, 0, 0, 0],
        [4, 0, 1],
    ),
    (
        "grl_tetris",
        Some("grl_tetris_gymnasium_agent"),
        [5, 0, 0, 0, 0, 0, 0, 0],
        [3, 0, 2],
    ),
    (
        "hermes_agent",
        Some("math_with_judge_hermes_agent"),
        [5, 0, 0, 0, 0, 3, 0, 2],
        [4, 0, 1],
    ),
    (
        "litmus_agent",
        Some("litmus_agent_agent"),
        [5, 0, 0, 0, 0, 0, 0, 0],
        [1, 0, 4],
    ),
    (
        "longmt_eval",
        Some("longmt_pg19_agent"),
        [5, 0, 0, 0, 0, 0, 0, 0],
        [5, 0, 0],
    ),
    (
        "proof_genselect",
        Some("proof_genselect_simple_agent"),
        [5, 0, 0, 0, 0, 0, 0, 0],
        [2, 0, 3],
    ),
    (
        "proof_judge",
        Some("proof_simple_agent"),
        [5, 0, 0, 0, 0, 0, 0, 0],
        [2, 0, 3],
    ),
    (
        "proof_verification",
        Some("proof_verification_simple_agent"),
        [5, 0, 0, 0, 0, 0, 0, 0],
        [3, 0, 2],
    ),
];

#[test]
fn every_example_run_gives_the_signals_read_off_its_rows() {
    for (name, agent, counts, buckets) in EXPECTED {
        let h = health_of(name);
        let agents = h["agents"].as_array().unwrap();
        assert_eq!(agents.len(), 1, "{name}");
        let a = &agents[0];
        assert_eq!(a["agent"].as_str(), *agent, "{name}");
        let keys = [
            "rollouts",
            "truncated",
            "empty_answer",
            "ended_on_tool",
            "loops",
            "tool_calls",
            "malformed_arguments",
            "tool_error_calls",
        ];
        let got: Vec<u64> = keys.iter().map(|k| a[k].as_u64().unwrap()).collect();
        assert_eq!(got, counts, "{name}: {keys:?}");
        let o = &a["outcomes"];
        let got = [&o["never_pass"], &o["sometimes_pass"], &o["always_pass"]]
            .map(|v| v.as_u64().unwrap());
        assert_eq!(got, *buckets, "{name}: never/sometimes/always");
        assert_eq!(
            h["tasks"]["missing"], 0,
            "{name}: every task has its rollout"
        );
        assert_eq!(h["rollouts"]["missing"], 0, "{name}");
        assert_eq!(h["tasks"]["coverage"], 1.0, "{name}");
        assert_eq!(h["rollouts"]["duplicates"], 0, "{name}");
    }
}

#[test]
fn example_details_turns_tokens_and_pass_metrics() {
    let h = health_of("claude_code_agent");
    let a = &h["agents"][0];
    // Three rollouts call Bash once (call, output, answer: 2 turns), two twice (3 turns).
    assert_eq!(a["turns"]["mean"], 2.4);
    assert_eq!(a["turns"]["max"], 3.0);
    assert_eq!(a["rollouts_with_tool_errors"], 2);
    assert_eq!(
        a["tokens"]["input"],
        6500.0 + 8454.0 + 9294.0 + 39998.0 + 53002.0
    );
    let h = health_of("hermes_agent");
    let t = &h["agents"][0]["tokens"];
    assert_eq!(
        (t["known"].as_u64(), t["missing"].as_u64()),
        (Some(0), Some(5)),
        "zeros are unknown"
    );
    // blackjack: one task, rewards -1, 1, -1, 1, 1.
    let o = &health_of("blackjack")["tasks"];
    assert_eq!(o["pass_at_1"], 0.6);
    assert_eq!(
        (o["pass_at_k"].as_f64(), o["consistency"].as_f64()),
        (Some(1.0), Some(0.0))
    );
    assert!((o["retry_value"].as_f64().unwrap() - 0.4).abs() < 1e-12);
    // proof_verification: rewards 0, 1, 1, 0, 0.5 — at 0.5 the 0.5 task passes.
    let (rollouts, _) = fixture("proof_verification");
    let h = json(&[
        "health",
        rollouts.to_str().unwrap(),
        "--format",
        "json",
        "--pass-threshold",
        "0.5",
    ]);
    assert_eq!(
        (
            h["tasks"]["never_pass"].as_u64(),
            h["tasks"]["always_pass"].as_u64()
        ),
        (Some(2), Some(3))
    );
    assert_eq!(h["pass_threshold"], 0.5);
}

#[test]
fn json_schema_has_the_documented_fields() {
    let (rollouts, _) = fixture("hermes_agent");
    let h = json(&["health", rollouts.to_str().unwrap(), "--format", "json"]);
    for k in [
        "rollouts_file",
        "pass_threshold",
        "thresholds",
        "rollouts",
        "agents",
        "tasks",
        "rates",
        "consistently_unhealthy_tasks",
        "consistently_unhealthy",
        "worst",
        "trajectory",
        "upstream",
    ] {
        assert!(h.get(k).is_some(), "top-level {k}");
    }
    let a = &h["agents"][0];
    for k in [
        "agent",
        "rollouts",
        "truncated",
        "truncated_by_reason",
        "empty_answer",
        "empty_output",
        "ended_on_tool",
        "loops",
        "rollouts_with_tool_errors",
        "rollouts_with_dangling_calls",
        "tool_calls",
        "malformed_arguments",
        "tool_error_calls",
        "dangling_calls",
        "turns",
        "tool_calls_per_rollout",
        "tokens",
        "rates",
        "outcomes",
        "cross_tab",
    ] {
        assert!(a.get(k).is_some(), "agents[].{k}");
    }
    for k in [
        "never_pass",
        "sometimes_pass",
        "always_pass",
        "no_reward",
        "missing",
        "partial",
        "pass_at_1",
        "pass_at_k",
        "consistency",
        "coverage",
        "retry_value",
        "tasks",
    ] {
        assert!(h["tasks"].get(k).is_some(), "tasks.{k}");
    }
    // Without --inputs what was expected is unknown: null, not 0.
    assert!(h["tasks"]["missing"].is_null() && h["tasks"]["coverage"].is_null());
    assert!(h["rollouts"]["missing"].is_null() && h["rollouts"]["failures"].is_null());
    assert!(h["upstream"].is_null() && h["trajectory"].is_null());
    let rate = &a["rates"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["rate"] == "usage_missing")
        .unwrap();
    assert_eq!(
        (
            rate["count"].as_u64(),
            rate["of"].as_u64(),
            rate["level"].as_str()
        ),
        (Some(5), Some(5), Some("bad"))
    );
    let t = h["thresholds"].as_array().unwrap();
    assert_eq!(
        t[0],
        serde_json::json!({"rate": "truncated", "of": "rollouts", "warn": 0.02, "bad": 0.1})
    );
    assert_eq!(a["cross_tab"]["tool_error"]["never_pass"], 1);
}

#[test]
fn fail_on_bad_exits_3_and_findings_alone_never_change_the_exit_code() {
    let (rollouts, _) = fixture("hermes_agent");
    let r = rollouts.to_str().unwrap();
    let out = gymscope(&["health", r]);
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains(
            "BAD: math_with_judge_hermes_agent: tool errors 66.7 % (2 of 3 tool calls) > 20 %"
        ),
        "{text}"
    );
    assert!(
        text.contains("warn > 5 %, bad > 20 %"),
        "thresholds shown: {text}"
    );
    assert_eq!(
        gymscope(&["health", r, "--fail-on", "bad"]).status.code(),
        Some(3)
    );
    let (clean, _) = fixture("blackjack");
    assert_eq!(
        gymscope(&["health", clean.to_str().unwrap(), "--fail-on", "bad"])
            .status
            .code(),
        Some(0)
    );
    let out = gymscope(&["health", fixture("polymath").0.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8(out.stderr).unwrap();
    assert_contains(
        &err,
        "example_rollouts.jsonl' line 1: field `_ng_task_index` is missing",
    );
}

fn copy_run(name: &str, dir: &Path) -> (PathBuf, PathBuf) {
    let (rollouts, inputs) = fixture(name);
    let (r, i) = (
        dir.join("run.jsonl"),
        dir.join("run_materialized_inputs.jsonl"),
    );
    std::fs::copy(rollouts, &r).unwrap();
    std::fs::copy(inputs, &i).unwrap();
    (r, i)
}

#[test]
fn write_names_the_file_after_the_rollouts_and_refuses_an_input() {
    let dir = tempfile::tempdir().unwrap();
    let (r, _) = copy_run("claude_code_agent", dir.path());
    let out = gymscope(&["health", r.to_str().unwrap(), "--format", "json", "--write"]);
    assert!(out.status.success());
    let written = std::fs::read(dir.path().join("run_gymscope_health.json")).unwrap();
    assert_eq!(written, out.stdout);
    assert!(!dir.path().join("quality_summary.json").exists());
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names.len(), 3, "{names:?}");
    // An output that is an input: exit 2, nothing written.
    let victim = dir.path().join("run_gymscope_health.json");
    let before = std::fs::read(&victim).unwrap();
    let out = gymscope(&[
        "health",
        r.to_str().unwrap(),
        "--inputs",
        victim.to_str().unwrap(),
        "--write",
    ]);
    assert_eq!(
        out.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(std::fs::read(&victim).unwrap(), before);
}

#[test]
fn missing_rollouts_failures_and_duplicates() {
    let dir = tempfile::tempdir().unwrap();
    let (r, i) = copy_run("claude_code_agent", dir.path());
    let text = std::fs::read_to_string(&r).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    // Drop line 1 (task 1), repeat line 2 (task 2), and record task 1 as failed.
    std::fs::write(
        &r,
        format!("{}\n{}\n{}\n", lines[1..].join("\n"), lines[1], ""),
    )
    .unwrap();
    let h = json(&[
        "health",
        r.to_str().unwrap(),
        "--inputs",
        i.to_str().unwrap(),
        "--format",
        "json",
    ]);
    assert_eq!(
        (
            h["rollouts"]["duplicates"].as_u64(),
            h["rollouts"]["missing"].as_u64()
        ),
        (Some(1), Some(1))
    );
    assert_eq!(h["tasks"]["missing"], 1);
    assert_eq!(h["tasks"]["coverage"], 0.8);
    std::fs::write(
        dir.path().join("run_failures.jsonl"),
        "{\"_ng_task_index\":1,\"_ng_rollout_index\":0,\"_ng_failure_class\":\"judge_failed\"}\n",
    )
    .unwrap();
    let h = json(&[
        "health",
        r.to_str().unwrap(),
        "--inputs",
        i.to_str().unwrap(),
        "--format",
        "json",
    ]);
    assert_eq!(
        (
            h["rollouts"]["failures"].as_u64(),
            h["rollouts"]["missing"].as_u64()
        ),
        (Some(1), Some(0))
    );
    assert_eq!(h["rollouts"]["failures_by_class"]["judge_failed"], 1);
    assert_eq!(h["rates"][0]["level"], "bad", "1 of 6 attempts failed");
}

/// Spec §2.2's formats, with check ids gymscope has never heard of (opaque strings).
const QUALITY_SUMMARY: &str = r#"{
  "run": {
    "ignored_checks": [],
    "artifacts": {"records": 5, "captures": 0, "coverage": {}},
    "verdicts": {"healthy": 0, "unhealthy": 1, "unobserved": 4},
    "issues": {"rollout_duplicate_identity": 0, "model_call_last_failed": 1, "future_check_x": 0},
    "stats": {}
  },
  "tasks": {"3": {"repeats": 1, "healthy": 0, "unhealthy": 1, "unobserved": 0, "flags": ["task_consistently_unhealthy"]}}
}
"#;

const ROLLOUT_VERDICTS: &str = r#"{"_ng_task_index":0,"_ng_rollout_index":0,"rollout_id":"0-0","verdict":"unobserved","findings":[],"unobserved":["agent_turn_hollow"]}
{"_ng_task_index":3,"_ng_rollout_index":0,"rollout_id":"3-0","verdict":"unhealthy","findings":[{"check":"model_call_last_failed","locator":"call-2","detail":"HTTP 500"}],"unobserved":[]}
"#;

#[test]
fn upstream_verdict_files_beside_the_rollouts_are_shown() {
    let dir = tempfile::tempdir().unwrap();
    let (r, i) = copy_run("claude_code_agent", dir.path());
    std::fs::write(dir.path().join("quality_summary.json"), QUALITY_SUMMARY).unwrap();
    std::fs::write(dir.path().join("rollout_verdicts.jsonl"), ROLLOUT_VERDICTS).unwrap();
    let h = json(&["health", r.to_str().unwrap(), "--format", "json"]);
    let u = &h["upstream"];
    assert_eq!(u["quality_summary"]["verdicts"]["unobserved"], 4);
    assert_eq!(u["quality_summary"]["issues"]["future_check_x"], 0);
    assert_eq!(
        u["quality_summary"]["task_flags"]["task_consistently_unhealthy"],
        1
    );
    assert_eq!(
        u["rollout_verdicts"]["findings"]["model_call_last_failed"],
        1
    );
    assert_eq!(u["rollout_verdicts"]["unhealthy"][0]["rollout_id"], "3-0");
    let out = gymscope(&["health", r.to_str().unwrap()]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert_contains(&text, "verdicts healthy 0, unhealthy 1, unobserved 4");
    assert_contains(
        &text,
        "unhealthy: task 3 rollout 0 (3-0): model_call_last_failed",
    );
    // The report shows them too.
    let html = dir.path().join("r.html");
    common::write_report(&i, &r, &html, &[]);
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(
        page.contains("findings by check model_call_last_failed 1"),
        "upstream in the report"
    );
    // A broken verdict file is an error naming it and the line.
    std::fs::write(
        dir.path().join("rollout_verdicts.jsonl"),
        "{\"verdict\": 1}\n",
    )
    .unwrap();
    let out = gymscope(&["health", r.to_str().unwrap()]);
    assert_exit(&out, 1, "rollout_verdicts.jsonl' line 1: field `verdict`");
}

#[test]
fn rows_carrying_ng_trajectory_show_its_gaps() {
    let dir = tempfile::tempdir().unwrap();
    let (r, _) = copy_run("blackjack", dir.path());
    let text = std::fs::read_to_string(&r).unwrap();
    let mut out = String::new();
    for line in text.lines() {
        let mut v: Value = serde_json::from_str(line).unwrap();
        v["ng_trajectory"] = serde_json::json!({"schema_version": "1.0", "turns": [{}], "tool_calls": [],
            "gaps": [{"code": "resolution_unavailable", "invocation_id": "root", "detail": null}]});
        out.push_str(&v.to_string());
        out.push('\n');
    }
    std::fs::write(&r, out).unwrap();
    let h = json(&["health", r.to_str().unwrap(), "--format", "json"]);
    assert_eq!(h["trajectory"]["rows"], 5);
    assert_eq!(h["trajectory"]["gaps"]["resolution_unavailable"], 5);
}

#[test]
fn report_health_section_escapes_hostile_text() {
    let dir = tempfile::tempdir().unwrap();
    let (inputs, rollouts) = gen_run::hostile_run();
    let (i, r) = (
        dir.path().join("h_materialized_inputs.jsonl"),
        dir.path().join("h.jsonl"),
    );
    std::fs::write(&i, inputs).unwrap();
    std::fs::write(&r, rollouts).unwrap();
    let html = dir.path().join("h.html");
    common::write_report(&i, &r, &html, &[]);
    let page = std::fs::read_to_string(&html).unwrap();
    let start = page.find("<section id=\"health\">").unwrap();
    let section = &page[start..start + page[start..].find("</section>").unwrap()];
    assert_contains(
        section,
        "&lt;/script&gt;&lt;script&gt;window.__pwned=1&lt;/script&gt;",
    );
    assert!(
        !section.contains("<script")
            && !section.contains("<img")
            && !section.contains("onerror=\"")
    );
    // The hostile rows: non-JSON arguments, a call without output, no assistant message.
    assert!(section.contains("malformed_arguments"));
    assert!(section.contains("bad:"), "{section}");
    // Same inputs, same bytes.
    let again = dir.path().join("h2.html");
    run_on("report", &i, &r, &["-o", again.to_str().unwrap()]);
    assert_eq!(std::fs::read(&again).unwrap(), page.as_bytes());
    // The health command's JSON keeps the payloads as data.
    let h = json(&[
        "health",
        r.to_str().unwrap(),
        "--inputs",
        i.to_str().unwrap(),
        "--format",
        "json",
    ]);
    assert_eq!(h["agents"].as_array().unwrap().len(), 3);
    assert_eq!(h["agents"][0]["malformed_arguments"], 2);
    assert_eq!(h["agents"][0]["dangling_calls"], 2);
    assert_eq!(h["agents"][0]["empty_answer"], 2);
}

#[test]
fn a_line_over_the_limit_names_the_file_and_line_even_on_a_device() {
    let out = gymscope(&["health", "/dev/zero", "--max-line-bytes", "1000000"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8(out.stderr).unwrap();
    assert_contains(&err, "'/dev/zero' line 1 is longer than 1000000 bytes (the limit; raise it with --max-line-bytes)");
}

#[test]
fn a_row_health_cannot_read_costs_the_report_its_section_not_the_report() {
    let dir = tempfile::tempdir().unwrap();
    let (r, i) = copy_run("blackjack", dir.path());
    let text = std::fs::read_to_string(&r).unwrap();
    let mut v: Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    v["agent_ref"] = serde_json::json!("not an object");
    let rest: Vec<&str> = text.lines().skip(1).collect();
    std::fs::write(&r, format!("{v}\n{}\n", rest.join("\n"))).unwrap();
    let out = gymscope(&["health", r.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("line 1: field `agent_ref` is not an object")
    );
    let html = dir.path().join("r.html");
    let out = run_on("report", &i, &r, &["-o", html.to_str().unwrap()]);
    assert_success(&out);
    assert!(String::from_utf8_lossy(&out.stderr).contains("Warning: no Health section:"));
    assert!(!std::fs::read_to_string(&html)
        .unwrap()
        .contains("<section id=\"health\">"));
}

/// The agent labels of v0.7.0's own profile of a run (its `expected/rollouts_agent_metrics.json`),
/// sorted.
pub(crate) fn v07_agent_labels(dir: &std::path::Path) -> Vec<String> {
    let metrics: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.join("expected/rollouts_agent_metrics.json")).unwrap(),
    )
    .unwrap();
    let mut labels: Vec<String> = metrics
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["agent_ref"]["name"].as_str().unwrap().to_string())
        .collect();
    labels.sort();
    labels
}

/// A run that mixes agents and environment servers (NeMo Gym v0.7.0): health's agents are the
/// labels v0.7.0's own profile gave the run (its `*_agent_metrics.json`), in both readers.
#[test]
fn agents_are_v07_labels_when_environment_servers_share_an_agent() {
    let dir = common::repo_root().join("tests/fixtures/generated-v07/env_servers");
    let labels = v07_agent_labels(&dir);
    let doc = json(&[
        "health",
        dir.join("rollouts.jsonl").to_str().unwrap(),
        "--inputs",
        dir.join("rollouts_materialized_inputs.jsonl")
            .to_str()
            .unwrap(),
        "--format",
        "json",
    ]);
    let mut agents: Vec<String> = doc["agents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["agent"].as_str().unwrap_or("(none)").to_string())
        .collect();
    agents.sort();
    assert_eq!(agents, labels);
}
