//! Power from the runs themselves (README, "Comparing runs", "Power"): the minimum detectable
//! effect at 80% power for the tasks and repeats these runs have, and the repeats per task (or
//! the tasks) needed to detect a given effect.
//!
//! The paired delta of task i, `d_i = mean_b,i − mean_a,i`, has variance `σ_b² + σ_w² (1/r_a +
//! 1/r_b)`: the between-task part `σ_b²` (tasks move by different amounts) and the within-task
//! part (rollout noise, `σ_w²` per rollout, averaged over `r` repeats). `σ_w²` is estimated by
//! pooling each task's sample variance of its rewards (tasks with two rewards or more, both
//! runs); the within part at these repeats is `W = σ_w² · mean(1/r_a + 1/r_b)`; the between part
//! is `max(0, s_d² − W)`, `s_d²` the observed variance of the deltas. With `k = z(1 − α/2) +
//! z(0.8)` (the normal test the MDE assumes):
//!
//! - minimum detectable effect `MDE = k · sqrt(s_d² / n)`;
//! - at `R` repeats per task on each side, `Var d = σ_b² + 2σ_w²/R`, so detecting `D` needs
//!   `R = ⌈2σ_w² / (n D²/k² − σ_b²)⌉`; when `n D²/k² ≤ σ_b²` no number of repeats suffices, and
//!   the tasks needed at these repeats are `⌈k² s_d² / D²⌉`.

use super::verdict::normal_quantile;
use serde::{Deserialize, Serialize};

/// The power the MDE is computed for.
pub const POWER: f64 = 0.8;

/// One paired task's input to the power: its delta and each side's numeric rewards.
pub struct TaskSample<'a> {
    pub delta: f64,
    pub rewards_a: &'a [f64],
    pub rewards_b: &'a [f64],
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Power {
    /// Tasks with a delta.
    pub tasks: usize,
    /// Mean numeric rewards per task, over both runs.
    pub repeats: f64,
    /// `s_d²`, the observed variance of the deltas (ddof 1); `None` under two tasks.
    pub variance: Option<f64>,
    /// `σ_w²` per rollout; `None` when no task has two rewards on a side.
    pub within_per_rollout: Option<f64>,
    /// `W` at these repeats, and `σ_b²`.
    pub within: Option<f64>,
    pub between: Option<f64>,
    /// `None` when the variance is zero or unknown.
    pub mde: Option<f64>,
    /// The asked effect and what detecting it needs.
    pub effect: Option<f64>,
    pub needed: Option<Needed>,
}

/// What detecting `--effect D` at 80% power needs.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind", content = "count")]
pub enum Needed {
    /// These runs already detect it (MDE ≤ D).
    Already,
    /// Repeats per task on each side, at these tasks.
    Repeats(u64),
    /// More repeats cannot reach it (between-task variance alone is too large, or the
    /// within-task part is unknown): tasks needed at these repeats.
    Tasks(u64),
    /// Past [`PLANNABLE`] tasks or repeats: the effect is too small to plan a run for (a
    /// count that large was a saturated cast, `18446744073709551615 tasks`).
    TooSmall,
}

/// The most tasks, or repeats per task, a plan is given in.
pub const PLANNABLE: f64 = 1e12;

/// A count a plan can be given in, or `TooSmall`.
fn planned(count: f64, needed: fn(u64) -> Needed) -> Needed {
    if count.is_finite() && count <= PLANNABLE {
        needed(count as u64)
    } else {
        Needed::TooSmall
    }
}

/// `z(1 − α/2) + z(power)`.
pub fn k_factor(alpha: f64) -> f64 {
    normal_quantile(1.0 - alpha / 2.0) + normal_quantile(POWER)
}

