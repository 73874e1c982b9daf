//! The query bar above the profile page's plots and table: one expression of the core's query
//! language (docs/query.md "gymscope query") filters the rollouts the scatter shows and the tasks the
//! table lists. Field predicates are answered from the loaded columns at once
//! (`inspect::run_query`); text needs the file, which a worker of its own reads again with
//! progress and Cancel (cancelling never costs the page's worker its loaded run).

use crate::inspect::run::RunView;
use crate::inspect::run_query::{answer, points_of_keys, Answer};
use crate::query::{Query, BUILT_IN};
use crate::web::protocol::{Progress, Reply, Request};
use crate::web::state::Selection;
use crate::web::worker_client::WorkerHandle;
use leptos::prelude::*;
use std::sync::Arc;

#[derive(Clone)]
enum Status {
    None,
    Error(String),
    Reading(Progress),
    Matched { rollouts: usize, tasks: usize },
}

#[component]
pub fn QueryBar(
    run: Arc<RunView>,
    sel: Selection,
    inputs: Signal<Option<web_sys::File>, LocalStorage>,
    rollouts: Signal<Option<web_sys::File>, LocalStorage>,
) -> impl IntoView {
    // Started at the first query that needs the file (a page that never asks loads nothing more).
    let worker = StoredValue::new_local(None::<WorkerHandle>);
    let reading = StoredValue::new(false);
    let stop_reading = move || {
        if reading.get_value() {
            worker.with_value(|w| w.as_ref().map(WorkerHandle::cancel));
            reading.set_value(false);
        }
    };
    let status = RwSignal::new(Status::None);
    let draft = RwSignal::new(sel.query.get_untracked());
    let points = run.points();
    let r = run.clone();
    let matched = move |mask: Vec<bool>| {
        let tasks = crate::inspect::run_query::task_mask(&r, &mask);
        status.set(Status::Matched {
            rollouts: mask.iter().filter(|m| **m).count(),
            tasks: tasks.iter().filter(|m| **m).count(),
        });
        sel.matched.set(Some(Arc::new(mask)));
    };
    let r = run.clone();
    Effect::new(move |_| {
        let text = sel.query.get();
        stop_reading();
        if text.trim().is_empty() {
            status.set(Status::None);
            sel.matched.set(None);
            return;
        }
        let q = match Query::parse(&text) {
            Ok(q) => q,
            Err(e) => {
                status.set(Status::Error(e.to_string()));
                sel.matched.set(None);
                return;
            }
        };
        match answer(&r, &q) {
            Answer::Points(mask) => matched(mask),
            Answer::NeedsFile => {
                let (Some(inputs), Some(rollouts)) =
                    (inputs.get_untracked(), rollouts.get_untracked())
                else {
                    status.set(Status::Error("this query reads the rollouts file, and the run was loaded from profile files".into()));
                    return;
                };
                status.set(Status::Reading(Progress {
                    bytes: 0.0,
                    total: rollouts.size(),
                    lines: 0,
                }));
                let r = r.clone();
                let matched = matched.clone();
                let workers = crate::web::readers::reading_workers(inputs.size() + rollouts.size());
                let request = Request::Query {
                    inputs,
                    rollouts,
                    expr: text,
                    workers,
                };
                reading.set_value(true);
                worker.update_value(|w| {
                    let w = w.get_or_insert_with(|| WorkerHandle::start(|_| {}));
                    w.request(&request, move |reply| match reply {
                        Reply::Progress(p) => status.set(Status::Reading(p)),
                        Reply::QueryMatched { keys, workers } => {
                            reading.set_value(false);
                            crate::web::readers::mark("data-query-workers", workers);
                            let keys: Vec<(i64, i64)> =
                                keys.iter().map(|&(t, r)| (t as i64, r as i64)).collect();
                            matched(points_of_keys(&r, &keys));
                        }
                        Reply::Failed(f) => {
                            reading.set_value(false);
                            status.set(Status::Error(f.message));
                        }
                        _ => status.set(Status::Error("unexpected reply from the worker".into())),
                    });
                });
            }
        }
    });
    let fields: Vec<String> = BUILT_IN
        .iter()
        .map(ToString::to_string)
        .chain(run.view.metrics.iter().cloned())
        .collect();
    let options = fields
        .into_iter()
        .map(|f| view! { <option value=f></option> })
        .collect_view();
    // The draft follows the committed query (a Health cell or a reward group writes one).
    Effect::new(move |_| draft.set(sel.query.get()));
    let commit = move || sel.query.set(draft.get_untracked());
    let cancel = move |_| {
        stop_reading();
        status.set(Status::Error("Cancelled.".into()));
    };
    let shown = move || {
        match status.get() {
        Status::None => view! { <span class="muted">{format!("{} rollouts · e.g. reward == 0 and output ~ \"answer\", tool_calls > 5, health.loop", crate::figures::count(points))}</span> }.into_any(),
        Status::Error(e) => view! { <span class="query-error" data-testid="query-error">{e}</span> }.into_any(),
        Status::Reading(p) => view! {
            <span data-testid="query-reading">
                <progress max=p.total value=p.bytes></progress>
                {format!(" reading the rollouts file for the text: {:.0} of {:.0} MB ", p.bytes / 1e6, p.total / 1e6)}
                <button class="small" data-testid="query-cancel" on:click=cancel>"Cancel"</button>
            </span>
        }.into_any(),
        Status::Matched { rollouts, tasks } => view! {
            <span data-testid="query-count">{format!("{} of {} rollouts match · {} tasks", crate::figures::count(rollouts), crate::figures::count(points), crate::figures::count(tasks))}</span>
        }.into_any(),
    }
    };
    view! {
        <section class="query-bar" data-testid="query-bar">
            <form on:submit=move |e| { e.prevent_default(); commit(); }>
                <label for="query-input">"Find rollouts where "</label>
                <input id="query-input" type="search" list="query-fields" data-testid="query-input" spellcheck="false"
                    placeholder="reward == 0 and output ~ \"\\\\boxed\""
                    prop:value=move || draft.get()
                    on:input=move |e| draft.set(event_target_value(&e)) />
                <datalist id="query-fields">{options}</datalist>
                <button type="submit" class="small" data-testid="query-apply">"Apply"</button>
                <button type="button" class="small" data-testid="query-clear" on:click=move |_| { draft.set(String::new()); sel.query.set(String::new()); }>"Clear"</button>
            </form>
            <p class="query-status" data-testid="query-status">{shown}</p>
        </section>
    }
}
