//! Model-call capture: the capture key of a request row, each captured exchange as upstream's
//! `ModelCallRecord` and the `ng_model_call_capture` of a rollout, as upstream's collector and
//! model servers write them (`nemo_gym/rollout_correlation.py`,
//! `nemo_gym/base_responses_api_model.py`, `nemo_gym/rollout_collection.py` @07d6b0d).

use crate::collect::Row;
use crate::gym::keys::{ATTEMPT_INDEX, ROLLOUT_ID, ROLLOUT_INDEX, TASK_INDEX};
use crate::gym::py;
use serde_json::{Map, Value};

/// The payloads of a captured call, which the trajectory holds once it is built.
pub(super) const PAYLOAD_KEYS: [&str; 4] = ["request", "response", "request_raw", "response_raw"];

/// Python's `str()` of a JSON scalar as the collector formats indices.
pub(super) fn py_str(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Bool(true) => "True".into(),
        Value::Bool(false) => "False".into(),
        Value::Null => "None".into(),
        other => other.to_string(),
    }
}

/// `_ng_rollout_id` when given (refused when malformed, never rewritten), else
/// `<task>-<rollout>`; `-a<n>` appended for attempts above 0. `None` without indices.
pub fn rollout_id(row: &Row) -> Result<Option<String>, String> {
    let base = match row.get(ROLLOUT_ID).filter(|v| !v.is_null()) {
        Some(Value::String(s))
            if s.chars().next().is_some_and(|c| c.is_ascii_alphanumeric())
                && s.chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-')) =>
        {
            s.clone()
        }
        Some(other) => {
            return Err(format!(
                "{ROLLOUT_ID} must be a string of letters, digits, dots, dashes or underscores starting with a letter or digit; got {other}"
            ))
        }
        None => match (row.get(TASK_INDEX), row.get(ROLLOUT_INDEX)) {
            (Some(t), Some(r)) if !t.is_null() && !r.is_null() => {
                format!("{}-{}", py_str(t), py_str(r))
            }
            _ => return Ok(None),
        },
    };
    let attempt = row.get(ATTEMPT_INDEX).and_then(Value::as_i64).unwrap_or(0);
    Ok(Some(if attempt > 0 {
        format!("{base}-a{attempt}")
    } else {
        base
    }))
}

/// The capture file names of a rollout id: `<id>.capture.jsonl`, `<id>.capture.incomplete`.
pub fn capture_file_names(rollout_id: &str) -> [String; 2] {
    [
        format!("{rollout_id}.capture.jsonl"),
        format!("{rollout_id}.capture.incomplete"),
    ]
}

fn count(v: Option<&Value>) -> Option<i64> {
    v.and_then(Value::as_i64)
        .filter(|n| *n >= 0)
        .filter(|_| v.is_some_and(|v| v.is_i64() || v.is_u64()))
}

fn detail_count(usage: &Map<String, Value>, groups: &[&str], fields: &[&str]) -> Option<i64> {
    groups
        .iter()
        .filter_map(|g| usage.get(*g).and_then(Value::as_object))
        .find_map(|d| fields.iter().find_map(|f| count(d.get(*f))))
}

