//! [`HealthReport`]: the run's health as plain data (the JSON output, the text, the report
//! section): per agent the counts, rates with their thresholds, token use and outcome buckets;
//! the cross-tab of flags against buckets; consistently unhealthy tasks; the worst rollouts.

use super::row::Trajectory;
use super::{Threshold, THRESHOLDS};
use serde::Serialize;
use std::collections::BTreeMap;

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct HealthReport {
    pub rollouts_file: String,
    pub pass_threshold: f64,
    pub thresholds: Vec<Threshold>,
    pub rollouts: RolloutCounts,
    pub agents: Vec<AgentHealth>,
    /// Outcome buckets over every task (all agents).
    pub tasks: TaskOutcomes,
    /// Run-level rates (failures).
    pub rates: Vec<Rate>,
    pub consistently_unhealthy_tasks: u64,
    pub consistently_unhealthy: Vec<UnhealthyTask>,
    pub worst: Vec<WorstRollout>,
    /// Rows carrying `ng_trajectory`: their gaps and tool-call statuses.
    pub trajectory: Option<TrajectoryEvidence>,
    /// NeMo Gym's own verdict files, when they sit beside the rollouts (set by the caller).
    pub upstream: Option<super::upstream::Upstream>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct RolloutCounts {
    pub total: u64,
    pub duplicates: u64,
    pub failures: Option<u64>,
    pub failures_by_class: Option<BTreeMap<String, u64>>,
    pub expected: Option<u64>,
    pub missing: Option<u64>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Level {
    Ok,
    Warn,
    Bad,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Rate {
    pub rate: &'static str,
    pub count: u64,
    pub of: u64,
    /// `count / of`; `None` when `of` is 0.
    pub value: Option<f64>,
    pub warn: f64,
    pub bad: f64,
    pub level: Level,
}

impl Rate {
    pub fn new(t: Threshold, count: u64, of: u64) -> Rate {
        let value = (of > 0).then(|| count as f64 / of as f64);
        let level = match value {
            Some(v) if v > t.bad || (t.bad_inclusive && v >= t.bad) => Level::Bad,
            Some(v) if v > t.warn => Level::Warn,
            _ => Level::Ok,
        };
        Rate {
            rate: t.rate,
            count,
            of,
            value,
            warn: t.warn,
            bad: t.bad,
            level,
        }
    }
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Dist {
    pub mean: Option<f64>,
    pub p50: Option<f64>,
    pub p90: Option<f64>,
    pub max: Option<f64>,
}

impl Dist {
    pub(super) fn of(mut v: Vec<f64>) -> Dist {
        if v.is_empty() {
            return Dist::default();
        }
        v.sort_by(f64::total_cmp);
        // Nearest rank: the smallest value with at least p of the values at or below it.
        let rank = |p: f64| v[((p * v.len() as f64).ceil() as usize).clamp(1, v.len()) - 1];
        Dist {
            mean: Some(v.iter().sum::<f64>() / v.len() as f64),
            p50: Some(rank(0.5)),
            p90: Some(rank(0.9)),
            max: v.last().copied(),
        }
    }
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct TokenUse {
    /// Rollouts with usage (not null, not all zeros) and without.
    pub known: u64,
    pub missing: u64,
    pub input: f64,
    pub output: f64,
    pub total: f64,
    /// Sums over the rollouts that report them; `None` when none does.
    pub reasoning: Option<f64>,
    pub cached: Option<f64>,
    pub output_per_rollout: Dist,
    /// Reasoning tokens ÷ output tokens, over the rollouts that report reasoning.
    pub reasoning_share: Option<f64>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct TaskOutcomes {
    pub tasks: u64,
    pub never_pass: u64,
    pub sometimes_pass: u64,
    pub always_pass: u64,
    pub no_reward: u64,
    /// Tasks expected by the materialized inputs without any rollout (`None` without inputs).
    pub missing: Option<u64>,
    /// Tasks with fewer rollouts than expected (`None` without inputs).
    pub partial: Option<u64>,
    pub pass_at_1: Option<f64>,
    pub pass_at_k: Option<f64>,
    pub consistency: Option<f64>,
    /// Rollouts seen ÷ rollouts expected (`None` without inputs).
    pub coverage: Option<f64>,
    pub retry_value: Option<f64>,
}

/// Rollouts carrying a flag, by their task's outcome bucket.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Buckets {
    pub never_pass: u64,
    pub sometimes_pass: u64,
    pub always_pass: u64,
    pub no_reward: u64,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct AgentHealth {
    /// `agent_ref.name`; `None` for rows without one.
    pub agent: Option<String>,
    pub rollouts: u64,
    pub truncated: u64,
    pub truncated_by_reason: BTreeMap<String, u64>,
    pub empty_answer: u64,
    pub empty_output: u64,
    pub ended_on_tool: u64,
    pub loops: u64,
    pub rollouts_with_tool_errors: u64,
    pub rollouts_with_dangling_calls: u64,
    pub tool_calls: u64,
    pub malformed_arguments: u64,
    pub tool_error_calls: u64,
    pub dangling_calls: u64,
    pub turns: Dist,
    pub tool_calls_per_rollout: Dist,
    pub tokens: TokenUse,
    pub rates: Vec<Rate>,
    pub outcomes: TaskOutcomes,
    /// Flag name → rollouts with it by bucket.
    pub cross_tab: BTreeMap<&'static str, Buckets>,
    /// How the rollouts were judged: `multi_step`, `single_step` (each is one action: a tool
    /// call is its answer) or `mixed`; `single_step_by` says why (docs/health.md "Single-step runs").
    pub mode: &'static str,
    pub single_step_rollouts: u64,
    pub single_step_by: Vec<super::mode::SingleStepBy>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct UnhealthyTask {
    pub agent: Option<String>,
    pub task: i64,
    pub repeats: u64,
    pub outcome: &'static str,
    /// Flag name → repeats carrying it.
    pub flags: BTreeMap<&'static str, u64>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct WorstRollout {
    pub task: i64,
    pub rollout: i64,
    pub agent: Option<String>,
    pub line: u64,
    pub reward: Option<f64>,
    pub flags: Vec<&'static str>,
    pub reason: String,
}

/// What rows carrying `ng_trajectory` say (check IDs and gap codes kept as opaque strings).
#[derive(Clone, Debug, Default, PartialEq, Serialize, serde::Deserialize)]
pub struct TrajectoryEvidence {
    pub rows: u64,
    /// Trajectories without the expected shape (not lists where lists belong).
    pub unreadable: u64,
    pub turns: u64,
    pub gaps: BTreeMap<String, u64>,
    pub tool_calls_by_status: BTreeMap<String, u64>,
}

impl TrajectoryEvidence {
    /// Adds what another part of the run found.
    pub(super) fn merge(&mut self, other: TrajectoryEvidence) {
        self.rows += other.rows;
        self.unreadable += other.unreadable;
        self.turns += other.turns;
        for (code, n) in other.gaps {
            *self.gaps.entry(code).or_insert(0) += n;
        }
        for (status, n) in other.tool_calls_by_status {
            *self.tool_calls_by_status.entry(status).or_insert(0) += n;
        }
    }

    pub(super) fn add(&mut self, raw: &str) {
        if raw == "null" {
            return;
        }
        self.rows += 1;
        match serde_json::from_str::<Trajectory>(raw) {
            Ok(t) => {
                self.turns += t.turns.map_or(0, |t| t.len() as u64);
                for g in t.gaps.unwrap_or_default() {
                    *self.gaps.entry(g.code.into_owned()).or_insert(0) += 1;
                }
                for c in t.tool_calls.unwrap_or_default() {
                    let status = c.status.as_deref().unwrap_or("unknown").to_string();
                    *self.tool_calls_by_status.entry(status).or_insert(0) += 1;
                }
            }
            Err(_) => self.unreadable += 1,
        }
    }
}

impl HealthReport {
    /// Every rate at `level` or worse, as `agent: rate value > threshold` lines.
    pub fn findings(&self, level: Level) -> Vec<String> {
        self.findings_named(level, |r| super::rate_name(r).to_string())
    }

    /// [`findings`](Self::findings) with each rate named by `name` (the app says "tool errors"
    /// where the CLI says `tool_error_calls`).
    pub fn findings_named(&self, level: Level, name: impl Fn(&str) -> String) -> Vec<String> {
        let worse = |l: Level| match level {
            Level::Ok => true,
            Level::Warn => l != Level::Ok,
            Level::Bad => l == Level::Bad,
        };
        let mut out = Vec::new();
        let line = |who: &str, r: &Rate| {
            let threshold = THRESHOLDS.iter().find(|t| t.rate == r.rate);
            let (limit, op) = if r.level == Level::Bad {
                let inclusive = threshold.is_some_and(|t| t.bad_inclusive);
                (r.bad, if inclusive { ">=" } else { ">" })
            } else {
                (r.warn, ">")
            };
            format!(
                "{who}{} {:.1} % ({} of {} {}) {op} {:.0} %",
                name(r.rate),
                r.value.unwrap_or(0.0) * 100.0,
                r.count,
                r.of,
                super::unit_name(
                    THRESHOLDS
                        .iter()
                        .find(|t| t.rate == r.rate)
                        .map_or("", |t| t.of)
                ),
                limit * 100.0
            )
        };
        for r in self
            .rates
            .iter()
            .filter(|r| r.level != Level::Ok && worse(r.level))
        {
            out.push(line("", r));
        }
        for a in &self.agents {
            let who = format!("{}: ", agent_label(a.agent.as_deref()));
            for r in a
                .rates
                .iter()
                .filter(|r| r.level != Level::Ok && worse(r.level))
            {
                out.push(line(&who, r));
            }
        }
        out
    }
}

/// How an agent is named in text: its name, or `(no agent_ref)`.
pub fn agent_label(agent: Option<&str>) -> &str {
    agent.unwrap_or("(no agent_ref)")
}
