//! `*_repeat_level_metrics.json` and the `*_across_repeats/*` keys of `*_agent_metrics.json`
//! (NeMo Gym v0.7.0 `reward_profile.py` `_compute_repeat_level_metrics`,
//! `_aggregate_repeat_level_metrics`): for each agent with two or more repeats, each repeat's
//! statistics over its tasks, then each primary statistic's spread across the repeats.

use super::{AgentKey, RolloutRecord};
use crate::gym::metric_names;
use crate::record::{KeyId, KeyTable};
use crate::stats::Spread;

/// One entry of `*_repeat_level_metrics.json`: one agent's repeat (rollout index) over its tasks.
#[derive(Clone, Debug, PartialEq)]
pub struct RepeatEntry {
    /// Index into the profile's agents.
    pub agent: usize,
    pub rollout: i64,
    /// Tasks with a rollout of this repeat.
    pub sample_count: usize,
    /// The agent's tasks without one.
    pub missing_count: usize,
    /// Each metric column with a value in the repeat, in code point order of its name:
    /// (column index, statistics over the tasks' values).
    pub columns: Vec<(usize, Spread)>,
}

/// `<stat>_across_repeats/mean/<column>`: one column's repeat means, spread across repeats.
#[derive(Clone, Debug, PartialEq)]
pub struct AcrossRepeats {
    /// The metric column whose `mean/` is aggregated (`Profile::agent_column`: the agents'
    /// numeric names).
    pub column: usize,
    /// `false` for `<stat>_across_repeats/agent_name` itself: the column v0.7.0 adds to the
    /// repeat entries' frame to group them, a metric there too when every name is a number.
    pub of_mean: bool,
    /// `sem` is upstream's `se_across_repeats`.
    pub spread: Spread,
}

/// The repeat-level entries, agents in the profile's order, repeats ascending, with the warning
/// upstream gives when some repeat lacks tasks. `rollout_agent[i]` is rollout `i`'s agent.
pub(super) fn repeat_entries(
    rollouts: &[RolloutRecord],
    rollout_agent: &[Option<usize>],
    columns: &[KeyId],
    column_of: &[u32],
    keys: &KeyTable,
    agents: &[AgentKey],
) -> (Vec<RepeatEntry>, Option<String>) {
    // Upstream's frame holds each rollout's agent in a column `agent_name`, a number when the
    // name came from a number; when every named rollout's is, the column is numeric and
    // becomes a metric like the others (index `columns.len()`).
    let agent_column = columns.len();
    let numeric_agents = rollout_agent.iter().any(Option::is_some)
        && rollout_agent.iter().flatten().all(|&a| agents[a].numeric);
    let name_of = |c: usize| match columns.get(c) {
        Some(&k) => keys.name(k),
        None => "agent_name",
    };
    let width = columns.len() + usize::from(numeric_agents);
    // Columns in code point order of their names (pandas' `Index.difference` sorts them).
    let mut by_name: Vec<usize> = (0..width).collect();
    by_name.sort_by(|&a, &b| name_of(a).cmp(name_of(b)));
    let mut rank = vec![0u32; width];
    for (r, &c) in by_name.iter().enumerate() {
        rank[c] = r as u32;
    }

    let mut order: Vec<(usize, i64, i64, u32)> = rollouts
        .iter()
        .zip(rollout_agent)
        .enumerate()
        .filter_map(|(i, (r, a))| a.map(|a| (a, r.key.rollout, r.key.task, i as u32)))
        .collect();
    order.sort_unstable();

    let mut entries = Vec::new();
    let mut cells: Vec<(u32, f64)> = Vec::new();
    let mut by_rank = ByRank::default();
    for agent_rows in order.chunk_by(|x, y| x.0 == y.0) {
        let repeats = agent_rows.chunk_by(|x, y| x.1 == y.1).count();
        if repeats < 2 {
            continue;
        }
        let mut tasks: Vec<i64> = agent_rows.iter().map(|x| x.2).collect();
        tasks.sort_unstable();
        tasks.dedup();
        for repeat in agent_rows.chunk_by(|x, y| x.1 == y.1) {
            cells.clear();
            for &(agent, _, _, i) in repeat {
                rollouts[i as usize].metric_values(|k, v| {
                    let c = column_of[k as usize];
                    if c != super::NO_COLUMN {
                        cells.push((rank[c as usize], v.as_f64()));
                    }
                });
                if numeric_agents {
                    cells.push((rank[agent_column], agent_number(&agents[agent])));
                }
            }
            let columns = by_rank
                .runs(&cells, width)
                .filter_map(|(r, values)| Spread::of(values).map(|s| (by_name[r as usize], s)))
                .collect();
            entries.push(RepeatEntry {
                agent: repeat[0].0,
                rollout: repeat[0].1,
                sample_count: repeat.len(),
                missing_count: tasks.len() - repeat.len(),
                columns,
            });
        }
    }
    let incomplete: Vec<&RepeatEntry> = entries.iter().filter(|e| e.missing_count > 0).collect();
    let warning = incomplete.first().map(|first| {
        format!(
            "{} repeat(s) are missing rollouts for some tasks (e.g. agent '{}', \
             _ng_rollout_index={}, missing_count={}): the repeat-level statistics come from \
             unequal sample sizes across repeats",
            incomplete.len(),
            agents[first.agent].name,
            first.rollout,
            first.missing_count
        )
    });
    (entries, warning)
}