/// The power figures of one candidate against the baseline.
pub fn power(tasks: &[TaskSample], alpha: f64, effect: Option<f64>) -> Power {
    let n = tasks.len();
    let mut out = Power {
        tasks: n,
        effect,
        ..Power::default()
    };
    if n == 0 {
        return out;
    }
    let counts: f64 = tasks
        .iter()
        .map(|t| (t.rewards_a.len() + t.rewards_b.len()) as f64)
        .sum();
    out.repeats = counts / (2 * n) as f64;
    let (mut pooled, mut parts) = (0.0, 0usize);
    for t in tasks {
        for r in [t.rewards_a, t.rewards_b] {
            if let Some(v) = sample_variance(r) {
                pooled += v;
                parts += 1;
            }
        }
    }
    out.within_per_rollout = (parts > 0).then(|| pooled / parts as f64);
    let inverse_repeats = tasks
        .iter()
        .map(|t| 1.0 / t.rewards_a.len().max(1) as f64 + 1.0 / t.rewards_b.len().max(1) as f64)
        .sum::<f64>()
        / n as f64;
    let deltas: Vec<f64> = tasks.iter().map(|t| t.delta).collect();
    out.variance = sample_variance(&deltas);
    let Some(var) = out.variance else {
        return out;
    };
    out.within = out.within_per_rollout.map(|w| w * inverse_repeats);
    out.between = out.within.map(|w| (var - w).max(0.0));
    if var <= 0.0 {
        // Every delta is the same: no spread to detect anything against (said, not divided by).
        return out;
    }
    let k = k_factor(alpha);
    let mde = k * (var / n as f64).sqrt();
    out.mde = Some(mde);
    let Some(d) = effect.map(f64::abs).filter(|d| *d > 0.0) else {
        return out;
    };
    let tasks_needed = || planned((k * k * var / (d * d)).ceil(), Needed::Tasks);
    out.needed = Some(if mde <= d {
        Needed::Already
    } else {
        match (out.within_per_rollout, out.between) {
            (Some(w), Some(b)) if w > 0.0 => {
                let room = n as f64 * d * d / (k * k) - b;
                if room > 0.0 {
                    planned((2.0 * w / room).ceil().max(1.0), Needed::Repeats)
                } else {
                    tasks_needed()
                }
            }
            _ => tasks_needed(),
        }
    });
    out
}