/// Upstream's `extract_token_stats` and `_cache_signal` over a response's `usage`.
fn token_stats(usage: Option<&Value>) -> [(&'static str, Option<i64>); 7] {
    let Some(u) = usage.and_then(Value::as_object) else {
        return [
            ("tokens_in", None),
            ("tokens_out", None),
            ("tokens_reasoning", None),
            ("tokens_total", None),
            ("cache_creation_tokens", None),
            ("cached_tokens", None),
            ("cache_hit", None),
        ];
    };
    let mut tin = count(u.get("input_tokens")).or_else(|| count(u.get("prompt_tokens")));
    let tout = count(u.get("output_tokens")).or_else(|| count(u.get("completion_tokens")));
    let read = count(u.get("cache_read_input_tokens"));
    let creation = count(u.get("cache_creation_input_tokens"));
    if read.is_some() || creation.is_some() {
        let cache = read.unwrap_or(0) + creation.unwrap_or(0);
        if tin.is_some() || cache > 0 {
            tin = Some(tin.unwrap_or(0) + cache);
        }
    }
    let total = count(u.get("total_tokens")).or(match (tin, tout) {
        (Some(a), Some(b)) => Some(a + b),
        _ => None,
    });
    let reasoning = detail_count(
        u,
        &["output_tokens_details", "completion_tokens_details"],
        &["reasoning_tokens"],
    )
    .or_else(|| count(u.get("reasoning_output_tokens")));
    let cached = detail_count(
        u,
        &["prompt_tokens_details", "input_tokens_details"],
        &["cached_tokens", "cached_input_tokens"],
    )
    .or_else(|| count(u.get("cache_read_input_tokens")))
    .or_else(|| count(u.get("cached_input_tokens")));
    [
        ("tokens_in", tin),
        ("tokens_out", tout),
        ("tokens_reasoning", reasoning),
        ("tokens_total", total),
        ("cache_creation_tokens", creation),
        ("cached_tokens", cached),
        ("cache_hit", cached.map(|c| i64::from(c > 0))),
    ]
}

fn arguments(v: Option<&Value>) -> Value {
    match v {
        Some(Value::Object(m)) => Value::Object(m.clone()),
        Some(Value::String(s)) => serde_json::from_str(s).unwrap_or_else(|_| {
            let mut m = Map::new();
            m.insert("_raw".into(), Value::from(s.as_str()));
            Value::Object(m)
        }),
        _ => Value::Object(Map::new()),
    }
}

fn tool_call(call_id: Option<&Value>, name: Option<&Value>, args: Value) -> Value {
    let mut m = Map::new();
    m.insert("call_id".into(), call_id.cloned().unwrap_or(Value::Null));
    m.insert("name".into(), name.cloned().unwrap_or(Value::Null));
    m.insert("arguments".into(), args);
    Value::Object(m)
}

/// Tool calls and reasoning text across the Responses, Chat and Messages shapes.
fn tools_and_reasoning(r: &Map<String, Value>) -> (Vec<Value>, Option<String>) {
    let mut tools = Vec::new();
    let mut reasoning: Vec<String> = Vec::new();
    let text = |v: Option<&Value>| {
        v.and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
    };
    if let Some(output) = r.get("output").and_then(Value::as_array) {
        for item in output.iter().filter_map(Value::as_object) {
            match item.get("type").and_then(Value::as_str) {
                Some("function_call") => tools.push(tool_call(
                    item.get("call_id")
                        .filter(|v| py::truthy(v))
                        .or(item.get("id")),
                    item.get("name"),
                    arguments(item.get("arguments")),
                )),
                Some("reasoning") => {
                    for s in item
                        .get("summary")
                        .and_then(Value::as_array)
                        .into_iter()
                        .flatten()
                    {
                        reasoning.extend(text(s.get("text")));
                    }
                }
                _ => {}
            }
        }
    } else if let Some(choices) = r.get("choices").and_then(Value::as_array) {
        for message in choices
            .iter()
            .filter_map(|c| c.get("message").and_then(Value::as_object))
        {
            for tc in message
                .get("tool_calls")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                let Some(tc) = tc.as_object() else { continue };
                let f = tc.get("function").and_then(Value::as_object);
                tools.push(tool_call(
                    tc.get("id"),
                    f.and_then(|f| f.get("name")),
                    arguments(f.and_then(|f| f.get("arguments"))),
                ));
            }
            reasoning.extend(
                text(message.get("reasoning_content")).or_else(|| text(message.get("reasoning"))),
            );
        }
    } else if let Some(content) = r.get("content").and_then(Value::as_array) {
        for block in content.iter().filter_map(Value::as_object) {
            match block.get("type").and_then(Value::as_str) {
                Some("tool_use") => tools.push(tool_call(
                    block.get("id"),
                    block.get("name"),
                    block
                        .get("input")
                        .filter(|v| py::truthy(v))
                        .cloned()
                        .unwrap_or_else(|| Value::Object(Map::new())),
                )),
                Some("thinking" | "redacted_thinking") => {
                    if let Some(Value::String(t)) = block.get("thinking") {
                        reasoning.push(t.clone());
                    }
                }
                _ => {}
            }
        }
    }
    let joined = reasoning.join("\n");
    (tools, (!joined.is_empty()).then_some(joined))
}

fn float(v: Option<&Value>) -> Value {
    v.and_then(Value::as_f64).map_or(Value::Null, Value::from)
}

fn string(v: Option<&Value>) -> Value {
    v.filter(|v| v.is_string()).cloned().unwrap_or(Value::Null)
}

