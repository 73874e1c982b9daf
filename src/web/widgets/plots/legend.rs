//! The agents' legend: a button per agent in its colour; click shows or hides it, shift-click
//! shows only that agent.

use crate::plot::{agent_colour, hex};
use leptos::prelude::*;

#[component]
pub fn Legend(names: Vec<String>, hidden: RwSignal<Vec<bool>>) -> impl IntoView {
    let items = names
        .iter()
        .enumerate()
        .map(|(a, name)| {
            let off = move || hidden.with(|h| h.get(a).copied().unwrap_or(false));
            let toggle = move |e: web_sys::MouseEvent| {
                hidden.update(|h| {
                    if e.shift_key() {
                        // Only this agent.
                        for (k, v) in h.iter_mut().enumerate() {
                            *v = k != a;
                        }
                    } else if let Some(v) = h.get_mut(a) {
                        *v = !*v;
                    }
                });
            };
            view! {
                <button class="legend-item" class:off=off data-testid="plot-legend-item" data-agent=name.clone()
                    aria-pressed=move || (!off()).to_string() title="click: show/hide · shift-click: only this agent"
                    on:click=toggle>
                    <span class="swatch" style:background=hex(agent_colour(a))></span>{name.clone()}
                </button>
            }
        })
        .collect_view();
    view! { <div class="legend" data-testid="plot-legend">{items}</div> }
}
