//! One rollout row read once, as deep as the health signals look: the rollout key, the agent,
//! the reward, `response` (status, output items, usage) and, when present, `ng_trajectory`'s
//! gaps and tool-call statuses. Text is borrowed where it has no escapes; everything else in the
//! row (prompts, verifier fields) is validated and skipped, never stored.

use serde::Deserialize;
use serde_json::value::RawValue;
use std::borrow::Cow;

/// A JSON value's text, borrowed from the line: read by serde as a `RawValue` (validated and
/// skipped) or cut out by the skimming reader (`fast`), and parsed only where a signal needs it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Raw<'a>(pub &'a str);

impl<'de: 'a, 'a> Deserialize<'de> for Raw<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        <&'de RawValue>::deserialize(d).map(|raw| Raw(raw.get()))
    }
}

#[derive(Deserialize, Debug, PartialEq)]
pub(super) struct Row<'a> {
    #[serde(rename = "_ng_task_index", default)]
    pub task: Option<serde_json::Value>,
    #[serde(rename = "_ng_rollout_index", default)]
    pub rollout: Option<serde_json::Value>,
    /// A multi-stage driver's stage (v0.7.0): rows of one rollout differ by it.
    #[serde(rename = "stage_index", default)]
    pub stage: Option<serde_json::Value>,
    #[serde(default)]
    pub reward: Option<serde_json::Value>,
    #[serde(borrow, default)]
    pub agent_ref: Option<AgentRef<'a>>,
    #[serde(borrow, default)]
    pub response: Option<Response<'a>>,
    #[serde(borrow, default)]
    pub ng_trajectory: Option<Raw<'a>>,
    /// Present on a pivot row (`mode`): only whether it is there matters.
    #[serde(borrow, default)]
    pub expected_action: Option<Raw<'a>>,
}

#[derive(Deserialize, Debug, PartialEq)]
pub(super) struct AgentRef<'a> {
    #[serde(borrow, default)]
    pub name: Option<Cow<'a, str>>,
}

#[derive(Deserialize, Debug, PartialEq)]
pub(super) struct Response<'a> {
    #[serde(borrow, default)]
    pub status: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    pub incomplete_details: Option<IncompleteDetails<'a>>,
    #[serde(borrow, default)]
    pub output: Option<Vec<Item<'a>>>,
    #[serde(default)]
    pub usage: Option<Usage>,
}

#[derive(Deserialize, Debug, PartialEq)]
pub(super) struct IncompleteDetails<'a> {
    #[serde(borrow, default)]
    pub reason: Option<Cow<'a, str>>,
}

/// One `response.output[]` item; `content`, `arguments` and `output` are kept raw and read only
/// where a signal needs them.
#[derive(Deserialize, Debug, PartialEq)]
pub(super) struct Item<'a> {
    #[serde(rename = "type", borrow, default)]
    pub kind: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    pub role: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    pub content: Option<Raw<'a>>,
    #[serde(borrow, default)]
    pub name: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    pub arguments: Option<Raw<'a>>,
    #[serde(borrow, default)]
    pub call_id: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    pub output: Option<Raw<'a>>,
}

#[derive(Deserialize, Default, Debug, PartialEq)]
pub(super) struct Usage {
    #[serde(default)]
    pub input_tokens: Option<f64>,
    #[serde(default)]
    pub output_tokens: Option<f64>,
    #[serde(default)]
    pub total_tokens: Option<f64>,
    #[serde(default)]
    pub input_tokens_details: Option<CachedDetails>,
    #[serde(default)]
    pub output_tokens_details: Option<ReasoningDetails>,
}

#[derive(Deserialize, Default, Debug, PartialEq)]
pub(super) struct CachedDetails {
    #[serde(default)]
    pub cached_tokens: Option<f64>,
}

#[derive(Deserialize, Default, Debug, PartialEq)]
pub(super) struct ReasoningDetails {
    #[serde(default)]
    pub reasoning_tokens: Option<f64>,
}

/// A row of the materialized inputs or the failures file: the rollout key, the agent, the
/// failure class.
#[derive(Deserialize, Debug, PartialEq)]
pub(super) struct KeyRow<'a> {
    #[serde(rename = "_ng_task_index", default)]
    pub task: Option<serde_json::Value>,
    #[serde(rename = "_ng_rollout_index", default)]
    pub rollout: Option<serde_json::Value>,
    #[serde(borrow, default)]
    pub agent_ref: Option<Raw<'a>>,
    /// `_ng_environment_server`: a materialized row's run key (NeMo Gym v0.7.0).
    #[serde(rename = "_ng_environment_server", borrow, default)]
    pub server: Option<Raw<'a>>,
    #[serde(rename = "_ng_failure_class", default)]
    pub class: Option<serde_json::Value>,
    #[serde(borrow, default)]
    pub expected_action: Option<Raw<'a>>,
}

