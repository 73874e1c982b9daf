//! What happens to a `/run` result: the row's keys merged in, then one of three destinations by
//! the sentinel keys; and the sidecar rows gymscope writes for failures upstream would crash on.

use super::environment::{self, Destination};
use super::Row;
use crate::gym::keys::{
    AGENT_REF, ATTEMPT_INDEX, ENVIRONMENT_SERVER, FAILURE_CLASS, NO_PERSIST, ROLLOUT_ID,
    ROLLOUT_INDEX, SKILLS_REF, TASK_INDEX,
};
use crate::gym::py;
use serde_json::Value;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Route {
    /// A success: the main rollouts file.
    Main,
    /// A failure the agent classified (`_ng_failure_class`): `<stem>_failures.jsonl`.
    Sidecar,
    /// `_ng_no_persist` (kill-shaped): written nowhere, so resume runs it again.
    Nowhere,
}

/// Upstream's order of checks: `_ng_no_persist` truthy, then `_ng_failure_class` not None.
pub fn route(result: &Row) -> Route {
    if result.get(NO_PERSIST).is_some_and(py::truthy) {
        Route::Nowhere
    } else if result.get(FAILURE_CLASS).is_some_and(|v| !v.is_null()) {
        Route::Sidecar
    } else {
        Route::Main
    }
}

/// A sidecar row's `_ng_failure_class` as Python's `str()` shows it (v0.7.0 counts by it).
pub fn failure_class(result: &Row) -> String {
    match result.get(FAILURE_CLASS) {
        Some(Value::String(s)) => s.clone(),
        Some(other) => py::repr(other),
        None => "None".into(),
    }
}

/// Sets the row's keys on the result (overwriting in place, else appended), as v0.7.0 does
/// (`rollout_collection.py`): the indices always, `agent_ref` and the rest only when the row
/// has them (a taskset row names no agent); last, the environment server it went through.
pub fn merge_row_keys(result: &mut Row, row: &Row, destination: &Destination) {
    for key in [TASK_INDEX, ROLLOUT_INDEX] {
        result.insert(key.into(), row.get(key).cloned().unwrap_or(Value::Null));
    }
    for key in [
        AGENT_REF,
        "task_source",
        SKILLS_REF,
        ATTEMPT_INDEX,
        ROLLOUT_ID,
    ] {
        if let Some(v) = row.get(key) {
            result.insert(key.into(), v.clone());
        }
    }
    environment::stamp(result, destination);
}

/// Why a `/run` came back without a result (v0.7.0 records these with
/// `route_failures_to_sidecar`; gymscope always records them, unless `--fail-fast`).
pub enum CollectorFailure<'a> {
    /// The server answered with a non-2xx status; `reason` is its reason phrase, `url` where the
    /// request went.
    Http {
        status: u16,
        reason: &'a str,
        url: &'a str,
        body: &'a [u8],
    },
    /// A 2xx answer that is not a JSON object.
    BadResponse { status: u16, detail: String },
    /// `--timeout` elapsed.
    Timeout,
}

/// Statuses something in front of the server answers with: the rollout did not run (v0.7.0
/// `_SERVER_DID_NOT_RUN_STATUSES`).
const SERVER_DID_NOT_RUN: [u16; 4] = [429, 502, 503, 504];

/// The kept part of an error body, in characters (v0.7.0 `_MAX_FAILURE_BODY_CHARS`).
const BODY_CHARS: usize = 2000;

/// The sidecar row for a `/run` without a result, as v0.7.0's `_agent_request_failure_row`
/// writes it: `_ng_failure_class` (`agent_run_error` when a server answered with a status other
/// than a gateway's, else `agent_request_failed`), `_ng_failure_type`, `_ng_failure_message`,
/// `_ng_failure_http_status`, `_ng_failure_response_body`; then the row's keys.
pub fn failure_row(row: &Row, failure: CollectorFailure, destination: &Destination) -> Row {
    let (status, kind, message, body): (Option<u16>, &str, String, Option<&[u8]>) = match failure {
        CollectorFailure::Http {
            status,
            reason,
            url,
            body,
        } => (
            Some(status),
            "ClientResponseError",
            format!(
                "{status}, message={}, url={}",
                py::str_repr(reason),
                py::str_repr(url)
            ),
            Some(body),
        ),
        CollectorFailure::BadResponse { status, detail } => {
            (Some(status), "JSONDecodeError", detail, None)
        }
        CollectorFailure::Timeout => (None, "TimeoutError", "TimeoutError()".into(), None),
    };
    let ran = status.is_some_and(|s| !SERVER_DID_NOT_RUN.contains(&s));
    let mut out = Row::new();
    out.insert(
        FAILURE_CLASS.into(),
        if ran {
            "agent_run_error"
        } else {
            "agent_request_failed"
        }
        .into(),
    );
    out.insert("_ng_failure_type".into(), kind.into());
    out.insert("_ng_failure_message".into(), message.into());
    out.insert(
        "_ng_failure_http_status".into(),
        status.map_or(Value::Null, Value::from),
    );
    out.insert(
        "_ng_failure_response_body".into(),
        body.map_or(Value::Null, truncated_body),
    );
    merge_row_keys(&mut out, row, destination);
    out
}

