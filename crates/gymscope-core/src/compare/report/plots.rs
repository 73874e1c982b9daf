//! The comparison report's static plots, as inline SVG drawn from plain data (marks and bars
//! with their own titles and ids); nothing here knows about tasks or runs. Readable without
//! JavaScript (hover titles are SVG `<title>`s); the page's script makes marks and bars
//! clickable through their `data-plot`/`data-id` attributes. Presentation attributes only, never
//! `style=`, which the page's Content-Security-Policy would block.
//!
//! Domains, round ticks, bars and colours come from the shared plot model ([`crate::plot`]), as
//! in the run report and the app.

use crate::html::escape;
use crate::plot::{self as model, Scale};
use crate::table::short_number;
use std::fmt::Write;

/// One colour per agent, kept across the page (legend, marks, tables): the plot model's.
pub fn colour(series: usize) -> String {
    model::hex(model::agent_colour(series))
}

const W: f64 = 460.0;
const H: f64 = 360.0;
const LEFT: f64 = 56.0;
const RIGHT: f64 = 12.0;
const TOP: f64 = 12.0;
const BOTTOM: f64 = 42.0;

/// A point standing for `count` items at (x, y), in the colour of `series`.
#[derive(Clone, Debug, PartialEq)]
pub struct Mark {
    pub x: f64,
    pub y: f64,
    pub series: usize,
    pub count: usize,
    pub title: String,
    /// What a click on it selects (the page's filter).
    pub id: usize,
}

/// A scatter: `id` names the plot for the script; `diagonal` draws y = x, `zero` the axes' 0.
pub struct Scatter<'a> {
    pub id: &'a str,
    pub label: &'a str,
    pub x_label: &'a str,
    pub y_label: &'a str,
    pub x_range: (f64, f64),
    pub y_range: (f64, f64),
    pub diagonal: bool,
    pub zero: bool,
    /// How many series there are: marks of different series at one place are set side by
    /// side (a fixed offset per series, never random), so each colour shows.
    pub series: usize,
    pub marks: &'a [Mark],
}

/// The plot model's padded domain of some values.
pub fn range(values: impl Iterator<Item = f64>) -> (f64, f64) {
    let s = Scale::covering(values, model::Y_TICKS);
    (s.lo, s.hi)
}

/// The plot model's round ticks inside a range.
pub fn ticks((lo, hi): (f64, f64)) -> Vec<f64> {
    model::round_ticks(lo, hi, model::Y_TICKS)
}

fn sx(v: f64, (lo, hi): (f64, f64)) -> f64 {
    LEFT + (v - lo) / (hi - lo) * (W - LEFT - RIGHT)
}

fn sy(v: f64, (lo, hi): (f64, f64)) -> f64 {
    H - BOTTOM - (v - lo) / (hi - lo) * (H - TOP - BOTTOM)
}

fn frame(
    out: &mut String,
    id: &str,
    label: &str,
    x: (f64, f64),
    y: (f64, f64),
    labels: (&str, &str),
) {
    let _ = write!(
        out,
        r##"<svg class="plot" id="{}" viewBox="0 0 {W} {H}" width="{W}" height="{H}" role="img" aria-label="{}"><rect x="{LEFT}" y="{TOP}" width="{}" height="{}" fill="none" stroke="#999"/>"##,
        escape(id),
        escape(label),
        W - LEFT - RIGHT,
        H - TOP - BOTTOM
    );
    for xv in ticks(x) {
        let _ = write!(
            out,
            r##"<text x="{:.1}" y="{}" font-size="11" text-anchor="middle" fill="#888">{}</text>"##,
            sx(xv, x),
            H - BOTTOM + 14.0,
            escape(&short_number(xv)),
        );
    }
    for yv in ticks(y) {
        let _ = write!(
            out,
            r##"<text x="{}" y="{:.1}" font-size="11" text-anchor="end" fill="#888">{}</text>"##,
            LEFT - 4.0,
            sy(yv, y) + 4.0,
            escape(&short_number(yv)),
        );
    }
    let _ = write!(
        out,
        r#"<text x="{}" y="{}" font-size="12" text-anchor="middle" fill="currentColor">{}</text><text x="14" y="{}" font-size="12" text-anchor="middle" fill="currentColor" transform="rotate(-90 14 {})">{}</text>"#,
        (LEFT + W - RIGHT) / 2.0,
        H - 8.0,
        escape(labels.0),
        (TOP + H - BOTTOM) / 2.0,
        (TOP + H - BOTTOM) / 2.0,
        escape(labels.1),
    );
}

