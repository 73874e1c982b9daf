//! A trajectory record's parts in upstream's dumped form (`model_dump()`): every field of the
//! model in its order, defaults filled, values coerced as Pydantic coerces them. Each function
//! takes the producer's object (already validated, or read leniently) and returns its dump.

use crate::gym::pydantic::{self, object, req_str, R};
use serde_json::{Map, Value};

/// Builds a JSON object from `(key, value)` pairs in the model's field order.
pub fn obj(fields: Vec<(&str, Value)>) -> Value {
    Value::Object(
        fields
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect(),
    )
}

/// The field, or null when absent.
pub fn get<'a>(m: &'a Map<String, Value>, k: &str) -> &'a Value {
    m.get(k).unwrap_or(&Value::Null)
}

/// A field kept as the producer wrote it (null when absent): `str`, `Any` and `Optional` fields.
pub fn value(m: &Map<String, Value>, k: &str) -> Value {
    get(m, k).clone()
}

/// An `Optional[int]` field coerced as Pydantic does (null when it is none).
pub fn int(m: &Map<String, Value>, k: &str) -> Value {
    pydantic::lax_int(get(m, k))
        .and_then(|i| i64::try_from(i).ok())
        .map_or(Value::Null, Value::from)
}

/// An `Optional[float]` field coerced as Pydantic does (null when it is none).
pub fn float(m: &Map<String, Value>, k: &str) -> Value {
    pydantic::lax_float(get(m, k)).map_or(Value::Null, Value::from)
}

/// A field with a default: the default when the field is absent or null.
pub fn or_default(m: &Map<String, Value>, k: &str, default: &str) -> Value {
    match get(m, k) {
        Value::Null => Value::from(default),
        v => v.clone(),
    }
}

/// A list of models, each item dumped by `item` (items that are not objects left out).
pub fn list(m: &Map<String, Value>, k: &str, item: fn(&Map<String, Value>) -> Value) -> Value {
    Value::Array(
        get(m, k)
            .as_array()
            .map(|a| a.iter().filter_map(Value::as_object).map(item).collect())
            .unwrap_or_default(),
    )
}

/// `ModelServerRef` (`{type, name}`), or null.
pub fn model_ref(v: &Value) -> Value {
    match v.as_object() {
        Some(m) => obj(vec![("type", value(m, "type")), ("name", value(m, "name"))]),
        None => Value::Null,
    }
}

/// A reference to a model call (`model_call_id`, `model_ref`, `response_id`).
pub fn call_ref(m: &Map<String, Value>) -> Value {
    obj(vec![
        ("model_call_id", value(m, "model_call_id")),
        ("model_ref", model_ref(get(m, "model_ref"))),
        ("response_id", value(m, "response_id")),
    ])
}

/// `AgentInvocation` in field order.
pub fn invocation(m: &Map<String, Value>) -> Value {
    obj(vec![
        ("kind", Value::from("agent_invocation")),
        ("invocation_id", value(m, "invocation_id")),
        ("parent_invocation_id", value(m, "parent_invocation_id")),
        (
            "spawned_by_tool_call_id",
            value(m, "spawned_by_tool_call_id"),
        ),
        ("status", or_default(m, "status", "unknown")),
        ("duration_ms", float(m, "duration_ms")),
        ("error_type", value(m, "error_type")),
        ("model_calls", list(m, "model_calls", call_ref)),
        // Responses input items are kept as the producer wrote them (upstream re-serializes
        // them through its item models, filling defaults: not reproduced here).
        (
            "conversation",
            get(m, "conversation")
                .as_array()
                .map_or(Value::Array(vec![]), |a| Value::Array(a.clone())),
        ),
    ])
}

/// `TrajectoryTurn` in field order.
pub fn turn(m: &Map<String, Value>) -> Value {
    obj(vec![
        ("invocation_id", value(m, "invocation_id")),
        ("task_id", value(m, "task_id")),
        ("rollout_id", value(m, "rollout_id")),
        ("turn_no", int(m, "turn_no")),
        ("timestamp", float(m, "timestamp")),
        ("question", value(m, "question")),
        ("answer", value(m, "answer")),
        ("reasoning_content", value(m, "reasoning_content")),
        (
            "resolved",
            pydantic::lax_bool(get(m, "resolved")).map_or(Value::Null, Value::from),
        ),
        ("step_count", int(m, "step_count")),
        ("model_calls", list(m, "model_calls", call_ref)),
    ])
}

