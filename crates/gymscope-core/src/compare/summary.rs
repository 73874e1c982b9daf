//! The numbers of a group of paired tasks (all of them, or one agent's): unweighted means of
//! the per-task means, the transition table of reward groups, improved / regressed / unchanged,
//! and a paired bootstrap 95% interval of the mean reward delta (a normal approximation above
//! [`BOOTSTRAP_MAX_TASKS`], said where the interval is shown).

use super::PairedTask;
use crate::reward_group::RewardGroup;

/// Resamples of the paired bootstrap.
pub const BOOTSTRAP_RESAMPLES: usize = 10_000;

/// Tasks up to which the interval is bootstrapped. Its cost is resamples × tasks draws (2.5e8
/// here, about a second); at 1,000,000 tasks it ran for minutes. With this many tasks the mean
/// delta is normal to well within the resampling noise (central limit theorem), so above it the
/// interval is `mean ± 1.96 s/√n`.
pub const BOOTSTRAP_MAX_TASKS: usize = 25_000;

/// How a [`MeanDelta::ci95`] was computed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum IntervalMethod {
    #[default]
    Bootstrap,
    /// The normal approximation, above [`BOOTSTRAP_MAX_TASKS`].
    Normal,
}

/// A mean in A and in B over the same tasks (those with a value in both), and their delta.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct MeanDelta {
    /// Tasks with a value in both runs.
    pub tasks: usize,
    pub a: Option<f64>,
    pub b: Option<f64>,
    /// The mean of the per-task deltas (`b - a`).
    pub delta: Option<f64>,
    /// Paired bootstrap 95% percentile interval of `delta` (mean reward only).
    pub ci95: Option<(f64, f64)>,
    /// How `ci95` was computed.
    pub ci95_method: IntervalMethod,
}

#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct GroupSummary {
    pub paired_tasks: usize,
    pub mean_reward: MeanDelta,
    /// `transitions[a][b]`: tasks in group `a` in A and `b` in B, in [`RewardGroup::ALL`] order.
    pub transitions: [[usize; 4]; 4],
    pub improved: usize,
    pub regressed: usize,
    pub unchanged: usize,
    /// Paired tasks without a numeric mean reward on one side (no delta; counted, not dropped).
    pub without_reward: usize,
    /// Mean output tokens per rollout.
    pub tokens: MeanDelta,
    /// Per [`super::Comparison::fields`] entry.
    pub fields: Vec<MeanDelta>,
}

pub(super) fn group_index(g: RewardGroup) -> usize {
    RewardGroup::ALL.iter().position(|&x| x == g).unwrap_or(3)
}

/// Summarizes `tasks`; `seed` seeds the bootstrap.
pub(super) fn summarize(tasks: &[&PairedTask], fields: usize, seed: u64) -> GroupSummary {
    let mut s = GroupSummary {
        paired_tasks: tasks.len(),
        ..GroupSummary::default()
    };
    let mut deltas = Vec::with_capacity(tasks.len());
    for t in tasks {
        s.transitions[group_index(t.group_a)][group_index(t.group_b)] += 1;
        match t.delta {
            Some(d) if d > 0.0 => s.improved += 1,
            Some(d) if d < 0.0 => s.regressed += 1,
            Some(_) => s.unchanged += 1,
            None => s.without_reward += 1,
        }
        if let Some(d) = t.delta {
            deltas.push(d);
        }
    }
    s.mean_reward = mean_delta(tasks.iter().map(|t| (t.mean_a, t.mean_b)));
    if deltas.len() > BOOTSTRAP_MAX_TASKS {
        s.mean_reward.ci95 = normal_ci(&deltas);
        s.mean_reward.ci95_method = IntervalMethod::Normal;
    } else {
        s.mean_reward.ci95 = bootstrap_ci(&deltas, BOOTSTRAP_RESAMPLES, seed);
    }
    s.tokens = mean_delta(tasks.iter().map(|t| (t.tokens_a, t.tokens_b)));
    s.fields = (0..fields)
        .map(|f| mean_delta(tasks.iter().map(|t| (t.fields_a[f], t.fields_b[f]))))
        .collect();
    s
}

