//! `gymscope collect` writes upstream's end-of-run health reports (`quality_summary.json`,
//! `rollout_verdicts.jsonl`) against the stand-in Gym stack, whose agent answers with the
//! `ng_trajectory` evidence of upstream's own test cases: healthy, unhealthy and unobserved
//! rollouts; `--no-health-check`; shards (no reports) and `--merge` (reports); `health-check`.

use crate::common::assert_contains;
use crate::common::assert_exit;
use crate::common::assert_success;
use crate::common::gym_standin;
use crate::common::run_gymscope as gymscope;

use gym_standin::{Responder, StandIn};
use serde_json::{json, Map, Value};
use std::path::Path;
use std::process::Output;
use std::sync::Arc;

const AGENT: &str = "standin_agent";

fn out(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Upstream's `_call` as a trajectory model call (`test_rollout_health.py`).
fn trajectory_call(status: i64, tokens_out: Option<i64>, finish: &str) -> Value {
    json!({"model_call_id": "c1", "request": {"input": "question"},
           "response": if finish == "length" { json!({}) } else { json!({"output_text": "ok"}) },
           "response_metadata": {"response_id": "r1", "status_code": status, "response_status": "completed",
                                 "finish_reason": finish},
           "token_stats": {"prompt_tokens": 10, "completion_tokens": tokens_out}})
}

/// The agent: echoes the row with a response (usage 10/5) and, per the row's `case`, the
/// evidence of one of upstream's test cases.
fn responder() -> Responder {
    Arc::new(|row: &Map<String, Value>| {
        let task = row["_ng_task_index"].as_i64().unwrap();
        let rollout = row["_ng_rollout_index"].as_i64().unwrap();
        let mut result = row.clone();
        result.insert("response".into(), json!({"output": [{"type": "message", "role": "assistant",
            "content": [{"type": "output_text", "text": "ok"}]}], "usage": {"input_tokens": 10, "output_tokens": 5}}));
        result.insert("reward".into(), json!(1.0));
        let turn = |answer: Value| {
            json!([{"invocation_id": "root", "task_id": task.to_string(),
            "rollout_id": format!("{task}-{rollout}"), "turn_no": 1, "timestamp": 1.0, "answer": answer,
            "step_count": 1, "model_calls": [{"model_call_id": "c1"}]}])
        };
        let trajectory = |turns: Value, calls: Value| {
            json!({"schema_version": "1.0", "task_id": task.to_string(),
            "rollout_id": format!("{task}-{rollout}"), "invocations": [], "turns": turns,
            "model_calls": calls, "tool_calls": [], "gaps": []})
        };
        // Per case: the turn's answer, and the model call's status code and finish reason.
        let evidence = match row["case"].as_str().unwrap_or("") {
            "healthy" => Some((json!("ok"), 200, "stop")),
            "failed" => Some((json!("ok"), 500, "stop")),
            "hollow" => Some((Value::Null, 200, "stop")),
            "runaway" => Some((json!("ok"), 200, "length")),
            _ => None,
        };
        if let Some((answer, status, finish)) = evidence {
            result.insert(
                "ng_trajectory".into(),
                trajectory(
                    turn(answer),
                    json!([trajectory_call(status, Some(5), finish)]),
                ),
            );
        }
        Value::Object(result)
    })
}

fn write_input(dir: &Path, cases: &[&str]) -> String {
    let p = dir.join("input.jsonl");
    let body: String = cases
        .iter()
        .map(|c| format!("{}\n", json!({"responses_create_params": {"input": "q"}, "agent_ref": {"name": AGENT}, "case": c})))
        .collect();
    std::fs::write(&p, body).unwrap();
    p.display().to_string()
}

fn verdicts(dir: &Path) -> Vec<Value> {
    crate::common::read_jsonl(&dir.join("rollout_verdicts.jsonl"))
}

fn summary(dir: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(dir.join("quality_summary.json")).unwrap()).unwrap()
}

/// `collect --merge` of the shards of `output`, and then `extra`.
fn merge(standin: &StandIn, output: &Path, extra: &[&str]) -> Output {
    let head = standin.head();
    let mut args = vec![
        "collect",
        "--merge",
        "--output",
        output.to_str().unwrap(),
        "--head-server",
        &head,
    ];
    args.extend_from_slice(extra);
    gymscope(&args)
}

fn collect(standin: &StandIn, input: &str, output: &Path, extra: &[&str]) -> Output {
    let head = standin.head();
    let mut args = vec![
        "collect",
        "--input",
        input,
        "--output",
        output.to_str().unwrap(),
        "--head-server",
        &head,
        "--no-progress",
    ];
    args.extend_from_slice(extra);
    gymscope(&args)
}

