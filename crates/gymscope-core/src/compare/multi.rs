//! A baseline against several candidates (README, "Comparing runs"): each candidate is paired
//! with the baseline by [`super::compare`], then judged per metric (paired mean delta, the
//! bootstrap interval, the sign-flip p-value, Holm across the candidates of that metric, the
//! verdict at `alpha`), with its power and its flips by task.

use super::power::{power, Power, TaskSample};
use super::summary::{agent_seed, MeanDelta};
use super::verdict::{holm, sign_flip_p, PValue, Verdict, PERMUTATIONS};
use super::{Comparison, PairedTask, RunTasks};
use crate::reward_group::RewardGroup;
use serde::{Deserialize, Serialize};
use std::collections::{HashMap, HashSet};

/// Default significance level of the verdicts.
pub const DEFAULT_ALPHA: f64 = 0.05;

/// A run as shown: its label (the shortest path suffix telling the runs apart), its full path
/// and its task count.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunLabel {
    pub label: String,
    pub path: String,
    pub tasks: usize,
}

/// One metric of one candidate against the baseline.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MetricRow {
    /// `reward`, `output_tokens` or a numeric field's name.
    pub metric: String,
    /// Only the reward has a good direction (higher); the others are `higher` / `lower`.
    pub higher_is_better: bool,
    pub mean: MeanDelta,
    pub p: Option<PValue>,
    /// Holm-adjusted across the candidates having this metric.
    pub p_holm: Option<f64>,
    pub verdict: Verdict,
}

/// Tasks by how their outcome moved, as `gym dev compare` names them (NeMo Gym's
/// `nemo_gym/rollout_compare/compare.py`: identical, flipped, masked, missing; masked needs
/// its failures sidecar, which gymscope does not read). A task passes or fails
/// by its reward group: `all_failure` < `mixed` < `all_success` (with one rollout a task is one
/// or the other); moving up is `flipped to pass`, down `flipped to fail`, the same group
/// `identical` (its rewards may still differ: the delta says by how much).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Flips {
    pub identical: usize,
    pub flipped_to_pass: usize,
    pub flipped_to_fail: usize,
    /// `no_reward` on either side: neither passes nor fails.
    pub without_reward: usize,
    pub only_baseline: usize,
    pub only_candidate: usize,
}

/// A group's place in the pass/fail order; `None` for `no_reward`.
pub fn rank(g: RewardGroup) -> Option<u8> {
    match g {
        RewardGroup::AllFailure => Some(0),
        RewardGroup::Mixed => Some(1),
        RewardGroup::AllSuccess => Some(2),
        RewardGroup::NoReward => None,
    }
}

/// `+1` flipped to pass, `-1` flipped to fail, `0` identical, `None` without a reward.
pub fn flip_of(t: &PairedTask) -> Option<i8> {
    let (a, b) = (rank(t.group_a)?, rank(t.group_b)?);
    Some(match a.cmp(&b) {
        std::cmp::Ordering::Less => 1,
        std::cmp::Ordering::Greater => -1,
        std::cmp::Ordering::Equal => 0,
    })
}

pub fn flips(c: &Comparison) -> Flips {
    let mut f = Flips {
        only_baseline: c.only_a,
        only_candidate: c.only_b,
        ..Flips::default()
    };
    for t in &c.tasks {
        match flip_of(t) {
            Some(1) => f.flipped_to_pass += 1,
            Some(-1) => f.flipped_to_fail += 1,
            Some(_) => f.identical += 1,
            None => f.without_reward += 1,
        }
    }
    f
}

/// The flipped tasks, largest |delta| first (ties by the baseline's task index), at most `k`.
pub fn largest_flips(c: &Comparison, k: usize) -> Vec<&PairedTask> {
    let mut v: Vec<&PairedTask> = c
        .tasks
        .iter()
        .filter(|t| matches!(flip_of(t), Some(1 | -1)))
        .collect();
    v.sort_by(|x, y| {
        let size = |t: &PairedTask| t.delta.map_or(0.0, f64::abs);
        size(y).total_cmp(&size(x)).then(x.task_a.cmp(&y.task_a))
    });
    v.truncate(k);
    v
}

