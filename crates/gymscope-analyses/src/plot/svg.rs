//! A scatter as a standalone SVG file, from the plot model: the same scales, round ticks, axis
//! titles, agent colours, jitter, brush and binned-mean overlay the app draws on its canvas. The
//! app offers it (and a PNG rasterized from it) as the plot's download.

use super::binned::{BinMean, Interval};
use super::brush::Brush;
use super::jitter::{self, JITTER};
use super::{agent_colour, hex, Scale};
use crate::html::escape;
use crate::table::short_number;
use std::fmt::Write;

pub const W: f64 = 760.0;
pub const H: f64 = 420.0;
const LEFT: f64 = 64.0;
const RIGHT: f64 = 16.0;
const TOP: f64 = 48.0;
const BOTTOM: f64 = 44.0;

/// One agent's binned means, drawn as a line with its interval as a band.
pub struct Overlay<'a> {
    pub agent: Option<usize>,
    pub bins: &'a [BinMean],
    pub interval: Interval,
}

/// What one scatter file shows.
pub struct ScatterSvg<'a> {
    pub title: &'a str,
    pub xs: &'a [f64],
    pub ys: &'a [f64],
    pub x: &'a Scale,
    pub y: &'a Scale,
    pub x_title: &'a str,
    pub y_title: &'a str,
    /// Per point its (task, rollout) key, when points are jittered.
    pub jitter: Option<(&'a [f64], &'a [f64])>,
    /// Per point its agent (index in `agents`; NaN unknown), and the agents' names.
    pub agent: Option<&'a [f64]>,
    pub agents: &'a [String],
    pub hidden: &'a [bool],
    pub brush: Option<Brush>,
    pub overlay: &'a [Overlay<'a>],
    /// At most this many points are written (every k-th, deterministically).
    pub max_points: usize,
}

