//! The one plot model both faces draw from: the app's canvas and the report's SVG and script.
//! Given the same values they get the same axes (domain, round ticks, titles), the same
//! histogram bars and the same default x field, so an exported report opens as the app showed it.
//!
//! - [`Scale`]: a value domain (the data's range, padded) and its round ticks (1, 2 or 5 × 10^k);
//! - [`axis_title`]: a field name as an axis title (`output_tokens` → `output tokens`);
//! - [`default_x`]: which field the reward is plotted against first;
//! - [`histogram`]: rollouts per reward value, or per bin when values are many;
//! - [`agent_colour`]: one colour per agent, in order of appearance;
//! - [`jitter`]: discrete rewards spread by a fixed offset per rollout;
//! - [`binned`]: the binned-mean overlay (quantile bins, 95% intervals, Wilson's for 0/1);
//! - [`brush`]: a dragged rectangle and the tasks it selects;
//! - [`raster`]: the app's scatter drawn into pixels (agent colours, hidden agents, brush),
//!   with picking;
//! - [`svg`]: a scatter as a standalone SVG file (the plots' download).

pub mod binned;
pub mod brush;
pub mod jitter;
pub mod keyboard;
pub mod raster;
pub mod svg;
pub mod value_axis;

/// A value domain and its tick values.
#[derive(Clone, Debug, PartialEq)]
pub struct Scale {
    pub lo: f64,
    pub hi: f64,
    pub ticks: Vec<f64>,
}

/// Ticks on an x axis (wider) and on a y axis.
pub const X_TICKS: usize = 6;
pub const Y_TICKS: usize = 5;

impl Scale {
    /// The range of the finite `values`, padded by 4% (±0.5 when flat; 0..1 when there are
    /// none) so no point sits on the frame, with about `ticks` round ticks inside.
    pub fn covering(values: impl IntoIterator<Item = f64>, ticks: usize) -> Scale {
        let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
        for v in values.into_iter().filter(|v| v.is_finite()) {
            lo = lo.min(v);
            hi = hi.max(v);
        }
        let (lo, hi) = if !lo.is_finite() {
            (0.0, 1.0)
        } else if hi > lo {
            let pad = (hi - lo) * 0.04;
            (lo - pad, hi + pad)
        } else {
            (lo - 0.5, hi + 0.5)
        };
        Scale::between(lo, hi, ticks)
    }

    /// A given domain with about `ticks` round ticks inside.
    pub fn between(lo: f64, hi: f64, ticks: usize) -> Scale {
        Scale {
            lo,
            hi,
            ticks: round_ticks(lo, hi, ticks),
        }
    }

    /// Where `v` falls between pixel positions `from` (at `lo`) and `to` (at `hi`).
    pub fn at(&self, v: f64, from: f64, to: f64) -> f64 {
        from + (v - self.lo) / (self.hi - self.lo) * (to - from)
    }
}

/// The scales of a scatter of `ys` against `xs`, over the points where both are known (the
/// app and the report filter the same way, so they get the same axes).
pub fn scatter_scales(xs: &[f64], ys: &[f64]) -> (Scale, Scale) {
    let both = || {
        xs.iter()
            .zip(ys)
            .filter(|(x, y)| x.is_finite() && y.is_finite())
    };
    (
        Scale::covering(both().map(|(x, _)| *x), X_TICKS),
        Scale::covering(both().map(|(_, y)| *y), Y_TICKS),
    )
}

