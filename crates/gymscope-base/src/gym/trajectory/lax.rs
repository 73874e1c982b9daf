//! [`validate`]: a trajectory read as upstream's `TrajectoryRecord.model_validate` reads it
//! (lax), each field checked in the models' order, into the record's one type set.

use super::{
    schema, CallRef, Gap, Invocation, ModelCall, ModelRef, Record, ResponseMeta, TokenStats,
    ToolCall, Turn, NULL,
};
use crate::gym::pydantic::{
    list, literal, object, only, opt_bool, opt_float, opt_int, opt_str, req_str, R,
};
use serde_json::{Map, Value};
use std::collections::HashSet;

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

/// `ModelCallRef`: a call's id, or its model and response id.
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

/// `AgentInvocation`.
pub fn invocation<'a>(v: &'a Value, at: &str) -> R<Invocation<'a>> {
    let m = object(v, at)?;
    only(m, at, &schema::INVOCATION)?;
    literal(m, at, "kind", &["agent_invocation"])?;
    let status = literal(m, at, "status", &schema::INVOCATION_STATUS)?.unwrap_or("unknown");
    let parent_invocation_id = opt_str(m, at, "parent_invocation_id")?;
    let spawned_by_tool_call_id = opt_str(m, at, "spawned_by_tool_call_id")?;
    let duration_ms = opt_float(m, at, "duration_ms", true)?;
    let error_type = opt_str(m, at, "error_type")?;
    // Conversation items are Responses input items upstream; checked here only as objects (the
    // health checks never read them; the ATIF export reads them strictly).
    let conversation = list(m, at, "conversation")?;
    for (i, item) in conversation.iter().enumerate() {
        object(item, &format!("{at}.conversation[{i}]"))?;
    }
    Ok(Invocation {
        invocation_id: req_str(m, at, "invocation_id")?,
        parent_invocation_id,
        spawned_by_tool_call_id,
        status: status.to_string(),
        duration_ms,
        error_type,
        model_calls: refs(m, at)?,
        conversation,
    })
}

/// `TrajectoryTurn`, with the task and rollout it names.
fn turn<'a>(v: &'a Value, at: &str) -> R<(String, String, Turn<'a>)> {
    let m = object(v, at)?;
    only(m, at, &schema::TURN)?;
    let invocation_id = req_str(m, at, "invocation_id")?;
    let task_id = req_str(m, at, "task_id")?;
    let rollout_id = req_str(m, at, "rollout_id")?;
    let turn_no =
        opt_int(m, at, "turn_no", Some(1))?.ok_or(format!("{at}.turn_no: field required"))?;
    let timestamp =
        opt_float(m, at, "timestamp", false)?.ok_or(format!("{at}.timestamp: field required"))?;
    let resolved = match m.get("resolved").filter(|v| !v.is_null()) {
        Some(v) => Some(
            crate::gym::pydantic::lax_bool(v)
                .ok_or_else(|| format!("{at}.resolved: not a boolean"))?,
        ),
        None => None,
    };
    let step_count =
        opt_int(m, at, "step_count", Some(0))?.ok_or(format!("{at}.step_count: field required"))?;
    let t = Turn {
        invocation_id,
        turn_no,
        timestamp,
        question: m.get("question").unwrap_or(&NULL),
        answer: m.get("answer").unwrap_or(&NULL),
        reasoning_content: m.get("reasoning_content").unwrap_or(&NULL),
        resolved,
        step_count,
        model_calls: refs(m, at)?,
    };
    Ok((task_id, rollout_id, t))
}

/// `TrajectoryModelCall`, its `response_metadata` and `token_stats` in their fields' order.
fn model_call<'a>(v: &'a Value, at: &str) -> R<ModelCall<'a>> {
    let m = object(v, at)?;
    only(m, at, &schema::MODEL_CALL)?;
    let started_at = opt_float(m, at, "started_at", false)?;
    let completed_at = opt_float(m, at, "completed_at", false)?;
    let duration_ms = opt_float(m, at, "duration_ms", true)?;
    let empty = Map::new();
    let meta_at = format!("{at}.response_metadata");
    let meta = match m.get("response_metadata") {
        None => &empty,
        Some(v) => object(v, &meta_at)?,
    };
    only(meta, &meta_at, &schema::CALL_META)?;
    let model = opt_str(meta, &meta_at, "model")?;
    let dialect = opt_str(meta, &meta_at, "dialect")?;
    let latency_ttft_ms = opt_float(meta, &meta_at, "latency_ttft_ms", true)?;
    let upstream_attempted = opt_bool(meta, &meta_at, "upstream_attempted")?;
    let response_source = if meta.get("response_source").is_some_and(Value::is_null) {
        None
    } else {
        literal(meta, &meta_at, "response_source", &["upstream", "local"])?.map(str::to_string)
    };
    let upstream_status_code = opt_int(meta, &meta_at, "upstream_status_code", None)?;
    let local_response_reason = opt_str(meta, &meta_at, "local_response_reason")?;
    let tok_at = format!("{at}.token_stats");
    let tokens = match m.get("token_stats") {
        None => &empty,
        Some(v) => object(v, &tok_at)?,
    };
    only(tokens, &tok_at, &schema::TOKEN_STATS)?;
    let reasoning_tokens = opt_int(tokens, &tok_at, "reasoning_tokens", Some(0))?;
    let total_tokens = opt_int(tokens, &tok_at, "total_tokens", Some(0))?;
    let cached_tokens = opt_int(tokens, &tok_at, "cached_tokens", Some(0))?;
    Ok(ModelCall {
        model_call_id: opt_str(m, at, "model_call_id")?,
        started_at,
        completed_at,
        duration_ms,
        request: m.get("request").unwrap_or(&NULL),
        response: m.get("response").unwrap_or(&NULL),
        meta: ResponseMeta {
            response_id: opt_str(meta, &meta_at, "response_id")?,
            model_ref: match meta.get("model_ref") {
                Some(v) => model_ref(v, &format!("{meta_at}.model_ref"))?,
                None => None,
            },
            model,
            dialect,
            status_code: opt_int(meta, &meta_at, "status_code", None)?,
            response_status: opt_str(meta, &meta_at, "response_status")?,
            finish_reason: opt_str(meta, &meta_at, "finish_reason")?,
            upstream_attempted,
            response_source,
            upstream_status_code,
            local_response_reason,
            error_category: opt_str(meta, &meta_at, "error_category")?,
            latency_ttft_ms,
        },
        tokens: TokenStats {
            prompt_tokens: opt_int(tokens, &tok_at, "prompt_tokens", Some(0))?,
            completion_tokens: opt_int(tokens, &tok_at, "completion_tokens", Some(0))?,
            reasoning_tokens,
            total_tokens,
            cached_tokens,
        },
    })
}

