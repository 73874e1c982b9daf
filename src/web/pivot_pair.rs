//! One pivot beside the rollout it came from: the pivot's prefix and expected action on one
//! side, the source's items on the other with the prefix and the expected turn marked.

use super::rollout_view::item_view;
use crate::pivot_build::view::{Mark, PivotPair};
use leptos::prelude::*;

#[component]
pub fn PairView(pair: PivotPair) -> impl IntoView {
    let prefix = pair.prefix.into_iter().map(item_view).collect_view();
    let expected = pair.expected.into_iter().map(item_view).collect_view();
    let source = pair
        .source
        .into_iter()
        .map(|m| {
            let (mark, class) = match m.mark {
                Mark::Prefix => ("prefix", "marked prefix"),
                Mark::Action => ("action", "marked action"),
                Mark::After => ("after", "marked after"),
            };
            view! { <div class=class data-testid="pb-source-item" data-mark=mark>{item_view(m.item)}</div> }
        })
        .collect_view();
    view! {
        <section class="pair" data-testid="pb-pair">
            <h2 data-testid="pb-pair-title">{format!("Pivot {} from source row {} ({})", pair.pivot_id, pair.trajectory_id, pair.place)}</h2>
            <div class="pair-columns">
                <div>
                    <h3>"Pivot: prefix"</h3>
                    <div class="conversation" data-testid="pb-prefix">{prefix}</div>
                    <h3>"Expected action"</h3>
                    <div class="conversation marked action" data-testid="pb-expected">{expected}</div>
                </div>
                <div>
                    <h3>"Source rollout (prefix, expected turn, after)"</h3>
                    <div class="conversation" data-testid="pb-source">{source}</div>
                </div>
            </div>
        </section>
    }
}
