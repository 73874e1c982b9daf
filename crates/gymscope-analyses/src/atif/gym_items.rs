//! The conversation items of a trajectory as NeMo Gym v0.7.0's ATIF export takes them
//! (`nemo_gym/atif_export.py` `_preflight_conversation`; the item models of
//! `nemo_gym/openai_utils.py` and their discriminator): first the fields a model would silently
//! drop are refused by name, then each item is read as its model in strict mode. Only the four
//! kinds the export supports get this far: messages, reasoning, function calls and their
//! outputs.

use super::strict_model::{dump, list, object, Fields, Invalid};
use crate::gym::py::str_repr;
use serde_json::{Map, Value};

/// A refusal with upstream's wording: `{path}: {detail}`.
pub type Refusal = String;

pub const TRAINING_FIELDS: [&str; 4] = [
    "generation_log_probs",
    "generation_token_ids",
    "prompt_token_ids",
    "routed_experts",
];
const STATUSES: [&str; 3] = ["in_progress", "completed", "incomplete"];

/// `_reject_unknown_fields`: the unknown keys as Python's sorted `repr`s.
pub fn reject_unknown(
    map: &Map<String, Value>,
    allowed: &[&str],
    path: &str,
) -> Result<(), Refusal> {
    let mut unknown: Vec<String> = map
        .keys()
        .filter(|k| !allowed.contains(&k.as_str()))
        .map(|k| str_repr(k))
        .collect();
    if unknown.is_empty() {
        return Ok(());
    }
    unknown.sort();
    Err(format!(
        "{path}: unsupported fields would be dropped: {}",
        unknown.join(", ")
    ))
}

fn with_training<'a>(fields: &[&'a str]) -> Vec<&'a str> {
    let mut all = fields.to_vec();
    all.extend(TRAINING_FIELDS);
    all
}

fn preflight_parts(
    value: Option<&Value>,
    path: &str,
    supported: &[(&str, &[&str])],
) -> Result<(), Refusal> {
    let Some(Value::Array(parts)) = value else {
        return Ok(());
    };
    for (i, part) in parts.iter().enumerate() {
        let Value::Object(map) = part else { continue };
        let kind = match map.get("type") {
            Some(Value::String(s)) if !super::strict_model::is_blank(s) => s,
            _ => {
                return Err(format!(
                    "{path}[{i}].type: expected a non-empty supported content-part type"
                ))
            }
        };
        if let Some((_, allowed)) = supported.iter().find(|(t, _)| t == kind) {
            reject_unknown(map, allowed, &format!("{path}[{i}]"))?;
        }
    }
    Ok(())
}

/// `_preflight_conversation`: refuses raw fields the item models would erase.
pub fn preflight(conversation: Option<&Value>, path: &str) -> Result<(), Refusal> {
    let Some(Value::Array(items)) = conversation else {
        return Ok(());
    };
    let input_parts: &[(&str, &[&str])] = &[("input_text", &["type", "text"])];
    let output_parts: &[(&str, &[&str])] =
        &[("output_text", &["type", "text", "annotations", "logprobs"])];
    let reasoning_parts: &[(&str, &[&str])] = &[
        ("summary_text", &["type", "text"]),
        ("reasoning_text", &["type", "text"]),
    ];
    for (i, item) in items.iter().enumerate() {
        let at = format!("{path}[{i}]");
        let Value::Object(map) = item else { continue };
        let mut present: Vec<&str> = TRAINING_FIELDS
            .iter()
            .copied()
            .filter(|f| map.contains_key(*f))
            .collect();
        if !present.is_empty() {
            present.sort_unstable();
            return Err(format!(
                "{at}: training token IDs, log probabilities, and routed-expert metadata are outside the initial ATIF export profile (found: {})",
                present.join(", ")
            ));
        }
        let kind = match map.get("type") {
            Some(Value::String(s)) if !super::strict_model::is_blank(s) => s.as_str(),
            _ => {
                return Err(format!(
                    "{at}.type: expected a non-empty supported conversation item type"
                ))
            }
        };
        if ![
            "message",
            "reasoning",
            "function_call",
            "function_call_output",
        ]
        .contains(&kind)
        {
            return Err(format!(
                "{at}.type: unsupported conversation item type {}",
                str_repr(kind)
            ));
        }
        let role = map.get("role").and_then(Value::as_str);
        let phase_set = map.get("phase").is_some_and(|p| !p.is_null());
        match kind {
            "message" if role == Some("assistant") => {
                reject_unknown(
                    map,
                    &with_training(&["id", "content", "role", "status", "type", "phase"]),
                    &at,
                )?;
                if phase_set {
                    return Err(format!(
                        "{at}.phase: Responses message phase is not representable in ATIF v1.7"
                    ));
                }
                preflight_parts(map.get("content"), &format!("{at}.content"), output_parts)?;
            }
            "message" if matches!(role, Some("system" | "user" | "developer")) => {
                reject_unknown(
                    map,
                    &with_training(&["content", "role", "status", "type", "phase"]),
                    &at,
                )?;
                if phase_set {
                    return Err(format!(
                        "{at}.phase: Responses message phase is not representable in ATIF v1.7"
                    ));
                }
                if map.contains_key("status") && !map.get("content").is_some_and(Value::is_array) {
                    return Err(format!(
                        "{at}.status: source-message status is only supported with multipart content"
                    ));
                }
                preflight_parts(map.get("content"), &format!("{at}.content"), input_parts)?;
            }
            "reasoning" => {
                reject_unknown(
                    map,
                    &with_training(&["id", "summary", "type", "encrypted_content", "content"]),
                    &at,
                )?;
                preflight_parts(
                    map.get("summary"),
                    &format!("{at}.summary"),
                    reasoning_parts,
                )?;
                preflight_parts(
                    map.get("content"),
                    &format!("{at}.content"),
                    reasoning_parts,
                )?;
            }
            "function_call" => {
                reject_unknown(
                    map,
                    &with_training(&[
                        "arguments",
                        "call_id",
                        "name",
                        "type",
                        "id",
                        "status",
                        "namespace",
                    ]),
                    &at,
                )?;
                if map.get("namespace").is_some_and(|n| !n.is_null()) {
                    return Err(format!(
                        "{at}.namespace: namespaced Responses function calls are not representable in ATIF v1.7"
                    ));
                }
            }
            "function_call_output" => {
                reject_unknown(map, &["call_id", "output", "type", "id", "status"], &at)?;
                preflight_parts(map.get("output"), &format!("{at}.output"), input_parts)?;
            }
            _ => {}
        }
    }
    Ok(())
}

