//! Chat-completions trajectories (as upstream's
//! `.agents/skills/nemo-gym-pivot-datasets/scripts/reference/chat_messages_to_pivot_dataset_reference.py`
//! @07d6b0d reads them): `messages` with `tool_calls` and `role: "tool"`,
//! converted to Responses items; each assistant message is one turn. The conversational layout
//! reuses the conversion through [`Msg`].

use super::skips::{IndexKind, Reason};
use super::turns::{stable_hex, Kind, Trajectory, Turn};
use serde_json::{json, Map, Value};

/// One chat message reduced to what the conversion needs.
#[derive(Clone, Debug, Default)]
pub struct Msg {
    pub role: String,
    /// `None` when `content` is null.
    pub text: Option<String>,
    pub reasoning: Option<String>,
    pub calls: Vec<ChatCall>,
    /// Tool messages: the call they answer.
    pub tool_call_id: Option<String>,
}

#[derive(Clone, Debug)]
pub struct ChatCall {
    pub id: Option<String>,
    pub name: Option<String>,
    pub arguments: Value,
}

/// List content flattened by joining the `text` (or `content`) of each part with `\n`.
pub fn content_text(content: &Value) -> Option<String> {
    match content {
        Value::Null => None,
        Value::String(s) => Some(s.clone()),
        Value::Array(parts) => Some(
            parts
                .iter()
                .filter_map(|p| match p {
                    Value::String(s) => Some(s.as_str()),
                    _ => p
                        .get("text")
                        .or_else(|| p.get("content"))
                        .and_then(Value::as_str),
                })
                .collect::<Vec<_>>()
                .join("\n"),
        ),
        other => Some(other.to_string()),
    }
}

/// Calls in chat form (`function: {name, arguments}`) or flat (`name`, `arguments`).
pub fn parse_calls(calls: Option<&Value>) -> Vec<ChatCall> {
    calls
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|c| {
            let f = c.get("function").filter(|f| f.is_object()).unwrap_or(c);
            ChatCall {
                id: c.get("id").and_then(Value::as_str).map(String::from),
                name: f.get("name").and_then(Value::as_str).map(String::from),
                arguments: f.get("arguments").cloned().unwrap_or(Value::Null),
            }
        })
        .collect()
}

fn non_blank(v: Option<&Value>) -> Option<String> {
    v.and_then(Value::as_str)
        .filter(|s| !s.trim().is_empty())
        .map(String::from)
}

/// A chat-completions message as a [`Msg`].
pub fn parse_message(m: &Value) -> Msg {
    let str_field = |k: &str| m.get(k).and_then(Value::as_str).map(String::from);
    Msg {
        role: str_field("role").unwrap_or_default(),
        text: m.get("content").and_then(content_text),
        reasoning: non_blank(m.get("reasoning_content")).or_else(|| non_blank(m.get("reasoning"))),
        calls: parse_calls(m.get("tool_calls")),
        tool_call_id: str_field("tool_call_id")
            .or_else(|| str_field("call_id"))
            .or_else(|| str_field("id")),
    }
}

/// Converts messages to `T`. `given` leading assistant messages (the tau2 greeting) are turns
/// but not decision points; `index_offset` is subtracted from message indices for
/// `source_message_index`. Counts calls dropped for having no name.
pub fn to_trajectory(
    msgs: &[Msg],
    trajectory_id: u64,
    given: usize,
    index_offset: usize,
    nameless: &mut u64,
) -> Result<Trajectory, (Reason, String)> {
    let mut items = Vec::new();
    let mut turns = Vec::new();
    for (mi, m) in msgs.iter().enumerate() {
        let hex = || stable_hex(&format!("{trajectory_id}:{mi}"));
        match m.role.as_str() {
            "system" | "user" | "developer" => {
                items.push(json!({"role": m.role, "content": m.text.clone().unwrap_or_default(), "type": "message"}));
            }
            "tool" => {
                let Some(id) = &m.tool_call_id else {
                    return Err((
                        Reason::MissingToolCallId,
                        format!("tool message {mi} has no tool_call_id"),
                    ));
                };
                items.push(json!({"type": "function_call_output", "call_id": id,
                    "output": m.text.clone().unwrap_or_default()}));
            }
            "assistant" => {
                let start = items.len();
                if let Some(r) = &m.reasoning {
                    items.push(json!({"id": format!("rs_{}", hex()),
                        "summary": [{"text": r, "type": "summary_text"}], "type": "reasoning"}));
                }
                let named: Vec<(usize, &ChatCall)> = m
                    .calls
                    .iter()
                    .enumerate()
                    .filter(|(_, c)| c.name.is_some())
                    .collect();
                *nameless += (m.calls.len() - named.len()) as u64;
                if let Some(text) = &m.text {
                    if !text.is_empty() || m.calls.is_empty() {
                        items.push(json!({"id": format!("msg_{}", hex()),
                            "content": [{"annotations": [], "text": text, "type": "output_text"}],
                            "role": "assistant", "status": "completed", "type": "message"}));
                    }
                }
                for (ci, c) in named {
                    let id = c.id.clone().unwrap_or_else(|| {
                        format!("call_{}", stable_hex(&format!("{trajectory_id}:{mi}:{ci}")))
                    });
                    let arguments = match &c.arguments {
                        Value::String(s) => s.clone(),
                        Value::Null => "{}".into(),
                        other => other.to_string(),
                    };
                    let mut call = Map::new();
                    call.insert("arguments".into(), arguments.into());
                    call.insert("call_id".into(), id.clone().into());
                    call.insert("name".into(), c.name.clone().into());
                    call.insert("type".into(), "function_call".into());
                    call.insert("id".into(), id.into());
                    call.insert("status".into(), "completed".into());
                    items.push(Value::Object(call));
                }
                let decision = turns.len() >= given;
                turns.push(Turn {
                    start,
                    end: items.len(),
                    source_index: mi.saturating_sub(index_offset),
                    decision,
                });
            }
            _ => {} // unknown roles have no Responses item; they are left out
        }
    }
    let mut t = Trajectory::new(items, IndexKind::Message);
    debug_assert!(t.kinds.iter().all(|k| *k != Kind::OtherCall));
    t.turns = turns;
    t.num_source = msgs.len() - index_offset.min(msgs.len());
    Ok(t)
}

/// A chat row (`{"messages": [...], "tools": [...]}`) as a trajectory.
pub fn trajectory(
    row: &Value,
    trajectory_id: u64,
    nameless: &mut u64,
) -> Result<Trajectory, (Reason, String)> {
    let messages = row.get("messages").and_then(Value::as_array).ok_or((
        Reason::InvalidSourceRow,
        "field `messages` is missing or not a list".to_string(),
    ))?;
    let msgs: Vec<Msg> = messages.iter().map(parse_message).collect();
    let mut t = to_trajectory(&msgs, trajectory_id, 0, 0, nameless)?;
    t.tools = row
        .get("tools")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    t.parallel_tool_calls = row
        .get("parallel_tool_calls")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    Ok(t)
}
