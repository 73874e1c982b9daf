//! A row's `ng_trajectory` (schema "1.0") read strictly, as NeMo Gym v0.7.0's ATIF export reads
//! it (`TrajectoryRecord.model_validate(raw, strict=True)`, models in
//! `nemo_gym/rollout_observability.py`), after the preflight that refuses fields the models
//! would drop (`_preflight_raw_trajectory`). The record's types are the one set of
//! [`crate::gym::trajectory`] (whose lax reading the health checks use); this layer adds the
//! strict checks, the conversations read as items, and the dumps the export writes.

use super::gym_items::{self, reject_unknown, Item, Refusal};
use super::strict_model::{dump, float_value, list, object, Fields, Invalid};
use crate::gym::trajectory::{
    schema, CallRef, Gap, Invocation, ModelCall, ModelRef, Record, ResponseMeta, TokenStats,
    ToolCall, Turn, NULL,
};
use serde_json::Value;
use std::collections::HashSet;

/// A record read strictly, with each invocation's conversation as Responses items.
pub struct Strict<'a> {
    pub record: Record<'a>,
    /// One list per invocation, in `record.invocations`' order.
    pub conversations: Vec<Vec<Item>>,
}

/// `ModelServerRef.model_dump(mode="json")`.
fn model_ref_dump(r: &ModelRef) -> Value {
    dump(vec![
        ("type", r.kind.clone().into()),
        ("name", r.name.clone().into()),
    ])
}

fn opt<T: Into<Value>>(v: Option<T>) -> Value {
    v.map_or(Value::Null, Into::into)
}

/// A model call's `model_dump(mode="json", exclude_none=True)`, as the ATIF step's extra
/// carries it.
pub fn call_dump(c: &ModelCall) -> Value {
    let m = &c.meta;
    let t = &c.tokens;
    let meta = dump(vec![
        ("response_id", opt(m.response_id.clone())),
        (
            "model_ref",
            m.model_ref.as_ref().map_or(Value::Null, model_ref_dump),
        ),
        ("model", opt(m.model.clone())),
        ("dialect", opt(m.dialect.clone())),
        ("status_code", opt(m.status_code)),
        ("response_status", opt(m.response_status.clone())),
        ("finish_reason", opt(m.finish_reason.clone())),
        ("upstream_attempted", opt(m.upstream_attempted)),
        ("response_source", opt(m.response_source.clone())),
        ("upstream_status_code", opt(m.upstream_status_code)),
        (
            "local_response_reason",
            opt(m.local_response_reason.clone()),
        ),
        ("error_category", opt(m.error_category.clone())),
        ("latency_ttft_ms", float_value(m.latency_ttft_ms)),
    ]);
    let tokens = dump(vec![
        ("prompt_tokens", opt(t.prompt_tokens)),
        ("completion_tokens", opt(t.completion_tokens)),
        ("reasoning_tokens", opt(t.reasoning_tokens)),
        ("total_tokens", opt(t.total_tokens)),
        ("cached_tokens", opt(t.cached_tokens)),
    ]);
    dump(vec![
        ("model_call_id", opt(c.model_call_id.clone())),
        ("started_at", float_value(c.started_at)),
        ("completed_at", float_value(c.completed_at)),
        ("duration_ms", float_value(c.duration_ms)),
        ("request", c.request.clone()),
        ("response", c.response.clone()),
        ("response_metadata", meta),
        ("token_stats", tokens),
    ])
}

/// The timing an observation's extra keeps of a tool call (sandbox id, start, end, duration,
/// source).
pub fn tool_timing(t: &ToolCall) -> Vec<(&'static str, Value)> {
    vec![
        ("sandbox_id", opt(t.sandbox_id.clone())),
        ("started_at", float_value(t.started_at)),
        ("completed_at", float_value(t.completed_at)),
        ("duration_ms", float_value(t.duration_ms)),
        ("timing_source", opt(t.timing_source.clone())),
    ]
}

fn preflight_model_ref(value: Option<&Value>, path: &str) -> Result<(), Refusal> {
    match value {
        Some(Value::Object(map)) => reject_unknown(map, &["type", "name"], path),
        _ => Ok(()),
    }
}

