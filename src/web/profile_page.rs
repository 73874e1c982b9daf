//! The run inspector: files in (picked, dropped, recognized by content, or the embedded example),
//! profiled in the background worker, then the summary, the task table, the plots and any
//! rollout. The view lives in the URL hash (`#task=12&rollout=3`).

use super::download::ObjectUrl;
use super::inspector::{Inspector, Loaded};
use super::protocol::{self, object};
use super::worker_client::BackgroundWorker;
use crate::inspect::detect::{classify, FileKind};
use crate::inspect::model::{Columns, InspectView};
use crate::profile::ProfileOptions;
use leptos::ev;
use leptos::prelude::*;
use leptos::task::spawn_local;
use std::sync::Arc;
use wasm_bindgen::JsValue;
use wasm_bindgen_futures::JsFuture;

/// The embedded example run (NeMo Gym's ether0 example), so a first visit shows a real profile.
const EXAMPLE: [(&str, &[u8]); 2] = [
    (
        "example_rollouts_materialized_inputs.jsonl",
        include_bytes!(
            "../../tests/fixtures/gym-examples/ether0/example_rollouts_materialized_inputs.jsonl"
        ),
    ),
    (
        "example_rollouts.jsonl",
        include_bytes!("../../tests/fixtures/gym-examples/ether0/example_rollouts.jsonl"),
    ),
];

#[derive(Clone)]
enum Phase {
    Idle,
    Working {
        bytes: f64,
        total: f64,
        lines: f64,
        started: f64,
    },
    Done(Arc<Loaded>),
    Failed {
        message: String,
        missing_rollouts: bool,
    },
}

fn now() -> f64 {
    js_sys::Date::now()
}

fn bytes_file(name: &str, bytes: &[u8]) -> Option<web_sys::File> {
    let parts = js_sys::Array::of1(&js_sys::Uint8Array::from(bytes));
    web_sys::File::new_with_u8_array_sequence(&parts, name).ok()
}

/// Reads the first megabyte of a file (rollout lines can be long) to recognize it.
async fn kind_of(file: &web_sys::File) -> FileKind {
    let head = match file.slice_with_f64_and_f64(0.0, 1048576.0) {
        Ok(blob) => JsFuture::from(blob.array_buffer())
            .await
            .ok()
            .map(|b| js_sys::Uint8Array::new(&b).to_vec()),
        Err(_) => None,
    };
    classify(&head.unwrap_or_default(), &file.name())
}

