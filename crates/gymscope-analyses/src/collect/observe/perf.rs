//! `ng_perf`: per-rollout performance figures from the built trajectory.

use crate::collect::Row;
use crate::gym::keys::TRAJECTORY;
use crate::gym::trajectory::dump;
use serde_json::{Map, Value};

/// Upstream's `_build_ng_perf` (v0.6-era `rollout_collection.py`): per-rollout turns, tool
/// calls, the share of turns whose call resolved, token sums over the calls the invocations own
/// (each call once), and the collector's wall time of the `/run`. `None` without a valid
/// trajectory with invocations.
pub fn ng_perf(result: &Row, latency_ms: Option<f64>) -> Option<Value> {
    let raw = result.get(TRAJECTORY)?;
    let c = dump::trajectory(raw).ok()?;
    if c.invocations.is_empty() {
        return None;
    }
    let calls = &c.model_calls;
    let meta = |i: usize| &calls[i]["response_metadata"];
    let match_ref = |r: &Value| -> Option<usize> {
        let id = r["model_call_id"].as_str().filter(|s| !s.is_empty());
        let candidates: Vec<usize> = if let Some(id) = id {
            (0..calls.len())
                .filter(|i| calls[*i]["model_call_id"].as_str() == Some(id))
                .filter(|i| r["model_ref"].is_null() || r["model_ref"] == meta(*i)["model_ref"])
                .filter(|i| {
                    r["response_id"].is_null() || r["response_id"] == meta(*i)["response_id"]
                })
                .collect()
        } else if !r["model_ref"].is_null()
            && r["response_id"].as_str().is_some_and(|s| !s.is_empty())
        {
            (0..calls.len())
                .filter(|i| {
                    !meta(*i)["model_ref"].is_null()
                        && meta(*i)["model_ref"] == r["model_ref"]
                        && meta(*i)["response_id"] == r["response_id"]
                })
                .collect()
        } else {
            Vec::new()
        };
        (candidates.len() == 1).then(|| candidates[0])
    };
    let mut seen = Vec::new();
    let mut owned_by_invocation: Vec<(String, u64)> = Vec::new();
    for inv in &c.invocations {
        let id = inv["invocation_id"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        let mut n = 0;
        for r in inv["model_calls"].as_array().into_iter().flatten() {
            if let Some(i) = match_ref(r).filter(|i| !seen.contains(i)) {
                seen.push(i);
                n += 1;
            }
        }
        owned_by_invocation.push((id, n));
    }
    let count_of = |items: &[Value], id: &str| {
        items
            .iter()
            .filter(|t| t["invocation_id"].as_str() == Some(id))
            .count() as u64
    };
    let num_tool_calls: u64 = owned_by_invocation
        .iter()
        .map(|(id, _)| count_of(&c.tool_calls, id))
        .sum();
    let num_turns: u64 = owned_by_invocation
        .iter()
        .map(|(id, owned)| match count_of(&c.turns, id) {
            0 if *owned > 0 => *owned,
            0 => 1,
            n => n,
        })
        .sum();
    let mut perf = Map::new();
    perf.insert("num_turns".into(), Value::from(num_turns));
    perf.insert("num_tool_calls".into(), Value::from(num_tool_calls));
    perf.insert(
        "token_observability_coverage".into(),
        Value::from((seen.len() as f64 / num_turns as f64).min(1.0)),
    );
    for (key, stat) in [
        ("prompt_tokens", "prompt_tokens"),
        ("cached_prompt_tokens", "cached_tokens"),
        ("completion_tokens", "completion_tokens"),
        ("reasoning_tokens", "reasoning_tokens"),
    ] {
        let vals: Vec<i64> = seen
            .iter()
            .filter_map(|i| calls[*i]["token_stats"][stat].as_i64())
            .collect();
        if !vals.is_empty() {
            perf.insert(key.into(), Value::from(vals.iter().sum::<i64>()));
        }
    }
    if let Some(ms) = latency_ms {
        perf.insert("total_latency_ms".into(), Value::from(ms));
    }
    Some(Value::Object(perf))
}
