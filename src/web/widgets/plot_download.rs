//! "SVG" and "PNG" buttons under a plot: the SVG is the plot model's file (`plot::svg`, or the
//! report's histogram); the PNG is that SVG rasterized at twice its size through an `<img>` from
//! a `blob:` URL (allowed by the page's CSP) and a canvas. The file saves at once, and stays
//! offered as a link (`data-testid="plot-download-link"`).

use gloo_file::{Blob, ObjectUrl};
use leptos::prelude::*;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

/// A saved file: its name and URL (a `blob:` URL kept alive with it, or a `data:` URL).
#[derive(Clone)]
struct Saved {
    name: String,
    href: String,
    _url: Option<ObjectUrl>,
}

/// Saves `href` as `name` now, as a click on a download link would.
fn save(name: &str, href: &str) {
    let document = gloo_utils::document();
    if let Some(a) = document
        .create_element("a")
        .ok()
        .and_then(|a| a.dyn_into::<web_sys::HtmlAnchorElement>().ok())
    {
        a.set_href(href);
        a.set_download(name);
        a.click();
    }
}

/// The SVG drawn onto a canvas at twice its size, as a PNG `data:` URL, given to `done`.
fn rasterize(svg: &str, done: impl FnOnce(String) + 'static) {
    let url = ObjectUrl::from(Blob::new_with_options(svg, Some("image/svg+xml")));
    let src = url.to_string();
    let Ok(img) = web_sys::HtmlImageElement::new() else {
        return;
    };
    let image = img.clone();
    let onload = Closure::once(move || {
        let _keep = url; // the image's source lives until it has loaded
        let (w, h) = (image.natural_width().max(1), image.natural_height().max(1));
        let Some(canvas) = gloo_utils::document()
            .create_element("canvas")
            .ok()
            .and_then(|c| c.dyn_into::<web_sys::HtmlCanvasElement>().ok())
        else {
            return;
        };
        canvas.set_width(w * 2);
        canvas.set_height(h * 2);
        if let Some(ctx) = canvas
            .get_context("2d")
            .ok()
            .flatten()
            .and_then(|c| c.dyn_into::<web_sys::CanvasRenderingContext2d>().ok())
        {
            let _ = ctx.draw_image_with_html_image_element_and_dw_and_dh(
                &image,
                0.0,
                0.0,
                f64::from(w * 2),
                f64::from(h * 2),
            );
        }
        if let Ok(png) = canvas.to_data_url_with_type("image/png") {
            done(png);
        }
    });
    img.set_onload(Some(onload.as_ref().unchecked_ref()));
    onload.forget(); // called once, when the image loads
    img.set_src(&src);
}

#[component]
pub fn PlotDownloads(
    /// The file name without extension, and `data-plot` of the buttons.
    name: &'static str,
    /// The plot as an SVG document, made when asked for.
    svg: Callback<(), String>,
) -> impl IntoView {
    let saved = RwSignal::new_local(None::<Saved>);
    let as_svg = move |_| {
        let file = format!("{name}.svg");
        let url = ObjectUrl::from(Blob::new_with_options(
            svg.run(()).as_str(),
            Some("image/svg+xml"),
        ));
        let href = url.to_string();
        save(&file, &href);
        saved.set(Some(Saved {
            name: file,
            href,
            _url: Some(url),
        }));
    };
    let as_png = move |_| {
        rasterize(&svg.run(()), move |png| {
            let file = format!("{name}.png");
            save(&file, &png);
            saved.set(Some(Saved {
                name: file,
                href: png,
                _url: None,
            }));
        });
    };
    view! {
        <div class="plot-downloads">
            <button class="small" data-testid="download-svg" data-plot=name on:click=as_svg>"SVG"</button>
            <button class="small" data-testid="download-png" data-plot=name on:click=as_png>"PNG"</button>
            {move || saved.get().map(|s| view! {
                <a class="muted" data-testid="plot-download-link" data-plot=name href=s.href download=s.name.clone()>{s.name.clone()}</a>
            })}
        </div>
    }
}
