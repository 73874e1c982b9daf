//! The reward histogram as HTML bars: the plot model's bars (the report's), counts on hover and
//! above each bar, value labels below, a count axis with round ticks, and axis titles.

use crate::plot::{self, Scale};
use crate::table::short_number;
use leptos::prelude::*;

#[component]
pub fn Histogram(histogram: plot::Histogram) -> impl IntoView {
    let most = histogram.max_count().max(1) as f64;
    let scale = Scale::between(0.0, most, plot::Y_TICKS);
    let every = histogram.label_every();
    let binned = histogram.binned;
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
            let title = format!("reward {range}: {} rollouts", b.count);
            let label = (i % every == 0).then(|| short_number(b.lo));
            view! {
                <div class="bar-slot" title=title.clone() data-testid="histogram-bar" data-count=b.count.to_string()>
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
    view! {
        <div class="histogram-plot">
            <div class="histogram" data-testid="reward-histogram">{ticks}{bars}</div>
            <span class="axis-title x">{format!("reward (rollouts per {})", if binned { "bin" } else { "value" })}</span>
            <span class="axis-title y">"rollouts"</span>
        </div>
    }
}
