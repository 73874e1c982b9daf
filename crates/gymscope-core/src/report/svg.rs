//! The static plots, as inline SVG: readable without JavaScript (the script draws the full,
//! interactive scatter over it). Presentation attributes only, never `style=`, which the page's
//! Content-Security-Policy would block. Hover titles (`<title>`) work without script too.

use super::Points;
use crate::html::escape;
use crate::plot::jitter::{self, PointMode, JITTER};
use crate::plot::{self, agent_colour, axis_title, hex, Scale};
use crate::table::short_number;
use crate::table::Table;
use std::fmt::Write;

/// The static scatter draws at most this many rollouts (every k-th, deterministically).
pub(super) const STATIC_POINTS: usize = 2_000;

const W: f64 = 640.0;
const H: f64 = 300.0;
const LEFT: f64 = 60.0;
const RIGHT: f64 = 12.0;
const TOP: f64 = 12.0;
const BOTTOM: f64 = 40.0;

fn frame(out: &mut String, label: &str, x: &Scale, x_label: &str, y: &Scale, y_label: &str) {
    let _ = write!(
        out,
        r##"<svg class="plot" viewBox="0 0 {W} {H}" width="{W}" height="{H}" role="img" aria-label="{}"><rect x="{LEFT}" y="{TOP}" width="{}" height="{}" fill="none" stroke="#999"/>"##,
        escape(label),
        W - LEFT - RIGHT,
        H - TOP - BOTTOM
    );
    for &t in &x.ticks {
        let _ = write!(
            out,
            r##"<text x="{:.1}" y="{}" font-size="11" text-anchor="middle" fill="#666">{}</text>"##,
            x.at(t, LEFT, W - RIGHT),
            H - BOTTOM + 14.0,
            escape(&short_number(t)),
        );
    }
    for &t in &y.ticks {
        let _ = write!(
            out,
            r##"<text x="{}" y="{:.1}" font-size="11" text-anchor="end" fill="#666">{}</text>"##,
            LEFT - 4.0,
            y.at(t, H - BOTTOM, TOP) + 4.0,
            escape(&short_number(t)),
        );
    }
    let _ = write!(
        out,
        r#"<text x="{}" y="{}" font-size="12" text-anchor="middle" fill="currentColor">{}</text><text x="14" y="{}" font-size="12" text-anchor="middle" fill="currentColor" transform="rotate(-90 14 {})">{}</text>"#,
        (LEFT + W - RIGHT) / 2.0,
        H - 6.0,
        escape(x_label),
        (TOP + H - BOTTOM) / 2.0,
        (TOP + H - BOTTOM) / 2.0,
        escape(y_label),
    );
}

