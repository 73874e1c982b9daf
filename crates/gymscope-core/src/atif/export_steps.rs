//! The steps of an exported trajectory (NeMo Gym v0.7.0's `nemo_gym/atif_export.py`,
//! `_build_groups` and `_apply_turns`): the root invocation's conversation cut into system and
//! user steps and agent steps (reasoning, then one answer: function calls with their results,
//! or a message), then each agent step matched with its turn and the one model call the turn
//! names, which gives the step its time, model, metrics and provenance.

use super::gym_items::{Item, ItemKind, MessageModel};
use super::iso_time::iso_utc;
use super::ng_record::{CallRef, Invocation, ModelCall, Record};
use super::strict_json::{self, values_equal};
use super::strict_model::{dump, is_blank};
use crate::gym::py::str_repr;
use serde_json::{Map, Value};
use std::collections::{BTreeSet, HashMap, HashSet};

/// One agent step and the conversation items it came from.
pub struct AgentGroup<'r> {
    pub question: Vec<&'r Item>,
    pub reasoning: Vec<&'r Item>,
    pub answer: Vec<&'r Item>,
    /// Its index in the steps.
    pub step: usize,
    pub has_tool_calls: bool,
}

fn list_repr<'a>(items: impl IntoIterator<Item = &'a str>) -> String {
    let sorted: BTreeSet<&str> = items.into_iter().collect();
    let parts: Vec<String> = sorted.into_iter().map(str_repr).collect();
    format!("[{}]", parts.join(", "))
}

/// `_text_content`: a string, or text parts (`{"type": "text", "text"}`).
fn text_content(value: &Value, path: &str) -> Result<Value, String> {
    if let Value::String(_) = value {
        return Ok(value.clone());
    }
    let parts = match value {
        Value::Array(parts) if !parts.is_empty() => parts,
        _ => return Err(format!("{path}: expected non-empty scalar or multipart text content")),
    };
    let mut out = Vec::with_capacity(parts.len());
    for (i, part) in parts.iter().enumerate() {
        let map = match part {
            Value::Object(m)
                if matches!(
                    m.get("type").and_then(Value::as_str),
                    Some("input_text" | "output_text" | "text")
                ) =>
            {
                m
            }
            _ => return Err(format!("{path}[{i}]: only text content parts are supported")),
        };
        let Some(Value::String(text)) = map.get("text") else {
            return Err(format!("{path}[{i}].text: expected a string"));
        };
        let empty = |k: &str| match map.get(k) {
            None | Some(Value::Null) => true,
            Some(Value::Array(a)) => a.is_empty(),
            _ => false,
        };
        if !empty("annotations") || !empty("logprobs") {
            return Err(format!("{path}[{i}]: annotations and log probabilities are not representable"));
        }
        out.push(dump(vec![("type", "text".into()), ("text", text.clone().into())]));
    }
    Ok(Value::Array(out))
}

/// `_message_content`.
fn message_content(item: &Item, path: &str) -> Result<Value, String> {
    let ItemKind::Message { model, status, content, .. } = &item.kind else {
        return Err(format!("{path}: unsupported message type"));
    };
    if *model != MessageModel::Easy && status.as_deref() != Some("completed") {
        return Err(format!(
            "{path}.status: expected completed, got {}",
            status.as_deref().map_or("None".into(), str_repr)
        ));
    }
    if *model == MessageModel::Output && content.as_array().is_some_and(Vec::is_empty) {
        return Err(format!("{path}.content: expected at least one output_text part"));
    }
    text_content(content, &format!("{path}.content"))
}

