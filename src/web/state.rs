//! What the profile page's components share: the loaded run and the selection (a task, an
//! opened rollout and a brush) that the URL hash mirrors.

use crate::inspect::run::RunView;
use crate::plot::brush::Brush;
use leptos::prelude::*;
use std::sync::Arc;

/// What is selected: a task (index in `view.tasks`) and an opened rollout (a point index).
#[derive(Clone, Copy)]
pub struct Selection {
    pub task: RwSignal<Option<usize>>,
    pub rollout: RwSignal<Option<usize>>,
    /// The rectangle brushed on the rollout scatter (data units), and per task whether one of
    /// its shown rollouts lies in it: the task table shows only those.
    pub brush: RwSignal<Option<Brush>>,
    pub brushed: RwSignal<Option<Arc<Vec<bool>>>>,
}

impl Selection {
    pub fn new() -> Selection {
        Selection {
            task: RwSignal::new(None),
            rollout: RwSignal::new(None),
            brush: RwSignal::new(None),
            brushed: RwSignal::new(None),
        }
    }

    pub fn open_point(&self, run: &RunView, point: usize) {
        self.task.set(run.task_of_point(point));
        self.rollout.set(Some(point));
    }
}

/// The URL's hash (`#profile&task=…`).
pub fn current_hash() -> String {
    gloo_utils::window().location().hash().unwrap_or_default()
}

/// Replaces the URL's hash without adding a history entry or scrolling.
pub fn replace_hash(hash: &str) {
    if current_hash() != hash {
        let _ = gloo_utils::history().replace_state_with_url(
            &wasm_bindgen::JsValue::NULL,
            "",
            Some(hash),
        );
    }
}
