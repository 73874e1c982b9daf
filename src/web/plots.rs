//! Reward against token usage (or any numeric field) for every rollout, keyed by task and
//! rollout: drawn into a canvas from a core raster, hover shows "task T · rollout R", click opens
//! the rollout, the selected task's rollouts and mean are highlighted. Also per-task means and a
//! reward histogram. `window.__gymscope.pointPixel(task, rollout)` lets tests aim at a point.

use super::inspector::{Loaded, Selection};
use crate::inspect::plot::{self, Frame, Raster};
use crate::table::short_number;
use leptos::prelude::*;
use std::sync::Arc;
use wasm_bindgen::prelude::*;
use wasm_bindgen::{Clamped, JsCast};

const W: u32 = 720;
const H: u32 = 360;

fn default_x(run: &Loaded) -> usize {
    ["output_tokens", "total_tokens", "input_tokens"]
        .iter()
        .find_map(|m| run.metric(m))
        .or_else(|| (0..run.view.metrics.len()).find(|&m| run.view.metrics[m] != "reward"))
        .unwrap_or(0)
}

fn draw(canvas: &web_sys::HtmlCanvasElement, raster: &Raster) {
    let Ok(Some(ctx)) = canvas.get_context("2d") else {
        return;
    };
    let Ok(ctx) = ctx.dyn_into::<web_sys::CanvasRenderingContext2d>() else {
        return;
    };
    if let Ok(image) = web_sys::ImageData::new_with_u8_clamped_array_and_sh(
        Clamped(&raster.rgba),
        raster.width,
        raster.height,
    ) {
        ctx.clear_rect(0.0, 0.0, f64::from(raster.width), f64::from(raster.height));
        let _ = ctx.put_image_data(&image, 0.0, 0.0);
    }
}

/// Pixel position in the canvas of a mouse event (the canvas may be scaled by CSS).
fn canvas_xy(e: &web_sys::MouseEvent, canvas: &web_sys::HtmlCanvasElement) -> (f64, f64) {
    let rect = canvas.get_bounding_client_rect();
    let sx = f64::from(canvas.width()) / rect.width().max(1.0);
    let sy = f64::from(canvas.height()) / rect.height().max(1.0);
    (
        (f64::from(e.client_x()) - rect.left()) * sx,
        (f64::from(e.client_y()) - rect.top()) * sy,
    )
}

/// Tick labels around a plot, as positioned HTML (text stays crisp and selectable).
fn axes(frame: Frame) -> impl IntoView {
    let xs = plot::ticks(frame.x_min, frame.x_max, 6)
        .into_iter()
        .map(|t| {
            let (px, _) = frame.to_pixel(t, frame.y_min, W, H);
            view! { <span class="tick x" style:left=format!("{:.1}%", px / f64::from(W) * 100.0)>{short_number(t)}</span> }
        })
        .collect_view();
    let ys = plot::ticks(frame.y_min, frame.y_max, 5)
        .into_iter()
        .map(|t| {
            let (_, py) = frame.to_pixel(frame.x_min, t, W, H);
            view! { <span class="tick y" style:top=format!("{:.1}%", py / f64::from(H) * 100.0)>{short_number(t)}</span> }
        })
        .collect_view();
    view! { {xs}{ys} }
}

