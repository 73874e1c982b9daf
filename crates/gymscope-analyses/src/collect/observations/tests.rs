//! Cases from upstream's `tests/unit_tests/test_rollout_observability.py` and
//! `test_rollout_collection.py` at `07d6b0d`.
#![allow(clippy::unwrap_used)]

use super::*;
use crate::collect::observe::attach_evidence;
use crate::gym::keys::{CAPTURE, OBSERVATIONS, TRAJECTORY};
use serde_json::json;

fn mref() -> Value {
    json!({"type": "responses_api_models", "name": "policy"})
}

fn by_pair(response_id: &str) -> Value {
    json!({"model_ref": mref(), "response_id": response_id})
}

fn bundle(records: Value, gaps: Value) -> Bundle {
    validate(&json!({"source": "test", "records": records, "gaps": gaps})).unwrap()
}

fn call(id: &str, response_id: Option<&str>, index: u64) -> Map<String, Value> {
    json!({"model_call_id": id, "response_id": response_id, "model_ref": mref(), "call_index": index})
        .as_object()
        .unwrap()
        .clone()
}

fn joined(b: &mut Bundle, calls: &[Map<String, Value>]) {
    let refs: Vec<&Map<String, Value>> = calls.iter().collect();
    join(b, &refs);
}

fn gaps_of<'a>(b: &'a Bundle, code: &str) -> Vec<&'a Value> {
    b.gaps
        .iter()
        .filter(|g| g["code"] == code)
        .map(|g| &g["detail"])
        .collect()
}

fn invalid(records: Value) -> String {
    validate(&json!({"source": "test", "records": records})).unwrap_err()
}

#[test]
fn bundles_are_validated_as_upstream_models_are() {
    for r in [
        json!({}),
        json!({"response_id": "resp-1"}),
        json!({"model_ref": mref()}),
    ] {
        let e = invalid(
            json!([{"kind": "agent_invocation", "invocation_id": "root", "model_calls": [r]}]),
        );
        assert!(
            e.contains("model_call_id or both model_ref and response_id"),
            "{e}"
        );
    }
    let e = invalid(
        json!([{"kind": "agent_invocation", "invocation_id": "root"},
        {"kind": "agent_invocation", "invocation_id": "root"}]),
    );
    assert!(e.contains("invocation_id must be unique"), "{e}");
    for cycle in [
        json!([{"kind": "agent_invocation", "invocation_id": "root", "parent_invocation_id": "root"}]),
        json!([{"kind": "agent_invocation", "invocation_id": "a", "parent_invocation_id": "b"},
               {"kind": "agent_invocation", "invocation_id": "b", "parent_invocation_id": "a"}]),
    ] {
        assert!(invalid(cycle).contains("must not form a cycle"));
    }
    // A parent the producer did not see is fine.
    let b = bundle(
        json!([{"kind": "agent_invocation", "invocation_id": "child", "parent_invocation_id": "unobserved"}]),
        json!([]),
    );
    assert_eq!(b.records[0]["parent_invocation_id"], "unobserved");
    assert!(
        invalid(json!([{"kind": "agent_invocation", "invocation_id": "r",
        "model_calls": [{"model_call_id": "c", "producer_extension": 1}]}]))
        .contains("producer_extension")
    );
    // `output` belongs to trajectory tool calls only.
    assert!(invalid(
        json!([{"kind": "tool_call", "invocation_id": "root", "tool_call_id": "t", "output": "x"}])
    )
    .contains("output"));
    assert!(invalid(json!([{"kind": "turn"}])).contains("kind"));
    assert!(invalid(json!([{"invocation_id": "root"}])).contains("kind"));
    for timing in [
        json!({"duration_ms": -1}),
        json!({"started_at": 2.0, "completed_at": 1.0}),
    ] {
        let mut r = json!({"kind": "tool_call", "invocation_id": "root", "tool_call_id": "c"});
        r.as_object_mut()
            .unwrap()
            .extend(timing.as_object().unwrap().clone());
        invalid(json!([r]));
    }
    invalid(json!([{"kind": "agent_invocation", "invocation_id": "root", "duration_ms": -1}]));
    invalid(json!([{"kind": "context_compaction", "invocation_id": "root", "tokens_before": -1}]));
    invalid(json!([{"kind": "context_compaction", "invocation_id": "root", "tokens_after": -1}]));
    invalid(json!([{"kind": "sandbox", "role": "agent", "cpu_time_s": -1}]));
    invalid(json!([{"kind": "sandbox"}]));
    assert!(validate(&json!({"records": []}))
        .unwrap_err()
        .contains("source"));
    // Producer-reported counts stay; the dump fills every field in order.
    let b = bundle(
        json!([{"kind": "context_compaction", "invocation_id": "root", "tokens_before": 10,
            "tokens_after": 11, "outcome": "completed"}, {"kind": "sandbox", "role": "agent"}]),
        json!([{"code": "x"}]),
    );
    assert_eq!(
        b.dump(),
        json!({"source": "test", "records": [
            {"kind": "context_compaction", "invocation_id": "root", "observed_at": null, "trigger": null,
             "tokens_before": 10, "tokens_after": 11, "outcome": "completed", "summary": null,
             "first_kept_item_id": null, "before_model_call": null, "model_calls": [], "after_model_call": null},
            {"kind": "sandbox", "role": "agent", "provider": null, "sandbox_id": null, "outcome": "unknown",
             "exit_code": null, "wall_time_s": null, "cpu_time_s": null, "peak_memory_mib": null,
             "resource_usage_source": null, "error_type": null}],
         "gaps": [{"code": "x", "invocation_id": null, "detail": null}]})
    );
}

