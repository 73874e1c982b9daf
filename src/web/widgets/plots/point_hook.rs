//! Test hook: `window.__gymscope.pointPixel(task, rollout)`, where a point is drawn, so the
//! browser tests can aim at it.

use crate::inspect::run::RunView;
use crate::plot::jitter;
use crate::plot::raster::{place, Frame};
use crate::web::widgets::scatter_canvas::{H, W};
use leptos::prelude::*;
use std::sync::Arc;
use wasm_bindgen::prelude::*;

/// Test hook: where a given (task, rollout) point is drawn, in client coordinates.
pub fn install_point_hook(
    run: Arc<RunView>,
    canvas: NodeRef<leptos::html::Canvas>,
    frame: RwSignal<Option<Frame>>,
    x_metric: RwSignal<usize>,
    jitter_on: RwSignal<bool>,
) {
    let reward = run.metric("reward");
    let hook = Closure::<dyn Fn(f64, f64) -> JsValue>::new(move |task: f64, rollout: f64| {
        let (Some(c), Some(f)) = (canvas.get_untracked(), frame.get_untracked()) else {
            return JsValue::NULL;
        };
        let Some(p) = run
            .task_position(task as i64)
            .and_then(|t| run.point_of(t, rollout as i64))
        else {
            return JsValue::NULL;
        };
        let x = run.value(p, x_metric.get_untracked());
        let dy = if jitter_on.get_untracked() {
            jitter::offset(task, rollout)
        } else {
            0.0
        };
        let (px, py) = place(&f, x, reward.map_or(0.0, |m| run.value(p, m)), dy, W, H);
        let rect = c.get_bounding_client_rect();
        let (sx, sy) = (rect.width() / f64::from(W), rect.height() / f64::from(H));
        js_sys::Array::of2(
            &(rect.left() + px * sx).into(),
            &(rect.top() + py * sy).into(),
        )
        .into()
    });
    let hooks = js_sys::Object::new();
    let _ = js_sys::Reflect::set(&hooks, &"pointPixel".into(), hook.as_ref());
    let _ = js_sys::Reflect::set(&gloo_utils::window(), &"__gymscope".into(), &hooks);
    hook.forget(); // lives as long as the page's run view; replaced on the next run
}
