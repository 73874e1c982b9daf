//! Aggregate entries written before v0.7.0 carry no `repeat_level_metrics`: upstream's compare
//! recomputes them in memory from the entry's own `rollout_infos` (`_compute_repeat_metrics`,
//! v0.7.0 `nemo_gym/comparison/loading.py`), profiling those rows under one agent as a server's
//! default `/aggregate_metrics` would. So does this, with gymscope's profile.

use super::load::Entries;
use crate::output::profile_bytes;
use crate::profile::ProfileOptions;
use crate::render;
use serde_json::{json, Map, Value};

/// Gives every entry without `repeat_level_metrics` the repeat-level entries and the
/// across-repeats keys of its `rollout_infos` (its own agent metrics win where both have a
/// key). Returns whether any entry lacked them (upstream then warns).
pub fn complete_legacy_entries(entries: &mut Entries) -> Result<bool, String> {
    let mut any = false;
    for (name, entry) in entries.iter_mut() {
        if entry.contains_key("repeat_level_metrics") {
            continue;
        }
        any = true;
        *entry = with_repeat_metrics(entry).map_err(|e| format!("agent '{name}': {e}"))?;
    }
    Ok(any)
}

fn infos(entry: &Map<String, Value>) -> Vec<&Map<String, Value>> {
    entry
        .get("group_level_metrics")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|g| g.get("rollout_infos").and_then(Value::as_array))
        .flatten()
        .filter_map(Value::as_object)
        .collect()
}

/// The agent metrics and repeat-level entries of `rows` profiled as one agent.
fn profiled(rows: &[&Map<String, Value>]) -> Result<(Map<String, Value>, Vec<Value>), String> {
    if rows.is_empty() {
        return Ok((Map::new(), Vec::new()));
    }
    let (mut inputs, mut rollouts) = (Vec::new(), Vec::new());
    for row in rows {
        let key = |k: &str| row.get(k).cloned().unwrap_or(json!(0));
        let input = json!({"_ng_task_index": key("_ng_task_index"),
                           "_ng_rollout_index": key("_ng_rollout_index"),
                           "agent_ref": {"name": "agent"}});
        inputs.extend(input.to_string().bytes());
        inputs.push(b'\n');
        let mut result = (*row).clone();
        result.insert("agent_ref".into(), json!({"name": "agent"}));
        rollouts.extend(Value::Object(result).to_string().bytes());
        rollouts.push(b'\n');
    }
    let p = profile_bytes(
        &inputs,
        "rollout_infos",
        &rollouts,
        "rollout_infos",
        ProfileOptions::default(),
    )
    .map_err(|e| e.to_string())?;
    let mut agents = Vec::new();
    render::write_agent_metrics(&mut agents, &p).map_err(|e| e.to_string())?;
    let mut repeats = Vec::new();
    render::write_repeat_level_metrics(&mut repeats, &p).map_err(|e| e.to_string())?;
    let parse = |b: &[u8]| serde_json::from_slice::<Value>(b).map_err(|e| e.to_string());
    let without_ref = |v: &Value| {
        let mut m = v.as_object().cloned().unwrap_or_default();
        m.remove("agent_ref");
        m
    };
    let agent = parse(&agents)?
        .as_array()
        .and_then(|a| a.first())
        .map(without_ref)
        .unwrap_or_default();
    let repeats = parse(&repeats)?
        .as_array()
        .map(|a| a.iter().map(|r| Value::Object(without_ref(r))).collect())
        .unwrap_or_default();
    Ok((agent, repeats))
}

/// `entry | {"agent_metrics": computed | own | {"num_repeats": …}, "repeat_level_metrics": …}`.
fn with_repeat_metrics(entry: &Map<String, Value>) -> Result<Map<String, Value>, String> {
    let (mut metrics, repeats) = profiled(&infos(entry))?;
    if let Some(own) = entry.get("agent_metrics").and_then(Value::as_object) {
        for (k, v) in own {
            metrics.insert(k.clone(), v.clone());
        }
    }
    let groups = entry
        .get("group_level_metrics")
        .and_then(Value::as_array)
        .map_or(&[][..], Vec::as_slice);
    let num_repeats = super::load::num_repeats(groups, &repeats).map_or(Value::Null, Value::from);
    metrics.insert("num_repeats".into(), num_repeats);
    let mut out = entry.clone();
    out.insert("agent_metrics".into(), Value::Object(metrics));
    out.insert("repeat_level_metrics".into(), Value::Array(repeats));
    Ok(out)
}
