//! The agent steps of an exported trajectory matched with their turns (NeMo Gym v0.7.0's
//! `nemo_gym/atif_export.py`, `_apply_turns` and `_resolve_model_call`): each turn's copies of
//! the conversation must agree with it, its one model call must prove a complete response, and
//! that call gives the step its time, model, metrics and provenance.

use super::export_steps::AgentGroup;
use super::gym_items::{Item, ItemKind, MessageModel};
use super::iso_time::iso_utc;
use super::ng_record::call_dump;
use super::strict_json::values_equal;
use super::strict_model::{dump, is_blank};
use crate::gym::py::str_repr;
use crate::gym::trajectory::{CallRef, ModelCall, Record};
use serde_json::{Map, Value};
use std::collections::HashSet;

fn opt_repr(s: Option<&str>) -> String {
    s.map_or("None".into(), str_repr)
}

/// `_canonical_conversation_copy`: a turn's copy of some items, as their dumps.
fn canonical_copy(value: &Value, path: &str) -> Result<Value, String> {
    if value.is_null() {
        return Ok(Value::Null);
    }
    super::gym_items::read_all(value, path)
        .map(|items| Value::Array(items.into_iter().map(|i| i.dump).collect()))
        .map_err(|why| {
            format!("{path}: missing or invalid Responses conversation items (gymscope: {why})")
        })
}

fn dumps(items: &[&Item]) -> Value {
    Value::Array(items.iter().map(|i| i.dump.clone()).collect())
}

/// `_resolve_model_call`: the captured call a reference names.
fn resolve<'r>(
    r: &CallRef,
    calls: &'r [ModelCall],
    path: &str,
) -> Result<(usize, &'r ModelCall<'r>), String> {
    if r.model_call_id.as_deref().is_some_and(is_blank) {
        return Err(format!("{path}.model_call_id: cannot be blank"));
    }
    if r.response_id.as_deref().is_some_and(is_blank) {
        return Err(format!("{path}.response_id: cannot be blank"));
    }
    let candidates: Vec<usize> =
        if let Some(id) = r.model_call_id.as_deref().filter(|s| !s.is_empty()) {
            let found: Vec<usize> = calls
                .iter()
                .enumerate()
                .filter(|(_, c)| {
                    c.model_call_id
                        .as_deref()
                        .is_some_and(|c| !is_blank(c) && c == id)
                })
                .map(|(i, _)| i)
                .collect();
            if found.is_empty() {
                return Err(format!("{path}: unknown model_call_id {}", str_repr(id)));
            }
            if found.len() > 1 {
                return Err(format!(
                    "{path}: model_call_id matches more than one captured model call"
                ));
            }
            found
        } else {
            let found: Vec<usize> = calls
                .iter()
                .enumerate()
                .filter(|(_, c)| {
                    c.meta.model_ref.is_some()
                        && c.meta.response_id.as_deref().is_some_and(|s| !is_blank(s))
                        && c.meta.model_ref == r.model_ref
                        && c.meta.response_id == r.response_id
                })
                .map(|(i, _)| i)
                .collect();
            if found.is_empty() {
                return Err(format!(
                    "{path}: model_ref and response_id do not match a captured model call"
                ));
            }
            if found.len() > 1 {
                return Err(format!(
                    "{path}: model_ref and response_id match more than one captured model call"
                ));
            }
            found
        };
    let index = candidates[0];
    let call = &calls[index];
    if call.model_call_id.as_deref().is_some_and(is_blank) {
        return Err(format!(
            "ng_trajectory.model_calls[{index}].model_call_id: cannot be blank"
        ));
    }
    if call.meta.response_id.as_deref().is_some_and(is_blank) {
        return Err(format!(
            "ng_trajectory.model_calls[{index}].response_metadata.response_id: cannot be blank"
        ));
    }
    if r.response_id.is_some() && r.response_id != call.meta.response_id {
        return Err(format!(
            "{path}: response_id conflicts with the captured model call"
        ));
    }
    if r.model_ref.is_some() && r.model_ref != call.meta.model_ref {
        return Err(format!(
            "{path}: model_ref conflicts with the captured model call"
        ));
    }
    Ok((index, call))
}

