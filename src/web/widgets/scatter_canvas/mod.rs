//! One scatter plot on a canvas: the core's raster drawn with one `putImageData` (agent colours,
//! hidden agents, jitter, brush), the binned-mean overlay stroked on top, the plot model's round
//! ticks and axis titles around it as HTML (crisp, selectable), a tooltip on hover, a callback
//! on click, and (when given `on_brush`) a rectangle dragged to brush; all keyed by the point
//! picked from the raster. A drag shorter than 5 px is a click.

use crate::plot::binned::{BinMean, Interval};
use crate::plot::brush::Brush;
use crate::plot::raster::{self, Frame, Raster};
use crate::plot::scatter_scales;
use draw::{axes, canvas_xy, draw};
use leptos::prelude::*;
use std::sync::Arc;

mod data;
mod draw;
mod keys;

pub use data::ScatterData;

pub const W: u32 = 720;
pub const H: u32 = 320;

/// One agent's binned means (`None`: all points), as the overlay draws them.
pub type OverlayLines = Arc<Vec<(Option<usize>, Vec<BinMean>, Interval)>>;

/// The points' (task, rollout) columns.
pub type Keys = (Arc<Vec<f64>>, Arc<Vec<f64>>);

const DRAG_MIN_PX: f64 = 5.0;

