//! Model-call capture and `ng_trajectory`, as upstream's collector does it
//! (`nemo_gym/rollout_collection.py`, `nemo_gym/base_responses_api_model.py`,
//! `nemo_gym/rollout_correlation.py` @07d6b0d; docs/collect.md "Observability"). Plain data in, plain
//! data out: the native side reads the capture file and hands its lines here.
//!
//! - [`capture`]: the capture key of a request row ([`rollout_id`]), one captured exchange →
//!   upstream's `ModelCallRecord` ([`call_record`]), `ng_model_call_capture` ([`attachment`]);
//! - [`projection`]: the `ng_trajectory` built from the agent's trajectory, its observations
//!   and the captured calls;
//! - [`perf`]: `ng_perf` ([`ng_perf`]);
//! - here, [`attach_evidence`]: the evidence step of a result, which runs them in upstream's
//!   order and removes the payloads from the capture's calls once the trajectory holds them.
//!
//! `ng_agent_observations` (harness agents) are validated, joined and folded in by
//! [`super::observations`]. Not reproduced: conversation items are kept as written.

pub mod capture;
pub mod perf;
pub mod projection;

pub use capture::{attachment, call_record, capture_file_names, rollout_id, CaptureRead};
pub use perf::ng_perf;

use super::claude_compaction;
use super::observations;
use super::Row;
use crate::gym::keys::{CAPTURE, OBSERVATIONS, TRAJECTORY};
use crate::gym::trajectory::dump;
use capture::{gap, PAYLOAD_KEYS};
use projection::{build, task_id};
use serde_json::{Map, Value};

/// Whether the result's trajectory or observations carry a gap with this code.
fn has_gap(result: &Row, code: &str) -> bool {
    [TRAJECTORY, OBSERVATIONS].iter().any(|k| {
        result
            .get(*k)
            .and_then(|o| o.get("gaps"))
            .and_then(Value::as_array)
            .is_some_and(|g| {
                g.iter()
                    .any(|g| g.get("code").and_then(Value::as_str) == Some(code))
            })
    })
}

/// With the capture built (its calls still holding their payloads): the agent's observations
/// joined with the captured calls (Claude Code's compaction summary calls first) and written
/// back in their dumped form, or an `agent_observation_join_failed` capture gap when they are
/// invalid (left as returned; the projection then reports them).
fn join_observations(result: &mut Row, capture: &mut Value) {
    let Some(raw) = result.get(OBSERVATIONS).filter(|v| !v.is_null()) else {
        return;
    };
    match observations::validate(raw) {
        Ok(mut bundle) => {
            let calls: Vec<&Map<String, Value>> = capture
                .get("calls")
                .and_then(Value::as_array)
                .map(|a| a.iter().filter_map(Value::as_object).collect())
                .unwrap_or_default();
            if claude_compaction::associate(&mut bundle, &calls).is_err() {
                bundle.gaps.push(serde_json::json!({
                    "code": "compaction_model_call_join_failed", "invocation_id": null, "detail": null
                }));
            }
            observations::join(&mut bundle, &calls);
            result.insert(OBSERVATIONS.into(), bundle.dump());
        }
        Err(_) => {
            if let Value::Object(c) = capture {
                if let Value::Array(g) = c.entry("gaps").or_insert_with(|| Value::Array(vec![])) {
                    g.push(gap("agent_observation_join_failed", None));
                }
            }
        }
    }
}

/// Removes the `request`/`response` copies from the capture's calls.
fn strip_payloads(capture: &mut Value) {
    if let Some(calls) = capture.get_mut("calls").and_then(Value::as_array_mut) {
        for c in calls.iter_mut().filter_map(Value::as_object_mut) {
            for k in PAYLOAD_KEYS {
                c.shift_remove(k);
            }
        }
    }
}

/// Upstream's evidence step for a result, once the row's keys are merged: with `capture`
/// (observability on) `ng_model_call_capture` is attached first; then, when the result has
/// any evidence, the canonical `ng_trajectory` replaces the agent's and the capture's calls
/// lose their payloads (kept, with a `trajectory_projection_failed` gap, when it fails).
pub fn attach_evidence(row: &Row, result: &mut Row, capture: Option<&CaptureRead>) {
    if let Some(read) = capture {
        if let Ok(Some(id)) = rollout_id(result) {
            // The join reads the payloads (Claude Code's summary calls) even when the row
            // keeps none, as upstream's in-memory records hold them.
            let payloads = !has_gap(result, "multimodal_history_redacted");
            let mut capture = attachment(&id, read, true);
            join_observations(result, &mut capture);
            if !payloads {
                strip_payloads(&mut capture);
            }
            result.insert(CAPTURE.into(), capture);
        }
    }
    if ![CAPTURE, OBSERVATIONS, TRAJECTORY]
        .iter()
        .any(|k| result.contains_key(*k))
    {
        return;
    }
    match build(row, result) {
        Ok(t) => {
            result.insert(TRAJECTORY.into(), t);
        }
        Err(e) => {
            result.shift_remove(TRAJECTORY);
            // Upstream records the exception's class name.
            let name = ["ValidationError", "KeyError"]
                .into_iter()
                .find(|n| e.starts_with(n))
                .unwrap_or("ValueError");
            let g = gap("trajectory_projection_failed", Some(name.into()));
            // Payloads stay on the capture's calls as the fallback.
            let target = [CAPTURE, OBSERVATIONS]
                .into_iter()
                .find(|k| result.get(*k).is_some_and(Value::is_object));
            let mut attached = false;
            if let Some(t) = target
                .and_then(|k| result.get_mut(k))
                .and_then(Value::as_object_mut)
            {
                if let Value::Array(a) = t.entry("gaps").or_insert_with(|| Value::Array(vec![])) {
                    a.push(g.clone());
                    attached = true;
                }
            }
            if !attached {
                let tid = task_id(row);
                let rid = rollout_id(row).ok().flatten().unwrap_or_default();
                let empty = Map::new();
                result.insert(
                    TRAJECTORY.into(),
                    serde_json::json!({"schema_version": "1.0", "task_id": tid,
                        "rollout_id": rid, "invocations": [], "turns": [], "model_calls": [], "tool_calls": [],
                        "gaps": [dump::gap(g.as_object().unwrap_or(&empty))]}),
                );
            }
            return;
        }
    }
    // The trajectory now holds the payloads: drop the capture's copies.
    if let Some(capture) = result.get_mut(CAPTURE) {
        strip_payloads(capture);
    }
}

#[cfg(test)]
mod tests;