/// One captured exchange → upstream's `ModelCallRecord`, every field in its order. `Err` for
/// an exchange upstream's model refuses (counted as an unreadable record).
pub fn call_record(ex: &Map<String, Value>, call_index: u64) -> Result<Map<String, Value>, String> {
    let empty = Map::new();
    let response = ex
        .get("response")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    let request = ex
        .get("request")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    let model_ref = match ex.get("model_ref") {
        None | Some(Value::Null) => Value::Null,
        Some(Value::Object(m))
            if m.get("type").and_then(Value::as_str) == Some("responses_api_models")
                && m.get("name").is_some_and(Value::is_string) =>
        {
            let mut r = Map::new();
            r.insert("type".into(), m["type"].clone());
            r.insert("name".into(), m["name"].clone());
            Value::Object(r)
        }
        Some(_) => return Err("model_ref is not a model server reference".into()),
    };
    let status_code = match ex.get("status_code") {
        None | Some(Value::Null) => Value::Null,
        Some(v) => Value::from(v.as_i64().ok_or("status_code is not an integer")?),
    };
    for k in [
        "model_call_id",
        "dialect",
        "error_category",
        "local_response_reason",
    ] {
        if ex.get(k).is_some_and(|v| !v.is_null() && !v.is_string()) {
            return Err(format!("{k} is not a string"));
        }
    }
    // Where the response came from (v0.7.0 `ModelCallRecord`): Pydantic's lax types.
    let upstream_attempted = match ex.get("upstream_attempted") {
        None | Some(Value::Null) => Value::Null,
        Some(v) => Value::from(
            crate::gym::pydantic::lax_bool(v).ok_or("upstream_attempted is not a boolean")?,
        ),
    };
    let response_source = match ex.get("response_source") {
        None | Some(Value::Null) => Value::Null,
        Some(Value::String(s)) if s == "upstream" || s == "local" => Value::from(s.as_str()),
        Some(_) => return Err("response_source is not \"upstream\" or \"local\"".into()),
    };
    let upstream_status_code = match ex.get("upstream_status_code") {
        None | Some(Value::Null) => Value::Null,
        Some(v) => Value::from(
            crate::gym::pydantic::lax_int(v)
                .and_then(|i| i64::try_from(i).ok())
                .ok_or("upstream_status_code is not an integer")?,
        ),
    };
    let first_choice = response
        .get("choices")
        .and_then(Value::as_array)
        .and_then(|c| c.first())
        .and_then(Value::as_object);
    let finish = [
        response.get("stop_reason"),
        first_choice.and_then(|c| c.get("finish_reason")),
        response
            .get("incomplete_details")
            .and_then(Value::as_object)
            .and_then(|d| d.get("reason")),
    ]
    .into_iter()
    .flatten()
    .find(|v| v.is_string())
    .cloned()
    .unwrap_or(Value::Null);
    let model = [response.get("model"), request.get("model")]
        .into_iter()
        .flatten()
        .find(|v| py::truthy(v))
        .filter(|v| v.is_string())
        .cloned()
        .unwrap_or(Value::Null);
    let tokens = token_stats(response.get("usage"));
    let tok = |k: &str| {
        tokens
            .iter()
            .find(|(n, _)| *n == k)
            .and_then(|(_, v)| *v)
            .map_or(Value::Null, Value::from)
    };
    let (tools, reasoning) = tools_and_reasoning(response);
    let obj_or_null = |k: &str| {
        ex.get(k)
            .filter(|v| v.is_object())
            .cloned()
            .unwrap_or(Value::Null)
    };
    let mut m = Map::new();
    let mut put = |k: &str, v: Value| {
        m.insert(k.to_string(), v);
    };
    put(
        "model_call_id",
        ex.get("model_call_id").cloned().unwrap_or(Value::Null),
    );
    put("response_id", string(response.get("id")));
    put("client_session_id", string(ex.get("client_session_id")));
    put("call_index", Value::from(call_index));
    put("model_ref", model_ref);
    put("model", model);
    put("dialect", ex.get("dialect").cloned().unwrap_or(Value::Null));
    put("status_code", status_code);
    put("response_status", string(response.get("status")));
    put("finish_reason", finish);
    put("upstream_attempted", upstream_attempted);
    put("response_source", response_source);
    put("upstream_status_code", upstream_status_code);
    put(
        "local_response_reason",
        ex.get("local_response_reason")
            .cloned()
            .unwrap_or(Value::Null),
    );
    put("started_at", float(ex.get("started_at")));
    put("completed_at", float(ex.get("completed_at")));
    put("tokens_in", tok("tokens_in"));
    put("tokens_out", tok("tokens_out"));
    put("tokens_reasoning", tok("tokens_reasoning"));
    put("tokens_total", tok("tokens_total"));
    put("request", obj_or_null("request"));
    put("response", obj_or_null("response"));
    put("request_raw", string(ex.get("request_raw")));
    put("response_raw", string(ex.get("response_raw")));
    put("tool_calls", Value::Array(tools));
    put(
        "reasoning_content",
        reasoning.map_or(Value::Null, Value::from),
    );
    put(
        "cache_hit",
        tokens[6].1.map_or(Value::Null, |h| Value::from(h == 1)),
    );
    put("cached_tokens", tok("cached_tokens"));
    put("cache_creation_tokens", tok("cache_creation_tokens"));
    put(
        "error_category",
        ex.get("error_category").cloned().unwrap_or(Value::Null),
    );
    put("latency_total_ms", float(ex.get("latency_ms")));
    put("latency_ttft_ms", float(ex.get("latency_ttft_ms")));
    Ok(m)
}