/// `_reasoning_text`: exactly one text segment, or none when there is no reasoning.
fn reasoning_text(items: &[&Item], path: &str) -> Result<Value, String> {
    if items.is_empty() {
        return Ok(Value::Null);
    }
    let mut segments = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let ItemKind::Reasoning { encrypted, summary, content, .. } = &item.kind else { continue };
        if *encrypted {
            return Err(format!("{path}[{i}]: encrypted reasoning is not supported"));
        }
        if !content.is_empty() && !summary.is_empty() {
            return Err(format!(
                "{path}[{i}]: reasoning with both content and summary cannot be represented without dropping one"
            ));
        }
        let source = if content.is_empty() { summary } else { content };
        if source.is_empty() {
            return Err(format!("{path}[{i}]: encrypted or empty reasoning cannot be represented as ATIF text"));
        }
        for segment in source {
            segments.push(segment.get("text").cloned().unwrap_or(Value::Null));
        }
    }
    if segments.len() != 1 {
        return Err(format!(
            "{path}: multiple reasoning segments cannot be represented without changing boundaries"
        ));
    }
    Ok(segments.pop().unwrap_or(Value::Null))
}

fn class_name(item: &Item) -> &'static str {
    match &item.kind {
        ItemKind::Message { model: MessageModel::Easy, .. } => "NeMoGymEasyInputMessage",
        ItemKind::Message { model: MessageModel::Input, .. } => "NeMoGymMessage",
        ItemKind::Message { model: MessageModel::Output, .. } => "NeMoGymResponseOutputMessage",
        ItemKind::Reasoning { .. } => "NeMoGymResponseReasoningItem",
        ItemKind::FunctionCall { .. } => "NeMoGymResponseFunctionToolCall",
        ItemKind::FunctionCallOutput { .. } => "NeMoGymFunctionCallOutput",
    }
}

fn opt_repr(s: Option<&str>) -> String {
    s.map_or("None".into(), str_repr)
}