/// Cells (column rank, value) regrouped by rank in linear time, each rank's values kept in the
/// order they came (the tasks' order, which decides the sums' rounding).
#[derive(Default)]
struct ByRank {
    starts: Vec<usize>,
    values: Vec<f64>,
}

impl ByRank {
    /// Each rank present with its values, ascending rank.
    fn runs<'a>(
        &'a mut self,
        cells: &[(u32, f64)],
        width: usize,
    ) -> impl Iterator<Item = (u32, &'a mut [f64])> + 'a {
        self.starts.clear();
        self.starts.resize(width + 1, 0);
        for &(r, _) in cells {
            self.starts[r as usize + 1] += 1;
        }
        for r in 0..width {
            self.starts[r + 1] += self.starts[r];
        }
        self.values.clear();
        self.values.resize(cells.len(), 0.0);
        let mut next = self.starts.clone();
        for &(r, v) in cells {
            self.values[next[r as usize]] = v;
            next[r as usize] += 1;
        }
        let starts = &self.starts;
        let mut rest: &'a mut [f64] = &mut self.values;
        (0..width).filter_map(move |r| {
            let len = starts[r + 1] - starts[r];
            let (run, tail) = std::mem::take(&mut rest).split_at_mut(len);
            rest = tail;
            (len > 0).then_some((r as u32, run))
        })
    }
}

/// A numeric agent name's value (its JSON text parsed).
fn agent_number(agent: &AgentKey) -> f64 {
    agent.name.parse().unwrap_or(f64::NAN)
}

/// Each agent's across-repeats statistics (indexed like the agents): the primary names among
/// the entries' keys (in practice `mean/<column>`) in order of first appearance, each with the
/// agent's repeat values; then `agent_name` itself when every such agent's name is a number.
pub(super) fn across_repeats(
    entries: &[RepeatEntry],
    columns: &[KeyId],
    keys: &KeyTable,
    agents: &[AgentKey],
) -> Vec<Vec<AcrossRepeats>> {
    let mut seen = vec![false; columns.len() + 1];
    let mut names = Vec::new();
    for entry in entries {
        for &(c, _) in &entry.columns {
            if !seen[c] {
                seen[c] = true;
                let name = columns.get(c).map_or("agent_name", |&k| keys.name(k));
                if metric_names::is_primary(&format!("mean/{name}")) {
                    names.push(c);
                }
            }
        }
    }
    // v0.7.0 adds `agent_name` to the entries' frame (from `agent_ref.name`) to group them: a
    // numeric column, aggregated last, when every agent with entries has a number for a name.
    let bare_agent = !entries.is_empty() && entries.iter().all(|e| agents[e.agent].numeric);
    let mut out = vec![Vec::new(); agents.len()];
    let mut means: crate::fast_map::FastMap<usize, Vec<f64>> = Default::default();
    for agent_entries in entries.chunk_by(|x, y| x.agent == y.agent) {
        means.clear();
        for entry in agent_entries {
            for &(c, s) in &entry.columns {
                means.entry(c).or_default().push(s.mean);
            }
        }
        let agent = agent_entries[0].agent;
        for &c in &names {
            if let Some(spread) = means.get_mut(&c).and_then(|v| Spread::of(v)) {
                out[agent].push(AcrossRepeats {
                    column: c,
                    of_mean: true,
                    spread,
                });
            }
        }
        if bare_agent {
            let mut name = vec![agent_number(&agents[agent]); agent_entries.len()];
            if let Some(spread) = Spread::of(&mut name) {
                out[agent].push(AcrossRepeats {
                    column: columns.len(),
                    of_mean: false,
                    spread,
                });
            }
        }
    }
    out
}
