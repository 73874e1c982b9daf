//! `gymscope collect` with observability on, against the stand-in stack whose model server
//! writes capture files: `ng_model_call_capture` and the canonical `ng_trajectory` on rows (the
//! simple_agent scenario of upstream's tests: two model calls, one tool call answered with HTTP
//! 422), stale captures cleared before dispatch, torn and missing captures as gaps, and the
//! health reports over the result; a harness agent's `ng_agent_observations` joined and projected.

use crate::common::assert_success;
use crate::common::collect_args_routed;
use crate::common::gym_standin;
use crate::common::run_gymscope as gymscope;
use crate::common::write_in;
use crate::common::{fields, strs};

use gym_standin::{Responder, StandIn, SECRET};
use serde_json::{json, Map, Value};
use std::path::Path;
use std::process::Output;
use std::sync::Arc;

const AGENT: &str = "standin_agent";
const MODEL_REF: &str = r#"{"type": "responses_api_models", "name": "policy_model"}"#;

fn model_ref() -> Value {
    serde_json::from_str(MODEL_REF).unwrap()
}

/// One captured exchange as upstream's capture middleware writes it.
fn exchange(id: &str, response_id: &str, start: f64, tokens: (i64, i64), output: Value) -> Value {
    json!({"model_call_id": id, "dialect": "responses", "model_ref": model_ref(),
        "started_at": start, "completed_at": start + 0.8, "latency_ms": 800, "latency_ttft_ms": 120.0,
        "status_code": 200, "error_category": null,
        "request": {"model": "policy", "input": [{"role": "user", "content": "question"}]},
        "response": {"id": response_id, "model": "policy", "status": "completed", "output": output,
            "usage": {"input_tokens": tokens.0, "output_tokens": tokens.1,
                      "output_tokens_details": {"reasoning_tokens": 4}, "input_tokens_details": {"cached_tokens": 0}}}})
}

fn tool_output() -> Value {
    json!([{"type": "function_call", "call_id": "call-1", "name": "lookup", "arguments": "{\"q\": 1}"}])
}

