//! The binned-mean overlay: mean reward against the x field in quantile bins (equal numbers of
//! points), each with a 95% interval — Wilson's score interval when rewards are binary (it stays
//! inside [0, 1] and is honest at small n), else the normal interval of the mean.

/// Bins of the overlay.
pub const BINS: usize = 10;
/// Fewer points than this per bin make fewer bins, and fewer than two bins no curve: a mean of
/// one or two points is noise, and its interval spans the whole axis.
pub const MIN_PER_BIN: usize = 5;
/// z for a two-sided 95% interval.
const Z: f64 = 1.959_963_984_540_054;

/// Which interval a bin's `lo`..`hi` is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Interval {
    /// Wilson score interval of a proportion (binary rewards).
    Wilson,
    /// Mean ± z · s / √n (s the sample standard deviation).
    Normal,
}

impl Interval {
    pub fn label(self) -> &'static str {
        match self {
            Interval::Wilson => "95% Wilson interval",
            Interval::Normal => "95% interval of the mean",
        }
    }
}

/// One bin: the points with x in [`x_lo`, `x_hi`].
#[derive(Clone, Debug, PartialEq)]
pub struct BinMean {
    pub x_lo: f64,
    pub x_hi: f64,
    /// The mean x of the bin's points (where the line passes).
    pub x: f64,
    pub mean: f64,
    pub lo: f64,
    pub hi: f64,
    pub n: usize,
}

/// Mean of `ys` in up to `bins` quantile bins of `xs` (fewer when there are not
/// [`MIN_PER_BIN`] points a bin; none below two bins), over the points where both are finite and
/// `keep(i)` holds. Points with equal x stay in one bin, so bins may hold unequal counts.
pub fn binned_means(
    xs: &[f64],
    ys: &[f64],
    bins: usize,
    keep: impl Fn(usize) -> bool,
) -> (Vec<BinMean>, Interval) {
    let pts: Vec<(f64, f64)> = (0..xs.len().min(ys.len()))
        .filter(|&i| xs[i].is_finite() && ys[i].is_finite() && keep(i))
        .map(|i| (xs[i], ys[i]))
        .collect();
    bin_points(pts, bins)
}

/// [`binned_means`] of the (x, y) points kept, in their order.
///
/// The bins are those of sorting the points by x and cutting at every `n·b/bins`-th point, ties at
/// a cut joining the bin below: bin `b` holds the points with `u(b-1) < x ≤ u(b)`, where `u(b)` is
/// the x at the cut. Only the cut values are selected (`select_nth_unstable`, linear), not the
/// whole run sorted: at a million points the sort was most of an axis change's redraw.
fn bin_points(pts: Vec<(f64, f64)>, bins: usize) -> (Vec<BinMean>, Interval) {
    let binary = pts.iter().all(|(_, y)| *y == 0.0 || *y == 1.0);
    let interval = if binary {
        Interval::Wilson
    } else {
        Interval::Normal
    };
    let bins = bins.min(pts.len() / MIN_PER_BIN);
    if bins < 2 {
        return (Vec::new(), interval);
    }
    let n = pts.len();
    let mut xs: Vec<f64> = pts.iter().map(|p| p.0).collect();
    let ranks: Vec<usize> = (1..=bins).map(|b| n * b / bins - 1).collect();
    let mut cuts = vec![0.0; bins];
    select_ranks(&mut xs, 0, &ranks, &mut cuts);
    // Each point to the first bin whose cut is at or above its x; sums in one pass (a second
    // for the spread of continuous rewards), no per-bin copies.
    let bin_of = |x: f64| cuts.partition_point(|&c| c < x);
    let mut acc = vec![Acc::default(); bins];
    for &(x, y) in &pts {
        acc[bin_of(x)].add(x, y);
    }
    if !binary {
        for &(x, y) in &pts {
            let a = &mut acc[bin_of(x)];
            let d = y - a.sum_y / a.n as f64;
            a.sq_dev += d * d;
        }
    }
    let out = acc
        .into_iter()
        .filter(|a| a.n > 0)
        .map(|a| {
            let count = a.n as f64;
            let mean = a.sum_y / count;
            let (lo, hi) = if binary {
                wilson(mean, a.n)
            } else {
                normal(a.sq_dev, a.n, mean)
            };
            BinMean {
                x_lo: a.x_lo,
                x_hi: a.x_hi,
                x: a.sum_x / count,
                mean,
                lo,
                hi,
                n: a.n,
            }
        })
        .collect();
    (out, interval)
}