fn line(out: &mut String, (x1, y1): (f64, f64), (x2, y2): (f64, f64)) {
    let _ = write!(
        out,
        r##"<line x1="{x1:.1}" y1="{y1:.1}" x2="{x2:.1}" y2="{y2:.1}" stroke="#999" stroke-dasharray="4 3"/>"##
    );
}

pub fn scatter(s: &Scatter) -> String {
    let mut out = String::new();
    let (x, y) = (s.x_range, s.y_range);
    frame(&mut out, s.id, s.label, x, y, (s.x_label, s.y_label));
    if s.diagonal {
        let lo = x.0.max(y.0);
        let hi = x.1.min(y.1);
        if lo < hi {
            line(&mut out, (sx(lo, x), sy(lo, y)), (sx(hi, x), sy(hi, y)));
        }
    }
    if s.zero {
        if x.0 < 0.0 && 0.0 < x.1 {
            line(&mut out, (sx(0.0, x), TOP), (sx(0.0, x), H - BOTTOM));
        }
        if y.0 < 0.0 && 0.0 < y.1 {
            line(&mut out, (LEFT, sy(0.0, y)), (W - RIGHT, sy(0.0, y)));
        }
    }
    let _ = write!(
        out,
        r#"<g fill-opacity="0.55" data-plot="{}">"#,
        escape(s.id)
    );
    // Area proportional to the count, the largest mark 11 px in radius.
    let most = s.marks.iter().map(|m| m.count).max().unwrap_or(1).max(1) as f64;
    let centre = (s.series.max(1) - 1) as f64 / 2.0;
    for m in s.marks {
        let r = 2.5 + 8.5 * (m.count as f64 / most).sqrt();
        let dodge = (m.series as f64 - centre) * 5.0;
        let _ = write!(
            out,
            r#"<circle class="mark" cx="{:.1}" cy="{:.1}" r="{r:.1}" fill="{}" data-id="{}"><title>{}</title></circle>"#,
            sx(m.x, x) + dodge,
            sy(m.y, y),
            colour(m.series),
            m.id,
            escape(&m.title)
        );
    }
    out.push_str("</g></svg>");
    out
}

/// Whether a bar stands for losses, no change or gains (its colour).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tone {
    Worse,
    Same,
    Better,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Bar {
    pub label: String,
    pub count: usize,
    pub title: String,
    pub tone: Tone,
}

/// The plot model's bars of `values` (a bar per distinct value up to `max_bins`, else
/// `max_bins` equal bins): each bin's (low, high) edges and each value's bin.
pub fn bins(values: &[f64], max_bins: usize) -> (Vec<(f64, f64)>, Vec<usize>) {
    let h = model::histogram_with(values.iter().copied(), max_bins, max_bins);
    let edges = h.bars.iter().map(|b| (b.lo, b.hi)).collect();
    let of = values.iter().map(|&v| h.bin_of(v).unwrap_or(0)).collect();
    (edges, of)
}

