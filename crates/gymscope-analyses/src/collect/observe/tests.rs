#![allow(clippy::unwrap_used)]

use super::*;
use crate::gym::keys::{CAPTURE, TRAJECTORY};
use serde_json::json;

fn row(v: Value) -> Row {
    v.as_object().unwrap().clone()
}

#[test]
fn rollout_ids_as_upstream_keys_them() {
    let id = |v: Value| rollout_id(&row(v));
    assert_eq!(
        id(json!({"_ng_task_index": 4, "_ng_rollout_index": 1})),
        Ok(Some("4-1".into()))
    );
    assert_eq!(
        id(json!({"_ng_task_index": 4, "_ng_rollout_index": 1, "_ng_attempt_index": 2})),
        Ok(Some("4-1-a2".into()))
    );
    assert_eq!(
        id(json!({"_ng_rollout_id": "run.7_x", "_ng_task_index": 4, "_ng_rollout_index": 1})),
        Ok(Some("run.7_x".into()))
    );
    assert!(
        id(json!({"_ng_rollout_id": "../etc", "_ng_task_index": 4, "_ng_rollout_index": 1}))
            .is_err()
    );
    assert!(id(json!({"_ng_rollout_id": 5})).is_err());
    assert_eq!(id(json!({"_ng_task_index": 4})), Ok(None));
}

#[test]
fn chat_and_messages_exchanges_normalize_like_responses() {
    let chat = row(
        json!({"model_call_id": "m1", "dialect": "chat", "status_code": 200, "latency_ms": 5,
        "response": {"id": "c1", "choices": [{"finish_reason": "length", "message": {"content": "",
            "reasoning_content": "think", "tool_calls": [{"id": "t1", "function": {"name": "f", "arguments": "{bad"}}]}}],
            "usage": {"prompt_tokens": 7, "completion_tokens": 3, "prompt_tokens_details": {"cached_tokens": 2}}}}),
    );
    let r = call_record(&chat, 3).unwrap();
    assert_eq!(r["finish_reason"], "length");
    assert_eq!(
        r["tool_calls"],
        json!([{"call_id": "t1", "name": "f", "arguments": {"_raw": "{bad"}}])
    );
    assert_eq!(r["reasoning_content"], "think");
    assert_eq!(
        (
            r["tokens_in"].clone(),
            r["tokens_out"].clone(),
            r["tokens_total"].clone()
        ),
        (json!(7), json!(3), json!(10))
    );
    assert_eq!(
        (r["cache_hit"].clone(), r["cached_tokens"].clone()),
        (json!(true), json!(2))
    );
    assert_eq!(r["latency_total_ms"], json!(5.0));
    assert_eq!(r["call_index"], 3);
    // Anthropic: cache reads and writes count into the prompt size.
    let messages = row(
        json!({"response": {"id": "msg", "stop_reason": "end_turn", "content": [
        {"type": "thinking", "thinking": "hm"}, {"type": "tool_use", "id": "tu", "name": "g", "input": {"a": 1}}],
        "usage": {"input_tokens": 10, "output_tokens": 4, "cache_read_input_tokens": 100, "cache_creation_input_tokens": 5}}}),
    );
    let r = call_record(&messages, 0).unwrap();
    assert_eq!(r["tokens_in"], 115);
    assert_eq!(r["cache_creation_tokens"], 5);
    assert_eq!(r["cached_tokens"], 100);
    assert_eq!(r["finish_reason"], "end_turn");
    assert_eq!(
        r["tool_calls"],
        json!([{"call_id": "tu", "name": "g", "arguments": {"a": 1}}])
    );
    assert!(call_record(
        &row(json!({"model_ref": {"type": "agents", "name": "x"}})),
        0
    )
    .is_err());
    assert!(call_record(&row(json!({"status_code": "oops"})), 0).is_err());
}

#[test]
fn where_a_response_came_from_is_kept_in_v07s_order() {
    let ex = row(json!({"response": {"id": "r"}, "client_session_id": "s1",
        "upstream_attempted": "yes", "response_source": "local", "upstream_status_code": "503",
        "local_response_reason": "budget"}));
    let r = call_record(&ex, 0).unwrap();
    let keys: Vec<&str> = r.keys().map(String::as_str).collect();
    let at = |k: &str| keys.iter().position(|x| *x == k).unwrap();
    assert_eq!(at("client_session_id"), at("response_id") + 1);
    assert_eq!(
        keys[at("finish_reason") + 1..at("finish_reason") + 5],
        [
            "upstream_attempted",
            "response_source",
            "upstream_status_code",
            "local_response_reason"
        ]
    );
    assert_eq!(
        (&r["upstream_attempted"], &r["upstream_status_code"]),
        (&json!(true), &json!(503))
    );
    assert!(call_record(&row(json!({"response_source": "cache"})), 0).is_err());
}

#[test]
fn unknown_metrics_stay_null_not_zero() {
    let read = CaptureRead {
        found: true,
        lines: vec![b"{\"response\": null}".to_vec(), b"[]".to_vec()],
        ..CaptureRead::default()
    };
    let a = attachment("0-0", &read, true);
    assert_eq!(
        a["metrics"],
        json!({"tokens_in": null, "tokens_out": null, "tokens_reasoning": null,
        "tokens_total": null, "cached_tokens": null, "latency_total_ms": null, "num_calls": 1})
    );
    assert_eq!(
        a["gaps"],
        json!([{"code": "model_call_capture_records_unreadable", "detail": "count=1"}])
    );
    let missing = attachment("0-0", &CaptureRead::default(), true);
    assert_eq!(
        missing["gaps"],
        json!([{"code": "model_call_capture_no_records"}])
    );
}

#[test]
fn a_failed_projection_keeps_the_payloads_and_says_so() {
    let r = row(json!({"_ng_task_index": 0, "_ng_rollout_index": 0}));
    let mut result = r.clone();
    let ex = br#"{"model_call_id": "m", "latency_ms": -3, "request": {"q": 1}, "response": {"id": "x"}}"#;
    let read = CaptureRead {
        found: true,
        lines: vec![ex.to_vec()],
        ..CaptureRead::default()
    };
    attach_evidence(&r, &mut result, Some(&read));
    assert!(result.get(TRAJECTORY).is_none());
    let cap = &result[CAPTURE];
    assert_eq!(cap["calls"][0]["request"], json!({"q": 1}));
    assert_eq!(
        cap["gaps"],
        json!([{"code": "trajectory_projection_failed", "detail": "ValidationError"}])
    );
    // An invalid producer trajectory is a gap, not a failure.
    let mut result = r.clone();
    result.insert(TRAJECTORY.into(), json!({"task_id": 1}));
    attach_evidence(&r, &mut result, None);
    assert_eq!(
        result[TRAJECTORY]["gaps"][0],
        json!({"code": "producer_trajectory_invalid", "invocation_id": null, "detail": "ValidationError"})
    );
    // Rows without evidence are left alone.
    let mut plain = r.clone();
    attach_evidence(&r, &mut plain, None);
    assert_eq!(plain, r);
}
