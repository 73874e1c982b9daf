//! The behavioural signals of one rollout (docs/health.md "Rollout health", "Signals (per rollout)"),
//! from its `response`: truncation, the final
//! answer, the last item, tool calls (malformed arguments, error outputs, dangling calls, loops),
//! turns and token use.

use super::fast::Reader;
use super::fast_values;
use super::row::{Item, Raw, Response};
use super::rules;
use super::Flag;
use serde_json::value::RawValue;
use std::collections::HashMap;

/// Token use from `response.usage`; `None` on the rollout when usage is missing, null or all
/// zeros (Hermes reports zeros): unknown, never zero.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Tokens {
    pub input: f64,
    pub output: f64,
    pub total: f64,
    /// `output_tokens_details.reasoning_tokens`, when reported.
    pub reasoning: Option<f64>,
    /// `input_tokens_details.cached_tokens`, when reported.
    pub cached: Option<f64>,
}

/// What one rollout shows.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Signals {
    /// Bits of [`Flag`].
    pub flags: u16,
    /// `response.incomplete_details.reason` of a truncated rollout (`unknown` when absent).
    pub truncated_reason: Option<String>,
    pub output_items: u32,
    pub tool_calls: u32,
    pub malformed_arguments: u32,
    pub tool_error_calls: u32,
    pub dangling_calls: u32,
    /// The repeated call of a loop: its name and how often the signature occurred.
    pub loop_call: Option<(String, u32)>,
    pub turns: u32,
    pub tokens: Option<Tokens>,
    /// The items that raised a flag, as indices into `response.output` (the rollout view marks
    /// them): every call of a loop's signature, each error output, each malformed or dangling
    /// call, the cut-off last item of a truncated reply, the blank final answer, the last item
    /// of a rollout that ended on a tool. Empty for a healthy rollout (no allocation).
    pub marks: Vec<Mark>,
    /// Judged as one action (`mode`): a single-step run's rollout.
    pub single_step: bool,
}

/// One offending item: its index in `response.output` and the flag it raised.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Mark {
    pub item: u32,
    pub flag: Flag,
}

impl Signals {
    pub fn has(&self, flag: Flag) -> bool {
        self.flags & flag.bit() != 0
    }
    fn set(&mut self, flag: Flag) {
        self.flags |= flag.bit();
    }
    fn mark(&mut self, item: usize, flag: Flag) {
        self.marks.push(Mark {
            item: item as u32,
            flag,
        });
    }
    /// The items that raised `flag`.
    pub fn marked(&self, flag: Flag) -> impl Iterator<Item = u32> + '_ {
        self.marks
            .iter()
            .filter(move |m| m.flag == flag)
            .map(|m| m.item)
    }
}

pub(super) fn signals(response: Option<&Response>, reader: Reader) -> Signals {
    let mut s = Signals::default();
    let Some(response) = response else {
        s.set(Flag::EmptyOutput);
        s.set(Flag::EmptyAnswer);
        return s;
    };
    s.tokens = tokens(response);
    let incomplete = response.status.as_deref() == Some("incomplete");
    if incomplete {
        s.set(Flag::Truncated);
        let reason = response
            .incomplete_details
            .as_ref()
            .and_then(|d| d.reason.as_deref())
            .unwrap_or("unknown");
        s.truncated_reason = Some(reason.to_string());
    }
    let items: &[Item] = response.output.as_deref().unwrap_or(&[]);
    s.output_items = items.len() as u32;
    if items.is_empty() {
        s.set(Flag::EmptyOutput);
    }
    if let Some(last) = items.len().checked_sub(1) {
        if incomplete {
            // The reply that was cut off.
            s.mark(last, Flag::Truncated);
        } else if matches!(
            items[last].kind.as_deref(),
            Some("function_call" | "function_call_output")
        ) {
            s.set(Flag::EndedOnTool);
            s.mark(last, Flag::EndedOnTool);
        }
    }
    let answer = items.iter().enumerate().rev().find(|(_, i)| {
        i.kind.as_deref() == Some("message") && i.role.as_deref() == Some("assistant")
    });
    match answer {
        Some((_, m)) if m.content.is_some_and(|c| !blank_content(c.0, reader)) => {}
        Some((at, _)) => {
            s.set(Flag::EmptyAnswer);
            s.mark(at, Flag::EmptyAnswer);
        }
        None => s.set(Flag::EmptyAnswer),
    }
    tools(items, &mut s, reader);
    s.turns = turns(items);
    s
}