/// About `count` round tick values (1, 2 or 5 × 10^k steps) within [min, max], with no
/// floating-point residue (0.6, not 0.6000000000000001).
pub fn round_ticks(min: f64, max: f64, count: usize) -> Vec<f64> {
    if !(min.is_finite() && max.is_finite()) || max <= min || count == 0 {
        return vec![];
    }
    let raw = (max - min) / count as f64;
    let exp = raw.log10().floor();
    let mag = 10f64.powf(exp);
    let step = [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|m| m * mag)
        .find(|s| *s >= raw * (1.0 - 1e-9))
        .unwrap_or(10.0 * mag);
    // Ticks are k × step for integer k; computing each from k (not by repeated addition) and
    // rounding to the step's decimals keeps them exact.
    let decimals = (-exp).max(0.0) as i32 + 1;
    let scale = 10f64.powi(decimals);
    let first = (min / step).ceil() as i64;
    let last = (max / step + 1e-9).floor() as i64;
    (first..=last)
        .map(|k| {
            let t = ((k as f64 * step) * scale).round() / scale;
            if t == 0.0 {
                0.0
            } else {
                t
            }
        })
        .collect()
}

/// A field name as an axis title: underscores read as spaces.
pub fn axis_title(field: &str) -> String {
    field.replace('_', " ")
}

/// The field the reward is plotted against first: output tokens when the run has them, else
/// total or input tokens, else any token count, else the first field that is not the reward.
pub fn default_x<S: AsRef<str>>(fields: &[S]) -> Option<usize> {
    let find = |name: &str| fields.iter().position(|f| f.as_ref() == name);
    find("output_tokens")
        .or_else(|| find("total_tokens"))
        .or_else(|| find("input_tokens"))
        .or_else(|| fields.iter().position(|f| f.as_ref().contains("tokens")))
        .or_else(|| fields.iter().position(|f| f.as_ref() != "reward"))
}

/// Most distinct values that get a bar each; more are binned.
pub const MAX_VALUE_BARS: usize = 20;
/// Bins when values are many.
pub const BINS: usize = 20;

/// One bar: the values in [`lo`, `hi`) (a single value when `lo == hi`).
#[derive(Clone, Debug, PartialEq)]
pub struct Bar {
    pub lo: f64,
    pub hi: f64,
    pub count: u64,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Histogram {
    pub bars: Vec<Bar>,
    /// Equal-width bins (true) or one bar per distinct value (false).
    pub binned: bool,
}

impl Histogram {
    pub fn max_count(&self) -> u64 {
        self.bars.iter().map(|b| b.count).max().unwrap_or(0)
    }

    /// The bar a value falls in (`None` for a value outside every bar, or not finite).
    pub fn bin_of(&self, v: f64) -> Option<usize> {
        if !v.is_finite() {
            return None;
        }
        if self.binned {
            let (first, last) = (self.bars.first()?, self.bars.last()?);
            if v < first.lo || v > last.hi {
                return None;
            }
            let width = first.hi - first.lo;
            Some((((v - first.lo) / width) as usize).min(self.bars.len() - 1))
        } else {
            self.bars.iter().position(|b| b.lo == v)
        }
    }

    /// Where a threshold `x` falls across the bars, as a share of their width (0 left, 1
    /// right), for a line marking it: binned bars by value; a bar per value at the boundary
    /// between the values below `x` and the rest, with `x` itself on the left side when
    /// `inclusive_left` (a band's lower end, `< x` rules) and on the right otherwise (a band's
    /// upper end, `> x` rules). `None` without bars or for a value that is not finite.
    pub fn mark_fraction(&self, x: f64, inclusive_left: bool) -> Option<f64> {
        if !x.is_finite() || self.bars.is_empty() {
            return None;
        }
        if self.binned {
            let (lo, hi) = (self.bars[0].lo, self.bars[self.bars.len() - 1].hi);
            return Some(((x - lo) / (hi - lo)).clamp(0.0, 1.0));
        }
        let before = self
            .bars
            .iter()
            .filter(|b| b.lo < x || (!inclusive_left && b.lo == x))
            .count();
        Some(before as f64 / self.bars.len() as f64)
    }

    /// Whether the bars are too many for their counts to sit side by side in a plot's width
    /// (a count of three digits is wider than a twentieth of 480 px): the app then sets them
    /// upright.
    pub fn crowded(&self) -> bool {
        self.bars.len() > 10
    }

