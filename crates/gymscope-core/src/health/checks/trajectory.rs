//! `ng_trajectory` validated as upstream's `TrajectoryRecord.model_validate` does at the pinned
//! revision (extra keys forbidden, Pydantic's lax coercions), into the few typed values the
//! checks read. A row whose trajectory fails here is `record_unreadable`; the error name is
//! upstream's (`ValidationError`), the message ours.

use serde_json::{Map, Value};
use std::collections::HashSet;

/// A model server reference (`{type: "responses_api_models", name}`), as its key parts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ModelRef {
    pub kind: String,
    pub name: String,
}

/// A turn's or invocation's reference to a model call.
#[derive(Clone, Debug, PartialEq)]
pub struct CallRef {
    pub model_call_id: Option<String>,
    pub model_ref: Option<ModelRef>,
    pub response_id: Option<String>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Turn {
    pub turn_no: i64,
    pub answer: Value,
    pub reasoning_content: Value,
    pub model_calls: Vec<CallRef>,
}

/// One trajectory model call, flattened as upstream's `_normalized_trajectory_calls`.
#[derive(Clone, Debug, PartialEq)]
pub struct Call {
    pub model_call_id: Option<String>,
    pub response_id: Option<String>,
    pub model_ref: Option<ModelRef>,
    pub status_code: Option<i64>,
    pub response_status: Option<String>,
    pub finish_reason: Option<String>,
    pub error_category: Option<String>,
    pub tokens_in: Option<i64>,
    pub tokens_out: Option<i64>,
    pub response: Value,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Gap {
    pub code: String,
    pub invocation_id: Option<String>,
    pub detail: Option<String>,
}

/// The parts of a validated trajectory the checks read.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Trajectory {
    pub rollout_id: String,
    pub invocation_refs: Vec<Vec<CallRef>>,
    pub turns: Vec<Turn>,
    pub calls: Vec<Call>,
    pub gaps: Vec<Gap>,
}

impl Trajectory {
    pub fn has_gap(&self, code: &str) -> bool {
        self.gaps.iter().any(|g| g.code == code)
    }
    pub fn has_any_gap(&self, codes: &[&str]) -> bool {
        self.gaps.iter().any(|g| codes.contains(&g.code.as_str()))
    }
}

pub(crate) type R<T> = Result<T, String>;

pub(crate) fn object<'a>(v: &'a Value, at: &str) -> R<&'a Map<String, Value>> {
    v.as_object().ok_or_else(|| format!("{at}: not an object"))
}

/// Refuses keys the model does not declare (`extra="forbid"`).
/// The keys of a model call's `meta` in a trajectory (upstream's `ModelCallMeta`), in its order.
pub(crate) const CALL_META_KEYS: [&str; 9] = [
    "response_id",
    "model_ref",
    "model",
    "dialect",
    "status_code",
    "response_status",
    "finish_reason",
    "error_category",
    "latency_ttft_ms",
];

pub(crate) fn only(m: &Map<String, Value>, at: &str, allowed: &[&str]) -> R<()> {
    match m.keys().find(|k| !allowed.contains(&k.as_str())) {
        Some(k) => Err(format!("{at}.{k}: extra inputs are not permitted")),
        None => Ok(()),
    }
}

pub(crate) fn req_str(m: &Map<String, Value>, at: &str, k: &str) -> R<String> {
    match m.get(k) {
        Some(Value::String(s)) => Ok(s.clone()),
        Some(_) => Err(format!("{at}.{k}: not a string")),
        None => Err(format!("{at}.{k}: field required")),
    }
}

pub(crate) fn opt_str(m: &Map<String, Value>, at: &str, k: &str) -> R<Option<String>> {
    match m.get(k) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err(format!("{at}.{k}: not a string")),
    }
}

