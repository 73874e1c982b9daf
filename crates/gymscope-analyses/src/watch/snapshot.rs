//! The figures of a watched run at one moment: counts against the materialized total, per-agent
//! reward with its interval across repeats, pass@1, the health rates and failures by class, and
//! one line per shard. The final snapshot's figures are the finished run's profile and health
//! (`tests/cli/watch.rs` checks it).

use super::shard::{AgentSums, HealthSums, Shard, Sum};
use super::{BadLine, Watch};
use crate::fast_map::FastMap;
use crate::health::{self, Flag, Rate};
use crate::reward_group::Outcomes;
use crate::stats::Spread;
use serde::Serialize;
use std::collections::BTreeMap;

#[derive(Clone, Debug, Serialize)]
pub struct Snapshot {
    /// Every shard is complete (each materialized rollout has a row, or its writer is done).
    pub complete: bool,
    pub totals: Totals,
    pub agents: Vec<AgentFigures>,
    /// Rows of the failures sidecars by `_ng_failure_class`.
    pub failures: BTreeMap<String, u64>,
    pub health: Vec<HealthRate>,
    pub shards: Vec<ShardFigures>,
    /// Lines about the files: one read again from the start, and why.
    pub notes: Vec<String>,
    /// Rows that could not be read (all counted, the first ones kept).
    pub unreadable_rows: u64,
    pub unreadable: Vec<BadLine>,
}

#[derive(Clone, Debug, Default, Serialize)]
pub struct Totals {
    pub shards: usize,
    /// Materialized rollouts.
    pub expected: u64,
    /// Rollouts with a row in a rollouts file.
    pub done: u64,
    /// Rollouts with a row in a failures sidecar only.
    pub failed: u64,
    /// Materialized rollouts with neither yet.
    pub remaining: u64,
    /// Rows a minute over the last minutes, of the shards still running.
    pub rows_per_minute: Option<f64>,
    /// When the slowest running shard is done at its rate (shards run side by side, each on its
    /// own rows); `None` while a running shard has no rate or no recent row.
    pub eta_seconds: Option<f64>,
    pub stalled_shards: usize,
}

#[derive(Clone, Debug, Serialize)]
pub struct AgentFigures {
    pub agent: String,
    pub rollouts: u64,
    /// Mean over rollouts with a numeric reward: `*_agent_metrics.json`'s `mean/reward`.
    pub mean_reward: Option<f64>,
    /// The 95 % t interval across repeat means (`ci_low/high_95_across_repeats/mean/reward`),
    /// from two repeats on.
    pub interval: Option<Interval>,
    /// Each task's share of passing rollouts (reward ≥ 1), averaged over graded tasks.
    pub pass_at_1: Option<f64>,
    pub mean_output_tokens: Option<f64>,
}

#[derive(Clone, Copy, Debug, Serialize)]
pub struct Interval {
    pub low: f64,
    pub high: f64,
    pub repeats: usize,
}

/// A health rate (docs/health.md) with its name for people (`health::rate_name`).
#[derive(Clone, Debug, Serialize)]
pub struct HealthRate {
    pub name: &'static str,
    #[serde(flatten)]
    pub rate: Rate,
}

#[derive(Clone, Debug, Serialize)]
pub struct ShardFigures {
    pub rollouts: String,
    pub expected: u64,
    pub done: u64,
    pub failed: u64,
    pub rows_per_minute: Option<f64>,
    pub seconds_since_last_row: Option<f64>,
    pub stalled: bool,
    pub complete: bool,
}