/// Reward against field `x` for up to [`STATIC_POINTS`] rollouts, each titled with its key.
pub(super) fn scatter(p: &Points, agents: Option<&Table>, x: usize) -> String {
    let xs = &p.values[x];
    let both: Vec<usize> = (0..p.len())
        .filter(|&i| p.reward[i].is_some() && xs[i].is_some())
        .collect();
    let (ax, ay) = p.scatter_scales(x);
    let mut out = String::new();
    frame(
        &mut out,
        "reward by rollout",
        &ax,
        &axis_title(&p.fields[x]),
        &ay,
        "reward",
    );
    let stride = both.len().div_ceil(STATIC_POINTS).max(1);
    // Coloured by agent, with a legend; discrete rewards jittered by the plot model's fixed
    // offset per rollout (the page stays byte-identical between runs).
    let agent = p.agent_values();
    let names: Vec<String> = agents
        .map(|t| t.rows.iter().map(|r| r.key.clone()).collect())
        .unwrap_or_default();
    let jitter = PointMode::default_for(&p.reward_values()) == PointMode::Jitter;
    out.push_str(r#"<g fill-opacity="0.45">"#);
    for &i in both.iter().step_by(stride) {
        let (xv, yv) = (xs[i].unwrap_or(0.0), p.reward[i].unwrap_or(0.0));
        let dy = if jitter {
            jitter::offset(p.task[i] as f64, p.rollout[i] as f64) * JITTER * (H - TOP - BOTTOM)
        } else {
            0.0
        };
        let colour = agent
            .as_ref()
            .and_then(|a| a.get(i))
            .filter(|a| a.is_finite())
            .map_or(agent_colour(0), |&a| agent_colour(a as usize));
        let _ = write!(
            out,
            r#"<circle cx="{:.1}" cy="{:.1}" r="2.5" fill="{}"><title>task {} · rollout {}</title></circle>"#,
            ax.at(xv, LEFT, W - RIGHT),
            ay.at(yv, H - BOTTOM, TOP) + dy,
            hex(colour),
            p.task[i],
            p.rollout[i]
        );
    }
    out.push_str("</g>");
    for (a, bins, interval) in p.binned_rewards(x, names.len()) {
        let colour = hex(a.map_or([110, 110, 110], agent_colour));
        let at = |x: f64, y: f64| {
            (
                ax.at(x, LEFT, W - RIGHT),
                ay.at(y.clamp(ay.lo, ay.hi), H - BOTTOM, TOP),
            )
        };
        let line: Vec<String> = bins
            .iter()
            .map(|b| {
                let (px, py) = at(b.x, b.mean);
                format!("{px:.1},{py:.1}")
            })
            .collect();
        let band: Vec<String> = bins
            .iter()
            .map(|b| at(b.x, b.hi))
            .chain(bins.iter().rev().map(|b| at(b.x, b.lo)))
            .map(|(px, py)| format!("{px:.1},{py:.1}"))
            .collect();
        if !bins.is_empty() {
            let _ = write!(
                out,
                r#"<polygon points="{}" fill="{colour}" fill-opacity="0.15"/><polyline points="{}" fill="none" stroke="{colour}" stroke-width="2"><title>binned mean reward (10 quantile bins, {})</title></polyline>"#,
                band.join(" "),
                line.join(" "),
                interval.label()
            );
        }
    }
    if agent.is_some() {
        let mut lx = LEFT + 6.0;
        for (a, name) in names.iter().enumerate() {
            let _ = write!(
                out,
                r#"<rect x="{lx:.1}" y="{}" width="9" height="9" fill="{}"/><text x="{:.1}" y="{}" font-size="11" fill="currentColor">{}</text>"#,
                TOP + 4.0,
                hex(agent_colour(a)),
                lx + 13.0,
                TOP + 12.0,
                escape(name)
            );
            lx += 22.0 + 6.5 * name.chars().count() as f64;
        }
    }
    out.push_str("</svg>");
    out
}

/// How many rollouts the static scatter shows (the caption says so when it is a sample).
pub(super) fn scatter_count(p: &Points, x: usize) -> (usize, usize) {
    let both = (0..p.len())
        .filter(|&i| p.reward[i].is_some() && p.values[x][i].is_some())
        .count();
    (both.div_ceil(both.div_ceil(STATIC_POINTS).max(1)), both)
}

/// Rollouts per reward value, bars as the plot model makes them (the app draws the same).
pub(super) fn histogram(rewards: &[Option<f64>]) -> String {
    let h = plot::histogram(rewards.iter().flatten().copied());
    let label = |b: &plot::Bar| {
        if h.binned {
            format!("{}–{}", short_number(b.lo), short_number(b.hi))
        } else {
            short_number(b.lo)
        }
    };
    let ay = Scale::between(0.0, h.max_count().max(1) as f64, plot::Y_TICKS);
    let mut out = String::new();
    let _ = write!(
        out,
        r##"<svg class="plot" viewBox="0 0 {W} {H}" width="{W}" height="{H}" role="img" aria-label="reward histogram"><line x1="{LEFT}" y1="{}" x2="{}" y2="{}" stroke="#999"/>"##,
        H - BOTTOM,
        W - RIGHT,
        H - BOTTOM
    );
    let slot = (W - LEFT - RIGHT) / h.bars.len().max(1) as f64;
    for (b, bar) in h.bars.iter().enumerate() {
        let (x, count) = (LEFT + b as f64 * slot, bar.count);
        let y = ay.at(count as f64, H - BOTTOM, TOP + 14.0);
        let _ = write!(
            out,
            r##"<rect x="{:.1}" y="{y:.1}" width="{:.1}" height="{:.1}" fill="#3366cc"><title>reward {}: {count} rollouts</title></rect><text x="{:.1}" y="{:.1}" font-size="11" text-anchor="middle" fill="currentColor">{count}</text>"##,
            x + slot * 0.1,
            slot * 0.8,
            H - BOTTOM - y,
            escape(&label(bar)),
            x + slot / 2.0,
            y - 3.0,
        );
        if b % h.label_every() == 0 {
            // Binned bars are labelled by their lower edge, at it; values at the bar's middle.
            let at = if h.binned { x } else { x + slot / 2.0 };
            let _ = write!(
                out,
                r##"<text x="{at:.1}" y="{}" font-size="11" text-anchor="middle" fill="#666">{}</text>"##,
                H - BOTTOM + 14.0,
                escape(&short_number(bar.lo))
            );
        }
    }
    let _ = write!(
        out,
        r#"<text x="{}" y="{}" font-size="12" text-anchor="middle" fill="currentColor">reward (rollouts per {})</text></svg>"#,
        (LEFT + W - RIGHT) / 2.0,
        H - 6.0,
        if h.binned { "bin" } else { "value" }
    );
    out
}
