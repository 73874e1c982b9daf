//! A rollout row as a readable conversation: the prompt (`responses_create_params.input`) and
//! the model's answer (`response.output`) as messages, reasoning, function calls and their
//! outputs; then reward, usage and every other field. What the data says about an item beyond
//! its text goes in its [`ItemNote`] (generated tokens, a tool call's timing), and a row carrying
//! `ng_trajectory` gets its turns with their model calls' tokens ([`evidence`]). Plain text only: whoever shows it escapes it
//! (the web app through its text nodes, the HTML report through `html::escape`).

use serde_json::Value;

mod evidence;
pub use evidence::{
    generated_tokens, ItemNote, ModelCall, TokenStats, ToolTiming, Trajectory, Turn,
};

#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum Item {
    Message {
        role: String,
        text: String,
    },
    Reasoning {
        text: String,
    },
    FunctionCall {
        name: String,
        call_id: String,
        arguments: String,
    },
    FunctionOutput {
        call_id: String,
        output: String,
    },
    /// An item of a type not known here, shown as JSON.
    Other {
        kind: String,
        json: String,
    },
}

#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Conversation {
    pub input: Vec<Item>,
    pub output: Vec<Item>,
    /// `reward`, as JSON text.
    pub reward: Option<String>,
    /// `response.usage` fields, flattened (`input_tokens_details.cached_tokens`).
    pub usage: Vec<(String, String)>,
    /// Every other top-level field (verifier results, metadata), as JSON text.
    pub fields: Vec<(String, String)>,
    /// One note per `output` item (empty when no item has anything to note).
    #[serde(default)]
    pub output_notes: Vec<ItemNote>,
    /// The row's `ng_trajectory`, read for the view.
    #[serde(default)]
    pub trajectory: Option<Trajectory>,
}

/// Reads a rollout (or materialized input) row.
pub fn conversation(row: &Value) -> Conversation {
    let mut c = Conversation::default();
    let params = row.get("responses_create_params");
    if let Some(instructions) = params
        .and_then(|p| p.get("instructions"))
        .and_then(Value::as_str)
    {
        c.input.push(Item::Message {
            role: "instructions".into(),
            text: instructions.into(),
        });
    }
    match params.and_then(|p| p.get("input")) {
        Some(Value::String(s)) => c.input.push(Item::Message {
            role: "user".into(),
            text: s.clone(),
        }),
        Some(Value::Array(items)) => c.input.extend(items.iter().map(item)),
        _ => {}
    }
    let response = row.get("response");
    c.trajectory = evidence::trajectory(row.get("ng_trajectory"));
    if let Some(Value::Array(items)) = response.and_then(|r| r.get("output")) {
        c.output.extend(items.iter().map(item));
        let notes: Vec<ItemNote> = items
            .iter()
            .zip(&c.output)
            .map(|(raw, shown)| ItemNote {
                generated_tokens: generated_tokens(raw),
                tool: match (shown, &c.trajectory) {
                    (Item::FunctionCall { call_id, .. }, Some(t)) => t.tool(call_id).cloned(),
                    _ => None,
                },
            })
            .collect();
        if notes.iter().any(|n| *n != ItemNote::default()) {
            c.output_notes = notes;
        }
    }
    c.reward = row.get("reward").map(compact);
    if let Some(Value::Object(usage)) = response.and_then(|r| r.get("usage")) {
        for (k, v) in usage {
            match v {
                Value::Object(details) => {
                    for (dk, dv) in details {
                        c.usage.push((format!("{k}.{dk}"), compact(dv)));
                    }
                }
                v => c.usage.push((k.clone(), compact(v))),
            }
        }
    }
    if let Value::Object(obj) = row {
        for (k, v) in obj {
            if !matches!(
                k.as_str(),
                "responses_create_params" | "response" | "reward"
            ) {
                c.fields.push((k.clone(), compact(v)));
            }
        }
    }
    c
}

fn compact(v: &Value) -> String {
    let mut out = Vec::new();
    let _ = crate::json::to_writer_orjson(&mut out, v);
    String::from_utf8(out).unwrap_or_default()
}

/// Text of a `content` value: a string, or the `text` of each part joined by blank lines.
pub fn content_text(content: Option<&Value>) -> String {
    match content {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(parts)) => parts
            .iter()
            .map(|p| match p {
                Value::String(s) => s.clone(),
                p => match p.get("text").and_then(Value::as_str) {
                    Some(t) => t.to_string(),
                    None => compact(p), // images, files, refusals: shown as JSON
                },
            })
            .collect::<Vec<_>>()
            .join("\n\n"),
        Some(other) => compact(other),
        None => String::new(),
    }
}

fn text_of(v: Option<&Value>) -> String {
    match v {
        Some(Value::String(s)) => s.clone(),
        Some(other) => compact(other),
        None => String::new(),
    }
}

