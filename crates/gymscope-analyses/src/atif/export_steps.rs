//! The steps of an exported trajectory (NeMo Gym v0.7.0's `nemo_gym/atif_export.py`,
//! `_build_groups`): the root invocation's conversation cut into system and user steps and
//! agent steps (reasoning, then one answer: function calls with their results, or a message).
//! Each agent step is then matched with its turn by [`super::export_turns`].

use super::gym_items::{Item, ItemKind, MessageModel};
use super::ng_record::tool_timing;
use super::strict_json::{self, values_equal};
use super::strict_model::{dump, is_blank};
use crate::gym::py::str_repr;
use crate::gym::trajectory::{Invocation, Record, ToolCall};
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
        _ => {
            return Err(format!(
                "{path}: expected non-empty scalar or multipart text content"
            ))
        }
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
            _ => {
                return Err(format!(
                    "{path}[{i}]: only text content parts are supported"
                ))
            }
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
            return Err(format!(
                "{path}[{i}]: annotations and log probabilities are not representable"
            ));
        }
        out.push(dump(vec![
            ("type", "text".into()),
            ("text", text.clone().into()),
        ]));
    }
    Ok(Value::Array(out))
}

/// `_message_content`.
fn message_content(item: &Item, path: &str) -> Result<Value, String> {
    let ItemKind::Message {
        model,
        status,
        content,
        ..
    } = &item.kind
    else {
        return Err(format!("{path}: unsupported message type"));
    };
    if *model != MessageModel::Easy && status.as_deref() != Some("completed") {
        return Err(format!(
            "{path}.status: expected completed, got {}",
            status.as_deref().map_or("None".into(), str_repr)
        ));
    }
    if *model == MessageModel::Output && content.as_array().is_some_and(Vec::is_empty) {
        return Err(format!(
            "{path}.content: expected at least one output_text part"
        ));
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
        let ItemKind::Reasoning {
            encrypted,
            summary,
            content,
            ..
        } = &item.kind
        else {
            continue;
        };
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
            return Err(format!(
                "{path}[{i}]: encrypted or empty reasoning cannot be represented as ATIF text"
            ));
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
        ItemKind::Message {
            model: MessageModel::Easy,
            ..
        } => "NeMoGymEasyInputMessage",
        ItemKind::Message {
            model: MessageModel::Input,
            ..
        } => "NeMoGymMessage",
        ItemKind::Message {
            model: MessageModel::Output,
            ..
        } => "NeMoGymResponseOutputMessage",
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
    conversation: &'r [Item],
) -> Result<(Vec<Value>, Vec<AgentGroup<'r>>), String> {
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
        if let ItemKind::Message {
            model: MessageModel::Easy | MessageModel::Input,
            role,
            ..
        } = &item.kind
        {
            if role == "developer" {
                return Err(format!(
                    "{item_path}.role: developer messages are not supported"
                ));
            }
            if role == "assistant" {
                return Err(format!(
                    "{item_path}.role: copied assistant context is not supported"
                ));
            }
            if seen_agent_output {
                return Err(format!(
                    "{item_path}: later system or user turns are not supported"
                ));
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
        while let Some(
            r @ Item {
                kind: ItemKind::Reasoning { .. },
                ..
            },
        ) = conversation.get(index)
        {
            reasoning.push(r);
            prefix.push(r);
            index += 1;
        }
        if index >= conversation.len() {
            return Err(format!(
                "{item_path}: reasoning is not followed by an agent answer"
            ));
        }

        let mut answer: Vec<&Item> = Vec::new();
        let mut calls: Vec<&Item> = Vec::new();
        while let Some(
            call @ Item {
                kind:
                    ItemKind::FunctionCall {
                        call_id,
                        name,
                        status,
                        ..
                    },
                ..
            },
        ) = conversation.get(index)
        {
            if is_blank(call_id) {
                return Err(format!("{}.call_id: cannot be empty", at(index)));
            }
            if is_blank(name) {
                return Err(format!("{}.name: cannot be empty", at(index)));
            }
            if !matches!(status.as_deref(), None | Some("completed")) {
                return Err(format!(
                    "{}.status: expected completed, got {}",
                    at(index),
                    opt_repr(status.as_deref())
                ));
            }
            if !used_tool_ids.insert(call_id) {
                return Err(format!(
                    "{item_path}: duplicate function call ID {}",
                    str_repr(call_id)
                ));
            }
            calls.push(call);
            answer.push(call);
            prefix.push(call);
            index += 1;
        }

        let step = if !calls.is_empty() {
            let mut outputs: HashMap<&str, &Item> = HashMap::new();
            let mut sequence: Vec<&Item> = Vec::new();
            while let Some(
                out @ Item {
                    kind:
                        ItemKind::FunctionCallOutput {
                            call_id, status, ..
                        },
                    ..
                },
            ) = conversation.get(index)
            {
                if outputs.contains_key(call_id.as_str()) {
                    return Err(format!(
                        "{item_path}: duplicate function result ID {}",
                        str_repr(call_id)
                    ));
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
            let mut results_by_id: HashMap<&str, (Value, &ToolCall)> = HashMap::new();
            for (call_index, call) in calls.iter().enumerate() {
                let ItemKind::FunctionCall {
                    call_id,
                    name,
                    arguments,
                    id,
                    ..
                } = &call.kind
                else {
                    continue;
                };
                let record = tool_records.get(call_id.as_str()).ok_or_else(|| {
                    format!(
                        "{item_path}: missing tool execution record for {}",
                        str_repr(call_id)
                    )
                })?;
                if record.invocation_id != invocation.invocation_id {
                    return Err(format!(
                        "{item_path}: tool execution {} belongs to another invocation",
                        str_repr(call_id)
                    ));
                }
                if record.status != "completed" {
                    return Err(format!(
                        "{item_path}: tool execution {} is {}, not completed",
                        str_repr(call_id),
                        str_repr(&record.status)
                    ));
                }
                if record.error_type.is_some() {
                    return Err(format!(
                        "{item_path}: completed tool execution {} contains an error",
                        str_repr(call_id)
                    ));
                }
                if record.tool_name.as_ref().is_some_and(|t| t != name) {
                    return Err(format!(
                        "{item_path}: tool execution {} has a different tool name",
                        str_repr(call_id)
                    ));
                }
                let ItemKind::FunctionCallOutput { output, .. } = &outputs[call_id.as_str()].kind
                else {
                    continue;
                };
                let content = text_content(
                    output,
                    &format!("{item_path}.tool_results[{}].output", str_repr(call_id)),
                )?;
                if !record.output.is_null() && !values_equal(record.output, output) {
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
                            dump(vec![(
                                "nemo_gym",
                                dump(vec![("source_item_id", id.clone().into())]),
                            )])
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
                    let mut source: Vec<(&str, Value)> = tool_timing(record);
                    source.push((
                        "source_item_id",
                        id.clone().map_or(Value::Null, Value::from),
                    ));
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
                (
                    "reasoning_content",
                    reasoning_text(&reasoning, &format!("{item_path}.reasoning"))?,
                ),
                ("tool_calls", Value::Array(atif_calls)),
                (
                    "observation",
                    dump(vec![("results", Value::Array(results))]),
                ),
            ])
        } else if let Some(
            message @ Item {
                kind:
                    ItemKind::Message {
                        model: MessageModel::Output,
                        ..
                    },
                ..
            },
        ) = conversation.get(index)
        {
            answer.push(message);
            prefix.push(message);
            index += 1;
            dump(vec![
                ("step_id", Value::from(steps.len() + 1)),
                ("source", "agent".into()),
                ("message", message_content(message, &item_path)?),
                (
                    "reasoning_content",
                    reasoning_text(&reasoning, &format!("{item_path}.reasoning"))?,
                ),
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
        return Err(format!(
            "ng_trajectory.tool_calls: unreferenced tool executions: {}",
            list_repr(unused)
        ));
    }
    if groups.is_empty() {
        return Err("ng_trajectory.invocations[0].conversation: contains no agent output".into());
    }
    Ok((steps, groups))
}