fn mean_delta(pairs: impl Iterator<Item = (Option<f64>, Option<f64>)>) -> MeanDelta {
    let (mut a, mut b, mut d) = (Vec::new(), Vec::new(), Vec::new());
    for (x, y) in pairs {
        if let (Some(x), Some(y)) = (x, y) {
            a.push(x);
            b.push(y);
            d.push(y - x);
        }
    }
    MeanDelta {
        tasks: a.len(),
        a: mean(&a),
        b: mean(&b),
        delta: mean(&d),
        ci95: None,
        ci95_method: IntervalMethod::Bootstrap,
    }
}

fn mean(values: &[f64]) -> Option<f64> {
    (!values.is_empty()).then(|| crate::stats::pairwise_sum(values) / values.len() as f64)
}

/// The paired bootstrap: `resamples` times, draw `deltas.len()` tasks with replacement and take
/// the mean delta; the interval is the 2.5th and 97.5th percentiles of those means (linear
/// interpolation between order statistics, numpy's default). Seeded, so deterministic.
pub fn bootstrap_ci(deltas: &[f64], resamples: usize, seed: u64) -> Option<(f64, f64)> {
    let n = deltas.len();
    if n == 0 || resamples == 0 || n > u32::MAX as usize {
        return None;
    }
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut means: Vec<f64> = (0..resamples)
        .map(|_| {
            // Two draws per 64-bit random number, each mapped to 0..n by multiply-shift: its bias
            // (at most n / 2^32, 6e-6 at 25,000 tasks) is far below the resampling noise, and
            // the bootstrap's cost is these draws. Four running sums, so the additions do not
            // wait on each other.
            let mut sums = [0.0f64; 4];
            let mut k = 0;
            while k < n {
                let x = rng.u64(..);
                sums[k & 3] += deltas[pick(x & 0xffff_ffff, n)];
                if k + 1 < n {
                    sums[(k + 1) & 3] += deltas[pick(x >> 32, n)];
                }
                k += 2;
            }
            ((sums[0] + sums[1]) + (sums[2] + sums[3])) / n as f64
        })
        .collect();
    means.sort_unstable_by(f64::total_cmp);
    Some((percentile(&means, 2.5), percentile(&means, 97.5)))
}

/// The normal approximation's 95% interval of the mean: `mean ± z s/√n` with the sample
/// standard deviation `s` (ddof 1) and `z` the normal's 97.5th percentile.
pub fn normal_ci(deltas: &[f64]) -> Option<(f64, f64)> {
    const Z_975: f64 = 1.959_963_984_540_054;
    let stats = crate::stats::Scratch::default().column_stats(deltas);
    let mean = stats.mean?;
    let half = Z_975 * stats.std.unwrap_or(0.0) / (stats.count as f64).sqrt();
    Some((mean - half, mean + half))
}

/// A 32-bit random number scaled to `0..n` (Lemire's multiply-shift without rejection).
fn pick(r32: u64, n: usize) -> usize {
    ((r32 * n as u64) >> 32) as usize
}

/// numpy's `percentile(..., method="linear")` of sorted values.
fn percentile(sorted: &[f64], q: f64) -> f64 {
    let pos = q / 100.0 * (sorted.len() - 1) as f64;
    let lo = pos.floor() as usize;
    let hi = (lo + 1).min(sorted.len() - 1);
    let frac = pos - lo as f64;
    if frac == 0.0 || sorted[lo] == sorted[hi] {
        sorted[lo]
    } else {
        sorted[lo] + (sorted[hi] - sorted[lo]) * frac
    }
}

