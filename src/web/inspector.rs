//! A profiled run: summary, agent metrics, downloads, the task table, the plots and the rollout
//! view, sharing one selection that the URL hash mirrors.

use super::download::ObjectUrl;
use super::plots::Plots;
use super::protocol::{self, object};
use super::rollout_view::RolloutView;
use super::task_table::TaskTable;
use super::worker_client::BackgroundWorker;
use crate::inspect::hash::{self, ViewState};
use crate::inspect::model::{Columns, InspectView};
use crate::table::{short_number, Table};
use leptos::prelude::*;
use std::sync::Arc;

pub struct Loaded {
    pub view: InspectView,
    pub cols: Columns,
    /// The profile's two output files (none when the run was read from them).
    pub downloads: Vec<ObjectUrl>,
}

impl Loaded {
    pub fn metric(&self, name: &str) -> Option<usize> {
        self.view.metrics.iter().position(|m| m == name)
    }
    /// The value of metric `m` for point `i` (NaN when missing).
    pub fn value(&self, i: usize, m: usize) -> f64 {
        self.cols
            .point_values
            .get(i * self.view.metrics.len() + m)
            .copied()
            .unwrap_or(f64::NAN)
    }
    /// The point of (task index in `view.tasks`, rollout index).
    pub fn point_of(&self, task: usize, rollout: i64) -> Option<usize> {
        let t = self.view.tasks.get(task)?;
        let range = t.first_point as usize..(t.first_point + t.num_rollouts) as usize;
        range
            .into_iter()
            .find(|&i| self.cols.point_rollout[i] as i64 == rollout)
    }
    /// The task (index in `view.tasks`) a point belongs to.
    pub fn task_of_point(&self, point: usize) -> Option<usize> {
        let tasks = &self.view.tasks;
        let at = tasks.partition_point(|t| (t.first_point as usize) <= point);
        at.checked_sub(1)
            .filter(|&t| point < (tasks[t].first_point + tasks[t].num_rollouts) as usize)
    }
}

/// What is selected: a task (index in `view.tasks`) and an opened rollout (a point index).
#[derive(Clone, Copy)]
pub struct Selection {
    pub task: RwSignal<Option<usize>>,
    pub rollout: RwSignal<Option<usize>>,
}

impl Selection {
    pub fn open_point(&self, run: &Loaded, point: usize) {
        self.task.set(run.task_of_point(point));
        self.rollout.set(Some(point));
    }
}

#[component]
pub fn Inspector(
    run: Arc<Loaded>,
    rollouts: RwSignal<Option<web_sys::File>, LocalStorage>,
    worker: StoredValue<Result<BackgroundWorker, String>, LocalStorage>,
) -> impl IntoView {
    let sel = Selection {
        task: RwSignal::new(None),
        rollout: RwSignal::new(None),
    };

    // Land on the place the URL names, then keep the URL in step with the selection.
    let initial = hash::parse(&current_hash());
    if let Some(t) = initial
        .task
        .and_then(|t| run.view.tasks.iter().position(|m| m.task == t))
    {
        sel.task.set(Some(t));
        if let Some(p) = initial.rollout.and_then(|r| run.point_of(t, r)) {
            sel.rollout.set(Some(p));
        }
    }
    let r = run.clone();
    Effect::new(move |_| {
        let task = sel
            .task
            .get()
            .and_then(|t| r.view.tasks.get(t))
            .map(|t| t.task);
        let rollout = sel.rollout.get().map(|p| r.cols.point_rollout[p] as i64);
        let state = ViewState {
            page: Some("profile".into()),
            task,
            rollout: rollout.filter(|_| task.is_some()),
        };
        set_hash(&hash::format(&state));
    });

    let t = &run.view.totals;
    let mean = |v: Option<f64>| v.map_or("–".to_string(), short_number);
    let totals = format!(
        "{} tasks · {} of {} rollouts · {} agents · mean reward {} · mean output tokens {} · mean total tokens {}",
        t.tasks,
        t.rollouts,
        t.expected_rollouts,
        t.agents,
        mean(t.mean_reward),
        mean(t.mean_output_tokens),
        mean(t.mean_total_tokens)
    );
    let [line1, line2] = run.view.summary.clone();
    let downloads = run
        .downloads
        .iter()
        .zip(["download-profiling", "download-agent-metrics"])
        .map(|(d, testid)| {
            view! {
                <a href=d.url.clone() download=d.file_name.clone() data-testid=testid>
                    {format!("{} ({} bytes)", d.file_name, d.bytes)}
                </a>
            }
        })
        .collect_view();
    let warnings = run
        .view
        .warnings
        .iter()
        .map(|w| view! { <p class="warning">{w.clone()}</p> })
        .collect_view();
    view! {
        <section data-testid="summary" class="summary">
            <p data-testid="totals"><strong>{totals}</strong></p>
            <p>{line1}</p>
            <p>{line2}</p>
            {warnings}
        </section>
        <section class="downloads"><h2>"Output files"</h2>{downloads}</section>
        <ExportReport worker=worker rollouts_name=run.view.rollouts_name.clone() />
        <section>
            <h2>"Agent metrics"</h2>
            <AgentTable table=run.view.agents.clone() />
        </section>
        <Plots run=run.clone() sel=sel />
        <section>
            <h2>"Per task"</h2>
            <TaskTable run=run.clone() sel=sel />
        </section>
        <RolloutView run=run.clone() rollouts=rollouts sel=sel />
    }
}