#[test]
fn exact_references_resolve_and_unowned_calls_are_reported() {
    let mut b = bundle(
        json!([{"kind": "agent_invocation", "invocation_id": "root", "model_calls": [by_pair("resp-1")]}]),
        json!([{"code": "model_call_ownership_unavailable", "detail": "direct_provider"},
               {"code": "model_call_ownership_unavailable", "detail": "capture:stale"}]),
    );
    joined(
        &mut b,
        &[call("call-1", Some("resp-1"), 0), call("call-2", None, 1)],
    );
    assert_eq!(
        b.records[0]["model_calls"],
        json!([{"model_call_id": "call-1", "model_ref": mref(), "response_id": "resp-1"}])
    );
    assert_eq!(
        gaps_of(&b, "model_call_ownership_unavailable"),
        [
            &json!("direct_provider"),
            &json!("capture:call-2:call_index=1")
        ]
    );
}

#[test]
fn ambiguous_response_ids_are_not_guessed() {
    let mut b = bundle(
        json!([{"kind": "agent_invocation", "invocation_id": "root", "model_calls": [by_pair("resp-1")]}]),
        json!([]),
    );
    joined(
        &mut b,
        &[
            call("call-1", Some("resp-1"), 0),
            call("call-2", Some("resp-1"), 1),
        ],
    );
    assert_eq!(b.records[0]["model_calls"][0]["model_call_id"], Value::Null);
    assert_eq!(
        gaps_of(&b, "model_call_reference_ambiguous"),
        [&json!("resp-1")]
    );
    assert_eq!(
        gaps_of(&b, "model_call_ownership_unavailable"),
        [
            &json!("capture:call-1:call_index=0"),
            &json!("capture:call-2:call_index=1")
        ]
    );
}

#[test]
fn conflicting_and_unmatched_references_are_gaps_and_joining_twice_changes_nothing() {
    let mut b = bundle(
        json!([{"kind": "agent_invocation", "invocation_id": "root", "model_calls": [
            {"model_call_id": "call-1"}, by_pair("resp-1"), {"model_call_id": "missing"}]}]),
        json!([{"code": "model_call_ownership_unavailable", "invocation_id": "root", "detail": "producer gap"}]),
    );
    let calls = [call("call-1", Some("resp-1"), 0)];
    joined(&mut b, &calls);
    let once = b.clone();
    joined(&mut b, &calls);
    assert_eq!(b, once);
    let codes: HashSet<&str> = b.gaps.iter().filter_map(|g| g["code"].as_str()).collect();
    assert_eq!(
        codes,
        HashSet::from([
            "model_call_ownership_unavailable",
            "model_call_reference_conflict",
            "model_call_reference_unmatched"
        ])
    );
    assert_eq!(
        gaps_of(&b, "model_call_reference_conflict"),
        [&json!("call-1")]
    );
    assert_eq!(
        gaps_of(&b, "model_call_reference_unmatched"),
        [&json!("missing")]
    );
    assert!(b.gaps.iter().any(|g| g["detail"] == "producer gap"));
}

