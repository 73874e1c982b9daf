//! A query over a whole run, fed line by line: the materialized inputs (each rollout's agent),
//! a first read of the rollouts when the expression needs task aggregates, then the read that
//! matches. The app's worker drives it over a dropped file; the CLI spreads the same steps over
//! its threads.

use super::{read_keyed_with, Field, Matched, Query, RunFacts};
use crate::record::{AgentField, IndexField, KeyTable, RowKind};

pub struct QueryRun {
    pub query: Query,
    pub facts: RunFacts,
    keys: KeyTable,
}

impl QueryRun {
    pub fn new(query: Query, pass_threshold: f64, single_step: bool) -> QueryRun {
        QueryRun {
            query,
            facts: RunFacts {
                pass_threshold,
                single_step,
                ..RunFacts::default()
            },
            keys: KeyTable::default(),
        }
    }

    /// Whether [`first_read_line`](Self::first_read_line) must see every rollout first.
    pub fn needs_first_read(&self) -> bool {
        self.query.needs_tasks()
    }

    /// A materialized-inputs line: its rollout's agent, for rows without `agent_ref`.
    pub fn input_line(&mut self, line: &[u8]) -> Result<(), String> {
        self.facts.add_input_line(line, &mut self.keys)
    }

    /// A rollout line of the first read: its reward into its task's aggregates.
    pub fn first_read_line(&mut self, line: &[u8]) -> Result<(), String> {
        if let Some((task, reward)) = task_reward(line, &mut self.keys)? {
            self.facts.add_rollout(task, reward);
        }
        Ok(())
    }

    /// A rollout line of the matching read: the match, if it is one.
    pub fn line(&mut self, line: &[u8], extra: &[Field]) -> Result<Option<Matched>, String> {
        Ok(match read_keyed_with(line, &mut self.keys)? {
            Some(row) => self.query.matches(line, row, &self.facts, extra),
            None => None,
        })
    }
}

/// A rollout line of the first read: its task and numeric reward (booleans 0/1), if not blank.
pub fn task_reward(line: &[u8], keys: &mut KeyTable) -> Result<Option<(i64, Option<f64>)>, String> {
    Ok(read_keyed_with(line, keys)?.map(|row| {
        let reward = row
            .reward
            .as_ref()
            .and_then(crate::reward_group::reward_value);
        (row.key.0, reward)
    }))
}

/// A materialized-inputs line: its rollout's key and agent, when it names both (the error names
/// the column).
#[allow(clippy::type_complexity)] // a key and a name, or why not
pub fn input_agent(
    line: &[u8],
    keys: &mut KeyTable,
) -> Result<Option<((i64, i64), String)>, String> {
    if line.iter().all(u8::is_ascii_whitespace) {
        return Ok(None);
    }
    let row = crate::record::parse_row(line, RowKind::Input, keys)
        .map_err(|e| format!("column {}: {}", e.column, e.message))?;
    Ok(match (row.task, row.rollout, row.agent) {
        (IndexField::Int(t), IndexField::Int(r), AgentField::Name(a)) => {
            Some(((t, r), a.into_string()))
        }
        _ => None,
    })
}

impl RunFacts {
    /// A materialized-inputs line: its rollout's agent (the error names the column).
    pub fn add_input_line(&mut self, line: &[u8], keys: &mut KeyTable) -> Result<(), String> {
        if let Some((key, agent)) = input_agent(line, keys)? {
            self.input_agents.insert(key, agent);
        }
        Ok(())
    }

    /// One rollout of task `task` with its numeric reward (booleans 0/1), for the aggregates.
    pub fn add_rollout(&mut self, task: i64, reward: Option<f64>) {
        let threshold = self.pass_threshold;
        self.tasks.entry(task).or_default().add(reward, threshold);
    }
}
