//! Cases of upstream's `tests/unit_tests/test_rollout_health.py`, rebuilt as rows.
#![allow(clippy::unwrap_used)]

use super::*;
use crate::gym::trajectory;
use serde_json::json;

/// Upstream's `_record` + `_call` + `_trajectory_call` helpers.
fn record(
    task: Value,
    rollout: Value,
    answer: Value,
    refs: Value,
    include_turn: bool,
    usage: Option<Value>,
    calls: &[Value],
) -> Value {
    let tid = task.to_string().trim_matches('"').to_string();
    let rid = format!("{}-{}", tid, rollout.to_string().trim_matches('"'));
    let turns = if include_turn {
        json!([{"invocation_id": "root", "task_id": tid, "rollout_id": rid, "turn_no": 1,
                "timestamp": 1.0, "answer": answer, "step_count": 1, "model_calls": refs}])
    } else {
        json!([])
    };
    let mut response =
        json!({"output": [{"type": "message", "role": "assistant", "content": answer}]});
    if let Some(u) = usage {
        response["usage"] = u;
    }
    json!({"_ng_task_index": task, "_ng_rollout_index": rollout, "response": response,
           "ng_trajectory": {"task_id": tid, "rollout_id": rid, "turns": turns,
                             "model_calls": calls.iter().map(trajectory_call).collect::<Vec<_>>()}})
}

fn call(updates: Value) -> Value {
    let mut c = json!({"model_call_id": "c1", "response_id": "r1", "status_code": 200,
        "response_status": "completed", "finish_reason": "stop", "tokens_in": 3, "tokens_out": 2,
        "request": {"input": "question"}, "response": {"output_text": "ok"}});
    for (k, v) in updates.as_object().unwrap() {
        c[k] = v.clone();
    }
    c
}

fn trajectory_call(c: &Value) -> Value {
    json!({"model_call_id": c["model_call_id"], "request": c["request"], "response": c["response"],
        "response_metadata": {"response_id": c["response_id"], "model_ref": c.get("model_ref"),
            "status_code": c["status_code"], "response_status": c["response_status"],
            "finish_reason": c["finish_reason"], "error_category": c.get("error_category")},
        "token_stats": {"prompt_tokens": c["tokens_in"], "completion_tokens": c["tokens_out"]}})
}

fn simple(task: i64, rollout: i64, usage: Option<Value>, calls: &[Value]) -> Value {
    record(
        json!(task),
        json!(rollout),
        json!("ok"),
        json!([{"model_call_id": "c1"}]),
        true,
        usage,
        calls,
    )
}

fn run(rows: &[Value], ignored: &[&str]) -> Reports {
    let mut c = EvidenceChecker::new(normalize_ignored(ignored).unwrap());
    for (i, r) in rows.iter().enumerate() {
        c.line("rollouts.jsonl", 0, i as u64 + 1, r.to_string().as_bytes());
    }
    c.finish()
}

#[allow(clippy::unnecessary_wraps)]
fn usage(p: i64, c: i64) -> Option<Value> {
    Some(json!({"input_tokens": p, "output_tokens": c}))
}

const MODEL_CALL_CHECKS: [&str; 6] = [
    "model_call_zero_completion_tokens",
    "model_call_missing_token_counts",
    "trajectory_capture_mismatch",
    "model_call_failed",
    "rollout_token_count_mismatch",
    "model_call_runaway_generation",
];

