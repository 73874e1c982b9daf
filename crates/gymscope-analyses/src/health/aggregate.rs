//! From the builder's per-rollout records to [`HealthReport`]: tasks and their outcome buckets
//! (the core reward-group classifier), per-agent counts and rates, the cross-tab, consistently
//! unhealthy tasks and the worst rollouts.

use super::builder::{HealthBuilder, Rec};
use super::summary::{
    AgentHealth, Buckets, Dist, HealthReport, Rate, RolloutCounts, TaskOutcomes, TokenUse,
    UnhealthyTask, WorstRollout,
};
use super::{Flag, HealthError, MAX_LISTED, THRESHOLDS};
use crate::reward_group::{Outcomes, RewardGroup};
use std::collections::{BTreeMap, HashMap};

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
            .map(|r| (r.task, r.rollout))
            .collect::<std::collections::HashSet<_>>()
            .len() as u64;
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
    let single_step = recs.iter().filter(|r| r.signals.single_step).count() as u64;
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
        mode: match (single_step, n) {
            (0, _) => "multi_step",
            (k, n) if k == n => "single_step",
            _ => "mixed",
        },
        single_step_rollouts: single_step,
        single_step_by: super::mode::reasons_of(b.single_step_by.get(&agent).copied().unwrap_or(0)),
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
    } else if s.has(Flag::EmptyAnswer) && s.single_step {
        parts.push("no action (neither a call nor answer text)".to_string());
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

impl HealthBuilder {
    /// Ends the files fed in chunks (their last lines without a newline) and summarizes.
    pub fn finish(mut self) -> Result<HealthReport, HealthError> {
        self.end_files()?;
        Ok(summarize(&self, self.rollouts_name()))
    }
}

fn summarize(b: &HealthBuilder, file: &str) -> HealthReport {
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