/// Pydantic's lax int: an integer, a float without a fraction, a bool, or a string of one.
fn lax_int(v: &Value) -> Option<i64> {
    match v {
        Value::Bool(b) => Some(i64::from(*b)),
        Value::Number(n) => n.as_i64().or_else(|| {
            n.as_f64()
                .filter(|f| f.fract() == 0.0 && f.abs() < 9.2e18)
                .map(|f| f as i64)
        }),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

/// Pydantic's lax float: a number, a bool, or a numeric string.
fn lax_float(v: &Value) -> Option<f64> {
    match v {
        Value::Bool(b) => Some(f64::from(u8::from(*b))),
        Value::Number(n) => n.as_f64(),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

fn lax_bool(v: &Value) -> Option<bool> {
    match v {
        Value::Bool(b) => Some(*b),
        Value::Number(n) => match n.as_i64() {
            Some(0) => Some(false),
            Some(1) => Some(true),
            _ => None,
        },
        Value::String(s) => match s.to_ascii_lowercase().as_str() {
            "0" | "off" | "f" | "false" | "n" | "no" => Some(false),
            "1" | "on" | "t" | "true" | "y" | "yes" => Some(true),
            _ => None,
        },
        _ => None,
    }
}

pub(crate) fn opt_int(
    m: &Map<String, Value>,
    at: &str,
    k: &str,
    min: Option<i64>,
) -> R<Option<i64>> {
    match m.get(k) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => {
            let i = lax_int(v).ok_or_else(|| format!("{at}.{k}: not an integer"))?;
            if min.is_some_and(|min| i < min) {
                return Err(format!("{at}.{k}: below {}", min.unwrap_or(0)));
            }
            Ok(Some(i))
        }
    }
}

pub(crate) fn opt_float(
    m: &Map<String, Value>,
    at: &str,
    k: &str,
    non_negative: bool,
) -> R<Option<f64>> {
    match m.get(k) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => {
            let f = lax_float(v).ok_or_else(|| format!("{at}.{k}: not a number"))?;
            if non_negative && f < 0.0 {
                return Err(format!("{at}.{k}: below 0"));
            }
            Ok(Some(f))
        }
    }
}

pub(crate) fn literal(m: &Map<String, Value>, at: &str, k: &str, allowed: &[&str]) -> R<()> {
    match m.get(k) {
        None => Ok(()),
        Some(Value::String(s)) if allowed.contains(&s.as_str()) => Ok(()),
        Some(_) => Err(format!("{at}.{k}: not one of {allowed:?}")),
    }
}

pub(crate) fn list<'a>(m: &'a Map<String, Value>, at: &str, k: &str) -> R<&'a [Value]> {
    match m.get(k) {
        None => Ok(&[]),
        Some(Value::Array(a)) => Ok(a),
        Some(_) => Err(format!("{at}.{k}: not a list")),
    }
}

/// `ModelServerRef`: a plain Pydantic model (extra keys ignored).
fn model_ref(v: &Value, at: &str) -> R<Option<ModelRef>> {
    if v.is_null() {
        return Ok(None);
    }
    let m = object(v, at)?;
    literal(m, at, "type", &["responses_api_models"])?;
    if !m.contains_key("type") {
        return Err(format!("{at}.type: field required"));
    }
    Ok(Some(ModelRef {
        kind: req_str(m, at, "type")?,
        name: req_str(m, at, "name")?,
    }))
}

pub(crate) fn call_ref(v: &Value, at: &str) -> R<CallRef> {
    let m = object(v, at)?;
    only(m, at, &["model_call_id", "model_ref", "response_id"])?;
    let r = CallRef {
        model_call_id: opt_str(m, at, "model_call_id")?,
        model_ref: match m.get("model_ref") {
            Some(v) => model_ref(v, &format!("{at}.model_ref"))?,
            None => None,
        },
        response_id: opt_str(m, at, "response_id")?,
    };
    let has_id = r.model_call_id.as_deref().is_some_and(|s| !s.is_empty());
    let has_pair = r.model_ref.is_some() && r.response_id.as_deref().is_some_and(|s| !s.is_empty());
    if !has_id && !has_pair {
        return Err(format!(
            "{at}: model_call_id or both model_ref and response_id are required"
        ));
    }
    Ok(r)
}

fn refs(m: &Map<String, Value>, at: &str) -> R<Vec<CallRef>> {
    list(m, at, "model_calls")?
        .iter()
        .enumerate()
        .map(|(i, v)| call_ref(v, &format!("{at}.model_calls[{i}]")))
        .collect()
}

