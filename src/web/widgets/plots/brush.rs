//! What follows the brush on the rollout scatter: the tasks with a shown rollout inside it
//! (the task table's filter), and for a notebook widget's host the brushed rollouts' keys
//! (`embed`: `inspector.selection`).

use crate::inspect::run::RunView;
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