#[test]
fn every_registered_semantic_check_fires_on_synthetic_rows() {
    let no_turn = |t, r| {
        record(
            json!(t),
            json!(r),
            json!(""),
            json!([]),
            false,
            None,
            &[call(json!({}))],
        )
    };
    let rows = vec![
        no_turn(0, 0),
        no_turn(0, 1),
        record(
            json!(1),
            json!(0),
            Value::Null,
            json!([{"model_call_id": "c1"}]),
            true,
            None,
            &[call(json!({}))],
        ),
        simple(
            2,
            0,
            usage(3, 0),
            &[call(
                json!({"tokens_out": 0, "response": {"output_text": ""}}),
            )],
        ),
        simple(3, 0, None, &[call(json!({"tokens_out": null}))]),
        record(
            json!(4),
            json!(0),
            json!("ok"),
            json!([{"model_call_id": "missing"}]),
            true,
            None,
            &[call(json!({}))],
        ),
        simple(
            5,
            0,
            usage(3, 2),
            &[call(
                json!({"status_code": 500, "error_category": "upstream"}),
            )],
        ),
        simple(6, 0, usage(99, 99), &[call(json!({}))]),
        simple(
            7,
            0,
            usage(3, 2),
            &[call(json!({"finish_reason": "length", "response": {}}))],
        ),
        simple(8, 0, usage(3, 2), &[call(json!({"status_code": 500}))]),
        simple(8, 1, usage(3, 2), &[call(json!({"status_code": 408}))]),
        simple(9, 0, usage(3, 2), &[call(json!({}))]),
        simple(9, 0, usage(3, 2), &[call(json!({}))]),
    ];
    let r = run(&rows, &[]);
    let summary = r.summary();
    let issues = summary["run"]["issues"].as_object().unwrap();
    assert_eq!(
        issues.keys().cloned().collect::<Vec<_>>(),
        check_ids().collect::<Vec<_>>()
    );
    for (id, n) in issues {
        if id == "check_execution_error" || id == "record_unreadable" {
            assert_eq!(n, 0, "{id}");
        } else {
            assert!(n.as_u64().unwrap() > 0, "{id} never fired");
        }
    }
    assert_eq!(
        r.summary()["tasks"]["0"]["flags"],
        json!(["task_consistently_unhealthy"])
    );
    assert!(r.summary()["tasks"]["8"]["flags"]
        .as_array()
        .unwrap()
        .contains(&json!("task_no_successful_model_calls")));
    // The duplicated rollout: both copies unhealthy with a duplicate finding.
    let dup: Vec<&Digest> = r
        .digests
        .iter()
        .filter(|d| d.task == Index::Int(9))
        .collect();
    assert_eq!(dup.len(), 2);
    assert!(dup.iter().all(|d| d.verdict == "unhealthy"
        && d.findings
            .iter()
            .any(|f| f.check == "rollout_duplicate_identity")));
    // Verdict lines sorted by task then rollout, with upstream's keys.
    let lines: Vec<Value> = r
        .verdict_lines()
        .map(|l| serde_json::from_slice(&l).unwrap())
        .collect();
    let keys: Vec<(i64, i64)> = lines
        .iter()
        .map(|l| {
            (
                l["_ng_task_index"].as_i64().unwrap(),
                l["_ng_rollout_index"].as_i64().unwrap(),
            )
        })
        .collect();
    let mut sorted = keys.clone();
    sorted.sort_unstable();
    assert_eq!(keys, sorted);
    assert_eq!(
        lines[0].as_object().unwrap().keys().collect::<Vec<_>>(),
        [
            "_ng_task_index",
            "_ng_rollout_index",
            "rollout_id",
            "verdict",
            "findings",
            "unobserved"
        ]
    );
    // A failed call with no status in the detail leaves the key out (exclude_none).
    // v0.7.0's new check comes first, in registry order; nulls in a detail are kept.
    let failed = lines.iter().find(|l| l["_ng_task_index"] == 5).unwrap();
    assert_eq!(
        failed["findings"],
        json!([{"check": "rollout_ended_on_failed_model_call", "locator": {"call_id": "c1"},
        "detail": {"model_ref": null, "status": 500, "error_category": "upstream", "observed_calls": 1,
                   "successful_calls": 0}},
        {"check": "model_call_failed", "locator": {"call_id": "c1"},
        "detail": {"status": 500, "error_category": "upstream", "terminal": true}}])
    );
}

#[test]
fn a_healthy_rollout_is_healthy() {
    let r = run(&[simple(0, 0, usage(3, 2), &[call(json!({}))])], &[]);
    assert_eq!(r.digests[0].verdict, "healthy");
    assert!(r.digests[0].unobserved_ids().is_empty());
    assert_eq!(r.verdicts(), (1, 0, 0));
    assert_eq!(r.summary()["run"]["artifacts"]["captures"], 1);
    assert_eq!(
        r.summary()["run"]["stats"]["tokens"],
        json!({"prompt": 3, "completion": 2, "capture_prompt": 3, "capture_completion": 2})
    );
}