#[test]
fn compaction_boundaries_resolve_within_their_invocation_only() {
    let mut b = bundle(
        json!([{"kind": "agent_invocation", "invocation_id": "root",
                "model_calls": [by_pair("before"), by_pair("compaction"), by_pair("after")]},
               {"kind": "context_compaction", "invocation_id": "root", "before_model_call": by_pair("before"),
                "model_calls": [by_pair("compaction")], "after_model_call": by_pair("after")}]),
        json!([]),
    );
    joined(
        &mut b,
        &[
            call("call-before", Some("before"), 0),
            call("call-compaction", Some("compaction"), 1),
            call("call-after", Some("after"), 2),
        ],
    );
    let c = &b.records[1];
    assert_eq!(c["before_model_call"]["model_call_id"], "call-before");
    assert_eq!(c["model_calls"][0]["model_call_id"], "call-compaction");
    assert_eq!(c["after_model_call"]["model_call_id"], "call-after");
    assert_eq!(b.gaps, Vec::<Value>::new());

    let mut b = bundle(
        json!([{"kind": "agent_invocation", "invocation_id": "root"},
               {"kind": "agent_invocation", "invocation_id": "other", "model_calls": [by_pair("owned")]},
               {"kind": "context_compaction", "invocation_id": "root", "before_model_call": by_pair("owned"),
                "model_calls": [by_pair("owned"), by_pair("unowned")]}]),
        json!([]),
    );
    joined(
        &mut b,
        &[
            call("call-owned", Some("owned"), 0),
            call("call-unowned", Some("unowned"), 1),
        ],
    );
    let c = &b.records[2];
    assert_eq!(c["before_model_call"]["model_call_id"], Value::Null);
    assert!(c["model_calls"]
        .as_array()
        .unwrap()
        .iter()
        .all(|r| r["model_call_id"].is_null()));
    let root: HashSet<(String, String)> = b
        .gaps
        .iter()
        .filter(|g| g["invocation_id"] == "root")
        .map(|g| {
            (
                g["code"].as_str().unwrap().into(),
                g["detail"].as_str().unwrap().into(),
            )
        })
        .collect();
    let expected: HashSet<(String, String)> = [
        (
            "model_call_reference_conflict",
            "before_model_call:call-owned",
        ),
        ("model_call_reference_conflict", "model_calls:call-owned"),
        (
            "model_call_ownership_unavailable",
            "model_calls:call-unowned",
        ),
    ]
    .into_iter()
    .map(|(a, b)| (a.into(), b.into()))
    .collect();
    assert_eq!(root, expected);
}

fn row() -> Map<String, Value> {
    json!({"_ng_task_index": 2, "_ng_rollout_index": 3})
        .as_object()
        .unwrap()
        .clone()
}

