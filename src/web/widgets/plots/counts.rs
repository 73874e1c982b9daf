//! What follows the query bar besides the points: the heading's count and the reward
//! histogram, both of the query's matching rollouts when a query is applied.

use crate::figures::count;
use crate::inspect::run::RunView;
use crate::web::state::Selection;
use crate::web::widgets::histogram::Histogram;
use leptos::prelude::*;
use std::sync::Arc;

/// ` · N rollouts`, or ` · K of N rollouts (the query's)`, and how to use the plot.
#[component]
pub fn PlotCount(total: usize, sel: Selection) -> impl IntoView {
    let text = move || {
        let shown = sel
            .matched
            .with(|m| m.as_ref().map(|m| m.iter().filter(|v| **v).count()));
        let count = match shown {
            Some(k) => format!("{} of {} rollouts (the query's)", count(k), count(total)),
            None => format!("{} rollouts", count(total)),
        };
        format!(" · {count} · hover a point, click to open it, drag to brush")
    };
    view! { <span class="muted" data-testid="plot-count">{text}</span> }
}

/// The reward histogram of the shown rollouts.
#[component]
pub fn QueryHistogram(run: Arc<RunView>, sel: Selection) -> impl IntoView {
    move || {
        let shown = sel.matched.get();
        let histogram = run.reward_histogram_of(shown.as_deref().map(Vec::as_slice));
        view! { <Histogram histogram=histogram /> }
    }
}
