//! The binned-mean overlay: mean reward against the x field in quantile bins (equal numbers of
//! points), each with a 95% interval — Wilson's score interval when rewards are binary (it stays
//! inside [0, 1] and is honest at small n), else the normal interval of the mean.

use crate::stats::np_sum;

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
fn bin_points(mut pts: Vec<(f64, f64)>, bins: usize) -> (Vec<BinMean>, Interval) {
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
    // Unstable (pdqsort, deterministic): a third faster at a million points, and ties share a
    // bin whatever their order.
    pts.sort_unstable_by(|a, b| a.0.total_cmp(&b.0));
    let n = pts.len();
    let mut out = Vec::new();
    let mut start = 0;
    for b in 1..=bins {
        let mut end = (n * b / bins).max(start);
        // Ties at the edge join this bin.
        while end < n && end > start && pts[end].0 == pts[end - 1].0 {
            end += 1;
        }
        if end == start {
            continue;
        }
        let part = &pts[start..end];
        let ys: Vec<f64> = part.iter().map(|p| p.1).collect();
        let xs: Vec<f64> = part.iter().map(|p| p.0).collect();
        let count = part.len();
        let mean = np_sum(&ys) / count as f64;
        let (lo, hi) = if binary {
            wilson(mean, count)
        } else {
            normal(&ys, mean)
        };
        out.push(BinMean {
            x_lo: part[0].0,
            x_hi: part[count - 1].0,
            x: np_sum(&xs) / count as f64,
            mean,
            lo,
            hi,
            n: count,
        });
        start = end;
    }
    (out, interval)
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

fn normal(ys: &[f64], mean: f64) -> (f64, f64) {
    if ys.len() < 2 {
        return (mean, mean);
    }
    let sq: Vec<f64> = ys.iter().map(|y| (y - mean) * (y - mean)).collect();
    let sd = (np_sum(&sq) / (ys.len() - 1) as f64).sqrt();
    let half = Z * sd / (ys.len() as f64).sqrt();
    (mean - half, mean + half)
}

#[cfg(test)]
mod tests {
    use super::*;

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