/// A trajectory's tool call (`TrajectoryToolCall`), or with `with_output` false an agent's
/// `ToolCallObservation` (the same fields but `output`).
pub fn tool_call<'a>(v: &'a Value, at: &str, with_output: bool) -> R<ToolCall<'a>> {
    let m = object(v, at)?;
    let fields = schema::TOOL_CALL;
    only(m, at, &fields[..fields.len() - usize::from(!with_output)])?;
    literal(m, at, "kind", &["tool_call"])?;
    let invocation_id = req_str(m, at, "invocation_id")?;
    let tool_call_id = req_str(m, at, "tool_call_id")?;
    let sandbox_id = opt_str(m, at, "sandbox_id")?;
    let tool_name = opt_str(m, at, "tool_name")?;
    let started_at = opt_float(m, at, "started_at", false)?;
    let completed_at = opt_float(m, at, "completed_at", false)?;
    if let (Some(s), Some(e)) = (started_at, completed_at) {
        if e < s {
            return Err(format!("{at}: completed_at is before started_at"));
        }
    }
    let duration_ms = opt_float(m, at, "duration_ms", true)?;
    let timing_source = if m.get("timing_source").is_some_and(|v| !v.is_null()) {
        literal(m, at, "timing_source", &schema::TIMING_SOURCE)?
    } else {
        None
    };
    let status = literal(m, at, "status", &schema::TOOL_STATUS)?.unwrap_or("unknown");
    Ok(ToolCall {
        invocation_id,
        tool_call_id,
        sandbox_id,
        tool_name,
        started_at,
        completed_at,
        duration_ms,
        timing_source: timing_source.map(str::to_string),
        status: status.to_string(),
        error_type: opt_str(m, at, "error_type")?,
        output: m.get("output").unwrap_or(&NULL),
    })
}

/// `TrajectoryGap`.
pub fn gap(v: &Value, at: &str) -> R<Gap> {
    let m = object(v, at)?;
    only(m, at, &schema::GAP)?;
    Ok(Gap {
        code: req_str(m, at, "code")?,
        invocation_id: opt_str(m, at, "invocation_id")?,
        detail: opt_str(m, at, "detail")?,
    })
}

/// Validates a row's `ng_trajectory` value (not null) into the record.
pub fn validate(v: &Value) -> R<Record<'_>> {
    let at = "ng_trajectory";
    let m = object(v, at)?;
    only(m, at, &schema::RECORD)?;
    let schema_version = literal(m, at, "schema_version", &["1.0"])?.unwrap_or("1.0");
    let task_id = req_str(m, at, "task_id")?;
    let rollout_id = req_str(m, at, "rollout_id")?;
    let mut t = Record {
        schema_version: schema_version.to_string(),
        ..Record::default()
    };
    let mut invocation_ids = HashSet::new();
    for (i, v) in list(m, at, "invocations")?.iter().enumerate() {
        let invocation = invocation(v, &format!("{at}.invocations[{i}]"))?;
        if !invocation_ids.insert(invocation.invocation_id.clone()) {
            return Err("invocation_id must be unique within a trajectory".into());
        }
        t.invocations.push(invocation);
    }
    let mut turn_keys = HashSet::new();
    for (i, v) in list(m, at, "turns")?.iter().enumerate() {
        let (task, rollout, turn) = turn(v, &format!("{at}.turns[{i}]"))?;
        if task != task_id || rollout != rollout_id {
            return Err("turn identity must match the trajectory".into());
        }
        if !turn_keys.insert((turn.invocation_id.clone(), turn.turn_no)) {
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
        t.model_calls.push(call);
    }
    for (i, v) in list(m, at, "tool_calls")?.iter().enumerate() {
        t.tool_calls
            .push(tool_call(v, &format!("{at}.tool_calls[{i}]"), true)?);
    }
    for (i, v) in list(m, at, "gaps")?.iter().enumerate() {
        t.gaps.push(gap(v, &format!("{at}.gaps[{i}]"))?);
    }
    (t.task_id, t.rollout_id) = (task_id, rollout_id);
    Ok(t)
}
