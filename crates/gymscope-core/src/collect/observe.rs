//! Model-call capture and `ng_trajectory` (spec `trajectory-health.md` §1), as upstream's
//! collector does it at `07d6b0d` (`nemo_gym/rollout_collection.py`,
//! `nemo_gym/base_responses_api_model.py`, `nemo_gym/rollout_correlation.py`). Plain data in,
//! plain data out: the native side reads the capture file and hands its lines here.
//!
//! - [`rollout_id`]: the capture key of a request row;
//! - [`call_record`]: one captured exchange → upstream's `ModelCallRecord` (field order kept);
//! - [`attachment`]: `ng_model_call_capture` = `{rollout_id, metrics, calls, gaps?}`;
//! - [`attach_trajectory`]: the canonical `ng_trajectory` from the agent's trajectory and the
//!   captured calls, payloads then removed from the capture's calls.
//!
//! `ng_agent_observations` (harness agents) are validated, joined and folded in by
//! [`super::observations`]. Not reproduced: conversation items are kept as written.

use super::claude_compaction;
use super::observations::{self, OBSERVATIONS_KEY};
use super::Row;
use crate::gym::keys::{ATTEMPT_INDEX, ROLLOUT_ID, ROLLOUT_INDEX, TASK_INDEX};
use crate::gym::py;
use crate::gym::trajectory::{self, dump};
use serde_json::{Map, Value};

pub const CAPTURE_KEY: &str = "ng_model_call_capture";
pub const TRAJECTORY_KEY: &str = "ng_trajectory";
const PAYLOAD_KEYS: [&str; 4] = ["request", "response", "request_raw", "response_raw"];