/// The scatter as an SVG document (escaped text, no script, no external reference).
pub fn scatter(s: &ScatterSvg) -> String {
    let (x0, x1, y0, y1) = (LEFT, W - RIGHT, H - BOTTOM, TOP);
    let mut out = String::new();
    let _ = write!(
        out,
        r##"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {W} {H}" width="{W}" height="{H}" font-family="sans-serif"><rect width="{W}" height="{H}" fill="#ffffff"/><text x="{LEFT}" y="18" font-size="14" font-weight="bold">{}</text><rect x="{x0}" y="{y1}" width="{}" height="{}" fill="none" stroke="#999"/>"##,
        escape(s.title),
        x1 - x0,
        y0 - y1
    );
    for &t in &s.x.ticks {
        let px = s.x.at(t, x0, x1);
        let _ = write!(
            out,
            r##"<line x1="{px:.1}" y1="{y0}" x2="{px:.1}" y2="{}" stroke="#999"/><text x="{px:.1}" y="{}" font-size="11" text-anchor="middle" fill="#555">{}</text>"##,
            y0 + 4.0,
            y0 + 16.0,
            escape(&short_number(t))
        );
    }
    for &t in &s.y.ticks {
        let py = s.y.at(t, y0, y1);
        let _ = write!(
            out,
            r##"<line x1="{}" y1="{py:.1}" x2="{x0}" y2="{py:.1}" stroke="#999"/><text x="{}" y="{:.1}" font-size="11" text-anchor="end" fill="#555">{}</text>"##,
            x0 - 4.0,
            x0 - 6.0,
            py + 4.0,
            escape(&short_number(t))
        );
    }
    let _ = write!(
        out,
        r#"<text x="{:.1}" y="{}" font-size="12" text-anchor="middle">{} →</text><text x="16" y="{:.1}" font-size="12" text-anchor="middle" transform="rotate(-90 16 {:.1})">{} →</text>"#,
        f64::midpoint(x0, x1),
        H - 8.0,
        escape(s.x_title),
        f64::midpoint(y0, y1),
        f64::midpoint(y0, y1),
        escape(s.y_title)
    );
    // Legend: one swatch per agent, hidden ones faded.
    let mut lx = LEFT;
    for (a, name) in s.agents.iter().enumerate() {
        let off = s.hidden.get(a).copied().unwrap_or(false);
        let _ = write!(
            out,
            r#"<g opacity="{}"><circle cx="{:.1}" cy="34" r="5" fill="{}"/><text x="{:.1}" y="38" font-size="11">{}</text></g>"#,
            if off { "0.3" } else { "1" },
            lx + 5.0,
            hex(agent_colour(a)),
            lx + 14.0,
            escape(name)
        );
        lx += 24.0 + 6.5 * name.chars().count() as f64;
    }
    let shown: Vec<usize> = (0..s.xs.len().min(s.ys.len()))
        .filter(|&i| s.xs[i].is_finite() && s.ys[i].is_finite())
        .filter(|&i| agent_at(s, i).is_none_or(|a| !s.hidden.get(a).copied().unwrap_or(false)))
        .collect();
    let stride = shown.len().div_ceil(s.max_points.max(1)).max(1);
    let (r, opacity) = if shown.len() / stride < 2_000 {
        (2.5, 0.6)
    } else {
        (1.5, 0.35)
    };
    let _ = write!(out, r#"<g fill-opacity="{opacity}">"#);
    for &i in shown.iter().step_by(stride) {
        let dy = s.jitter.map_or(0.0, |(t, k)| jitter::offset(t[i], k[i]));
        let px = s.x.at(s.xs[i], x0, x1);
        let py = s.y.at(s.ys[i], y0, y1) + dy * JITTER * H;
        let fill = if s.brush.is_some_and(|b| !b.contains(s.xs[i], s.ys[i])) {
            "#969696".to_string()
        } else {
            hex(agent_at(s, i).map_or(agent_colour(0), agent_colour))
        };
        let _ = write!(
            out,
            r#"<circle cx="{px:.1}" cy="{py:.1}" r="{r}" fill="{fill}"/>"#
        );
    }
    out.push_str("</g>");
    for o in s.overlay {
        if o.agent
            .is_some_and(|a| s.hidden.get(a).copied().unwrap_or(false))
            || o.bins.is_empty()
        {
            continue;
        }
        let colour = hex(o.agent.map_or([40, 40, 40], agent_colour));
        let at = |x: f64, y: f64| (s.x.at(x, x0, x1), s.y.at(y.clamp(s.y.lo, s.y.hi), y0, y1));
        let mut band = String::new();
        for b in o.bins {
            let (px, py) = at(b.x, b.hi);
            let _ = write!(band, "{px:.1},{py:.1} ");
        }
        for b in o.bins.iter().rev() {
            let (px, py) = at(b.x, b.lo);
            let _ = write!(band, "{px:.1},{py:.1} ");
        }
        let line: String = o
            .bins
            .iter()
            .map(|b| {
                let (px, py) = at(b.x, b.mean);
                format!("{px:.1},{py:.1}")
            })
            .collect::<Vec<_>>()
            .join(" ");
        let _ = write!(
            out,
            r#"<polygon points="{}" fill="{colour}" fill-opacity="0.15"/><polyline points="{line}" fill="none" stroke="{colour}" stroke-width="2.5"><title>binned mean reward, {}</title></polyline>"#,
            band.trim_end(),
            o.interval.label()
        );
    }
    out.push_str("</svg>\n");
    out
}

fn agent_at(s: &ScatterSvg, i: usize) -> Option<usize> {
    s.agent
        .and_then(|a| a.get(i))
        .filter(|a| a.is_finite())
        .map(|&a| a as usize)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plot::binned::binned_means;
    use crate::plot::scatter_scales;

    #[test]
    fn draws_agents_legend_overlay_and_escapes() {
        let xs = [10.0, 20.0, 30.0, 40.0];
        let ys = [1.0, 0.0, 1.0, 0.0];
        let agent = [0.0, 1.0, 0.0, 1.0];
        let keys = [0.0, 0.0, 1.0, 1.0];
        let (x, y) = scatter_scales(&xs, &ys);
        // An overlay needs enough points for two bins.
        let bx: Vec<f64> = (0..10).map(|i| 10.0 + f64::from(i) * 3.0).collect();
        let by: Vec<f64> = (0..10).map(|i| f64::from(i % 2)).collect();
        let (bins, interval) = binned_means(&bx, &by, 2, |_| true);
        let agents = ["a<b>".to_string(), "c".to_string()];
        let overlay = [Overlay {
            agent: Some(0),
            bins: &bins,
            interval,
        }];
        let doc = |hidden: &[bool]| {
            scatter(&ScatterSvg {
                title: "reward by rollout",
                xs: &xs,
                ys: &ys,
                x: &x,
                y: &y,
                x_title: "output tokens",
                y_title: "reward",
                jitter: Some((&keys, &keys)),
                agent: Some(&agent),
                agents: &agents,
                hidden,
                brush: None,
                overlay: &overlay,
                max_points: 100,
            })
        };
        let svg = doc(&[]);
        assert!(svg.starts_with("<svg xmlns="));
        assert!(svg.contains("a&lt;b&gt;") && !svg.contains("a<b>"));
        assert_eq!(svg.matches("<circle cx").count(), 4 + 2);
        assert_eq!(svg.matches(&hex(agent_colour(1))).count(), 2 + 1);
        assert!(svg.contains("<polyline") && svg.contains("95% Wilson interval"));
        assert_eq!(svg, doc(&[]), "the same input writes the same bytes");
        // A hidden agent loses its points (its legend entry stays, faded).
        let hidden = doc(&[false, true]);
        assert_eq!(hidden.matches("<circle cx").count(), 2 + 2);
        assert!(hidden.contains(r#"opacity="0.3""#));
    }
}
