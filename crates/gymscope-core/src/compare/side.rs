//! One side of a comparison: a run reduced to what comparing needs. Per task a few dozen bytes
//! and one mean per field; per rollout its reward (the groups are decided at comparison time,
//! with its threshold) and where its line is (to show conversations).

use super::key::TaskKey;
use super::CompareError;
use crate::profile::Profile;
use crate::read::jsonl::LineSpan;
use crate::record::Reward;
use crate::render::{self, LineSource};
use crate::reward_group::{reward_value, Outcomes};
use serde_json::Value;

/// Where a side came from, which says what its [`LineRef`]s point at.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RunKind {
    /// A run: each line is a rollout's row in the rollouts file.
    Run,
    /// A `*_reward_profiling.jsonl`: each task has one line, its row in that file (its `sample`
    /// holds the prompt; the answers are not in that file).
    ProfilingFile,
    /// A `*_aggregate_metrics.json`: no lines to show (its tasks have none).
    Aggregate,
}

/// A line to read again for the report: a rollout (with its index) or a profile row.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LineRef {
    /// The rollout's `_ng_rollout_index` (`None` for a profiling-file row).
    pub rollout: Option<i64>,
    pub span: LineSpan,
}

/// One task of one run.
#[derive(Clone, Debug, PartialEq)]
pub struct TaskEntry {
    pub task: i64,
    pub key: TaskKey,
    /// Index into [`RunTasks::agents`].
    pub agent: Option<u32>,
    pub rollouts: u32,
    /// Mean of the numeric rewards (booleans as 0/1), summed in rollout-index order.
    pub mean_reward: Option<f64>,
    /// This task's rewards in [`RunTasks::rewards`], rollout-index order.
    pub rewards: std::ops::Range<u32>,
    /// Per [`RunTasks::fields`] entry, the profile's mean (NaN where absent; may be shorter).
    pub means: Vec<f64>,
    /// This task's lines in [`RunTasks::lines`].
    pub lines: std::ops::Range<u32>,
}

impl TaskEntry {
    pub fn mean(&self, field: usize) -> Option<f64> {
        self.means
            .get(field)
            .copied()
            .filter(|v| !v.is_nan() && v.is_finite())
    }
}

/// A run, task by task (ascending task index).
#[derive(Clone, Debug, PartialEq)]
pub struct RunTasks {
    pub kind: RunKind,
    /// The name shown for this side (a file name).
    pub name: String,
    /// Numeric per-task columns other than `reward`, in the profile's order.
    pub fields: Vec<String>,
    pub agents: Vec<String>,
    pub tasks: Vec<TaskEntry>,
    /// Every rollout's reward (NaN when not a number), task by task: the reward groups are
    /// decided at comparison time, with its threshold.
    pub rewards: Vec<f64>,
    pub lines: Vec<LineRef>,
    pub warnings: Vec<String>,
}

/// Appends a task's rewards (rollout-index order) and returns their mean. The sum is numpy's
/// pairwise sum over that order, so equal rewards give a bit-identical mean.
pub(super) fn push_rewards(
    rewards: impl Iterator<Item = Option<f64>>,
    all: &mut Vec<f64>,
    scratch: &mut Vec<f64>,
) -> (Option<f64>, std::ops::Range<u32>) {
    let start = all.len() as u32;
    scratch.clear();
    for r in rewards {
        let r = r.unwrap_or(f64::NAN);
        all.push(r);
        if !r.is_nan() {
            scratch.push(r);
        }
    }
    let mean = (!scratch.is_empty())
        .then(|| crate::stats::pairwise_sum(scratch) / scratch.len() as f64)
        .filter(|m| m.is_finite());
    (mean, start..all.len() as u32)
}

/// A row's `agent_ref.name` as text (a number as its JSON text).
pub(super) fn agent_name(row: &Value) -> Option<String> {
    match row.get("agent_ref")?.get("name")? {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// Interns agent names in order of first appearance.
#[derive(Default)]
pub(super) struct AgentNames {
    pub(super) names: Vec<String>,
    index: std::collections::HashMap<String, u32>,
}

impl AgentNames {
    pub(super) fn id(&mut self, name: Option<String>) -> Option<u32> {
        let name = name?;
        if let Some(&id) = self.index.get(&name) {
            return Some(id);
        }
        let id = self.names.len() as u32;
        self.index.insert(name.clone(), id);
        self.names.push(name);
        Some(id)
    }
}

impl RunTasks {
    /// A side from a run's profile; `inputs` gives back each task's sample row (the
    /// materialized input of its lowest rollout) for the content key and the agent name.
    pub fn from_profile(
        p: &Profile,
        inputs: &mut dyn LineSource,
        inputs_file: &str,
        name: &str,
    ) -> Result<RunTasks, CompareError> {
        let reward_column = p.columns.iter().position(|&k| p.keys.name(k) == "reward");
        let columns: Vec<usize> = (0..p.columns.len())
            .filter(|&c| Some(c) != reward_column)
            .collect();
        let mut agents = AgentNames::default();
        let mut tasks = Vec::with_capacity(p.tasks.len());
        let mut lines = Vec::with_capacity(p.rollouts.len());
        let mut all_rewards = Vec::with_capacity(p.rollouts.len());
        let (mut buf, mut scratch) = (Vec::new(), Vec::new());
        for t in &p.tasks {
            let sample = render::read_sample(inputs, inputs_file, t.sample).map_err(|e| {
                CompareError::Sample {
                    file: inputs_file.to_string(),
                    line: t.sample.line,
                    message: e.to_string(),
                }
            })?;
            let rollouts = &p.rollouts[t.rollouts.clone()];
            let (mean_reward, rewards) = push_rewards(
                rollouts.iter().map(|r| match &r.reward {
                    Some(Reward::Num(n)) => Some(n.as_f64()),
                    Some(Reward::Other(v)) => reward_value(v),
                    None => None,
                }),
                &mut all_rewards,
                &mut scratch,
            );
            let start = lines.len() as u32;
            lines.extend(rollouts.iter().map(|r| LineRef {
                rollout: Some(r.key.rollout),
                span: r.span,
            }));
            tasks.push(TaskEntry {
                task: t.task,
                key: TaskKey::of_row(&sample, &mut buf),
                agent: agents.id(agent_name(&sample)),
                rollouts: t.num_rollouts as u32,
                mean_reward,
                rewards,
                means: columns
                    .iter()
                    .map(|&c| t.columns[c].mean.unwrap_or(f64::NAN))
                    .collect(),
                lines: start..lines.len() as u32,
            });
        }
        Ok(RunTasks {
            kind: RunKind::Run,
            name: name.to_string(),
            fields: columns
                .iter()
                .map(|&c| p.column_name(c).to_string())
                .collect(),
            agents: agents.names,
            tasks,
            rewards: all_rewards,
            lines,
            warnings: p.warnings.clone(),
        })
    }

    pub fn field(&self, name: &str) -> Option<usize> {
        self.fields.iter().position(|f| f == name)
    }

    /// A task's reward group at `threshold`.
    pub fn outcomes(&self, task: &TaskEntry, threshold: f64) -> Outcomes {
        let mut o = Outcomes::default();
        for &r in &self.rewards[task.rewards.start as usize..task.rewards.end as usize] {
            o.add(Some(r), threshold);
        }
        o
    }

    pub fn agent_of(&self, task: &TaskEntry) -> Option<&str> {
        task.agent.map(|a| self.agents[a as usize].as_str())
    }
}
