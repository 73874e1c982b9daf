//! How much of each agent's rollouts the quality metrics were computed from, when some were
//! masked (NeMo Gym v0.7.0 `reward_profile.py` `coverage_by_agent`, `_coverage_metrics`). Agents
//! are keyed by their input rows' `agent_ref.name` (not the run labels); an agent that masked
//! nothing gets no coverage keys.

use super::labels::name_of;
use super::scan::InputRow;
use super::{AgentKey, RolloutRecord};
use crate::error::RolloutKey;
use crate::fast_map::FastMap;
use std::collections::HashSet;

/// The four `coverage/*` keys of an agent.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Coverage {
    pub measured_rollouts: usize,
    pub masked_rollouts: usize,
    /// Distinct tasks among the measured rollouts.
    pub measured_tasks: usize,
    /// Tasks whose every rollout was masked.
    pub fully_masked_tasks: usize,
}

#[derive(Default)]
struct Tally {
    measured: usize,
    masked: usize,
    tasks: HashSet<i64>,
    measured_tasks: HashSet<i64>,
}

/// Each agent with a masked rollout and its coverage, in the order its first result comes in
/// ascending key order. `rollouts`: every matched result, masked or not, ascending key.
pub(super) fn by_agent(
    inputs: &[InputRow],
    input_index: &FastMap<RolloutKey, u32>,
    rollouts: &[RolloutRecord],
) -> Vec<(AgentKey, Coverage)> {
    if !rollouts.iter().any(|r| r.masked) {
        return Vec::new();
    }
    let mut order: Vec<AgentKey> = Vec::new();
    let mut tallies: FastMap<AgentKey, Tally> = FastMap::default();
    for r in rollouts {
        let Some(&at) = input_index.get(&r.key) else {
            continue;
        };
        let Some(name) = name_of(&inputs[at as usize].agent) else {
            continue;
        };
        let tally = tallies.entry(name.clone()).or_insert_with(|| {
            order.push(name);
            Tally::default()
        });
        tally.tasks.insert(r.key.task);
        if r.masked {
            tally.masked += 1;
        } else {
            tally.measured += 1;
            tally.measured_tasks.insert(r.key.task);
        }
    }
    order
        .into_iter()
        .filter_map(|name| {
            let t = &tallies[&name];
            (t.masked > 0).then(|| {
                let coverage = Coverage {
                    measured_rollouts: t.measured,
                    masked_rollouts: t.masked,
                    measured_tasks: t.measured_tasks.len(),
                    fully_masked_tasks: t.tasks.len() - t.measured_tasks.len(),
                };
                (name, coverage)
            })
        })
        .collect()
}