/// A body as v0.7.0 keeps it: its first 8,000 bytes decoded (invalid UTF-8 replaced), cut to
/// 2,000 characters, `…` when the body was longer than 2,000 bytes; null when empty.
fn truncated_body(body: &[u8]) -> Value {
    if body.is_empty() {
        return Value::Null;
    }
    let text = String::from_utf8_lossy(&body[..body.len().min(BODY_CHARS * 4)]);
    let mut kept: String = text.chars().take(BODY_CHARS).collect();
    if body.len() > BODY_CHARS {
        kept.push('…');
    }
    Value::from(kept)
}

/// The line v0.7.0 prints for a failed `/run` (`[rollout_collection] /run failed status=S
/// row={…}`): the row's non-null task, rollout, agent name, environment server and taskset, as
/// `json.dumps(sort_keys=True)` writes them.
pub fn failure_line(row: &Row, status: Option<u16>) -> String {
    let agent = row
        .get(AGENT_REF)
        .and_then(|r| r.get("name"))
        .filter(|v| !v.is_null());
    let taskset = row
        .get("task_id")
        .and_then(|t| t.get("taskset"))
        .filter(|v| v.as_str().is_some_and(|s| !s.is_empty()));
    let mut summary: Vec<(&str, &Value)> = [
        (TASK_INDEX, row.get(TASK_INDEX)),
        (ROLLOUT_INDEX, row.get(ROLLOUT_INDEX)),
        ("agent_name", agent),
        ("environment_server", row.get(ENVIRONMENT_SERVER)),
        ("taskset", taskset),
    ]
    .into_iter()
    .filter_map(|(k, v)| v.filter(|v| !v.is_null()).map(|v| (k, v)))
    .collect();
    summary.sort_by(|a, b| a.0.cmp(b.0));
    let fields: Vec<String> = summary
        .iter()
        .map(|(k, v)| {
            format!(
                "{}: {}",
                py::json_dumps(&Value::from(*k)),
                py::json_dumps(v)
            )
        })
        .collect();
    format!(
        "[rollout_collection] /run failed status={} row={{{}}}",
        status.map_or("None".to_string(), |s| s.to_string()),
        fields.join(", ")
    )
}

/// The line v0.7.0 prints for every rollout routed to the sidecar (`🚨 [rollout_collection]
/// rollout dropped from the score: row={…} class=C error=E`, E the first 200 characters of the
/// failure's message).
pub fn dropped_line(row: &Row, failure: &Row) -> String {
    let summary = failure_line(row, None);
    let summary = summary
        .split_once(" row=")
        .map_or(summary.as_str(), |(_, r)| r);
    // Python's `str()` of a value.
    let text = |v: &Value| match v {
        Value::String(s) => s.clone(),
        other => py::repr(other),
    };
    let class = failure.get(FAILURE_CLASS).map_or("None".into(), text);
    let error: String = [failure.get("_ng_failure_message"), failure.get("error")]
        .into_iter()
        .flatten()
        .find(|v| py::truthy(v))
        .map(text)
        .unwrap_or_default()
        .chars()
        .take(200)
        .collect();
    format!("\u{1f6a8} [rollout_collection] rollout dropped from the score: row={summary} class={class} error={error}")
}

