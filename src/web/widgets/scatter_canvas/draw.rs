//! What a scatter paints: the core's raster put on the canvas in one `putImageData`, the
//! binned-mean overlay stroked on top, and the ticks and axis titles as HTML around it.

use super::{ScatterData, H, W};
use crate::plot::raster::{Frame, Raster};
use crate::plot::{agent_colour, Scale};
use crate::table::short_number;
use leptos::prelude::*;
use wasm_bindgen::{Clamped, JsCast};

fn context(canvas: &web_sys::HtmlCanvasElement) -> Option<web_sys::CanvasRenderingContext2d> {
    canvas
        .get_context("2d")
        .ok()
        .flatten()
        .and_then(|c| c.dyn_into::<web_sys::CanvasRenderingContext2d>().ok())
}

pub fn draw(canvas: &web_sys::HtmlCanvasElement, raster: &Raster, data: &ScatterData) {
    let Some(ctx) = context(canvas) else {
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
    // The binned means: a band for the interval, a line through the means.
    let f = raster.frame;
    let at = |x: f64, y: f64| f.to_pixel(x, y.clamp(f.y_min, f.y_max), W, H);
    for (agent, bins, _) in data.overlay.iter() {
        if bins.is_empty() || agent.is_some_and(|a| data.hidden.get(a).copied().unwrap_or(false)) {
            continue;
        }
        let c = agent.map_or([110, 110, 110], agent_colour);
        let rgb = |a: f64| format!("rgba({},{},{},{a})", c[0], c[1], c[2]);
        ctx.begin_path();
        for (k, b) in bins.iter().enumerate() {
            let (px, py) = at(b.x, b.hi);
            if k == 0 {
                ctx.move_to(px, py);
            } else {
                ctx.line_to(px, py);
            }
        }
        for b in bins.iter().rev() {
            let (px, py) = at(b.x, b.lo);
            ctx.line_to(px, py);
        }
        ctx.close_path();
        ctx.set_fill_style_str(&rgb(0.18));
        ctx.fill();
        ctx.begin_path();
        for (k, b) in bins.iter().enumerate() {
            let (px, py) = at(b.x, b.mean);
            if k == 0 {
                ctx.move_to(px, py);
            } else {
                ctx.line_to(px, py);
            }
        }
        ctx.set_line_width(2.5);
        ctx.set_stroke_style_str(&rgb(1.0));
        ctx.stroke();
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
pub fn axes(x: &Scale, y: &Scale, x_title: String, y_title: String) -> impl IntoView {
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
