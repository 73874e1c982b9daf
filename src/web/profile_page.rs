//! The reward profile page: file pickers and drop zone, status, and the profile's summary,
//! tables and downloads.

use super::load::{profile_files, RunView, Source};
use crate::profile::ProfileOptions;
use crate::table::Table;
use leptos::ev;
use leptos::prelude::*;
use leptos::task::spawn_local;
use std::sync::Arc;

/// The embedded example run (NeMo Gym's ether0 example), so a first visit shows a real profile.
const EXAMPLE_INPUTS: Source = Source::Embedded {
    name: "example_rollouts_materialized_inputs.jsonl",
    bytes: include_bytes!(
        "../../tests/fixtures/gym-examples/ether0/example_rollouts_materialized_inputs.jsonl"
    ),
};
const EXAMPLE_ROLLOUTS: Source = Source::Embedded {
    name: "example_rollouts.jsonl",
    bytes: include_bytes!("../../tests/fixtures/gym-examples/ether0/example_rollouts.jsonl"),
};

#[derive(Clone)]
enum Phase {
    Idle,
    Working(String),
    Done(Arc<RunView>),
    Failed(String),
}

#[component]
pub fn ProfilePage() -> impl IntoView {
    let inputs = RwSignal::new_local(None::<Source>);
    let rollouts = RwSignal::new_local(None::<Source>);
    let allow_partial = RwSignal::new(false);
    let phase = RwSignal::new(Phase::Idle);
    // Each run gets an id; results of a run superseded by a newer one are dropped.
    let current_run = StoredValue::new(0u64);

    let start = move || {
        let (Some(i), Some(r)) = (inputs.get_untracked(), rollouts.get_untracked()) else {
            return;
        };
        let options = ProfileOptions {
            allow_partial_rollouts: allow_partial.get_untracked(),
        };
        let id = current_run.get_value() + 1;
        current_run.set_value(id);
        phase.set(Phase::Working("Starting…".into()));
        spawn_local(async move {
            let is_current = move || current_run.get_value() == id;
            let result = profile_files(&i, &r, options, move |msg| {
                if is_current() {
                    phase.set(Phase::Working(msg));
                }
            })
            .await;
            if is_current() {
                phase.set(match result {
                    Ok(run) => Phase::Done(Arc::new(run)),
                    Err(e) => Phase::Failed(e),
                });
            }
        });
    };

    let pick = move |slot: RwSignal<Option<Source>, LocalStorage>| {
        move |e: ev::Event| {
            let input: web_sys::HtmlInputElement = event_target(&e);
            if let Some(file) = input.files().and_then(|list| list.get(0)) {
                slot.set(Some(Source::File(file)));
                start();
            }
        }
    };
    let on_drop = move |e: ev::DragEvent| {
        e.prevent_default();
        let Some(files) = e.data_transfer().and_then(|d| d.files()) else {
            return;
        };
        for i in 0..files.length() {
            if let Some(file) = files.get(i) {
                let slot = if file.name().contains("materialized_inputs") {
                    inputs
                } else {
                    rollouts
                };
                slot.set(Some(Source::File(file)));
            }
        }
        start();
    };
    let load_example = move |_| {
        inputs.set(Some(EXAMPLE_INPUTS));
        rollouts.set(Some(EXAMPLE_ROLLOUTS));
        start();
    };
    let file_name = move |slot: RwSignal<Option<Source>, LocalStorage>| {
        move || {
            slot.with(|s| {
                s.as_ref()
                    .map(Source::name)
                    .unwrap_or_else(|| "none".into())
            })
        }
    };

    view! {
            <section class="pick" data-testid="drop-zone"
                on:dragover=|e: ev::DragEvent| e.prevent_default()
                on:drop=on_drop>
                <p>"Drop the " <code>"*_materialized_inputs.jsonl"</code> " and rollouts files here, or pick them:"</p>
                <label>"Materialized inputs "
                    <input type="file" accept=".jsonl,.json" data-testid="inputs-file" on:change=pick(inputs) />
                    <span class="chosen" data-testid="inputs-name">{file_name(inputs)}</span>
                </label>
                <label>"Rollouts "
                    <input type="file" accept=".jsonl,.json" data-testid="rollouts-file" on:change=pick(rollouts) />
                    <span class="chosen" data-testid="rollouts-name">{file_name(rollouts)}</span>
                </label>
                <label>
                    <input type="checkbox" data-testid="allow-partial"
                        on:change=move |e| { allow_partial.set(event_target_checked(&e)); start(); } />
                    " Profile completed rollouts of a partial collection"
                </label>
                <button data-testid="load-example" on:click=load_example>"Load the example run"</button>
            </section>
            {move || match phase.get() {
                Phase::Idle => view! {
                    <p data-testid="status" class="status">"Choose both files, or load the example run."</p>
                }.into_any(),
                Phase::Working(msg) => view! { <p data-testid="status" class="status working">{msg}</p> }.into_any(),
                Phase::Failed(err) => view! { <pre data-testid="status" class="status error">{err}</pre> }.into_any(),
                Phase::Done(run) => view! {
                    <p data-testid="status" class="status done">"Profile ready."</p>
                    <RunReport run=run />
                }.into_any(),
            }}
    }
}

#[component]
fn RunReport(run: Arc<RunView>) -> impl IntoView {
    let [line1, line2] = run.summary.clone();
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
        .warnings
        .iter()
        .map(|w| view! { <p class="warning">{w.clone()}</p> })
        .collect_view();
    view! {
        <section data-testid="summary" class="summary">
            <p>{line1}</p>
            <p>{line2}</p>
            {warnings}
        </section>
        <section class="downloads">
            <h2>"Output files"</h2>
            {downloads}
        </section>
        <section>
            <h2>"Agent metrics"</h2>
            <StatTable table=run.agents.clone() testid="agent-metrics" key_header="agent" row_testid="agent-row" />
        </section>
        <section>
            <h2>"Per task"</h2>
            <StatTable table=run.tasks.clone() testid="task-table" key_header="task" row_testid="task-row" />
        </section>
    }
}

#[component]
fn StatTable(
    table: Table,
    testid: &'static str,
    key_header: &'static str,
    row_testid: &'static str,
) -> impl IntoView {
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
            view! {
                <tr data-testid=row_testid data-key=key_attr>
                    <th scope="row">{key}</th>
                    {cells}
                </tr>
            }
        })
        .collect_view();
    view! {
        <div class="table-wrap">
            <table data-testid=testid>
                <thead><tr><th>{key_header}</th>{head}</tr></thead>
                <tbody>{rows}</tbody>
            </table>
        </div>
    }
}
