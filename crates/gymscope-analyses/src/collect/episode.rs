//! Taskset rows through an environment server (NeMo Gym v0.7.0 `rollout_collection.py`
//! `_episode_request_body`, `_is_episode_response`, `_episode_record`): the `/run` body is an
//! episode request, and the server's episode reply becomes the stored record: a `failure`
//! becomes a sidecar row (`environment_server_failed`), a `result` is stored as returned with
//! `_ng_task_id` added.

use super::observe::capture::rollout_id;
use super::Row;
use crate::gym::keys::{ATTEMPT_INDEX, FAILURE_CLASS, FAILURE_TERMINAL};
use serde_json::{json, Value};

/// The failure class of a taskset episode the server reports as failed.
pub const ENVIRONMENT_SERVER_FAILED: &str = "environment_server_failed";

/// `{"episode_id": {"rollout_id": R, "attempt": N}, "task": {"task_id": …, "task_input": …}}`.
pub fn request_body(row: &Row) -> Result<Vec<u8>, String> {
    let attempt = match row.get(ATTEMPT_INDEX) {
        None => 0,
        Some(Value::Number(n)) if n.as_u64().is_some() => n.as_u64().unwrap_or(0),
        Some(other) => return Err(format!("Invalid episode attempt: {other}")),
    };
    let mut base = row.clone();
    base.shift_remove(ATTEMPT_INDEX);
    let id = rollout_id(&base)?.ok_or(
        "a taskset row needs `_ng_task_index` and `_ng_rollout_index` (or `_ng_rollout_id`)",
    )?;
    let body = json!({
        "episode_id": {"rollout_id": id, "attempt": attempt},
        "task": {"task_id": row.get("task_id"), "task_input": row.get("task_input")},
    });
    Ok(serde_json::to_vec(&body).expect("a Value serializes"))
}

/// An episode reply: `episode_id` and `task_id` objects and a `result` or `failure` key.
pub fn is_reply(reply: &Row) -> bool {
    reply.get("episode_id").is_some_and(Value::is_object)
        && reply.get("task_id").is_some_and(Value::is_object)
        && (reply.contains_key("result") || reply.contains_key("failure"))
}

/// Keys collection writes itself: a result may not carry them.
fn reserved(key: &str) -> bool {
    key.starts_with("_ng_") || matches!(key, "ng_trajectory" | "ng_model_call_capture" | "ng_perf")
}

/// The stored record of an episode reply (`is_reply`), or why the reply is refused.
pub fn record(mut reply: Row) -> Result<Row, String> {
    let task_id = reply.remove("task_id").unwrap_or(Value::Null);
    // Messages show it as Python's `{task_id!r}`.
    let shown = crate::gym::py::repr(&task_id);
    let mut out = Row::new();
    match reply.remove("failure") {
        Some(Value::Null) | None => {}
        Some(Value::Object(failure)) => {
            out.insert("_ng_task_id".into(), task_id);
            out.insert(FAILURE_CLASS.into(), ENVIRONMENT_SERVER_FAILED.into());
            let terminal = failure.get("terminal").is_some_and(crate::gym::py::truthy);
            out.insert(FAILURE_TERMINAL.into(), terminal.into());
            out.insert(
                "_ng_failure_message".into(),
                failure
                    .get("failure_reason")
                    .cloned()
                    .unwrap_or(Value::Null),
            );
            for (from, to) in [
                ("stage", "_ng_failure_stage"),
                ("partial_response", "_ng_failure_partial_response"),
            ] {
                if let Some(v) = failure.get(from).filter(|v| !v.is_null()) {
                    out.insert(to.into(), v.clone());
                }
            }
            return Ok(out);
        }
        Some(other) => {
            return Err(format!(
                "environment server reply for task {shown} carries a non-object failure: {}",
                crate::gym::py::repr(&other)
            ))
        }
    }
    let Some(Value::Object(result)) = reply.remove("result") else {
        return Err(format!(
            "environment server reply for task {shown} carries a non-object result"
        ));
    };
    let mut taken: Vec<&str> = result
        .keys()
        .map(String::as_str)
        .filter(|k| reserved(k))
        .collect();
    if !taken.is_empty() {
        taken.sort_unstable();
        let listed: Vec<String> = taken.iter().map(|k| crate::gym::py::str_repr(k)).collect();
        return Err(format!(
            "environment server result for task {shown} uses keys reserved for rollout collection: [{}]",
            listed.join(", ")
        ));
    }
    let mut out = result;
    out.insert("_ng_task_id".into(), task_id);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(v: Value) -> Row {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn requests_and_replies_are_v07s_episodes() {
        let r = row(
            json!({"task_id": {"taskset": "t", "id": 3}, "task_input": {"q": 1}, "_ng_task_index": 0, "_ng_rollout_index": 2, "_ng_attempt_index": 1}),
        );
        assert_eq!(
            String::from_utf8(request_body(&r).unwrap()).unwrap(),
            r#"{"episode_id":{"rollout_id":"0-2","attempt":1},"task":{"task_id":{"taskset":"t","id":3},"task_input":{"q":1}}}"#
        );
        let reply = row(json!({"episode_id": {}, "task_id": {"id": 3}, "result": {"reward": 1.0}}));
        assert!(is_reply(&reply));
        assert_eq!(
            serde_json::to_string(&record(reply).unwrap()).unwrap(),
            r#"{"reward":1.0,"_ng_task_id":{"id":3}}"#
        );
        let failed = row(
            json!({"episode_id": {}, "task_id": {"id": 3}, "failure": {"failure_reason": "boom", "terminal": 1, "stage": null}}),
        );
        assert_eq!(
            serde_json::to_string(&record(failed).unwrap()).unwrap(),
            r#"{"_ng_task_id":{"id":3},"_ng_failure_class":"environment_server_failed","_ng_failure_terminal":true,"_ng_failure_message":"boom"}"#
        );
        let bad =
            row(json!({"episode_id": {}, "task_id": {}, "result": {"_ng_x": 1, "ng_perf": 2}}));
        assert_eq!(
            record(bad).unwrap_err(),
            "environment server result for task {} uses keys reserved for rollout collection: ['_ng_x', 'ng_perf']"
        );
        assert!(!is_reply(&row(json!({"reward": 1.0}))));
    }
}