impl Watch {
    /// The figures now (`now` on the clock of [`Watch::feed`]'s `at`).
    pub fn snapshot(&self, now: f64) -> Snapshot {
        let shards: Vec<ShardFigures> = self.shards.iter().map(|s| self.shard(s, now)).collect();
        let mut totals = Totals {
            shards: shards.len(),
            ..Totals::default()
        };
        let mut eta = Some(0.0_f64);
        let mut health = HealthSums::default();
        let mut failures: BTreeMap<String, u64> = BTreeMap::new();
        let mut agents: Vec<AgentSums> = vec![AgentSums::default(); self.agents.names.len()];
        for (s, f) in self.shards.iter().zip(&shards) {
            totals.expected += f.expected;
            totals.done += f.done;
            totals.failed += f.failed;
            let remaining = f.expected.saturating_sub(s.finished_expected);
            totals.remaining += remaining;
            totals.stalled_shards += usize::from(f.stalled);
            if !f.complete {
                if let Some(r) = f.rows_per_minute {
                    *totals.rows_per_minute.get_or_insert(0.0) += r;
                }
                eta = match (eta, f.rows_per_minute) {
                    (Some(e), Some(r)) if r > 0.0 && !f.stalled => {
                        Some(e.max(remaining as f64 * 60.0 / r))
                    }
                    _ => None,
                };
            }
            health.merge(&s.health);
            for (class, n) in &s.classes {
                *failures.entry(class.clone()).or_insert(0) += n;
            }
            for (a, sums) in s.agents.iter().enumerate() {
                merge_agent(&mut agents[a], sums);
            }
        }
        totals.eta_seconds =
            eta.filter(|_| totals.rows_per_minute.is_some() || totals.remaining == 0);
        let failure_rows = failures.values().sum::<u64>();
        Snapshot {
            complete: self.complete(),
            totals,
            agents: self
                .agents
                .names
                .iter()
                .zip(&agents)
                .filter(|(_, a)| a.rollouts > 0)
                .map(|(name, a)| figures(name, a))
                .collect(),
            failures,
            health: rates(
                &health,
                self.shards
                    .iter()
                    .any(|s| s.has_sidecar)
                    .then_some(failure_rows),
            ),
            shards,
            notes: self.notes.clone(),
            unreadable_rows: self.bad_count,
            unreadable: self.bad.clone(),
        }
    }

    fn shard(&self, s: &Shard, now: f64) -> ShardFigures {
        let complete = s.complete();
        let since = s.last_row_at.or(s.samples.front().map(|x| x.0));
        ShardFigures {
            rollouts: s.paths[0].clone(),
            expected: s.expected.len() as u64,
            done: s.done.len() as u64,
            failed: s.finished - s.done.len() as u64,
            rows_per_minute: s.rows_per_minute(now, 10.0),
            seconds_since_last_row: s.last_row_at.map(|t| (now - t).max(0.0)),
            stalled: !complete
                && !self.finished
                && since.is_some_and(|t| now - t > self.stall_after),
            complete,
        }
    }
}

fn merge_agent(into: &mut AgentSums, from: &AgentSums) {
    into.rollouts += from.rollouts;
    into.reward.merge(&from.reward);
    into.output_tokens.merge(&from.output_tokens);
    for (r, sum) in &from.by_repeat {
        into.by_repeat.entry(*r).or_default().merge(sum);
    }
    let tasks: &mut FastMap<i64, Outcomes> = &mut into.by_task;
    for (t, o) in &from.by_task {
        let e = tasks.entry(*t).or_default();
        e.successes += o.successes;
        e.failures += o.failures;
    }
}

fn figures(name: &str, a: &AgentSums) -> AgentFigures {
    let mut means: Vec<f64> = a.by_repeat.values().filter_map(Sum::mean).collect();
    let interval = if means.len() >= 2 {
        let repeats = means.len();
        Spread::of(&mut means)
            .and_then(|s| s.ci)
            .map(|(low, high)| Interval { low, high, repeats })
    } else {
        None
    };
    let rates: Vec<f64> = a.by_task.values().filter_map(Outcomes::pass_rate).collect();
    AgentFigures {
        agent: name.to_string(),
        rollouts: a.rollouts,
        mean_reward: a.reward.mean(),
        interval,
        pass_at_1: (!rates.is_empty()).then(|| rates.iter().sum::<f64>() / rates.len() as f64),
        mean_output_tokens: a.output_tokens.mean(),
    }
}

/// The rates of `gymscope health` over the rows so far, with the failures sidecars' share when
/// there is a sidecar.
fn rates(h: &HealthSums, failure_rows: Option<u64>) -> Vec<HealthRate> {
    let flagged = |f: Flag| h.flagged[Flag::ALL.iter().position(|x| *x == f).unwrap_or(0)];
    let n = h.rollouts;
    [
        Rate::new(health::TRUNCATED, flagged(Flag::Truncated), n),
        Rate::new(health::EMPTY_ANSWER, flagged(Flag::EmptyAnswer), n),
        Rate::new(health::ENDED_ON_TOOL, flagged(Flag::EndedOnTool), n),
        Rate::new(health::LOOPS, flagged(Flag::Loop), n),
        Rate::new(health::TOOL_ERROR_CALLS, h.tool_errors, h.tool_calls),
        Rate::new(health::MALFORMED_ARGUMENTS, h.malformed, h.tool_calls),
        Rate::new(health::USAGE_MISSING, h.usage_missing, n),
    ]
    .into_iter()
    .chain(failure_rows.map(|f| Rate::new(health::FAILURES, f, n + f)))
    .map(|rate| HealthRate {
        name: health::rate_name(rate.rate),
        rate,
    })
    .collect()
}
