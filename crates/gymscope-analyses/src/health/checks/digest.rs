//! One rollout line → its [`Digest`]: identity, verdict, findings, unobserved checks and the
//! statistics the summary sums (upstream's `_worker` at the pinned revision).

use super::calls::{
    bind_views, call_identity, chain_ended_on_failure, ended_on_failed_call, is_failed,
    is_successful, last_in_time, model_chains, ref_key, Bindings,
};
use super::{Finding, Reads, REGISTRY};
use crate::gym::trajectory::{self, ModelCall, Record};
use crate::gym::{keys, py};
use serde_json::{json, Map, Value};
use std::collections::{BTreeMap, HashMap};

/// A task or rollout index as the row has it: upstream keeps any JSON value.
#[derive(Clone, Debug, PartialEq)]
pub enum Index {
    Int(i64),
    Str(String),
    /// Anything else (floats, bools, objects): shown as its JSON text where upstream uses
    /// Python's `str()`. Boxed: a run keeps an index pair per rollout until the end.
    Other(Box<Value>),
}

/// An index as a dict key: ints and strings never equal, an int equal to an int of the same
/// value (as its decimal text would be); borrowed, so grouping a run copies no text.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(super) enum IndexKey<'a> {
    Int(i64),
    Str(&'a str),
    Other(String),
}

impl Index {
    /// The value as upstream's `RolloutDigest` field (`int | str`) holds it: Pydantic turns a
    /// bool and a float without a fraction into an int (`true` is 1, `2.0` is 2).
    fn of(v: &Value) -> Index {
        match v {
            Value::Number(n) if n.is_i64() => Index::Int(n.as_i64().unwrap_or(0)),
            Value::Bool(b) => Index::Int(i64::from(*b)),
            Value::Number(n) => match crate::gym::pydantic::lax_int(v) {
                Some(i) if n.is_f64() => {
                    i64::try_from(i).map_or_else(|_| Index::Other(Box::new(v.clone())), Index::Int)
                }
                _ => Index::Other(Box::new(v.clone())),
            },
            Value::String(s) => Index::Str(s.clone()),
            other => Index::Other(Box::new(other.clone())),
        }
    }
    pub fn to_value(&self) -> Value {
        match self {
            Index::Int(i) => Value::from(*i),
            Index::Str(s) => Value::from(s.as_str()),
            Index::Other(v) => (**v).clone(),
        }
    }
    /// Python's `str(value)`.
    pub fn text(&self) -> String {
        match self {
            Index::Int(i) => i.to_string(),
            Index::Str(s) => s.clone(),
            Index::Other(v) => py::repr(&**v),
        }
    }
    /// Equality as a dict key (ints and strings never equal).
    pub(super) fn key(&self) -> IndexKey<'_> {
        match self {
            Index::Int(i) => IndexKey::Int(*i),
            Index::Str(s) => IndexKey::Str(s),
            Index::Other(v) => IndexKey::Other(v.to_string()),
        }
    }
}

#[derive(Clone, Debug)]
pub struct Digest {
    pub task: Index,
    pub rollout: Index,
    /// The row's `stage_index` (multi-stage drivers write a row per stage; v0.7.0): part of the
    /// identity, and the verdict row's last key when given.
    pub stage: Option<Index>,
    /// The row's own rollout id; `None` when it has none, and the verdict file's is then
    /// [`Digest::rollout_id`]'s `task-rollout` (not stored: most runs have no ids).
    pub own_rollout_id: Option<Box<str>>,
    pub verdict: &'static str,
    pub findings: Vec<Finding>,
    /// Checks that lacked their evidence, one bit per registry position (a few bytes per
    /// rollout instead of a list: a run keeps every digest until the end).
    pub unobserved: u16,
    pub capture_observed: bool,
    pub policy_calls_observed: bool,
    pub successful_model_calls: u64,
    pub model_call_errors: u64,
    pub errors_by_status: BTreeMap<String, u64>,
    pub ended_on_error: bool,
    pub duplicated_calls: u64,
    pub transcript_prompt: i64,
    pub transcript_completion: i64,
    pub capture_prompt: i64,
    pub capture_completion: i64,
}