const INCOMPLETE_FINISH_REASONS: [&str; 14] = [
    "aborted",
    "canceled",
    "cancelled",
    "content_filter",
    "failed",
    "incomplete",
    "length",
    "max_output_tokens",
    "max_tokens",
    "model_context_window_exceeded",
    "pause_turn",
    "refusal",
    "timed_out",
    "timeout",
];

/// The checks of a turn's model call that prove a complete response (`_apply_turns`).
fn check_call(call: &ModelCall, has_tool_calls: bool, path: &str) -> Result<(), String> {
    if !matches!(
        call.meta.response_status.as_deref(),
        None | Some("completed")
    ) {
        return Err(format!(
            "{path}: model call is {}, not completed",
            opt_repr(call.meta.response_status.as_deref())
        ));
    }
    if call.meta.error_category.is_some() {
        return Err(format!(
            "{path}: model call contains provider error evidence"
        ));
    }
    if let Some(code) = call.meta.status_code.filter(|c| !(200..300).contains(c)) {
        return Err(format!(
            "{path}: model call returned non-success status {code}"
        ));
    }
    if call.meta.model.as_deref().is_some_and(is_blank) {
        return Err(format!("{path}.model_calls[0].model: cannot be blank"));
    }
    let Some(reason) = call.meta.finish_reason.as_deref() else {
        return Ok(());
    };
    if is_blank(reason) {
        return Err(format!(
            "{path}.model_calls[0].finish_reason: cannot be blank"
        ));
    }
    let normalized = reason
        .trim_matches(|c: char| c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c))
        .to_lowercase();
    let r = str_repr(reason);
    if INCOMPLETE_FINISH_REASONS.contains(&normalized.as_str()) {
        return Err(format!(
            "{path}: finish reason {r} indicates an incomplete model response"
        ));
    }
    let n = normalized.as_str();
    match call.meta.dialect.as_deref() {
        Some("chat") => {
            let ok = if has_tool_calls {
                matches!(n, "tool_calls" | "function_call")
            } else {
                n == "stop"
            };
            if !ok {
                return Err(format!(
                    "{path}: Chat finish reason {r} does not prove a completed response"
                ));
            }
        }
        Some("messages") => {
            let ok = if has_tool_calls {
                n == "tool_use"
            } else {
                matches!(n, "end_turn" | "stop_sequence")
            };
            if !ok {
                return Err(format!(
                    "{path}: Messages stop reason {r} does not prove a completed response"
                ));
            }
        }
        _ => {}
    }
    if has_tool_calls && matches!(n, "stop" | "end_turn" | "stop_sequence") {
        return Err(format!(
            "{path}: finish reason {r} contradicts the captured tool calls"
        ));
    }
    if !has_tool_calls && matches!(n, "tool_calls" | "tool_use" | "function_call") {
        return Err(format!(
            "{path}: finish reason {r} contradicts the captured text-only output"
        ));
    }
    Ok(())
}