/// Function arguments pretty-printed when they are JSON, verbatim otherwise.
fn arguments(v: Option<&Value>) -> String {
    let raw = text_of(v);
    match serde_json::from_str::<Value>(&raw) {
        Ok(parsed @ (Value::Object(_) | Value::Array(_))) => {
            serde_json::to_string_pretty(&parsed).unwrap_or(raw)
        }
        _ => raw,
    }
}

/// One Responses item (or chat-like message) as a display item.
pub fn item(v: &Value) -> Item {
    let kind = v.get("type").and_then(Value::as_str).unwrap_or("message");
    match kind {
        "message" => Item::Message {
            role: v
                .get("role")
                .and_then(Value::as_str)
                .unwrap_or("assistant")
                .to_string(),
            text: content_text(v.get("content")),
        },
        "reasoning" => {
            let summary = content_text(v.get("summary"));
            let content = content_text(v.get("content"));
            let text = [summary, content]
                .into_iter()
                .filter(|t| !t.is_empty())
                .collect::<Vec<_>>()
                .join("\n\n");
            Item::Reasoning { text }
        }
        "function_call" => Item::FunctionCall {
            name: text_of(v.get("name")),
            call_id: text_of(v.get("call_id")),
            arguments: arguments(v.get("arguments")),
        },
        "function_call_output" => Item::FunctionOutput {
            call_id: text_of(v.get("call_id")),
            output: text_of(v.get("output")),
        },
        other => Item::Other {
            kind: other.to_string(),
            json: serde_json::to_string_pretty(v).unwrap_or_default(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_items_note_generated_tokens_and_tool_timings() {
        let row: Value = serde_json::from_str(
            r#"{"response":{"output":[
                {"type":"message","role":"assistant","content":"hi","generation_token_ids":[1,2,3,4],"prompt_token_ids":[9],"generation_log_probs":[0,0,0,0]},
                {"type":"function_call","name":"f","call_id":"c1","arguments":"{}","generation_token_ids":[]},
                {"type":"function_call_output","call_id":"c1","output":"ok"}]},
              "ng_trajectory":{"turns":[],"model_calls":[],"tool_calls":[{"tool_call_id":"c1","status":"completed","duration_ms":12.0}],"gaps":[]}}"#,
        )
        .unwrap();
        let c = conversation(&row);
        let texts: Vec<Option<String>> = c.output_notes.iter().map(ItemNote::text).collect();
        assert_eq!(
            texts,
            [
                Some("4 tokens generated".to_string()),
                Some("tool completed · 12 ms".to_string()),
                None
            ]
        );
        // Nothing to note: no notes at all.
        let row: Value =
            serde_json::from_str(r#"{"response":{"output":[{"type":"message","content":"x"}]}}"#)
                .unwrap();
        let c = conversation(&row);
        assert!(c.output_notes.is_empty());
        assert!(c.trajectory.is_none());
    }

    #[test]
    fn reads_prompt_answer_and_fields() {
        let row: Value = serde_json::from_str(
            r#"{"responses_create_params":{"input":[{"role":"system","content":"Be brief."},{"role":"user","content":[{"type":"input_text","text":"<b>2+2</b>?"}]},{"type":"function_call","name":"calc","arguments":"{\"x\":1}","call_id":"c1"},{"type":"function_call_output","call_id":"c1","output":"4"}]},
                "response":{"output":[{"type":"reasoning","summary":[{"type":"summary_text","text":"add"}]},{"type":"message","role":"assistant","content":[{"type":"output_text","text":"4"}]},{"type":"web_search_call","id":"w"}],"usage":{"input_tokens":3,"output_tokens_details":{"reasoning_tokens":1}}},
                "reward":1.0,"correct":true,"_ng_task_index":0}"#,
        )
        .unwrap();
        let c = conversation(&row);
        assert_eq!(
            c.input[0],
            Item::Message {
                role: "system".into(),
                text: "Be brief.".into()
            }
        );
        assert_eq!(
            c.input[1],
            Item::Message {
                role: "user".into(),
                text: "<b>2+2</b>?".into()
            }
        );
        assert_eq!(
            c.input[2],
            Item::FunctionCall {
                name: "calc".into(),
                call_id: "c1".into(),
                arguments: "{\n  \"x\": 1\n}".into()
            }
        );
        assert_eq!(
            c.input[3],
            Item::FunctionOutput {
                call_id: "c1".into(),
                output: "4".into()
            }
        );
        assert_eq!(c.output[0], Item::Reasoning { text: "add".into() });
        assert_eq!(
            c.output[1],
            Item::Message {
                role: "assistant".into(),
                text: "4".into()
            }
        );
        assert!(matches!(&c.output[2], Item::Other { kind, .. } if kind == "web_search_call"));
        assert_eq!(c.reward.as_deref(), Some("1.0"));
        assert_eq!(
            c.usage,
            [
                ("input_tokens".to_string(), "3".to_string()),
                ("output_tokens_details.reasoning_tokens".into(), "1".into())
            ]
        );
        assert_eq!(
            c.fields,
            [
                ("correct".to_string(), "true".to_string()),
                ("_ng_task_index".into(), "0".into())
            ]
        );
    }
}