pub(super) struct LineAt<'a> {
    pub file: &'a str,
    pub source: usize,
    pub line_number: u64,
    pub ordinal: u64,
}

const INCOMPLETE_MODEL_CALL_GAPS: [&str; 4] = [
    "model_calls_unavailable",
    "model_call_capture_incomplete",
    "model_call_capture_records_unreadable",
    "model_call_capture_unreadable",
];

/// Reference gaps and the mismatch kind each reports.
const REFERENCE_CONTRADICTION_GAPS: [(&str, &str); 3] = [
    ("model_call_reference_unmatched", "missing_captured_call"),
    ("model_call_reference_ambiguous", "duplicated_captured_call"),
    (
        "model_call_reference_conflict",
        "conflicting_call_ownership",
    ),
];

const LENGTH_LIMIT_FINISH_REASONS: [&str; 3] = ["length", "max_output_tokens", "max_tokens"];

/// The call stopped at its length limit (v0.7.0's runaway-generation check).
fn length_limited(c: &ModelCall<'_>) -> bool {
    let reason = c.meta.finish_reason.as_deref();
    reason.is_some_and(|f| LENGTH_LIMIT_FINISH_REASONS.contains(&f))
}

const AGENT_TOOL_CALL_TYPES: [&str; 13] = [
    "function_call",
    "tool_call",
    "tool_use",
    "mcp_call",
    "mcp_list_tools",
    "mcp_approval_request",
    "file_search_call",
    "web_search_call",
    "computer_call",
    "image_generation_call",
    "code_interpreter_call",
    "local_shell_call",
    "custom_tool_call",
];

fn parse_error_name(bytes: &[u8]) -> Result<Map<String, Value>, &'static str> {
    match serde_json::from_slice::<Value>(bytes.trim_ascii()) {
        Ok(Value::Object(m)) => Ok(m),
        Ok(_) => Err("ValueError"),
        Err(_) => Err("JSONDecodeError"),
    }
}

fn token(v: Option<i64>) -> i64 {
    v.filter(|v| *v >= 0).unwrap_or(0)
}

/// Upstream's `_nonempty`: text with non-space, or a list/dict holding some.
fn nonempty(v: &Value) -> bool {
    match v {
        Value::String(s) => !s.trim().is_empty(),
        Value::Array(a) => a.iter().any(nonempty),
        Value::Object(m) => [
            "text",
            "content",
            "output_text",
            "answer",
            "refusal",
            "encrypted_content",
            "reasoning",
            "reasoning_content",
            "summary",
        ]
        .iter()
        .any(|k| m.get(*k).is_some_and(nonempty)),
        _ => false,
    }
}

/// The name of the exception upstream's check raised on a value its code does not expect (a
/// check that raises is unobserved, with a `check_execution_error` finding).
type Raised = &'static str;

/// Upstream's `_item_has_tool_call`. An unhashable `type` (a list or an object) raises
/// `TypeError` in its set lookup.
fn has_tool_call(v: &Value) -> Result<bool, Raised> {
    match v {
        Value::Array(a) => {
            for x in a {
                if has_tool_call(x)? {
                    return Ok(true);
                }
            }
            Ok(false)
        }
        Value::Object(m) => {
            match m.get("type") {
                Some(Value::Array(_) | Value::Object(_)) => return Err("TypeError"),
                Some(Value::String(t)) if AGENT_TOOL_CALL_TYPES.contains(&t.as_str()) => {
                    return Ok(true)
                }
                _ => {}
            }
            Ok(m.get("tool_calls").is_some_and(py::truthy))
        }
        _ => Ok(false),
    }
}

/// Each turn's (has a message, has tool calls), every turn computed as upstream's `_agent_steps`
/// does, so a turn that raises fails the whole check.
fn agent_steps(t: &Record<'_>) -> Result<Vec<(bool, bool)>, Raised> {
    t.turns
        .iter()
        .map(|turn| {
            let message = nonempty(turn.answer) || nonempty(turn.reasoning_content);
            Ok((message, has_tool_call(turn.answer)?))
        })
        .collect()
}