/// `_apply_turns`: each agent step gets its turn's time, model, metrics and provenance. Returns
/// the captured calls the turns used.
pub fn apply_turns(
    record: &Record,
    groups: &[AgentGroup],
    steps: &mut [Value],
) -> Result<HashSet<usize>, String> {
    if record.turns.len() != groups.len() {
        return Err(format!(
            "ng_trajectory.turns: expected one turn for each of {} agent steps, got {}",
            groups.len(),
            record.turns.len()
        ));
    }
    let root = &record.invocations[0];
    let mut used: HashSet<usize> = HashSet::new();
    let mut previous_turn_no = 0;
    let mut total_tool_calls = 0;
    for (index, (turn, group)) in record.turns.iter().zip(groups).enumerate() {
        let path = format!("ng_trajectory.turns[{index}]");
        if turn.invocation_id != root.invocation_id {
            return Err(format!(
                "{path}.invocation_id: does not match the root invocation"
            ));
        }
        if turn.turn_no != previous_turn_no + 1 {
            return Err(format!(
                "{path}.turn_no: turns must be ordered sequentially from 1"
            ));
        }
        previous_turn_no = turn.turn_no;
        if !values_equal(
            &canonical_copy(turn.question, &format!("{path}.question"))?,
            &dumps(&group.question),
        ) {
            return Err(format!(
                "{path}.question: does not match the model-visible conversation prefix"
            ));
        }
        if !values_equal(
            &canonical_copy(turn.answer, &format!("{path}.answer"))?,
            &dumps(&group.answer),
        ) {
            return Err(format!(
                "{path}.answer: does not match the exported agent answer"
            ));
        }
        let reasoning = if group.reasoning.is_empty() {
            Value::Null
        } else {
            dumps(&group.reasoning)
        };
        if !values_equal(
            &canonical_copy(turn.reasoning_content, &format!("{path}.reasoning_content"))?,
            &reasoning,
        ) {
            return Err(format!(
                "{path}.reasoning_content: does not match the exported reasoning"
            ));
        }
        let step = steps[group.step]
            .as_object_mut()
            .expect("steps are objects");
        total_tool_calls += step
            .get("tool_calls")
            .and_then(Value::as_array)
            .map_or(0, Vec::len) as i64;
        if turn.step_count != total_tool_calls {
            return Err(format!(
                "{path}.step_count: does not match the cumulative tool-call count"
            ));
        }
        if turn.model_calls.len() != 1 {
            return Err(format!(
                "{path}.model_calls: expected exactly one captured model call"
            ));
        }
        let (call_index, call) = resolve(
            &turn.model_calls[0],
            &record.model_calls,
            &format!("{path}.model_calls[0]"),
        )?;
        if !used.insert(call_index) {
            return Err(format!(
                "{path}.model_calls[0]: model call is referenced by more than one turn"
            ));
        }
        check_call(call, group.has_tool_calls, &path)?;
        let timestamp = iso_utc(turn.timestamp).ok_or_else(|| {
            format!("{path}.timestamp: cannot be represented as an ISO 8601 timestamp")
        })?;
        let metrics = step_metrics(call, &path)?;
        let mut source_items = Vec::new();
        if !group.reasoning.is_empty() {
            let ids: Vec<Value> = group
                .reasoning
                .iter()
                .filter_map(|r| match &r.kind {
                    ItemKind::Reasoning { id, .. } => Some(Value::from(id.clone())),
                    _ => None,
                })
                .collect();
            source_items.push(("reasoning_ids", Value::Array(ids)));
        }
        if let [Item {
            kind:
                ItemKind::Message {
                    model: MessageModel::Output,
                    id: Some(id),
                    ..
                },
            ..
        }] = group.answer[..]
        {
            source_items.push(("message_id", Value::from(id.clone())));
        }
        let turn_dump = dump(vec![
            ("turn_no", Value::from(turn.turn_no)),
            ("step_count", Value::from(turn.step_count)),
            ("resolved", turn.resolved.map_or(Value::Null, Value::Bool)),
        ]);
        let extra = dump(vec![(
            "nemo_gym",
            dump(vec![
                ("turn", turn_dump),
                ("model_call", call_dump(call)),
                (
                    "source_items",
                    if source_items.is_empty() {
                        Value::Null
                    } else {
                        dump(source_items)
                    },
                ),
            ]),
        )]);
        // The AtifStep model's field order.
        let mut fields: Vec<(&str, Value)> = Vec::new();
        for key in ["step_id", "source", "message"] {
            fields.push((key, step.get(key).cloned().unwrap_or(Value::Null)));
        }
        fields.push(("timestamp", timestamp.into()));
        fields.push((
            "model_name",
            call.meta.model.clone().map_or(Value::Null, Value::from),
        ));
        for key in ["reasoning_content", "tool_calls", "observation"] {
            fields.push((key, step.get(key).cloned().unwrap_or(Value::Null)));
        }
        fields.push(("metrics", metrics));
        fields.push(("llm_call_count", Value::from(1)));
        fields.push(("extra", extra));
        *step = match dump(fields) {
            Value::Object(m) => m,
            _ => unreachable!("dump builds an object"),
        };
    }
    let mut invocation_calls = HashSet::new();
    let mut count = 0;
    for (i, r) in root.model_calls.iter().enumerate() {
        let (call_index, _) = resolve(
            r,
            &record.model_calls,
            &format!("ng_trajectory.invocations[0].model_calls[{i}]"),
        )?;
        invocation_calls.insert(call_index);
        count += 1;
    }
    if count != invocation_calls.len() {
        return Err("ng_trajectory.invocations[0].model_calls: must not reference a captured model call more than once".into());
    }
    let mut missing: Vec<usize> = used.difference(&invocation_calls).copied().collect();
    if !missing.is_empty() {
        missing.sort_unstable();
        let list: Vec<String> = missing.iter().map(usize::to_string).collect();
        return Err(format!(
            "ng_trajectory.invocations[0].model_calls: must reference every turn-selected model call; missing indices: [{}]",
            list.join(", ")
        ));
    }
    Ok(used)
}