/// Python's `str()` of a JSON scalar as the collector formats indices.
fn py_str(v: &Value) -> String {
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
    for k in ["model_call_id", "dialect", "error_category"] {
        if ex.get(k).is_some_and(|v| !v.is_null() && !v.is_string()) {
            return Err(format!("{k} is not a string"));
        }
    }
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
    put("call_index", Value::from(call_index));
    put("model_ref", model_ref);
    put("model", model);
    put("dialect", ex.get("dialect").cloned().unwrap_or(Value::Null));
    put("status_code", status_code);
    put("response_status", string(response.get("status")));
    put("finish_reason", finish);
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

fn gap(code: &str, detail: Option<String>) -> Value {
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

/// The trajectory's task id: `task_id`, `problem_id` or `instance_id` of the row, else its
/// task index, as text.
fn task_id(row: &Row) -> String {
    ["task_id", "problem_id", "instance_id"]
        .iter()
        .find_map(|k| row.get(*k).filter(|v| !v.is_null()).map(py_str))
        .unwrap_or_else(|| row.get(TASK_INDEX).map_or_else(|| "None".into(), py_str))
}

/// Whether the result's trajectory or observations carry a gap with this code.
fn has_gap(result: &Row, code: &str) -> bool {
    [TRAJECTORY_KEY, OBSERVATIONS_KEY].iter().any(|k| {
        result
            .get(*k)
            .and_then(|o| o.get("gaps"))
            .and_then(Value::as_array)
            .is_some_and(|g| {
                g.iter()
                    .any(|g| g.get("code").and_then(Value::as_str) == Some(code))
            })
    })
}

/// Upstream's `_build_trajectory_record`: the producer's trajectory, then the agent's
/// observations, then the calls of the result's `ng_model_call_capture` projected.
fn build(row: &Row, result: &Row) -> Result<Value, String> {
    let calls: Vec<&Map<String, Value>> = result
        .get(CAPTURE_KEY)
        .and_then(|c| c.get("calls"))
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_object).collect())
        .unwrap_or_default();
    let tid = task_id(row);
    let rid = rollout_id(row)?.ok_or("KeyError: the row has no rollout indices")?;
    let mut gaps: Vec<Value> = Vec::new();
    let (mut invocations, mut turns, mut tools, mut model_calls) = (vec![], vec![], vec![], vec![]);
    if let Some(raw) = result.get(TRAJECTORY_KEY).filter(|v| v.is_object()) {
        match dump::trajectory(raw) {
            Ok(c) => {
                let mismatches: Vec<&str> = [
                    ("task_id", &c.task_id, &tid),
                    ("rollout_id", &c.rollout_id, &rid),
                ]
                .into_iter()
                .filter(|(_, a, b)| a != b)
                .map(|(f, _, _)| f)
                .collect();
                turns = c.turns;
                if !mismatches.is_empty() {
                    gaps.push(gap(
                        "producer_trajectory_identity_mismatch",
                        Some(mismatches.join(",")),
                    ));
                    for t in &mut turns {
                        t["task_id"] = Value::from(tid.as_str());
                        t["rollout_id"] = Value::from(rid.as_str());
                    }
                }
                gaps.extend(c.gaps);
                invocations = c.invocations;
                tools = c.tool_calls;
                model_calls = c.model_calls;
            }
            Err(_) => gaps.push(gap(
                "producer_trajectory_invalid",
                Some("ValidationError".into()),
            )),
        }
    }
    if let Some(raw) = result.get(OBSERVATIONS_KEY).filter(|v| !v.is_null()) {
        let merged = observations::validate(raw).and_then(|bundle| {
            observations::merge_into(bundle, &mut gaps, &mut invocations, &mut tools)
        });
        if merged.is_err() {
            gaps.push(gap(
                "agent_observations_invalid",
                Some("ValidationError".into()),
            ));
        }
    }
    // Stable sort by (timestamp, invocation id, turn number).
    turns.sort_by(|a, b| {
        let f = |t: &Value| t["timestamp"].as_f64().unwrap_or(0.0);
        f(a).total_cmp(&f(b))
            .then_with(|| {
                a["invocation_id"]
                    .as_str()
                    .cmp(&b["invocation_id"].as_str())
            })
            .then_with(|| a["turn_no"].as_i64().cmp(&b["turn_no"].as_i64()))
    });
    let mut positions: Vec<(String, usize)> = model_calls
        .iter()
        .enumerate()
        .filter_map(|(i, c)| c["model_call_id"].as_str().map(|id| (id.to_string(), i)))
        .collect();
    for raw in calls {
        let mut meta = Map::new();
        for k in trajectory::CALL_META_KEYS {
            if let Some(v) = raw.get(k).filter(|v| !v.is_null()) {
                meta.insert(k.into(), v.clone());
            }
        }
        if let Some(Value::String(s)) = raw.get("response").and_then(|r| r.get("status")) {
            meta.entry("response_status")
                .or_insert_with(|| Value::from(s.as_str()));
        }
        let nn = |k: &str| {
            raw.get(k)
                .and_then(Value::as_i64)
                .filter(|n| *n >= 0)
                .map_or(Value::Null, Value::from)
        };
        let mut tokens = Map::new();
        tokens.insert("prompt_tokens".into(), nn("tokens_in"));
        tokens.insert("completion_tokens".into(), nn("tokens_out"));
        tokens.insert("reasoning_tokens".into(), nn("tokens_reasoning"));
        tokens.insert("total_tokens".into(), nn("tokens_total"));
        tokens.insert("cached_tokens".into(), nn("cached_tokens"));
        let pick = |a: &str, b: &str| {
            raw.get(a)
                .filter(|v| !v.is_null())
                .or_else(|| raw.get(b))
                .cloned()
                .unwrap_or(Value::Null)
        };
        let mut projected = Map::new();
        projected.insert(
            "model_call_id".into(),
            raw.get("model_call_id").cloned().unwrap_or(Value::Null),
        );
        projected.insert(
            "started_at".into(),
            raw.get("started_at").cloned().unwrap_or(Value::Null),
        );
        projected.insert(
            "completed_at".into(),
            raw.get("completed_at").cloned().unwrap_or(Value::Null),
        );
        projected.insert(
            "duration_ms".into(),
            raw.get("latency_total_ms").cloned().unwrap_or(Value::Null),
        );
        projected.insert("request".into(), pick("request", "request_raw"));
        projected.insert("response".into(), pick("response", "response_raw"));
        projected.insert("response_metadata".into(), Value::Object(meta));
        projected.insert("token_stats".into(), Value::Object(tokens));
        if projected["duration_ms"].as_f64().is_some_and(|d| d < 0.0) {
            return Err("ValidationError: a captured call has a negative duration".into());
        }
        let projected = dump::model_call(&projected);
        let position = raw
            .get("model_call_id")
            .and_then(Value::as_str)
            .and_then(|id| positions.iter().position(|(p, _)| p == id))
            .map(|i| positions.remove(i).1);
        match position {
            None => model_calls.push(projected),
            Some(p) => {
                // Capture values win where they are not null.
                let merged = &mut model_calls[p];
                for (k, v) in projected.as_object().into_iter().flatten() {
                    match (k.as_str(), v) {
                        ("response_metadata" | "token_stats", Value::Object(inner)) => {
                            for (ik, iv) in inner.iter().filter(|(_, v)| !v.is_null()) {
                                merged[k][ik] = iv.clone();
                            }
                        }
                        (_, Value::Null) => {}
                        _ => merged[k] = v.clone(),
                    }
                }
                let empty = Map::new();
                merged["response_metadata"] = dump::response_metadata(
                    merged["response_metadata"].as_object().unwrap_or(&empty),
                );
                merged["token_stats"] =
                    dump::token_stats(merged["token_stats"].as_object().unwrap_or(&empty));
            }
        }
    }
    if let Some(cg) = result
        .get(CAPTURE_KEY)
        .and_then(|c| c.get("gaps"))
        .and_then(Value::as_array)
    {
        for g in cg.iter().filter_map(Value::as_object) {
            gaps.push(if g.get("code").is_some_and(Value::is_string) {
                dump::gap(g)
            } else {
                gap("model_call_capture_gap_invalid", None)
            });
        }
    }
    if model_calls.is_empty() {
        gaps.push(gap("model_calls_unavailable", None));
    }
    if turns.is_empty() {
        gaps.push(gap("turns_unavailable", None));
    }
    if !invocations
        .iter()
        .any(|i| i["conversation"].as_array().is_some_and(|c| !c.is_empty()))
    {
        gaps.push(gap("conversation_unavailable", None));
    }
    // Every gap in its dumped form, de-duplicated on (code, invocation, detail), first kept.
    let unique = observations::unique_gaps(
        gaps.iter()
            .filter_map(Value::as_object)
            .map(dump::gap)
            .collect(),
    );
    let record = serde_json::json!({
        "schema_version": "1.0",
        "task_id": tid,
        "rollout_id": rid,
        "invocations": invocations,
        "turns": turns,
        "model_calls": model_calls,
        "tool_calls": tools,
        "gaps": unique,
    });
    trajectory::validate(&record).map_err(|e| format!("ValidationError: {e}"))?;
    Ok(record)
}

