//! A source trajectory in one shape for every format: the Responses items `T` the source model
//! saw and produced, split into assistant turns, plus the facts about each
//! prefix the skip checks need.

use super::skips::IndexKind;
use serde_json::Value;

/// What one item of `T` is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Reasoning,
    Call,
    OtherCall,
    AssistantText,
    Context,
    Boundary,
}

const OTHER_CALLS: [&str; 10] = [
    "mcp_call",
    "custom_tool_call",
    "computer_call",
    "web_search_call",
    "file_search_call",
    "code_interpreter_call",
    "local_shell_call",
    "image_generation_call",
    "mcp_list_tools",
    "mcp_approval_request",
];

pub fn classify(item: &Value) -> Kind {
    let ty = item.get("type").and_then(Value::as_str);
    let role = item.get("role").and_then(Value::as_str);
    match ty {
        Some("reasoning") => Kind::Reasoning,
        Some("function_call") => Kind::Call,
        Some(t) if OTHER_CALLS.contains(&t) => Kind::OtherCall,
        Some("message") | None => match role {
            Some("assistant") => Kind::AssistantText,
            Some("user" | "system" | "developer") => Kind::Context,
            _ => Kind::Boundary,
        },
        _ => Kind::Boundary,
    }
}

/// One assistant turn: items `start..end` of `T`.
#[derive(Clone, Debug)]
pub struct Turn {
    pub start: usize,
    pub end: usize,
    /// Index of the turn in its source (item index in `T`, or message index).
    pub source_index: usize,
    /// Whether it is a decision point (a turn the model produced, not a given one).
    pub decision: bool,
}

/// A source row ready for pivot extraction.
pub struct Trajectory {
    /// `T`: the items, as recorded (responses) or as converted (chat, conversational).
    pub items: Vec<Value>,
    pub kinds: Vec<Kind>,
    /// Every assistant turn in order (decision points and given turns, for depth counts).
    pub turns: Vec<Turn>,
    pub index_kind: IndexKind,
    /// `len(input')` for Responses rows (source_output_index = item index − k0).
    pub k0: Option<usize>,
    /// `trajectory_num_items` / `trajectory_num_messages`.
    pub num_source: usize,
    pub tools: Vec<Value>,
    pub parallel_tool_calls: bool,
    /// `instructions`, `reasoning`, `text`: model-visible request fields carried over.
    pub carried: Vec<(String, Value)>,
    /// The response ended incomplete (`response.incomplete_details` non-null).
    pub incomplete: bool,
}

impl Trajectory {
    pub fn new(items: Vec<Value>, index_kind: IndexKind) -> Trajectory {
        let kinds = items.iter().map(classify).collect();
        Trajectory {
            items,
            kinds,
            turns: Vec::new(),
            index_kind,
            k0: None,
            num_source: 0,
            tools: Vec::new(),
            parallel_tool_calls: false,
            carried: Vec::new(),
            incomplete: false,
        }
    }

    /// Segments `T` into turns: maximal runs of model items, ended by a
    /// boundary or context item, by position `k0`, and before assistant text that follows a call
    /// in the same run. Decision points: turns at or after `k0`, and with `input_turns` those in
    /// `input` after its first user message.
    pub fn segment(&mut self, k0: usize, input_turns: bool) {
        let first_user = self
            .items
            .iter()
            .position(|i| i.get("role").and_then(Value::as_str) == Some("user"))
            .unwrap_or(usize::MAX);
        let mut turns = Vec::new();
        let mut start: Option<usize> = None;
        let mut seen_call = false;
        let close = |turns: &mut Vec<Turn>, s: usize, e: usize| {
            let decision = s >= k0 || (input_turns && s > first_user);
            turns.push(Turn {
                start: s,
                end: e,
                source_index: s,
                decision,
            });
        };
        for (i, kind) in self.kinds.iter().enumerate() {
            let model_item = matches!(
                kind,
                Kind::Reasoning | Kind::Call | Kind::OtherCall | Kind::AssistantText
            );
            if let Some(s) = start {
                let split = !model_item || i == k0 || (*kind == Kind::AssistantText && seen_call);
                if split {
                    close(&mut turns, s, i);
                    start = None;
                }
            }
            if model_item {
                if start.is_none() {
                    start = Some(i);
                    seen_call = false;
                }
                seen_call |= matches!(kind, Kind::Call | Kind::OtherCall);
            }
        }
        if let Some(s) = start {
            close(&mut turns, s, self.kinds.len());
        }
        self.turns = turns;
    }