pub(crate) fn invocation(v: &Value, at: &str) -> R<(String, Vec<CallRef>)> {
    let m = object(v, at)?;
    only(
        m,
        at,
        &[
            "kind",
            "invocation_id",
            "parent_invocation_id",
            "spawned_by_tool_call_id",
            "status",
            "duration_ms",
            "error_type",
            "model_calls",
            "conversation",
        ],
    )?;
    literal(m, at, "kind", &["agent_invocation"])?;
    literal(
        m,
        at,
        "status",
        &["completed", "failed", "incomplete", "unknown"],
    )?;
    opt_str(m, at, "parent_invocation_id")?;
    opt_str(m, at, "spawned_by_tool_call_id")?;
    opt_float(m, at, "duration_ms", true)?;
    opt_str(m, at, "error_type")?;
    // Conversation items are Responses input items upstream; gymscope checks only that each
    // is an object (the checks never read them).
    for (i, item) in list(m, at, "conversation")?.iter().enumerate() {
        object(item, &format!("{at}.conversation[{i}]"))?;
    }
    Ok((req_str(m, at, "invocation_id")?, refs(m, at)?))
}

fn turn(v: &Value, at: &str) -> R<(String, String, String, Turn)> {
    let m = object(v, at)?;
    only(
        m,
        at,
        &[
            "invocation_id",
            "task_id",
            "rollout_id",
            "turn_no",
            "timestamp",
            "question",
            "answer",
            "reasoning_content",
            "resolved",
            "step_count",
            "model_calls",
        ],
    )?;
    let invocation_id = req_str(m, at, "invocation_id")?;
    let task_id = req_str(m, at, "task_id")?;
    let rollout_id = req_str(m, at, "rollout_id")?;
    let turn_no =
        opt_int(m, at, "turn_no", Some(1))?.ok_or(format!("{at}.turn_no: field required"))?;
    opt_float(m, at, "timestamp", false)?.ok_or(format!("{at}.timestamp: field required"))?;
    if let Some(v) = m.get("resolved").filter(|v| !v.is_null()) {
        lax_bool(v).ok_or_else(|| format!("{at}.resolved: not a boolean"))?;
    }
    opt_int(m, at, "step_count", Some(0))?.ok_or(format!("{at}.step_count: field required"))?;
    let t = Turn {
        turn_no,
        answer: m.get("answer").cloned().unwrap_or(Value::Null),
        reasoning_content: m.get("reasoning_content").cloned().unwrap_or(Value::Null),
        model_calls: refs(m, at)?,
    };
    Ok((invocation_id, task_id, rollout_id, t))
}

fn model_call(v: &Value, at: &str) -> R<Call> {
    let m = object(v, at)?;
    only(
        m,
        at,
        &[
            "model_call_id",
            "started_at",
            "completed_at",
            "duration_ms",
            "request",
            "response",
            "response_metadata",
            "token_stats",
        ],
    )?;
    opt_float(m, at, "started_at", false)?;
    opt_float(m, at, "completed_at", false)?;
    opt_float(m, at, "duration_ms", true)?;
    let empty = Map::new();
    let meta_at = format!("{at}.response_metadata");
    let meta = match m.get("response_metadata") {
        None => &empty,
        Some(v) => object(v, &meta_at)?,
    };
    only(meta, &meta_at, &CALL_META_KEYS)?;
    opt_str(meta, &meta_at, "model")?;
    opt_str(meta, &meta_at, "dialect")?;
    opt_float(meta, &meta_at, "latency_ttft_ms", true)?;
    let tok_at = format!("{at}.token_stats");
    let tokens = match m.get("token_stats") {
        None => &empty,
        Some(v) => object(v, &tok_at)?,
    };
    only(
        tokens,
        &tok_at,
        &[
            "prompt_tokens",
            "completion_tokens",
            "reasoning_tokens",
            "total_tokens",
            "cached_tokens",
        ],
    )?;
    opt_int(tokens, &tok_at, "reasoning_tokens", Some(0))?;
    opt_int(tokens, &tok_at, "total_tokens", Some(0))?;
    opt_int(tokens, &tok_at, "cached_tokens", Some(0))?;
    Ok(Call {
        model_call_id: opt_str(m, at, "model_call_id")?,
        response_id: opt_str(meta, &meta_at, "response_id")?,
        model_ref: match meta.get("model_ref") {
            Some(v) => model_ref(v, &format!("{meta_at}.model_ref"))?,
            None => None,
        },
        status_code: opt_int(meta, &meta_at, "status_code", None)?,
        response_status: opt_str(meta, &meta_at, "response_status")?,
        finish_reason: opt_str(meta, &meta_at, "finish_reason")?,
        error_category: opt_str(meta, &meta_at, "error_category")?,
        tokens_in: opt_int(tokens, &tok_at, "prompt_tokens", Some(0))?,
        tokens_out: opt_int(tokens, &tok_at, "completion_tokens", Some(0))?,
        response: m.get("response").cloned().unwrap_or(Value::Null),
    })
}