/// One candidate, judged.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Candidate {
    pub run: RunLabel,
    pub comparison: Comparison,
    pub metrics: Vec<MetricRow>,
    pub power: Power,
    pub flips: Flips,
}

/// The baseline and every candidate.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MultiComparison {
    pub alpha: f64,
    pub effect: Option<f64>,
    pub baseline: RunLabel,
    pub candidates: Vec<Candidate>,
}

impl MultiComparison {
    /// Whether any candidate's mean reward is `worse` (for `--fail-if-worse`).
    pub fn any_worse(&self) -> bool {
        self.candidates.iter().any(|c| {
            c.metrics
                .iter()
                .any(|m| m.metric == "reward" && m.verdict == Verdict::Down)
        })
    }
}

/// Judges one candidate (`c` = [`super::compare`]`(base, cand)`); the Holm correction and
/// the verdicts wait for [`judge`], when every candidate is known.
pub fn candidate(
    base: &RunTasks,
    cand: &RunTasks,
    run: RunLabel,
    c: Comparison,
    alpha: f64,
    effect: Option<f64>,
) -> Candidate {
    let seed = c.options.seed;
    let mut metrics = Vec::with_capacity(2 + c.fields.len());
    let mut row = |metric: &str, mean: &MeanDelta, deltas: Vec<f64>, higher_is_better| {
        // Seeded by the metric's name only, so a candidate's p-value does not depend on the
        // other candidates (and identical deltas get the identical p).
        let p = sign_flip_p(&deltas, PERMUTATIONS, agent_seed(seed, metric));
        metrics.push(MetricRow {
            metric: metric.to_string(),
            higher_is_better,
            mean: *mean,
            p,
            p_holm: None,
            verdict: Verdict::NoDifference,
        });
    };
    let both = |x: Option<f64>, y: Option<f64>| Some(y? - x?);
    let o = &c.overall;
    row(
        "reward",
        &o.mean_reward,
        c.tasks.iter().filter_map(|t| t.delta).collect(),
        true,
    );
    row(
        "output_tokens",
        &o.tokens,
        c.tasks
            .iter()
            .filter_map(|t| both(t.tokens_a, t.tokens_b))
            .collect(),
        false,
    );
    for (f, name) in c.fields.iter().enumerate() {
        let deltas = c
            .tasks
            .iter()
            .filter_map(|t| both(t.fields_a[f], t.fields_b[f]))
            .collect();
        row(name, &o.fields[f], deltas, false);
    }
    let numeric = |run: &RunTasks, pos: usize| -> Vec<f64> {
        // An aggregate's "rewards" are a task's minimum and maximum, not rollouts: no
        // within-task variance to estimate from them.
        if run.kind == super::RunKind::Aggregate {
            return Vec::new();
        }
        let r = &run.tasks[pos].rewards;
        run.rewards[r.start as usize..r.end as usize]
            .iter()
            .copied()
            .filter(|x| !x.is_nan())
            .collect()
    };
    let rewards: Vec<(f64, Vec<f64>, Vec<f64>)> = c
        .tasks
        .iter()
        .filter_map(|t| Some((t.delta?, numeric(base, t.pos_a), numeric(cand, t.pos_b))))
        .collect();
    let samples: Vec<TaskSample> = rewards
        .iter()
        .map(|(d, a, b)| TaskSample {
            delta: *d,
            rewards_a: a,
            rewards_b: b,
        })
        .collect();
    Candidate {
        run,
        power: power(&samples, alpha, effect),
        flips: flips(&c),
        comparison: c,
        metrics,
    }
}

