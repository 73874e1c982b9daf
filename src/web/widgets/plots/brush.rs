//! What follows the brush on the rollout scatter: the tasks with a shown rollout inside it
//! (the task table's filter), and for a notebook widget's host the brushed rollouts' keys
//! (`embed`: `inspector.selection`); the brush's readout, cut to the data (`Brush::within_data`).

use crate::inspect::run::RunView;
use crate::plot::axis_title;
use crate::web::state::Selection;
use leptos::prelude::*;
use std::sync::Arc;

pub fn follow_brush(
    r: Arc<RunView>,
    sel: Selection,
    xs: Memo<Arc<Vec<f64>>>,
    ys: Arc<Vec<f64>>,
    hidden: RwSignal<Vec<bool>>,
) {
    Effect::new(move |_| {
        let brush = sel.brush.get();
        let mask = brush.map(|b| {
            let xs = xs.get();
            Arc::new(hidden.with(|h| r.tasks_in_brush(&xs, &ys, &b, h)))
        });
        sel.brushed.set(mask);
        if crate::web::embed::wants_selection() {
            let xs = xs.get_untracked();
            let keys = brush.map(|b| hidden.with_untracked(|h| r.keys_in_brush(&xs, &ys, &b, h)));
            crate::web::embed::report_selection(&keys.unwrap_or_default());
        }
    });
}

/// "brushed output tokens 310.5–1,822, reward 0.6571–1.05: 17 tasks" and the button that clears
/// it: the brush's sides within the data's extent, so no count reads negative.
pub fn brush_status(
    r: Arc<RunView>,
    sel: Selection,
    xs: Memo<Arc<Vec<f64>>>,
    ys: Arc<Vec<f64>>,
    x_metric: RwSignal<usize>,
) -> impl Fn() -> Option<AnyView> {
    move || {
        sel.brush.get().map(|b| {
            let b = xs.with(|xs| b.within_data(xs, &ys));
            let tasks = sel
                .brushed
                .with(|m| m.as_ref().map_or(0, |m| m.iter().filter(|v| **v).count()));
            let field = &r.view.metrics[x_metric.get()];
            let x = |v| crate::figures::for_column(field, v);
            let y = |v| crate::figures::reward(Some(v));
            view! {
                <span class="brush-status" data-testid="brush-status">
                    {format!(
                        "brushed {} {}–{}, reward {}–{}: {} tasks",
                        axis_title(field),
                        x(b.x0), x(b.x1), y(b.y0), y(b.y1), crate::figures::count(tasks)
                    )}
                </span>
                <button class="small" data-testid="brush-clear" title="or press Esc" on:click=move |_| sel.brush.set(None)>"Clear brush"</button>
            }
            .into_any()
        })
    }
}