/// `_build_groups`: the steps, and which of them are agent steps.
pub fn build_groups<'r>(
    record: &'r Record,
    invocation: &'r Invocation,
) -> Result<(Vec<Value>, Vec<AgentGroup<'r>>), String> {
    let conversation = &invocation.conversation;
    let mut tool_records = HashMap::new();
    for r in &record.tool_calls {
        tool_records.insert(r.tool_call_id.as_str(), r);
    }
    if tool_records.len() != record.tool_calls.len() {
        return Err("ng_trajectory.tool_calls: tool_call_id values must be unique".into());
    }
    let mut steps: Vec<Value> = Vec::new();
    let mut groups: Vec<AgentGroup> = Vec::new();
    let mut used_tool_ids: HashSet<&str> = HashSet::new();
    let mut prefix: Vec<&Item> = Vec::new();
    let mut index = 0;
    let mut seen_agent_output = false;
    let at = |i: usize| format!("ng_trajectory.invocations[0].conversation[{i}]");
    while index < conversation.len() {
        let item = &conversation[index];
        let item_path = at(index);
        if let ItemKind::Message { model: MessageModel::Easy | MessageModel::Input, role, .. } = &item.kind {
            if role == "developer" {
                return Err(format!("{item_path}.role: developer messages are not supported"));
            }
            if role == "assistant" {
                return Err(format!("{item_path}.role: copied assistant context is not supported"));
            }
            if seen_agent_output {
                return Err(format!("{item_path}: later system or user turns are not supported"));
            }
            steps.push(dump(vec![
                ("step_id", Value::from(steps.len() + 1)),
                ("source", role.clone().into()),
                ("message", message_content(item, &item_path)?),
            ]));
            prefix.push(item);
            index += 1;
            continue;
        }

        seen_agent_output = true;
        let question = prefix.clone();
        let mut reasoning = Vec::new();
        while let Some(r @ Item { kind: ItemKind::Reasoning { .. }, .. }) = conversation.get(index) {
            reasoning.push(r);
            prefix.push(r);
            index += 1;
        }
        if index >= conversation.len() {
            return Err(format!("{item_path}: reasoning is not followed by an agent answer"));
        }

        let mut answer: Vec<&Item> = Vec::new();
        let mut calls: Vec<&Item> = Vec::new();
        while let Some(call @ Item { kind: ItemKind::FunctionCall { call_id, name, status, .. }, .. }) =
            conversation.get(index)
        {
            if is_blank(call_id) {
                return Err(format!("{}.call_id: cannot be empty", at(index)));
            }
            if is_blank(name) {
                return Err(format!("{}.name: cannot be empty", at(index)));
            }
            if !matches!(status.as_deref(), None | Some("completed")) {
                return Err(format!("{}.status: expected completed, got {}", at(index), opt_repr(status.as_deref())));
            }
            if !used_tool_ids.insert(call_id) {
                return Err(format!("{item_path}: duplicate function call ID {}", str_repr(call_id)));
            }
            calls.push(call);
            answer.push(call);
            prefix.push(call);
            index += 1;
        }

        let step = if !calls.is_empty() {
            let mut outputs: HashMap<&str, &Item> = HashMap::new();
            let mut sequence: Vec<&Item> = Vec::new();
            while let Some(out @ Item { kind: ItemKind::FunctionCallOutput { call_id, status, .. }, .. }) =
                conversation.get(index)
            {
                if outputs.contains_key(call_id.as_str()) {
                    return Err(format!("{item_path}: duplicate function result ID {}", str_repr(call_id)));
                }
                if !matches!(status.as_deref(), None | Some("completed")) {
                    return Err(format!(
                        "{item_path}: function result {} is {}",
                        str_repr(call_id),
                        opt_repr(status.as_deref())
                    ));
                }
                outputs.insert(call_id, out);
                sequence.push(out);
                prefix.push(out);
                index += 1;
            }
            let expected: HashSet<&str> = calls
                .iter()
                .filter_map(|c| match &c.kind {
                    ItemKind::FunctionCall { call_id, .. } => Some(call_id.as_str()),
                    _ => None,
                })
                .collect();
            let got: HashSet<&str> = outputs.keys().copied().collect();
            if expected != got {
                return Err(format!(
                    "{item_path}: function results must match this turn's calls exactly; expected {}, got {}",
                    list_repr(expected.iter().copied()),
                    list_repr(got.iter().copied())
                ));
            }
            let mut atif_calls = Vec::new();
            let mut results_by_id: HashMap<&str, (Value, &super::ng_record::ToolRecord)> = HashMap::new();
            for (call_index, call) in calls.iter().enumerate() {
                let ItemKind::FunctionCall { call_id, name, arguments, id, .. } = &call.kind else { continue };
                let record = tool_records
                    .get(call_id.as_str())
                    .ok_or_else(|| format!("{item_path}: missing tool execution record for {}", str_repr(call_id)))?;
                if record.invocation_id != invocation.invocation_id {
                    return Err(format!("{item_path}: tool execution {} belongs to another invocation", str_repr(call_id)));
                }
                if record.status != "completed" {
                    return Err(format!(
                        "{item_path}: tool execution {} is {}, not completed",
                        str_repr(call_id),
                        str_repr(&record.status)
                    ));
                }
                if record.error_type.is_some() {
                    return Err(format!("{item_path}: completed tool execution {} contains an error", str_repr(call_id)));
                }
                if record.tool_name.as_ref().is_some_and(|t| t != name) {
                    return Err(format!("{item_path}: tool execution {} has a different tool name", str_repr(call_id)));
                }
                let ItemKind::FunctionCallOutput { output, .. } = &outputs[call_id.as_str()].kind else { continue };
                let content = text_content(
                    output,
                    &format!("{item_path}.tool_results[{}].output", str_repr(call_id)),
                )?;
                if !record.output.is_null() && !values_equal(&record.output, output) {
                    return Err(format!(
                        "{item_path}: tool execution {} has a different recorded output",
                        str_repr(call_id)
                    ));
                }
                results_by_id.insert(call_id, (content, record));
                let args_path = format!("{item_path}.tool_calls[{call_index}].arguments");
                let args = match strict_json::parse(arguments) {
                    Ok(Value::Object(m)) => Value::Object(m),
                    Ok(_) => return Err(format!("{args_path}: expected a JSON object")),
                    Err(_) => return Err(format!("{args_path}: expected a JSON object string")),
                };
                atif_calls.push(dump(vec![
                    ("tool_call_id", call_id.clone().into()),
                    ("function_name", name.clone().into()),
                    ("arguments", args),
                    (
                        "extra",
                        id.as_ref().map_or(Value::Null, |id| {
                            dump(vec![("nemo_gym", dump(vec![("source_item_id", id.clone().into())]))])
                        }),
                    ),
                ]));
            }
            let results: Vec<Value> = sequence
                .iter()
                .filter_map(|out| match &out.kind {
                    ItemKind::FunctionCallOutput { call_id, id, .. } => Some((call_id, id)),
                    _ => None,
                })
                .map(|(call_id, id)| {
                    let (content, record) = &results_by_id[call_id.as_str()];
                    let mut source: Vec<(&str, Value)> = record.timing.clone();
                    source.push(("source_item_id", id.clone().map_or(Value::Null, Value::from)));
                    let source = dump(source);
                    let extra = if source.as_object().is_some_and(Map::is_empty) {
                        Value::Null
                    } else {
                        dump(vec![("nemo_gym", source)])
                    };
                    dump(vec![
                        ("source_call_id", call_id.clone().into()),
                        ("content", content.clone()),
                        ("extra", extra),
                    ])
                })
                .collect();
            dump(vec![
                ("step_id", Value::from(steps.len() + 1)),
                ("source", "agent".into()),
                ("message", "".into()),
                ("reasoning_content", reasoning_text(&reasoning, &format!("{item_path}.reasoning"))?),
                ("tool_calls", Value::Array(atif_calls)),
                ("observation", dump(vec![("results", Value::Array(results))])),
            ])
        } else if let Some(message @ Item { kind: ItemKind::Message { model: MessageModel::Output, .. }, .. }) =
            conversation.get(index)
        {
            answer.push(message);
            prefix.push(message);
            index += 1;
            dump(vec![
                ("step_id", Value::from(steps.len() + 1)),
                ("source", "agent".into()),
                ("message", message_content(message, &item_path)?),
                ("reasoning_content", reasoning_text(&reasoning, &format!("{item_path}.reasoning"))?),
            ])
        } else {
            return Err(format!(
                "{item_path}: unsupported conversation item {}",
                class_name(&conversation[index])
            ));
        };
        groups.push(AgentGroup {
            question,
            reasoning,
            answer,
            step: steps.len(),
            has_tool_calls: !calls.is_empty(),
        });
        steps.push(step);
    }
    let unused: Vec<&str> = tool_records
        .keys()
        .copied()
        .filter(|id| !used_tool_ids.contains(id))
        .collect();
    if !unused.is_empty() {
        return Err(format!("ng_trajectory.tool_calls: unreferenced tool executions: {}", list_repr(unused)));
    }
    if groups.is_empty() {
        return Err("ng_trajectory.invocations[0].conversation: contains no agent output".into());
    }
    Ok((steps, groups))
}