/// Upstream's `_response_has_content`, with its exceptions: iterating a truthy number as the
/// `choices` list is a `TypeError`, `.get` on a truthy non-object `message` an `AttributeError`.
fn response_has_content(v: &Value) -> Result<bool, Raised> {
    let Value::Object(r) = v else {
        return Ok(false);
    };
    let get = |k: &str| r.get(k).unwrap_or(&Value::Null);
    if nonempty(get("output_text")) || nonempty(get("content")) {
        return Ok(true);
    }
    let choices = get("choices");
    let mut chat = false;
    match choices {
        _ if !py::truthy(choices) => {}
        Value::Array(cs) => {
            for c in cs.iter().filter_map(Value::as_object) {
                if c.get("text").is_some_and(nonempty) {
                    chat = true;
                    break;
                }
                let message = c.get("message").filter(|m| py::truthy(m));
                let content = match message {
                    None => None,
                    Some(Value::Object(m)) => m.get("content"),
                    Some(_) => return Err("AttributeError"),
                };
                if content.is_some_and(nonempty) {
                    chat = true;
                    break;
                }
            }
        }
        // A string iterates as characters and an object as its keys: no choice among them.
        Value::String(_) | Value::Object(_) => {}
        _ => return Err("TypeError"),
    }
    Ok(nonempty(get("output")) || chat)
}

/// `response.usage` prompt and completion tokens (Responses or Chat names), and whether both
/// are there.
fn transcript_tokens(row: &Map<String, Value>) -> (i64, i64, bool) {
    let usage = row
        .get("response")
        .and_then(Value::as_object)
        .and_then(|r| r.get("usage"))
        .and_then(Value::as_object);
    let Some(usage) = usage else {
        return (0, 0, false);
    };
    let pick = |a: &str, b: &str| {
        usage
            .get(a)
            .or_else(|| usage.get(b))
            .and_then(Value::as_i64)
            .filter(|v| *v >= 0)
    };
    let p = pick("input_tokens", "prompt_tokens");
    let c = pick("output_tokens", "completion_tokens");
    (p.unwrap_or(0), c.unwrap_or(0), p.is_some() && c.is_some())
}

fn call_locator(c: &ModelCall<'_>, position: usize) -> Map<String, Value> {
    let id = c
        .model_call_id
        .clone()
        .filter(|s| !s.is_empty())
        .or_else(|| c.meta.response_id.clone().filter(|s| !s.is_empty()))
        .unwrap_or_else(|| position.to_string());
    let mut m = Map::new();
    m.insert("call_id".into(), Value::from(id));
    m
}

fn locator(key: &str, v: Value) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert(key.into(), v);
    m
}

fn last_part(s: &str) -> String {
    s.rsplit(':').next().unwrap_or(s).to_string()
}

