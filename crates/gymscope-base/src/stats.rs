//! Summary statistics computed exactly as pandas/numpy do for upstream's profile, so results
//! agree to the last bit in ordinary cases: numpy's pairwise summation, `mean = sum / n`,
//! sample std (ddof = 1) from that mean, median as the mean of the middle values.

/// numpy's `pairwise_sum` for float64 (8 accumulators, blocks of 128, halves split on a
/// multiple of 8), as used by `np.add.reduce` on a contiguous array.
pub fn pairwise_sum(a: &[f64]) -> f64 {
    const BLOCK: usize = 128;
    let n = a.len();
    if n < 8 {
        let mut res = -0.0;
        for &x in a {
            res += x;
        }
        res
    } else if n <= BLOCK {
        let mut r = [a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7]];
        let whole = n - n % 8;
        let mut i = 8;
        while i < whole {
            for (j, acc) in r.iter_mut().enumerate() {
                *acc += a[i + j];
            }
            i += 8;
        }
        let mut res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
        for &x in &a[whole..] {
            res += x;
        }
        res
    } else {
        let mut n2 = n / 2;
        n2 -= n2 % 8;
        pairwise_sum(&a[..n2]) + pairwise_sum(&a[n2..])
    }
}

/// `np.sum`: the reduction starts from the identity 0.0, then adds the pairwise sum.
pub fn np_sum(a: &[f64]) -> f64 {
    0.0 + pairwise_sum(a)
}

/// numpy's `maximum.reduce` of float64 values (no NaN among them), the way NeMo Gym v0.7.0's
/// numpy 2.x runs it on x86-64 with AVX-512 (its `SkylakeX` dispatch; `loops_minmax.dispatch.c.src`
/// `simd_reduce_c_*`): the order of the comparisons decides which of `-0.0` and `0.0` comes out,
/// and pandas' `max`/`min` write it as it comes (docs/parity.md, "Signed zeros").
pub fn np_max(values: &[f64]) -> Option<f64> {
    np_reduce(values, |x, y| if x > y { x } else { y })
}

/// numpy's `minimum.reduce`, as [`np_max`].
pub fn np_min(values: &[f64]) -> Option<f64> {
    np_reduce(values, |x, y| if x < y { x } else { y })
}

/// pandas' `nanmax` of a column where NaN marks a missing value: the missing values are filled
/// with `-inf` in place (keeping the others' positions in numpy's lanes), `None` when all are.
pub fn nan_max(values: &[f64], scratch: &mut Vec<f64>) -> Option<f64> {
    nan_filled(values, f64::NEG_INFINITY, scratch).and_then(np_max)
}

/// pandas' `nanmin`, as [`nan_max`] with `+inf`.
pub fn nan_min(values: &[f64], scratch: &mut Vec<f64>) -> Option<f64> {
    nan_filled(values, f64::INFINITY, scratch).and_then(np_min)
}

fn nan_filled<'a>(values: &'a [f64], fill: f64, scratch: &'a mut Vec<f64>) -> Option<&'a [f64]> {
    if values.iter().all(|v| v.is_nan()) {
        return None;
    }
    if !values.iter().any(|v| v.is_nan()) {
        return Some(values);
    }
    scratch.clear();
    scratch.extend(values.iter().map(|&v| if v.is_nan() { fill } else { v }));
    Some(scratch)
}