/// One bin's running sums.
#[derive(Clone, Copy)]
struct Acc {
    n: usize,
    sum_x: f64,
    sum_y: f64,
    /// Σ (y − mean)², filled by a second pass for continuous rewards.
    sq_dev: f64,
    x_lo: f64,
    x_hi: f64,
}

impl Default for Acc {
    fn default() -> Self {
        Acc {
            n: 0,
            sum_x: 0.0,
            sum_y: 0.0,
            sq_dev: 0.0,
            x_lo: f64::INFINITY,
            x_hi: f64::NEG_INFINITY,
        }
    }
}

impl Acc {
    fn add(&mut self, x: f64, y: f64) {
        self.n += 1;
        self.sum_x += x;
        self.sum_y += y;
        self.x_lo = self.x_lo.min(x);
        self.x_hi = self.x_hi.max(x);
    }
}

/// Writes into `out[i]` the value of rank `ranks[i]` (ascending) in sorted order, where `xs` holds
/// the ranks from `offset` on: partitions around the middle rank and recurses on each side.
fn select_ranks(xs: &mut [f64], offset: usize, ranks: &[usize], out: &mut [f64]) {
    if ranks.is_empty() {
        return;
    }
    let mid = ranks.len() / 2;
    let k = ranks[mid] - offset;
    let (below, at, above) = xs.select_nth_unstable_by(k, f64::total_cmp);
    out[mid] = *at;
    let (out_below, rest) = out.split_at_mut(mid);
    select_ranks(below, offset, &ranks[..mid], out_below);
    select_ranks(above, offset + k + 1, &ranks[mid + 1..], &mut rest[1..]);
}

/// One agent's bins (`None`: all points, when no agent is known) and their interval.
pub type AgentBins = (Option<usize>, Vec<BinMean>, Interval);

/// [`binned_means`] of `ys` against `xs` per agent (`agent[i]`: point `i`'s agent among
/// `agents`, NaN unknown), or of all points when no point has a known agent: the overlay the
/// app and the report draw.
pub fn per_agent(xs: &[f64], ys: &[f64], agent: Option<&[f64]>, agents: usize) -> Vec<AgentBins> {
    let known = agent.filter(|a| agents > 0 && a.iter().any(|v| v.is_finite()));
    let Some(agent) = known else {
        let (bins, interval) = binned_means(xs, ys, BINS, |_| true);
        return vec![(None, bins, interval)];
    };
    // Each agent's points in one pass (not one pass per agent), in point order as
    // `binned_means` would keep them.
    let mut pts: Vec<Vec<(f64, f64)>> = vec![Vec::new(); agents];
    for (i, (&x, &y)) in xs.iter().zip(ys).enumerate() {
        let a = agent.get(i).copied().unwrap_or(f64::NAN);
        if x.is_finite() && y.is_finite() && a >= 0.0 && a.fract() == 0.0 {
            if let Some(p) = pts.get_mut(a as usize) {
                p.push((x, y));
            }
        }
    }
    pts.into_iter()
        .enumerate()
        .map(|(a, pts)| {
            let (bins, interval) = bin_points(pts, BINS);
            (Some(a), bins, interval)
        })
        .collect()
}

/// The 95% Wilson score interval of a proportion `p` observed in `n` trials.
pub fn wilson(p: f64, n: usize) -> (f64, f64) {
    if n == 0 {
        return (0.0, 1.0);
    }
    let n = n as f64;
    let z2 = Z * Z;
    let centre = (p + z2 / (2.0 * n)) / (1.0 + z2 / n);
    let half = Z / (1.0 + z2 / n) * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt();
    ((centre - half).max(0.0), (centre + half).min(1.0))
}

