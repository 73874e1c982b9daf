//! A row's `ng_trajectory` (schema "1.0") read strictly, as NeMo Gym v0.7.0's ATIF export reads
//! it (`TrajectoryRecord.model_validate(raw, strict=True)`, models in
//! `nemo_gym/rollout_observability.py`), after the preflight that refuses fields the models
//! would drop (`_preflight_raw_trajectory`). gymscope's lax reading for the health checks is
//! [`crate::gym::trajectory`]; this one is for a conversion that must lose nothing.

use super::gym_items::{self, reject_unknown, Item, Refusal};
use super::strict_model::{dump, float_value, object, Fields, Invalid};
use crate::gym::trajectory::schema;
use serde_json::Value;
use std::collections::HashSet;

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ModelRef {
    pub kind: String,
    pub name: String,
}

impl ModelRef {
    pub fn dump(&self) -> Value {
        dump(vec![
            ("type", self.kind.clone().into()),
            ("name", self.name.clone().into()),
        ])
    }
}

#[derive(Clone, Debug)]
pub struct CallRef {
    pub model_call_id: Option<String>,
    pub model_ref: Option<ModelRef>,
    pub response_id: Option<String>,
}

#[derive(Clone, Debug)]
pub struct Invocation {
    pub invocation_id: String,
    pub parent_invocation_id: Option<String>,
    pub spawned_by_tool_call_id: Option<String>,
    pub status: String,
    pub duration_ms: Option<f64>,
    pub error_type: Option<String>,
    pub model_calls: Vec<CallRef>,
    pub conversation: Vec<Item>,
}

#[derive(Clone, Debug)]
pub struct Turn {
    pub invocation_id: String,
    pub turn_no: i64,
    pub timestamp: f64,
    pub question: Value,
    pub answer: Value,
    pub reasoning_content: Value,
    pub resolved: Option<bool>,
    pub step_count: i64,
    pub model_calls: Vec<CallRef>,
}

#[derive(Clone, Debug, Default)]
pub struct TokenStats {
    pub prompt_tokens: Option<i64>,
    pub completion_tokens: Option<i64>,
    pub reasoning_tokens: Option<i64>,
    pub total_tokens: Option<i64>,
    pub cached_tokens: Option<i64>,
}

#[derive(Clone, Debug)]
pub struct ModelCall {
    pub model_call_id: Option<String>,
    pub response_id: Option<String>,
    pub model_ref: Option<ModelRef>,
    pub model: Option<String>,
    pub dialect: Option<String>,
    pub status_code: Option<i64>,
    pub response_status: Option<String>,
    pub finish_reason: Option<String>,
    pub error_category: Option<String>,
    pub tokens: TokenStats,
    /// `model_dump(mode="json", exclude_none=True)`, as the ATIF step's extra carries it.
    pub dump: Value,
}