/// Which message model a message item is (upstream's `_discriminate_message_item`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MessageModel {
    /// `NeMoGymEasyInputMessage`: string or list content, any of the four roles.
    Easy,
    /// `NeMoGymMessage`: list content with a status, a system, user or developer role.
    Input,
    /// `NeMoGymResponseOutputMessage`: the assistant's output.
    Output,
}

/// One conversation item, validated. `dump` is its `model_dump(mode="json", exclude_none=True)`,
/// the form upstream compares a turn's copies in.
#[derive(Clone, Debug)]
pub struct Item {
    pub kind: ItemKind,
    pub dump: Value,
}

#[derive(Clone, Debug)]
pub enum ItemKind {
    Message {
        model: MessageModel,
        role: String,
        status: Option<String>,
        id: Option<String>,
        content: Value,
    },
    Reasoning {
        id: String,
        encrypted: bool,
        summary: Vec<Value>,
        content: Vec<Value>,
    },
    FunctionCall {
        arguments: String,
        call_id: String,
        name: String,
        id: Option<String>,
        status: Option<String>,
    },
    FunctionCallOutput {
        call_id: String,
        output: Value,
        id: Option<String>,
        status: Option<String>,
    },
}

fn first_part_type(content: &Value) -> Option<&str> {
    let part = content.as_array()?.first()?.as_object()?;
    match part.get("type") {
        Some(Value::String(s)) if !s.is_empty() => Some(s),
        _ => part.contains_key("refusal").then_some("refusal"),
    }
}

fn message_model(map: &Map<String, Value>) -> MessageModel {
    let content = map.get("content").unwrap_or(&Value::Null);
    let role = map.get("role").and_then(Value::as_str);
    if matches!(role, Some("user" | "system" | "developer")) {
        let status = map.get("status").and_then(Value::as_str);
        return if content.is_array() && status.is_some_and(|s| STATUSES.contains(&s)) {
            MessageModel::Input
        } else {
            MessageModel::Easy
        };
    }
    match content.as_array() {
        Some(parts) if !parts.is_empty() => {
            if matches!(first_part_type(content), Some("output_text" | "refusal")) {
                return MessageModel::Output;
            }
        }
        Some(_) if map.get("id").is_some_and(Value::is_string) => return MessageModel::Output,
        _ => {}
    }
    MessageModel::Easy
}

/// An input content part (`ResponseInputContentParam`): text parts are read, and the other
/// input kinds are kept for the caller to refuse as not text.
fn input_part(part: &Value, path: &str) -> Result<Value, Invalid> {
    let f = object(part, path)?;
    match f.map.get("type").and_then(Value::as_str) {
        Some("input_text") => {
            f.req_str("text")?;
            f.forbid_extra(&["type", "text"])?;
            Ok(part.clone())
        }
        Some("input_image" | "input_file" | "input_audio" | "input_video") => Ok(part.clone()),
        _ => Err(format!("{path}: not an input content part")),
    }
}