/// `_canonical_conversation_copy`: a turn's copy of some items, as their dumps.
fn canonical_copy(value: &Value, path: &str) -> Result<Value, String> {
    if value.is_null() {
        return Ok(Value::Null);
    }
    super::gym_items::read_all(value, path)
        .map(|items| Value::Array(items.into_iter().map(|i| i.dump).collect()))
        .map_err(|why| format!("{path}: missing or invalid Responses conversation items (gymscope: {why})"))
}

fn dumps(items: &[&Item]) -> Value {
    Value::Array(items.iter().map(|i| i.dump.clone()).collect())
}

/// `_resolve_model_call`: the captured call a reference names.
fn resolve<'r>(r: &CallRef, calls: &'r [ModelCall], path: &str) -> Result<(usize, &'r ModelCall), String> {
    if r.model_call_id.as_deref().is_some_and(is_blank) {
        return Err(format!("{path}.model_call_id: cannot be blank"));
    }
    if r.response_id.as_deref().is_some_and(is_blank) {
        return Err(format!("{path}.response_id: cannot be blank"));
    }
    let candidates: Vec<usize> = if let Some(id) = r.model_call_id.as_deref().filter(|s| !s.is_empty()) {
        let found: Vec<usize> = calls
            .iter()
            .enumerate()
            .filter(|(_, c)| c.model_call_id.as_deref().is_some_and(|c| !is_blank(c) && c == id))
            .map(|(i, _)| i)
            .collect();
        if found.is_empty() {
            return Err(format!("{path}: unknown model_call_id {}", str_repr(id)));
        }
        if found.len() > 1 {
            return Err(format!("{path}: model_call_id matches more than one captured model call"));
        }
        found
    } else {
        let found: Vec<usize> = calls
            .iter()
            .enumerate()
            .filter(|(_, c)| {
                c.model_ref.is_some()
                    && c.response_id.as_deref().is_some_and(|s| !is_blank(s))
                    && c.model_ref == r.model_ref
                    && c.response_id == r.response_id
            })
            .map(|(i, _)| i)
            .collect();
        if found.is_empty() {
            return Err(format!("{path}: model_ref and response_id do not match a captured model call"));
        }
        if found.len() > 1 {
            return Err(format!("{path}: model_ref and response_id match more than one captured model call"));
        }
        found
    };
    let index = candidates[0];
    let call = &calls[index];
    if call.model_call_id.as_deref().is_some_and(is_blank) {
        return Err(format!("ng_trajectory.model_calls[{index}].model_call_id: cannot be blank"));
    }
    if call.response_id.as_deref().is_some_and(is_blank) {
        return Err(format!("ng_trajectory.model_calls[{index}].response_metadata.response_id: cannot be blank"));
    }
    if r.response_id.is_some() && r.response_id != call.response_id {
        return Err(format!("{path}: response_id conflicts with the captured model call"));
    }
    if r.model_ref.is_some() && r.model_ref != call.model_ref {
        return Err(format!("{path}: model_ref conflicts with the captured model call"));
    }
    Ok((index, call))
}