fn preflight_call_refs(value: Option<&Value>, path: &str) -> Result<(), Refusal> {
    let Some(Value::Array(refs)) = value else {
        return Ok(());
    };
    for (i, r) in refs.iter().enumerate() {
        if let Value::Object(map) = r {
            preflight_model_ref(map.get("model_ref"), &format!("{path}[{i}].model_ref"))?;
        }
    }
    Ok(())
}

/// `_preflight_raw_trajectory`: the refusals that come before the models see the record.
pub fn preflight(raw: &Value) -> Result<(), Refusal> {
    let Value::Object(map) = raw else {
        return Ok(());
    };
    if let Some(Value::Array(invocations)) = map.get("invocations") {
        for (i, inv) in invocations.iter().enumerate() {
            if let Value::Object(inv) = inv {
                let at = format!("ng_trajectory.invocations[{i}]");
                gym_items::preflight(inv.get("conversation"), &format!("{at}.conversation"))?;
                preflight_call_refs(inv.get("model_calls"), &format!("{at}.model_calls"))?;
            }
        }
    }
    if let Some(Value::Array(turns)) = map.get("turns") {
        for (i, turn) in turns.iter().enumerate() {
            if let Value::Object(turn) = turn {
                let at = format!("ng_trajectory.turns[{i}]");
                for field in ["question", "answer", "reasoning_content"] {
                    gym_items::preflight(turn.get(field), &format!("{at}.{field}"))?;
                }
                preflight_call_refs(turn.get("model_calls"), &format!("{at}.model_calls"))?;
            }
        }
    }
    if let Some(Value::Array(calls)) = map.get("model_calls") {
        for (i, call) in calls.iter().enumerate() {
            if let Some(Value::Object(meta)) = call.get("response_metadata") {
                preflight_model_ref(
                    meta.get("model_ref"),
                    &format!("ng_trajectory.model_calls[{i}].response_metadata.model_ref"),
                )?;
            }
        }
    }
    Ok(())
}

fn model_ref(value: Option<&Value>, path: &str) -> Result<Option<ModelRef>, Invalid> {
    match value {
        None | Some(Value::Null) => Ok(None),
        Some(v) => {
            let f = object(v, path)?;
            f.literal("type", &["responses_api_models"], None)?
                .ok_or_else(|| format!("{}: field required", f.at("type")))?;
            Ok(Some(ModelRef {
                kind: "responses_api_models".into(),
                name: f.req_str("name")?.to_string(),
            }))
        }
    }
}

fn call_refs(f: &Fields, key: &str) -> Result<Vec<CallRef>, Invalid> {
    f.opt_list(key)?
        .iter()
        .enumerate()
        .map(|(i, v)| {
            let r = object(v, &format!("{}[{i}]", f.at(key)))?;
            r.forbid_extra(&schema::CALL_REF)?;
            let call = CallRef {
                model_call_id: r.opt_str("model_call_id")?.map(str::to_string),
                model_ref: model_ref(r.map.get("model_ref"), &r.at("model_ref"))?,
                response_id: r.opt_str("response_id")?.map(str::to_string),
            };
            let has_id = call.model_call_id.as_deref().is_some_and(|s| !s.is_empty());
            let has_pair = call.model_ref.is_some()
                && call.response_id.as_deref().is_some_and(|s| !s.is_empty());
            if !has_id && !has_pair {
                return Err(format!(
                    "{}: model_call_id or both model_ref and response_id are required",
                    r.path
                ));
            }
            Ok(call)
        })
        .collect()
}

fn invocation<'a>(v: &'a Value, path: &str) -> Result<(Invocation<'a>, Vec<Item>), Invalid> {
    let f = object(v, path)?;
    f.forbid_extra(&schema::INVOCATION)?;
    f.literal("kind", &["agent_invocation"], Some("agent_invocation"))?;
    let mut invocation = Invocation {
        invocation_id: f.req_str("invocation_id")?.to_string(),
        parent_invocation_id: f.opt_str("parent_invocation_id")?.map(str::to_string),
        spawned_by_tool_call_id: f.opt_str("spawned_by_tool_call_id")?.map(str::to_string),
        status: f
            .literal("status", &schema::INVOCATION_STATUS, Some("unknown"))?
            .unwrap_or_default(),
        duration_ms: f.opt_float("duration_ms", true)?,
        error_type: f.opt_str("error_type")?.map(str::to_string),
        model_calls: call_refs(&f, "model_calls")?,
        conversation: &[],
    };
    let items = match f.map.get("conversation") {
        None => Vec::new(),
        Some(c) => {
            let items = gym_items::read_all(c, &f.at("conversation"))?;
            invocation.conversation = list(c, &f.at("conversation"))?;
            items
        }
    };
    Ok((invocation, items))
}

