//! The trajectory record, `ng_trajectory`: upstream's `TrajectoryRecord` (schema version
//! "1.0", upstream `nemo_gym/rollout_observability.py` @07d6b0d) validated as its
//! `model_validate` does (extra keys forbidden, Pydantic's lax coercions: [`super::pydantic`])
//! into the few typed values the health checks read (upstream `nemo_gym/rollout_health.py`
//! @9a974a9 validates it so).
//! A row whose trajectory fails here is `record_unreadable`; the error name is upstream's
//! (`ValidationError`), the message ours. [`dump`] writes a record's parts in their dumped form.

pub mod dump;
pub mod schema;

use super::pydantic::{
    list, literal, object, only, opt_bool, opt_float, opt_int, opt_str, req_str, R,
};
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
    /// When the call started (seconds): orders a model's calls in time (v0.7.0's
    /// `rollout_ended_on_failed_model_call`).
    pub started_at: Option<f64>,
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

/// The keys of a model call's `meta` in a trajectory, in its order.
pub use schema::CALL_META as CALL_META_KEYS;

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

pub fn call_ref(v: &Value, at: &str) -> R<CallRef> {
    let m = object(v, at)?;
    only(m, at, &schema::CALL_REF)?;
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

pub fn invocation(v: &Value, at: &str) -> R<(String, Vec<CallRef>)> {
    let m = object(v, at)?;
    only(m, at, &schema::INVOCATION)?;
    literal(m, at, "kind", &["agent_invocation"])?;
    literal(m, at, "status", &schema::INVOCATION_STATUS)?;
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
    only(m, at, &schema::TURN)?;
    let invocation_id = req_str(m, at, "invocation_id")?;
    let task_id = req_str(m, at, "task_id")?;
    let rollout_id = req_str(m, at, "rollout_id")?;
    let turn_no =
        opt_int(m, at, "turn_no", Some(1))?.ok_or(format!("{at}.turn_no: field required"))?;
    opt_float(m, at, "timestamp", false)?.ok_or(format!("{at}.timestamp: field required"))?;
    if let Some(v) = m.get("resolved").filter(|v| !v.is_null()) {
        super::pydantic::lax_bool(v).ok_or_else(|| format!("{at}.resolved: not a boolean"))?;
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
    only(m, at, &schema::MODEL_CALL)?;
    let started_at = opt_float(m, at, "started_at", false)?;
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
    // The four fields v0.7.0 added (where a response came from, and why when local).
    opt_bool(meta, &meta_at, "upstream_attempted")?;
    if !meta.get("response_source").is_some_and(Value::is_null) {
        literal(meta, &meta_at, "response_source", &["upstream", "local"])?;
    }
    opt_int(meta, &meta_at, "upstream_status_code", None)?;
    opt_str(meta, &meta_at, "local_response_reason")?;
    let tok_at = format!("{at}.token_stats");
    let tokens = match m.get("token_stats") {
        None => &empty,
        Some(v) => object(v, &tok_at)?,
    };
    only(tokens, &tok_at, &schema::TOKEN_STATS)?;
    opt_int(tokens, &tok_at, "reasoning_tokens", Some(0))?;
    opt_int(tokens, &tok_at, "total_tokens", Some(0))?;
    opt_int(tokens, &tok_at, "cached_tokens", Some(0))?;
    Ok(Call {
        model_call_id: opt_str(m, at, "model_call_id")?,
        started_at,
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
pub fn tool_call(v: &Value, at: &str, with_output: bool) -> R<()> {
    let m = object(v, at)?;
    let fields = schema::TOOL_CALL;
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

pub fn gap(v: &Value, at: &str) -> R<Gap> {
    let m = object(v, at)?;
    only(m, at, &schema::GAP)?;
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
    only(m, at, &schema::RECORD)?;
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