/// With the capture built (its calls still holding their payloads): the agent's observations
/// joined with the captured calls (Claude Code's compaction summary calls first) and written
/// back in their dumped form, or an `agent_observation_join_failed` capture gap when they are
/// invalid (left as returned; the projection then reports them).
fn join_observations(result: &mut Row, capture: &mut Value) {
    let Some(raw) = result.get(OBSERVATIONS_KEY).filter(|v| !v.is_null()) else {
        return;
    };
    match observations::validate(raw) {
        Ok(mut bundle) => {
            let calls: Vec<&Map<String, Value>> = capture
                .get("calls")
                .and_then(Value::as_array)
                .map(|a| a.iter().filter_map(Value::as_object).collect())
                .unwrap_or_default();
            if claude_compaction::associate(&mut bundle, &calls).is_err() {
                bundle.gaps.push(serde_json::json!({
                    "code": "compaction_model_call_join_failed", "invocation_id": null, "detail": null
                }));
            }
            observations::join(&mut bundle, &calls);
            result.insert(OBSERVATIONS_KEY.into(), bundle.dump());
        }
        Err(_) => {
            if let Value::Object(c) = capture {
                if let Value::Array(g) = c.entry("gaps").or_insert_with(|| Value::Array(vec![])) {
                    g.push(gap("agent_observation_join_failed", None));
                }
            }
        }
    }
}