    /// How often a bar gets a label below it, so labels do not overlap.
    pub fn label_every(&self) -> usize {
        if self.binned {
            4
        } else if self.bars.len() <= 10 {
            1
        } else {
            2
        }
    }
}

/// Rollouts per reward value: one bar per value when there are at most [`MAX_VALUE_BARS`]
/// distinct values (typical 0/1 rewards), else [`BINS`] equal bins over the range.
pub fn histogram(values: impl IntoIterator<Item = f64>) -> Histogram {
    histogram_with(values, MAX_VALUE_BARS, BINS)
}

/// [`histogram`] with other limits: a bar per value up to `value_bars` distinct values, else
/// `bins` equal bins.
pub fn histogram_with(
    values: impl IntoIterator<Item = f64>,
    value_bars: usize,
    bins: usize,
) -> Histogram {
    let mut values: Vec<f64> = values.into_iter().filter(|v| v.is_finite()).collect();
    if values.is_empty() {
        return Histogram::default();
    }
    values.sort_by(f64::total_cmp);
    let mut bars: Vec<Bar> = Vec::new();
    for &v in &values {
        match bars.last_mut() {
            Some(b) if b.lo == v => b.count += 1,
            _ => bars.push(Bar {
                lo: v,
                hi: v,
                count: 1,
            }),
        }
        if bars.len() > value_bars {
            break;
        }
    }
    if bars.len() <= value_bars {
        return Histogram {
            bars,
            binned: false,
        };
    }
    let (lo, hi) = (values[0], values[values.len() - 1]);
    let width = (hi - lo) / bins as f64;
    let mut bars: Vec<Bar> = (0..bins)
        .map(|b| Bar {
            lo: lo + b as f64 * width,
            hi: lo + (b + 1) as f64 * width,
            count: 0,
        })
        .collect();
    for v in values {
        bars[(((v - lo) / width) as usize).min(bins - 1)].count += 1;
    }
    Histogram { bars, binned: true }
}

/// A categorical palette of 20 colours, repeated past 20 agents: each at least 3:1 against the
/// page's light and dark backgrounds (WCAG's contrast for graphics; Okabe–Ito's orange, sky blue
/// and yellow were 2.2, 2.2 and 1.3:1 on the light one), every two at least 20 apart in CIELAB
/// (ΔE*76) and as far from the selected task's crimson and the brush's grey (`raster`). The
/// first seven are the palette's colours before it grew (a run of few agents keeps its colours);
/// the other 13 were each picked as the colour farthest from all before it, within the contrast.
pub const PALETTE: [[u8; 3]; 20] = [
    [0, 114, 178],
    [153, 112, 0],
    [0, 130, 95],
    [170, 68, 153],
    [118, 118, 118],
    [148, 103, 189],
    [200, 82, 0],
    [144, 8, 248],
    [0, 168, 0],
    [248, 0, 216],
    [0, 88, 240],
    [208, 112, 120],
    [72, 112, 0],
    [248, 0, 136],
    [0, 160, 184],
    [248, 0, 0],
    [192, 96, 248],
    [144, 144, 88],
    [72, 136, 248],
    [0, 168, 88],
];

/// The colour of the `i`-th agent (in the order the run lists its agents).
pub fn agent_colour(i: usize) -> [u8; 3] {
    PALETTE[i % PALETTE.len()]
}

/// `#rrggbb` for SVG and CSS.
pub fn hex(c: [u8; 3]) -> String {
    format!("#{:02x}{:02x}{:02x}", c[0], c[1], c[2])
}

#[cfg(test)]
mod tests {
    use super::*;