#[test]
fn missing_model_calls_or_bindings_are_unobserved_not_unhealthy() {
    for with_call in [false, true] {
        let calls = if with_call {
            vec![call(json!({}))]
        } else {
            vec![]
        };
        let row = record(
            json!(0),
            json!(0),
            json!("ok"),
            json!([]),
            true,
            None,
            &calls,
        );
        let r = run(&[row], &[]);
        let d = &r.digests[0];
        assert_eq!(d.verdict, "unobserved");
        let mut got = d.unobserved_ids();
        got.sort_unstable();
        let mut want = MODEL_CALL_CHECKS.to_vec();
        // The ended-on-failure check reads captured calls, referenced or not.
        if !with_call {
            want.push("rollout_ended_on_failed_model_call");
        }
        want.sort_unstable();
        assert_eq!(got, want);
        assert!(d.findings.is_empty());
    }
}

#[test]
fn a_row_without_trajectory_is_unobserved_on_every_trajectory_check() {
    let mut row = simple(0, 0, usage(3, 1), &[]);
    row.as_object_mut().unwrap().remove("ng_trajectory");
    row["ng_model_call_capture"] = json!({"calls": [call(json!({}))]});
    let r = run(&[row], &[]);
    let d = &r.digests[0];
    assert_eq!(d.verdict, "unobserved");
    let want: Vec<&str> = check_ids()
        .filter(|id| {
            ![
                "check_execution_error",
                "record_unreadable",
                "rollout_duplicate_identity",
            ]
            .contains(id)
                && !id.starts_with("task_")
        })
        .collect();
    assert_eq!(d.unobserved_ids(), want);
    assert!(!d.capture_observed);
    assert_eq!(r.summary()["run"]["artifacts"]["captures"], 0);
    // Usage-based tokens are summed even without evidence.
    assert_eq!(r.summary()["run"]["stats"]["tokens"]["prompt"], 3);
}

#[test]
fn an_invalid_trajectory_is_unreadable_without_fallback() {
    let mut row = record(
        json!("task-a"),
        json!("repeat-a"),
        json!("ok"),
        json!([{"model_call_id": "c1"}]),
        true,
        None,
        &[],
    );
    row["ng_trajectory"]["turns"] = json!(["malformed-turn"]);
    let r = run(&[row], &[]);
    let d = &r.digests[0];
    assert_eq!(d.verdict, "unhealthy");
    assert_eq!(d.findings.len(), 1);
    assert_eq!(d.findings[0].check, "record_unreadable");
    assert_eq!(
        d.findings[0].detail_value()["reason"],
        "canonical trajectory is unreadable"
    );
    assert_eq!(d.rollout_id(), "task-a-repeat-a");
}

#[test]
fn a_turn_resolved_as_float_one_is_not_record_unreadable() {
    // Pydantic's lax bool takes 1.0 and 0.0 (pydantic-core's `validate_bool`), so upstream
    // validates this trajectory: it is read like one with `"resolved": true`.
    let with = |resolved: Value| {
        let mut row = simple(0, 0, usage(3, 2), &[call(json!({}))]);
        row["ng_trajectory"]["turns"][0]["resolved"] = resolved;
        row
    };
    let float_one = with(json!(1.0));
    assert!(trajectory::validate(&float_one["ng_trajectory"]).is_ok());
    assert!(trajectory::validate(&with(json!(0.0))["ng_trajectory"]).is_ok());
    let r = run(&[float_one, with(json!(true))], &[]);
    assert!(
        r.digests[0]
            .findings
            .iter()
            .all(|f| f.check != "record_unreadable"),
        "{:?}",
        r.digests[0].findings
    );
    assert_eq!(r.digests[0].verdict, r.digests[1].verdict);
    // A float that is neither 0 nor 1 is no bool for Pydantic either.
    let r = run(&[with(json!(0.5))], &[]);
    assert_eq!(r.digests[0].findings[0].check, "record_unreadable");
}

#[test]
fn an_unparsable_line_is_unreadable_with_a_synthetic_identity() {
    let mut c = EvidenceChecker::new(vec![]);
    c.line("run/rollouts.jsonl", 0, 1, b"{not json");
    c.line("run/rollouts.jsonl", 0, 2, b"   ");
    c.line("run/rollouts.jsonl", 0, 3, b"[1]");
    let r = c.finish();
    assert_eq!(r.digests.len(), 2);
    let lines: Vec<Value> = r
        .verdict_lines()
        .map(|l| serde_json::from_slice(&l).unwrap())
        .collect();
    assert_eq!(
        lines[0]["_ng_task_index"],
        "__unreadable_record__:input-0:line-1"
    );
    assert_eq!(
        lines[0]["findings"][0]["locator"],
        json!({"source_file": "run/rollouts.jsonl", "line": 1})
    );
    assert_eq!(
        lines[0]["findings"][0]["detail"]["error"],
        "JSONDecodeError"
    );
    assert_eq!(lines[1]["findings"][0]["detail"]["error"], "ValueError");
    assert_eq!(
        lines[1]["rollout_id"],
        "__unreadable_record__:input-0:line-3-0"
    );
}