/// The seed of one agent's bootstrap: the run's seed mixed with the agent's name (FNV-1a), so
/// an agent's interval does not depend on which other agents there are.
pub(super) fn agent_seed(seed: u64, agent: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in agent.bytes() {
        h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
    }
    seed ^ h
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentile_interpolates_as_numpy() {
        let v = [1.0, 2.0, 3.0, 4.0, 5.0];
        assert_eq!(percentile(&v, 50.0), 3.0);
        assert_eq!(percentile(&v, 2.5), 1.1); // pos 0.1
        assert_eq!(percentile(&v, 97.5), 4.9);
        assert_eq!(percentile(&[7.0], 97.5), 7.0);
    }

    fn paired(delta: f64) -> PairedTask {
        PairedTask {
            task_a: 0,
            task_b: 0,
            pos_a: 0,
            pos_b: 0,
            agent: None,
            rollouts_a: 1,
            rollouts_b: 1,
            mean_a: Some(0.0),
            mean_b: Some(delta),
            delta: Some(delta),
            group_a: RewardGroup::Mixed,
            group_b: RewardGroup::Mixed,
            tokens_a: None,
            tokens_b: None,
            fields_a: Vec::new(),
            fields_b: Vec::new(),
        }
    }

    #[test]
    fn the_normal_interval_is_mean_plus_minus_1_96_standard_errors() {
        // deltas 0, 1 (×2 each): mean 0.5, s = sqrt(1/3), half = 1.96 * s / 2.
        let (lo, hi) = normal_ci(&[0.0, 1.0, 0.0, 1.0]).unwrap();
        let half = 1.959_963_984_540_054 * (1.0f64 / 3.0).sqrt() / 2.0;
        assert!((lo - (0.5 - half)).abs() < 1e-15 && (hi - (0.5 + half)).abs() < 1e-15);
        assert_eq!(normal_ci(&[0.25; 3]), Some((0.25, 0.25)));
        assert_eq!(normal_ci(&[]), None);
    }

    #[test]
    fn beyond_the_bootstrap_bound_the_interval_is_normal_and_said_so() {
        let deltas: Vec<f64> = (0..=BOOTSTRAP_MAX_TASKS)
            .map(|k| (k % 3) as f64 - 1.0)
            .collect();
        let tasks: Vec<PairedTask> = deltas.iter().map(|&d| paired(d)).collect();
        let refs: Vec<&PairedTask> = tasks.iter().collect();
        let big = summarize(&refs, 0, 1);
        assert_eq!(big.mean_reward.ci95_method, IntervalMethod::Normal);
        assert_eq!(big.mean_reward.ci95, normal_ci(&deltas));
        let small = summarize(&refs[..BOOTSTRAP_MAX_TASKS], 0, 1);
        assert_eq!(small.mean_reward.ci95_method, IntervalMethod::Bootstrap);
        assert_ne!(
            small.mean_reward.ci95,
            normal_ci(&deltas[..BOOTSTRAP_MAX_TASKS])
        );
    }

    #[test]
    fn bootstrap_of_constant_deltas_is_that_constant() {
        assert_eq!(bootstrap_ci(&[0.25; 7], 1000, 3), Some((0.25, 0.25)));
        assert_eq!(bootstrap_ci(&[], 1000, 3), None);
    }

    #[test]
    fn bootstrap_hand_computed() {
        // Deltas [0, 0, 0, 1]: a resample's mean is k/4 with k ~ Binomial(4, 1/4).
        // P(k = 0) = 0.316 > 2.5%, so the low end is 0; P(k <= 2) = 0.949 < 97.5% <= P(k <= 3)
        // = 0.996, so the high end is 3/4.
        assert_eq!(
            bootstrap_ci(&[0.0, 0.0, 0.0, 1.0], 10_000, 0),
            Some((0.0, 0.75))
        );
        // Deterministic for a seed; another seed draws other resamples.
        let d: Vec<f64> = (0..50)
            .map(|i| ((i * 37) % 11) as f64 / 10.0 - 0.5)
            .collect();
        let a = bootstrap_ci(&d, 2000, 1);
        assert_eq!(a, bootstrap_ci(&d, 2000, 1));
        assert_ne!(a, bootstrap_ci(&d, 2000, 2));
        let (lo, hi) = a.unwrap();
        let m = d.iter().sum::<f64>() / d.len() as f64;
        assert!(lo < m && m < hi, "{lo} < {m} < {hi}");
    }
}