/// The reduction: the first value starts it; the rest go through 8-lane vectors (64 values a
/// step, then 8), each lane `op(acc, new)` as x86's `maxpd`/`minpd` (the second operand on a
/// tie), the lanes folded as GCC's `_mm512_reduce_max_pd` does, the tail one by one.
fn np_reduce(values: &[f64], op: impl Fn(f64, f64) -> f64 + Copy) -> Option<f64> {
    const V: usize = 8;
    let lanes = |a: [f64; V], b: &[f64]| -> [f64; V] { std::array::from_fn(|k| op(a[k], b[k])) };
    let (&first, rest) = values.split_first()?;
    let mut at = 0;
    let mut r = first;
    if rest.len() >= V {
        let mut acc = [first; V];
        let load = |s: &[f64]| -> [f64; V] { std::array::from_fn(|k| s[k]) };
        while rest.len() - at >= 8 * V {
            let v = |k: usize| load(&rest[at + k * V..]);
            let r01 = lanes(v(0), &v(1));
            let r23 = lanes(v(2), &v(3));
            let r45 = lanes(v(4), &v(5));
            let r67 = lanes(v(6), &v(7));
            acc = lanes(acc, &lanes(lanes(r01, &r23), &lanes(r45, &r67)));
            at += 8 * V;
        }
        while rest.len() - at >= V {
            acc = lanes(acc, &rest[at..at + V]);
            at += V;
        }
        let t3: [f64; 4] = std::array::from_fn(|k| op(acc[4 + k], acc[k]));
        let t6 = [op(t3[2], t3[0]), op(t3[3], t3[1])];
        r = op(t6[0], t6[1]);
    }
    for &x in &rest[at..] {
        r = op(r, x);
    }
    Some(r)
}

/// Statistics of one column within one group. `None` is pandas' NaN (the key is left out).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ColumnStats {
    pub mean: Option<f64>,
    pub median: Option<f64>,
    pub std: Option<f64>,
    /// Number of non-missing values.
    pub count: usize,
}

/// Scratch buffers reused across groups to keep the profile loop allocation-free.
#[derive(Default)]
pub struct Scratch {
    filled: Vec<f64>,
    present: Vec<f64>,
}

impl Scratch {
    /// Computes mean, median and std of `values`, where NaN marks a missing value, as pandas'
    /// `nanmean`, `nanmedian` and `nanstd(ddof=1)` do: missing values are zero-filled in place for
    /// the sums (keeping their positions in the pairwise order) and left out of the counts.
    pub fn column_stats(&mut self, values: &[f64]) -> ColumnStats {
        self.filled.clear();
        self.present.clear();
        for &v in values {
            if v.is_nan() {
                self.filled.push(0.0);
            } else {
                self.filled.push(v);
                self.present.push(v);
            }
        }
        let count = self.present.len();
        if count == 0 {
            return ColumnStats::default();
        }
        let n = count as f64;
        let mean = np_sum(&self.filled) / n;
        let std = (count > 1).then(|| {
            for (slot, &v) in self.filled.iter_mut().zip(values) {
                *slot = if v.is_nan() {
                    0.0
                } else {
                    (mean - v) * (mean - v)
                };
            }
            (np_sum(&self.filled) / (n - 1.0)).sqrt()
        });
        self.present.sort_unstable_by(f64::total_cmp);
        let mid = count / 2;
        let median = if count % 2 == 1 {
            np_sum(&self.present[mid..=mid])
        } else {
            np_sum(&self.present[mid - 1..=mid]) / 2.0
        };
        ColumnStats {
            mean: non_nan(mean),
            median: non_nan(median),
            std: std.and_then(non_nan),
            count,
        }
    }
}

/// The statistics NeMo Gym v0.7.0 gives a column of present values in its repeat-level metrics
/// and across repeats (`reward_profile.py` `_compute_repeat_level_metrics`,
/// `_aggregate_repeat_level_metrics`): pandas' mean, median, sample std, quantiles, and a t
/// interval of the mean, as docs/parity.md describes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Spread {
    pub mean: f64,
    pub median: f64,
    /// Sample std (ddof 1); 0.0 for one value.
    pub std: f64,
    /// `std / n ** 0.5`, the power as CPython computes it.
    pub sem: f64,
    pub min: f64,
    pub max: f64,
    pub p25: f64,
    pub p75: f64,
    /// The 95 % t interval of the mean, from two values on; both ends the mean when `sem` is 0.
    pub ci: Option<(f64, f64)>,
}

