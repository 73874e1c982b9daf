//! Who ran a rollout, as NeMo Gym v0.7.0 names it (`global_config.py` `rollout_run_key`,
//! `label_runs`, `rollout_run_labels`): a row's *run key* is its `_ng_environment_server`, else
//! its `agent_ref.name`; each run key is *labelled* by its agent's name when that name belongs to
//! exactly one run key, else by the key itself, until every label is unique. Without environment
//! servers a label is just the agent's name.

use super::scan::InputRow;
use super::AgentKey;
use crate::fast_map::FastMap;
use crate::json::Num;
use crate::record::AgentField;
use std::borrow::Cow;
use std::collections::HashMap;

/// A name given as a string or a number; `None` for absent, null or other values.
pub(super) fn name_of(field: &AgentField) -> Option<AgentKey> {
    match field {
        AgentField::Name(name) => Some(AgentKey {
            name: name.clone(),
            numeric: false,
        }),
        AgentField::Number(n) => Some(AgentKey::from_num(*n)),
        _ => None,
    }
}

/// Each run key's label, from the run keys with their first row's agent name, in row order.
pub(super) fn label_runs(runs: &[(AgentKey, Option<AgentKey>)]) -> HashMap<AgentKey, AgentKey> {
    let mut keys_by_agent: HashMap<&AgentKey, usize> = HashMap::new();
    for (_, agent) in runs {
        if let Some(agent) = agent {
            *keys_by_agent.entry(agent).or_default() += 1;
        }
    }
    let mut labels: HashMap<AgentKey, AgentKey> = runs
        .iter()
        .map(|(key, agent)| {
            let label = match agent {
                Some(agent) if keys_by_agent[agent] == 1 => agent.clone(),
                _ => key.clone(),
            };
            (key.clone(), label)
        })
        .collect();
    loop {
        let mut counts: HashMap<&AgentKey, usize> = HashMap::new();
        for label in labels.values() {
            *counts.entry(label).or_default() += 1;
        }
        let clashing: Vec<AgentKey> = labels
            .iter()
            .filter(|(key, label)| counts[label] > 1 && label != key)
            .map(|(key, _)| key.clone())
            .collect();
        if clashing.is_empty() {
            return labels;
        }
        for key in clashing {
            labels.insert(key.clone(), key);
        }
    }
}

/// Each run key's label from rows given as (run key, agent name), in row order: the first row of
/// a run key gives its agent (what `query` and the app read from the materialized inputs).
pub fn label_run_names<'a>(
    rows: impl Iterator<Item = (Option<&'a str>, Option<&'a str>)>,
) -> HashMap<String, String> {
    let key = |s: &str| AgentKey {
        name: s.into(),
        numeric: false,
    };
    let mut seen = std::collections::HashSet::new();
    let runs: Vec<(AgentKey, Option<AgentKey>)> = rows
        .filter_map(|(run, agent)| Some((run?, agent)))
        .filter(|(run, _)| seen.insert(*run))
        .map(|(run, agent)| (key(run), agent.map(key)))
        .collect();
    label_runs(&runs)
        .into_iter()
        .map(|(k, v)| (k.name.into_string(), v.name.into_string()))
        .collect()
}

/// The run keys of the materialized rows (v0.7.0 `rollout_run_key`: the environment server
/// when present and not null, else the agent's name), numbered in the order first met; run 0 is
/// "no run key".
pub(super) struct Runs {
    /// By run number (0: none).
    pub(super) keys: Vec<Option<AgentKey>>,
    /// Each input row's run number.
    pub(super) of_input: Vec<u32>,
}

impl Runs {
    pub(super) fn of(inputs: &[InputRow]) -> Runs {
        let mut ids: FastMap<(Cow<'_, str>, bool), u32> = FastMap::default();
        let mut keys = vec![None];
        let of_input = inputs
            .iter()
            .map(|input| {
                let key = match (&input.server, &input.agent) {
                    (AgentField::Name(server), _) => Some((Cow::Borrowed(&**server), false)),
                    (AgentField::Number(n), _) => Some((number_name(*n), true)),
                    (_, AgentField::Name(agent)) => Some((Cow::Borrowed(&**agent), false)),
                    (_, AgentField::Number(n)) => Some((number_name(*n), true)),
                    _ => None,
                };
                let Some(key) = key else { return 0 };
                if let Some(&id) = ids.get(&key) {
                    return id;
                }
                let id = keys.len() as u32;
                keys.push(Some(AgentKey {
                    name: key.0.as_ref().into(),
                    numeric: key.1,
                }));
                ids.insert(key, id);
                id
            })
            .collect();
        Runs { keys, of_input }
    }

    /// Each run's label (v0.7.0 `rollout_run_labels` over the measured rows), by run number.
    pub(super) fn labels(
        &self,
        inputs: &[InputRow],
        measured: &impl Fn(&InputRow) -> bool,
    ) -> Vec<Option<AgentKey>> {
        // Each run with the agent of its first measured row.
        let mut seen = vec![false; self.keys.len()];
        let mut runs = Vec::new();
        for (input, &run) in inputs.iter().zip(&self.of_input) {
            if run != 0 && !seen[run as usize] && measured(input) {
                seen[run as usize] = true;
                let key = self.keys[run as usize].clone().expect("a run key");
                runs.push((key, name_of(&input.agent)));
            }
        }
        let labels = label_runs(&runs);
        self.keys
            .iter()
            .map(|key| key.as_ref().and_then(|k| labels.get(k).cloned()))
            .collect()
    }
}

/// A numeric name as its JSON text.
fn number_name(n: Num) -> Cow<'static, str> {
    Cow::Owned(AgentKey::from_num(n).name.into())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(s: &str) -> AgentKey {
        AgentKey {
            name: s.into(),
            numeric: false,
        }
    }

    fn labels(runs: &[(&str, Option<&str>)]) -> Vec<(String, String)> {
        let runs: Vec<_> = runs.iter().map(|(k, a)| (key(k), a.map(key))).collect();
        let mut out: Vec<_> = label_runs(&runs)
            .into_iter()
            .map(|(k, l)| (k.name.to_string(), l.name.to_string()))
            .collect();
        out.sort();
        out
    }

    #[test]
    fn one_server_per_agent_keeps_the_agents_name() {
        assert_eq!(
            labels(&[("env_a", Some("a")), ("env_b", Some("b"))]),
            [("env_a".into(), "a".into()), ("env_b".into(), "b".into())]
        );
    }

    #[test]
    fn an_agent_behind_two_servers_is_labelled_by_each_server() {
        assert_eq!(
            labels(&[("env_1", Some("a")), ("env_2", Some("a")), ("env_3", None)]),
            [
                ("env_1".into(), "env_1".into()),
                ("env_2".into(), "env_2".into()),
                ("env_3".into(), "env_3".into())
            ]
        );
    }

    #[test]
    fn a_label_equal_to_another_runs_key_falls_back_to_its_own_key() {
        // Server "b" fronts agent "x"; server "y" fronts agent "b": "y" would be labelled "b",
        // which is also a run key labelled otherwise... and "b" itself is labelled "x".
        assert_eq!(
            labels(&[("b", Some("x")), ("y", Some("b")), ("x", None)]),
            [
                ("b".into(), "b".into()),
                ("x".into(), "x".into()),
                ("y".into(), "y".into())
            ]
        );
    }
}