fn tokens(response: &Response) -> Option<Tokens> {
    let u = response.usage.as_ref()?;
    let t = Tokens {
        input: u.input_tokens.unwrap_or(0.0),
        output: u.output_tokens.unwrap_or(0.0),
        total: u
            .total_tokens
            .unwrap_or(u.input_tokens.unwrap_or(0.0) + u.output_tokens.unwrap_or(0.0)),
        reasoning: u
            .output_tokens_details
            .as_ref()
            .and_then(|d| d.reasoning_tokens),
        cached: u
            .input_tokens_details
            .as_ref()
            .and_then(|d| d.cached_tokens),
    };
    let known = u.input_tokens.is_some() || u.output_tokens.is_some() || u.total_tokens.is_some();
    (known && (t.input != 0.0 || t.output != 0.0 || t.total != 0.0)).then_some(t)
}

/// A message's content is blank when none of its `output_text` parts (or a plain string) has
/// non-whitespace text. Texts are judged on their raw JSON (no unescaping, no copy).
fn blank_content(raw: &str, reader: Reader) -> bool {
    #[derive(serde::Deserialize)]
    struct Part<'a> {
        #[serde(rename = "type", borrow, default)]
        kind: Option<std::borrow::Cow<'a, str>>,
        #[serde(borrow, default)]
        text: Option<&'a RawValue>,
    }
    if raw.starts_with('"') {
        return rules::blank_json_string(raw);
    }
    if let Some(blank) = reader
        .skims()
        .then(|| fast_values::blank_parts(raw))
        .flatten()
    {
        return blank;
    }
    match serde_json::from_str::<Vec<Part>>(raw) {
        Ok(parts) => !parts
            .iter()
            .any(|p| rules::text_part(p.kind.as_deref(), p.text.map(RawValue::get))),
        Err(_) => true,
    }
}

/// Tool calls, their arguments, outputs, dangling calls and loops.
fn tools(items: &[Item], s: &mut Signals, reader: Reader) {
    let mut answered: std::collections::HashSet<&str> = std::collections::HashSet::new();
    for (at, item) in items.iter().enumerate() {
        if item.kind.as_deref() == Some("function_call_output") {
            if let Some(id) = item.call_id.as_deref() {
                answered.insert(id);
            }
            if item.output.is_some_and(|o| error_output(o.0, reader)) {
                s.tool_error_calls += 1;
                s.mark(at, Flag::ToolError);
            }
        }
    }
    // Each signature (name, canonical arguments) once, with how often it occurred; the previous
    // call and the loop's signature as indices into `counts` (no copies per call).
    let mut signatures: HashMap<(&str, String), usize> = HashMap::new();
    let mut counts: Vec<u32> = Vec::new();
    let mut previous: Option<usize> = None;
    // The loop's signature, and how often it occurred.
    let mut loop_call: Option<(usize, u32)> = None;
    for (at, item) in items
        .iter()
        .enumerate()
        .filter(|(_, i)| i.kind.as_deref() == Some("function_call"))
    {
        s.tool_calls += 1;
        let (canonical, ok) = arguments(item.arguments, reader);
        if !ok {
            s.malformed_arguments += 1;
            s.mark(at, Flag::MalformedArguments);
        }
        if item
            .call_id
            .as_deref()
            .is_none_or(|id| !answered.contains(id))
        {
            s.dangling_calls += 1;
            s.mark(at, Flag::DanglingCall);
        }
        let name = item.name.as_deref().unwrap_or("");
        let signature = *signatures.entry((name, canonical)).or_insert_with(|| {
            counts.push(0);
            counts.len() - 1
        });
        counts[signature] += 1;
        let times = counts[signature];
        let twice_in_a_row = previous == Some(signature);
        if (times >= 3 || twice_in_a_row) && loop_call.is_none_or(|(_, t)| times > t) {
            loop_call = Some((signature, times));
        }
        previous = Some(signature);
    }
    let loop_call = loop_call.and_then(|(signature, times)| {
        let ((name, canonical), _) = signatures.iter().find(|(_, &i)| i == signature)?;
        // Rare: a second look at the calls, to mark each one of the repeated signature.
        for (at, item) in items.iter().enumerate() {
            if item.kind.as_deref() == Some("function_call")
                && item.name.as_deref().unwrap_or("") == *name
                && arguments(item.arguments, reader).0 == *canonical
            {
                s.mark(at, Flag::Loop);
            }
        }
        Some((name.to_string(), times))
    });
    if s.malformed_arguments > 0 {
        s.set(Flag::MalformedArguments);
    }
    if s.tool_error_calls > 0 {
        s.set(Flag::ToolError);
    }
    if s.dangling_calls > 0 {
        s.set(Flag::DanglingCall);
    }
    if loop_call.is_some() {
        s.set(Flag::Loop);
    }
    s.loop_call = loop_call;
}

