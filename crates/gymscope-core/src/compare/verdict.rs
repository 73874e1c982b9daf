//! Whether a candidate's difference from the baseline is real: a two-sided p-value from a
//! seeded paired sign-flip permutation test over tasks, Holm's correction across the candidates
//! of one metric, and the verdict at `alpha` (README, "Comparing runs", "Verdict").
//!
//! Under "no difference" each task's delta is as likely to have either sign (the two runs are
//! exchangeable within a task), so the observed `|Σ d|` is compared with `|Σ ±d|` over sign
//! patterns: all of them when there are at most [`EXACT_MAX_TASKS`] tasks, else
//! [`PERMUTATIONS`] seeded ones, and above [`PERMUTATION_MAX_TASKS`] the normal approximation of
//! that same distribution (mean 0, variance `Σ d²`), said where the p-value is shown.

/// Random sign patterns drawn when there are too many tasks to try them all.
pub const PERMUTATIONS: usize = 10_000;

/// Tasks up to which every one of the `2^n` sign patterns is tried (`2^13 = 8,192` is fewer
/// than [`PERMUTATIONS`]): the p-value is then exact.
pub const EXACT_MAX_TASKS: usize = 13;

/// Tasks up to which sign patterns are drawn. The cost is permutations × tasks additions (as
/// the bootstrap's, [`super::BOOTSTRAP_MAX_TASKS`]); with more tasks than this `Σ ±d` is normal
/// to well within the Monte Carlo noise (Lindeberg's central limit theorem).
pub const PERMUTATION_MAX_TASKS: usize = 25_000;

/// How a p-value was computed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PMethod {
    /// Every sign pattern (at most [`EXACT_MAX_TASKS`] tasks).
    Exact,
    /// [`PERMUTATIONS`] seeded sign patterns: `(1 + at least as extreme) / (1 + drawn)`.
    Permutation,
    /// The normal approximation, above [`PERMUTATION_MAX_TASKS`] tasks.
    Normal,
}

impl PMethod {
    pub fn as_str(self) -> &'static str {
        match self {
            PMethod::Exact => "exact",
            PMethod::Permutation => "permutation",
            PMethod::Normal => "normal",
        }
    }
}

/// A two-sided p-value and how it was computed.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct PValue {
    pub p: f64,
    pub method: PMethod,
}

/// The paired sign-flip permutation test of `deltas` (candidate − baseline per task); `None`
/// without a delta. All deltas zero gives p = 1 whatever the method.
pub fn sign_flip_p(deltas: &[f64], permutations: usize, seed: u64) -> Option<PValue> {
    let n = deltas.len();
    if n == 0 {
        return None;
    }
    let observed = deltas.iter().sum::<f64>().abs();
    let scale: f64 = deltas.iter().map(|d| d.abs()).sum();
    if scale == 0.0 {
        let method = if n <= EXACT_MAX_TASKS {
            PMethod::Exact
        } else if n > PERMUTATION_MAX_TASKS {
            PMethod::Normal
        } else {
            PMethod::Permutation
        };
        return Some(PValue { p: 1.0, method });
    }
    // A sign pattern giving the same |sum| in another order of additions must count as "at
    // least as extreme": sums differ by rounding, at most about n ε Σ|d|.
    let bar = observed - 1e-9 * scale;
    if n <= EXACT_MAX_TASKS {
        let patterns = 1u32 << n;
        let extreme = (0..patterns)
            .filter(|&bits| flipped_sum(deltas, u64::from(bits)).abs() >= bar)
            .count();
        return Some(PValue {
            p: extreme as f64 / f64::from(patterns),
            method: PMethod::Exact,
        });
    }
    if n > PERMUTATION_MAX_TASKS || permutations == 0 {
        let sd = deltas.iter().map(|d| d * d).sum::<f64>().sqrt();
        return Some(PValue {
            p: erfc(observed / sd / std::f64::consts::SQRT_2).min(1.0),
            method: PMethod::Normal,
        });
    }
    // Each group of four tasks has its 16 signed sums in a table (16 × 8 bytes per four tasks:
    // 800 KB at the bound, in cache), so a pattern costs a lookup per four tasks, not four
    // additions: 0.28 s instead of 1.0 s at 25,000 tasks × 10,000 patterns (a standalone
    // measurement of the loop, `rustc -O`, on the 2-core machine of the README's figures).
    let table: Vec<f64> = deltas
        .chunks(4)
        .flat_map(|group| (0..16u64).map(move |m| flipped_sum(group, m)))
        .collect();
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut extreme = 0usize;
    for _ in 0..permutations {
        // 64 signs per random number: 16 groups of four tasks.
        let mut sums = [0.0f64; 4];
        for rows in table.chunks(256) {
            let bits = rng.u64(..);
            for (j, row) in rows.chunks_exact(16).enumerate() {
                sums[j & 3] += row[((bits >> (4 * j)) & 15) as usize];
            }
        }
        if ((sums[0] + sums[1]) + (sums[2] + sums[3])).abs() >= bar {
            extreme += 1;
        }
    }
    Some(PValue {
        p: (1 + extreme) as f64 / (1 + permutations) as f64,
        method: PMethod::Permutation,
    })
}