/// The numbers upstream's progress averages: top-level ints, floats and bools whose name does
/// not start with `_`.
pub fn progress_numbers(result: &Row) -> Vec<(String, f64)> {
    result
        .iter()
        .filter(|(k, _)| !k.starts_with('_'))
        .filter_map(|(k, v)| {
            let x = match v {
                Value::Bool(b) => f64::from(u8::from(*b)),
                Value::Number(n) => n.as_f64()?,
                _ => return None,
            };
            Some((k.clone(), x))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::collect::key::{parse_row, to_line};

    fn row(s: &str) -> Row {
        parse_row(s.as_bytes()).unwrap()
    }

    #[test]
    fn routes_by_sentinels_in_upstreams_order() {
        assert_eq!(route(&row(r#"{"reward":1.0}"#)), Route::Main);
        assert_eq!(route(&row(r#"{"_ng_failure_class":null}"#)), Route::Main);
        assert_eq!(
            route(&row(r#"{"_ng_failure_class":"transient"}"#)),
            Route::Sidecar
        );
        assert_eq!(
            route(&row(
                r#"{"_ng_failure_class":"kill_shaped","_ng_no_persist":true}"#
            )),
            Route::Nowhere
        );
        assert_eq!(
            route(&row(r#"{"_ng_failure_class":"x","_ng_no_persist":false}"#)),
            Route::Sidecar
        );
    }

    #[test]
    fn keys_merge_in_place_or_append() {
        let mut result = row(r#"{"_ng_rollout_index":"echoed","reward":1.0}"#);
        let src = row(
            r#"{"x":1,"agent_ref":{"name":"a"},"_ng_task_index":2,"_ng_rollout_index":3,"_ng_attempt_index":1}"#,
        );
        let server = Destination::Server {
            name: "a_env".into(),
            kind: "legacy_agent".into(),
        };
        merge_row_keys(&mut result, &src, &server);
        assert_eq!(
            String::from_utf8(to_line(&result)).unwrap(),
            "{\"_ng_rollout_index\":3,\"reward\":1.0,\"_ng_task_index\":2,\"agent_ref\":{\"name\":\"a\"},\"_ng_attempt_index\":1,\"_ng_environment_server\":\"a_env\",\"_ng_result_type\":\"legacy_agent\"}\n"
        );
    }

    #[test]
    fn failure_rows_are_v07s() {
        let src = row(r#"{"agent_ref":{"name":"a"},"_ng_task_index":2,"_ng_rollout_index":3}"#);
        let http = |status: u16, body: &[u8]| {
            failure_row(
                &src,
                CollectorFailure::Http {
                    status,
                    reason: "Internal Server Error",
                    url: "http://h:1/run",
                    body,
                },
                &Destination::Agent("a".into()),
            )
        };
        let f = http(500, "x".repeat(2500).as_bytes());
        assert_eq!(route(&f), Route::Sidecar);
        assert_eq!(f["_ng_failure_class"], "agent_run_error");
        assert_eq!(
            f["_ng_failure_message"],
            "500, message='Internal Server Error', url='http://h:1/run'"
        );
        let body = f["_ng_failure_response_body"].as_str().unwrap();
        assert_eq!((body.chars().count(), body.ends_with('…')), (2001, true));
        // A gateway's status says the rollout did not run; an empty body is null.
        let f = http(503, b"");
        assert_eq!(f["_ng_failure_class"], "agent_request_failed");
        assert!(f["_ng_failure_response_body"].is_null());
        // 1,200 characters in 3,000 bytes: under 2,000 characters, still marked cut (bytes count).
        let f = http(500, "é€".repeat(600).as_bytes());
        assert!(f["_ng_failure_response_body"]
            .as_str()
            .unwrap()
            .ends_with('…'));
        let server = Destination::Server {
            name: "a_env".into(),
            kind: "legacy_agent".into(),
        };
        let f = failure_row(&src, CollectorFailure::Timeout, &server);
        assert_eq!(f["_ng_environment_server"], "a_env");
        assert_eq!(
            (
                &f["_ng_failure_class"],
                &f["_ng_failure_type"],
                &f["_ng_failure_message"]
            ),
            (
                &Value::from("agent_request_failed"),
                &Value::from("TimeoutError"),
                &Value::from("TimeoutError()")
            )
        );
        assert_eq!(
            failure_line(&src, None),
            "[rollout_collection] /run failed status=None row={\"_ng_rollout_index\": 3, \"_ng_task_index\": 2, \"agent_name\": \"a\"}"
        );
        assert_eq!(
            dropped_line(&src, &f),
            "\u{1f6a8} [rollout_collection] rollout dropped from the score: row={\"_ng_rollout_index\": 3, \"_ng_task_index\": 2, \"agent_name\": \"a\"} class=agent_request_failed error=TimeoutError()"
        );
    }

    #[test]
    fn progress_numbers_skip_private_and_non_numeric() {
        let r = row(r#"{"reward":1,"ok":true,"_ng_task_index":0,"s":"x","f":0.5}"#);
        assert_eq!(
            progress_numbers(&r),
            [
                ("reward".into(), 1.0),
                ("ok".into(), 1.0),
                ("f".into(), 0.5)
            ]
        );
    }
}