fn final_output() -> Value {
    json!([{"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "done"}]}])
}

/// simple_agent with observability on: its trajectory references each call by
/// `(model_ref, response_id)`; the model server captured both calls.
fn responder() -> Responder {
    Arc::new(|row: &Map<String, Value>| {
        let task = row["_ng_task_index"].as_i64().unwrap();
        let rollout = row["_ng_rollout_index"].as_i64().unwrap();
        let rid = format!("{task}-{rollout}");
        let mut result = row.clone();
        result.insert(
            "response".into(),
            json!({"id": "resp-final", "status": "completed", "output": final_output(),
            "usage": {"input_tokens": 95, "output_tokens": 20}}),
        );
        result.insert("reward".into(), json!(0.0));
        let case = row["case"].as_str().unwrap_or("").to_string();
        if case == "no_model_calls" {
            return Value::Object(result);
        }
        let reference =
            |r: &str| json!({"model_call_id": null, "model_ref": model_ref(), "response_id": r});
        result.insert("ng_trajectory".into(), json!({
            "schema_version": "1.0", "task_id": task.to_string(), "rollout_id": rid,
            "invocations": [{"kind": "agent_invocation", "invocation_id": "root", "status": "completed",
                "model_calls": [reference("resp-tool"), reference("resp-final")],
                "conversation": [{"role": "user", "content": "question", "type": "message"}]}],
            "turns": [
                {"invocation_id": "root", "task_id": task.to_string(), "rollout_id": rid, "turn_no": 1,
                 "timestamp": 1_790_000_000.1, "question": [{"role": "user", "content": "question"}],
                 "answer": tool_output(), "step_count": 1, "model_calls": [reference("resp-tool")]},
                {"invocation_id": "root", "task_id": task.to_string(), "rollout_id": rid, "turn_no": 2,
                 "timestamp": 1_790_000_000.9, "answer": final_output(), "step_count": 1,
                 "model_calls": [reference("resp-final")]}],
            "tool_calls": [{"kind": "tool_call", "invocation_id": "root", "tool_call_id": "call-1",
                "tool_name": "lookup", "started_at": 1_790_000_000.9, "completed_at": 1_790_000_001.0,
                "duration_ms": 95.0, "timing_source": "executor", "status": "failed", "error_type": "http_422",
                "output": "bad input"}],
            "gaps": [{"code": "resolution_unavailable", "invocation_id": "root"}]}));
        let mut calls = vec![
            exchange(
                "model-call-1",
                "resp-tool",
                1_790_000_000.1,
                (40, 12),
                tool_output(),
            ),
            exchange(
                "model-call-2",
                "resp-final",
                1_790_000_000.9,
                (55, 8),
                final_output(),
            ),
        ];
        match case.as_str() {
            "torn" => calls.push(json!("{\"model_call_id\": \"model-call-3\", \"dial")),
            "incomplete" => {
                result.insert("__capture_incomplete".into(), json!(true));
            }
            _ => {}
        }
        result.insert("__model_calls".into(), Value::Array(calls));
        Value::Object(result)
    })
}

fn rows(p: &Path) -> Vec<Value> {
    let mut rows = crate::common::read_jsonl(p);
    rows.sort_by_key(|r| r["_ng_task_index"].as_i64());
    rows
}

fn run(cases: &[&str]) -> (tempfile::TempDir, Output, Vec<Value>) {
    run_agent(responder(), cases, true)
}

#[test]
fn ng_perf_is_written_with_observability() {
    // v0.7.0 writes `ng_perf` on every observed row (`--ng-perf` is no longer needed), and none
    // with observability off.
    let (_dir, o, rows) = run_agent_with(responder(), &["ok"], true, false);
    assert_success(&o);
    assert!(rows[0].get("ng_trajectory").is_some());
    assert!(
        rows[0]["ng_perf"]["total_latency_ms"].as_f64().is_some(),
        "{}",
        rows[0]
    );
    let (_dir, o, rows) = run_agent_with(responder(), &["ok"], false, false);
    assert_success(&o);
    assert!(rows[0].get("ng_perf").is_none(), "{}", rows[0]);
}

/// `collect` over one row per case against `agent`, observability on or off (with `--ng-perf`).
fn run_agent(
    agent: Responder,
    cases: &[&str],
    observability: bool,
) -> (tempfile::TempDir, Output, Vec<Value>) {
    run_agent_with(agent, cases, observability, observability)
}

fn run_agent_with(
    agent: Responder,
    cases: &[&str],
    observability: bool,
    ng_perf: bool,
) -> (tempfile::TempDir, Output, Vec<Value>) {
    let dir = tempfile::tempdir().unwrap();
    let capture = dir.path().join("captures");
    std::fs::create_dir(&capture).unwrap();
    // A stale capture of an earlier run under the same rollout id: cleared before dispatch.
    std::fs::write(
        capture.join("0-0.capture.jsonl"),
        "{\"model_call_id\": \"stale\"}\nnot json\n",
    )
    .unwrap();
    std::fs::write(capture.join("0-0.capture.incomplete"), "").unwrap();
    let s = StandIn::start_capturing(&[AGENT], agent, &capture);
    let input = dir.path().join("input.jsonl");
    let body: String = cases
        .iter()
        .map(|c| format!("{}\n", json!({"responses_create_params": {"input": "question"}, "agent_ref": {"name": AGENT}, "case": c})))
        .collect();
    std::fs::write(&input, body).unwrap();
    let output = dir.path().join("rollouts.jsonl");
    let dir_arg = format!("++model_call_capture_dir={}", capture.display());
    let head = s.head();
    let mut args = collect_args_routed(&input, &output, &head, &["--no-progress"]);
    if observability {
        args.extend(["++observability_enabled=true", &dir_arg]);
    }
    if ng_perf {
        args.push("--ng-perf");
    }
    let o = gymscope(&args);
    let rows = if output.exists() {
        rows(&output)
    } else {
        vec![]
    };
    (dir, o, rows)
}

/// The canonical trajectory of the scenario, worked out by hand from upstream's projection
/// rules (`_build_trajectory_record` at 07d6b0d): every field present, capture values merged
/// into the calls, the producer's gap then `conversation_unavailable` not added (there is one).
fn expected_trajectory() -> Value {
    let reference =
        |r: &str| json!({"model_call_id": null, "model_ref": model_ref(), "response_id": r});
    let call = |id: &str, rid: &str, start: f64, tokens: (i64, i64), output: Value| {
        json!({
        "model_call_id": id, "started_at": start, "completed_at": start + 0.8, "duration_ms": 800,
        "request": {"model": "policy", "input": [{"role": "user", "content": "question"}]},
        "response": {"id": rid, "model": "policy", "status": "completed", "output": output,
            "usage": {"input_tokens": tokens.0, "output_tokens": tokens.1,
                      "output_tokens_details": {"reasoning_tokens": 4}, "input_tokens_details": {"cached_tokens": 0}}},
        "response_metadata": {"response_id": rid, "model_ref": model_ref(), "model": "policy", "dialect": "responses",
            "status_code": 200, "response_status": "completed", "finish_reason": null, "upstream_attempted": null, "response_source": null,
            "upstream_status_code": null, "local_response_reason": null, "error_category": null,
            "latency_ttft_ms": 120.0},
        "token_stats": {"prompt_tokens": tokens.0, "completion_tokens": tokens.1, "reasoning_tokens": 4,
            "total_tokens": tokens.0 + tokens.1, "cached_tokens": 0}})
    };
    json!({"schema_version": "1.0", "task_id": "0", "rollout_id": "0-0",
        "invocations": [{"kind": "agent_invocation", "invocation_id": "root", "parent_invocation_id": null,
            "spawned_by_tool_call_id": null, "status": "completed", "duration_ms": null, "error_type": null,
            "model_calls": [reference("resp-tool"), reference("resp-final")],
            "conversation": [{"role": "user", "content": "question", "type": "message"}]}],
        "turns": [
            {"invocation_id": "root", "task_id": "0", "rollout_id": "0-0", "turn_no": 1, "timestamp": 1_790_000_000.1,
             "question": [{"role": "user", "content": "question"}], "answer": tool_output(), "reasoning_content": null,
             "resolved": null, "step_count": 1, "model_calls": [reference("resp-tool")]},
            {"invocation_id": "root", "task_id": "0", "rollout_id": "0-0", "turn_no": 2, "timestamp": 1_790_000_000.9,
             "question": null, "answer": final_output(), "reasoning_content": null, "resolved": null, "step_count": 1,
             "model_calls": [reference("resp-final")]}],
        "model_calls": [call("model-call-1", "resp-tool", 1_790_000_000.1, (40, 12), tool_output()),
                        call("model-call-2", "resp-final", 1_790_000_000.9, (55, 8), final_output())],
        "tool_calls": [{"kind": "tool_call", "invocation_id": "root", "tool_call_id": "call-1", "sandbox_id": null,
            "tool_name": "lookup", "started_at": 1_790_000_000.9, "completed_at": 1_790_000_001.0, "duration_ms": 95.0,
            "timing_source": "executor", "status": "failed", "error_type": "http_422", "output": "bad input"}],
        "gaps": [{"code": "resolution_unavailable", "invocation_id": "root", "detail": null}]})
}

/// Numbers compared as numbers (800 and 800.0 are the same datum).
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            (x.as_f64().unwrap() - y.as_f64().unwrap()).abs() < 1e-6
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| same(a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.keys().eq(y.keys()) && x.iter().all(|(k, v)| same(v, &y[k]))
        }
        _ => a == b,
    }
}

#[test]
fn rows_carry_the_capture_and_the_canonical_trajectory() {
    let (dir, o, rows) = run(&["ok", "no_model_calls", "torn", "incomplete"]);
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(stdout.contains("Clearing existing model-call captures for rollouts being dispatched"));
    assert_eq!(rows.len(), 4);

    let capture = &rows[0]["ng_model_call_capture"];
    assert_eq!(capture["rollout_id"], "0-0");
    // The stale capture (and its marker) were removed before dispatch: no gaps, two calls.
    assert!(capture.get("gaps").is_none(), "{capture}");
    assert!(
        same(
            &capture["metrics"],
            &json!({"tokens_in": 95, "tokens_out": 20, "tokens_reasoning": 8,
        "tokens_total": 115, "cached_tokens": 0, "latency_total_ms": 1600.0, "num_calls": 2})
        ),
        "{}",
        capture["metrics"]
    );
    // v0.7.0's `ModelCallRecord` fields, in its order.
    let call = capture["calls"][0].as_object().unwrap();
    assert_eq!(
        call.keys().map(String::as_str).collect::<Vec<_>>(),
        [
            "model_call_id",
            "response_id",
            "client_session_id",
            "call_index",
            "model_ref",
            "model",
            "dialect",
            "status_code",
            "response_status",
            "finish_reason",
            "upstream_attempted",
            "response_source",
            "upstream_status_code",
            "local_response_reason",
            "started_at",
            "completed_at",
            "tokens_in",
            "tokens_out",
            "tokens_reasoning",
            "tokens_total",
            "tool_calls",
            "reasoning_content",
            "cache_hit",
            "cached_tokens",
            "cache_creation_tokens",
            "error_category",
            "latency_total_ms",
            "latency_ttft_ms"
        ]
    );
    assert_eq!(
        call["tool_calls"],
        json!([{"call_id": "call-1", "name": "lookup", "arguments": {"q": 1}}])
    );
    assert_eq!(call["cache_hit"], false);
    let t = &rows[0]["ng_trajectory"];
    assert!(
        same(t, &expected_trajectory()),
        "got {t}\nwant {}",
        expected_trajectory()
    );
    // `ng_perf`: two turns, one tool call, both turns' calls owned, the /run's wall time.
    let mut perf = rows[0]["ng_perf"].clone();
    let latency = perf
        .as_object_mut()
        .unwrap()
        .remove("total_latency_ms")
        .unwrap();
    assert!(latency.as_f64().unwrap() > 0.0);
    assert_eq!(
        perf,
        json!({"num_turns": 2, "num_tool_calls": 1, "token_observability_coverage": 1.0,
        "prompt_tokens": 95, "cached_prompt_tokens": 0, "completion_tokens": 20, "reasoning_tokens": 8})
    );
    // The row keeps the agent's keys first and the collector's after them.
    let keys: Vec<&str> = rows[0]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(keys[keys.len() - 2..], ["ng_model_call_capture", "ng_perf"]);
    assert!(
        rows[1].get("ng_perf").is_none(),
        "no invocation, no ng_perf"
    );

    // No capture file: a gap, and the trajectory says what is missing.
    assert_eq!(
        rows[1]["ng_model_call_capture"]["gaps"],
        json!([{"code": "model_call_capture_no_records"}])
    );
    let gaps: Vec<&str> = strs(&rows[1]["ng_trajectory"]["gaps"], "code");
    assert_eq!(
        gaps,
        [
            "model_call_capture_no_records",
            "model_calls_unavailable",
            "turns_unavailable",
            "conversation_unavailable"
        ]
    );
    // A torn line is counted, not fatal; an incomplete marker is reported.
    assert_eq!(
        rows[2]["ng_model_call_capture"]["gaps"],
        json!([{"code": "model_call_capture_records_unreadable", "detail": "count=1"}])
    );
    assert_eq!(rows[2]["ng_model_call_capture"]["metrics"]["num_calls"], 2);
    assert_eq!(
        rows[3]["ng_model_call_capture"]["gaps"],
        json!([{"code": "model_call_capture_incomplete"}])
    );

    // Health over these rows: the complete rollout is healthy; the others lack evidence.
    let v: Vec<Value> = std::fs::read_to_string(dir.path().join("rollout_verdicts.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let verdicts: Vec<&str> = v.iter().map(|r| r["verdict"].as_str().unwrap()).collect();
    assert_eq!(
        verdicts,
        ["healthy", "unobserved", "unobserved", "unobserved"],
        "{v:?}"
    );
    assert!(stdout.contains("Rollout health: 4 checked, 1 healthy, 0 unhealthy, 3 unobserved"));
    // Aggregation never sees the evidence (stripped from its request, as upstream).
    let metrics =
        std::fs::read_to_string(dir.path().join("rollouts_aggregate_metrics.json")).unwrap();
    assert!(!metrics.contains("ng_trajectory") && !metrics.contains("model-call-1"));
    // The head server's secrets reach no file: rows, sidecars, metrics, health reports.
    for e in std::fs::read_dir(dir.path()).unwrap() {
        let p = e.unwrap().path();
        if p.is_file() {
            let text = std::fs::read_to_string(&p).unwrap();
            assert!(!text.contains(SECRET), "{} holds the secret", p.display());
        }
    }
}

#[test]
fn without_observability_the_agents_trajectory_is_still_normalized() {
    let dir = tempfile::tempdir().unwrap();
    let capture = dir.path().join("captures");
    std::fs::create_dir(&capture).unwrap();
    let s = StandIn::start_capturing(&[AGENT], responder(), &capture);
    let input = write_in(
        dir.path(),
        "input.jsonl",
        format!(
            "{}\n",
            json!({"responses_create_params": {"input": "q"}, "agent_ref": {"name": AGENT}, "case": "ok"})
        ),
    );
    let output = dir.path().join("rollouts.jsonl");
    let o = gymscope(&collect_args_routed(
        &input,
        &output,
        &s.head(),
        &["--no-progress"],
    ));
    assert!(o.status.success());
    let row = &rows(&output)[0];
    assert!(row.get("ng_model_call_capture").is_none());
    assert!(row.get("ng_perf").is_none());
    let t = &row["ng_trajectory"];
    // Defaults filled, no captured calls: the producer's gap and `model_calls_unavailable`.
    assert_eq!(t["turns"][1]["question"], Value::Null);
    assert_eq!(t["model_calls"], json!([]));
    let gaps: Vec<&str> = strs(&t["gaps"], "code");
    assert_eq!(gaps, ["resolution_unavailable", "model_calls_unavailable"]);
}

fn codes(gaps: &Value) -> Vec<&str> {
    strs(gaps, "code")
}

#[test]
fn a_harness_agents_observations_are_joined_and_projected() {
    let agent = gym_standin::harness_agent("policy_model");
    let (dir, o, rows) = run_agent(agent, &["ok", "invalid", "unmatched"], true);
    assert_success(&o);
    // The health checks read the joined trajectories: only the reference to a call nobody
    // captured is a finding.
    let verdicts = self::rows(&dir.path().join("rollout_verdicts.jsonl"));
    let found: Vec<(&Value, &Value)> = verdicts
        .iter()
        .flat_map(|v| v["findings"].as_array().unwrap())
        .map(|f| (&f["check"], &f["locator"]))
        .collect();
    assert_eq!(
        found,
        [(
            &json!("trajectory_capture_mismatch"),
            &json!({"call_id": "never-captured"})
        )]
    );
    assert_eq!(verdicts[0]["verdict"], "unobserved");
    assert_eq!(rows.len(), 3);

    // Joined: each reference is now the captured call's full identity.
    let obs = &rows[0]["ng_agent_observations"];
    let root = &obs["records"][0];
    let ids: Vec<&Value> = fields(&root["model_calls"], "model_call_id");
    assert_eq!(ids, [&json!("hermes-call-1"), &json!("hermes-call-2")]);
    assert_eq!(root["model_calls"][0]["model_ref"], model_ref());
    assert_eq!(
        obs["records"][1]["model_calls"][0]["response_id"],
        "resp-sub"
    );
    assert_eq!(
        obs["gaps"],
        json!([{"code": "model_call_ownership_unavailable", "invocation_id": null,
                "detail": "capture:hermes-call-stray:call_index=3"}])
    );
    // The trajectory is built from them: both invocations, the captured calls, the tool's
    // harness timing with the output the conversation shows.
    let t = &rows[0]["ng_trajectory"];
    assert_eq!(
        (&t["task_id"], &t["rollout_id"]),
        (&json!("0"), &json!("0-0"))
    );
    let invs: Vec<&Value> = fields(&t["invocations"], "invocation_id");
    assert_eq!(invs, [&json!("root"), &json!("sub")]);
    assert_eq!(t["invocations"][1]["parent_invocation_id"], "root");
    assert_eq!(t["invocations"][0]["model_calls"], root["model_calls"]);
    assert_eq!(t["model_calls"].as_array().unwrap().len(), 4);
    assert_eq!(t["model_calls"][0]["token_stats"]["prompt_tokens"], 30);
    assert_eq!(
        t["tool_calls"],
        json!([{"kind": "tool_call", "invocation_id": "root", "tool_call_id": "call-1", "sandbox_id": null,
                "tool_name": "delegate", "started_at": 10.5, "completed_at": 11.5, "duration_ms": 1000.0,
                "timing_source": "harness", "status": "completed", "error_type": null, "output": "sub answer"}])
    );
    assert_eq!(
        codes(&t["gaps"]),
        ["model_call_ownership_unavailable", "turns_unavailable"]
    );
    // Payloads now live in the trajectory only.
    assert!(rows[0]["ng_model_call_capture"]["calls"][0]
        .get("request")
        .is_none());
    assert!(t["model_calls"][0]["request"].is_object());
    assert!(rows[0]["ng_perf"]["num_turns"].as_u64().unwrap() >= 1);

    // Invalid observations: the join fails on the capture, the trajectory says why.
    assert_eq!(
        codes(&rows[1]["ng_model_call_capture"]["gaps"]),
        ["agent_observation_join_failed"]
    );
    assert_eq!(
        rows[1]["ng_agent_observations"]["records"][0]["kind"],
        "turn"
    );
    assert_eq!(
        codes(&rows[1]["ng_trajectory"]["gaps"]),
        // The capture's gaps follow the observations' (upstream's order).
        [
            "agent_observations_invalid",
            "agent_observation_join_failed",
            "turns_unavailable",
            "conversation_unavailable"
        ]
    );
    // A reference to a call nobody captured stays as given, with a gap on its invocation.
    let g: Vec<&Value> = rows[2]["ng_trajectory"]["gaps"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|g| g["code"] == "model_call_reference_unmatched")
        .collect();
    assert_eq!(
        g,
        [
            &json!({"code": "model_call_reference_unmatched", "invocation_id": "sub", "detail": "never-captured"})
        ]
    );
    assert_eq!(
        rows[2]["ng_trajectory"]["invocations"][1]["model_calls"],
        json!([{"model_call_id": "never-captured", "model_ref": null, "response_id": null}])
    );
}

#[test]
fn without_observability_a_harness_agents_observations_still_give_the_trajectory() {
    let agent = gym_standin::harness_agent("policy_model");
    let (_dir, o, rows) = run_agent(agent, &["ok"], false);
    assert_success(&o);
    let row = &rows[0];
    assert!(row.get("ng_model_call_capture").is_none());
    // Not joined (no capture): references as the agent gave them, observations untouched.
    assert_eq!(
        row["ng_agent_observations"]["records"][0]["model_calls"][0].get("model_call_id"),
        None
    );
    let t = &row["ng_trajectory"];
    assert_eq!(
        t["invocations"][0]["model_calls"][0],
        json!({"model_call_id": null, "model_ref": model_ref(), "response_id": "resp-1"})
    );
    assert_eq!(t["tool_calls"][0]["output"], "sub answer");
    assert_eq!(
        codes(&t["gaps"]),
        ["model_calls_unavailable", "turns_unavailable"]
    );
}
