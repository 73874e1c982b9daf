//! What happens to a `/run` result: the row's keys merged in, then one of three destinations by
//! the sentinel keys; and the sidecar rows gymscope writes for failures upstream would crash on.

use super::Row;
use crate::gym::keys::{
    AGENT_REF, ATTEMPT_INDEX, FAILURE_CLASS, NO_PERSIST, ROLLOUT_ID, ROLLOUT_INDEX, SKILLS_REF,
    TASK_INDEX,
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

/// Sets the row's keys on the result (overwriting in place, else appended), as upstream does.
pub fn merge_row_keys(result: &mut Row, row: &Row) {
    for key in [TASK_INDEX, ROLLOUT_INDEX, AGENT_REF] {
        result.insert(key.into(), row.get(key).cloned().unwrap_or(Value::Null));
    }
    for key in [SKILLS_REF, ATTEMPT_INDEX, ROLLOUT_ID] {
        if let Some(v) = row.get(key) {
            result.insert(key.into(), v.clone());
        }
    }
}

/// Why gymscope itself recorded a failure (upstream would have aborted the run instead).
pub enum CollectorFailure<'a> {
    /// The agent answered with a non-2xx status.
    Http { status: u16, body: &'a [u8] },
    /// A 2xx answer that is not a JSON object.
    BadResponse { detail: String },
    /// `--timeout` elapsed.
    Timeout { seconds: f64 },
}

const BODY_CHARS: usize = 500;

/// The sidecar row for a collector-side failure: the row's keys, a `_ng_failure_class` (so resume
/// counts it as an attempt and retries it) and the details.
pub fn failure_row(row: &Row, failure: CollectorFailure) -> Row {
    let mut out = Row::new();
    merge_row_keys(&mut out, row);
    match failure {
        CollectorFailure::Http { status, body } => {
            out.insert(FAILURE_CLASS.into(), "http_error".into());
            out.insert("_ng_http_status".into(), status.into());
            out.insert(
                "_ng_http_body".into(),
                short(&String::from_utf8_lossy(body)).into(),
            );
        }
        CollectorFailure::BadResponse { detail } => {
            out.insert(FAILURE_CLASS.into(), "bad_response".into());
            out.insert("_ng_error".into(), short(&detail).into());
        }
        CollectorFailure::Timeout { seconds } => {
            out.insert(FAILURE_CLASS.into(), "collector_timeout".into());
            out.insert("_ng_timeout_seconds".into(), seconds.into());
        }
    }
    out
}

fn short(s: &str) -> String {
    match s.char_indices().nth(BODY_CHARS) {
        Some((at, _)) => format!("{}…", &s[..at]),
        None => s.to_string(),
    }
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
        merge_row_keys(&mut result, &src);
        assert_eq!(
            String::from_utf8(to_line(&result)).unwrap(),
            "{\"_ng_rollout_index\":3,\"reward\":1.0,\"_ng_task_index\":2,\"agent_ref\":{\"name\":\"a\"},\"_ng_attempt_index\":1}\n"
        );
        let f = failure_row(
            &src,
            CollectorFailure::Http {
                status: 500,
                body: "x".repeat(600).as_bytes(),
            },
        );
        assert_eq!(route(&f), Route::Sidecar);
        assert_eq!(f["_ng_http_body"].as_str().unwrap().chars().count(), 501);
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