#[component]
pub fn Plots(run: Arc<Loaded>, sel: Selection) -> impl IntoView {
    let x_metric = RwSignal::new(default_x(&run));
    let reward = run.metric("reward");
    let canvas = NodeRef::<leptos::html::Canvas>::new();
    let task_canvas = NodeRef::<leptos::html::Canvas>::new();
    let raster = StoredValue::new_local(None::<Raster>);
    let task_raster = StoredValue::new_local(None::<Raster>);
    let frame = RwSignal::new(None::<Frame>);
    let tooltip = RwSignal::new(None::<(String, f64, f64)>);
    let n = run.cols.point_task.len();

    // Rollout scatter: redrawn when the x field or the selected task changes.
    let r = run.clone();
    Effect::new(move |_| {
        let x = x_metric.get();
        let highlight = sel.task.get().map(|t| {
            let m = &r.view.tasks[t];
            m.first_point as usize..(m.first_point + m.num_rollouts) as usize
        });
        let xs: Vec<f64> = (0..n).map(|i| r.value(i, x)).collect();
        let ys: Vec<f64> = (0..n)
            .map(|i| reward.map_or(f64::NAN, |m| r.value(i, m)))
            .collect();
        let drawn = plot::scatter(&xs, &ys, highlight, W, H);
        if let (Some(c), Some(d)) = (canvas.get(), drawn.as_ref()) {
            draw(&c, d);
        }
        frame.set(drawn.as_ref().map(|d| d.frame));
        raster.set_value(drawn);
    });

    // Per-task means: mean x against mean reward, one point per task.
    let r = run.clone();
    Effect::new(move |_| {
        let x = x_metric.get();
        let mean = |t: usize, m: usize| {
            let meta = &r.view.tasks[t];
            let vals: Vec<f64> = (meta.first_point..meta.first_point + meta.num_rollouts)
                .map(|p| r.value(p as usize, m))
                .filter(|v| !v.is_nan())
                .collect();
            if vals.is_empty() {
                f64::NAN
            } else {
                vals.iter().sum::<f64>() / vals.len() as f64
            }
        };
        let tasks = r.view.tasks.len();
        let xs: Vec<f64> = (0..tasks).map(|t| mean(t, x)).collect();
        let ys: Vec<f64> = (0..tasks)
            .map(|t| reward.map_or(f64::NAN, |m| mean(t, m)))
            .collect();
        let highlight = sel.task.get().map(|t| t..t + 1);
        let drawn = plot::scatter(&xs, &ys, highlight, W, H);
        if let (Some(c), Some(d)) = (task_canvas.get(), drawn.as_ref()) {
            draw(&c, d);
        }
        task_raster.set_value(drawn);
    });

    // Test hook: where a given (task, rollout) point is drawn, in client coordinates.
    let r = run.clone();
    let hook = Closure::<dyn Fn(f64, f64) -> JsValue>::new(move |task: f64, rollout: f64| {
        let (Some(c), Some(f)) = (canvas.get_untracked(), frame.get_untracked()) else {
            return JsValue::NULL;
        };
        let Some(t) = r.view.tasks.iter().position(|m| m.task as f64 == task) else {
            return JsValue::NULL;
        };
        let Some(p) = r.point_of(t, rollout as i64) else {
            return JsValue::NULL;
        };
        let (px, py) = f.to_pixel(
            r.value(p, x_metric.get_untracked()),
            reward.map_or(0.0, |m| r.value(p, m)),
            W,
            H,
        );
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
    if let Some(w) = web_sys::window() {
        let _ = js_sys::Reflect::set(&w, &"__gymscope".into(), &hooks);
    }
    hook.forget(); // lives as long as the page's run view; replaced on the next run

    let r = run.clone();
    let on_move = move |e: web_sys::MouseEvent| {
        let Some(c) = canvas.get_untracked() else {
            return;
        };
        let (x, y) = canvas_xy(&e, &c);
        let hit = raster.with_value(|rs| rs.as_ref().and_then(|rs| rs.nearest(x, y, 6)));
        tooltip.set(hit.map(|p| {
            let p = p as usize;
            let xm = x_metric.get_untracked();
            let text = format!(
                "task {} · rollout {} — reward {}, {} {}",
                r.cols.point_task[p],
                r.cols.point_rollout[p],
                reward.map_or("–".into(), |m| short_number(r.value(p, m))),
                r.view.metrics[xm],
                short_number(r.value(p, xm))
            );
            (text, x / f64::from(W) * 100.0, y / f64::from(H) * 100.0)
        }));
    };
    let r = run.clone();
    let on_click = move |e: web_sys::MouseEvent| {
        let Some(c) = canvas.get_untracked() else {
            return;
        };
        let (x, y) = canvas_xy(&e, &c);
        if let Some(p) = raster.with_value(|rs| rs.as_ref().and_then(|rs| rs.nearest(x, y, 6))) {
            sel.open_point(&r, p as usize);
        }
    };
    let on_task_click = move |e: web_sys::MouseEvent| {
        let Some(c) = task_canvas.get_untracked() else {
            return;
        };
        let (x, y) = canvas_xy(&e, &c);
        if let Some(t) = task_raster.with_value(|rs| rs.as_ref().and_then(|rs| rs.nearest(x, y, 6)))
        {
            sel.task.set(Some(t as usize));
        }
    };

    let options = run
        .view
        .metrics
        .iter()
        .enumerate()
        .filter(|(_, m)| *m != "reward")
        .map(|(i, m)| view! { <option value=i.to_string() selected=move || x_metric.get() == i>{m.clone()}</option> })
        .collect_view();
    let rewards: Vec<f64> = (0..n)
        .map(|i| reward.map_or(f64::NAN, |m| run.value(i, m)))
        .collect();
    let (edges, counts) = plot::histogram(&rewards, 20);
    let most = counts.iter().copied().max().unwrap_or(1).max(1);
    let bars = counts
        .iter()
        .enumerate()
        .map(|(b, &c)| {
            let title = format!("{} – {}: {c} rollouts", short_number(edges[b]), short_number(edges[b + 1]));
            view! { <div class="bar" title=title style:height=format!("{:.1}%", c as f64 / most as f64 * 100.0)></div> }
        })
        .collect_view();
    let range = edges
        .first()
        .zip(edges.last())
        .map(|(a, b)| format!("{} … {}", short_number(*a), short_number(*b)));

    view! {
        <section class="plots">
            <h2>"Reward against "
                <select data-testid="plot-x" on:change=move |e| {
                    if let Ok(i) = event_target_value(&e).parse() { x_metric.set(i) }
                }>{options}</select>
                <span class="muted">{format!(" — {n} rollouts; hover a point, click to open it")}</span>
            </h2>
            <div class="plot">
                <canvas node_ref=canvas width=W height=H data-testid="scatter"
                    on:mousemove=on_move on:mouseleave=move |_| tooltip.set(None) on:click=on_click></canvas>
                {move || frame.get().map(axes)}
                {move || tooltip.get().map(|(text, x, y)| view! {
                    <div class="tooltip" data-testid="plot-tooltip" style:left=format!("{x:.1}%") style:top=format!("{y:.1}%")>{text}</div>
                })}
            </div>
            <div class="plot-row">
                <div>
                    <h3>"Per task: mean reward against mean of the same field"</h3>
                    <div class="plot small"><canvas node_ref=task_canvas width=W height=H data-testid="task-scatter" on:click=on_task_click></canvas></div>
                </div>
                <div>
                    <h3>"Reward histogram " <span class="muted">{range}</span></h3>
                    <div class="histogram" data-testid="reward-histogram">{bars}</div>
                </div>
            </div>
        </section>
    }
}