#[test]
fn the_trajectory_merges_producer_observations_and_capture() {
    let mut result = row();
    result.extend(json!({
        "ng_trajectory": {"task_id": "2", "rollout_id": "2-3",
            "invocations": [{"invocation_id": "root", "status": "completed", "conversation": [
                {"type": "function_call_output", "call_id": "tool-1", "output": "result"},
                {"type": "function_call_output", "call_id": "observed-only", "output": "new"}]}],
            "tool_calls": [
                {"invocation_id": "root", "tool_call_id": "producer-only", "output": "kept"},
                {"invocation_id": "root", "tool_call_id": "tool-1", "output": "stale", "status": "failed",
                 "started_at": 10.2, "completed_at": 10.4, "duration_ms": 200.0}]},
        "ng_agent_observations": {"source": "test", "records": [
            {"kind": "agent_invocation", "invocation_id": "root"},
            {"kind": "agent_invocation", "invocation_id": "observed"},
            {"kind": "tool_call", "invocation_id": "root", "tool_call_id": "tool-1"},
            {"kind": "tool_call", "invocation_id": "root", "tool_call_id": "observed-only", "status": "completed",
             "started_at": 10.2, "completed_at": 10.4, "duration_ms": 200.0}]},
        "ng_model_call_capture": {"calls": [{"model_call_id": "capture-only"}]}
    }).as_object().unwrap().clone());
    attach_evidence(&row(), &mut result, None);
    let t = &result[TRAJECTORY];
    let ids: Vec<&Value> = t["invocations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| &i["invocation_id"])
        .collect();
    assert_eq!(ids, [&json!("root"), &json!("observed")]);
    assert_eq!(t["invocations"][0]["status"], "completed");
    assert_eq!(
        t["invocations"][0]["conversation"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
    assert_eq!(t["model_calls"][0]["model_call_id"], "capture-only");
    let tools = t["tool_calls"].as_array().unwrap();
    assert_eq!(tools.len(), 3);
    assert_eq!(
        (&tools[0]["tool_call_id"], &tools[0]["output"]),
        (&json!("producer-only"), &json!("kept"))
    );
    let m = &tools[1];
    assert_eq!(
        [
            &m["output"],
            &m["status"],
            &m["started_at"],
            &m["completed_at"],
            &m["duration_ms"]
        ],
        [
            &json!("result"),
            &json!("failed"),
            &json!(10.2),
            &json!(10.4),
            &json!(200.0)
        ]
    );
    assert_eq!(
        (&tools[2]["tool_call_id"], &tools[2]["output"]),
        (&json!("observed-only"), &json!("new"))
    );
    assert_eq!(tools[2]["kind"], "tool_call");
    assert_eq!(tools[2]["sandbox_id"], Value::Null);
}

#[test]
fn invalid_observations_are_a_gap_and_a_failed_projection_lands_on_them() {
    let mut result = row();
    result.insert(
        OBSERVATIONS.into(),
        json!({"source": "hermes", "records": [{"kind": "turn"}]}),
    );
    attach_evidence(&row(), &mut result, None);
    let gaps = &result[TRAJECTORY]["gaps"];
    assert_eq!(
        gaps[0],
        json!({"code": "agent_observations_invalid", "invocation_id": null, "detail": "ValidationError"})
    );
    // Observations are not rewritten without a capture to join them with.
    assert_eq!(result[OBSERVATIONS]["records"], json!([{"kind": "turn"}]));

    // No rollout indices: no trajectory; the gap goes to the observations (no capture).
    let bare = Map::new();
    let mut result = Map::new();
    result.insert(OBSERVATIONS.into(), json!({"source": "hermes"}));
    attach_evidence(&bare, &mut result, None);
    assert!(result.get(TRAJECTORY).is_none());
    assert_eq!(
        result[OBSERVATIONS]["gaps"],
        json!([{"code": "trajectory_projection_failed", "detail": "KeyError"}])
    );
}

#[test]
fn with_a_capture_observations_are_joined_or_their_join_fails() {
    let ex = |id: &str, rid: &str| {
        format!(
            r#"{{"model_call_id": "{id}", "model_ref": {{"type": "responses_api_models", "name": "policy"}}, "response": {{"id": "{rid}"}}}}"#
        )
        .into_bytes()
    };
    let read = crate::collect::observe::CaptureRead {
        found: true,
        lines: vec![ex("m1", "r1"), ex("m2", "r2")],
        ..Default::default()
    };
    let mut result = row();
    result.insert(
        OBSERVATIONS.into(),
        json!({"source": "hermes", "records": [
            {"kind": "agent_invocation", "invocation_id": "root", "model_calls": [by_pair("r1")],
             "conversation": [{"type": "message", "role": "user", "content": "q"}]}]}),
    );
    attach_evidence(&row(), &mut result, Some(&read));
    let obs = &result[OBSERVATIONS];
    assert_eq!(obs["records"][0]["model_calls"][0]["model_call_id"], "m1");
    assert_eq!(obs["records"][0]["status"], "unknown");
    assert_eq!(
        obs["gaps"],
        json!([{"code": "model_call_ownership_unavailable", "invocation_id": null, "detail": "capture:m2:call_index=1"}])
    );
    let t = &result[TRAJECTORY];
    assert_eq!(
        t["invocations"][0]["model_calls"],
        obs["records"][0]["model_calls"]
    );
    assert_eq!(t["model_calls"].as_array().unwrap().len(), 2);
    assert!(t["gaps"]
        .as_array()
        .unwrap()
        .iter()
        .any(|g| g["code"] == "model_call_ownership_unavailable"));
    assert!(result[CAPTURE].get("gaps").is_none());

    let mut result = row();
    result.insert(OBSERVATIONS.into(), json!({"records": []}));
    attach_evidence(&row(), &mut result, Some(&read));
    assert_eq!(
        result[CAPTURE]["gaps"],
        json!([{"code": "agent_observation_join_failed"}])
    );
    assert_eq!(result[OBSERVATIONS], json!({"records": []}));
    assert!(result[TRAJECTORY]["gaps"]
        .as_array()
        .unwrap()
        .iter()
        .any(|g| g["code"] == "agent_observations_invalid"));
}

#[test]
fn a_tool_timing_that_contradicts_the_producer_is_a_gap_and_keeps_what_was_folded_in() {
    let mut result = row();
    result.extend(
        json!({
            "ng_trajectory": {"task_id": "2", "rollout_id": "2-3",
                "tool_calls": [{"invocation_id": "root", "tool_call_id": "t", "completed_at": 5.0}]},
            "ng_agent_observations": {"source": "test", "records": [
                {"kind": "agent_invocation", "invocation_id": "observed"},
                {"kind": "tool_call", "invocation_id": "root", "tool_call_id": "t", "started_at": 6.0}],
                "gaps": [{"code": "producer_note"}]}
        })
        .as_object()
        .unwrap()
        .clone(),
    );
    attach_evidence(&row(), &mut result, None);
    let t = &result[TRAJECTORY];
    assert_eq!(t["invocations"][0]["invocation_id"], "observed");
    assert_eq!(t["tool_calls"][0]["started_at"], Value::Null);
    let codes: Vec<&str> = t["gaps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["code"].as_str().unwrap())
        .collect();
    assert_eq!(codes[..2], ["producer_note", "agent_observations_invalid"]);
}