/// Removes the `request`/`response` copies from the capture's calls.
fn strip_payloads(capture: &mut Value) {
    if let Some(calls) = capture.get_mut("calls").and_then(Value::as_array_mut) {
        for c in calls.iter_mut().filter_map(Value::as_object_mut) {
            for k in PAYLOAD_KEYS {
                c.shift_remove(k);
            }
        }
    }
}

/// Upstream's evidence step for a result, once the row's keys are merged: with `capture`
/// (observability on) `ng_model_call_capture` is attached first; then, when the result has
/// any evidence, the canonical `ng_trajectory` replaces the agent's and the capture's calls
/// lose their payloads (kept, with a `trajectory_projection_failed` gap, when it fails).
pub fn attach_evidence(row: &Row, result: &mut Row, capture: Option<&CaptureRead>) {
    if let Some(read) = capture {
        if let Ok(Some(id)) = rollout_id(result) {
            // The join reads the payloads (Claude Code's summary calls) even when the row
            // keeps none, as upstream's in-memory records hold them.
            let payloads = !has_gap(result, "multimodal_history_redacted");
            let mut capture = attachment(&id, read, true);
            join_observations(result, &mut capture);
            if !payloads {
                strip_payloads(&mut capture);
            }
            result.insert(CAPTURE_KEY.into(), capture);
        }
    }
    if ![CAPTURE_KEY, OBSERVATIONS_KEY, TRAJECTORY_KEY]
        .iter()
        .any(|k| result.contains_key(*k))
    {
        return;
    }
    match build(row, result) {
        Ok(t) => {
            result.insert(TRAJECTORY_KEY.into(), t);
        }
        Err(e) => {
            result.shift_remove(TRAJECTORY_KEY);
            // Upstream records the exception's class name.
            let name = ["ValidationError", "KeyError"]
                .into_iter()
                .find(|n| e.starts_with(n))
                .unwrap_or("ValueError");
            let g = gap("trajectory_projection_failed", Some(name.into()));
            // Payloads stay on the capture's calls as the fallback.
            let target = [CAPTURE_KEY, OBSERVATIONS_KEY]
                .into_iter()
                .find(|k| result.get(*k).is_some_and(Value::is_object));
            let mut attached = false;
            if let Some(t) = target
                .and_then(|k| result.get_mut(k))
                .and_then(Value::as_object_mut)
            {
                if let Value::Array(a) = t.entry("gaps").or_insert_with(|| Value::Array(vec![])) {
                    a.push(g.clone());
                    attached = true;
                }
            }
            if !attached {
                let tid = task_id(row);
                let rid = rollout_id(row).ok().flatten().unwrap_or_default();
                let empty = Map::new();
                result.insert(
                    TRAJECTORY_KEY.into(),
                    serde_json::json!({"schema_version": "1.0", "task_id": tid,
                        "rollout_id": rid, "invocations": [], "turns": [], "model_calls": [], "tool_calls": [],
                        "gaps": [dump::gap(g.as_object().unwrap_or(&empty))]}),
                );
            }
            return;
        }
    }
    // The trajectory now holds the payloads: drop the capture's copies.
    if let Some(capture) = result.get_mut(CAPTURE_KEY) {
        strip_payloads(capture);
    }
}

pub const PERF_KEY: &str = "ng_perf";