/// A trajectory's tool call (`TrajectoryToolCall`), or with `with_output` false an agent's
/// `ToolCallObservation` (the same fields but `output`).
pub(crate) fn tool_call(v: &Value, at: &str, with_output: bool) -> R<()> {
    let m = object(v, at)?;
    let fields = [
        "kind",
        "invocation_id",
        "tool_call_id",
        "sandbox_id",
        "tool_name",
        "started_at",
        "completed_at",
        "duration_ms",
        "timing_source",
        "status",
        "error_type",
        "output",
    ];
    only(m, at, &fields[..fields.len() - usize::from(!with_output)])?;
    literal(m, at, "kind", &["tool_call"])?;
    req_str(m, at, "invocation_id")?;
    req_str(m, at, "tool_call_id")?;
    opt_str(m, at, "sandbox_id")?;
    opt_str(m, at, "tool_name")?;
    let start = opt_float(m, at, "started_at", false)?;
    let end = opt_float(m, at, "completed_at", false)?;
    if let (Some(s), Some(e)) = (start, end) {
        if e < s {
            return Err(format!("{at}: completed_at is before started_at"));
        }
    }
    opt_float(m, at, "duration_ms", true)?;
    if m.get("timing_source").is_some_and(|v| !v.is_null()) {
        literal(m, at, "timing_source", &["executor", "artifact", "harness"])?;
    }
    literal(
        m,
        at,
        "status",
        &[
            "completed",
            "failed",
            "timeout",
            "cancelled",
            "incomplete",
            "unknown",
        ],
    )?;
    opt_str(m, at, "error_type")?;
    Ok(())
}

pub(crate) fn gap(v: &Value, at: &str) -> R<Gap> {
    let m = object(v, at)?;
    only(m, at, &["code", "invocation_id", "detail"])?;
    Ok(Gap {
        code: req_str(m, at, "code")?,
        invocation_id: opt_str(m, at, "invocation_id")?,
        detail: opt_str(m, at, "detail")?,
    })
}

/// Validates a row's `ng_trajectory` value (not null) into the checks' view of it.
pub fn validate(v: &Value) -> R<Trajectory> {
    let at = "ng_trajectory";
    let m = object(v, at)?;
    only(
        m,
        at,
        &[
            "schema_version",
            "task_id",
            "rollout_id",
            "invocations",
            "turns",
            "model_calls",
            "tool_calls",
            "gaps",
        ],
    )?;
    literal(m, at, "schema_version", &["1.0"])?;
    let task_id = req_str(m, at, "task_id")?;
    let rollout_id = req_str(m, at, "rollout_id")?;
    let mut t = Trajectory {
        rollout_id: rollout_id.clone(),
        ..Trajectory::default()
    };
    let mut invocation_ids = HashSet::new();
    for (i, v) in list(m, at, "invocations")?.iter().enumerate() {
        let (id, refs) = invocation(v, &format!("{at}.invocations[{i}]"))?;
        if !invocation_ids.insert(id) {
            return Err("invocation_id must be unique within a trajectory".into());
        }
        t.invocation_refs.push(refs);
    }
    let mut turn_keys = HashSet::new();
    for (i, v) in list(m, at, "turns")?.iter().enumerate() {
        let (inv, task, rollout, turn) = turn(v, &format!("{at}.turns[{i}]"))?;
        if task != task_id || rollout != rollout_id {
            return Err("turn identity must match the trajectory".into());
        }
        if !turn_keys.insert((inv, turn.turn_no)) {
            return Err("turn number must be unique within an invocation".into());
        }
        t.turns.push(turn);
    }
    let mut call_ids = HashSet::new();
    for (i, v) in list(m, at, "model_calls")?.iter().enumerate() {
        let call = model_call(v, &format!("{at}.model_calls[{i}]"))?;
        if let Some(id) = call.model_call_id.as_deref().filter(|s| !s.is_empty()) {
            if !call_ids.insert(id.to_string()) {
                return Err("model_call_id must be unique within a trajectory".into());
            }
        }
        t.calls.push(call);
    }
    for (i, v) in list(m, at, "tool_calls")?.iter().enumerate() {
        tool_call(v, &format!("{at}.tool_calls[{i}]"), true)?;
    }
    for (i, v) in list(m, at, "gaps")?.iter().enumerate() {
        t.gaps.push(gap(v, &format!("{at}.gaps[{i}]"))?);
    }
    Ok(t)
}