#[derive(Clone, Debug)]
pub struct ToolRecord {
    pub invocation_id: String,
    pub tool_call_id: String,
    pub tool_name: Option<String>,
    pub status: String,
    pub error_type: Option<String>,
    pub output: Value,
    /// The timing the observation's extra keeps (sandbox id, start, end, duration, source).
    pub timing: Vec<(&'static str, Value)>,
}

#[derive(Clone, Debug)]
pub struct Record {
    pub schema_version: String,
    pub task_id: String,
    pub rollout_id: String,
    pub invocations: Vec<Invocation>,
    pub turns: Vec<Turn>,
    pub model_calls: Vec<ModelCall>,
    pub tool_calls: Vec<ToolRecord>,
    pub has_gaps: bool,
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

fn invocation(v: &Value, path: &str) -> Result<Invocation, Invalid> {
    let f = object(v, path)?;
    f.forbid_extra(&schema::INVOCATION)?;
    f.literal("kind", &["agent_invocation"], Some("agent_invocation"))?;
    Ok(Invocation {
        invocation_id: f.req_str("invocation_id")?.to_string(),
        parent_invocation_id: f.opt_str("parent_invocation_id")?.map(str::to_string),
        spawned_by_tool_call_id: f.opt_str("spawned_by_tool_call_id")?.map(str::to_string),
        status: f
            .literal("status", &schema::INVOCATION_STATUS, Some("unknown"))?
            .unwrap_or_default(),
        duration_ms: f.opt_float("duration_ms", true)?,
        error_type: f.opt_str("error_type")?.map(str::to_string),
        model_calls: call_refs(&f, "model_calls")?,
        conversation: match f.map.get("conversation") {
            None => Vec::new(),
            Some(c) => gym_items::read_all(c, &f.at("conversation"))?,
        },
    })
}

fn turn(v: &Value, path: &str) -> Result<(Turn, String, String), Invalid> {
    let f = object(v, path)?;
    f.forbid_extra(&schema::TURN)?;
    let t = Turn {
        invocation_id: f.req_str("invocation_id")?.to_string(),
        turn_no: f.req_int("turn_no", 1)?,
        timestamp: f.req_float("timestamp")?,
        question: f.any("question"),
        answer: f.any("answer"),
        reasoning_content: f.any("reasoning_content"),
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

fn model_call(v: &Value, path: &str) -> Result<ModelCall, Invalid> {
    let f = object(v, path)?;
    f.forbid_extra(&schema::MODEL_CALL)?;
    let model_call_id = f.opt_str("model_call_id")?;
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
    let s = |k| m.opt_str(k).map(|o| o.map(str::to_string));
    let meta_dump = dump(vec![
        ("response_id", m.any("response_id")),
        (
            "model_ref",
            mref.as_ref().map_or(Value::Null, ModelRef::dump),
        ),
        ("model", m.any("model")),
        ("dialect", m.any("dialect")),
        ("status_code", m.any("status_code")),
        ("response_status", m.any("response_status")),
        ("finish_reason", m.any("finish_reason")),
        (
            "upstream_attempted",
            m.opt_bool("upstream_attempted")?
                .map_or(Value::Null, Value::Bool),
        ),
        (
            "response_source",
            m.literal("response_source", &["upstream", "local"], None)?
                .map_or(Value::Null, Value::from),
        ),
        (
            "upstream_status_code",
            m.opt_int("upstream_status_code", false)?
                .map_or(Value::Null, Value::from),
        ),
        ("local_response_reason", m.any("local_response_reason")),
        ("error_category", m.any("error_category")),
        (
            "latency_ttft_ms",
            float_value(m.opt_float("latency_ttft_ms", true)?),
        ),
    ]);

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
    let int = |i: Option<i64>| i.map_or(Value::Null, Value::from);
    let tokens_dump = dump(vec![
        ("prompt_tokens", int(tokens.prompt_tokens)),
        ("completion_tokens", int(tokens.completion_tokens)),
        ("reasoning_tokens", int(tokens.reasoning_tokens)),
        ("total_tokens", int(tokens.total_tokens)),
        ("cached_tokens", int(tokens.cached_tokens)),
    ]);
    let call = ModelCall {
        model_call_id: model_call_id.map(str::to_string),
        response_id: s("response_id")?,
        model_ref: mref,
        model: s("model")?,
        dialect: s("dialect")?,
        status_code: m.opt_int("status_code", false)?,
        response_status: s("response_status")?,
        finish_reason: s("finish_reason")?,
        error_category: s("error_category")?,
        tokens,
        dump: dump(vec![
            (
                "model_call_id",
                model_call_id.map_or(Value::Null, Value::from),
            ),
            ("started_at", float_value(started_at)),
            ("completed_at", float_value(completed_at)),
            ("duration_ms", float_value(duration_ms)),
            ("request", f.any("request")),
            ("response", f.any("response")),
            ("response_metadata", meta_dump),
            ("token_stats", tokens_dump),
        ]),
    };
    s("local_response_reason")?;
    Ok(call)
}

fn tool_record(v: &Value, path: &str) -> Result<ToolRecord, Invalid> {
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
    let sandbox_id = f.opt_str("sandbox_id")?;
    let timing_source = f.literal("timing_source", &["executor", "artifact", "harness"], None)?;
    Ok(ToolRecord {
        invocation_id: f.req_str("invocation_id")?.to_string(),
        tool_call_id: f.req_str("tool_call_id")?.to_string(),
        tool_name: f.opt_str("tool_name")?.map(str::to_string),
        status: f
            .literal(
                "status",
                &[
                    "completed",
                    "failed",
                    "timeout",
                    "cancelled",
                    "incomplete",
                    "unknown",
                ],
                Some("unknown"),
            )?
            .unwrap_or_default(),
        error_type: f.opt_str("error_type")?.map(str::to_string),
        output: f.any("output"),
        timing: vec![
            ("sandbox_id", sandbox_id.map_or(Value::Null, Value::from)),
            ("started_at", float_value(started_at)),
            ("completed_at", float_value(completed_at)),
            (
                "duration_ms",
                float_value(f.opt_float("duration_ms", true)?),
            ),
            (
                "timing_source",
                timing_source.map_or(Value::Null, Value::from),
            ),
        ],
    })
}

fn gap(v: &Value, path: &str) -> Result<(), Invalid> {
    let f = object(v, path)?;
    f.forbid_extra(&schema::GAP)?;
    f.req_str("code")?;
    f.opt_str("invocation_id")?;
    f.opt_str("detail")?;
    Ok(())
}

fn each<T>(
    f: &Fields,
    key: &str,
    read: impl Fn(&Value, &str) -> Result<T, Invalid>,
) -> Result<Vec<T>, Invalid> {
    f.opt_list(key)?
        .iter()
        .enumerate()
        .map(|(i, v)| read(v, &format!("{}[{i}]", f.at(key))))
        .collect()
}

/// Reads the record strictly, with the record-level checks of its model validator.
pub fn read(raw: &Value) -> Result<Record, Invalid> {
    let f = object(raw, "ng_trajectory")?;
    f.forbid_extra(&schema::RECORD)?;
    let schema_version = f
        .literal("schema_version", &["1.0"], Some("1.0"))?
        .unwrap_or_default();
    let task_id = f.req_str("task_id")?.to_string();
    let rollout_id = f.req_str("rollout_id")?.to_string();
    let invocations = each(&f, "invocations", invocation)?;
    let turns_read = each(&f, "turns", turn)?;
    let model_calls = each(&f, "model_calls", model_call)?;
    let tool_calls = each(&f, "tool_calls", tool_record)?;
    let gaps = each(&f, "gaps", gap)?;

    let mut ids = HashSet::new();
    if !invocations
        .iter()
        .all(|i| ids.insert(i.invocation_id.as_str()))
    {
        return Err("ng_trajectory: invocation_id must be unique within a trajectory".into());
    }
    let mut call_ids = HashSet::new();
    if !model_calls
        .iter()
        .filter_map(|c| c.model_call_id.as_deref().filter(|s| !s.is_empty()))
        .all(|id| call_ids.insert(id))
    {
        return Err("ng_trajectory: model_call_id must be unique within a trajectory".into());
    }
    let mut keys = HashSet::new();
    let mut turns = Vec::with_capacity(turns_read.len());
    for (t, turn_task, turn_rollout) in turns_read {
        if turn_task != task_id || turn_rollout != rollout_id {
            return Err("ng_trajectory: turn identity must match the trajectory".into());
        }
        if !keys.insert((t.invocation_id.clone(), t.turn_no)) {
            return Err("ng_trajectory: turn number must be unique within an invocation".into());
        }
        turns.push(t);
    }
    Ok(Record {
        schema_version,
        task_id,
        rollout_id,
        invocations,
        turns,
        model_calls,
        tool_calls,
        has_gaps: !gaps.is_empty(),
    })
}