impl Spread {
    /// `values` in upstream's order (it decides the sums' rounding); reordered in place. `None`
    /// for no values.
    pub fn of(values: &mut [f64]) -> Option<Spread> {
        let n = values.len();
        if n == 0 {
            return None;
        }
        // numpy's sums start from +0.0 (`np_sum`): a column of -0.0 has mean 0.0.
        let mean = np_sum(values) / n as f64;
        let std = if n == 1 {
            0.0
        } else {
            let squares: Vec<f64> = values.iter().map(|&x| (mean - x) * (mean - x)).collect();
            (np_sum(&squares) / (n - 1) as f64).sqrt()
        };
        let sem = std / crate::python_math::sqrt_as_pow(n as u64);
        // Order statistics by selection, not a sort: the sums above are done, so `values` may
        // be reordered (a repeat's columns hold a value per task).
        // Before the selections below reorder `values`: numpy's lanes decide a tie of zeros, and
        // its sort of a small array leaves tied zeros in their order (`ZeroTies`).
        let (min, max) = (
            np_min(values).unwrap_or(f64::NAN),
            np_max(values).unwrap_or(f64::NAN),
        );
        let ties = ZeroTies::of(values);
        let mid = n / 2;
        // numpy's median is the mean of the middle one or two values.
        let median = if n % 2 == 1 {
            np_sum(&[order_pair(values, mid).0])
        } else {
            let (low, high) = order_pair(values, mid - 1);
            np_sum(&[low, high.unwrap_or(low)]) / 2.0
        };
        let ci = (n >= 2).then(|| {
            if sem == 0.0 {
                (mean, mean)
            } else {
                let t = crate::python_math::t975(n as u64 - 1);
                ((-t) * sem + mean, t * sem + mean)
            }
        });
        Some(Spread {
            mean,
            median,
            std,
            sem,
            min,
            max,
            p25: linear_quantile(values, 0.25, &ties),
            p75: linear_quantile(values, 0.75, &ties),
            ci,
        })
    }
}

/// The `k`-th smallest value (`values` reordered around it) and the next one above, if any.
fn order_pair(values: &mut [f64], k: usize) -> (f64, Option<f64>) {
    let (_, kth, above) = values.select_nth_unstable_by(k, f64::total_cmp);
    let kth = *kth;
    let next = above.iter().copied().min_by(f64::total_cmp);
    (kth, next)
}

/// numpy's `percentile(…, method="linear")` of sorted values at `q` (0.25 or 0.75, for which
/// `q * (n - 1)` is exact), with numpy's two-sided interpolation.
fn linear_quantile(values: &mut [f64], q: f64, ties: &ZeroTies) -> f64 {
    let n = values.len();
    let h = q * (n - 1) as f64;
    // At or past the last index numpy takes the last value for both neighbours, and its weight
    // from index -1 (`_get_indexes`, `_get_gamma`): the sign of a -0.0 depends on it.
    let (a, b, g) = if h >= (n - 1) as f64 {
        let last = ties.at(n - 1, order_pair(values, n - 1).0);
        (last, last, h + 1.0)
    } else {
        let i = h.floor();
        let (a, b) = order_pair(values, i as usize);
        let a = ties.at(i as usize, a);
        (a, b.map_or(a, |b| ties.at(i as usize + 1, b)), h - i)
    };
    let d = b - a;
    if g >= 0.5 {
        b - d * (1.0 - g)
    } else {
        a + d * g
    }
}

/// Ties of `-0.0` and `0.0` in sorted order, as numpy's sort of a small array leaves them: in
/// their original order (its insertion sort moves nothing past an equal value). Exact up to six
/// values; for longer columns numpy's AVX-512 quickselect places them otherwise, which is not
/// copied (docs/parity.md).
struct ZeroTies {
    /// The zeros in their original order, when both signs are among them.
    zeros: Vec<f64>,
    /// How many values sort before the zeros.
    below: usize,
}