/// Upstream's `_build_ng_perf` (v0.6-era `rollout_collection.py`): per-rollout turns, tool
/// calls, the share of turns whose call resolved, token sums over the calls the invocations own
/// (each call once), and the collector's wall time of the `/run`. `None` without a valid
/// trajectory with invocations.
pub fn ng_perf(result: &Row, latency_ms: Option<f64>) -> Option<Value> {
    let raw = result.get(TRAJECTORY_KEY)?;
    let c = dump::trajectory(raw).ok()?;
    if c.invocations.is_empty() {
        return None;
    }
    let calls = &c.model_calls;
    let meta = |i: usize| &calls[i]["response_metadata"];
    let match_ref = |r: &Value| -> Option<usize> {
        let id = r["model_call_id"].as_str().filter(|s| !s.is_empty());
        let candidates: Vec<usize> = if let Some(id) = id {
            (0..calls.len())
                .filter(|i| calls[*i]["model_call_id"].as_str() == Some(id))
                .filter(|i| r["model_ref"].is_null() || r["model_ref"] == meta(*i)["model_ref"])
                .filter(|i| {
                    r["response_id"].is_null() || r["response_id"] == meta(*i)["response_id"]
                })
                .collect()
        } else if !r["model_ref"].is_null()
            && r["response_id"].as_str().is_some_and(|s| !s.is_empty())
        {
            (0..calls.len())
                .filter(|i| {
                    !meta(*i)["model_ref"].is_null()
                        && meta(*i)["model_ref"] == r["model_ref"]
                        && meta(*i)["response_id"] == r["response_id"]
                })
                .collect()
        } else {
            Vec::new()
        };
        (candidates.len() == 1).then(|| candidates[0])
    };
    let mut seen = Vec::new();
    let mut owned_by_invocation: Vec<(String, u64)> = Vec::new();
    for inv in &c.invocations {
        let id = inv["invocation_id"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        let mut n = 0;
        for r in inv["model_calls"].as_array().into_iter().flatten() {
            if let Some(i) = match_ref(r).filter(|i| !seen.contains(i)) {
                seen.push(i);
                n += 1;
            }
        }
        owned_by_invocation.push((id, n));
    }
    let count_of = |items: &[Value], id: &str| {
        items
            .iter()
            .filter(|t| t["invocation_id"].as_str() == Some(id))
            .count() as u64
    };
    let num_tool_calls: u64 = owned_by_invocation
        .iter()
        .map(|(id, _)| count_of(&c.tool_calls, id))
        .sum();
    let num_turns: u64 = owned_by_invocation
        .iter()
        .map(|(id, owned)| match count_of(&c.turns, id) {
            0 if *owned > 0 => *owned,
            0 => 1,
            n => n,
        })
        .sum();
    let mut perf = Map::new();
    perf.insert("num_turns".into(), Value::from(num_turns));
    perf.insert("num_tool_calls".into(), Value::from(num_tool_calls));
    perf.insert(
        "token_observability_coverage".into(),
        Value::from((seen.len() as f64 / num_turns as f64).min(1.0)),
    );
    for (key, stat) in [
        ("prompt_tokens", "prompt_tokens"),
        ("cached_prompt_tokens", "cached_tokens"),
        ("completion_tokens", "completion_tokens"),
        ("reasoning_tokens", "reasoning_tokens"),
    ] {
        let vals: Vec<i64> = seen
            .iter()
            .filter_map(|i| calls[*i]["token_stats"][stat].as_i64())
            .collect();
        if !vals.is_empty() {
            perf.insert(key.into(), Value::from(vals.iter().sum::<i64>()));
        }
    }
    if let Some(ms) = latency_ms {
        perf.insert("total_latency_ms".into(), Value::from(ms));
    }
    Some(Value::Object(perf))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
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
        assert!(id(
            json!({"_ng_rollout_id": "../etc", "_ng_task_index": 4, "_ng_rollout_index": 1})
        )
        .is_err());
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
        assert!(result.get(TRAJECTORY_KEY).is_none());
        let cap = &result[CAPTURE_KEY];
        assert_eq!(cap["calls"][0]["request"], json!({"q": 1}));
        assert_eq!(
            cap["gaps"],
            json!([{"code": "trajectory_projection_failed", "detail": "ValidationError"}])
        );
        // An invalid producer trajectory is a gap, not a failure.
        let mut result = r.clone();
        result.insert(TRAJECTORY_KEY.into(), json!({"task_id": 1}));
        attach_evidence(&r, &mut result, None);
        assert_eq!(
            result[TRAJECTORY_KEY]["gaps"][0],
            json!({"code": "producer_trajectory_invalid", "invocation_id": null, "detail": "ValidationError"})
        );
        // Rows without evidence are left alone.
        let mut plain = r.clone();
        attach_evidence(&r, &mut plain, None);
        assert_eq!(plain, r);
    }
}
