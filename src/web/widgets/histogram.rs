//! Histograms as HTML bars: the plot model's bars (the report's), counts on hover and above each
//! bar, value labels below, a count axis with round ticks, axis titles, and optionally lines
//! marking thresholds (a selection's band or λ_diff, placed by `plot::Histogram::mark_fraction`).

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
}

impl Mark {
    /// A line at `x` (`inclusive_left`: as `plot::Histogram::mark_fraction`), or none.
    pub fn of(h: &plot::Histogram, x: f64, inclusive_left: bool, label: String) -> Option<Mark> {
        h.mark_fraction(x, inclusive_left)
            .map(|at| Mark { at, label })
    }
}

/// Bars of `what` (the x title) counting `unit`s, with `marks`.
#[component]
pub fn Bars(
    histogram: plot::Histogram,
    what: &'static str,
    unit: &'static str,
    testid: &'static str,
    bar_testid: &'static str,
    marks: Vec<Mark>,
) -> impl IntoView {
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
            let label = (i % every == 0).then(|| short_number(b.lo));
            view! {
                <div class="bar-slot" title=title.clone() data-testid=bar_testid data-count=b.count.to_string()>
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
    let marks = marks
        .into_iter()
        .map(|m| {
            let title = m.label.clone();
            view! { <span class="threshold" data-testid="histogram-mark" style:left=format!("{:.1}%", m.at * 100.0) title=title><span>{m.label}</span></span> }
        })
        .collect_view();
    view! {
        <div class="histogram-plot">
            <div class="histogram" class:crowded=crowded data-testid=testid>{ticks}{bars}{marks}</div>
            <span class="axis-title x">{format!("{what} ({unit} per {})", if binned { "bin" } else { "value" })}</span>
            <span class="axis-title y">{unit}</span>
        </div>
    }
}
