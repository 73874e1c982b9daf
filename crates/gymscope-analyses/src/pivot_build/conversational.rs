//! The conversational layout (tau2 rollouts, as upstream's
//! `.agents/skills/nemo-gym-pivot-datasets/scripts/reference/conversational_messages_to_pivot_dataset_reference.py`
//! @07d6b0d reads them): the whole conversation is in
//! `result.messages`; the request's first two input items are the system prompt and the fixed
//! greeting. Messages are cleaned as upstream's conversational converter does, then converted
//! as chat messages.

use super::chat::{self, Msg};
use super::responses::carried;
use super::skips::Reason;
use super::turns::Trajectory;
use serde_json::Value;

/// Counters this layout adds to the metrics.
#[derive(Default, Debug, Clone, Copy, serde::Serialize, serde::Deserialize)]
pub struct ConvCounts {
    pub skipped_seed_assistant_messages: u64,
    pub dropped_user_tool_messages: u64,
    pub dropped_unconvertible_messages: u64,
}

impl ConvCounts {
    /// Adds counts made elsewhere (another thread's lines).
    pub fn absorb(&mut self, other: ConvCounts) {
        let ConvCounts {
            skipped_seed_assistant_messages,
            dropped_user_tool_messages,
            dropped_unconvertible_messages,
        } = other;
        self.skipped_seed_assistant_messages += skipped_seed_assistant_messages;
        self.dropped_user_tool_messages += dropped_user_tool_messages;
        self.dropped_unconvertible_messages += dropped_unconvertible_messages;
    }
}

fn strip_think(s: &str) -> String {
    let s = s.trim();
    let s = s.strip_prefix("<think>").unwrap_or(s);
    let s = s.strip_suffix("</think>").unwrap_or(s);
    s.trim().to_string()
}

/// A tau2 message, preferring its raw chat completion (`raw_data.choices[0].message`).
fn parse(m: &Value) -> Msg {
    let raw = m
        .get("raw_data")
        .and_then(|r| r.get("choices"))
        .and_then(|c| c.get(0))
        .and_then(|c| c.get("message"))
        .filter(|r| r.is_object());
    let role = m
        .get("role")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let src = raw.unwrap_or(m);
    let mut calls = chat::parse_calls(src.get("tool_calls"));
    if calls.is_empty() {
        calls = chat::parse_calls(m.get("tool_calls"));
    }
    let reasoning = ["reasoning_content", "reasoning"]
        .iter()
        .find_map(|k| {
            src.get(*k)
                .and_then(Value::as_str)
                .filter(|s| !s.trim().is_empty())
        })
        .map(strip_think)
        .filter(|s| !s.is_empty());
    let mut text = src.get("content").and_then(chat::content_text);
    if role == "assistant" {
        text = match text {
            Some(t) if t.is_empty() && !calls.is_empty() => None,
            None if calls.is_empty() => Some(String::new()),
            t => t,
        };
    }
    Msg {
        tool_call_id: (role == "tool")
            .then(|| {
                m.get("id")
                    .or_else(|| m.get("tool_call_id"))
                    .and_then(Value::as_str)
                    .map(String::from)
            })
            .flatten(),
        role,
        text,
        reasoning: if m.get("role").and_then(Value::as_str) == Some("assistant") {
            reasoning
        } else {
            None
        },
        calls,
    }
}

fn role_text(item: &Value) -> (String, String) {
    let role = item
        .get("role")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let text = item
        .get("content")
        .and_then(chat::content_text)
        .unwrap_or_default();
    (role, text)
}

/// A tau2 rollout row as a trajectory.
pub fn trajectory(
    row: &Value,
    trajectory_id: u64,
    nameless: &mut u64,
    counts: &mut ConvCounts,
) -> Result<Trajectory, (Reason, String)> {
    let invalid = |s: &str| (Reason::InvalidSourceRow, s.to_string());
    let params = row
        .get("responses_create_params")
        .and_then(Value::as_object)
        .ok_or_else(|| invalid("field `responses_create_params` is missing or not an object"))?;
    let input = params
        .get("input")
        .and_then(Value::as_array)
        .filter(|i| i.len() >= 2)
        .ok_or_else(|| {
            invalid(
                "field `responses_create_params.input` needs the system prompt and the greeting",
            )
        })?;
    let log = row
        .get("result")
        .and_then(|r| r.get("messages"))
        .and_then(Value::as_array)
        .ok_or_else(|| invalid("field `result.messages` is missing or not a list"))?;
    let (sys_role, sys_text) = role_text(&input[0]);
    let (_, greeting) = role_text(&input[1]);
    let mut msgs = vec![
        Msg {
            role: sys_role,
            text: Some(sys_text),
            ..Msg::default()
        },
        Msg {
            role: "assistant".into(),
            text: Some(greeting.clone()),
            ..Msg::default()
        },
    ];
    let mut user_call_ids: Vec<&str> = Vec::new();
    for (i, m) in log.iter().enumerate() {
        let role = m.get("role").and_then(Value::as_str).unwrap_or_default();
        if i == 0 && role == "assistant" && role_text(m).1 == greeting {
            counts.skipped_seed_assistant_messages += 1;
            continue;
        }
        if role == "user"
            && m.get("tool_calls")
                .and_then(Value::as_array)
                .is_some_and(|c| !c.is_empty())
        {
            for c in m["tool_calls"].as_array().into_iter().flatten() {
                user_call_ids.extend(c.get("id").and_then(Value::as_str));
            }
            counts.dropped_user_tool_messages += 1;
            continue;
        }
        if role == "tool" {
            let id = m.get("id").and_then(Value::as_str);
            let by_user = m.get("requestor").and_then(Value::as_str) == Some("user");
            if by_user || id.is_some_and(|id| user_call_ids.contains(&id)) {
                counts.dropped_user_tool_messages += 1;
                continue;
            }
            if id.is_none() && m.get("tool_call_id").is_none() {
                counts.dropped_unconvertible_messages += 1;
                continue;
            }
        }
        msgs.push(parse(m));
    }
    let mut t = chat::to_trajectory(&msgs, trajectory_id, 1, 2, nameless)?;
    t.tools = params
        .get("tools")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    t.parallel_tool_calls = params
        .get("parallel_tool_calls")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    t.carried = carried(params);
    Ok(t)
}
