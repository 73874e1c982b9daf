//! The `ng_trajectory` projection: upstream's `_build_trajectory_record`
//! (`nemo_gym/rollout_collection.py` @07d6b0d) from the producer's trajectory, the agent's
//! observations and the calls of the result's `ng_model_call_capture`, in upstream's steps.

use super::capture::{gap, py_str, rollout_id};
use crate::collect::observations;
use crate::collect::Row;
use crate::gym::keys::{CAPTURE, OBSERVATIONS, TASK_INDEX, TRAJECTORY};
use crate::gym::trajectory::{self, dump};
use serde_json::{Map, Value};

/// The trajectory's task id: `task_id`, `problem_id` or `instance_id` of the row, else its
/// task index, as text.
pub(super) fn task_id(row: &Row) -> String {
    ["task_id", "problem_id", "instance_id"]
        .iter()
        .find_map(|k| row.get(*k).filter(|v| !v.is_null()).map(py_str))
        .unwrap_or_else(|| row.get(TASK_INDEX).map_or_else(|| "None".into(), py_str))
}

/// The record being built: its lists in their dumped form, and the gaps met so far.
#[derive(Default)]
struct Parts {
    invocations: Vec<Value>,
    turns: Vec<Value>,
    model_calls: Vec<Value>,
    tool_calls: Vec<Value>,
    gaps: Vec<Value>,
}

/// Upstream's `_build_trajectory_record`: the producer's trajectory, then the agent's
/// observations, then the calls of the result's `ng_model_call_capture` projected, then the
/// gaps; the record must validate as a `TrajectoryRecord`.
pub(super) fn build(row: &Row, result: &Row) -> Result<Value, String> {
    let tid = task_id(row);
    let rid = rollout_id(row)?.ok_or("KeyError: the row has no rollout indices")?;
    let mut parts = Parts::default();
    if let Some(raw) = result.get(TRAJECTORY).filter(|v| v.is_object()) {
        parts.take_producer_trajectory(raw, &tid, &rid);
    }
    if let Some(raw) = result.get(OBSERVATIONS).filter(|v| !v.is_null()) {
        parts.fold_observations(raw);
    }
    sort_turns(&mut parts.turns);
    parts.merge_captured_calls(&captured_calls(result))?;
    parts.add_capture_gaps(result);
    parts.add_unavailable_gaps();
    let record = parts.into_record(&tid, &rid);
    trajectory::validate(&record).map_err(|e| format!("ValidationError: {e}"))?;
    Ok(record)
}

/// The calls of the result's `ng_model_call_capture`.
fn captured_calls(result: &Row) -> Vec<&Map<String, Value>> {
    result
        .get(CAPTURE)
        .and_then(|c| c.get("calls"))
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_object).collect())
        .unwrap_or_default()
}

/// Turns in a stable sort by (timestamp, invocation id, turn number).
fn sort_turns(turns: &mut [Value]) {
    turns.sort_by(|a, b| {
        let f = |t: &Value| t["timestamp"].as_f64().unwrap_or(0.0);
        f(a).total_cmp(&f(b))
            .then_with(|| {
                a["invocation_id"]
                    .as_str()
                    .cmp(&b["invocation_id"].as_str())
            })
            .then_with(|| a["turn_no"].as_i64().cmp(&b["turn_no"].as_i64()))
    });
}

impl Parts {
    /// The producer's trajectory as the base: its parts dumped, its turns re-stamped with the
    /// row's ids when they differ (a `producer_trajectory_identity_mismatch` gap naming the
    /// fields), or a `producer_trajectory_invalid` gap when it does not validate.
    fn take_producer_trajectory(&mut self, raw: &Value, tid: &str, rid: &str) {
        let Ok(c) = dump::trajectory(raw) else {
            self.gaps.push(gap(
                "producer_trajectory_invalid",
                Some("ValidationError".into()),
            ));
            return;
        };
        let mismatches: Vec<&str> = [
            ("task_id", c.task_id.as_str(), tid),
            ("rollout_id", c.rollout_id.as_str(), rid),
        ]
        .into_iter()
        .filter(|(_, a, b)| a != b)
        .map(|(f, _, _)| f)
        .collect();
        self.turns = c.turns;
        if !mismatches.is_empty() {
            self.gaps.push(gap(
                "producer_trajectory_identity_mismatch",
                Some(mismatches.join(",")),
            ));
            for t in &mut self.turns {
                t["task_id"] = Value::from(tid);
                t["rollout_id"] = Value::from(rid);
            }
        }
        self.gaps.extend(c.gaps);
        self.invocations = c.invocations;
        self.tool_calls = c.tool_calls;
        self.model_calls = c.model_calls;
    }

    /// The agent's observations folded in ([`observations::merge_into`]), or an
    /// `agent_observations_invalid` gap.
    fn fold_observations(&mut self, raw: &Value) {
        let merged = observations::validate(raw).and_then(|bundle| {
            observations::merge_into(
                bundle,
                &mut self.gaps,
                &mut self.invocations,
                &mut self.tool_calls,
            )
        });
        if merged.is_err() {
            self.gaps.push(gap(
                "agent_observations_invalid",
                Some("ValidationError".into()),
            ));
        }
    }

    /// Each captured call projected as a trajectory model call; a producer call with the same
    /// `model_call_id` (each claimed once, first first) is merged, capture values winning where
    /// they are not null.
    fn merge_captured_calls(&mut self, calls: &[&Map<String, Value>]) -> Result<(), String> {
        let mut positions: Vec<(String, usize)> = self
            .model_calls
            .iter()
            .enumerate()
            .filter_map(|(i, c)| c["model_call_id"].as_str().map(|id| (id.to_string(), i)))
            .collect();
        for raw in calls {
            let projected = project_call(raw)?;
            let position = raw
                .get("model_call_id")
                .and_then(Value::as_str)
                .and_then(|id| positions.iter().position(|(p, _)| p == id))
                .map(|i| positions.remove(i).1);
            match position {
                None => self.model_calls.push(projected),
                Some(p) => merge_call(&mut self.model_calls[p], &projected),
            }
        }
        Ok(())
    }