/// `Σ ±d`, delta `i` negated when bit `i` of `bits` is set (at most 64 deltas). Four running
/// sums, so the additions do not wait on each other (the test's cost is these additions).
fn flipped_sum(deltas: &[f64], bits: u64) -> f64 {
    let mut sums = [0.0f64; 4];
    for (i, d) in deltas.iter().enumerate() {
        sums[i & 3] += f64::from_bits(d.to_bits() ^ (((bits >> i) & 1) << 63));
    }
    (sums[0] + sums[1]) + (sums[2] + sums[3])
}

/// Holm's step-down adjustment of `p` (one metric, one p-value per candidate; `None` is left
/// out of the family): the i-th smallest of m becomes `max over j ≤ i of min(1, (m − j + 1) p_j)`.
pub fn holm(p: &[Option<f64>]) -> Vec<Option<f64>> {
    let mut order: Vec<usize> = (0..p.len()).filter(|&i| p[i].is_some()).collect();
    order.sort_by(|&x, &y| p[x].unwrap_or(1.0).total_cmp(&p[y].unwrap_or(1.0)));
    let m = order.len();
    let mut out = vec![None; p.len()];
    let mut running: f64 = 0.0;
    for (j, &i) in order.iter().enumerate() {
        let adjusted = ((m - j) as f64 * p[i].unwrap_or(1.0)).min(1.0);
        running = running.max(adjusted);
        out[i] = Some(running);
    }
    out
}

/// Which way a metric moved, by its Holm-adjusted p-value at `alpha`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    Up,
    Down,
    NoDifference,
}

impl Verdict {
    pub fn of(delta: Option<f64>, p_adjusted: Option<f64>, alpha: f64) -> Verdict {
        match (delta, p_adjusted) {
            (Some(d), Some(p)) if p <= alpha && d > 0.0 => Verdict::Up,
            (Some(d), Some(p)) if p <= alpha && d < 0.0 => Verdict::Down,
            _ => Verdict::NoDifference,
        }
    }

    /// `better` / `worse` for the reward (higher is better); `higher` / `lower` for a metric
    /// whose good direction is not known (tokens, other fields).
    pub fn word(self, higher_is_better: bool) -> &'static str {
        match (self, higher_is_better) {
            (Verdict::Up, true) => "better",
            (Verdict::Down, true) => "worse",
            (Verdict::Up, false) => "higher",
            (Verdict::Down, false) => "lower",
            (Verdict::NoDifference, _) => "no detectable difference",
        }
    }
}

/// The complementary error function (Numerical Recipes' Chebyshev fit, fractional error below
/// 1.2e-7 everywhere: ample for a p-value).
pub fn erfc(x: f64) -> f64 {
    let z = x.abs();
    let t = 1.0 / (1.0 + 0.5 * z);
    let poly = -z * z - 1.265_512_23
        + t * (1.000_023_68
            + t * (0.374_091_96
                + t * (0.096_784_18
                    + t * (-0.186_288_06
                        + t * (0.278_868_07
                            + t * (-1.135_203_98
                                + t * (1.488_515_87 + t * (-0.822_152_23 + t * 0.170_872_77))))))));
    let r = t * poly.exp();
    if x >= 0.0 {
        r
    } else {
        2.0 - r
    }
}

