//! A rollout row's key, agent and reward by skimming (`crate::skim`: the row validated at
//! `memchr` speed, only those four values decoded), for a query over a large run; `None` when
//! unsure (a repeated or escaped key, an index that is not a plain integer, a shape kept simple
//! here), and the profile's reader then reads the line, with its errors.
//!
//! Measured (`cargo bench --bench query`, 100,000 agentic rollouts): the profile's reader, which
//! also reads every numeric field and `response.usage`, gave 850 MB/s a thread.

use super::KeyedRow;
use crate::skim;
use serde_json::Value;

pub(super) fn skim_keyed(line: &[u8]) -> Option<KeyedRow> {
    let text = simdutf8::basic::from_utf8(line).ok()?;
    if skim::has_control_bytes(line) {
        return None;
    }
    let (mut task, mut rollout, mut agent, mut reward) = (None, None, None, None);
    let mut seen = 0u8;
    let mut once = |bit: u8| {
        let fresh = seen & bit == 0;
        seen |= bit;
        fresh.then_some(())
    };
    let end = skim::members(text, skim::skip_ws(line, 0), |name, at| {
        let end = skim::value_end(line, at)?;
        let value = &text[at..end];
        match name {
            "_ng_task_index" => {
                once(1)?;
                task = Some(integer(value)?);
            }
            "_ng_rollout_index" => {
                once(2)?;
                rollout = Some(integer(value)?);
            }
            "reward" => {
                once(4)?;
                reward = Some(serde_json::from_str::<Value>(value).ok()?);
            }
            "agent_ref" => {
                once(8)?;
                agent = agent_name(value)?;
            }
            _ => {}
        }
        Some(end)
    })?;
    if skim::skip_ws(line, end) != line.len() {
        return None;
    }
    Some(KeyedRow {
        key: (task?, rollout?),
        agent,
        reward,
    })
}

/// A plain integer literal (`-0` and anything else left to the profile's reader).
fn integer(v: &str) -> Option<i64> {
    let digits = v.strip_prefix('-').unwrap_or(v);
    let plain = !digits.is_empty()
        && digits.bytes().all(|b| b.is_ascii_digit())
        && (digits == "0" || !digits.starts_with('0'))
        && v != "-0";
    plain.then(|| v.parse().ok()).flatten()
}

/// `agent_ref.name` when `agent_ref` is an object whose `name` is a string; `Some(None)` for an
/// object without one or null; `None` (unsure) for anything else.
#[allow(clippy::option_option)] // outer `None`: unsure (the profile's reader decides)
fn agent_name(v: &str) -> Option<Option<String>> {
    #[derive(serde::Deserialize)]
    struct AgentRef {
        #[serde(default)]
        name: Option<Value>,
    }
    if v == "null" {
        return Some(None);
    }
    if !v.starts_with('{') {
        return None;
    }
    let a: AgentRef = serde_json::from_str(v).ok()?;
    match a.name {
        Some(Value::String(s)) => Some(Some(s)),
        None | Some(Value::Null) => Some(None),
        Some(_) => None,
    }
}
