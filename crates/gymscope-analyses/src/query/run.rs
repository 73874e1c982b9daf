//! A query over a whole run, fed line by line: the materialized inputs (each rollout's agent),
//! a first read of the rollouts when the expression needs task aggregates, then the read that
//! matches. The app's worker drives it over a dropped file; the CLI spreads the same steps over
//! its threads.

use super::{read_keyed_with, Field, Matched, Query, RunFacts};
use crate::record::{AgentField, KeyTable, RowKind};

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

    /// Whether the materialized inputs must be read first: only `agent` takes them (v0.7.0
    /// names a rollout's agent from its materialized row), so a reader that wants the matches'
    /// keys alone (the page) skips them for any other expression.
    pub fn needs_agents(&self) -> bool {
        self.query
            .fields()
            .iter()
            .any(|f| matches!(f, Field::Agent))
    }

    /// Whether [`first_read_line`](Self::first_read_line) must see every rollout first.
    pub fn needs_first_read(&self) -> bool {
        self.query.needs_tasks()
    }

    /// The inputs are read once a rollout line comes: their rows are labelled then.
    fn inputs_done(&mut self) {
        if !self.facts.input_runs.is_empty() {
            self.facts.label_inputs();
        }
    }

    /// A materialized-inputs line: its rollout's agent (labelled when the inputs are done).
    pub fn input_line(&mut self, line: &[u8]) -> Result<(), String> {
        self.facts.add_input_line(line, &mut self.keys)
    }

    /// A rollout line of the first read: its reward into its task's aggregates.
    pub fn first_read_line(&mut self, line: &[u8]) -> Result<(), String> {
        self.inputs_done();
        if let Some((task, reward)) = task_reward(line, &mut self.keys)? {
            self.facts.add_rollout(task, reward);
        }
        Ok(())
    }

    /// A rollout line of the matching read: the match, if it is one.
    pub fn line(&mut self, line: &[u8], extra: &[Field]) -> Result<Option<Matched>, String> {
        self.inputs_done();
        self.query
            .match_line(line, &mut self.keys, &self.facts, extra)
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

/// A materialized row's rollout key, its run key (v0.7.0 `rollout_run_key`: the
/// `_ng_environment_server`, else the agent's name) and its agent's name.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct InputRun {
    pub key: (i64, i64),
    pub run: Option<String>,
    pub agent: Option<String>,
}

fn name(field: AgentField) -> Option<String> {
    match field {
        AgentField::Name(a) => Some(a.into_string()),
        _ => None,
    }
}

/// A materialized-inputs line: its rollout's key, run key and agent, when it has a key (the
/// error names the column).
pub fn input_agent(line: &[u8], keys: &mut KeyTable) -> Result<Option<InputRun>, String> {
    if line.iter().all(u8::is_ascii_whitespace) {
        return Ok(None);
    }
    let row = crate::record::parse_row(line, RowKind::Input, keys)
        .map_err(|e| format!("column {}: {}", e.column, e.message))?;
    Ok(match (row.task.value(), row.rollout.value()) {
        (Some((t, _)), Some((r, _))) => {
            let agent = name(row.agent);
            let run = name(row.server).or_else(|| agent.clone());
            Some(InputRun {
                key: (t, r),
                run,
                agent,
            })
        }
        _ => None,
    })
}

impl RunFacts {
    /// A materialized-inputs line, kept for [`RunFacts::label_inputs`] (the error names the
    /// column).
    pub fn add_input_line(&mut self, line: &[u8], keys: &mut KeyTable) -> Result<(), String> {
        self.input_runs.extend(input_agent(line, keys)?);
        Ok(())
    }

    /// Every input read: each rollout's agent as v0.7.0 labels it (the agent's name, unless it
    /// ran behind several environment servers: then the server's name).
    pub fn label_inputs(&mut self) {
        let runs = std::mem::take(&mut self.input_runs);
        let labels = crate::profile::labels::label_run_names(
            runs.iter().map(|r| (r.run.as_deref(), r.agent.as_deref())),
        );
        self.input_agents.extend(
            runs.iter()
                .filter_map(|r| Some((r.key, labels.get(r.run.as_deref()?)?.clone()))),
        );
    }

    /// A row's agent: its inputs' label when the inputs were read (v0.7.0 names the agent from
    /// the materialized row), else the row's own `agent_ref.name`.
    pub fn agent_of(&self, row: &super::KeyedRow) -> Option<String> {
        self.input_agents
            .get(&row.key)
            .cloned()
            .or_else(|| row.agent.clone())
    }

    /// One rollout of task `task` with its numeric reward (booleans 0/1), for the aggregates.
    pub fn add_rollout(&mut self, task: i64, reward: Option<f64>) {
        let threshold = self.pass_threshold;
        self.tasks.entry(task).or_default().add(reward, threshold);
    }
}
