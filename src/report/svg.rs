//! The static plots, as inline SVG: readable without JavaScript (the script draws the full,
//! interactive scatter over it). Presentation attributes only, never `style=`, which the page's
//! Content-Security-Policy would block. Hover titles (`<title>`) work without script too.

use super::html::escape;
use super::Points;
use crate::table::short_number;
use std::fmt::Write;

/// The static scatter draws at most this many rollouts (every k-th, deterministically).
pub(super) const STATIC_POINTS: usize = 2_000;

const W: f64 = 640.0;
const H: f64 = 300.0;
const LEFT: f64 = 60.0;
const RIGHT: f64 = 12.0;
const TOP: f64 = 12.0;
const BOTTOM: f64 = 40.0;

struct Axis {
    lo: f64,
    hi: f64,
}

impl Axis {
    fn of(values: impl Iterator<Item = f64>) -> Axis {
        let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
        for v in values {
            lo = lo.min(v);
            hi = hi.max(v);
        }
        if !lo.is_finite() {
            (lo, hi) = (0.0, 1.0);
        }
        if lo == hi {
            (lo, hi) = (lo - 0.5, hi + 0.5);
        }
        Axis { lo, hi }
    }
    fn at(&self, v: f64, from: f64, to: f64) -> f64 {
        from + (v - self.lo) / (self.hi - self.lo) * (to - from)
    }
}

fn frame(out: &mut String, label: &str, x: &Axis, x_label: &str, y: &Axis, y_label: &str) {
    let _ = write!(
        out,
        r##"<svg class="plot" viewBox="0 0 {W} {H}" width="{W}" height="{H}" role="img" aria-label="{}"><rect x="{LEFT}" y="{TOP}" width="{}" height="{}" fill="none" stroke="#999"/>"##,
        escape(label),
        W - LEFT - RIGHT,
        H - TOP - BOTTOM
    );
    for i in 0..=4 {
        let f = i as f64 / 4.0;
        let (xv, yv) = (x.lo + f * (x.hi - x.lo), y.lo + f * (y.hi - y.lo));
        let px = x.at(xv, LEFT, W - RIGHT);
        let py = y.at(yv, H - BOTTOM, TOP);
        let _ = write!(
            out,
            r##"<text x="{px:.1}" y="{}" font-size="11" text-anchor="middle" fill="#666">{}</text><text x="{}" y="{:.1}" font-size="11" text-anchor="end" fill="#666">{}</text>"##,
            H - BOTTOM + 14.0,
            escape(&short_number(xv)),
            LEFT - 4.0,
            py + 4.0,
            escape(&short_number(yv)),
        );
    }
    let _ = write!(
        out,
        r##"<text x="{}" y="{}" font-size="12" text-anchor="middle">{}</text><text x="14" y="{}" font-size="12" text-anchor="middle" transform="rotate(-90 14 {})">{}</text>"##,
        (LEFT + W - RIGHT) / 2.0,
        H - 6.0,
        escape(x_label),
        (TOP + H - BOTTOM) / 2.0,
        (TOP + H - BOTTOM) / 2.0,
        escape(y_label),
    );
}