/// The part of `ng_trajectory` shown beside the behavioural signals (read leniently: a
/// trajectory that does not have this shape is counted as unreadable, not an error).
#[derive(Deserialize)]
pub(super) struct Trajectory<'a> {
    #[serde(borrow, default)]
    pub gaps: Option<Vec<Gap<'a>>>,
    #[serde(borrow, default)]
    pub tool_calls: Option<Vec<TrajectoryTool<'a>>>,
    #[serde(default)]
    pub turns: Option<Vec<serde::de::IgnoredAny>>,
}

#[derive(Deserialize)]
pub(super) struct Gap<'a> {
    #[serde(borrow)]
    pub code: Cow<'a, str>,
}

#[derive(Deserialize)]
pub(super) struct TrajectoryTool<'a> {
    #[serde(borrow, default)]
    pub status: Option<Cow<'a, str>>,
}

/// Why a row could not be read, naming the field where its shape is wrong. Called only after
/// the fast typed parse failed, so it may take its time.
pub(super) fn diagnose(line: &[u8]) -> String {
    let value: serde_json::Value = match serde_json::from_slice(line) {
        Ok(v) => v,
        Err(e) => return format!("column {}: not valid JSON ({e})", e.column()),
    };
    let Some(row) = value.as_object() else {
        return "the row is not a JSON object".to_string();
    };
    let object_or_null =
        |v: Option<&serde_json::Value>| v.is_none_or(|v| v.is_object() || v.is_null());
    if !object_or_null(row.get("agent_ref")) {
        return "field `agent_ref` is not an object".to_string();
    }
    if let Some(name) = row.get("agent_ref").and_then(|a| a.get("name")) {
        if !(name.is_string() || name.is_null()) {
            return "field `agent_ref.name` is not a string".to_string();
        }
    }
    let Some(response) = row.get("response").filter(|r| !r.is_null()) else {
        return "unexpected shape".to_string();
    };
    if !response.is_object() {
        return "field `response` is not an object".to_string();
    }
    for key in ["status"] {
        if response
            .get(key)
            .is_some_and(|v| !(v.is_string() || v.is_null()))
        {
            return format!("field `response.{key}` is not a string");
        }
    }
    if !object_or_null(response.get("incomplete_details")) {
        return "field `response.incomplete_details` is not an object".to_string();
    }
    if !object_or_null(response.get("usage")) {
        return "field `response.usage` is not an object".to_string();
    }
    if let Some(usage) = response.get("usage").and_then(|u| u.as_object()) {
        for (k, v) in usage {
            let bad = match k.as_str() {
                "input_tokens" | "output_tokens" | "total_tokens" => {
                    !(v.is_number() || v.is_null())
                }
                "input_tokens_details" | "output_tokens_details" => !(v.is_object() || v.is_null()),
                _ => false,
            };
            if bad {
                return format!("field `response.usage.{k}` has the wrong type");
            }
        }
    }
    match response.get("output") {
        Some(serde_json::Value::Array(items)) => {
            for (i, item) in items.iter().enumerate() {
                let Some(item) = item.as_object() else {
                    return format!("field `response.output[{i}]` is not an object");
                };
                for key in ["type", "role", "name", "call_id"] {
                    if item
                        .get(key)
                        .is_some_and(|v| !(v.is_string() || v.is_null()))
                    {
                        return format!("field `response.output[{i}].{key}` is not a string");
                    }
                }
            }
        }
        Some(serde_json::Value::Null) | None => {}
        Some(_) => return "field `response.output` is not a list".to_string(),
    }
    "unexpected shape".to_string()
}

/// The reward as a number: numbers, booleans as 0/1 ([`crate::reward_group::reward_value`]).
pub(super) fn reward(value: Option<&serde_json::Value>) -> Option<f64> {
    value.and_then(crate::reward_group::reward_value)
}

/// An index field as an integer (`None` when absent, `Err` when present but not an integer).
pub(super) fn index(value: Option<&serde_json::Value>) -> Result<Option<i64>, ()> {
    match value {
        None => Ok(None),
        Some(v) => v.as_i64().map(Some).ok_or(()),
    }
}