/// The standard normal's quantile (Acklam's rational approximation, relative error below
/// 1.2e-9), for `0 < q < 1`.
pub fn normal_quantile(q: f64) -> f64 {
    const A: [f64; 6] = [
        -3.969_683_028_665_376e1,
        2.209_460_984_245_205e2,
        -2.759_285_104_469_687e2,
        1.383_577_518_672_69e2,
        -3.066_479_806_614_716e1,
        2.506_628_277_459_239,
    ];
    const B: [f64; 5] = [
        -5.447_609_879_822_406e1,
        1.615_858_368_580_409e2,
        -1.556_989_798_598_866e2,
        6.680_131_188_771_972e1,
        -1.328_068_155_288_572e1,
    ];
    const C: [f64; 6] = [
        -7.784_894_002_430_293e-3,
        -3.223_964_580_411_365e-1,
        -2.400_758_277_161_838,
        -2.549_732_539_343_734,
        4.374_664_141_464_968,
        2.938_163_982_698_783,
    ];
    const D: [f64; 4] = [
        7.784_695_709_041_462e-3,
        3.224_671_290_700_398e-1,
        2.445_134_137_142_996,
        3.754_408_661_907_416,
    ];
    let tail = |q: f64| {
        let r = (-2.0 * q.ln()).sqrt();
        (((((C[0] * r + C[1]) * r + C[2]) * r + C[3]) * r + C[4]) * r + C[5])
            / ((((D[0] * r + D[1]) * r + D[2]) * r + D[3]) * r + 1.0)
    };
    if q < 0.02425 {
        tail(q)
    } else if q > 1.0 - 0.02425 {
        -tail(1.0 - q)
    } else {
        let u = q - 0.5;
        let r = u * u;
        (((((A[0] * r + A[1]) * r + A[2]) * r + A[3]) * r + A[4]) * r + A[5]) * u
            / (((((B[0] * r + B[1]) * r + B[2]) * r + B[3]) * r + B[4]) * r + 1.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exact(d: &[f64]) -> f64 {
        sign_flip_p(d, PERMUTATIONS, 0).unwrap().p
    }

    #[test]
    fn exact_p_values_by_hand() {
        // Σ = 3; only +++ and −−− reach |3|: 2 of 8 patterns.
        assert_eq!(exact(&[1.0, 1.0, 1.0]), 0.25);
        // Σ = 10; only the all-same patterns: 2 of 16.
        assert_eq!(exact(&[1.0, 2.0, 3.0, 4.0]), 0.125);
        // Σ = 2; ±1 ±1 ±2 gives 4, 2, 2, 0, 0, −2, −2, −4: six of eight reach |2|.
        assert_eq!(exact(&[1.0, -1.0, 2.0]), 0.75);
        // Rounding must not hide a tie: 0.1 + 0.2 − 0.3 against its reorderings.
        assert_eq!(exact(&[0.1, 0.2, -0.3]), 1.0);
        assert_eq!(
            sign_flip_p(&[1.0], 10, 0).unwrap().method,
            PMethod::Exact,
            "one task"
        );
        assert_eq!(sign_flip_p(&[], 10, 0), None);
    }

    #[test]
    fn identical_runs_have_p_one_by_every_method() {
        for n in [3, 40, PERMUTATION_MAX_TASKS + 1] {
            let p = sign_flip_p(&vec![0.0; n], 100, 1).unwrap();
            assert_eq!(p.p, 1.0, "{n} tasks, {:?}", p.method);
        }
    }

    #[test]
    fn drawn_patterns_agree_with_the_full_enumeration() {
        // 16 tasks: 65,536 patterns enumerated here, 10,000 drawn by the test.
        let d: Vec<f64> = (0..16).map(|i| ((i * 7) % 5) as f64 - 1.6).collect();
        let observed = d.iter().sum::<f64>().abs();
        let all = (0..1u64 << 16)
            .filter(|&b| flipped_sum(&d, b).abs() >= observed - 1e-9)
            .count() as f64
            / 65_536.0;
        let drawn = sign_flip_p(&d, PERMUTATIONS, 7).unwrap();
        assert_eq!(drawn.method, PMethod::Permutation);
        // Monte Carlo standard error at p ≈ all: sqrt(p(1−p)/10,000) ≤ 0.005; 4 of them.
        assert!((drawn.p - all).abs() < 0.02, "{} vs {all}", drawn.p);
        assert_eq!(Some(drawn), sign_flip_p(&d, PERMUTATIONS, 7), "seeded");
    }

    #[test]
    fn the_normal_approximation_matches_a_hand_computed_z() {
        // n above the bound, deltas ±1 with Σ = 200: z = 200 / sqrt(n), p = erfc(z / √2).
        let n = PERMUTATION_MAX_TASKS + 200;
        let d: Vec<f64> = (0..n)
            .map(|i| if i < n / 2 + 100 { 1.0 } else { -1.0 })
            .collect();
        let p = sign_flip_p(&d, PERMUTATIONS, 0).unwrap();
        assert_eq!(p.method, PMethod::Normal);
        let z = 200.0 / (n as f64).sqrt();
        assert!((p.p - erfc(z / std::f64::consts::SQRT_2)).abs() < 1e-12);
        // z = 200 / 158.745 = 1.2599 → p = 2 (1 − 0.8962) ≈ 0.2077 (a normal table).
        assert!((p.p - 0.2077).abs() < 5e-4, "{}", p.p);
    }

    #[test]
    fn holm_by_hand() {
        // Sorted 0.01, 0.03, 0.04 → 3×0.01, 2×0.03, max(0.06, 1×0.04).
        let adj = holm(&[Some(0.01), Some(0.04), Some(0.03)]);
        let want = [0.03, 0.06, 0.06];
        for (a, w) in adj.iter().zip(want) {
            assert!((a.unwrap() - w).abs() < 1e-15, "{adj:?}");
        }
        // A missing p-value is not in the family (m = 2): 2×0.02, then max(0.04, 1×0.6).
        assert_eq!(
            holm(&[Some(0.6), None, Some(0.02)]),
            vec![Some(0.6), None, Some(0.04)]
        );
        // Capped at 1: 2×0.6 → 1, then max(1, 0.7).
        assert_eq!(holm(&[Some(0.7), Some(0.6)]), vec![Some(1.0), Some(1.0)]);
        assert_eq!(holm(&[Some(0.3)]), vec![Some(0.3)]);
    }

    #[test]
    fn verdicts_follow_the_adjusted_p() {
        assert_eq!(Verdict::of(Some(0.1), Some(0.01), 0.05), Verdict::Up);
        assert_eq!(Verdict::of(Some(-0.1), Some(0.05), 0.05), Verdict::Down);
        assert_eq!(
            Verdict::of(Some(-0.1), Some(0.051), 0.05),
            Verdict::NoDifference
        );
        assert_eq!(
            Verdict::of(Some(0.0), Some(1.0), 0.05).word(true),
            "no detectable difference"
        );
        assert_eq!(Verdict::Down.word(true), "worse");
        assert_eq!(Verdict::Down.word(false), "lower");
    }

    #[test]
    fn normal_functions_against_tables() {
        assert!((normal_quantile(0.975) - 1.959_963_985).abs() < 1e-8);
        assert!((normal_quantile(0.8) - 0.841_621_234).abs() < 1e-8);
        assert!((normal_quantile(0.005) + 2.575_829_304).abs() < 1e-8);
        assert!((erfc(1.959_963_985 / std::f64::consts::SQRT_2) - 0.05).abs() < 1e-7);
        assert!((erfc(0.0) - 1.0).abs() < 1e-7);
        assert!((erfc(-1.0) - 1.842_700_79).abs() < 1e-6);
    }
}
