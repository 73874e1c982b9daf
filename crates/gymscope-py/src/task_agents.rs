//! Each task's agent, as `*_reward_profiling.jsonl` names it: a fan-out run's row label, else its
//! sample's `agent_ref.name` (NeMo Gym v0.7.0 writes the materialized input as `sample`). The
//! profile keeps only the label, so `Profile.tasks.agent` was null outside fan-out runs (issue 57);
//! the rollouts' own agents differ from it where a row's `agent_name` overrides its agent.

use gymscope::profile::Profile;
use gymscope::render::{LineSource, SeekSource};
use serde::Deserialize;
use std::fs::File;
use std::path::Path;

#[derive(Deserialize)]
struct Sample {
    agent_ref: Option<AgentRef>,
}

#[derive(Deserialize)]
struct AgentRef {
    name: Option<serde_json::Value>,
}

/// One entry per task of `p`, read from `inputs` (one line per task without a label).
pub fn task_agents(p: &Profile, inputs: &Path) -> anyhow::Result<Vec<Option<String>>> {
    let mut source = None;
    p.tasks
        .iter()
        .map(|t| {
            if let Some(label) = &t.agent {
                return Ok(Some(label.name.to_string()));
            }
            let source = match &mut source {
                Some(s) => s,
                None => source.insert(SeekSource(File::open(inputs)?)),
            };
            Ok(agent_of(&source.read_span(t.sample)?))
        })
        .collect()
}

/// The sample's `agent_ref.name` (a number as its JSON text); `None` when it has none.
fn agent_of(line: &[u8]) -> Option<String> {
    let sample: Sample = serde_json::from_slice(line).ok()?;
    match sample.agent_ref?.name? {
        serde_json::Value::String(s) => Some(s),
        serde_json::Value::Null => None,
        other => Some(other.to_string()),
    }
}