#[component]
pub fn ProfilePage(pivot_file: RwSignal<Option<web_sys::File>, LocalStorage>) -> impl IntoView {
    let inputs = RwSignal::new_local(None::<web_sys::File>);
    let rollouts = RwSignal::new_local(None::<web_sys::File>);
    // An existing profile's files, shown directly when the run's own files are not given.
    let profiling = RwSignal::new_local(None::<web_sys::File>);
    let agent_metrics = RwSignal::new_local(None::<web_sys::File>);
    let roles = RwSignal::new(Vec::<(String, FileKind)>::new());
    let allow_partial = RwSignal::new(false);
    let phase = RwSignal::new(Phase::Idle);
    let worker_ready = RwSignal::new(false);
    let worker = StoredValue::new_local(BackgroundWorker::start(move |ready| {
        worker_ready.set(ready)
    }));

    // Sends a job to the worker; a worker that could not start is shown as the failure.
    let send = move |request: JsValue, on_message: Box<dyn FnMut(JsValue)>| {
        let sent = worker.with_value(|w| match w {
            Ok(w) => w.request(request, on_message),
            Err(e) => Err(e.clone()),
        });
        if let Err(message) = sent {
            phase.set(Phase::Failed {
                message,
                missing_rollouts: false,
            });
        }
    };

    let start = move || {
        let (Some(i), Some(r)) = (inputs.get_untracked(), rollouts.get_untracked()) else {
            return;
        };
        let options = ProfileOptions {
            allow_partial_rollouts: allow_partial.get_untracked(),
        };
        let total = i.size() + r.size();
        phase.set(Phase::Working {
            bytes: 0.0,
            total,
            lines: 0.0,
            started: now(),
        });
        let request = object(&[
            ("kind", "profile".into()),
            ("inputs", i.into()),
            ("rollouts", r.into()),
            (
                "options",
                serde_json::to_string(&options).unwrap_or_default().into(),
            ),
        ]);
        let on_message = move |msg: JsValue| match protocol::text(&msg, "kind").as_str() {
            "progress" => {
                let started = match phase.get_untracked() {
                    Phase::Working { started, .. } => started,
                    _ => now(),
                };
                phase.set(Phase::Working {
                    bytes: protocol::number(&msg, "bytes"),
                    total: protocol::number(&msg, "total"),
                    lines: protocol::number(&msg, "lines"),
                    started,
                });
            }
            "profile-done" => phase.set(match loaded(&msg) {
                Ok(l) => Phase::Done(Arc::new(l)),
                Err(message) => Phase::Failed {
                    message,
                    missing_rollouts: false,
                },
            }),
            _ => phase.set(Phase::Failed {
                message: protocol::text(&msg, "message"),
                missing_rollouts: protocol::field(&msg, "missing_rollouts").as_bool() == Some(true),
            }),
        };
        send(request, Box::new(on_message));
    };

    let start_files = move || {
        let Some(p) = profiling.get_untracked() else {
            return;
        };
        phase.set(Phase::Working {
            bytes: 0.0,
            total: p.size(),
            lines: 0.0,
            started: now(),
        });
        let mut entries = vec![
            ("kind", JsValue::from("profile-files")),
            ("profiling", p.into()),
        ];
        if let Some(m) = agent_metrics.get_untracked() {
            entries.push(("metrics", m.into()));
        }
        let request = object(&entries);
        let on_message = move |msg: JsValue| match protocol::text(&msg, "kind").as_str() {
            "profile-done" => phase.set(match loaded(&msg) {
                Ok(l) => Phase::Done(Arc::new(l)),
                Err(message) => Phase::Failed {
                    message,
                    missing_rollouts: false,
                },
            }),
            "progress" => {}
            _ => phase.set(Phase::Failed {
                message: protocol::text(&msg, "message"),
                missing_rollouts: false,
            }),
        };
        send(request, Box::new(on_message));
    };

    // Files from any picker or the drop zone: each is recognized by its content.
    let take_files = move |files: Vec<web_sys::File>| {
        spawn_local(async move {
            let mut changed = false;
            let mut profile_files = false;
            for file in files {
                let kind = kind_of(&file).await;
                roles.update(|r| {
                    r.retain(|(n, _)| *n != file.name());
                    r.push((file.name(), kind));
                });
                match kind {
                    FileKind::MaterializedInputs => {
                        inputs.set(Some(file));
                        changed = true;
                    }
                    FileKind::Rollouts => {
                        rollouts.set(Some(file));
                        changed = true;
                    }
                    FileKind::Pivot => pivot_file.set(Some(file)),
                    FileKind::RewardProfiling => {
                        profiling.set(Some(file));
                        profile_files = true;
                    }
                    FileKind::AgentMetrics => {
                        agent_metrics.set(Some(file));
                        profile_files = true;
                    }
                    FileKind::Unknown => {}
                }
            }
            let have_run =
                inputs.with_untracked(Option::is_some) && rollouts.with_untracked(Option::is_some);
            if changed && have_run {
                start();
            } else if profile_files && !have_run {
                start_files();
            }
        });
    };
    let from_input = move |e: ev::Event| {
        let input: web_sys::HtmlInputElement = event_target(&e);
        let list = input.files();
        let files = (0..list.as_ref().map_or(0, |l| l.length()))
            .filter_map(|i| list.as_ref()?.get(i))
            .collect();
        take_files(files);
    };
    let on_drop = move |e: ev::DragEvent| {
        e.prevent_default();
        let Some(list) = e.data_transfer().and_then(|d| d.files()) else {
            return;
        };
        take_files((0..list.length()).filter_map(|i| list.get(i)).collect());
    };
    let load_example = move |_| {
        take_files(
            EXAMPLE
                .iter()
                .filter_map(|(name, bytes)| bytes_file(name, bytes))
                .collect(),
        );
    };
    let cancel = move |_| {
        worker.with_value(|w| {
            if let Ok(w) = w {
                let _ = w.cancel();
            }
        });
        phase.set(Phase::Failed {
            message: "Cancelled.".into(),
            missing_rollouts: false,
        });
    };
    let run_partial = move |_| {
        allow_partial.set(true);
        start();
    };
    let file_name = move |slot: RwSignal<Option<web_sys::File>, LocalStorage>| {
        move || {
            slot.with(|f| {
                f.as_ref()
                    .map(|f| f.name())
                    .unwrap_or_else(|| "none".into())
            })
        }
    };

    view! {
        <section class="pick" data-testid="drop-zone"
            on:dragover=|e: ev::DragEvent| e.prevent_default()
            on:drop=on_drop>
            <p>"Drop a run's files here — materialized inputs, rollouts, or a pivot dataset; each is recognized by its content — or pick them:"</p>
            <label>"Any files " <input type="file" multiple accept=".jsonl,.json" data-testid="files" on:change=from_input /></label>
            <label>"Materialized inputs "
                <input type="file" accept=".jsonl,.json" data-testid="inputs-file" on:change=from_input />
                <span class="chosen" data-testid="inputs-name">{file_name(inputs)}</span>
            </label>
            <label>"Rollouts "
                <input type="file" accept=".jsonl,.json" data-testid="rollouts-file" on:change=from_input />
                <span class="chosen" data-testid="rollouts-name">{file_name(rollouts)}</span>
            </label>
            <label>
                <input type="checkbox" data-testid="allow-partial" prop:checked=move || allow_partial.get()
                    on:change=move |e| { allow_partial.set(event_target_checked(&e)); start(); } />
                " Profile completed rollouts of a partial collection"
            </label>
            <button data-testid="load-example" on:click=load_example>"Load the example run"</button>
            <span hidden data-worker-state="profile">{move || if worker_ready.get() { "ready" } else { "loading" }}</span>
            <ul class="roles" data-testid="file-roles">
                {move || roles.get().into_iter().map(|(name, kind)| view! {
                    <li data-kind=format!("{kind:?}")>{name}" — "{kind.label()}
                        {(kind == FileKind::Pivot).then_some(" (opened in the pivot validator)")}
                        {matches!(kind, FileKind::RewardProfiling | FileKind::AgentMetrics).then_some(" (an existing profile: shown directly; add the run's inputs and rollouts to read its rollouts)")}
                    </li>
                }).collect_view()}
                {move || {
                    let missing: Vec<&str> = [(inputs.with(Option::is_none), "materialized inputs"), (rollouts.with(Option::is_none), "rollouts")]
                        .into_iter().filter(|(m, _)| *m).map(|(_, n)| n).collect();
                    (!missing.is_empty() && !roles.with(Vec::is_empty)).then(|| view! { <li class="missing">"Still missing: "{missing.join(", ")}</li> })
                }}
            </ul>
        </section>
        {move || match phase.get() {
            Phase::Idle => view! {
                <p data-testid="status" class="status">"Choose both files, or load the example run."</p>
            }.into_any(),
            Phase::Working { bytes, total, lines, started } => {
                let secs = ((now() - started) / 1000.0).max(0.001);
                view! {
                    <div data-testid="status" class="status working">
                        <progress max=total value=bytes data-testid="progress"></progress>
                        {format!(" {:.1} of {:.1} MB · {} lines · {:.0} MB/s ", bytes / 1e6, total / 1e6, lines, bytes / 1e6 / secs)}
                        <button data-testid="cancel" on:click=cancel>"Cancel"</button>
                    </div>
                }.into_any()
            }
            Phase::Failed { message, missing_rollouts } => view! {
                <div data-testid="status" class="status error">
                    <pre>{message}</pre>
                    {missing_rollouts.then(|| view! {
                        <button data-testid="partial-offer" on:click=run_partial>"Profile the completed rollouts (partial mode)"</button>
                    })}
                </div>
            }.into_any(),
            Phase::Done(run) => view! {
                <p data-testid="status" class="status done">"Profile ready."</p>
                <Inspector run=run rollouts=rollouts worker=worker />
            }.into_any(),
        }}
    }
}