/// The findings of one rollout-level check that has its evidence.
fn run_check(
    id: &'static str,
    row: &Map<String, Value>,
    t: &Record<'_>,
    b: &Bindings,
) -> Result<Vec<Finding>, Raised> {
    let matched = || {
        b.matched
            .iter()
            .enumerate()
            .map(|(p, i)| (p, &t.model_calls[*i]))
    };
    Ok(match id {
        "rollout_missing_agent_turns" => {
            let steps = agent_steps(t)?;
            let active = t.turns.iter().zip(&steps).any(|(turn, (message, tools))| {
                *message || *tools || turn.model_calls.iter().any(|r| ref_key(r).is_some())
            });
            if active {
                vec![]
            } else {
                vec![Finding::new(
                    id,
                    None,
                    json!({"reason": "no agent turn with model activity"}),
                )]
            }
        }
        "agent_turn_hollow" => t
            .turns
            .iter()
            .zip(agent_steps(t)?)
            .filter(|(_, (message, tools))| !(*message || *tools))
            .map(|(turn, _)| {
                Finding::new(
                    id,
                    Some(locator("turn", Value::from(turn.turn_no))),
                    json!({"reason": "agent turn has no message or tool calls"}),
                )
            })
            .collect(),
        "model_call_zero_completion_tokens" => matched()
            .filter(|(_, c)| c.tokens.completion_tokens == Some(0))
            .map(|(p, c)| {
                Finding::new(
                    id,
                    Some(call_locator(c, p)),
                    json!({"completion_tokens": 0}),
                )
            })
            .collect(),
        "model_call_missing_token_counts" => matched()
            .filter(|(_, c)| c.tokens.prompt_tokens.is_none() || c.tokens.completion_tokens.is_none())
            .map(|(p, c)| {
                let mut missing = Vec::new();
                if c.tokens.prompt_tokens.is_none() {
                    missing.push("prompt_tokens");
                }
                if c.tokens.completion_tokens.is_none() {
                    missing.push("completion_tokens");
                }
                Finding::new(id, Some(call_locator(c, p)), json!({ "missing": missing }))
            })
            .collect(),
        "trajectory_capture_mismatch" => {
            let mut out = Vec::new();
            let mut seen: Vec<(&str, String)> = Vec::new();
            for r in &b.missing {
                let loc = last_part(r);
                if seen.contains(&("missing_captured_call", loc.clone())) {
                    continue;
                }
                seen.push(("missing_captured_call", loc.clone()));
                out.push(Finding::new(
                    id,
                    Some(locator("call_id", Value::from(loc))),
                    json!({"kind": "missing_captured_call"}),
                ));
            }
            for (r, n) in &b.duplicated {
                let loc = last_part(r);
                if seen.contains(&("duplicated_captured_call", loc.clone())) {
                    continue;
                }
                seen.push(("duplicated_captured_call", loc.clone()));
                out.push(Finding::new(
                    id,
                    Some(locator("call_id", Value::from(loc))),
                    json!({"kind": "duplicated_captured_call", "count": n}),
                ));
            }
            for g in &t.gaps {
                let Some((code, kind)) = REFERENCE_CONTRADICTION_GAPS
                    .iter()
                    .find(|(c, _)| *c == g.code)
                else {
                    continue;
                };
                let detail = g
                    .detail
                    .as_deref()
                    .filter(|s| !s.is_empty())
                    .unwrap_or("unknown");
                let loc = last_part(detail);
                if seen.iter().any(|(k, l)| k == kind && *l == loc) {
                    continue;
                }
                out.push(Finding::new(
                    id,
                    Some(locator("call_id", Value::from(loc))),
                    json!({"kind": kind, "observation_gap": code, "invocation_id": g.invocation_id}),
                ));
            }
            out
        }
        "model_call_failed" => {
            let last = b.matched.len().saturating_sub(1);
            matched()
                .filter(|(_, c)| is_failed(c))
                .map(|(p, c)| {
                    Finding::new(
                        id,
                        Some(call_locator(c, p)),
                        json!({
                            "status": c.meta.status_code,
                            "error_category": c.meta.error_category,
                            "terminal": b.complete() && p == last,
                        }),
                    )
                })
                .collect()
        }
        "rollout_token_count_mismatch" => {
            let (tp, tc, present) = transcript_tokens(row);
            let cp: i64 = matched().map(|(_, c)| token(c.tokens.prompt_tokens)).sum();
            let cc: i64 = matched().map(|(_, c)| token(c.tokens.completion_tokens)).sum();
            if present && (tp != cp || tc != cc) {
                vec![Finding::new(
                    id,
                    None,
                    json!({"transcript_prompt": tp, "transcript_completion": tc,
                           "capture_prompt": cp, "capture_completion": cc}),
                )]
            } else {
                vec![]
            }
        }
        "model_call_runaway_generation" => {
            let mut out = Vec::new();
            for (p, c) in matched() {
                if length_limited(c) && !response_has_content(c.response)? {
                    out.push(Finding::new(
                        id,
                        Some(call_locator(c, p)),
                        json!({"finish_reason": c.meta.finish_reason}),
                    ));
                }
            }
            out
        }
        "rollout_ended_on_failed_model_call" => model_chains(&t.model_calls)
            .into_iter()
            .filter(|(_, chain)| chain_ended_on_failure(&t.model_calls, chain))
            .map(|(model, chain)| {
                let last = &t.model_calls[last_in_time(&t.model_calls, &chain)];
                let position = last_in_time(&t.model_calls, &chain);
                Finding::new(
                    id,
                    Some(call_locator(last, position)),
                    json!({
                        "model_ref": model.map(|m| format!("{}/{}", m.kind, m.name)),
                        "status": last.meta.status_code,
                        "error_category": last.meta.error_category,
                        "observed_calls": chain.len(),
                        "successful_calls": chain.iter().filter(|i| is_successful(&t.model_calls[**i])).count(),
                    }),
                )
            })
            .collect(),
        // Runner checks (`check_execution_error`, `record_unreadable`, duplicates) find
        // nothing here; the runner adds their findings.
        _ => vec![],
    })
}