#[component]
pub fn ScatterCanvas(
    data: Memo<ScatterData>,
    testid: &'static str,
    tooltip_testid: &'static str,
    /// The tooltip text of a point.
    tooltip: Callback<usize, String>,
    on_pick: Callback<usize>,
    /// Called with the rectangle dragged, in data units; no callback, no brushing.
    #[prop(optional)]
    on_brush: Option<Callback<Brush>>,
    /// Set to the canvas and the drawn frame (for the tests' `pointPixel` hook).
    #[prop(optional)]
    canvas: Option<NodeRef<leptos::html::Canvas>>,
    #[prop(optional)] frame_out: Option<RwSignal<Option<Frame>>>,
) -> impl IntoView {
    let canvas = canvas.unwrap_or_default();
    let raster = StoredValue::new_local(None::<Raster>);
    let scales = Memo::new(move |_| data.with(|d| scatter_scales(&d.xs, &d.ys)));
    let tip = RwSignal::new(None::<(String, f64, f64)>);
    // A drag in progress: its start and current canvas pixels.
    let drag = RwSignal::new(None::<((f64, f64), (f64, f64))>);
    // The click that ends a brushing drag opens nothing.
    let brushed_last = StoredValue::new(false);
    Effect::new(move |_| {
        let (sx, sy) = scales.get();
        let frame = Frame::of(&sx, &sy);
        data.with(|d| {
            let drawn = raster::scatter(&d.xs, &d.ys, frame, d.highlight.clone(), &d.style(), W, H);
            if let Some(c) = canvas.get() {
                draw(&c, &drawn, d);
            }
            raster.set_value(Some(drawn));
        });
        if let Some(out) = frame_out {
            out.set(Some(frame));
        }
    });
    // How many points have both coordinates (what is drawn, for the tests and the curious).
    let shown = move || {
        data.with(|d| {
            let style = d.style();
            d.xs.iter()
                .zip(d.ys.iter())
                .enumerate()
                .filter(|(i, (x, y))| x.is_finite() && y.is_finite() && style.is_shown(*i))
                .count()
        })
    };
    let pick_at =
        move |x: f64, y: f64| raster.with_value(|r| r.as_ref().and_then(|r| r.nearest(x, y, 6)));
    let xy = move |e: &web_sys::MouseEvent| canvas.get_untracked().map(|c| canvas_xy(e, &c));
    let on_move = move |e: web_sys::MouseEvent| {
        let Some((x, y)) = xy(&e) else { return };
        if let Some((start, _)) = drag.get_untracked() {
            drag.set(Some((start, (x, y))));
            return;
        }
        tip.set(pick_at(x, y).map(|p| {
            (
                tooltip.run(p as usize),
                x / f64::from(W) * 100.0,
                y / f64::from(H) * 100.0,
            )
        }));
    };
    let on_down = move |e: web_sys::MouseEvent| {
        if e.button() != 0 {
            return;
        }
        if let Some(p) = xy(&e) {
            e.prevent_default();
            brushed_last.set_value(false);
            // A drag starts: the hover tip would stay over the page after it.
            tip.set(None);
            drag.set(Some((p, p)));
        }
    };
    // Ends a drag; true when it brushed (a drag shorter than 5 px is a click, handled there).
    let finish = move |end: Option<(f64, f64)>| -> bool {
        let Some((start, last)) = drag.get_untracked() else {
            return false;
        };
        drag.set(None);
        tip.set(None);
        let end = end.unwrap_or(last);
        let (Some(brushed), true) = (
            on_brush,
            (end.0 - start.0).hypot(end.1 - start.1) >= DRAG_MIN_PX,
        ) else {
            return false;
        };
        let Some(frame) = raster.with_value(|r| r.as_ref().map(|r| r.frame)) else {
            return false;
        };
        let clamp = |(x, y): (f64, f64)| {
            (
                x.clamp(0.0, f64::from(W - 1)),
                y.clamp(0.0, f64::from(H - 1)),
            )
        };
        let (a, b) = (clamp(start), clamp(end));
        let (xa, ya) = frame.to_data(a.0, a.1, W, H);
        let (xb, yb) = frame.to_data(b.0, b.1, W, H);
        if let Some(brush) = Brush::between(xa, xb, ya, yb) {
            brushed.run(brush.rounded());
        }
        true
    };
    let on_up = move |e: web_sys::MouseEvent| brushed_last.set_value(finish(xy(&e)));
    let on_click = move |e: web_sys::MouseEvent| {
        if brushed_last.get_value() {
            brushed_last.set_value(false);
            return;
        }
        if let Some(p) = xy(&e).and_then(|(x, y)| pick_at(x, y)) {
            on_pick.run(p as usize);
        }
    };
    // The rectangle being dragged, or else the brush in place (from its data units).
    let rect = move || {
        let dragged = drag
            .get()
            .filter(|(a, b)| on_brush.is_some() && (b.0 - a.0).hypot(b.1 - a.1) >= DRAG_MIN_PX);
        let (a, b) = if let Some(d) = dragged {
            d
        } else {
            let brush = data.with(|d| d.brush)?;
            let (sx, sy) = scales.get();
            let f = Frame::of(&sx, &sy);
            (
                f.to_pixel(brush.x0, brush.y1, W, H),
                f.to_pixel(brush.x1, brush.y0, W, H),
            )
        };
        let pct = |v: f64, of: u32| v.clamp(0.0, f64::from(of)) / f64::from(of) * 100.0;
        let (l, r) = (pct(a.0.min(b.0), W), pct(a.0.max(b.0), W));
        let (t, btm) = (pct(a.1.min(b.1), H), pct(a.1.max(b.1), H));
        Some(view! {
            <div class="brush-rect" data-testid="brush-rect"
                style:left=format!("{l:.2}%") style:top=format!("{t:.2}%")
                style:width=format!("{:.2}%", r - l) style:height=format!("{:.2}%", btm - t)></div>
        })
    };
    let on_key = keys::on_key(data, raster, tip, tooltip, on_pick);
    let label = move || {
        let n = shown();
        data.with(|d| {
            format!(
                "{} against {}: {n} points. Arrow keys step through them, Enter opens one.",
                d.y_title, d.x_title
            )
        })
    };
    view! {
        <div class="plot">
            <canvas node_ref=canvas width=W height=H data-testid=testid data-points=shown
                tabindex="0" role="img" aria-label=label on:keydown=on_key
                on:blur=move |_| tip.set(None)
                data-binned=move || data.with(|d| d.overlay.iter().flat_map(|(_, bins, _)| bins).map(|b| b.n).sum::<usize>())
                on:mousemove=on_move on:mousedown=on_down on:mouseup=on_up on:click=on_click
                on:mouseleave=move |_| { tip.set(None); let _ = finish(None); }></canvas>
            {rect}
            {move || {
                let (x, y) = scales.get();
                data.with(|d| axes(&x, &y, d.x_title.clone(), d.y_title.clone()))
            }}
            {move || tip.get().map(|(text, x, y)| view! {
                <div class="tooltip" data-testid=tooltip_testid style:left=format!("{x:.1}%") style:top=format!("{y:.1}%")>{text}</div>
            })}
        </div>
    }
}
