//! One Gym rollout row to one ATIF v1.7 trajectory, as NeMo Gym v0.7.0's
//! `gym eval export --format atif` converts it (`nemo_gym/atif_export.py`,
//! `gym_rollout_to_atif`): strict, so every row it cannot represent completely is refused with
//! upstream's reason (`{path}: {detail}`), and byte for byte the file upstream writes
//! (`model_dump_json(indent=2, exclude_none=True)` and a newline). The step building is
//! [`super::export_steps`]; the batch (manifest, one agent) is [`super::export_batch`].

use super::export_steps::build_groups;
use super::export_turns::apply_turns;
use super::gym_items::reject_unknown;
use super::ng_record::{self, call_dump, Strict};
use super::strict_model::{dump, is_blank};
use crate::gym::keys;
use serde_json::{Map, Value};

/// The exporter stamp upstream writes in every file (`nemo_gym.__version__`): gymscope writes
/// v0.7.0's files byte for byte, so the stamp is v0.7.0's too.
pub const EXPORTER_NAME: &str = "nemo-gym";
pub const EXPORTER_VERSION: &str = "0.7.0";
pub const SCHEMA_VERSION: &str = "ATIF-v1.7";

/// `rollout_agent_label`: `agent_ref.name`, else the environment server's stamp.
pub fn agent_label(row: &Map<String, Value>) -> Option<&Value> {
    match row.get(keys::AGENT_REF) {
        Some(Value::Object(r)) if r.get("name").is_some_and(|n| !n.is_null()) => r.get("name"),
        _ => row.get(keys::ENVIRONMENT_SERVER).filter(|v| !v.is_null()),
    }
}

/// `_index`: a non-negative integer (not a bool).
pub fn index(row: &Map<String, Value>, key: &str) -> Option<u64> {
    match row.get(key) {
        Some(Value::Number(n)) if !n.is_f64() => n.as_u64(),
        _ => None,
    }
}

