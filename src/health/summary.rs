//! [`HealthReport`]: the run's health as plain data (the JSON output, the text, the report
//! section): per agent the counts, rates with their thresholds, token use and outcome buckets;
//! the cross-tab of flags against buckets; consistently unhealthy tasks; the worst rollouts.

use super::builder::{HealthBuilder, Rec};
use super::row::Trajectory;
use super::{Flag, Threshold, MAX_LISTED, THRESHOLDS};
use crate::reward_group::{Outcomes, RewardGroup};
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};

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

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
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
    fn new(t: Threshold, count: u64, of: u64) -> Rate {
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
    fn of(mut v: Vec<f64>) -> Dist {
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
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct TrajectoryEvidence {
    pub rows: u64,
    /// Trajectories without the expected shape (not lists where lists belong).
    pub unreadable: u64,
    pub turns: u64,
    pub gaps: BTreeMap<String, u64>,
    pub tool_calls_by_status: BTreeMap<String, u64>,
}

impl TrajectoryEvidence {
    pub(super) fn add(&mut self, raw: &serde_json::value::RawValue) {
        if raw.get() == "null" {
            return;
        }
        self.rows += 1;
        match serde_json::from_str::<Trajectory>(raw.get()) {
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

fn bucket_name(g: RewardGroup) -> &'static str {
    match g {
        RewardGroup::AllFailure => "never_pass",
        RewardGroup::Mixed => "sometimes_pass",
        RewardGroup::AllSuccess => "always_pass",
        RewardGroup::NoReward => "no_reward",
    }
}

/// Tasks of one agent (or all) with their outcomes, and the metrics over them.
fn outcomes(
    recs: &[&Rec],
    threshold: f64,
    expected: Option<&HashMap<i64, u64>>,
) -> (TaskOutcomes, HashMap<i64, RewardGroup>) {
    let mut per_task: BTreeMap<i64, (Outcomes, u64)> = BTreeMap::new();
    for r in recs {
        let e = per_task.entry(r.task).or_default();
        e.0.add(r.reward, threshold);
        e.1 += 1;
    }
    let mut o = TaskOutcomes {
        tasks: per_task.len() as u64,
        ..TaskOutcomes::default()
    };
    let (mut p1, mut pk, mut all, mut graded) = (0.0, 0.0, 0.0, 0u64);
    let mut groups = HashMap::new();
    for (&task, (out, _)) in &per_task {
        let g = out.group();
        groups.insert(task, g);
        match g {
            RewardGroup::AllFailure => o.never_pass += 1,
            RewardGroup::Mixed => o.sometimes_pass += 1,
            RewardGroup::AllSuccess => o.always_pass += 1,
            RewardGroup::NoReward => o.no_reward += 1,
        }
        let n = out.successes + out.failures;
        if n > 0 {
            graded += 1;
            p1 += f64::from(out.successes) / f64::from(n);
            pk += f64::from(u8::from(out.successes > 0));
            all += f64::from(u8::from(out.failures == 0));
        }
    }
    if graded > 0 {
        let g = graded as f64;
        o.pass_at_1 = Some(p1 / g);
        o.pass_at_k = Some(pk / g);
        o.consistency = Some(all / g);
        o.retry_value = Some((pk - p1) / g);
    }
    if let Some(expected) = expected {
        o.missing = Some(
            expected
                .keys()
                .filter(|t| !per_task.contains_key(t))
                .count() as u64,
        );
        o.partial = Some(
            per_task
                .iter()
                .filter(|(t, (_, seen))| expected.get(t).is_some_and(|e| seen < e))
                .count() as u64,
        );
        let want: u64 = expected.values().sum();
        let seen = recs
            .iter()
            .filter(|r| expected.contains_key(&r.task))
            .count() as u64;
        o.coverage = (want > 0).then(|| seen.min(want) as f64 / want as f64);
    }
    (o, groups)
}

fn agent_health(b: &HealthBuilder, agent: u32, recs: &[&Rec]) -> AgentHealth {
    let expected = b.expected.as_ref().map(|e| {
        let mut per_task: HashMap<i64, u64> = HashMap::new();
        for (&(task, _), &a) in e {
            if a == agent {
                *per_task.entry(task).or_insert(0) += 1;
            }
        }
        per_task
    });
    let (outcomes, groups) = outcomes(recs, b.threshold, expected.as_ref());
    let count = |f: Flag| recs.iter().filter(|r| r.signals.has(f)).count() as u64;
    let sum = |f: fn(&Rec) -> u32| recs.iter().map(|r| u64::from(f(r))).sum::<u64>();
    let mut truncated_by_reason = BTreeMap::new();
    let mut tokens = TokenUse::default();
    let (mut reasoning_output, mut outputs) = (0.0, Vec::new());
    for r in recs {
        if let Some(reason) = &r.signals.truncated_reason {
            *truncated_by_reason.entry(reason.clone()).or_insert(0) += 1;
        }
        match r.signals.tokens {
            Some(t) => {
                tokens.known += 1;
                tokens.input += t.input;
                tokens.output += t.output;
                tokens.total += t.total;
                outputs.push(t.output);
                if let Some(x) = t.reasoning {
                    *tokens.reasoning.get_or_insert(0.0) += x;
                    reasoning_output += t.output;
                }
                if let Some(x) = t.cached {
                    *tokens.cached.get_or_insert(0.0) += x;
                }
            }
            None => tokens.missing += 1,
        }
    }
    tokens.output_per_rollout = Dist::of(outputs);
    tokens.reasoning_share = tokens
        .reasoning
        .filter(|_| reasoning_output > 0.0)
        .map(|r| r / reasoning_output);
    let n = recs.len() as u64;
    let tool_calls = sum(|r| r.signals.tool_calls);
    let malformed = sum(|r| r.signals.malformed_arguments);
    let tool_errors = sum(|r| r.signals.tool_error_calls);
    let rates = vec![
        Rate::new(super::TRUNCATED, count(Flag::Truncated), n),
        Rate::new(super::EMPTY_ANSWER, count(Flag::EmptyAnswer), n),
        Rate::new(super::ENDED_ON_TOOL, count(Flag::EndedOnTool), n),
        Rate::new(super::LOOPS, count(Flag::Loop), n),
        Rate::new(super::TOOL_ERROR_CALLS, tool_errors, tool_calls),
        Rate::new(super::MALFORMED_ARGUMENTS, malformed, tool_calls),
        Rate::new(super::USAGE_MISSING, tokens.missing, n),
    ];
    let mut cross_tab = BTreeMap::new();
    for f in Flag::ALL {
        let mut buckets = Buckets::default();
        for r in recs.iter().filter(|r| r.signals.has(f)) {
            match groups
                .get(&r.task)
                .copied()
                .unwrap_or(RewardGroup::NoReward)
            {
                RewardGroup::AllFailure => buckets.never_pass += 1,
                RewardGroup::Mixed => buckets.sometimes_pass += 1,
                RewardGroup::AllSuccess => buckets.always_pass += 1,
                RewardGroup::NoReward => buckets.no_reward += 1,
            }
        }
        cross_tab.insert(f.as_str(), buckets);
    }
    AgentHealth {
        agent: b.agents[agent as usize].clone(),
        rollouts: n,
        truncated: count(Flag::Truncated),
        truncated_by_reason,
        empty_answer: count(Flag::EmptyAnswer),
        empty_output: count(Flag::EmptyOutput),
        ended_on_tool: count(Flag::EndedOnTool),
        loops: count(Flag::Loop),
        rollouts_with_tool_errors: count(Flag::ToolError),
        rollouts_with_dangling_calls: count(Flag::DanglingCall),
        tool_calls,
        malformed_arguments: malformed,
        tool_error_calls: tool_errors,
        dangling_calls: sum(|r| r.signals.dangling_calls),
        turns: Dist::of(recs.iter().map(|r| f64::from(r.signals.turns)).collect()),
        tool_calls_per_rollout: Dist::of(
            recs.iter()
                .map(|r| f64::from(r.signals.tool_calls))
                .collect(),
        ),
        tokens,
        rates,
        outcomes,
        cross_tab,
    }
}

/// Why a rollout is among the worst, in words.
fn reason(r: &Rec) -> String {
    let s = &r.signals;
    let mut parts = Vec::new();
    if let Some(reason) = &s.truncated_reason {
        parts.push(format!("truncated ({reason})"));
    }
    if s.has(Flag::EmptyOutput) {
        parts.push("empty output".to_string());
    } else if s.has(Flag::EmptyAnswer) {
        parts.push("no final answer".to_string());
    }
    if s.has(Flag::EndedOnTool) {
        parts.push("ended on a tool call".to_string());
    }
    if let Some((name, times)) = &s.loop_call {
        parts.push(format!("loop: {name} ×{times}"));
    }
    if s.tool_error_calls > 0 {
        parts.push(format!(
            "{} of {} tool calls answered with an error",
            s.tool_error_calls, s.tool_calls
        ));
    }
    if s.malformed_arguments > 0 {
        parts.push(format!(
            "{} malformed tool arguments",
            s.malformed_arguments
        ));
    }
    if s.dangling_calls > 0 {
        parts.push(format!("{} calls without output", s.dangling_calls));
    }
    parts.join("; ")
}

fn flags_of(r: &Rec) -> Vec<&'static str> {
    Flag::ALL
        .into_iter()
        .filter(|&f| r.signals.has(f))
        .map(Flag::as_str)
        .collect()
}

pub(super) fn summarize(b: &HealthBuilder, file: &str) -> HealthReport {
    let mut by_agent: Vec<Vec<&Rec>> = vec![Vec::new(); b.agents.len()];
    for r in &b.recs {
        by_agent[r.agent as usize].push(r);
    }
    // Agents in name order (rows without a name last); agents only in the inputs are kept.
    let mut order: Vec<u32> = (0..b.agents.len() as u32).collect();
    order.sort_by(|&x, &y| {
        let key = |a: u32| (b.agents[a as usize].is_none(), b.agents[a as usize].clone());
        key(x).cmp(&key(y))
    });
    let agents: Vec<AgentHealth> = order
        .iter()
        .map(|&a| agent_health(b, a, &by_agent[a as usize]))
        .collect();
    let all: Vec<&Rec> = b.recs.iter().collect();
    let expected_tasks = b.expected.as_ref().map(|e| {
        let mut per_task: HashMap<i64, u64> = HashMap::new();
        for &(task, _) in e.keys() {
            *per_task.entry(task).or_insert(0) += 1;
        }
        per_task
    });
    let (tasks, groups) = outcomes(&all, b.threshold, expected_tasks.as_ref());

    // Consistently unhealthy: at least two repeats of an (agent, task), every one flagged.
    let mut per_task: BTreeMap<(i64, u32), Vec<&Rec>> = BTreeMap::new();
    for r in &b.recs {
        per_task.entry((r.task, r.agent)).or_default().push(r);
    }
    let unhealthy: Vec<UnhealthyTask> = per_task
        .iter()
        .filter(|(_, rs)| rs.len() >= 2 && rs.iter().all(|r| r.signals.flags != 0))
        .map(|(&(task, agent), rs)| UnhealthyTask {
            agent: b.agents[agent as usize].clone(),
            task,
            repeats: rs.len() as u64,
            outcome: bucket_name(groups.get(&task).copied().unwrap_or(RewardGroup::NoReward)),
            flags: Flag::ALL
                .into_iter()
                .filter_map(|f| {
                    let n = rs.iter().filter(|r| r.signals.has(f)).count() as u64;
                    (n > 0).then_some((f.as_str(), n))
                })
                .collect(),
        })
        .collect();

    let score = |r: &Rec| -> u32 {
        Flag::ALL
            .into_iter()
            .filter(|&f| r.signals.has(f))
            .map(Flag::weight)
            .sum()
    };
    let mut worst: Vec<&Rec> = b.recs.iter().filter(|r| r.signals.flags != 0).collect();
    worst.sort_by(|x, y| {
        score(y)
            .cmp(&score(x))
            .then(y.signals.tool_error_calls.cmp(&x.signals.tool_error_calls))
            .then((x.task, x.rollout, x.line).cmp(&(y.task, y.rollout, y.line)))
    });
    let worst = worst
        .into_iter()
        .take(MAX_LISTED)
        .map(|r| WorstRollout {
            task: r.task,
            rollout: r.rollout,
            agent: b.agents[r.agent as usize].clone(),
            line: r.line,
            reward: r.reward,
            flags: flags_of(r),
            reason: reason(r),
        })
        .collect();

    let failures = b.failure_classes.as_ref().map(|c| c.values().sum::<u64>());
    let attempts = b.recs.len() as u64 + failures.unwrap_or(0);
    let rates = failures
        .map(|f| vec![Rate::new(super::FAILURES, f, attempts)])
        .unwrap_or_default();
    let missing = b.expected.as_ref().map(|e| {
        let seen: std::collections::HashSet<(i64, i64)> =
            b.recs.iter().map(|r| (r.task, r.rollout)).collect();
        e.keys()
            .filter(|k| !seen.contains(k) && !b.failure_keys.contains(k))
            .count() as u64
    });
    HealthReport {
        rollouts_file: file.to_string(),
        pass_threshold: b.threshold,
        thresholds: THRESHOLDS.to_vec(),
        rollouts: RolloutCounts {
            total: b.recs.len() as u64,
            duplicates: b.duplicates,
            failures,
            failures_by_class: b.failure_classes.clone(),
            expected: b.expected.as_ref().map(|e| e.len() as u64),
            missing,
        },
        agents,
        tasks,
        rates,
        consistently_unhealthy_tasks: unhealthy.len() as u64,
        consistently_unhealthy: unhealthy.into_iter().take(MAX_LISTED).collect(),
        worst,
        trajectory: (b.trajectory.rows > 0).then(|| b.trajectory.clone()),
        upstream: None,
    }
}

impl HealthReport {
    /// Every rate at `level` or worse, as `agent: rate value > threshold` lines.
    pub fn findings(&self, level: Level) -> Vec<String> {
        let worse = |l: Level| match level {
            Level::Ok => true,
            Level::Warn => l != Level::Ok,
            Level::Bad => l == Level::Bad,
        };
        let mut out = Vec::new();
        let line = |who: &str, r: &Rate| {
            let limit = if r.level == Level::Bad { r.bad } else { r.warn };
            format!(
                "{who}{} {:.1} % ({} of {} {}) > {:.0} %",
                r.rate,
                r.value.unwrap_or(0.0) * 100.0,
                r.count,
                r.of,
                THRESHOLDS
                    .iter()
                    .find(|t| t.rate == r.rate)
                    .map_or("", |t| t.of),
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