    /// Per prefix length `p` (0..=len): whether every `function_call` in `T[..p]` has its
    /// `function_call_output` in `T[..p]` too. Computed once: each call makes the prefix lengths
    /// `call+1 ..= output` bad.
    pub fn paired_prefixes(&self) -> Vec<bool> {
        let n = self.items.len();
        let mut delta = vec![0i64; n + 2];
        for (i, item) in self.items.iter().enumerate() {
            if self.kinds[i] != Kind::Call {
                continue;
            }
            let id = item.get("call_id");
            let output = self.items[i + 1..].iter().position(|o| {
                o.get("type").and_then(Value::as_str) == Some("function_call_output")
                    && o.get("call_id") == id
            });
            let last_bad = output.map_or(n, |j| i + 1 + j);
            delta[i + 1] += 1;
            delta[last_bad + 1] -= 1;
        }
        let mut open = 0;
        (0..=n)
            .map(|p| {
                open += delta[p];
                open == 0
            })
            .collect()
    }
}

/// Token fields Gym reads as training variants of an item (validated all-or-nothing).
const TOKEN_FIELDS: [&str; 4] = [
    "prompt_token_ids",
    "generation_token_ids",
    "generation_log_probs",
    "routed_experts",
];

/// One member of a cleaned item: borrowed from the source, or generated.
pub enum Piece<'a> {
    Value(&'a Value),
    /// A generated string (an id).
    Text(String),
    /// Message content parts, written without their `logprobs`.
    Parts(&'a [Value]),
}

/// An item as it goes into a prefix, as a view over the source item (no
/// copy): nulls, token fields and content-part `logprobs` left out; a deterministic id first for
/// assistant messages and reasoning items without one. `None` for a non-object item.
pub fn clean_entries(
    item: &Value,
    trajectory_id: u64,
    index: usize,
) -> Option<Vec<(&str, Piece<'_>)>> {
    let Value::Object(map) = item else {
        return None;
    };
    let mut out = Vec::with_capacity(map.len() + 1);
    let mut has_id = false;
    let mut list_content = false;
    for (k, v) in map {
        if v.is_null() || TOKEN_FIELDS.contains(&k.as_str()) {
            continue;
        }
        has_id |= k == "id";
        match (k.as_str(), v) {
            ("content", Value::Array(parts)) => {
                list_content = true;
                out.push((k.as_str(), Piece::Parts(parts)));
            }
            _ => out.push((k.as_str(), Piece::Value(v))),
        }
    }
    if !has_id {
        let prefix = match classify(item) {
            Kind::AssistantText if list_content => Some("msg_"),
            Kind::Reasoning => Some("rs_"),
            _ => None,
        };
        if let Some(prefix) = prefix {
            let id = format!(
                "{prefix}{}",
                stable_hex(&format!("{trajectory_id}:{index}"))
            );
            // Gym's models do not care where `id` sits; first, as the API writes it.
            out.insert(0, ("id", Piece::Text(id)));
        }
    }
    Some(out)
}

/// First 32 hex digits of SHA-256 of `text`: deterministic ids and pivot ids.
pub fn stable_hex(text: &str) -> String {
    hex32(text.as_bytes())
}

pub fn hex32(bytes: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    let digest = Sha256::digest(bytes);
    digest[..16].iter().map(|b| format!("{b:02x}")).collect()
}

/// The text of an assistant item: the first `output_text` part (or a string content).
pub fn assistant_text(item: &Value) -> Option<&str> {
    match item.get("content")? {
        Value::String(s) => Some(s),
        Value::Array(parts) => parts.iter().find_map(|p| {
            (p.get("type").and_then(Value::as_str) == Some("output_text"))
                .then(|| p.get("text").and_then(Value::as_str))
                .flatten()
        }),
        _ => None,
    }
}
