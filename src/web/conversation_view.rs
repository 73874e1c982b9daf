//! Conversation items as the core's `model_text` shows them: messages and reasoning as safe
//! Markdown (its HTML is made by the core from escaped text; raw HTML in model text is shown as
//! text, images as their alt text and URL), calls and outputs as indented JSON, reasoning and
//! long items collapsed, empty items left out; a toggle shows every item as written.

use crate::conversation::Item;
use crate::model_text::{shown_items, Body, Shown};
use leptos::prelude::*;

/// Items longer than this (in characters) start collapsed, with their length.
const LONG: usize = 1500;

pub fn items_view(items: &[Item], as_written: Signal<bool>) -> impl IntoView {
    shown_items(items)
        .into_iter()
        .map(|item| item_view(item, as_written))
        .collect_view()
}

fn item_view(item: Shown, as_written: Signal<bool>) -> impl IntoView {
    let n = item.raw.chars().count();
    let Shown {
        kind,
        head,
        body,
        raw,
        collapsed,
    } = item;
    let content = move || {
        if as_written.get() {
            return view! { <pre class="text">{raw.clone()}</pre> }.into_any();
        }
        match &body {
            Body::Markdown(html) => {
                view! { <div class="md" inner_html=html.clone()></div> }.into_any()
            }
            Body::Code(code) => view! { <pre class="code">{code.clone()}</pre> }.into_any(),
        }
    };
    let inner = if collapsed || n > LONG {
        let label = if n > LONG {
            format!("{head} ({n} characters — show all)")
        } else {
            head
        };
        view! { <details><summary>{label}</summary>{content}</details> }.into_any()
    } else {
        view! { <div class="label">{head}</div>{content} }.into_any()
    };
    view! { <div class="item" data-testid="rollout-item" data-kind=kind>{inner}</div> }
}