/// Builds a JSON object from `(key, value)` pairs in the model's field order.
pub(crate) fn obj(fields: Vec<(&str, Value)>) -> Value {
    Value::Object(
        fields
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect(),
    )
}

pub(crate) fn get<'a>(m: &'a Map<String, Value>, k: &str) -> &'a Value {
    m.get(k).unwrap_or(&Value::Null)
}

pub(crate) fn d_str(m: &Map<String, Value>, k: &str) -> Value {
    get(m, k).clone()
}

pub(crate) fn d_int(m: &Map<String, Value>, k: &str) -> Value {
    lax_int(get(m, k)).map_or(Value::Null, Value::from)
}

pub(crate) fn d_float(m: &Map<String, Value>, k: &str) -> Value {
    lax_float(get(m, k)).map_or(Value::Null, Value::from)
}

pub(crate) fn d_or(m: &Map<String, Value>, k: &str, default: &str) -> Value {
    match get(m, k) {
        Value::Null => Value::from(default),
        v => v.clone(),
    }
}

pub(crate) fn d_list(
    m: &Map<String, Value>,
    k: &str,
    item: fn(&Map<String, Value>) -> Value,
) -> Value {
    Value::Array(
        get(m, k)
            .as_array()
            .map(|a| a.iter().filter_map(Value::as_object).map(item).collect())
            .unwrap_or_default(),
    )
}

fn d_model_ref(v: &Value) -> Value {
    match v.as_object() {
        Some(m) => obj(vec![("type", d_str(m, "type")), ("name", d_str(m, "name"))]),
        None => Value::Null,
    }
}

pub(crate) fn d_ref(m: &Map<String, Value>) -> Value {
    obj(vec![
        ("model_call_id", d_str(m, "model_call_id")),
        ("model_ref", d_model_ref(get(m, "model_ref"))),
        ("response_id", d_str(m, "response_id")),
    ])
}