/// What the capture file of a rollout held.
#[derive(Default)]
pub struct CaptureRead {
    /// The file or its `.incomplete` marker exists.
    pub found: bool,
    pub incomplete: bool,
    /// The file could not be read at all.
    pub unreadable: bool,
    /// Non-blank lines, in order.
    pub lines: Vec<Vec<u8>>,
}

/// A gap as the capture writes it: `{code, detail?}`.
pub(super) fn gap(code: &str, detail: Option<String>) -> Value {
    let mut m = Map::new();
    m.insert("code".into(), Value::from(code));
    if let Some(d) = detail {
        m.insert("detail".into(), Value::from(d));
    }
    Value::Object(m)
}

/// Sum of the known values of a numeric field, or null (unknown, never 0).
fn sum(calls: &[Map<String, Value>], k: &str) -> Value {
    let vals: Vec<&Value> = calls
        .iter()
        .filter_map(|c| c.get(k))
        .filter(|v| !v.is_null())
        .collect();
    if vals.is_empty() {
        return Value::Null;
    }
    if vals.iter().all(|v| v.is_i64()) {
        Value::from(vals.iter().filter_map(|v| v.as_i64()).sum::<i64>())
    } else {
        Value::from(vals.iter().filter_map(|v| v.as_f64()).sum::<f64>())
    }
}

/// `ng_model_call_capture` for one rollout; calls keep their payloads unless
/// `include_payloads` is false (rows whose evidence says `multimodal_history_redacted`).
pub fn attachment(rollout_id: &str, read: &CaptureRead, include_payloads: bool) -> Value {
    let mut gaps = Vec::new();
    let mut calls = Vec::new();
    if !read.found {
        gaps.push(gap("model_call_capture_no_records", None));
    } else if read.unreadable {
        gaps.push(gap("model_call_capture_unreadable", None));
    } else {
        let mut invalid = 0u64;
        for (index, line) in read.lines.iter().enumerate() {
            let record = match serde_json::from_slice::<Value>(line) {
                Ok(Value::Object(ex)) => call_record(&ex, index as u64).ok(),
                _ => None,
            };
            match record {
                Some(r) => calls.push(r),
                None => invalid += 1,
            }
        }
        if invalid > 0 {
            gaps.push(gap(
                "model_call_capture_records_unreadable",
                Some(format!("count={invalid}")),
            ));
        }
        if read.incomplete {
            gaps.push(gap("model_call_capture_incomplete", None));
        } else if calls.is_empty() && invalid == 0 {
            gaps.push(gap("model_call_capture_no_records", None));
        }
    }
    let metrics = serde_json::json!({
        "tokens_in": sum(&calls, "tokens_in"),
        "tokens_out": sum(&calls, "tokens_out"),
        "tokens_reasoning": sum(&calls, "tokens_reasoning"),
        "tokens_total": sum(&calls, "tokens_total"),
        "cached_tokens": sum(&calls, "cached_tokens"),
        "latency_total_ms": sum(&calls, "latency_total_ms"),
        "num_calls": calls.len(),
    });
    let mut m = Map::new();
    m.insert("rollout_id".into(), Value::from(rollout_id));
    m.insert("metrics".into(), metrics);
    m.insert(
        "calls".into(),
        Value::Array(
            calls
                .iter()
                .map(|c| {
                    Value::Object(
                        c.iter()
                            .filter(|(k, _)| {
                                include_payloads || !PAYLOAD_KEYS.contains(&k.as_str())
                            })
                            .map(|(k, v)| (k.clone(), v.clone()))
                            .collect(),
                    )
                })
                .collect(),
        ),
    );
    if !gaps.is_empty() {
        m.insert("gaps".into(), Value::Array(gaps));
    }
    Value::Object(m)
}