    /// The capture's own gaps (dumped; one without a string code is
    /// `model_call_capture_gap_invalid`).
    fn add_capture_gaps(&mut self, result: &Row) {
        if let Some(cg) = result
            .get(CAPTURE)
            .and_then(|c| c.get("gaps"))
            .and_then(Value::as_array)
        {
            for g in cg.iter().filter_map(Value::as_object) {
                self.gaps
                    .push(if g.get("code").is_some_and(Value::is_string) {
                        dump::gap(g)
                    } else {
                        gap("model_call_capture_gap_invalid", None)
                    });
            }
        }
    }

    /// `model_calls_unavailable`, `turns_unavailable`, `conversation_unavailable` for the
    /// evidence that is empty.
    fn add_unavailable_gaps(&mut self) {
        if self.model_calls.is_empty() {
            self.gaps.push(gap("model_calls_unavailable", None));
        }
        if self.turns.is_empty() {
            self.gaps.push(gap("turns_unavailable", None));
        }
        if !self
            .invocations
            .iter()
            .any(|i| i["conversation"].as_array().is_some_and(|c| !c.is_empty()))
        {
            self.gaps.push(gap("conversation_unavailable", None));
        }
    }

    /// The record, every gap in its dumped form and de-duplicated on (code, invocation,
    /// detail), first kept.
    fn into_record(self, tid: &str, rid: &str) -> Value {
        let unique = observations::unique_gaps(
            self.gaps
                .iter()
                .filter_map(Value::as_object)
                .map(dump::gap)
                .collect(),
        );
        serde_json::json!({
            "schema_version": "1.0",
            "task_id": tid,
            "rollout_id": rid,
            "invocations": self.invocations,
            "turns": self.turns,
            "model_calls": self.model_calls,
            "tool_calls": self.tool_calls,
            "gaps": unique,
        })
    }
}

/// One captured call (`ModelCallRecord`) as a trajectory model call, dumped: its metadata, its
/// token counts renamed, latency as `duration_ms`, the payloads (or their raw text).
fn project_call(raw: &Map<String, Value>) -> Result<Value, String> {
    let mut meta = Map::new();
    for k in trajectory::CALL_META_KEYS {
        if let Some(v) = raw.get(k).filter(|v| !v.is_null()) {
            meta.insert(k.into(), v.clone());
        }
    }
    if let Some(Value::String(s)) = raw.get("response").and_then(|r| r.get("status")) {
        meta.entry("response_status")
            .or_insert_with(|| Value::from(s.as_str()));
    }
    let nn = |k: &str| {
        raw.get(k)
            .and_then(Value::as_i64)
            .filter(|n| *n >= 0)
            .map_or(Value::Null, Value::from)
    };
    let mut tokens = Map::new();
    tokens.insert("prompt_tokens".into(), nn("tokens_in"));
    tokens.insert("completion_tokens".into(), nn("tokens_out"));
    tokens.insert("reasoning_tokens".into(), nn("tokens_reasoning"));
    tokens.insert("total_tokens".into(), nn("tokens_total"));
    tokens.insert("cached_tokens".into(), nn("cached_tokens"));
    let pick = |a: &str, b: &str| {
        raw.get(a)
            .filter(|v| !v.is_null())
            .or_else(|| raw.get(b))
            .cloned()
            .unwrap_or(Value::Null)
    };
    let mut projected = Map::new();
    projected.insert(
        "model_call_id".into(),
        raw.get("model_call_id").cloned().unwrap_or(Value::Null),
    );
    projected.insert(
        "started_at".into(),
        raw.get("started_at").cloned().unwrap_or(Value::Null),
    );
    projected.insert(
        "completed_at".into(),
        raw.get("completed_at").cloned().unwrap_or(Value::Null),
    );
    projected.insert(
        "duration_ms".into(),
        raw.get("latency_total_ms").cloned().unwrap_or(Value::Null),
    );
    projected.insert("request".into(), pick("request", "request_raw"));
    projected.insert("response".into(), pick("response", "response_raw"));
    projected.insert("response_metadata".into(), Value::Object(meta));
    projected.insert("token_stats".into(), Value::Object(tokens));
    if projected["duration_ms"].as_f64().is_some_and(|d| d < 0.0) {
        return Err("ValidationError: a captured call has a negative duration".into());
    }
    Ok(dump::model_call(&projected))
}

/// A producer's model call with the captured one merged in: capture values win where they are
/// not null, inside `response_metadata` and `token_stats` field by field; both dumped again.
fn merge_call(merged: &mut Value, projected: &Value) {
    for (k, v) in projected.as_object().into_iter().flatten() {
        match (k.as_str(), v) {
            ("response_metadata" | "token_stats", Value::Object(inner)) => {
                for (ik, iv) in inner.iter().filter(|(_, v)| !v.is_null()) {
                    merged[k][ik] = iv.clone();
                }
            }
            (_, Value::Null) => {}
            _ => merged[k] = v.clone(),
        }
    }
    let empty = Map::new();
    merged["response_metadata"] =
        dump::response_metadata(merged["response_metadata"].as_object().unwrap_or(&empty));
    merged["token_stats"] = dump::token_stats(merged["token_stats"].as_object().unwrap_or(&empty));
}
