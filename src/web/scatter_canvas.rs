//! One scatter plot on a canvas: the core's raster drawn with one `putImageData`, the plot
//! model's round ticks and axis titles around it as HTML (crisp, selectable), a tooltip on
//! hover and a callback on click, both keyed by the point picked from the raster.

use crate::plot::raster::{self, Frame, Raster};
use crate::plot::{scatter_scales, Scale};
use crate::table::short_number;
use leptos::prelude::*;
use wasm_bindgen::{Clamped, JsCast};

pub const W: u32 = 720;
pub const H: u32 = 360;

/// What one scatter shows.
#[derive(Clone, Debug, PartialEq)]
pub struct ScatterData {
    pub xs: Vec<f64>,
    pub ys: Vec<f64>,
    pub x_title: String,
    pub y_title: String,
    /// Points drawn on top, larger, with a cross at their mean.
    pub highlight: Option<std::ops::Range<usize>>,
}

fn draw(canvas: &web_sys::HtmlCanvasElement, raster: &Raster) {
    let Some(ctx) = canvas
        .get_context("2d")
        .ok()
        .flatten()
        .and_then(|c| c.dyn_into::<web_sys::CanvasRenderingContext2d>().ok())
    else {
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
pub fn canvas_xy(e: &web_sys::MouseEvent, canvas: &web_sys::HtmlCanvasElement) -> (f64, f64) {
    let rect = canvas.get_bounding_client_rect();
    let sx = f64::from(canvas.width()) / rect.width().max(1.0);
    let sy = f64::from(canvas.height()) / rect.height().max(1.0);
    (
        (f64::from(e.client_x()) - rect.left()) * sx,
        (f64::from(e.client_y()) - rect.top()) * sy,
    )
}

/// Tick labels and axis titles, positioned in percent of the plot.
fn axes(x: &Scale, y: &Scale, x_title: String, y_title: String) -> impl IntoView {
    let frame = Frame::of(x, y);
    let xs = x.ticks.iter().map(|&t| {
        let (px, _) = frame.to_pixel(t, y.lo, W, H);
        view! { <span class="tick x" style:left=format!("{:.1}%", px / f64::from(W) * 100.0)>{short_number(t)}</span> }
    }).collect_view();
    let ys = y.ticks.iter().map(|&t| {
        let (_, py) = frame.to_pixel(x.lo, t, W, H);
        view! { <span class="tick y" style:top=format!("{:.1}%", py / f64::from(H) * 100.0)>{short_number(t)}</span> }
    }).collect_view();
    view! {
        {xs}{ys}
        <span class="axis-title x" data-testid="axis-title-x">{x_title}</span>
        <span class="axis-title y" data-testid="axis-title-y">{y_title}</span>
    }
}

#[component]
pub fn ScatterCanvas(
    data: Memo<ScatterData>,
    testid: &'static str,
    tooltip_testid: &'static str,
    /// The tooltip text of a point.
    tooltip: Callback<usize, String>,
    on_pick: Callback<usize>,
    /// Set to the canvas and the drawn frame (for the tests' `pointPixel` hook).
    #[prop(optional)]
    canvas: Option<NodeRef<leptos::html::Canvas>>,
    #[prop(optional)] frame_out: Option<RwSignal<Option<Frame>>>,
) -> impl IntoView {
    let canvas = canvas.unwrap_or_default();
    let raster = StoredValue::new_local(None::<Raster>);
    let scales = Memo::new(move |_| data.with(|d| scatter_scales(&d.xs, &d.ys)));
    let tip = RwSignal::new(None::<(String, f64, f64)>);
    Effect::new(move |_| {
        let (sx, sy) = scales.get();
        let frame = Frame::of(&sx, &sy);
        let drawn = data.with(|d| raster::scatter(&d.xs, &d.ys, frame, d.highlight.clone(), W, H));
        if let Some(c) = canvas.get() {
            draw(&c, &drawn);
        }
        if let Some(out) = frame_out {
            out.set(Some(frame));
        }
        raster.set_value(Some(drawn));
    });
    let pick = move |e: &web_sys::MouseEvent| {
        let c = canvas.get_untracked()?;
        let (x, y) = canvas_xy(e, &c);
        let hit = raster.with_value(|r| r.as_ref().and_then(|r| r.nearest(x, y, 6)))?;
        Some((hit as usize, x, y))
    };
    let on_move = move |e: web_sys::MouseEvent| {
        tip.set(pick(&e).map(|(p, x, y)| {
            (
                tooltip.run(p),
                x / f64::from(W) * 100.0,
                y / f64::from(H) * 100.0,
            )
        }));
    };
    let on_click = move |e: web_sys::MouseEvent| {
        if let Some((p, _, _)) = pick(&e) {
            on_pick.run(p);
        }
    };
    view! {
        <div class="plot">
            <canvas node_ref=canvas width=W height=H data-testid=testid
                on:mousemove=on_move on:mouseleave=move |_| tip.set(None) on:click=on_click></canvas>
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