impl ZeroTies {
    fn of(values: &[f64]) -> ZeroTies {
        let zero = |negative: bool| {
            values
                .iter()
                .any(|v| *v == 0.0 && v.is_sign_negative() == negative)
        };
        // Nothing kept (no pass, no allocation) unless both signs are there.
        if !(zero(true) && zero(false)) {
            return ZeroTies {
                zeros: Vec::new(),
                below: 0,
            };
        }
        ZeroTies {
            zeros: values.iter().copied().filter(|v| *v == 0.0).collect(),
            below: values.iter().filter(|v| **v < 0.0).count(),
        }
    }

    /// The value at sorted position `k`, `v` as selected.
    fn at(&self, k: usize, v: f64) -> f64 {
        match k.checked_sub(self.below) {
            Some(i) if v == 0.0 => self.zeros.get(i).copied().unwrap_or(v),
            _ => v,
        }
    }
}

fn non_nan(v: f64) -> Option<f64> {
    (!v.is_nan()).then_some(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Columns of -0.0 and 0.0 (a bit per value, 1 for -0.0) with the sign numpy 2.5's
    /// `max()`/`min()` gave on NeMo Gym v0.7.0's machine (AVX-512): the last value of a short
    /// array, the lanes' order beyond 8.
    #[test]
    fn max_and_min_of_signed_zeros_follow_numpys_lanes() {
        let cases = [
            ("10", '+'),
            ("01", '-'),
            ("100010000", '+'),
            ("001000100", '-'),
            ("11000100001000011", '-'),
            ("0010001000011111110000111110010101100111110011001111101100100100111001", '-'),
            ("11011111000000001011001110011111011000010010000010001011110011111000111000100101101010001001100111011110000101010110010101101110000001011000", '+'),
        ];
        for (bits, sign) in cases {
            let v: Vec<f64> = bits
                .chars()
                .map(|c| if c == '1' { -0.0 } else { 0.0 })
                .collect();
            for got in [np_max(&v).unwrap(), np_min(&v).unwrap()] {
                assert_eq!(got.is_sign_negative(), sign == '-', "{bits}");
            }
        }
        // The quartiles of a small column: tied zeros stay in their order, as numpy's sort
        // leaves them (pandas: [-0.0, 0.0, -0.0] has p25 0.0; [0.0, -0.0, -0.0] has p75 -0.0).
        let q = |v: &mut [f64]| {
            let s = Spread::of(v).unwrap();
            (s.p25.is_sign_negative(), s.p75.is_sign_negative())
        };
        assert_eq!(q(&mut [-0.0, 0.0, -0.0]), (false, false));
        assert_eq!(q(&mut [0.0, -0.0, -0.0]), (false, true));
        assert_eq!(q(&mut [-0.0, -0.0, 0.0]), (true, false));
        // A missing value is -inf/+inf in its place, not left out.
        let mut scratch = Vec::new();
        let col = [-0.0, f64::NAN, 0.0];
        assert!(nan_max(&col, &mut scratch).unwrap().is_sign_positive());
        assert_eq!(nan_max(&[f64::NAN], &mut scratch), None);
        assert_eq!(np_max(&[1.0, 3.0, -2.0]), Some(3.0));
        assert_eq!(np_min(&[1.0, 3.0, -2.0]), Some(-2.0));
    }

    #[test]
    fn constant_point_one_matches_numpy() {
        // numpy: np.mean([0.1]*3) == 0.10000000000000002, np.std(ddof=1) == 1.6996749443881478e-17
        let mut s = Scratch::default();
        let st = s.column_stats(&[0.1, 0.1, 0.1]);
        assert_eq!(st.mean, Some(0.10000000000000002));
        assert_eq!(st.std, Some(1.6996749443881478e-17));
        assert_eq!(st.median, Some(0.1));
    }

    #[test]
    fn pairwise_sum_matches_numpy_on_long_input() {
        // numpy 2.4: np.sum([(i*0.37)%1.3 + 1/(i+3) for i in range(n)]); a naive loop differs.
        let data = |n: usize| {
            (0..n)
                .map(|i| (i as f64 * 0.37) % 1.3 + 1.0 / (i as f64 + 3.0))
                .collect::<Vec<_>>()
        };
        assert_eq!(np_sum(&data(1000)), 659.0874678655327);
        assert_eq!(np_sum(&data(300)), 202.3892973977131);
        assert_ne!(data(1000).iter().sum::<f64>(), 659.0874678655327);
    }

    #[test]
    fn missing_values_and_single_values() {
        let mut s = Scratch::default();
        let st = s.column_stats(&[f64::NAN, 2.0, f64::NAN]);
        assert_eq!(
            (st.mean, st.median, st.std, st.count),
            (Some(2.0), Some(2.0), None, 1)
        );
        assert_eq!(s.column_stats(&[f64::NAN]), ColumnStats::default());
        let st = s.column_stats(&[1.0, 4.0, 2.0, 3.0]);
        assert_eq!(st.median, Some(2.5));
        assert_eq!(
            s.column_stats(&[-0.0]).mean.map(f64::is_sign_negative),
            Some(false)
        );
    }

    #[test]
    fn blackjack_fixture_std() {
        let mut s = Scratch::default();
        let st = s.column_stats(&[-1.0, 1.0, 1.0, -1.0, 1.0]);
        assert_eq!(st.std, Some(1.0954451150103324));
        assert_eq!(st.mean, Some(0.2));
    }

    #[test]
    fn spread_is_pandas_and_scipys() {
        // pandas 3.1.1 / scipy 1.18.1: s = pd.Series(v); s.mean(), s.median(), s.std(ddof=1),
        // std / len(v) ** 0.5, s.quantile(.25), s.quantile(.75), stats.t.interval(.95, 6, m, se)
        let mut v = [0.1, 0.7, 0.3, 1.0, 0.25, 0.9, 0.2];
        let s = Spread::of(&mut v).unwrap();
        assert_eq!(
            (s.mean, s.median, s.std, s.sem, s.p25, s.p75),
            (
                0.4928571428571428,
                0.3,
                0.3656370826249386,
                0.1381978272469662,
                0.225,
                0.8
            )
        );
        assert_eq!(s.ci, Some((0.15469924156405485, 0.8310150441502309)));
        let one = Spread::of(&mut [2.0]).unwrap();
        assert_eq!((one.std, one.sem, one.ci), (0.0, 0.0, None));
        let same = Spread::of(&mut [3.0, 3.0]).unwrap();
        assert_eq!(same.ci, Some((3.0, 3.0)));
        assert_eq!(Spread::of(&mut []), None);
        // pandas: Series([-0.0]).quantile(.25) is -0.0, Series([-0.0] * 5).quantile(.75) is 0.0.
        let p = |v: &mut [f64]| Spread::of(v).unwrap().p25.to_bits();
        assert_eq!(p(&mut [-0.0]), (-0.0f64).to_bits());
        assert_eq!(
            Spread::of(&mut [-0.0; 5]).unwrap().p75.to_bits(),
            0.0f64.to_bits()
        );
        // numpy starts its sums from +0.0: the mean and median of -0.0 are 0.0, the min -0.0.
        let zeros = Spread::of(&mut [-0.0, -0.0, -0.0]).unwrap();
        assert_eq!(
            (
                zeros.mean.to_bits(),
                zeros.median.to_bits(),
                zeros.min.to_bits()
            ),
            (0.0f64.to_bits(), 0.0f64.to_bits(), (-0.0f64).to_bits())
        );
    }
}