#[test]
fn ignored_checks_are_counted_and_unknown_ones_refused() {
    let r = run(
        &[simple(0, 0, None, &[call(json!({"tokens_out": null}))])],
        &[
            "model_call_missing_token_counts",
            " model_call_missing_token_counts,",
        ],
    );
    assert_eq!(
        r.summary()["run"]["ignored_checks"],
        json!(["model_call_missing_token_counts"])
    );
    assert_eq!(
        r.summary()["run"]["artifacts"]["coverage"]["model_call_missing_token_counts"],
        json!({"evaluated": 0, "unobserved": 0, "ignored": 1})
    );
    assert!(r
        .lines("x/quality_summary.json")
        .starts_with("Rollout health: 1 checked, "));
    assert!(r
        .lines("q")
        .contains("(ignored: model_call_missing_token_counts)\nQuality summary: q"));
    assert_eq!(
        normalize_ignored(&["nope,also_not"]).unwrap_err(),
        "Unknown rollout health check(s): also_not, nope"
    );
}

#[test]
fn tasks_are_keyed_by_text_in_upstream_order() {
    let r = run(&[simple(10, 0, None, &[]), simple(2, 0, None, &[])], &[]);
    let summary = r.summary();
    let keys: Vec<&String> = summary["tasks"].as_object().unwrap().keys().collect();
    assert_eq!(keys, ["10", "2"]);
    // The verdict file sorts integers numerically.
    let first: Value = serde_json::from_slice(&r.verdict_lines().next().unwrap()).unwrap();
    assert_eq!(first["_ng_task_index"], 2);
}

#[test]
fn the_summary_is_written_as_orjson_indents_it() {
    let r = run(&[simple(0, 0, None, &[])], &[]);
    let text = String::from_utf8(r.summary_bytes()).unwrap();
    assert!(text.starts_with(
        "{\n  \"run\": {\n    \"ignored_checks\": [],\n    \"artifacts\": {\n      \"records\": 1,"
    ));
    assert!(text.ends_with("\n}"));
    assert!(text.contains("\"by_status\": {},"));
}

#[test]
fn validation_follows_the_model() {
    let ok = json!({"task_id": "0", "rollout_id": "0-0"});
    assert!(trajectory::validate(&ok).is_ok());
    for bad in [
        json!({"task_id": "0", "rollout_id": "0-0", "extra": 1}),
        json!({"task_id": 0, "rollout_id": "0-0"}),
        json!({"task_id": "0", "rollout_id": "0-0", "schema_version": "2.0"}),
        json!({"task_id": "0", "rollout_id": "0-0", "turns": [{"invocation_id": "r", "task_id": "1", "rollout_id": "0-0", "turn_no": 1, "timestamp": 1, "step_count": 0}]}),
        json!({"task_id": "0", "rollout_id": "0-0", "turns": [{"invocation_id": "r", "task_id": "0", "rollout_id": "0-0", "turn_no": 0, "timestamp": 1, "step_count": 0}]}),
        json!({"task_id": "0", "rollout_id": "0-0", "turns": [{"invocation_id": "r", "task_id": "0", "rollout_id": "0-0", "turn_no": 1, "timestamp": 1, "step_count": 0, "model_calls": [{"response_id": "x"}]}]}),
        json!({"task_id": "0", "rollout_id": "0-0", "model_calls": [{"model_call_id": "a"}, {"model_call_id": "a"}]}),
    ] {
        assert!(trajectory::validate(&bad).is_err(), "{bad}");
    }
    // Pydantic's lax ints: "2" and 2.0 are turn 2.
    let lax = json!({"task_id": "0", "rollout_id": "0-0", "turns": [{"invocation_id": "r", "task_id": "0", "rollout_id": "0-0", "turn_no": "2", "timestamp": "1.5", "step_count": 1.0}]});
    assert_eq!(trajectory::validate(&lax).unwrap().turns[0].turn_no, 2);
}