fn turn<'a>(v: &'a Value, path: &str) -> Result<(Turn<'a>, String, String), Invalid> {
    let f = object(v, path)?;
    f.forbid_extra(&schema::TURN)?;
    let any = |k: &str| f.map.get(k).unwrap_or(&NULL);
    let t = Turn {
        invocation_id: f.req_str("invocation_id")?.to_string(),
        turn_no: f.req_int("turn_no", 1)?,
        timestamp: f.req_float("timestamp")?,
        question: any("question"),
        answer: any("answer"),
        reasoning_content: any("reasoning_content"),
        resolved: f.opt_bool("resolved")?,
        step_count: f.req_int("step_count", 0)?,
        model_calls: call_refs(&f, "model_calls")?,
    };
    Ok((
        t,
        f.req_str("task_id")?.to_string(),
        f.req_str("rollout_id")?.to_string(),
    ))
}

fn model_call<'a>(v: &'a Value, path: &str) -> Result<ModelCall<'a>, Invalid> {
    let f = object(v, path)?;
    f.forbid_extra(&schema::MODEL_CALL)?;
    let model_call_id = f.opt_str("model_call_id")?.map(str::to_string);
    let started_at = f.opt_float("started_at", false)?;
    let completed_at = f.opt_float("completed_at", false)?;
    let duration_ms = f.opt_float("duration_ms", true)?;

    // Not `Optional` in v0.7.0's models (a default factory): absent is the default, null is
    // refused (rollout_observability.py `TrajectoryModelCall`).
    let empty = Value::Object(Default::default());
    let m = object(
        f.map.get("response_metadata").unwrap_or(&empty),
        &f.at("response_metadata"),
    )?;
    m.forbid_extra(&schema::CALL_META)?;
    let mref = model_ref(m.map.get("model_ref"), &m.at("model_ref"))?;
    // The checks in the order v0.7.0 meets them (its dump's field order), then the fields
    // read as strings.
    let upstream_attempted = m.opt_bool("upstream_attempted")?;
    let response_source = m.literal("response_source", &["upstream", "local"], None)?;
    let upstream_status_code = m.opt_int("upstream_status_code", false)?;
    let latency_ttft_ms = m.opt_float("latency_ttft_ms", true)?;

    let t = object(
        f.map.get("token_stats").unwrap_or(&empty),
        &f.at("token_stats"),
    )?;
    t.forbid_extra(&schema::TOKEN_STATS)?;
    let tokens = TokenStats {
        prompt_tokens: t.opt_int("prompt_tokens", true)?,
        completion_tokens: t.opt_int("completion_tokens", true)?,
        reasoning_tokens: t.opt_int("reasoning_tokens", true)?,
        total_tokens: t.opt_int("total_tokens", true)?,
        cached_tokens: t.opt_int("cached_tokens", true)?,
    };
    let s = |k| m.opt_str(k).map(|o| o.map(str::to_string));
    let meta = ResponseMeta {
        response_id: s("response_id")?,
        model_ref: mref,
        model: s("model")?,
        dialect: s("dialect")?,
        status_code: m.opt_int("status_code", false)?,
        response_status: s("response_status")?,
        finish_reason: s("finish_reason")?,
        upstream_attempted,
        response_source,
        upstream_status_code,
        error_category: s("error_category")?,
        local_response_reason: s("local_response_reason")?,
        latency_ttft_ms,
    };
    Ok(ModelCall {
        model_call_id,
        started_at,
        completed_at,
        duration_ms,
        request: f.map.get("request").unwrap_or(&NULL),
        response: f.map.get("response").unwrap_or(&NULL),
        meta,
        tokens,
    })
}