/// Reward against field `x` for up to [`STATIC_POINTS`] rollouts, each titled with its key.
pub(super) fn scatter(p: &Points, x: usize) -> String {
    let xs = &p.values[x];
    let both: Vec<usize> = (0..p.len())
        .filter(|&i| p.reward[i].is_some() && xs[i].is_some())
        .collect();
    let ax = Axis::of(both.iter().map(|&i| xs[i].unwrap_or(0.0)));
    let ay = Axis::of(both.iter().map(|&i| p.reward[i].unwrap_or(0.0)));
    let mut out = String::new();
    frame(
        &mut out,
        "reward by rollout",
        &ax,
        &p.fields[x],
        &ay,
        "reward",
    );
    let stride = both.len().div_ceil(STATIC_POINTS).max(1);
    out.push_str(r##"<g fill="#3366cc" fill-opacity="0.45">"##);
    for &i in both.iter().step_by(stride) {
        let (xv, yv) = (xs[i].unwrap_or(0.0), p.reward[i].unwrap_or(0.0));
        let _ = write!(
            out,
            r#"<circle cx="{:.1}" cy="{:.1}" r="2.5"><title>task {} · rollout {}</title></circle>"#,
            ax.at(xv, LEFT, W - RIGHT),
            ay.at(yv, H - BOTTOM, TOP),
            p.task[i],
            p.rollout[i]
        );
    }
    out.push_str("</g></svg>");
    out
}

/// How many rollouts the static scatter shows (the caption says so when it is a sample).
pub(super) fn scatter_count(p: &Points, x: usize) -> (usize, usize) {
    let both = (0..p.len())
        .filter(|&i| p.reward[i].is_some() && p.values[x][i].is_some())
        .count();
    (both.div_ceil(both.div_ceil(STATIC_POINTS).max(1)), both)
}

/// Rollouts per reward value: one bar per value when there are at most 20 distinct values
/// (typical 0/1 rewards), else 20 equal bins.
pub(super) fn histogram(rewards: &[Option<f64>]) -> String {
    let mut values: Vec<f64> = rewards
        .iter()
        .flatten()
        .copied()
        .filter(|v| v.is_finite())
        .collect();
    values.sort_by(f64::total_cmp);
    let mut distinct = values.clone();
    distinct.dedup();
    // (label, count); binned bars are labelled by their lower edge, every fourth one, so the
    // labels do not overlap (the full range is in each bar's title).
    let binned = distinct.len() > 20;
    let bars: Vec<(String, usize)> = if !binned {
        distinct
            .iter()
            .map(|&d| (short_number(d), values.iter().filter(|&&v| v == d).count()))
            .collect()
    } else {
        let (lo, hi) = (values[0], values[values.len() - 1]);
        let width = (hi - lo) / 20.0;
        let mut counts = [0usize; 20];
        for &v in &values {
            counts[(((v - lo) / width) as usize).min(19)] += 1;
        }
        counts
            .iter()
            .enumerate()
            .map(|(b, &c)| {
                let from = lo + b as f64 * width;
                (
                    format!("{}–{}", short_number(from), short_number(from + width)),
                    c,
                )
            })
            .collect()
    };
    let max = bars.iter().map(|b| b.1).max().unwrap_or(0).max(1);
    let ay = Axis {
        lo: 0.0,
        hi: max as f64,
    };
    let mut out = String::new();
    let _ = write!(
        out,
        r##"<svg class="plot" viewBox="0 0 {W} {H}" width="{W}" height="{H}" role="img" aria-label="reward histogram"><line x1="{LEFT}" y1="{}" x2="{}" y2="{}" stroke="#999"/>"##,
        H - BOTTOM,
        W - RIGHT,
        H - BOTTOM
    );
    let slot = (W - LEFT - RIGHT) / bars.len().max(1) as f64;
    for (b, (label, count)) in bars.iter().enumerate() {
        let x = LEFT + b as f64 * slot;
        let y = ay.at(*count as f64, H - BOTTOM, TOP + 14.0);
        let _ = write!(
            out,
            r##"<rect x="{:.1}" y="{y:.1}" width="{:.1}" height="{:.1}" fill="#3366cc"><title>reward {}: {count} rollouts</title></rect><text x="{:.1}" y="{:.1}" font-size="11" text-anchor="middle">{count}</text>"##,
            x + slot * 0.1,
            slot * 0.8,
            H - BOTTOM - y,
            escape(label),
            x + slot / 2.0,
            y - 3.0,
        );
        let every = if binned {
            4
        } else if bars.len() <= 10 {
            1
        } else {
            2
        };
        if b % every == 0 {
            let (text, at) = match label.split_once('–') {
                Some((from, _)) if binned => (from, x),
                _ => (label.as_str(), x + slot / 2.0),
            };
            let _ = write!(
                out,
                r##"<text x="{at:.1}" y="{}" font-size="11" text-anchor="middle" fill="#666">{}</text>"##,
                H - BOTTOM + 14.0,
                escape(text)
            );
        }
    }
    let _ = write!(
        out,
        r##"<text x="{}" y="{}" font-size="12" text-anchor="middle">reward (rollouts per {})</text></svg>"##,
        (LEFT + W - RIGHT) / 2.0,
        H - 6.0,
        if binned { "bin" } else { "value" }
    );
    out
}
