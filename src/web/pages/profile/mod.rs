//! The run inspector's entry: files in (picked, dropped, recognized by content, or the embedded
//! example), profiled in the background worker with progress and Cancel, then the inspector.
//! Which slot a file fills and what starts is the core's (`inspect::intake`).

pub mod export;
pub mod groups;
pub mod inspector;
mod job;
pub mod summary;

use crate::inspect::detect::FileKind;
use crate::inspect::intake::{Next, Slots};
use crate::inspect::run::RunView;
use crate::profile::ProfileOptions;
use crate::web::download::OutputFiles;
use crate::web::pages::profile::inspector::Inspector;
use crate::web::protocol::{Failure, Progress, Request, UpstreamFiles};
use crate::web::widgets::file_pick::FilePick;
use crate::web::widgets::follow::{Follow, FollowPick, FollowSwitch};
use crate::web::worker_client::start_page_worker;
use job::send;
use leptos::prelude::*;
use std::sync::Arc;

#[derive(Clone)]
enum Phase {
    Idle,
    Working { progress: Progress, started: f64 },
    Done(Arc<RunView>),
    Failed(Failure),
}

fn now() -> f64 {
    js_sys::Date::now()
}

#[component]
pub fn ProfilePage(pivot_file: RwSignal<Option<web_sys::File>, LocalStorage>) -> impl IntoView {
    let slots = RwSignal::new_local(Slots::<web_sys::File>::default());
    let roles = RwSignal::new(Vec::<(String, FileKind)>::new());
    let atif_problems = RwSignal::new(Vec::<String>::new());
    let allow_partial = RwSignal::new(false);
    let phase = RwSignal::new_local(Phase::Idle);
    let files = RwSignal::new_local(OutputFiles::None);
    let (worker, worker_ready) = start_page_worker();
    let follow = Follow::new();
    let snippets = use_context::<crate::web::state::Snippets>();
    follow.set_refresh(job::refresher(
        worker, slots, phase, files, snippets, follow,
    ));
    // The Health page shows the run loaded here (its health came in the same read).
    // The pivot builder builds from the run profiled here unless told otherwise.
    if let Some(crate::web::state::LoadedRollouts(loaded)) = use_context() {
        Effect::new(move |_| {
            let done = matches!(phase.get(), Phase::Done(..));
            loaded.set(
                done.then(|| slots.with_untracked(|s| s.rollouts.clone()))
                    .flatten(),
            );
        });
    }
    if let Some(link) = use_context::<crate::web::state::HealthLink>() {
        Effect::new(move |_| {
            link.run.set(match phase.get() {
                Phase::Done(run) => Some(run),
                _ => None,
            });
        });
    }

    let start = move |request: Request, total: f64| {
        follow.stop(None); // another run replaces the followed one
        files.set(OutputFiles::None);
        phase.set(Phase::Working {
            progress: Progress {
                bytes: 0.0,
                total,
                lines: 0,
            },
            started: now(),
        });
        send(worker, &request, phase, files, snippets, None);
    };
    let start_run = move || {
        let (Some(inputs), Some(rollouts)) =
            slots.with_untracked(|s| (s.inputs.clone(), s.rollouts.clone()))
        else {
            return;
        };
        let upstream = slots.with_untracked(|s| UpstreamFiles {
            quality_summary: s.quality_summary.clone(),
            rollout_verdicts: s.rollout_verdicts.clone(),
        });
        let total = inputs.size() + rollouts.size();
        let options = ProfileOptions {
            allow_partial_rollouts: allow_partial.get_untracked(),
        };
        start(
            Request::Profile {
                inputs,
                rollouts,
                options,
                upstream,
                workers: crate::web::readers::reading_workers(total),
            },
            total,
        );
    };
    let start_files = move || {
        let Some((profiling, metrics)) =
            slots.with_untracked(|s| Some((s.profiling.clone()?, s.agent_metrics.clone())))
        else {
            return;
        };
        let total = profiling.size();
        start(Request::ProfileFiles { profiling, metrics }, total);
    };
    let take_files = move |files: Vec<(web_sys::File, FileKind)>| {
        roles.update(|r| {
            for (file, kind) in &files {
                r.retain(|(n, _)| *n != file.name());
                r.push((file.name(), *kind));
            }
        });
        let taken = slots.try_update(|s| s.take(files));
        let Some(taken) = taken else { return };
        if let Some(p) = taken.pivot {
            pivot_file.set(Some(p));
        }
        match taken.next {
            Next::ProfileRun => start_run(),
            Next::ShowProfileFiles => start_files(),
            Next::Wait => {}
        }
    };
    // ATIF trajectories become the run's two files first (read in the page: each is small).
    let take = move |files: Vec<(web_sys::File, FileKind)>| {
        if !files.iter().any(|(_, k)| *k == FileKind::Atif) {
            take_files(files);
            return;
        }
        roles.update(|r| r.extend(files.iter().map(|(f, k)| (f.name(), *k))));
        leptos::task::spawn_local(async move {
            match crate::web::widgets::atif_files::atif_as_run(files).await {
                Ok((run, problems)) => {
                    atif_problems.set(problems);
                    take_files(run);
                }
                Err(e) => phase.set(Phase::Failed(Failure::from(format!("ATIF: {e}")))),
            }
        });
    };
    // Files opened to follow: their rollouts are still coming.
    let take_followed = move |files: Vec<web_sys::File>| {
        allow_partial.set(true);
        crate::web::widgets::file_pick::classify_all(files, take);
    };
    let cancel = move |_| {
        worker.with_value(crate::web::worker_client::WorkerHandle::cancel);
        phase.set(Phase::Failed(Failure::from("Cancelled.")));
    };
    let run_partial = move |_| {
        allow_partial.set(true);
        start_run();
    };
    let missing = move || {
        let missing = slots.with(|s| s.missing().join(", "));
        let missing = (!missing.is_empty() && !roles.with(Vec::is_empty))
            .then(|| view! { <li class="missing">"Still missing: "{missing}</li> });
        // The ATIF schema check's findings (as `gymscope validate-atif`), folded.
        let problems = atif_problems.get();
        let check = (!problems.is_empty()).then(|| view! {
            <li class="missing" data-testid="atif-problems">
                <details>
                    <summary>{format!("ATIF schema check: {} problem(s)", problems.len())}</summary>
                    <ul>{problems.into_iter().map(|p| view! { <li>{p}</li> }).collect_view()}</ul>
                </details>
            </li>
        });
        (missing, check)
    };
    let name_of = move |pick: fn(&Slots<web_sys::File>) -> &Option<web_sys::File>| {
        move || {
            slots.with(|s| {
                pick(s)
                    .as_ref()
                    .map_or_else(|| "none".to_string(), web_sys::File::name)
            })
        }
    };

    // Once a run is shown, the zone folds into a line naming its files.
    let loaded = Signal::derive_local(move || {
        matches!(phase.get(), Phase::Done(..)).then(|| {
            slots.with(|s| {
                [&s.inputs, &s.rollouts, &s.profiling]
                    .into_iter()
                    .flatten()
                    .map(web_sys::File::name)
                    .collect::<Vec<_>>()
                    .join(" + ")
            })
        })
    });
    view! {
        <FilePick on_files=take inputs_name=name_of(|s| &s.inputs) rollouts_name=name_of(|s| &s.rollouts)
            roles=roles missing=missing loaded=loaded>
            <FollowPick follow=follow on_files=take_followed />
            <label>
                <input type="checkbox" data-testid="allow-partial" prop:checked=move || allow_partial.get()
                    on:change=move |e| { allow_partial.set(event_target_checked(&e)); start_run(); } />
                " Profile completed rollouts of a partial collection"
            </label>
            <span hidden data-worker-state="profile">{move || if worker_ready.get() { "ready" } else { "loading" }}</span>
        </FilePick>
        {move || match phase.get() {
            Phase::Idle => view! {
                <p data-testid="status" class="status">"Choose both files, or load the example run."</p>
            }.into_any(),
            Phase::Working { progress: p, started } => {
                let secs = ((now() - started) / 1000.0).max(0.001);
                view! {
                    <div data-testid="status" class="status working">
                        <progress max=p.total value=p.bytes data-testid="progress"></progress>
                        {format!(" {:.1} of {:.1} MB · {} lines · {:.0} MB/s ", p.bytes / 1e6, p.total / 1e6, p.lines, p.bytes / 1e6 / secs)}
                        <button data-testid="cancel" on:click=cancel>"Cancel"</button>
                    </div>
                }.into_any()
            }
            Phase::Failed(f) => view! {
                <div data-testid="status" class="status error">
                    <pre>{f.message}</pre>
                    {f.missing_rollouts.then(|| view! {
                        <button data-testid="partial-offer" on:click=run_partial>"Profile the completed rollouts (partial mode)"</button>
                    })}
                </div>
            }.into_any(),
            Phase::Done(run) => view! {
                <p data-testid="status" class="status done">"Profile ready."
                    <FollowSwitch follow=follow names=slots.with_untracked(|s| Some([s.inputs.as_ref()?.name(), s.rollouts.as_ref()?.name()]))/></p>
                <Inspector run=run from_atif=roles.with(|r| r.iter().any(|(_, k)| *k == FileKind::Atif)) files=files.read_only() inputs=Signal::derive_local(move || slots.with(|s| s.inputs.clone())) rollouts=Signal::derive_local(move || slots.with(|s| s.rollouts.clone())) worker=worker />
            }.into_any(),
        }}
    }
}