/// A bar chart; bars are clickable by index (`data-id`).
pub fn bars(id: &str, label: &str, x_label: &str, bars: &[Bar]) -> String {
    let mut out = String::new();
    let max = bars.iter().map(|b| b.count).max().unwrap_or(0).max(1) as f64;
    let _ = write!(
        out,
        r##"<svg class="plot" id="{}" viewBox="0 0 {W} {H}" width="{W}" height="{H}" role="img" aria-label="{}"><line x1="{LEFT}" y1="{}" x2="{}" y2="{}" stroke="#999"/><g data-plot="{}">"##,
        escape(id),
        escape(label),
        H - BOTTOM,
        W - RIGHT,
        H - BOTTOM,
        escape(id)
    );
    let slot = (W - LEFT - RIGHT) / bars.len().max(1) as f64;
    let every = bars.len().div_ceil(10).max(1);
    for (i, b) in bars.iter().enumerate() {
        let x = LEFT + i as f64 * slot;
        let h = b.count as f64 / max * (H - TOP - BOTTOM - 14.0);
        let fill = match b.tone {
            Tone::Worse => "#d0473a",
            Tone::Same => "#999999",
            Tone::Better => "#2e9e5b",
        };
        let _ = write!(
            out,
            r#"<rect class="mark" x="{:.1}" y="{:.1}" width="{:.1}" height="{h:.1}" fill="{fill}" data-id="{i}"><title>{}</title></rect>"#,
            x + slot * 0.1,
            H - BOTTOM - h,
            slot * 0.8,
            escape(&b.title)
        );
        if b.count > 0 && bars.len() <= 24 {
            let _ = write!(
                out,
                r##"<text x="{:.1}" y="{:.1}" font-size="10" text-anchor="middle" fill="#888">{}</text>"##,
                x + slot / 2.0,
                H - BOTTOM - h - 3.0,
                b.count
            );
        }
        if i % every == 0 {
            let _ = write!(
                out,
                r##"<text x="{:.1}" y="{}" font-size="11" text-anchor="middle" fill="#888">{}</text>"##,
                x + slot / 2.0,
                H - BOTTOM + 14.0,
                escape(&b.label)
            );
        }
    }
    let _ = write!(
        out,
        r#"</g><text x="{}" y="{}" font-size="12" text-anchor="middle" fill="currentColor">{}</text></svg>"#,
        (LEFT + W - RIGHT) / 2.0,
        H - 8.0,
        escape(x_label)
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bins_by_value_or_equal_width() {
        let (edges, of) = bins(&[-0.5, 0.0, 0.0, 0.25, f64::NAN], 21);
        assert_eq!(edges, vec![(-0.5, -0.5), (0.0, 0.0), (0.25, 0.25)]);
        assert_eq!(&of[..4], &[0, 1, 1, 2]);
        let values: Vec<f64> = (0..100).map(|i| i as f64 / 99.0).collect();
        let (edges, of) = bins(&values, 20);
        assert_eq!(edges.len(), 20);
        assert_eq!((of[0], of[99]), (0, 19));
    }

    #[test]
    fn ticks_are_round() {
        assert_eq!(ticks((-0.05, 1.05)), vec![0.0, 0.5, 1.0]);
        assert_eq!(ticks((-3217.5, 3294.7)), vec![-2000.0, 0.0, 2000.0]);
        assert!(ticks((2.0, 2.0)).is_empty());
    }

    #[test]
    fn titles_are_escaped() {
        let m = [Mark {
            x: 0.5,
            y: 0.5,
            series: 9,
            count: 4,
            title: "<b>&</b>".into(),
            id: 3,
        }];
        let svg = scatter(&Scatter {
            id: "s",
            label: "l",
            x_label: "<x>",
            y_label: "y",
            x_range: (0.0, 1.0),
            y_range: (0.0, 1.0),
            diagonal: true,
            zero: false,
            series: 1,
            marks: &m,
        });
        assert!(svg.contains("<title>&lt;b&gt;&amp;&lt;/b&gt;</title>"));
        assert!(svg.contains("&lt;x&gt;") && !svg.contains("<x>"));
        // Series 9 wraps around the plot model's palette.
        assert!(svg.contains(&format!(r#"fill="{}""#, colour(9 % model::PALETTE.len()))));
    }
}