/// Sample variance (ddof 1) of the finite values; `None` under two.
fn sample_variance(values: &[f64]) -> Option<f64> {
    let v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
    if v.len() < 2 {
        return None;
    }
    let m = v.iter().sum::<f64>() / v.len() as f64;
    Some(v.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / (v.len() - 1) as f64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::verdict::sign_flip_p;

    /// A standard normal draw (Box–Muller).
    fn gauss(rng: &mut fastrand::Rng) -> f64 {
        let u = rng.f64().max(1e-300);
        (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * rng.f64()).cos()
    }

    /// One simulated comparison: `n` tasks whose true delta is `effect + σ_b·N(0,1)`, each side
    /// `r` rollouts of noise `σ_w`. Returns each task's delta and rewards.
    fn simulate(
        rng: &mut fastrand::Rng,
        n: usize,
        r: usize,
        effect: f64,
        (sb, sw): (f64, f64),
    ) -> Vec<(f64, Vec<f64>, Vec<f64>)> {
        (0..n)
            .map(|_| {
                let level = gauss(rng);
                let shift = effect + sb * gauss(rng);
                let a: Vec<f64> = (0..r).map(|_| level + sw * gauss(rng)).collect();
                let b: Vec<f64> = (0..r).map(|_| level + shift + sw * gauss(rng)).collect();
                let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
                (mean(&b) - mean(&a), a, b)
            })
            .collect()
    }

    fn samples(sim: &[(f64, Vec<f64>, Vec<f64>)]) -> Vec<TaskSample<'_>> {
        sim.iter()
            .map(|(d, a, b)| TaskSample {
                delta: *d,
                rewards_a: a,
                rewards_b: b,
            })
            .collect()
    }

    /// Of `runs` simulated comparisons with a true `effect`, the share the sign-flip test (500
    /// patterns: the p-value's resolution 1/501 is far finer than α) calls different at α 0.05.
    fn simulated_power(seed: u64, n: usize, r: usize, effect: f64, sd: (f64, f64)) -> f64 {
        let mut rng = fastrand::Rng::with_seed(seed);
        let runs = 2000;
        let detected = (0..runs)
            .filter(|&i| {
                let sim = simulate(&mut rng, n, r, effect, sd);
                let d: Vec<f64> = sim.iter().map(|t| t.0).collect();
                sign_flip_p(&d, 500, i).unwrap().p <= 0.05
            })
            .count();
        detected as f64 / runs as f64
    }

    /// The MDE and the repeats needed, estimated from one seeded pilot comparison, give the
    /// nominal 80% power (±3 points) over 2,000 simulated comparisons of 50 tasks.
    #[test]
    fn mde_and_repeats_needed_have_the_nominal_power_in_simulation() {
        let (n, r, sd) = (50, 4, (0.2, 0.5));
        let mut rng = fastrand::Rng::with_seed(11);
        // A large pilot, so the estimate of the variance parts is close to the truth
        // (σ_b² = 0.04, σ_w² = 0.25; W = 0.25 · (1/4 + 1/4) = 0.125).
        let pilot = simulate(&mut rng, 4000, r, 0.0, sd);
        let big = power(&samples(&pilot), 0.05, None);
        let (w, b) = (big.within_per_rollout.unwrap(), big.between.unwrap());
        assert!(
            (w - 0.25).abs() < 0.01 && (b - 0.04).abs() < 0.01,
            "{w} {b}"
        );
        // The 50-task MDE from the parts: k · sqrt((σ_b² + 2σ_w²/R) / n).
        let k = k_factor(0.05);
        let mde = k * ((b + 2.0 * w / r as f64) / n as f64).sqrt();
        let hit = simulated_power(1, n, r, mde, sd);
        assert!((hit - POWER).abs() <= 0.03, "power at the MDE {mde}: {hit}");

        // An effect too small for 4 repeats: the repeats it needs at 50 tasks give 80% power.
        let room = n as f64 * 0.14 * 0.14 / (k * k) - b;
        let want = (2.0 * w / room).ceil() as usize;
        assert!(want > r, "{want}");
        let hit = simulated_power(2, n, want, 0.14, sd);
        // Rounding the repeats up gives at least the nominal power.
        assert!(
            (POWER - 0.03..=POWER + 0.08).contains(&hit),
            "{want} repeats: {hit}"
        );
        // `power` itself answers the same from the pilot (its n, so the effect scaled to keep
        // n D² the same).
        let estimated = power(&samples(&pilot), 0.05, Some(0.14 * (50f64 / 4000.0).sqrt()));
        assert_eq!(estimated.needed, Some(Needed::Repeats(want as u64)));
    }

    #[test]
    fn zero_variance_is_said_not_divided_by() {
        let same = [1.0, 1.0];
        let t: Vec<TaskSample> = (0..5)
            .map(|_| TaskSample {
                delta: 0.0,
                rewards_a: &same,
                rewards_b: &same,
            })
            .collect();
        let p = power(&t, 0.05, Some(0.1));
        assert_eq!(p.variance, Some(0.0));
        assert_eq!((p.mde, p.needed), (None, None));
        assert_eq!(p.within_per_rollout, Some(0.0));
    }

    /// Ten tasks of one rollout a side: five flipped from 0 to 1, five unchanged at 0.
    fn one_rollout_tasks() -> Vec<TaskSample<'static>> {
        const ZERO: &[f64] = &[0.0];
        const ONE: &[f64] = &[1.0];
        (0..10)
            .map(|i| TaskSample {
                delta: if i % 2 == 0 { 1.0 } else { 0.0 },
                rewards_a: ZERO,
                rewards_b: if i % 2 == 0 { ONE } else { ZERO },
            })
            .collect()
    }

    #[test]
    fn one_rollout_per_task_asks_for_tasks_not_repeats() {
        let t = one_rollout_tasks();
        let p = power(&t, 0.05, Some(0.1));
        assert_eq!(p.within_per_rollout, None);
        // s_d² = 10/36 (five 1s, five 0s, ddof 1); k² s_d² / 0.01, rounded up.
        let k = k_factor(0.05);
        let want = (k * k * (10.0 / 36.0) / 0.01).ceil() as u64;
        assert_eq!(p.needed, Some(Needed::Tasks(want)));
        assert!((p.mde.unwrap() - k * (10.0f64 / 36.0 / 10.0).sqrt()).abs() < 1e-12);
    }

    #[test]
    fn an_effect_too_small_to_plan_for_is_said_so() {
        // `--effect 1e-10` asked for 18446744073709551615 tasks (a saturated cast).
        let t = one_rollout_tasks();
        assert_eq!(power(&t, 0.05, Some(1e-10)).needed, Some(Needed::TooSmall));
        assert!(matches!(
            power(&t, 0.05, Some(1e-3)).needed,
            Some(Needed::Tasks(n)) if n < 10_000_000
        ));
    }
}