fn input_content(value: &Value, path: &str, string_allowed: bool) -> Result<Value, Invalid> {
    match value {
        Value::String(_) if string_allowed => Ok(value.clone()),
        Value::Array(parts) => Ok(Value::Array(
            parts
                .iter()
                .enumerate()
                .map(|(i, p)| input_part(p, &format!("{path}[{i}]")))
                .collect::<Result<_, _>>()?,
        )),
        _ => Err(format!("{path}: expected content")),
    }
}

/// An output message's part: `output_text` (annotations, text, type, logprobs) or `refusal`.
fn output_part(part: &Value, path: &str) -> Result<Value, Invalid> {
    let f = object(part, path)?;
    let kind = f.map.get("type").and_then(Value::as_str);
    if kind == Some("refusal") || (kind.is_none() && f.map.contains_key("refusal")) {
        let refusal = f.req_str("refusal")?;
        return Ok(dump(vec![
            ("refusal", refusal.into()),
            ("type", "refusal".into()),
        ]));
    }
    f.literal("type", &["output_text"], Some("output_text"))?;
    let annotations = list(
        f.map.get("annotations").unwrap_or(&Value::Null),
        &f.at("annotations"),
    )?;
    for (i, a) in annotations.iter().enumerate() {
        annotation(a, &format!("{}[{i}]", f.at("annotations")))?;
    }
    let text = f.req_str("text")?;
    let logprobs = match f.get("logprobs") {
        None => Value::Null,
        Some(v) => Value::Array(list(v, &f.at("logprobs"))?.to_vec()),
    };
    Ok(dump(vec![
        ("annotations", Value::Array(annotations.to_vec())),
        ("text", text.into()),
        ("type", "output_text".into()),
        ("logprobs", logprobs),
    ]))
}

/// An annotation as one of openai's four models (`openai/types/responses/response_output_text.py`
/// `Annotation`, a union told by `type`), read strictly; extra fields are allowed there.
fn annotation(value: &Value, path: &str) -> Result<(), Invalid> {
    let f = object(value, path)?;
    let (texts, ints): (&[&str], &[&str]) = match f.map.get("type").and_then(Value::as_str) {
        Some("file_citation") => (&["file_id", "filename"], &["index"]),
        Some("url_citation") => (&["title", "url"], &["end_index", "start_index"]),
        Some("container_file_citation") => (
            &["container_id", "file_id", "filename"],
            &["end_index", "start_index"],
        ),
        Some("file_path") => (&["file_id"], &["index"]),
        _ => return Err(format!("{}: expected an annotation type", f.at("type"))),
    };
    for key in texts {
        f.req_str(key)?;
    }
    for key in ints {
        f.req_int(key, i64::MIN)?;
    }
    Ok(())
}

fn text_parts(
    value: Option<&Value>,
    path: &str,
    kind: &'static str,
) -> Result<Vec<Value>, Invalid> {
    let Some(value) = value else {
        return Ok(Vec::new());
    };
    list(value, path)?
        .iter()
        .enumerate()
        .map(|(i, part)| {
            let f = object(part, &format!("{path}[{i}]"))?;
            let text = f.req_str("text")?;
            match f.map.get("type") {
                Some(Value::String(t)) if t == kind => {}
                _ => return Err(format!("{}: expected {kind:?}", f.at("type"))),
            }
            Ok(dump(vec![("text", text.into()), ("type", kind.into())]))
        })
        .collect()
}

fn opt_string(s: Option<&str>) -> Value {
    s.map_or(Value::Null, Value::from)
}