/// Holm across the candidates of each metric, then each verdict at `alpha`.
pub fn judge(
    baseline: RunLabel,
    mut candidates: Vec<Candidate>,
    alpha: f64,
    effect: Option<f64>,
) -> MultiComparison {
    // Each candidate's metrics by name, and every name in order of first appearance: looked
    // up, not searched (a run with 100,000 numeric fields took 62 s through linear searches).
    let index: Vec<HashMap<String, usize>> = candidates
        .iter()
        .map(|c| {
            c.metrics
                .iter()
                .enumerate()
                .map(|(i, m)| (m.metric.clone(), i))
                .collect()
        })
        .collect();
    let mut seen: HashSet<&str> = HashSet::new();
    let mut names: Vec<String> = Vec::new();
    for c in &candidates {
        for m in &c.metrics {
            if seen.insert(&m.metric) {
                names.push(m.metric.clone());
            }
        }
    }
    drop(seen);
    for name in &names {
        let at: Vec<Option<usize>> = index.iter().map(|ix| ix.get(name).copied()).collect();
        let ps: Vec<Option<f64>> = candidates
            .iter()
            .zip(&at)
            .map(|(c, i)| c.metrics[(*i)?].p.map(|p| p.p))
            .collect();
        for ((c, i), adj) in candidates.iter_mut().zip(&at).zip(holm(&ps)) {
            if let Some(i) = *i {
                let m = &mut c.metrics[i];
                m.p_holm = adj;
                m.verdict = Verdict::of(m.mean.delta, adj, alpha);
            }
        }
    }
    MultiComparison {
        alpha,
        effect,
        baseline,
        candidates,
    }
}

/// Each path's shortest suffix of whole components (`/` or `\` separated) that no other path
/// ends with: `base/rollouts.jsonl`, `c1/rollouts.jsonl`, but `a.jsonl` beside `b.jsonl`. The
/// same path given twice is told apart by its position (`a.jsonl #2`).
pub fn labels(paths: &[&str]) -> Vec<String> {
    let parts: Vec<Vec<&str>> = paths
        .iter()
        .map(|p| p.split(['/', '\\']).filter(|s| !s.is_empty()).collect())
        .collect();
    let suffix = |v: &[&str], k: usize| v[v.len().saturating_sub(k)..].join("/");
    parts
        .iter()
        .enumerate()
        .map(|(i, mine)| {
            let others: Vec<String> = parts
                .iter()
                .enumerate()
                .filter(|&(j, o)| j != i && o != mine)
                .map(|(_, o)| o.join("/"))
                .collect();
            let label = (1..=mine.len())
                .map(|k| suffix(mine, k))
                .find(|s| {
                    let tail = format!("/{s}");
                    others.iter().all(|o| o != s && !o.ends_with(&tail))
                })
                .unwrap_or_else(|| paths[i].to_string());
            if parts.iter().enumerate().any(|(j, o)| j != i && o == mine) {
                format!("{label} #{}", i + 1)
            } else {
                label
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_are_the_shortest_distinguishing_suffixes() {
        assert_eq!(
            labels(&[
                "/r/base/rollouts.jsonl",
                "/r/c1/rollouts.jsonl",
                "/r/c2/rollouts.jsonl"
            ]),
            [
                "base/rollouts.jsonl",
                "c1/rollouts.jsonl",
                "c2/rollouts.jsonl"
            ]
        );
        assert_eq!(labels(&["x/a.jsonl", "y/b.jsonl"]), ["a.jsonl", "b.jsonl"]);
        // Each its own length: only the two alike need their folder.
        assert_eq!(
            labels(&["a/x/r.jsonl", "b/x/r.jsonl", "s.jsonl"]),
            ["a/x/r.jsonl", "b/x/r.jsonl", "s.jsonl"]
        );
        // A path that is another's suffix keeps the longer one apart.
        assert_eq!(labels(&["r.jsonl", "c/r.jsonl"]), ["r.jsonl", "c/r.jsonl"]);
        assert_eq!(
            labels(&["x/a/r.jsonl", "x/a/r.jsonl", "x/b/r.jsonl"]),
            ["a/r.jsonl #1", "a/r.jsonl #2", "b/r.jsonl"]
        );
    }
}