/// The bit of a check in [`Digest::unobserved`].
pub(super) fn bit(id: &str) -> u16 {
    REGISTRY
        .iter()
        .position(|s| s.id == id)
        .map_or(0, |i| 1 << i)
}

impl Digest {
    /// The rollout id of the verdict file: the row's own, else `task-rollout`.
    pub fn rollout_id(&self) -> std::borrow::Cow<'_, str> {
        match &self.own_rollout_id {
            Some(id) => std::borrow::Cow::Borrowed(id),
            None => format!("{}-{}", self.task.text(), self.rollout.text()).into(),
        }
    }

    /// The unobserved check ids, in registry order (upstream's order of evaluation).
    pub fn unobserved_ids(&self) -> Vec<&'static str> {
        REGISTRY
            .iter()
            .enumerate()
            .filter(|(i, _)| self.unobserved & (1 << i) != 0)
            .map(|(_, s)| s.id)
            .collect()
    }
}

/// Upstream's `_worker`: one line's checks and statistics.
pub(super) fn digest(at: &LineAt, bytes: &[u8], ignored: &[String]) -> Digest {
    let parsed = parse_error_name(bytes);
    let parse_error = parsed.as_ref().err().copied();
    let row = parsed.unwrap_or_default();
    let task = match row.get(keys::TASK_INDEX) {
        Some(v) => Index::of(v),
        None if parse_error.is_some() => Index::Str(format!(
            "__unreadable_record__:input-{}:line-{}",
            at.source, at.line_number
        )),
        None => Index::Int(at.ordinal as i64),
    };
    let rollout = row
        .get(keys::ROLLOUT_INDEX)
        .map_or(Index::Int(0), Index::of);
    let stage = row
        .get(keys::STAGE_INDEX)
        .filter(|v| !v.is_null())
        .map(Index::of);
    let raw_trajectory = row.get("ng_trajectory").filter(|v| !v.is_null());
    let trajectory_rollout_id = raw_trajectory
        .and_then(Value::as_object)
        .and_then(|t| t.get("rollout_id"));
    // Python's `str()` of the raw value: the id is made before Pydantic coerces the indices
    // (`3.0-0` for a task index 3.0).
    let py_str = |v: &Value| match v {
        Value::String(s) => s.clone(),
        other => py::repr(other),
    };
    let coerced = |v: Option<&Value>| v.is_some_and(|v| v.is_boolean() || v.is_f64());
    let own_rollout_id = [row.get(keys::ROLLOUT_ID), trajectory_rollout_id]
        .into_iter()
        .flatten()
        .find(|v| py::truthy(v))
        .map(|v| py_str(v).into_boxed_str())
        .or_else(|| {
            (coerced(row.get(keys::TASK_INDEX)) || coerced(row.get(keys::ROLLOUT_INDEX))).then(
                || {
                    let text = |v: Option<&Value>, i: &Index| v.map_or_else(|| i.text(), py_str);
                    format!(
                        "{}-{}",
                        text(row.get(keys::TASK_INDEX), &task),
                        text(row.get(keys::ROLLOUT_INDEX), &rollout)
                    )
                    .into_boxed_str()
                },
            )
        });

    let (trajectory, trajectory_error) = match (parse_error, raw_trajectory) {
        (None, Some(raw)) => match trajectory::validate(raw) {
            Ok(t) => (Some(t), None),
            Err(_) => (None, Some("ValidationError")),
        },
        _ => (None, None),
    };
    let observed = trajectory
        .as_ref()
        .filter(|t| !t.has_gap("trajectory_projection_failed"));
    let turns_observed = observed.is_some_and(|t| !t.has_gap("turns_unavailable"));
    let calls_observed = observed.is_some_and(|t| !t.has_any_gap(&INCOMPLETE_MODEL_CALL_GAPS));
    let empty = Record::default();
    let t = observed.unwrap_or(&empty);
    let scope_complete = observed.is_some_and(|t| !t.has_gap("turn_model_call_scope_incomplete"));
    let (turn_b, owned_b) = bind_views(t);

    let mut findings = Vec::new();
    let mut unobserved: u16 = 0;
    let is_ignored = |id: &str| ignored.iter().any(|i| i == id);
    for spec in REGISTRY.iter().filter(|s| s.reads != Reads::Task) {
        if is_ignored(spec.id) {
            continue;
        }
        if let Some(err) = parse_error {
            if spec.id == "record_unreadable" {
                let mut loc = Map::new();
                loc.insert("source_file".into(), Value::from(at.file));
                loc.insert("line".into(), Value::from(at.line_number));
                // The detail of every unreadable line is one of two texts: shared, not copied
                // (a file of 200,000 unreadable lines holds one finding each).
                let detail = if err == "JSONDecodeError" {
                    r#"{"reason":"rollout record is unreadable","error":"JSONDecodeError"}"#
                } else {
                    r#"{"reason":"rollout record is unreadable","error":"ValueError"}"#
                };
                debug_assert_eq!(
                    Finding::new(
                        spec.id,
                        None,
                        json!({"reason": "rollout record is unreadable", "error": err})
                    )
                    .detail,
                    detail
                );
                findings.push(Finding::with_detail(spec.id, Some(loc), detail));
            } else {
                unobserved |= bit(spec.id);
            }
            continue;
        }
        if let (Some(err), "record_unreadable") = (trajectory_error, spec.id) {
            findings.push(Finding::new(
                spec.id,
                None,
                json!({"reason": "canonical trajectory is unreadable", "error": err}),
            ));
            continue;
        }
        if spec.reads != Reads::Record && observed.is_none() {
            unobserved |= bit(spec.id);
            continue;
        }
        if spec.reads == Reads::Turns && !turns_observed {
            unobserved |= bit(spec.id);
            continue;
        }
        if spec.reads == Reads::ObservedCalls && (!calls_observed || t.model_calls.is_empty()) {
            unobserved |= bit(spec.id);
            continue;
        }
        let b = if spec.reads == Reads::OwnedCalls {
            &owned_b
        } else {
            &turn_b
        };
        if matches!(spec.reads, Reads::TurnCalls | Reads::OwnedCalls) {
            if !calls_observed {
                unobserved |= bit(spec.id);
                continue;
            }
            let has_required = if spec.id == "trajectory_capture_mismatch" {
                b.observed()
                    || t.gaps.iter().any(|g| {
                        REFERENCE_CONTRADICTION_GAPS
                            .iter()
                            .any(|(c, _)| *c == g.code)
                    })
            } else {
                !b.matched.is_empty()
            };
            if !has_required {
                unobserved |= bit(spec.id);
                continue;
            }
        }
        if spec.id == "rollout_token_count_mismatch"
            && (!scope_complete
                || !b.complete()
                || b.matched.is_empty()
                || !transcript_tokens(&row).2
                || b.matched.iter().any(|i| {
                    t.model_calls[*i].tokens.prompt_tokens.is_none()
                        || t.model_calls[*i].tokens.completion_tokens.is_none()
                }))
        {
            unobserved |= bit(spec.id);
            continue;
        }
        // A length-limited call with no response at all: nothing to judge as runaway.
        if spec.id == "model_call_runaway_generation"
            && b.matched.iter().any(|i| {
                let c = &t.model_calls[*i];
                c.response.is_null() && length_limited(c)
            })
        {
            unobserved |= bit(spec.id);
            continue;
        }
        match run_check(spec.id, &row, t, b) {
            Ok(found) => findings.extend(found),
            Err(raised) => {
                unobserved |= bit(spec.id);
                if !is_ignored("check_execution_error") {
                    findings.push(Finding::new(
                        "check_execution_error",
                        None,
                        json!({"reason": "check raised an unexpected exception",
                               "failed_check": spec.id, "error": raised}),
                    ));
                }
            }
        }
    }

    let verdict = if !findings.is_empty() {
        "unhealthy"
    } else if unobserved != 0 {
        "unobserved"
    } else {
        "healthy"
    };
    let calls = &t.model_calls;
    let failed: Vec<&ModelCall<'_>> = calls.iter().filter(|c| is_failed(c)).collect();
    let mut errors_by_status = BTreeMap::new();
    for c in &failed {
        let k = c
            .meta
            .status_code
            .map_or_else(|| "unknown".to_string(), |s| s.to_string());
        *errors_by_status.entry(k).or_insert(0) += 1;
    }
    let mut identities: HashMap<String, u64> = HashMap::new();
    for id in calls.iter().filter_map(call_identity) {
        *identities.entry(id).or_insert(0) += 1;
    }
    let (tp, tc, _) = transcript_tokens(&row);
    Digest {
        task,
        rollout,
        stage,
        own_rollout_id,
        verdict,
        findings,
        unobserved,
        capture_observed: !calls.is_empty(),
        policy_calls_observed: scope_complete && turn_b.complete(),
        successful_model_calls: turn_b
            .matched
            .iter()
            .filter(|i| is_successful(&calls[**i]))
            .count() as u64,
        model_call_errors: failed.len() as u64,
        errors_by_status,
        ended_on_error: ended_on_failed_call(calls),
        duplicated_calls: identities.values().filter(|n| **n > 1).map(|n| n - 1).sum(),
        transcript_prompt: tp,
        transcript_completion: tc,
        capture_prompt: calls.iter().map(|c| token(c.tokens.prompt_tokens)).sum(),
        capture_completion: calls
            .iter()
            .map(|c| token(c.tokens.completion_tokens))
            .sum(),
    }
}