/// Reads one item of a supported kind (the preflight has run) as its model, strictly.
pub fn read(value: &Value, path: &str) -> Result<Item, Invalid> {
    let f: Fields = object(value, path)?;
    let kind = f.map.get("type").and_then(Value::as_str).unwrap_or("");
    match kind {
        "message" => {
            let model = message_model(f.map);
            read_message(&f, model)
        }
        "reasoning" => {
            let id = f.req_str("id")?;
            let summary = text_parts(
                Some(f.map.get("summary").unwrap_or(&Value::Null)),
                &f.at("summary"),
                "summary_text",
            )?;
            let encrypted = f.opt_str("encrypted_content")?;
            let content = text_parts(f.get("content"), &f.at("content"), "reasoning_text")?;
            let content_given = f.get("content").is_some();
            let item_dump = dump(vec![
                ("id", id.into()),
                ("summary", Value::Array(summary.clone())),
                ("type", "reasoning".into()),
                ("encrypted_content", opt_string(encrypted)),
                (
                    "content",
                    if content_given {
                        Value::Array(content.clone())
                    } else {
                        Value::Null
                    },
                ),
            ]);
            Ok(Item {
                kind: ItemKind::Reasoning {
                    id: id.to_string(),
                    encrypted: encrypted.is_some(),
                    summary,
                    content,
                },
                dump: item_dump,
            })
        }
        "function_call" => {
            let arguments = f.req_str("arguments")?;
            let call_id = f.req_str("call_id")?;
            let name = f.req_str("name")?;
            let id = f.opt_str("id")?;
            let status = f.literal("status", &STATUSES, None)?;
            let namespace = f.opt_str("namespace")?;
            let item_dump = dump(vec![
                ("arguments", arguments.into()),
                ("call_id", call_id.into()),
                ("name", name.into()),
                ("type", "function_call".into()),
                ("id", opt_string(id)),
                ("status", opt_string(status.as_deref())),
                ("namespace", opt_string(namespace)),
            ]);
            Ok(Item {
                kind: ItemKind::FunctionCall {
                    arguments: arguments.to_string(),
                    call_id: call_id.to_string(),
                    name: name.to_string(),
                    id: id.map(str::to_string),
                    status,
                },
                dump: item_dump,
            })
        }
        "function_call_output" => {
            let call_id = f.req_str("call_id")?;
            let output = input_content(
                f.map.get("output").unwrap_or(&Value::Null),
                &f.at("output"),
                true,
            )?;
            let id = f.opt_str("id")?;
            let status = f.literal("status", &STATUSES, None)?;
            let item_dump = dump(vec![
                ("call_id", call_id.into()),
                ("output", output.clone()),
                ("type", "function_call_output".into()),
                ("id", opt_string(id)),
                ("status", opt_string(status.as_deref())),
            ]);
            Ok(Item {
                kind: ItemKind::FunctionCallOutput {
                    call_id: call_id.to_string(),
                    output,
                    id: id.map(str::to_string),
                    status,
                },
                dump: item_dump,
            })
        }
        other => Err(format!("{path}: unsupported item type {other:?}")),
    }
}

fn read_message(f: &Fields, model: MessageModel) -> Result<Item, Invalid> {
    let content_raw = f.map.get("content").unwrap_or(&Value::Null);
    let (role, status, id, content, item_dump) = match model {
        MessageModel::Easy => {
            let role = f
                .literal("role", &["user", "assistant", "system", "developer"], None)?
                .ok_or_else(|| format!("{}: field required", f.at("role")))?;
            f.literal("type", &["message"], Some("message"))?;
            let phase = f.literal("phase", &["commentary", "final_answer"], None)?;
            let content = input_content(content_raw, &f.at("content"), true)?;
            let d = dump(vec![
                ("content", content.clone()),
                ("role", role.clone().into()),
                ("type", "message".into()),
                ("phase", opt_string(phase.as_deref())),
            ]);
            (role, None, None, content, d)
        }
        MessageModel::Input => {
            let role = f
                .literal("role", &["user", "system", "developer"], None)?
                .ok_or_else(|| format!("{}: field required", f.at("role")))?;
            let status = f.literal("status", &STATUSES, Some("completed"))?;
            f.literal("type", &["message"], Some("message"))?;
            let content = input_content(content_raw, &f.at("content"), false)?;
            let d = dump(vec![
                ("content", content.clone()),
                ("role", role.clone().into()),
                ("status", opt_string(status.as_deref())),
                ("type", "message".into()),
            ]);
            (role, status, None, content, d)
        }
        MessageModel::Output => {
            let id = f.req_str("id")?;
            let parts = list(content_raw, &f.at("content"))?;
            let content = Value::Array(
                parts
                    .iter()
                    .enumerate()
                    .map(|(i, p)| output_part(p, &format!("{}[{i}]", f.at("content"))))
                    .collect::<Result<_, _>>()?,
            );
            f.literal("role", &["assistant"], Some("assistant"))?;
            let status = f.literal("status", &STATUSES, Some("completed"))?;
            f.literal("type", &["message"], Some("message"))?;
            let phase = f.literal("phase", &["commentary", "final_answer"], None)?;
            let d = dump(vec![
                ("id", id.into()),
                ("content", content.clone()),
                ("role", "assistant".into()),
                ("status", opt_string(status.as_deref())),
                ("type", "message".into()),
                ("phase", opt_string(phase.as_deref())),
            ]);
            (
                "assistant".to_string(),
                status,
                Some(id.to_string()),
                content,
                d,
            )
        }
    };
    Ok(Item {
        kind: ItemKind::Message {
            model,
            role,
            status,
            id,
            content,
        },
        dump: item_dump,
    })
}

/// A conversation list read item by item (`list[NeMoGymResponseInputItem]`, strict).
pub fn read_all(value: &Value, path: &str) -> Result<Vec<Item>, Invalid> {
    list(value, path)?
        .iter()
        .enumerate()
        .map(|(i, item)| read(item, &format!("{path}[{i}]")))
        .collect()
}