    /// WCAG's contrast ratio of two sRGB colours.
    fn contrast(a: [u8; 3], b: [u8; 3]) -> f64 {
        let lum = |c: [u8; 3]| {
            let ch = |v: u8| {
                let v = f64::from(v) / 255.0;
                if v <= 0.039_28 {
                    v / 12.92
                } else {
                    ((v + 0.055) / 1.055).powf(2.4)
                }
            };
            0.2126 * ch(c[0]) + 0.7152 * ch(c[1]) + 0.0722 * ch(c[2])
        };
        let (x, y) = (lum(a), lum(b));
        (x.max(y) + 0.05) / (x.min(y) + 0.05)
    }

    #[test]
    fn every_agent_colour_stands_out_on_both_backgrounds() {
        // style/main.css's --bg, light and dark, and the report's white.
        for bg in [[0xfb, 0xfb, 0xfd], [0x15, 0x18, 0x1e], [255, 255, 255]] {
            for c in PALETTE {
                assert!(
                    contrast(c, bg) >= 3.0,
                    "{c:?} on {bg:?}: {}",
                    contrast(c, bg)
                );
            }
        }
    }

    /// CIELAB (D65) of an sRGB colour.
    fn lab(c: [u8; 3]) -> [f64; 3] {
        let lin = |v: u8| {
            let v = f64::from(v) / 255.0;
            if v <= 0.040_45 {
                v / 12.92
            } else {
                ((v + 0.055) / 1.055).powf(2.4)
            }
        };
        let (r, g, b) = (lin(c[0]), lin(c[1]), lin(c[2]));
        let x = (0.4124 * r + 0.3576 * g + 0.1805 * b) / 0.950_47;
        let y = 0.2126 * r + 0.7152 * g + 0.0722 * b;
        let z = (0.0193 * r + 0.1192 * g + 0.9505 * b) / 1.088_83;
        let f = |t: f64| {
            if t > 0.008_856 {
                t.cbrt()
            } else {
                7.787 * t + 16.0 / 116.0
            }
        };
        [
            116.0 * f(y) - 16.0,
            500.0 * (f(x) - f(y)),
            200.0 * (f(y) - f(z)),
        ]
    }

    fn delta_e(a: [u8; 3], b: [u8; 3]) -> f64 {
        let (a, b) = (lab(a), lab(b));
        ((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2) + (a[2] - b[2]).powi(2)).sqrt()
    }

    #[test]
    fn sixteen_agents_and_more_get_colours_apart_from_each_other() {
        // Issue 57: 16 agents shared about 8 colours.
        let colours: Vec<[u8; 3]> = (0..20).map(agent_colour).collect();
        let fixed = [
            [220, 20, 60],   // raster::HIGHLIGHT, the selected task
            [150, 150, 150], // raster::OUTSIDE, points outside a brush
        ];
        for (i, a) in colours.iter().enumerate() {
            for b in &colours[i + 1..] {
                assert!(
                    delta_e(*a, *b) >= 20.0,
                    "{a:?} and {b:?}: {}",
                    delta_e(*a, *b)
                );
            }
            // The grey agent (the palette's fifth, kept from before) is the one near the brush's grey.
            for f in fixed.iter().filter(|_| i != 4) {
                assert!(
                    delta_e(*a, *f) >= 20.0,
                    "{a:?} and {f:?}: {}",
                    delta_e(*a, *f)
                );
            }
        }
        assert_eq!(agent_colour(20), agent_colour(0));
    }

    #[test]
    fn a_threshold_mark_falls_between_the_values_it_separates() {
        // Pass rates of eight rollouts: values 0, 0.25, 0.5, 1 (four bars).
        let h = histogram([0.0, 0.25, 0.25, 0.5, 1.0]);
        assert!(!h.binned);
        assert_eq!(h.mark_fraction(0.25, true), Some(0.25)); // band from 0.25: left of its bar
        assert_eq!(h.mark_fraction(0.25, false), Some(0.5)); // band to 0.25: right of it
        assert_eq!(h.mark_fraction(0.3, true), Some(0.5));
        assert_eq!(h.mark_fraction(2.0, true), Some(1.0));
        assert_eq!(h.mark_fraction(f64::NAN, true), None);
        let binned = histogram_with((0..100).map(f64::from), 5, 10);
        assert!(binned.binned);
        assert_eq!(binned.mark_fraction(49.5, true), Some(0.5));
        assert_eq!(binned.mark_fraction(-5.0, false), Some(0.0));
        assert_eq!(Histogram::default().mark_fraction(0.5, true), None);
    }

