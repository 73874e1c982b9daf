//! What the profile page's components share: the loaded run and the selection (a task, an
//! opened rollout and a brush) that the URL hash mirrors.

use crate::inspect::health::HealthFilter;
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
    /// The query bar's expression, and per point whether it matches (`None`: no query).
    pub query: RwSignal<String>,
    pub matched: RwSignal<Option<Arc<Vec<bool>>>>,
    /// The tasks the task table shows, in its order (indices into `view.tasks`): the rollout
    /// panel's previous and next follow it.
    pub order: RwSignal<Arc<Vec<u32>>>,
    /// The pass threshold (NeMo Gym's 1), the user's to set when rewards are not 0/1: the task
    /// table's groups and "Group by: reward group" follow it.
    pub threshold: RwSignal<f64>,
}

impl Selection {
    pub fn new() -> Selection {
        Selection {
            task: RwSignal::new(None),
            rollout: RwSignal::new(None),
            brush: RwSignal::new(None),
            brushed: RwSignal::new(None),
            query: RwSignal::new(String::new()),
            matched: RwSignal::new(None),
            order: RwSignal::new(Arc::default()),
            threshold: RwSignal::new(crate::reward_group::DEFAULT_THRESHOLD),
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

/// What the Health page shares with the profile page (a context the app provides): the run the
/// profile page loaded (health is computed in the same read), a query a rate cell asks the
/// profile page's query bar to apply (one filter model: `health.loop == true and agent == "a"`),
/// and a rollout the Health page asks the inspector to open.
#[derive(Clone, Copy)]
pub struct HealthLink {
    pub run: RwSignal<Option<Arc<RunView>>, LocalStorage>,
    /// A query for the profile page's query bar, taken (and cleared) by it.
    pub query: RwSignal<Option<String>>,
    /// `(task, rollout)` to open on the profile page.
    pub open: RwSignal<Option<(i64, i64)>>,
    /// The query applied on the profile page (empty: none): the Health page says it shows
    /// the whole run when one is (docs/app.md, "Every table and figure follows the query").
    pub applied: RwSignal<String>,
}

impl HealthLink {
    /// `filter`: an old `#profile&flag=…&agent=…` link's rate cell, applied as its query.
    pub fn new(filter: Option<HealthFilter>) -> HealthLink {
        HealthLink {
            run: RwSignal::new_local(None),
            query: RwSignal::new(filter.as_ref().and_then(HealthFilter::as_query)),
            open: RwSignal::new(None),
            applied: RwSignal::new(String::new()),
        }
    }
}

/// The rollouts file of the run the profile page loaded (a context the app provides): the pivot
/// builder's source when the user picks none there.
#[derive(Clone, Copy)]
pub struct LoadedRollouts(pub RwSignal<Option<web_sys::File>, LocalStorage>);

/// Each task's prompt snippet in `view.tasks` order, once the worker has read them (they come
/// with the output files, after the profile is on screen; issue 61): the task table searches
/// them and the task panel shows them. `None` before, and for a view that brought its own
/// (`TaskMeta::snippet`). A context the app provides.
#[derive(Clone, Copy)]
pub struct Snippets(pub RwSignal<Option<Arc<Vec<String>>>, LocalStorage>);

impl Snippets {
    /// Task `i`'s snippet: the one read after the view, else the view's own.
    pub fn of(&self, run: &RunView, i: usize) -> String {
        let read = self.0.with(|s| s.as_ref().and_then(|s| s.get(i).cloned()));
        read.unwrap_or_else(|| run.view.tasks[i].snippet.clone())
    }
}