#[test]
fn healthy_unhealthy_and_unobserved_rollouts_get_upstreams_reports() {
    let s = StandIn::start_responding(&[AGENT], responder());
    let dir = tempfile::tempdir().unwrap();
    let input = write_input(
        dir.path(),
        &["healthy", "failed", "hollow", "runaway", "plain"],
    );
    let output = dir.path().join("rollouts.jsonl");
    let o = collect(&s, &input, &output, &[]);
    assert!(
        o.status.success(),
        "{}{}",
        out(&o),
        String::from_utf8_lossy(&o.stderr)
    );
    let text = out(&o);
    let summary_path = dir.path().join("quality_summary.json");
    assert!(text.contains(&format!(
        "Rollout health: 5 checked, 1 healthy, 3 unhealthy, 1 unobserved\nQuality summary: {}\nBehaviour: 0.0 % truncated",
        summary_path.display()
    )), "{text}");
    let v = verdicts(dir.path());
    let by_task = |t: i64| v.iter().find(|r| r["_ng_task_index"] == t).unwrap();
    assert_eq!(by_task(0)["verdict"], "healthy");
    // v0.7.0: the rollout ended on that failed call; a detail keeps its nulls.
    assert_eq!(
        by_task(1)["findings"],
        json!([{"check": "rollout_ended_on_failed_model_call", "locator": {"call_id": "c1"},
        "detail": {"model_ref": null, "status": 500, "error_category": null, "observed_calls": 1,
                   "successful_calls": 0}},
        {"check": "model_call_failed", "locator": {"call_id": "c1"},
        "detail": {"status": 500, "error_category": null, "terminal": true}}])
    );
    assert_eq!(by_task(2)["findings"][0]["check"], "agent_turn_hollow");
    assert_eq!(by_task(2)["findings"][0]["locator"], json!({"turn": 1}));
    assert_eq!(
        by_task(3)["findings"][0]["check"],
        "model_call_runaway_generation"
    );
    assert_eq!(by_task(4)["verdict"], "unobserved");
    let s = summary(dir.path());
    assert_eq!(
        s["run"]["verdicts"],
        json!({"healthy": 1, "unhealthy": 3, "unobserved": 1})
    );
    assert_eq!(s["run"]["artifacts"]["captures"], 4);
    assert_eq!(
        s["run"]["stats"]["model_call_errors"]["by_status"],
        json!({"500": 1})
    );
    assert_eq!(s["run"]["stats"]["tokens"]["prompt"], 50);
    // Rows are unchanged by the health check: the evidence is the agent's.
    let rows = std::fs::read_to_string(&output).unwrap();
    assert_eq!(rows.lines().count(), 5);

    // `health-check` on the same directory writes the same reports.
    let before = std::fs::read(&summary_path).unwrap();
    std::fs::remove_file(&summary_path).unwrap();
    let o = gymscope(&["health-check", dir.path().to_str().unwrap()]);
    assert!(o.status.success());
    assert!(
        out(&o).starts_with("Rollout health: 5 checked, 1 healthy, 3 unhealthy, 1 unobserved\n")
    );
    assert_eq!(std::fs::read(&summary_path).unwrap(), before);
    let o = gymscope(&[
        "health-check",
        dir.path().to_str().unwrap(),
        "--ignore-checks",
        "model_call_failed,agent_turn_hollow,rollout_ended_on_failed_model_call",
    ]);
    assert!(out(&o).starts_with("Rollout health: 5 checked, 3 healthy, 1 unhealthy, 1 unobserved (ignored: agent_turn_hollow, model_call_failed, rollout_ended_on_failed_model_call)\n"), "{}", out(&o));
    let o = gymscope(&[
        "health-check",
        dir.path().to_str().unwrap(),
        "--ignore-checks",
        "no_such_check",
    ]);
    assert_exit(&o, 2, "Unknown rollout health check(s): no_such_check");
}

#[test]
fn no_health_check_and_hydra_spellings() {
    let s = StandIn::start_responding(&[AGENT], responder());
    let dir = tempfile::tempdir().unwrap();
    let input = write_input(dir.path(), &["healthy"]);
    let output = dir.path().join("rollouts.jsonl");
    let o = collect(&s, &input, &output, &["--no-health-check"]);
    assert!(o.status.success());
    assert!(!out(&o).contains("Rollout health:"));
    assert!(!dir.path().join("quality_summary.json").exists());
    assert!(!dir.path().join("rollout_verdicts.jsonl").exists());
    let o = collect(&s, &input, &output, &["+disable_health_check=true"]);
    assert_success(&o);
    assert!(!dir.path().join("quality_summary.json").exists());
    // `--disable-aggregation` skips it too (task checks need every shard).
    let o = collect(&s, &input, &output, &["--disable-aggregation"]);
    assert!(o.status.success());
    assert!(!dir.path().join("quality_summary.json").exists());
    let o = collect(
        &s,
        &input,
        &output,
        &["++health_check_ignored_checks=[model_call_failed]"],
    );
    assert_success(&o);
    assert_eq!(
        summary(dir.path())["run"]["ignored_checks"],
        json!(["model_call_failed"])
    );
    let o = collect(&s, &input, &output, &["+health_check_ignored_checks=bogus"]);
    assert_eq!(o.status.code(), Some(2));
    // Observability switches are recognised (not "unknown key") and validated.
    let o = collect(&s, &input, &output, &["++observability_enabled=true"]);
    assert_exit(&o, 2, "model_call_capture_dir");
    let o = collect(
        &s,
        &input,
        &output,
        &[
            "++observability_enabled=true",
            "++model_call_capture_dir=relative/dir",
        ],
    );
    assert!(String::from_utf8_lossy(&o.stderr).contains("must be absolute"));
}

#[test]
fn shards_write_no_reports_and_merge_writes_them_once() {
    let s = StandIn::start_responding(&[AGENT], responder());
    let dir = tempfile::tempdir().unwrap();
    let input = write_input(dir.path(), &["healthy", "failed", "plain", "healthy"]);
    let output = dir.path().join("rollouts.jsonl");
    for i in 0..2 {
        let shard = format!("{i}/2");
        let o = collect(&s, &input, &output, &["--shard", &shard]);
        assert_success(&o);
        assert!(!out(&o).contains("Rollout health:"));
    }
    assert!(!dir.path().join("quality_summary.json").exists());
    let o = merge(&s, &output, &[]);
    assert_success(&o);
    assert_contains(
        &out(&o),
        "Rollout health: 4 checked, 2 healthy, 1 unhealthy, 1 unobserved\n",
    );
    assert_eq!(verdicts(dir.path()).len(), 4);
    let o = merge(&s, &output, &["--no-health-check"]);
    assert!(o.status.success());
    assert!(!out(&o).contains("Rollout health:"));
}