/// `TrajectoryResponseMetadata` in field order.
pub fn response_metadata(m: &Map<String, Value>) -> Value {
    obj(vec![
        ("response_id", value(m, "response_id")),
        ("model_ref", model_ref(get(m, "model_ref"))),
        ("model", value(m, "model")),
        ("dialect", value(m, "dialect")),
        ("status_code", int(m, "status_code")),
        ("response_status", value(m, "response_status")),
        ("finish_reason", value(m, "finish_reason")),
        (
            "upstream_attempted",
            pydantic::lax_bool(get(m, "upstream_attempted")).map_or(Value::Null, Value::from),
        ),
        ("response_source", value(m, "response_source")),
        ("upstream_status_code", int(m, "upstream_status_code")),
        ("local_response_reason", value(m, "local_response_reason")),
        ("error_category", value(m, "error_category")),
        ("latency_ttft_ms", float(m, "latency_ttft_ms")),
    ])
}

/// `TrajectoryTokenStats` in field order.
pub fn token_stats(m: &Map<String, Value>) -> Value {
    obj(vec![
        ("prompt_tokens", int(m, "prompt_tokens")),
        ("completion_tokens", int(m, "completion_tokens")),
        ("reasoning_tokens", int(m, "reasoning_tokens")),
        ("total_tokens", int(m, "total_tokens")),
        ("cached_tokens", int(m, "cached_tokens")),
    ])
}

/// `TrajectoryModelCall` in field order.
pub fn model_call(m: &Map<String, Value>) -> Value {
    let empty = Map::new();
    obj(vec![
        ("model_call_id", value(m, "model_call_id")),
        ("started_at", float(m, "started_at")),
        ("completed_at", float(m, "completed_at")),
        ("duration_ms", float(m, "duration_ms")),
        ("request", value(m, "request")),
        ("response", value(m, "response")),
        (
            "response_metadata",
            response_metadata(get(m, "response_metadata").as_object().unwrap_or(&empty)),
        ),
        (
            "token_stats",
            token_stats(get(m, "token_stats").as_object().unwrap_or(&empty)),
        ),
    ])
}

/// `TrajectoryToolCall` in field order.
pub fn tool_call(m: &Map<String, Value>) -> Value {
    obj(vec![
        ("kind", Value::from("tool_call")),
        ("invocation_id", value(m, "invocation_id")),
        ("tool_call_id", value(m, "tool_call_id")),
        ("sandbox_id", value(m, "sandbox_id")),
        ("tool_name", value(m, "tool_name")),
        ("started_at", float(m, "started_at")),
        ("completed_at", float(m, "completed_at")),
        ("duration_ms", float(m, "duration_ms")),
        ("timing_source", value(m, "timing_source")),
        ("status", or_default(m, "status", "unknown")),
        ("error_type", value(m, "error_type")),
        ("output", value(m, "output")),
    ])
}

/// `ObservationGap` in field order.
pub fn gap(m: &Map<String, Value>) -> Value {
    obj(vec![
        ("code", value(m, "code")),
        ("invocation_id", value(m, "invocation_id")),
        ("detail", value(m, "detail")),
    ])
}

/// The parts of a valid trajectory in upstream's dumped form (every field, defaults filled,
/// values coerced as Pydantic coerces them): the producer's evidence the collector builds on.
pub struct Dumped {
    pub task_id: String,
    pub rollout_id: String,
    pub invocations: Vec<Value>,
    pub turns: Vec<Value>,
    pub model_calls: Vec<Value>,
    pub tool_calls: Vec<Value>,
    pub gaps: Vec<Value>,
}

/// Validates (as [`super::validate`]) and dumps a trajectory.
pub fn trajectory(v: &Value) -> R<Dumped> {
    super::validate(v)?;
    let m = object(v, "ng_trajectory")?;
    let items = |k: &str, f: fn(&Map<String, Value>) -> Value| match list(m, k, f) {
        Value::Array(a) => a,
        _ => Vec::new(),
    };
    Ok(Dumped {
        task_id: req_str(m, "ng_trajectory", "task_id")?,
        rollout_id: req_str(m, "ng_trajectory", "rollout_id")?,
        invocations: items("invocations", invocation),
        turns: items("turns", turn),
        model_calls: items("model_calls", model_call),
        tool_calls: items("tool_calls", tool_call),
        gaps: items("gaps", gap),
    })
}