    #[test]
    fn ticks_are_round_numbers() {
        assert_eq!(round_ticks(0.0, 1.0, 5), [0.0, 0.2, 0.4, 0.6, 0.8, 1.0]);
        assert_eq!(round_ticks(0.0, 1000.0, 4), [0.0, 500.0, 1000.0]);
        // The report once labelled 304, 564.5, 825, …: the same range now gets round ticks.
        assert_eq!(
            round_ticks(304.0, 1346.0, 6),
            [400.0, 600.0, 800.0, 1000.0, 1200.0]
        );
        assert_eq!(round_ticks(-0.04, 1.04, 5), [0.0, 0.5, 1.0]);
        assert!(round_ticks(1.0, 1.0, 5).is_empty());
    }

    #[test]
    fn scale_pads_the_data_range() {
        let s = Scale::covering([0.0, 1.0, f64::NAN], Y_TICKS);
        assert!((s.lo + 0.04).abs() < 1e-12 && (s.hi - 1.04).abs() < 1e-12);
        assert_eq!(s.ticks.first(), Some(&0.0));
        assert_eq!(s.ticks.last(), Some(&1.0));
        assert_eq!(Scale::covering([3.0], 5).lo, 2.5);
        assert_eq!(Scale::covering([], 5).hi, 1.0);
        assert_eq!(s.at(s.lo, 10.0, 20.0), 10.0);
    }

    #[test]
    fn default_x_prefers_output_tokens() {
        assert_eq!(
            default_x(&["reward", "input_tokens", "output_tokens"]),
            Some(2)
        );
        assert_eq!(
            default_x(&["reward", "input_tokens", "total_tokens"]),
            Some(2)
        );
        assert_eq!(default_x(&["reward", "cached_tokens"]), Some(1));
        assert_eq!(default_x(&["reward", "accuracy"]), Some(1));
        assert_eq!(default_x(&["reward"]), None);
        assert_eq!(default_x::<&str>(&[]), None);
    }

    #[test]
    fn histogram_bars_per_value_or_bins() {
        let h = histogram([0.0, 1.0, 1.0, f64::NAN]);
        assert!(!h.binned);
        assert_eq!(
            h.bars,
            [
                Bar {
                    lo: 0.0,
                    hi: 0.0,
                    count: 1
                },
                Bar {
                    lo: 1.0,
                    hi: 1.0,
                    count: 2
                }
            ]
        );
        let h = histogram((0..100).map(f64::from));
        assert!(h.binned);
        assert_eq!(h.bars.len(), BINS);
        assert_eq!(h.bars.iter().map(|b| b.count).sum::<u64>(), 100);
        assert_eq!(h.bars[0].count, 5);
        assert_eq!(h.max_count(), 5);
        assert!(histogram([]).bars.is_empty());
        assert_eq!(h.bin_of(0.0), Some(0));
        assert_eq!(h.bin_of(99.0), Some(BINS - 1));
        assert_eq!(h.bin_of(f64::NAN), None);
        let v = histogram([0.0, 1.0]);
        assert_eq!((v.bin_of(1.0), v.bin_of(0.5)), (Some(1), None));
    }

    #[test]
    fn colours_cycle() {
        assert_eq!(agent_colour(0), agent_colour(PALETTE.len()));
        assert_ne!(agent_colour(0), agent_colour(1));
        assert_eq!(hex([0, 114, 178]), "#0072b2");
    }
}
