//! A followed run's refresh lays the inspector out again; the page stays where the reader left
//! it (issue 62, item 4). The scroll is taken when the refresh begins and put back once the new
//! profile is shown, unless the reader moved the page meanwhile: their scroll wins.

use std::cell::Cell;
use std::rc::Rc;
use wasm_bindgen::closure::Closure;
use wasm_bindgen::{JsCast, JsValue};

/// What a reader does to move the page (a scrollbar drag starts with a pointer down).
const READER_EVENTS: [&str; 4] = ["wheel", "touchmove", "keydown", "pointerdown"];

/// How long after the profile is shown the scroll is still put back (the open rollout is read
/// after the inspector is laid out, and moves the page once more).
const SETTLE_MS: i32 = 1500;

/// Takes the page's and the rollout pane's scroll positions; the returned closure, called once
/// the new profile is shown, puts them back. Meanwhile the page may not get shorter (its tables
/// and the rollout come in after it is laid out), which would clamp the scroll.
pub fn keep_scroll() -> impl FnOnce() {
    let window = gloo_utils::window();
    let document = gloo_utils::document();
    let y = window.scroll_y().unwrap_or(0.0);
    let pane = rollout_pane().map_or(0, |p| p.scroll_top());
    let height = document.document_element().map_or(0, |e| e.scroll_height());
    if let Some(body) = document.body() {
        let _ = body.set_attribute("style", &format!("min-height: {height}px"));
    }
    let moved = Rc::new(Cell::new(false));
    let on_reader = {
        let moved = Rc::clone(&moved);
        Closure::<dyn Fn()>::new(move || moved.set(true)).into_js_value()
    };
    for event in READER_EVENTS {
        let _ = window.add_event_listener_with_callback_and_bool(
            event,
            on_reader.unchecked_ref(),
            true,
        );
    }
    move || {
        let put_back = move || {
            if moved.get() {
                return;
            }
            gloo_utils::window().scroll_to_with_x_and_y(0.0, y);
            if let Some(p) = rollout_pane() {
                p.set_scroll_top(pane);
            }
        };
        let put_back = Rc::new(put_back);
        // Once the new inspector is in the page (its effects run in microtasks), and once its
        // rollout has been read.
        for ms in [0, 600] {
            let put_back = Rc::clone(&put_back);
            later(ms, Closure::once_into_js(move || put_back()));
        }
        later(
            SETTLE_MS,
            Closure::once_into_js(move || {
                let window = gloo_utils::window();
                for event in READER_EVENTS {
                    let _ = window.remove_event_listener_with_callback_and_bool(
                        event,
                        on_reader.unchecked_ref(),
                        true,
                    );
                }
                if let Some(body) = gloo_utils::document().body() {
                    let _ = body.remove_attribute("style");
                }
            }),
        );
    }
}

fn rollout_pane() -> Option<web_sys::Element> {
    gloo_utils::document()
        .query_selector("[data-testid=pane-rollout]")
        .ok()
        .flatten()
}

fn later(ms: i32, f: JsValue) {
    let _ = gloo_utils::window()
        .set_timeout_with_callback_and_timeout_and_arguments_0(f.unchecked_ref(), ms);
}
