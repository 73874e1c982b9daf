//! Conversation items as the core's `model_text` shows them: messages and reasoning as safe
//! Markdown (its HTML is made by the core from escaped text; raw HTML in model text is shown as
//! text, images as their alt text and URL), calls and outputs as indented JSON, reasoning and
//! long items collapsed, empty items left out; a toggle shows every item as written. Items a
//! health flag points at (the loop's calls, an error output, the cut-off reply) are marked.

use crate::conversation::{Item, ItemNote};
use crate::health::Flag;
use crate::inspect::health::flag_label;
use crate::model_text::{shown_items_noted, Body, Shown};
use leptos::prelude::*;

/// Items longer than this (in characters) start collapsed, with their length.
const LONG: usize = 1500;

pub fn items_view(items: &[Item], as_written: Signal<bool>) -> impl IntoView {
    marked_items_view(items, &[], as_written, &[])
}

/// [`items_view`] with each item's note (generated tokens, tool timing) beside its label and the
/// items health flags point at marked: `marks` pairs an item's index with the flags it raised.
pub fn marked_items_view(
    items: &[Item],
    notes: &[ItemNote],
    as_written: Signal<bool>,
    marks: &[(usize, Vec<Flag>)],
) -> impl IntoView {
    shown_items_noted(items, notes, crate::model_text::MARKDOWN_LIMIT)
        .into_iter()
        .map(|item| {
            let flags = marks
                .iter()
                .find(|(i, _)| *i == item.index)
                .map(|(_, f)| f.clone())
                .unwrap_or_default();
            item_view(item, as_written, flags)
        })
        .collect_view()
}

fn item_view(item: Shown, as_written: Signal<bool>, flags: Vec<Flag>) -> impl IntoView {
    let n = item.raw.chars().count();
    let Shown {
        kind,
        head,
        body,
        raw,
        collapsed,
        index: _,
        note,
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
            Body::Plain(text) => view! { <pre class="text">{text.clone()}</pre> }.into_any(),
            Body::Call { args, blocks } => {
                let args = args.clone().map(|a| view! { <pre class="code">{a}</pre> });
                let blocks = blocks
                    .iter()
                    .map(|(name, code)| {
                        view! {
                            <div class="arg">{name.clone()}</div>
                            <pre class="code block">{code.clone()}</pre>
                        }
                    })
                    .collect_view();
                view! { {args} {blocks} }.into_any()
            }
        }
    };
    let marked = !flags.is_empty();
    let note = note.map(
        |n| view! { <span class="item-note" data-testid="item-note">{format!(" · {n}")}</span> },
    );
    let inner = if collapsed || n > LONG {
        let label = if n > LONG {
            format!("{head} ({n} characters — show all)")
        } else {
            head
        };
        // A marked item starts open: it is the evidence.
        view! { <details open=marked><summary>{label}{note}</summary>{content}</details> }
            .into_any()
    } else {
        view! { <div class="label">{head}{note}</div>{content} }.into_any()
    };
    let flag_names = flags
        .iter()
        .map(|f| f.as_str())
        .collect::<Vec<_>>()
        .join(" ");
    let flag_note = marked.then(|| {
        let words = flags
            .iter()
            .map(|&f| flag_label(f))
            .collect::<Vec<_>>()
            .join(", ");
        view! { <div class="offending-note">"⚑ "{words}</div> }
    });
    let class = if marked { "item offending" } else { "item" };
    view! {
        <div class=class data-testid="rollout-item" data-kind=kind data-flags=flag_names>{flag_note}{inner}</div>
    }
}