/// Converts one row (already checked to be an object with both indices). `Err` is upstream's
/// reason without the line.
pub fn convert(
    row: &Map<String, Value>,
    session_id: &str,
    agent_version: &str,
) -> Result<Value, String> {
    if is_blank(session_id) {
        return Err("session_id: expected a non-empty string".into());
    }
    if is_blank(agent_version) {
        return Err("agent_version: expected a non-empty string".into());
    }
    let raw = row.get("ng_trajectory").unwrap_or(&Value::Null);
    ng_record::preflight(raw)?;
    let Strict {
        record,
        conversations,
    } = ng_record::read(raw).map_err(|why| {
        format!("ng_trajectory: missing or invalid v1.0 trajectory (gymscope: {why})")
    })?;
    if !record.gaps.is_empty() {
        return Err(
            "ng_trajectory.gaps: source coverage gaps are not supported by strict export".into(),
        );
    }
    if is_blank(&record.task_id) || is_blank(&record.rollout_id) {
        return Err("ng_trajectory: task_id and rollout_id cannot be blank".into());
    }
    if record.invocations.len() != 1 {
        return Err("ng_trajectory.invocations: expected exactly one root invocation".into());
    }
    let invocation = &record.invocations[0];
    if is_blank(&invocation.invocation_id) {
        return Err("ng_trajectory.invocations[0].invocation_id: cannot be blank".into());
    }
    if invocation.parent_invocation_id.is_some() || invocation.spawned_by_tool_call_id.is_some() {
        return Err("ng_trajectory.invocations[0]: subagent invocations are not supported".into());
    }
    if invocation.status != "completed" {
        return Err(format!(
            "ng_trajectory.invocations[0].status: expected completed, got {}",
            crate::gym::py::str_repr(&invocation.status)
        ));
    }
    if invocation.error_type.is_some() {
        return Err(
            "ng_trajectory.invocations[0].error_type: completed invocation contains an error"
                .into(),
        );
    }

    if let Some(Value::Object(map)) = row.get(keys::AGENT_REF) {
        reject_unknown(map, &["type", "name"], keys::AGENT_REF)?;
        match map.get("type") {
            None | Some(Value::Null) => {}
            Some(Value::String(s)) if s == "responses_api_agents" => {}
            Some(_) => {
                return Err("agent_ref.type: expected responses_api_agents when present".into())
            }
        }
    }
    let agent_name = match agent_label(row) {
        Some(Value::String(s)) if !is_blank(s) => s.clone(),
        _ => {
            return Err(
                "agent_ref: expected a non-empty agent_ref.name or environment server stamp".into(),
            )
        }
    };
    let task_index = index(row, keys::TASK_INDEX).unwrap_or(0);
    let rollout_index = index(row, keys::ROLLOUT_INDEX).unwrap_or(0);

    let (mut steps, groups) = build_groups(&record, invocation, &conversations[0])?;
    let used = apply_turns(&record, &groups, &mut steps)?;
    let surplus: Vec<Value> = record
        .model_calls
        .iter()
        .enumerate()
        .filter(|(i, _)| !used.contains(i))
        .map(|(_, c)| call_dump(c))
        .collect();

    let agent_steps: Vec<&Map<String, Value>> = groups
        .iter()
        .filter_map(|g| steps[g.step].as_object())
        .collect();
    let names: Vec<Option<&Value>> = agent_steps.iter().map(|s| s.get("model_name")).collect();
    let model_name = match names.first() {
        Some(Some(first)) if names.iter().all(|n| *n == Some(*first)) => (*first).clone(),
        _ => Value::Null,
    };
    let total = |field: &str| -> Value {
        let mut sum: i64 = 0;
        for step in &agent_steps {
            match step
                .get("metrics")
                .and_then(|m| m.get(field))
                .and_then(Value::as_i64)
            {
                Some(v) => sum += v,
                None => return Value::Null,
            }
        }
        if agent_steps.is_empty() {
            Value::Null
        } else {
            Value::from(sum)
        }
    };
    let final_metrics = dump(vec![
        ("total_prompt_tokens", total("prompt_tokens")),
        ("total_completion_tokens", total("completion_tokens")),
        ("total_cached_tokens", total("cached_tokens")),
        ("total_steps", Value::from(steps.len())),
    ]);
    let source = dump(vec![
        ("format", "ng_trajectory".into()),
        ("schema_version", record.schema_version.clone().into()),
        ("task_id", record.task_id.clone().into()),
        ("rollout_id", record.rollout_id.clone().into()),
        ("task_index", task_index.into()),
        ("rollout_index", rollout_index.into()),
        ("invocation_id", invocation.invocation_id.clone().into()),
        ("invocation_status", invocation.status.clone().into()),
        (
            "invocation_duration_ms",
            super::strict_model::float_value(invocation.duration_ms),
        ),
    ]);
    let nemo_gym = dump(vec![
        (
            "exporter",
            dump(vec![
                ("name", EXPORTER_NAME.into()),
                ("version", EXPORTER_VERSION.into()),
            ]),
        ),
        ("source", source),
        (
            "conversion",
            dump(vec![
                ("profile", "ng-trajectory-to-atif-v1".into()),
                ("status", "complete".into()),
            ]),
        ),
        (
            "surplus_model_calls",
            if surplus.is_empty() {
                Value::Null
            } else {
                Value::Array(surplus)
            },
        ),
    ]);
    Ok(dump(vec![
        ("schema_version", SCHEMA_VERSION.into()),
        ("session_id", session_id.into()),
        (
            "trajectory_id",
            format!("{session_id}:{task_index}:{rollout_index}").into(),
        ),
        (
            "agent",
            dump(vec![
                ("name", agent_name.into()),
                ("version", agent_version.into()),
                ("model_name", model_name),
            ]),
        ),
        ("steps", Value::Array(steps)),
        ("final_metrics", final_metrics),
        ("extra", dump(vec![("nemo_gym", nemo_gym)])),
    ]))
}

/// The file's bytes: two-space indented JSON as Pydantic writes it, and a newline.
pub fn encode(trajectory: &Value) -> Vec<u8> {
    let mut out = Vec::with_capacity(4096);
    crate::json::to_writer_orjson_pretty(&mut out, trajectory).expect("writing to memory");
    out.push(b'\n');
    out
}