fn tool_call<'a>(v: &'a Value, path: &str) -> Result<ToolCall<'a>, Invalid> {
    let f = object(v, path)?;
    f.forbid_extra(&schema::TOOL_CALL)?;
    f.literal("kind", &["tool_call"], Some("tool_call"))?;
    let started_at = f.opt_float("started_at", false)?;
    let completed_at = f.opt_float("completed_at", false)?;
    if let (Some(s), Some(c)) = (started_at, completed_at) {
        if c < s {
            return Err(format!("{path}: completed_at must not precede started_at"));
        }
    }
    let sandbox_id = f.opt_str("sandbox_id")?.map(str::to_string);
    let timing_source = f.literal("timing_source", &schema::TIMING_SOURCE, None)?;
    Ok(ToolCall {
        invocation_id: f.req_str("invocation_id")?.to_string(),
        tool_call_id: f.req_str("tool_call_id")?.to_string(),
        tool_name: f.opt_str("tool_name")?.map(str::to_string),
        status: f
            .literal("status", &schema::TOOL_STATUS, Some("unknown"))?
            .unwrap_or_default(),
        error_type: f.opt_str("error_type")?.map(str::to_string),
        output: f.map.get("output").unwrap_or(&NULL),
        sandbox_id,
        started_at,
        completed_at,
        duration_ms: f.opt_float("duration_ms", true)?,
        timing_source,
    })
}

fn gap(v: &Value, path: &str) -> Result<Gap, Invalid> {
    let f = object(v, path)?;
    f.forbid_extra(&schema::GAP)?;
    Ok(Gap {
        code: f.req_str("code")?.to_string(),
        invocation_id: f.opt_str("invocation_id")?.map(str::to_string),
        detail: f.opt_str("detail")?.map(str::to_string),
    })
}

fn each<'a, T>(
    f: &Fields<'a>,
    key: &str,
    read: impl Fn(&'a Value, &str) -> Result<T, Invalid>,
) -> Result<Vec<T>, Invalid> {
    f.opt_list(key)?
        .iter()
        .enumerate()
        .map(|(i, v)| read(v, &format!("{}[{i}]", f.at(key))))
        .collect()
}

/// Reads the record strictly, with the record-level checks of its model validator.
pub fn read(raw: &Value) -> Result<Strict<'_>, Invalid> {
    let f = object(raw, "ng_trajectory")?;
    f.forbid_extra(&schema::RECORD)?;
    let schema_version = f
        .literal("schema_version", &["1.0"], Some("1.0"))?
        .unwrap_or_default();
    let task_id = f.req_str("task_id")?.to_string();
    let rollout_id = f.req_str("rollout_id")?.to_string();
    let (invocations, conversations) = each(&f, "invocations", invocation)?.into_iter().unzip();
    let turns_read = each(&f, "turns", turn)?;
    let model_calls = each(&f, "model_calls", model_call)?;
    let tool_calls = each(&f, "tool_calls", tool_call)?;
    let gaps = each(&f, "gaps", gap)?;
    let record = Record {
        schema_version,
        task_id,
        rollout_id,
        invocations,
        turns: Vec::new(),
        model_calls,
        tool_calls,
        gaps,
    };

    let mut ids = HashSet::new();
    if !record
        .invocations
        .iter()
        .all(|i| ids.insert(i.invocation_id.as_str()))
    {
        return Err("ng_trajectory: invocation_id must be unique within a trajectory".into());
    }
    let mut call_ids = HashSet::new();
    if !record
        .model_calls
        .iter()
        .filter_map(|c| c.model_call_id.as_deref().filter(|s| !s.is_empty()))
        .all(|id| call_ids.insert(id))
    {
        return Err("ng_trajectory: model_call_id must be unique within a trajectory".into());
    }
    let mut keys = HashSet::new();
    let mut turns = Vec::with_capacity(turns_read.len());
    for (t, turn_task, turn_rollout) in turns_read {
        if turn_task != record.task_id || turn_rollout != record.rollout_id {
            return Err("ng_trajectory: turn identity must match the trajectory".into());
        }
        if !keys.insert((t.invocation_id.clone(), t.turn_no)) {
            return Err("ng_trajectory: turn number must be unique within an invocation".into());
        }
        turns.push(t);
    }
    Ok(Strict {
        record: Record { turns, ..record },
        conversations,
    })
}
