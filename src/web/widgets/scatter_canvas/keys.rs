//! The scatter by keyboard (`plot::keyboard`): ←/→ (Home/End, PageUp/PageDown) step through the
//! drawn points in x order with the tooltip on the point, Enter opens it as a click does.

use super::{ScatterData, H, W};
use crate::plot::keyboard::{order, step};
use crate::plot::raster::Raster;
use leptos::prelude::*;

/// A canvas's `keydown` handler; `tip` shows the point stepped to.
pub fn on_key(
    data: Memo<ScatterData>,
    raster: StoredValue<Option<Raster>, LocalStorage>,
    tip: RwSignal<Option<(String, f64, f64)>>,
    tooltip: Callback<usize, String>,
    on_pick: Callback<usize>,
) -> impl Fn(web_sys::KeyboardEvent) + Copy {
    // The drawn points in x order: computed on the first key after the data changed.
    let points = Memo::new(move |_| data.with(|d| order(&d.xs, &d.ys, &d.style())));
    let at = StoredValue::new(None::<usize>);
    move |e: web_sys::KeyboardEvent| {
        let key = e.key();
        if key == "Enter" {
            if let Some(p) = at
                .get_value()
                .and_then(|i| points.with_untracked(|o| o.get(i).copied()))
            {
                e.prevent_default();
                on_pick.run(p as usize);
            }
            return;
        }
        let Some(next) = step(&key, at.get_value(), points.with_untracked(Vec::len)) else {
            return;
        };
        e.prevent_default();
        at.set_value(Some(next));
        let Some(p) = points.with_untracked(|o| o.get(next).copied()) else {
            return;
        };
        let p = p as usize;
        let pixel = raster.with_value(|r| {
            let r = r.as_ref()?;
            data.with_untracked(|d| Some(r.frame.to_pixel(d.xs[p], d.ys[p], W, H)))
        });
        if let Some((x, y)) = pixel {
            tip.set(Some((
                tooltip.run(p),
                x / f64::from(W) * 100.0,
                y / f64::from(H) * 100.0,
            )));
        }
    }
}