#[component]
fn AgentTable(table: Table) -> impl IntoView {
    let headers = table.headers.clone();
    let head = headers
        .iter()
        .map(|h| view! { <th>{h.clone()}</th> })
        .collect_view();
    let rows = table
        .rows
        .into_iter()
        .map(|row| {
            let cells = row
                .cells
                .into_iter()
                .zip(headers.iter().cloned())
                .map(|(cell, header)| view! { <td data-key=header data-value=cell.exact>{cell.text}</td> })
                .collect_view();
            let (key, key_attr) = (row.key.clone(), row.key);
            view! { <tr data-testid="agent-row" data-key=key_attr><th scope="row">{key}</th>{cells}</tr> }
        })
        .collect_view();
    view! {
        <div class="table-wrap">
            <table data-testid="agent-metrics">
                <thead><tr><th>"agent"</th>{head}</tr></thead>
                <tbody>{rows}</tbody>
            </table>
        </div>
    }
}

/// "Export report": the same self-contained HTML file `gymscope report` writes, rendered by the
/// same core code in the worker from the loaded run.
#[component]
fn ExportReport(
    worker: StoredValue<Result<BackgroundWorker, String>, LocalStorage>,
    rollouts_name: String,
) -> impl IntoView {
    let title = RwSignal::new(crate::names::report_title(&rollouts_name).to_string());
    let today = js_sys::Date::new_0()
        .to_iso_string()
        .as_string()
        .unwrap_or_default();
    let date = RwSignal::new(today.get(..10).unwrap_or_default().to_string());
    let conversations = RwSignal::new(20usize);
    let result = RwSignal::new(None::<Result<Arc<ObjectUrl>, String>>);
    let export = move |_| {
        let request = serde_json::json!({
            "title": title.get_untracked(),
            "date": Some(date.get_untracked()).filter(|d| !d.is_empty()),
            "conversations": conversations.get_untracked(),
        });
        result.set(None);
        let msg = object(&[
            ("kind", "report".into()),
            ("request", request.to_string().into()),
        ]);
        let on_message = move |m: wasm_bindgen::JsValue| match protocol::text(&m, "kind").as_str() {
            "report-done" => result.set(Some(
                protocol::blob(&m, "report")
                    .ok_or_else(|| "no report".to_string())
                    .and_then(|b| ObjectUrl::from_blob(protocol::text(&m, "name"), &b))
                    .map(Arc::new),
            )),
            "progress" => {}
            _ => result.set(Some(Err(protocol::text(&m, "message")))),
        };
        let sent = worker.with_value(|w| match w {
            Ok(w) => w.request(msg, on_message),
            Err(e) => Err(e.clone()),
        });
        if let Err(e) = sent {
            result.set(Some(Err(e)));
        }
    };
    view! {
        <section class="export">
            <h2>"Share"</h2>
            <label>"Title " <input type="text" data-testid="report-title" prop:value=move || title.get()
                on:input=move |e| title.set(event_target_value(&e)) /></label>
            <label>" Date " <input type="text" data-testid="report-date" prop:value=move || date.get()
                on:input=move |e| date.set(event_target_value(&e)) /></label>
            <label>" Conversations of the first " <input type="number" min="0" data-testid="report-conversations" style:width="5em"
                prop:value=move || conversations.get().to_string()
                on:input=move |e| conversations.set(event_target_value(&e).parse().unwrap_or(0)) />" tasks "</label>
            <button data-testid="export-report" on:click=export>"Export report"</button>
            {move || result.get().map(|r| match r {
                Ok(url) => view! {
                    <a href=url.url.clone() download=url.file_name.clone() data-testid="report-download">
                        {format!("{} ({:.1} MB) — one HTML file, opens offline anywhere", url.file_name, url.bytes as f64 / 1e6)}</a>
                }.into_any(),
                Err(e) => view! { <span class="error">{e}</span> }.into_any(),
            })}
        </section>
    }
}

pub fn current_hash() -> String {
    web_sys::window()
        .and_then(|w| w.location().hash().ok())
        .unwrap_or_default()
}

/// Replaces the URL's hash without adding a history entry or scrolling.
fn set_hash(hash: &str) {
    if current_hash() == hash {
        return;
    }
    if let Some(history) = web_sys::window().and_then(|w| w.history().ok()) {
        let _ = history.replace_state_with_url(&wasm_bindgen::JsValue::NULL, "", Some(hash));
    }
}
