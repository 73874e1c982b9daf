//! The app hosted by a notebook widget (docs/python.md "The inspector in a notebook"; the host
//! is `gymscope.Inspector`'s script, crates/gymscope-py/python/gymscope/widget.js). Before the
//! app starts the host sets `window.GYMSCOPE`:
//! - `workerUrl`: the worker loader's URL (a blob URL: the widget has no server to fetch from);
//! - `files`: the run's files (`File`s made from the kernel's bytes), loaded at once;
//! - `onSelection`: called with the brushed rollouts' `[task, rollout]` keys (`[]` when cleared);
//! - `page`: the page shown (`profile`, `health`, `compare`, `pivot`, `pivot-build`: the hash's
//!   names, `inspect::hash::Route`), alone: a notebook view has no header, tabs or file zone.
//!
//! Without it the app is the standalone page.

use super::protocol::WORKER_URL;
use crate::inspect::hash::Route;
use std::cell::Cell;
use wasm_bindgen::{JsCast, JsValue};

fn get(from: &JsValue, key: &str) -> Option<JsValue> {
    js_sys::Reflect::get(from, &JsValue::from_str(key))
        .ok()
        .filter(|v| !v.is_undefined() && !v.is_null())
}

/// `window.GYMSCOPE`, when a host set it (never in a worker).
fn host() -> Option<JsValue> {
    get(&js_sys::global(), "GYMSCOPE")
}

/// The URL a worker is started from. In a worker it is its own script's (the loader's): a
/// reading pool's workers are more of the same, wherever it was loaded from.
pub fn worker_url() -> String {
    let global = js_sys::global();
    if global.dyn_ref::<web_sys::Window>().is_none() {
        let href = get(&global, "location").and_then(|l| get(&l, "href"));
        if let Some(href) = href.and_then(|h| h.as_string()) {
            return href;
        }
    }
    host()
        .and_then(|h| get(&h, "workerUrl"))
        .and_then(|u| u.as_string())
        .unwrap_or_else(|| WORKER_URL.to_string())
}

/// The page a host shows alone (`None`: no host, the standalone app with its tabs). A name the
/// app does not know is the profile page.
pub fn page() -> Option<Route> {
    let host = host()?;
    let name = get(&host, "page").and_then(|p| p.as_string());
    Some(name.and_then(|n| Route::from_name(&n)).unwrap_or_default())
}

thread_local! {
    static FILES_TAKEN: Cell<bool> = const { Cell::new(false) };
}

/// The host's files, the first time they are asked for (the run is loaded once).
pub fn take_files() -> Option<Vec<web_sys::File>> {
    if FILES_TAKEN.with(|t| t.replace(true)) {
        return None;
    }
    let files: js_sys::Array = host().and_then(|h| get(&h, "files"))?.dyn_into().ok()?;
    Some(files.iter().filter_map(|f| f.dyn_into().ok()).collect())
}

/// Whether the host wants the brushed rollouts (so they are listed only then).
pub fn wants_selection() -> bool {
    host().and_then(|h| get(&h, "onSelection")).is_some()
}

/// Hands the brushed rollouts' keys to the host.
pub fn report_selection(keys: &[(i64, i64)]) {
    let Some(call) = host()
        .and_then(|h| get(&h, "onSelection"))
        .and_then(|f| f.dyn_into::<js_sys::Function>().ok())
    else {
        return;
    };
    let list: js_sys::Array = keys
        .iter()
        .map(|&(t, r)| {
            let pair =
                js_sys::Array::of2(&JsValue::from_f64(t as f64), &JsValue::from_f64(r as f64));
            JsValue::from(pair)
        })
        .collect();
    let _ = call.call1(&JsValue::NULL, &list);
}
