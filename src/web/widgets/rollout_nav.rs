//! The rollout panel's head: the previous and next rollout in the order the task table shows
//! them (its filters, sort, brush and the query: `inspect::nav`), ←/→ doing the same outside
//! fields, the task's other repeats one click away, and a find box that marks the transcript's
//! items holding the text (counting them, the first scrolled into view).

use crate::figures::count;
use crate::inspect::run::RunView;
use crate::web::state::Selection;
use leptos::prelude::*;
use std::sync::Arc;
use wasm_bindgen::JsCast;

/// The transcript's items under `el` (`data-testid=rollout-item`), outermost first.
fn items(el: &web_sys::Element, out: &mut Vec<web_sys::Element>) {
    let mut child = el.first_element_child();
    while let Some(c) = child {
        if c.get_attribute("data-testid").as_deref() == Some("rollout-item") {
            out.push(c.clone());
        } else {
            items(&c, out);
        }
        child = c.next_element_sibling();
    }
}

/// Marks (`data-found`) the opened transcript's items holding `needle` (case-insensitive);
/// how many do. The first is scrolled into view.
fn mark_found(needle: &str) -> usize {
    let needle = needle.trim().to_lowercase();
    let Ok(Some(view)) = gloo_utils::document().query_selector("[data-testid=rollout-view]") else {
        return 0;
    };
    let mut all = Vec::new();
    items(&view, &mut all);
    let mut found = 0;
    for el in all {
        let hit = !needle.is_empty()
            && el
                .text_content()
                .is_some_and(|t| t.to_lowercase().contains(&needle));
        if hit {
            let _ = el.set_attribute("data-found", "");
            if found == 0 {
                el.scroll_into_view();
            }
            found += 1;
        } else {
            let _ = el.remove_attribute("data-found");
        }
    }
    found
}

/// Whether a key press belongs to a field, the plot or the task table (their own arrows).
fn in_a_field(e: &web_sys::KeyboardEvent) -> bool {
    e.target()
        .and_then(|t| t.dyn_into::<web_sys::Element>().ok())
        .is_some_and(|el| {
            matches!(
                el.tag_name().as_str(),
                "INPUT" | "SELECT" | "TEXTAREA" | "CANVAS"
            ) || el
                .closest("[data-testid=task-table-wrap]")
                .ok()
                .flatten()
                .is_some()
        })
}

#[component]
pub fn RolloutNav(run: Arc<RunView>, sel: Selection) -> impl IntoView {
    let r = run.clone();
    let place = Memo::new(move |_| {
        let point = sel.rollout.get()?;
        let shown = sel.order.with(|o| {
            sel.matched
                .with(|m| r.shown_points(o, m.as_deref().map(Vec::as_slice)))
        });
        RunView::place(&shown, point)
    });
    let r = run.clone();
    let go = move |p: Option<usize>| {
        if let Some(p) = p {
            sel.open_point(&r, p);
        }
    };
    let go_key = go.clone();
    let keys = window_event_listener(leptos::ev::keydown, move |e| {
        if e.alt_key() || e.ctrl_key() || e.meta_key() || in_a_field(&e) {
            return;
        }
        let Some(p) = place.get_untracked() else {
            return;
        };
        match e.key().as_str() {
            "ArrowLeft" => go_key(p.previous),
            "ArrowRight" => go_key(p.next),
            _ => return,
        }
        e.prevent_default();
    });
    on_cleanup(move || keys.remove());
    let found = RwSignal::new(None::<usize>);
    let needle = RwSignal::new(String::new());
    // A new transcript: its marks are gone, look again once it is laid out.
    Effect::new(move |_| {
        sel.rollout.track();
        if !needle.get_untracked().trim().is_empty() {
            set_timeout(
                move || found.set(Some(mark_found(&needle.get_untracked()))),
                std::time::Duration::from_millis(300),
            );
        }
    });
    let r = run.clone();
    let repeats = move || {
        let point = sel.rollout.get()?;
        let task = r.task_of_point(point)?;
        let reward = r.metric("reward");
        let links = r
            .task_points(task)
            .map(|p| {
                let label = format!(
                    "{} ({})",
                    r.cols.point_rollout[p],
                    reward.map_or("–".into(), |m| crate::figures::reward(Some(r.value(p, m))))
                );
                let (r, current) = (r.clone(), p == point);
                view! { <button class="small repeat" class:current=current data-testid="rollout-repeat" disabled=current
                    title="this task's rollout (its reward)" on:click=move |_| sel.open_point(&r, p)>{label}</button> }
            })
            .collect_view();
        Some(view! { <span class="repeats">"repeats: "{links}</span> })
    };
    let (go_prev, go_next) = (go.clone(), go);
    view! {
        <div class="rollout-nav" data-testid="rollout-nav">
            <button class="small" data-testid="rollout-prev" title="the previous rollout shown (←)"
                disabled=move || place.get().and_then(|p| p.previous).is_none()
                on:click=move |_| go_prev(place.get_untracked().and_then(|p| p.previous))>"← previous"</button>
            <span class="muted" data-testid="rollout-place">{move || place.get().map_or_else(
                || "not among the rollouts shown".to_string(),
                |p| format!("{} of {} shown", count(p.at + 1), count(p.of)))}</span>
            <button class="small" data-testid="rollout-next" title="the next rollout shown (→)"
                disabled=move || place.get().and_then(|p| p.next).is_none()
                on:click=move |_| go_next(place.get_untracked().and_then(|p| p.next))>"next →"</button>
            {repeats}
            <label class="find">"Find "
                <input type="search" data-testid="rollout-find" placeholder="in the transcript"
                    on:input=move |e| { let v = event_target_value(&e); found.set(Some(mark_found(&v))); needle.set(v); } /></label>
            <span class="muted" data-testid="rollout-found">{move || found.get().filter(|_| !needle.with(|n| n.trim().is_empty())).map(|n| format!("{} items", count(n)))}</span>
        </div>
    }
}