pub(crate) fn d_invocation(m: &Map<String, Value>) -> Value {
    obj(vec![
        ("kind", Value::from("agent_invocation")),
        ("invocation_id", d_str(m, "invocation_id")),
        ("parent_invocation_id", d_str(m, "parent_invocation_id")),
        (
            "spawned_by_tool_call_id",
            d_str(m, "spawned_by_tool_call_id"),
        ),
        ("status", d_or(m, "status", "unknown")),
        ("duration_ms", d_float(m, "duration_ms")),
        ("error_type", d_str(m, "error_type")),
        ("model_calls", d_list(m, "model_calls", d_ref)),
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

fn d_turn(m: &Map<String, Value>) -> Value {
    obj(vec![
        ("invocation_id", d_str(m, "invocation_id")),
        ("task_id", d_str(m, "task_id")),
        ("rollout_id", d_str(m, "rollout_id")),
        ("turn_no", d_int(m, "turn_no")),
        ("timestamp", d_float(m, "timestamp")),
        ("question", d_str(m, "question")),
        ("answer", d_str(m, "answer")),
        ("reasoning_content", d_str(m, "reasoning_content")),
        (
            "resolved",
            lax_bool(get(m, "resolved")).map_or(Value::Null, Value::from),
        ),
        ("step_count", d_int(m, "step_count")),
        ("model_calls", d_list(m, "model_calls", d_ref)),
    ])
}

/// `TrajectoryResponseMetadata` in field order.
pub fn d_metadata(m: &Map<String, Value>) -> Value {
    obj(vec![
        ("response_id", d_str(m, "response_id")),
        ("model_ref", d_model_ref(get(m, "model_ref"))),
        ("model", d_str(m, "model")),
        ("dialect", d_str(m, "dialect")),
        ("status_code", d_int(m, "status_code")),
        ("response_status", d_str(m, "response_status")),
        ("finish_reason", d_str(m, "finish_reason")),
        ("error_category", d_str(m, "error_category")),
        ("latency_ttft_ms", d_float(m, "latency_ttft_ms")),
    ])
}

/// `TrajectoryTokenStats` in field order.
pub fn d_tokens(m: &Map<String, Value>) -> Value {
    obj(vec![
        ("prompt_tokens", d_int(m, "prompt_tokens")),
        ("completion_tokens", d_int(m, "completion_tokens")),
        ("reasoning_tokens", d_int(m, "reasoning_tokens")),
        ("total_tokens", d_int(m, "total_tokens")),
        ("cached_tokens", d_int(m, "cached_tokens")),
    ])
}

/// `TrajectoryModelCall` in field order.
pub fn d_model_call(m: &Map<String, Value>) -> Value {
    let empty = Map::new();
    obj(vec![
        ("model_call_id", d_str(m, "model_call_id")),
        ("started_at", d_float(m, "started_at")),
        ("completed_at", d_float(m, "completed_at")),
        ("duration_ms", d_float(m, "duration_ms")),
        ("request", d_str(m, "request")),
        ("response", d_str(m, "response")),
        (
            "response_metadata",
            d_metadata(get(m, "response_metadata").as_object().unwrap_or(&empty)),
        ),
        (
            "token_stats",
            d_tokens(get(m, "token_stats").as_object().unwrap_or(&empty)),
        ),
    ])
}

pub(crate) fn d_tool_call(m: &Map<String, Value>) -> Value {
    obj(vec![
        ("kind", Value::from("tool_call")),
        ("invocation_id", d_str(m, "invocation_id")),
        ("tool_call_id", d_str(m, "tool_call_id")),
        ("sandbox_id", d_str(m, "sandbox_id")),
        ("tool_name", d_str(m, "tool_name")),
        ("started_at", d_float(m, "started_at")),
        ("completed_at", d_float(m, "completed_at")),
        ("duration_ms", d_float(m, "duration_ms")),
        ("timing_source", d_str(m, "timing_source")),
        ("status", d_or(m, "status", "unknown")),
        ("error_type", d_str(m, "error_type")),
        ("output", d_str(m, "output")),
    ])
}

/// `ObservationGap` in field order.
pub fn d_gap(m: &Map<String, Value>) -> Value {
    obj(vec![
        ("code", d_str(m, "code")),
        ("invocation_id", d_str(m, "invocation_id")),
        ("detail", d_str(m, "detail")),
    ])
}

/// The parts of a valid trajectory in upstream's dumped form (every field, defaults filled,
/// values coerced as Pydantic coerces them): the producer's evidence the collector builds on.
pub struct Canonical {
    pub task_id: String,
    pub rollout_id: String,
    pub invocations: Vec<Value>,
    pub turns: Vec<Value>,
    pub model_calls: Vec<Value>,
    pub tool_calls: Vec<Value>,
    pub gaps: Vec<Value>,
}

/// Validates (as [`validate`]) and dumps a trajectory.
pub fn canonical(v: &Value) -> R<Canonical> {
    validate(v)?;
    let m = object(v, "ng_trajectory")?;
    let items = |k: &str, f: fn(&Map<String, Value>) -> Value| match d_list(m, k, f) {
        Value::Array(a) => a,
        _ => Vec::new(),
    };
    Ok(Canonical {
        task_id: req_str(m, "ng_trajectory", "task_id")?,
        rollout_id: req_str(m, "ng_trajectory", "rollout_id")?,
        invocations: items("invocations", d_invocation),
        turns: items("turns", d_turn),
        model_calls: items("model_calls", d_model_call),
        tool_calls: items("tool_calls", d_tool_call),
        gaps: items("gaps", d_gap),
    })
}
