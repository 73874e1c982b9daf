//! One pivot beside the rollout it came from: the pivot's prefix and expected action on one
//! side, the source's items on the other with the prefix and the expected turn marked.

use crate::inspect::pivot_build::{Mark, PivotPair};
use crate::web::widgets::conversation_view::items_view;
use leptos::prelude::*;

#[component]
pub fn PairView(pair: PivotPair) -> impl IntoView {
    let as_written_set = RwSignal::new(false);
    let as_written = Signal::derive(move || as_written_set.get());
    let one = move |item: &crate::conversation::Item, testid: &'static str| {
        view! { <div data-testid=testid>{items_view(std::slice::from_ref(item), as_written)}</div> }
    };
    let prefix = pair
        .prefix
        .iter()
        .map(|i| one(i, "pb-prefix-item"))
        .collect_view();
    let expected = items_view(&pair.expected, as_written);
    let source = pair
        .source
        .iter()
        .map(|m| {
            let (mark, class) = match m.mark {
                Mark::Prefix => ("prefix", "marked prefix"),
                Mark::Action => ("action", "marked action"),
                Mark::After => ("after", "marked after"),
            };
            view! { <div class=class data-testid="pb-source-item" data-mark=mark>
            {items_view(std::slice::from_ref(&m.item), as_written)}</div> }
        })
        .collect_view();
    // Opened from a list far above: brought into view, so a click always shows something.
    let node = NodeRef::<leptos::html::Section>::new();
    Effect::new(move |_| {
        if let Some(el) = node.get() {
            el.scroll_into_view();
        }
    });
    view! {
        <section class="pair" data-testid="pb-pair" node_ref=node>
            <h2 data-testid="pb-pair-title">{format!("Pivot {} from source row {} ({})", pair.pivot_id, pair.trajectory_id, pair.place)}</h2>
            <label><input type="checkbox" data-testid="pb-as-written" prop:checked=move || as_written.get()
                on:change=move |e| as_written_set.set(event_target_checked(&e)) />" as written"</label>
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