const INCOMPLETE_FINISH_REASONS: [&str; 14] = [
    "aborted", "canceled", "cancelled", "content_filter", "failed", "incomplete", "length",
    "max_output_tokens", "max_tokens", "model_context_window_exceeded", "pause_turn", "refusal",
    "timed_out", "timeout",
];

/// The checks of a turn's model call that prove a complete response (`_apply_turns`).
fn check_call(call: &ModelCall, has_tool_calls: bool, path: &str) -> Result<(), String> {
    if !matches!(call.response_status.as_deref(), None | Some("completed")) {
        return Err(format!("{path}: model call is {}, not completed", opt_repr(call.response_status.as_deref())));
    }
    if call.error_category.is_some() {
        return Err(format!("{path}: model call contains provider error evidence"));
    }
    if let Some(code) = call.status_code.filter(|c| !(200..300).contains(c)) {
        return Err(format!("{path}: model call returned non-success status {code}"));
    }
    if call.model.as_deref().is_some_and(is_blank) {
        return Err(format!("{path}.model_calls[0].model: cannot be blank"));
    }
    let Some(reason) = call.finish_reason.as_deref() else { return Ok(()) };
    if is_blank(reason) {
        return Err(format!("{path}.model_calls[0].finish_reason: cannot be blank"));
    }
    let normalized = reason
        .trim_matches(|c: char| c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c))
        .to_lowercase();
    let r = str_repr(reason);
    if INCOMPLETE_FINISH_REASONS.contains(&normalized.as_str()) {
        return Err(format!("{path}: finish reason {r} indicates an incomplete model response"));
    }
    let n = normalized.as_str();
    match call.dialect.as_deref() {
        Some("chat") => {
            let ok = if has_tool_calls { matches!(n, "tool_calls" | "function_call") } else { n == "stop" };
            if !ok {
                return Err(format!("{path}: Chat finish reason {r} does not prove a completed response"));
            }
        }
        Some("messages") => {
            let ok = if has_tool_calls { n == "tool_use" } else { matches!(n, "end_turn" | "stop_sequence") };
            if !ok {
                return Err(format!("{path}: Messages stop reason {r} does not prove a completed response"));
            }
        }
        _ => {}
    }
    if has_tool_calls && matches!(n, "stop" | "end_turn" | "stop_sequence") {
        return Err(format!("{path}: finish reason {r} contradicts the captured tool calls"));
    }
    if !has_tool_calls && matches!(n, "tool_calls" | "tool_use" | "function_call") {
        return Err(format!("{path}: finish reason {r} contradicts the captured text-only output"));
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
            return Err(format!("{path}.invocation_id: does not match the root invocation"));
        }
        if turn.turn_no != previous_turn_no + 1 {
            return Err(format!("{path}.turn_no: turns must be ordered sequentially from 1"));
        }
        previous_turn_no = turn.turn_no;
        if !values_equal(&canonical_copy(&turn.question, &format!("{path}.question"))?, &dumps(&group.question)) {
            return Err(format!("{path}.question: does not match the model-visible conversation prefix"));
        }
        if !values_equal(&canonical_copy(&turn.answer, &format!("{path}.answer"))?, &dumps(&group.answer)) {
            return Err(format!("{path}.answer: does not match the exported agent answer"));
        }
        let reasoning = if group.reasoning.is_empty() { Value::Null } else { dumps(&group.reasoning) };
        if !values_equal(&canonical_copy(&turn.reasoning_content, &format!("{path}.reasoning_content"))?, &reasoning) {
            return Err(format!("{path}.reasoning_content: does not match the exported reasoning"));
        }
        let step = steps[group.step].as_object_mut().expect("steps are objects");
        total_tool_calls += step.get("tool_calls").and_then(Value::as_array).map_or(0, Vec::len) as i64;
        if turn.step_count != total_tool_calls {
            return Err(format!("{path}.step_count: does not match the cumulative tool-call count"));
        }
        if turn.model_calls.len() != 1 {
            return Err(format!("{path}.model_calls: expected exactly one captured model call"));
        }
        let (call_index, call) = resolve(&turn.model_calls[0], &record.model_calls, &format!("{path}.model_calls[0]"))?;
        if !used.insert(call_index) {
            return Err(format!("{path}.model_calls[0]: model call is referenced by more than one turn"));
        }
        check_call(call, group.has_tool_calls, &path)?;
        let timestamp = iso_utc(turn.timestamp)
            .ok_or_else(|| format!("{path}.timestamp: cannot be represented as an ISO 8601 timestamp"))?;
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
        if let [Item { kind: ItemKind::Message { model: MessageModel::Output, id: Some(id), .. }, .. }] = group.answer[..] {
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
                ("model_call", call.dump.clone()),
                ("source_items", if source_items.is_empty() { Value::Null } else { dump(source_items) }),
            ]),
        )]);
        // The AtifStep model's field order.
        let mut fields: Vec<(&str, Value)> = Vec::new();
        for key in ["step_id", "source", "message"] {
            fields.push((key, step.get(key).cloned().unwrap_or(Value::Null)));
        }
        fields.push(("timestamp", timestamp.into()));
        fields.push(("model_name", call.model.clone().map_or(Value::Null, Value::from)));
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
        let (call_index, _) = resolve(r, &record.model_calls, &format!("ng_trajectory.invocations[0].model_calls[{i}]"))?;
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
                return Err(format!("{path}: model-call prompt_tokens plus completion_tokens exceeds total_tokens"));
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
    if [t.prompt_tokens, t.completion_tokens, t.reasoning_tokens, t.total_tokens, t.cached_tokens]
        .iter()
        .all(Option::is_none)
    {
        return Ok(Value::Null);
    }
    let extra = dump(vec![("reasoning_tokens", int(t.reasoning_tokens)), ("total_tokens", int(t.total_tokens))]);
    Ok(dump(vec![
        ("prompt_tokens", int(t.prompt_tokens)),
        ("completion_tokens", int(t.completion_tokens)),
        ("cached_tokens", int(t.cached_tokens)),
        ("extra", if extra.as_object().is_some_and(Map::is_empty) { Value::Null } else { extra }),
    ]))
}
