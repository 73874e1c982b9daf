//! Histograms as HTML bars: the plot model's bars (the report's), counts on hover and above each
//! bar, value labels below, a count axis with round ticks, axis titles, and optionally lines
//! marking thresholds (a selection's band or λ_diff, placed by `plot::Histogram::mark_fraction`);
//! on a numeric x axis when asked (`plot::value_axis`: the pass-rate band's).

use crate::plot::value_axis::ValueAxis;
use crate::plot::{self, Scale};
use crate::table::short_number;
use leptos::prelude::*;

/// The reward histogram of the profile page (rollouts per reward).
#[component]
pub fn Histogram(histogram: plot::Histogram) -> impl IntoView {
    view! { <Bars histogram=histogram what="reward" unit="rollouts" testid="reward-histogram" bar_testid="histogram-bar" marks=Vec::new() /> }
}

/// A threshold line: where it falls (`mark_fraction`'s share of the width) and what it says.
#[derive(Clone, Debug, PartialEq)]
pub struct Mark {
    pub at: f64,
    pub label: String,
    /// A band's upper end: its label a row higher, so a band's two labels never meet.
    pub upper: bool,
}

impl Mark {
    /// A line at `x` (`inclusive_left`: as `plot::Histogram::mark_fraction`), or none.
    pub fn of(h: &plot::Histogram, x: f64, inclusive_left: bool, label: String) -> Option<Mark> {
        h.mark_fraction(x, inclusive_left).map(|at| Mark {
            at,
            label,
            upper: false,
        })
    }
}

impl Mark {
    /// A line at a band's end `x` on a numeric axis (`ValueAxis::mark`), or none.
    pub fn on_axis(
        axis: &ValueAxis,
        h: &plot::Histogram,
        x: f64,
        inclusive_left: bool,
        label: String,
    ) -> Option<Mark> {
        axis.mark(h, x, inclusive_left).map(|at| Mark {
            at,
            label,
            upper: false,
        })
    }
}

/// Bars of `what` (the x title) counting `unit`s, with `marks`; on a numeric x axis when `axis`
/// is given (each bar at its value, round ticks below), else side by side.
#[component]
pub fn Bars(
    histogram: plot::Histogram,
    what: &'static str,
    unit: &'static str,
    testid: &'static str,
    bar_testid: &'static str,
    marks: Vec<Mark>,
    #[prop(optional)] axis: Option<ValueAxis>,
) -> impl IntoView {
    let placed = axis.map(|a| a.bars(&histogram));
    let most = histogram.max_count().max(1) as f64;
    let scale = Scale::between(0.0, most, plot::Y_TICKS);
    let every = histogram.label_every();
    let binned = histogram.binned;
    // Many bars: counts stand upright, one narrow column each, so neighbours never run
    // together into one string of digits (style/main.css `.crowded`).
    let crowded = histogram.crowded();
    let bars = histogram
        .bars
        .iter()
        .enumerate()
        .map(|(i, b)| {
            let range = if binned {
                format!("{} – {}", short_number(b.lo), short_number(b.hi))
            } else {
                short_number(b.lo)
            };
            let title = format!("{what} {range}: {} {unit}", b.count);
            // On a numeric axis the ticks say the values; a bar is placed, not labelled.
            let label = (axis.is_none() && i % every == 0).then(|| short_number(b.lo));
            let place = placed.as_ref().and_then(|p| p.get(i)).map_or_else(String::new, |(l, w)| {
                format!("left: {:.2}%; width: {:.2}%", l * 100.0, w * 100.0)
            });
            view! {
                <div class="bar-slot" title=title.clone() data-testid=bar_testid data-count=b.count.to_string()
                    data-value=b.lo.to_string() style=place>
                    <div class="bar" style:height=format!("{:.1}%", b.count as f64 / most * 100.0)>
                        <span class="bar-count">{b.count}</span>
                    </div>
                    <span class="bar-label">{label}</span>
                </div>
            }
        })
        .collect_view();
    let ticks = scale
        .ticks
        .iter()
        .map(|&t| view! { <span class="tick y" style:bottom=format!("{:.1}%", t / most * 100.0)>{short_number(t)}</span> })
        .collect_view();
    let x_ticks = axis.map(|a| {
        a.ticks()
            .into_iter()
            .map(|(t, at)| view! { <span class="tick x" data-testid="x-tick" style:left=format!("{:.2}%", at * 100.0)>{short_number(t)}</span> })
            .collect_view()
    });
    let marks = marks
        .into_iter()
        .map(|m| {
            let title = m.label.clone();
            // A line in the right half has its label on its left, so the label never runs past
            // the plot's edge (a phone cut the band's "≤ 1" in half, issue 60); labels sit in rows
            // above the bars' counts, a band's upper end a row higher (style/main.css).
            let end = m.at > 0.5;
            view! { <span class="threshold" class:end=end class:upper=m.upper data-testid="histogram-mark" style:left=format!("{:.1}%", m.at * 100.0) title=title><span>{m.label}</span></span> }
        })
        .collect_view();
    view! {
        <div class="histogram-plot">
            <div class="histogram" class:crowded=crowded class:numeric=axis.is_some() data-testid=testid>{ticks}{bars}{x_ticks}{marks}</div>
            <span class="axis-title x">{format!("{what} ({unit} per {})", if binned { "bin" } else { "value" })}</span>
            <span class="axis-title y">{unit}</span>
        </div>
    }
}