/// The arguments in canonical form (parsed, keys sorted, compact) and whether they parse: the
/// raw text when they do not. `arguments` is JSON text in a string; an object is taken as is.
pub fn canonical_arguments(arguments: Option<&RawValue>) -> (String, bool) {
    arguments_text(arguments.map(RawValue::get), Reader::Skim)
}

fn arguments(arguments: Option<Raw>, reader: Reader) -> (String, bool) {
    arguments_text(arguments.map(|a| a.0), reader)
}

/// [`canonical_arguments`] of the arguments' JSON text: a string's text decoded once, its
/// canonical form by skimming when sure (`fast_values`), else by parsing it into a `Value`.
fn arguments_text(arguments: Option<&str>, reader: Reader) -> (String, bool) {
    let Some(raw) = arguments else {
        return (String::new(), false);
    };
    if reader.skims() && raw.starts_with('"') {
        let text = super::fast::string(raw).flatten();
        if let Some(sorted) = text.as_deref().and_then(fast_values::sorted_text) {
            return (sorted, true);
        }
    }
    let text: String = match serde_json::from_str::<String>(raw) {
        Ok(text) => text,
        Err(_) => {
            return match serde_json::from_str::<serde_json::Value>(raw) {
                Ok(v) if v.is_object() => (crate::json::sorted_string(&v), true),
                _ => (raw.to_string(), false),
            }
        }
    };
    match serde_json::from_str::<serde_json::Value>(&text) {
        Ok(v) => (crate::json::sorted_string(&v), true),
        Err(_) => (text, false),
    }
}

/// The heuristic for a tool's error answer (docs/health.md "Signals (per rollout)", `tool_error`; Hermes
/// uses a similar rule): a JSON object with a non-empty `error`, a `status` of failed/error, a
/// `detail` field or a non-zero `exit_code`; or text starting with `Error`, `Traceback` or
/// `Internal Server Error`, or `Exit code N` with N non-zero. A list of content parts is judged
/// by its text.
pub fn is_error_output(output: &RawValue) -> bool {
    error_output(output.get(), Reader::Skim)
}

/// [`is_error_output`] of the output's JSON text: a string or object by skimming when sure
/// (`fast_values`), else parsed into a `Value`.
fn error_output(raw: &str, reader: Reader) -> bool {
    let fast = match raw.as_bytes().first().filter(|_| reader.skims()) {
        Some(b'"') => super::fast::string(raw)
            .flatten()
            .and_then(|text| error_text(&text, fast_values::error_object)),
        Some(b'{') => fast_values::error_object(raw),
        _ => None,
    };
    fast.unwrap_or_else(|| slow_error_output(raw))
}

/// The text rule: an object's rule when the text is a JSON object, else its first words.
/// `object` says whether the text (a JSON object?) is an error answer, `None` when not one.
fn error_text(text: &str, object: impl Fn(&str) -> Option<bool>) -> Option<bool> {
    let trimmed = text.trim_start();
    if trimmed.starts_with('{') {
        return object(trimmed);
    }
    Some(error_words(trimmed))
}

fn error_words(trimmed: &str) -> bool {
    ["Error", "Traceback", "Internal Server Error"]
        .iter()
        .any(|p| trimmed.starts_with(p))
        || nonzero_exit_code_text(trimmed)
}

fn slow_error_output(raw: &str) -> bool {
    let text: String = match serde_json::from_str::<serde_json::Value>(raw) {
        Ok(serde_json::Value::String(s)) => s,
        Ok(serde_json::Value::Array(parts)) => parts
            .iter()
            .filter_map(|p| p.get("text").and_then(|t| t.as_str()))
            .collect::<Vec<_>>()
            .join("\n"),
        Ok(v @ serde_json::Value::Object(_)) => return rules::is_error_object(&v),
        _ => return false,
    };
    let trimmed = text.trim_start();
    if trimmed.starts_with('{') {
        if let Ok(v @ serde_json::Value::Object(_)) = serde_json::from_str(trimmed) {
            return rules::is_error_object(&v);
        }
    }
    error_words(trimmed)
}

/// Claude Code's Bash tool answers a failed command with `Exit code N` first (N > 0).
fn nonzero_exit_code_text(text: &str) -> bool {
    text.strip_prefix("Exit code ").is_some_and(|rest| {
        let digits: &str = &rest[..rest
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(rest.len())];
        digits.parse::<u64>().is_ok_and(|n| n != 0)
    })
}

/// Runs of model-generated items separated by runs of `function_call_output`: the agent loop's
/// turns as the row shows them (exact only with `ng_trajectory`).
fn turns(items: &[Item]) -> u32 {
    let mut turns = 0;
    let mut in_model_run = false;
    for item in items {
        let tool_output = item.kind.as_deref() == Some("function_call_output");
        if !tool_output && !in_model_run {
            turns += 1;
        }
        in_model_run = !tool_output;
    }
    turns
}
