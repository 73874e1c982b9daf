//! A run's aggregate entries computed from its own profile, for a run that has no
//! `*_aggregate_metrics.json` (collected with `--disable-aggregation`, or by hand). Each agent's
//! entry is shaped as a v0.7.0 server's default answer (`compute_aggregate_metrics`,
//! `nemo_gym/reward_profile.py`): `agent_metrics` (its `*_agent_metrics.json` row without
//! `agent_ref`, plus `num_repeats`), `key_metrics` (its `mean/*` and `coverage/*`),
//! `group_level_metrics` (its `*_reward_profiling.jsonl` rows) and `repeat_level_metrics`.

use crate::profile::Profile;
use crate::render::{self, LineSource, RenderError};
use serde_json::{Map, Value};

fn agent_name(v: &Value) -> Option<String> {
    match v.get("agent_ref")?.get("name")? {
        Value::String(s) => Some(s.clone()),
        other => Some(other.to_string()),
    }
}

fn parse(bytes: &[u8]) -> Result<Value, RenderError> {
    serde_json::from_slice(bytes).map_err(|e| RenderError::Io(std::io::Error::other(e)))
}

/// The entries, one per agent of the profile in its order.
pub fn entries_from_profile(
    p: &Profile,
    inputs: &mut dyn LineSource,
    inputs_file: &str,
) -> Result<super::load::Entries, RenderError> {
    let mut agents_json = Vec::new();
    render::write_agent_metrics(&mut agents_json, p)?;
    let mut repeats_json = Vec::new();
    render::write_repeat_level_metrics(&mut repeats_json, p)?;
    let mut rows = Vec::new();
    render::write_task_rows(p, 0..p.tasks.len(), inputs, inputs_file, &mut rows)?;
    let agents = parse(&agents_json)?;
    let repeats = parse(&repeats_json)?;

    // A task row's agent: the fan-out row's own label, else the agent of its rollouts.
    let task_agent = |i: usize| -> Option<String> {
        let task = &p.tasks[i];
        task.agent
            .as_ref()
            .or_else(|| {
                p.rollout_agent
                    .get(task.rollouts.start)
                    .copied()
                    .flatten()
                    .map(|a| &p.agents[a].agent)
            })
            .map(|k| k.name.to_string())
    };
    let mut groups: Vec<(String, Vec<Value>)> = Vec::new();
    for (i, line) in rows
        .split(|b| *b == b'\n')
        .filter(|l| !l.is_empty())
        .enumerate()
    {
        let mut row = parse(line)?;
        if let Value::Object(m) = &mut row {
            m.remove("agent_ref");
        }
        let name = task_agent(i).unwrap_or_default();
        match groups.iter_mut().find(|(n, _)| *n == name) {
            Some((_, v)) => v.push(row),
            None => groups.push((name, vec![row])),
        }
    }
    let mut out = Vec::new();
    for agent in agents.as_array().into_iter().flatten() {
        let Some(name) = agent_name(agent) else {
            continue;
        };
        let mut metrics = agent.as_object().cloned().unwrap_or_default();
        metrics.remove("agent_ref");
        let group_rows = groups
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.clone())
            .unwrap_or_default();
        let num_repeats = group_rows
            .iter()
            .filter_map(|g| g.get("expected_num_rollouts").and_then(Value::as_i64))
            .max()
            .unwrap_or(0);
        metrics.insert("num_repeats".into(), num_repeats.into());
        let key_metrics: Map<String, Value> = metrics
            .iter()
            .filter(|(k, _)| k.starts_with("mean/") || k.starts_with("coverage/"))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        let repeat_rows: Vec<Value> = repeats
            .as_array()
            .into_iter()
            .flatten()
            .filter(|r| agent_name(r).as_deref() == Some(name.as_str()))
            .map(|r| {
                let mut r = r.as_object().cloned().unwrap_or_default();
                r.remove("agent_ref");
                Value::Object(r)
            })
            .collect();
        let mut entry = Map::new();
        let mut agent_ref = Map::new();
        agent_ref.insert("name".into(), name.clone().into());
        entry.insert("agent_ref".into(), Value::Object(agent_ref));
        entry.insert("agent_metrics".into(), Value::Object(metrics));
        entry.insert("key_metrics".into(), Value::Object(key_metrics));
        entry.insert("group_level_metrics".into(), group_rows.into());
        entry.insert("repeat_level_metrics".into(), repeat_rows.into());
        out.push((name, entry));
    }
    Ok(out)
}