fn floats(msg: &JsValue, key: &str) -> Vec<f64> {
    js_sys::Float64Array::new(&protocol::field(msg, key)).to_vec()
}

fn loaded(msg: &JsValue) -> Result<Loaded, String> {
    // The worker's memory, for benches/browser_profile.rs.
    if let Some(body) = web_sys::window()
        .and_then(|w| w.document())
        .and_then(|d| d.body())
    {
        let _ = body.set_attribute(
            "data-worker-memory",
            &protocol::number(msg, "worker_memory").to_string(),
        );
    }
    let view: InspectView =
        serde_json::from_str(&protocol::text(msg, "view")).map_err(|e| e.to_string())?;
    let cols = Columns {
        task_stats: floats(msg, "task_stats"),
        point_task: floats(msg, "point_task"),
        point_rollout: floats(msg, "point_rollout"),
        point_offset: floats(msg, "point_offset"),
        point_len: floats(msg, "point_len"),
        point_values: floats(msg, "point_values"),
    };
    let downloads = [("profiling", "profiling_name"), ("metrics", "metrics_name")]
        .into_iter()
        .filter_map(|(blob, name)| {
            let b = protocol::blob(msg, blob)?;
            ObjectUrl::from_blob(protocol::text(msg, name), &b).ok()
        })
        .collect();
    Ok(Loaded {
        view,
        cols,
        downloads,
    })
}