/// A turn's model-call token counts as the step's metrics, after the checks that they add up.
fn step_metrics(call: &ModelCall, path: &str) -> Result<Value, String> {
    let t = &call.tokens;
    if let Some(total) = t.total_tokens {
        for (name, value) in [
            ("prompt_tokens", t.prompt_tokens),
            ("completion_tokens", t.completion_tokens),
            ("reasoning_tokens", t.reasoning_tokens),
            ("cached_tokens", t.cached_tokens),
        ] {
            if value.is_some_and(|v| v > total) {
                return Err(format!("{path}: model-call {name} exceeds total_tokens"));
            }
        }
        if let (Some(p), Some(c)) = (t.prompt_tokens, t.completion_tokens) {
            if p + c > total {
                return Err(format!(
                    "{path}: model-call prompt_tokens plus completion_tokens exceeds total_tokens"
                ));
            }
        }
    }
    if let (Some(cached), Some(p)) = (t.cached_tokens, t.prompt_tokens) {
        if cached > p {
            return Err(format!("{path}: model-call cached_tokens exceeds prompt_tokens; cached tokens must be a subset"));
        }
    }
    if let (Some(r), Some(c)) = (t.reasoning_tokens, t.completion_tokens) {
        if r > c {
            return Err(format!(
                "{path}: model-call reasoning_tokens exceeds completion_tokens; reasoning tokens must be a subset"
            ));
        }
    }
    let int = |i: Option<i64>| i.map_or(Value::Null, Value::from);
    if [
        t.prompt_tokens,
        t.completion_tokens,
        t.reasoning_tokens,
        t.total_tokens,
        t.cached_tokens,
    ]
    .iter()
    .all(Option::is_none)
    {
        return Ok(Value::Null);
    }
    let extra = dump(vec![
        ("reasoning_tokens", int(t.reasoning_tokens)),
        ("total_tokens", int(t.total_tokens)),
    ]);
    Ok(dump(vec![
        ("prompt_tokens", int(t.prompt_tokens)),
        ("completion_tokens", int(t.completion_tokens)),
        ("cached_tokens", int(t.cached_tokens)),
        (
            "extra",
            if extra.as_object().is_some_and(Map::is_empty) {
                Value::Null
            } else {
                extra
            },
        ),
    ]))
}
