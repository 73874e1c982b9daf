//! Claude Code's context compactions joined with the hidden summary call that produced them,
//! as upstream's `associate_claude_code_compaction_calls` does at `07d6b0d`
//! (`responses_api_agents/claude_code_agent/observability.py`), before the generic join.
//!
//! Claude Code summarizes its history with a model call no conversation shows. A completed
//! compaction with a summary but no model call gets one only when exactly one captured call —
//! owned by no invocation, a successful Messages call whose last message is Claude Code's
//! summary prompt, within the compaction's before/after boundaries — answered with text that
//! is exactly the persisted summary. That call is then also inserted into the invocation's
//! references between the boundaries. Anything less than exact stays unjoined.

use super::observations::Bundle;
use serde_json::{Map, Value};
use std::collections::HashSet;

pub const SOURCE: &str = "claude_code";

const PROMPT_MARKERS: [&str; 3] = [
    "Your task is to create a detailed summary of this conversation.",
    "Your task is to create a detailed summary of the conversation so far",
    "Your task is to create a detailed summary of the RECENT portion of the conversation",
];

const SUMMARY_PREFIX: &str = "This session is being continued from a previous conversation that ran out of context. The summary below covers the earlier portion of the conversation.\n\n";

/// The optional paragraphs Claude Code may append after the summary, in order; the first ends
/// in a transcript path (one line).
const TRANSCRIPT_NOTE: &str = "\n\nIf you need specific details from before compaction (like exact code snippets, error messages, or content you generated), read the full transcript at: ";
const SUFFIXES: [&str; 3] = [
    "\n\nRecent messages are preserved verbatim.",
    "\n\nYour REPL VM state has been cleared as part of this compaction. Variables defined in REPL calls before this point are no longer accessible — redefine any you still need.",
    "\n\nContinue the conversation from where it left off without asking the user any further questions. Resume directly — do not acknowledge the summary, do not recap what was happening, do not preface with \"I'll continue\" or similar. Pick up the last task as if the break never happened.",
];

/// Upstream's `_text`: text blocks joined, anything else as JSON text.
fn text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        Value::Array(items)
            if items
                .iter()
                .all(|i| i.get("type").and_then(Value::as_str) == Some("text")) =>
        {
            items
                .iter()
                .map(|i| match i.get("text") {
                    Some(Value::String(s)) => s.clone(),
                    None | Some(Value::Null) => String::new(),
                    Some(other) => other.to_string(),
                })
                .collect()
        }
        other => other.to_string(),
    }
}

/// The request's last message is the user's summary prompt.
fn is_compaction_request(request: &Value) -> bool {
    let Some(last) = request
        .get("messages")
        .and_then(Value::as_array)
        .and_then(|m| m.last())
    else {
        return false;
    };
    last.get("role").and_then(Value::as_str) == Some("user") && {
        let t = text(last.get("content").unwrap_or(&Value::Null));
        PROMPT_MARKERS.iter().any(|m| t.contains(m))
    }
}

/// The text blocks of a Messages response, joined; `None` when there are none or all empty.
fn messages_text(response: &Value) -> Option<String> {
    let joined: String = response
        .get("content")?
        .as_array()?
        .iter()
        .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
        .filter_map(|b| b.get("text").and_then(Value::as_str))
        .collect();
    (!joined.is_empty()).then_some(joined)
}

/// The first `<open>…</close>` span (non-greedy): its byte range and inner range.
fn span(s: &str, open: &str, close: &str) -> Option<(usize, usize, usize, usize)> {
    let start = s.find(open)?;
    let inner = start + open.len();
    let end = inner + s[inner..].find(close)?;
    Some((start, inner, end, end + close.len()))
}