/// A (stage, task, rollout) identity as dict keys compare.
type IdentityKey<'a> = (Option<IndexKey<'a>>, IndexKey<'a>, IndexKey<'a>);

fn identity(d: &Digest) -> IdentityKey<'_> {
    (
        d.stage.as_ref().map(Index::key),
        d.task.key(),
        d.rollout.key(),
    )
}

/// Records claiming the same (stage, task, rollout) identity: every copy gets a finding and
/// is unhealthy (upstream's `_mark_duplicate_identities`; the stage since v0.7.0).
pub(super) fn mark_duplicates(digests: &mut [Digest], ignored: &[String]) {
    const ID: &str = "rollout_duplicate_identity";
    if ignored.iter().any(|i| i == ID) {
        return;
    }
    // How many records claim each identity (a count, not a list: most identities are claimed
    // once, and a run keeps one entry per rollout here).
    let mut claims: crate::fast_map::FastMap<IdentityKey, u32> = Default::default();
    for d in digests.iter() {
        *claims.entry(identity(d)).or_default() += 1;
    }
    let copies: Vec<(usize, u32)> = digests
        .iter()
        .enumerate()
        .filter_map(|(i, d)| {
            let n = claims[&identity(d)];
            (n > 1).then_some((i, n))
        })
        .collect();
    drop(claims);
    for (i, n) in copies {
        let d = &mut digests[i];
        d.findings
            .push(Finding::new(ID, None, json!({ "duplicate_count": n })));
        d.verdict = "unhealthy";
    }
}