/// The 95% normal interval of a mean of `n` values whose squared deviations sum to `sq_dev`.
fn normal(sq_dev: f64, n: usize, mean: f64) -> (f64, f64) {
    if n < 2 {
        return (mean, mean);
    }
    let sd = (sq_dev / (n - 1) as f64).sqrt();
    let half = Z * sd / (n as f64).sqrt();
    (mean - half, mean + half)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The bins by sorting every point (the definition), to check the selection against.
    fn sorted_bins(mut pts: Vec<(f64, f64)>, bins: usize) -> Vec<(usize, f64, f64, f64)> {
        pts.sort_by(|a, b| a.0.total_cmp(&b.0));
        let n = pts.len();
        let (mut out, mut start) = (Vec::new(), 0);
        for b in 1..=bins {
            let mut end = (n * b / bins).max(start);
            while end < n && end > start && pts[end].0 == pts[end - 1].0 {
                end += 1;
            }
            if end > start {
                let part = &pts[start..end];
                let mean = part.iter().map(|p| p.1).sum::<f64>() / part.len() as f64;
                out.push((part.len(), part[0].0, part[part.len() - 1].0, mean));
            }
            start = end;
        }
        out
    }

    #[test]
    fn selected_cuts_give_the_sorted_bins() {
        let mut seed = 7_u64;
        let mut next = move |m: u64| {
            seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            (seed >> 33) % m
        };
        for (n, spread) in [(5000, 3), (5000, 40), (777, 1000), (100_000, 12), (64, 2)] {
            let pts: Vec<(f64, f64)> = (0..n)
                .map(|_| (next(spread) as f64 * 37.5, next(2) as f64))
                .collect();
            let bins = BINS.min(pts.len() / MIN_PER_BIN);
            let got = bin_points(pts.clone(), BINS).0;
            let want = sorted_bins(pts, bins);
            assert_eq!(got.len(), want.len(), "n {n} spread {spread}");
            for (g, w) in got.iter().zip(&want) {
                assert_eq!(
                    (g.n, g.x_lo, g.x_hi),
                    (w.0, w.1, w.2),
                    "n {n} spread {spread}"
                );
                assert!((g.mean - w.3).abs() < 1e-12);
            }
        }
    }

    #[test]
    fn wilson_matches_hand_computed_values() {
        // 8 of 10: the textbook interval 0.4902 .. 0.9433.
        let (lo, hi) = wilson(0.8, 10);
        assert!(
            (lo - 0.4902).abs() < 1e-4 && (hi - 0.9433).abs() < 1e-4,
            "{lo} {hi}"
        );
        // 0 of 20 stays inside [0, 1] with a positive upper bound (0.1611).
        let (lo, hi) = wilson(0.0, 20);
        assert_eq!(lo, 0.0);
        assert!((hi - 0.1611).abs() < 1e-4, "{hi}");
        assert_eq!(wilson(1.0, 0), (0.0, 1.0));
    }

    #[test]
    fn quantile_bins_hold_equal_counts_and_their_means() {
        // x = 0..100, reward 1 for x < 30: bins of 10, the first three all successes.
        let xs: Vec<f64> = (0..100).map(f64::from).collect();
        let ys: Vec<f64> = xs.iter().map(|&x| f64::from(u8::from(x < 30.0))).collect();
        let (bins, interval) = binned_means(&xs, &ys, BINS, |_| true);
        assert_eq!(interval, Interval::Wilson);
        assert_eq!(bins.len(), 10);
        assert!(bins.iter().all(|b| b.n == 10));
        assert_eq!((bins[0].x_lo, bins[0].x_hi, bins[0].x), (0.0, 9.0, 4.5));
        assert_eq!(bins[2].mean, 1.0);
        assert_eq!(bins[3].mean, 0.0);
        assert!(bins[2].lo > 0.6 && bins[2].hi > 0.999_999);
        // `keep` selects points (one agent): only even x.
        let (half, _) = binned_means(&xs, &ys, BINS, |i| i % 2 == 0);
        assert_eq!(half.iter().map(|b| b.n).sum::<usize>(), 50);
    }

    #[test]
    fn ties_share_a_bin_and_continuous_rewards_get_the_normal_interval() {
        let xs = [1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 2.0, 2.0, 2.0, 2.0, 2.0, 3.0];
        let ys = [
            0.5,
            0.7,
            0.5,
            0.7,
            0.5,
            0.7,
            0.2,
            0.2,
            0.2,
            0.2,
            0.2,
            f64::NAN,
        ];
        // 11 finite points: two bins of at least MIN_PER_BIN, the six tied at x = 1 together.
        let (bins, interval) = binned_means(&xs, &ys, 4, |_| true);
        assert_eq!(interval, Interval::Normal);
        assert_eq!(bins.len(), 2);
        assert_eq!(bins[0].n, 6);
        assert!((bins[0].mean - 0.6).abs() < 1e-12);
        // s = 0.109545, half = 1.96 × s / √6 = 0.087654.
        assert!((bins[0].hi - bins[0].mean - 0.087_654).abs() < 1e-4);
        assert_eq!((bins[1].lo, bins[1].hi), (0.2, 0.2));
        assert!(binned_means(&[], &[], 10, |_| true).0.is_empty());
        // Nine points make no curve: a bin of four is noise.
        assert!(binned_means(&xs[..9], &ys[..9], 10, |_| true).0.is_empty());
    }
}