/// Claude Code's rendering of a summary call's output: the first `<analysis>` block dropped,
/// the `<summary>` block as `Summary:\n…`, blank-line runs collapsed, trimmed.
fn normalize(output: &str) -> String {
    let mut s = output.to_string();
    if let Some((a, _, _, b)) = span(&s, "<analysis>", "</analysis>") {
        s.replace_range(a..b, "");
    }
    if let Some((a, i, e, b)) = span(&s, "<summary>", "</summary>") {
        let inner = s[i..e].trim().to_string();
        s.replace_range(a..b, &format!("Summary:\n{inner}"));
    }
    let mut collapsed = String::with_capacity(s.len());
    let mut newlines = 0;
    for c in s.chars() {
        if c == '\n' {
            newlines += 1;
            continue;
        }
        collapsed.push_str(match newlines {
            0 => "",
            1 => "\n",
            _ => "\n\n",
        });
        newlines = 0;
        collapsed.push(c);
    }
    collapsed.push_str(match newlines {
        0 => "",
        1 => "\n",
        _ => "\n\n",
    });
    collapsed.trim().to_string()
}

/// The persisted summary is exactly the prefix, the normalized output, and only Claude Code's
/// optional trailing paragraphs.
fn matches_summary(summary: &str, output: &str) -> bool {
    let expected = format!("{SUMMARY_PREFIX}{}", normalize(output));
    let Some(mut rest) = summary.strip_prefix(expected.as_str()) else {
        return false;
    };
    if let Some(after) = rest.strip_prefix(TRANSCRIPT_NOTE) {
        let line = after.find('\n').unwrap_or(after.len());
        if line == 0 {
            return false;
        }
        rest = &after[line..];
    }
    for suffix in SUFFIXES {
        rest = rest.strip_prefix(suffix).unwrap_or(rest);
    }
    rest.is_empty()
}

fn field<'a>(c: &'a Map<String, Value>, k: &str) -> &'a Value {
    c.get(k).unwrap_or(&Value::Null)
}

/// Upstream's `ref_matches_call` (no uniqueness: the callers count).
fn ref_matches(r: &Value, c: &Map<String, Value>) -> bool {
    match r["model_call_id"].as_str().filter(|s| !s.is_empty()) {
        Some(id) => field(c, "model_call_id").as_str() == Some(id),
        None => {
            r["model_ref"] == *field(c, "model_ref") && r["response_id"] == *field(c, "response_id")
        }
    }
}

fn gap(code: &str, invocation: &Value, detail: Option<String>) -> Value {
    serde_json::json!({"code": code, "invocation_id": invocation, "detail": detail})
}

