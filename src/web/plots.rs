//! The run's plots: reward against token usage (or any numeric field) for every rollout, keyed
//! by task and rollout (hover names it, click opens it, the selected task's rollouts and mean
//! stand out); per-task means from the profile; the reward histogram. Axes, ticks, titles and
//! bars come from the core plot model, as in the exported report.
//! `window.__gymscope.pointPixel(task, rollout)` lets tests aim at a point.

use super::histogram::Histogram;
use super::scatter_canvas::{ScatterCanvas, ScatterData, H, W};
use super::state::Selection;
use crate::inspect::run::RunView;
use crate::plot::{axis_title, raster::Frame};
use crate::table::short_number;
use leptos::prelude::*;
use std::sync::Arc;
use wasm_bindgen::prelude::*;

#[component]
pub fn Plots(run: Arc<RunView>, sel: Selection) -> impl IntoView {
    let x_metric = RwSignal::new(run.default_x().unwrap_or(0));
    let reward = run.metric("reward");
    let n = run.points();
    let canvas = NodeRef::<leptos::html::Canvas>::new();
    let frame = RwSignal::new(None::<Frame>);

    let r = run.clone();
    let rollouts = Memo::new(move |_| {
        let x = x_metric.get();
        ScatterData {
            xs: r.metric_values(Some(x)),
            ys: r.metric_values(reward),
            x_title: axis_title(&r.view.metrics[x]),
            y_title: "reward".into(),
            highlight: sel.task.get().map(|t| r.task_points(t)),
        }
    });
    let r = run.clone();
    let tasks = Memo::new(move |_| {
        let x = x_metric.get();
        ScatterData {
            xs: r.task_means(Some(x)),
            ys: r.task_means(reward),
            x_title: format!("mean {} per task", axis_title(&r.view.metrics[x])),
            y_title: "mean reward".into(),
            highlight: sel.task.get().map(|t| t..t + 1),
        }
    });
    let r = run.clone();
    let rollout_tip = Callback::new(move |p: usize| {
        let xm = x_metric.get_untracked();
        format!(
            "task {} · rollout {} — reward {}, {} {}",
            r.cols.point_task[p],
            r.cols.point_rollout[p],
            reward.map_or("–".into(), |m| short_number(r.value(p, m))),
            r.view.metrics[xm],
            short_number(r.value(p, xm))
        )
    });
    let r = run.clone();
    let task_tip = Callback::new(move |t: usize| {
        let meta = &r.view.tasks[t];
        let mean = reward.map_or("–".into(), |m| short_number(r.task_mean(t, m)));
        format!(
            "task {} — {} rollouts, mean reward {mean}",
            meta.task, meta.num_rollouts
        )
    });
    let r = run.clone();
    let open = Callback::new(move |p: usize| sel.open_point(&r, p));
    let pick_task = Callback::new(move |t: usize| sel.task.set(Some(t)));
    install_point_hook(run.clone(), canvas, frame, x_metric);

    let options = run
        .view
        .metrics
        .iter()
        .enumerate()
        .filter(|(_, m)| *m != "reward")
        .map(|(i, m)| view! { <option value=i.to_string() selected=move || x_metric.get() == i>{m.clone()}</option> })
        .collect_view();
    view! {
        <section class="plots">
            <h2>"Reward against "
                <select data-testid="plot-x" on:change=move |e| {
                    if let Ok(i) = event_target_value(&e).parse() { x_metric.set(i) }
                }>{options}</select>
                <span class="muted">{format!(" — {n} rollouts; hover a point, click to open it")}</span>
            </h2>
            <ScatterCanvas data=rollouts testid="scatter" tooltip_testid="plot-tooltip" tooltip=rollout_tip
                on_pick=open canvas=canvas frame_out=frame />
            <div class="plot-row">
                <div>
                    <h3>"Per task: mean reward against the mean of the same field"</h3>
                    <ScatterCanvas data=tasks testid="task-scatter" tooltip_testid="task-plot-tooltip" tooltip=task_tip on_pick=pick_task />
                </div>
                <div>
                    <h3>"Reward histogram"</h3>
                    <Histogram histogram=run.reward_histogram() />
                </div>
            </div>
        </section>
    }
}

/// Test hook: where a given (task, rollout) point is drawn, in client coordinates.
fn install_point_hook(
    run: Arc<RunView>,
    canvas: NodeRef<leptos::html::Canvas>,
    frame: RwSignal<Option<Frame>>,
    x_metric: RwSignal<usize>,
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
        let (px, py) = f.to_pixel(x, reward.map_or(0.0, |m| run.value(p, m)), W, H);
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