/// Associates each eligible compaction with its summary call, in place; `Err` when a chosen
/// call cannot be referenced (upstream then keeps the bundle as it was and records
/// `compaction_model_call_join_failed`). `calls` are the captured call records with payloads.
pub fn associate(bundle: &mut Bundle, calls: &[&Map<String, Value>]) -> Result<(), String> {
    if bundle.source != SOURCE {
        return Ok(());
    }
    let invocation_refs: Vec<&Value> = bundle
        .records
        .iter()
        .filter(|r| r["kind"] == "agent_invocation")
        .flat_map(|r| r["model_calls"].as_array().into_iter().flatten())
        .collect();
    let owned: HashSet<usize> = (0..calls.len())
        .filter(|&i| invocation_refs.iter().any(|r| ref_matches(r, calls[i])))
        .collect();
    let call_index = |r: &Value| -> Option<i64> {
        if r.is_null() {
            return None;
        }
        let found: Vec<&&Map<String, Value>> = calls.iter().filter(|c| ref_matches(r, c)).collect();
        match found.as_slice() {
            [c] => field(c, "call_index").as_i64(),
            _ => None,
        }
    };
    let compactions: Vec<usize> = (0..bundle.records.len())
        .filter(|&i| bundle.records[i]["kind"] == "context_compaction")
        .collect();
    let mut candidates: Vec<Vec<usize>> = Vec::new();
    for &ci in &compactions {
        let c = &bundle.records[ci];
        let (before, after) = (&c["before_model_call"], &c["after_model_call"]);
        let (before_index, after_index) = (call_index(before), call_index(after));
        let boundary_refs: Vec<&Value> = [before, after]
            .into_iter()
            .map(|r| &r["model_ref"])
            .filter(|m| !m.is_null())
            .collect();
        let summary = c["summary"].as_str();
        let eligible = c["outcome"] == "completed"
            && c["model_calls"].as_array().is_none_or(Vec::is_empty)
            && summary.is_some();
        let chosen = (0..calls.len())
            .filter(|_| eligible)
            .filter(|i| !owned.contains(i))
            .filter(|&i| {
                let call = calls[i];
                let status = field(call, "status_code").as_i64();
                let index = field(call, "call_index").as_i64().unwrap_or(-1);
                field(call, "dialect") == "messages"
                    && status.is_some_and(|s| (200..300).contains(&s))
                    && field(call, "error_category").is_null()
                    && (!field(call, "model_call_id").is_null()
                        || (!field(call, "model_ref").is_null()
                            && !field(call, "response_id").is_null()))
                    && (boundary_refs.is_empty()
                        || boundary_refs.contains(&field(call, "model_ref")))
                    && is_compaction_request(field(call, "request"))
                    && messages_text(field(call, "response"))
                        .is_some_and(|t| matches_summary(summary.unwrap_or_default(), &t))
                    && (before.is_null() || before_index.is_some_and(|b| index > b))
                    && (after.is_null() || after_index.is_some_and(|a| index < a))
            })
            .collect();
        candidates.push(chosen);
    }
    let count = |i: usize| candidates.iter().flatten().filter(|&&j| j == i).count();
    let mut gaps = bundle.gaps.clone();
    let mut records = bundle.records.clone();
    for (&ci, found) in compactions.iter().zip(&candidates) {
        let inv = records[ci]["invocation_id"].clone();
        if found.len() > 1 || (found.len() == 1 && count(found[0]) > 1) {
            gaps.push(gap(
                "compaction_model_call_match_ambiguous",
                &inv,
                Some(format!("candidate_count={}", found.len())),
            ));
        }
        let Some(owner) = records
            .iter()
            .position(|r| r["kind"] == "agent_invocation" && r["invocation_id"] == inv)
        else {
            continue;
        };
        if found.len() != 1 || count(found[0]) != 1 {
            continue;
        }
        let call = calls[found[0]];
        let reference = serde_json::json!({
            "model_call_id": field(call, "model_call_id"),
            "model_ref": field(call, "model_ref"),
            "response_id": field(call, "response_id"),
        });
        let has_id = reference["model_call_id"]
            .as_str()
            .is_some_and(|s| !s.is_empty());
        let has_pair = !reference["model_ref"].is_null()
            && reference["response_id"]
                .as_str()
                .is_some_and(|s| !s.is_empty());
        if !has_id && !has_pair {
            return Err(
                "the summary call has no model_call_id nor (model_ref, response_id)".into(),
            );
        }
        records[ci]["model_calls"] = Value::Array(vec![reference.clone()]);
        let (before, after) = (
            records[ci]["before_model_call"].clone(),
            records[ci]["after_model_call"].clone(),
        );
        let refs = records[owner]["model_calls"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        let mut at = refs.len();
        for (i, existing) in refs.iter().enumerate() {
            if !after.is_null() && *existing == after {
                at = i;
                break;
            }
            if !before.is_null() && *existing == before {
                at = i + 1;
            }
        }
        let mut refs = refs;
        refs.insert(at, reference);
        records[owner]["model_calls"] = Value::Array(refs);
    }
    let unresolved: HashSet<String> = compactions
        .iter()
        .filter(|&&ci| {
            records[ci]["model_calls"]
                .as_array()
                .is_none_or(Vec::is_empty)
        })
        .filter_map(|&ci| records[ci]["invocation_id"].as_str().map(str::to_string))
        .collect();
    gaps.retain(|g| {
        g["code"] != "compaction_model_call_reference_unavailable"
            || g["invocation_id"]
                .as_str()
                .is_some_and(|i| unresolved.contains(i))
    });
    bundle.records = records;
    bundle.gaps = gaps;
    Ok(())
}

#[cfg(test)]
mod tests;
