//! The Compare page: two runs (each a run's two files or a `*_reward_profiling.jsonl`, recognized
//! by content), up to eight dropped at once (grouped by `intake::group_runs`, a baseline chosen),
//! or the embedded example pair, compared in the worker by the core (`compare`), then the
//! report's summary (a verdict row per candidate), the paired tasks and any task's rollouts.

mod diff;
mod inputs;
pub mod result;
mod tasks;

use crate::compare::{CompareOptions, PairBy};
use crate::inspect::detect::FileKind;
use crate::inspect::intake::{group_runs, RunFiles, Slots, MAX_RUNS};
use crate::web::pages::compare::result::CompareResult;
use crate::web::protocol::{Compared, Failure, Progress, Reply, Request};
use crate::web::widgets::file_pick::kinds_of;
use crate::web::worker_client::start_page_worker;
use inputs::{compared_names, input_of, input_of_run};
use leptos::ev;
use leptos::prelude::*;
use std::sync::Arc;

#[derive(Clone)]
enum Phase {
    Idle,
    Working(Progress),
    Done(Arc<Compared>),
    Failed(String),
}

/// With several candidates, which one the sections below detail (the verdicts above list all).
fn candidate_picker(
    c: &Compared,
    worker: crate::web::worker_client::SharedWorker,
    phase: RwSignal<Phase, LocalStorage>,
) -> Option<impl IntoView> {
    (c.candidates.len() > 1).then(|| {
        let options = c
            .candidates
            .iter()
            .enumerate()
            .map(|(i, name)| view! { <option value=i.to_string() selected=i == c.candidate>{name.clone()}</option> })
            .collect_view();
        let pick = move |e: ev::Event| {
            let index = event_target_value(&e).parse().unwrap_or(0);
            worker.with_value(|w| {
                w.request(&Request::CompareCandidate { index }, move |reply| match reply {
                    Reply::Compared(c) => phase.set(Phase::Done(Arc::from(c))),
                    Reply::Failed(Failure { message, .. }) => phase.set(Phase::Failed(message)),
                    _ => {}
                });
            });
        };
        view! {
            <label class="candidate-pick">"Details below for "
                <select data-testid="compare-candidate" on:change=pick>{options}</select>
                <span class="muted">" (the verdicts table lists every candidate)"</span></label>
        }
    })
}

#[component]
pub fn ComparePage() -> impl IntoView {
    let sides = [
        RwSignal::new_local(Slots::<web_sys::File>::default()),
        RwSignal::new_local(Slots::default()),
    ];
    let pair_by_index = RwSignal::new(false);
    // Runs dropped at once (by name) and which of them is the baseline.
    let runs = RwSignal::new_local(Vec::<(String, RunFiles<web_sys::File>)>::new());
    let baseline = RwSignal::new(0usize);
    let phase = RwSignal::new_local(Phase::Idle);
    // Once compared, the pickers fold into one line so the result starts high (issue 60).
    let pickers_open = RwSignal::new(false);
    let (worker, worker_ready) = start_page_worker();
    let start = move || {
        pickers_open.set(false);
        let mut several = runs.get_untracked();
        let (a, b, more) = if several.len() >= 2 {
            let base = several.remove(baseline.get_untracked().min(several.len() - 1));
            let mut rest = several.into_iter().map(|(_, r)| input_of_run(r));
            let Some(b) = rest.next() else { return };
            (input_of_run(base.1), b, rest.collect())
        } else {
            let (Some(a), Some(b)) = (
                sides[0].with_untracked(input_of),
                sides[1].with_untracked(input_of),
            ) else {
                return;
            };
            (a, b, Vec::new())
        };
        let pair_by = [PairBy::Content, PairBy::Index][usize::from(pair_by_index.get_untracked())];
        let options = CompareOptions {
            pair_by,
            ..CompareOptions::default()
        };
        phase.set(Phase::Working(Progress {
            bytes: 0.0,
            total: 1.0,
            lines: 0,
        }));
        worker.with_value(|w| {
            let workers = crate::web::readers::comparing_workers(&a, &b, &more);
            w.request(
                &Request::Compare {
                    a,
                    b,
                    more,
                    options,
                    workers,
                },
                move |reply| match reply {
                    Reply::Progress(p) => phase.set(Phase::Working(p)),
                    Reply::Compared(c) => {
                        crate::web::readers::mark("data-compare-workers", c.workers);
                        phase.set(Phase::Done(Arc::from(c)));
                    }
                    Reply::Failed(Failure { message, .. }) => phase.set(Phase::Failed(message)),
                    _ => phase.set(Phase::Failed("unexpected reply from the worker".into())),
                },
            );
        });
    };
    let take = move |side: usize, files: Vec<(web_sys::File, FileKind)>| {
        runs.set(Vec::new());
        sides[side].update(|s| {
            s.take(files);
        });
        start();
    };
    let picker = move |side: usize, label: &'static str, testid: &'static str| {
        let on_change = move |e: ev::Event| {
            let input: web_sys::HtmlInputElement = event_target(&e);
            kinds_of(input.files(), move |files| take(side, files));
        };
        let on_drop = move |e: ev::DragEvent| {
            e.prevent_default();
            kinds_of(e.data_transfer().and_then(|d| d.files()), move |files| {
                take(side, files);
            });
        };
        let chosen = move || {
            sides[side].with(|s| {
                [&s.inputs, &s.rollouts, &s.profiling]
                    .into_iter()
                    .flatten()
                    .map(web_sys::File::name)
                    .collect::<Vec<_>>()
                    .join(", ")
            })
        };
        // A drop target with a styled button over a hidden input (the profile page's zone),
        // so the browser's "No file chosen" never shows; WebDriver still chooses files.
        view! {
            <div class="compare-side" data-testid=format!("{testid}-drop")
                on:dragover=|e: ev::DragEvent| e.prevent_default() on:drop=on_drop>{label}" (drop its files here, or choose them) "
                <label class="file-button">"Choose files…"<input class="file-input" type="file" multiple accept=".jsonl,.json" data-testid=testid on:change=on_change /></label>
                " "<span class="chosen" data-testid=format!("{testid}-names")>{chosen}</span>
            </div>
        }
    };
    let take_runs = move |files: Vec<(web_sys::File, FileKind)>| {
        let named: Vec<_> = files
            .into_iter()
            .map(|(f, k)| (f.clone(), f.name(), k))
            .collect();
        match group_runs(&named) {
            Ok(r) if r.len() >= 2 => {
                runs.set(r);
                baseline.set(0);
                start();
            }
            Ok(_) => phase.set(Phase::Failed("Choose at least two runs.".into())),
            Err(e) => phase.set(Phase::Failed(e)),
        }
    };
    let on_runs = move |e: ev::Event| {
        let input: web_sys::HtmlInputElement = event_target(&e);
        kinds_of(input.files(), take_runs);
    };
    let on_runs_drop = move |e: ev::DragEvent| {
        e.prevent_default();
        kinds_of(e.data_transfer().and_then(|d| d.files()), take_runs);
    };
    let baseline_options = move || {
        runs.with(|r| {
            r.iter()
                .enumerate()
                .map(|(i, (name, _))| view! { <option value=i.to_string() selected=move || baseline.get() == i>{name.clone()}</option> })
                .collect_view()
        })
    };
    let load_example = move |_| {
        let files = inputs::example_files();
        let (a, b) = files.split_at(2);
        sides[0].set(Slots::default());
        sides[1].set(Slots::default());
        runs.set(Vec::new());
        sides[0].update(|s| {
            s.take(a.to_vec());
        });
        take(1, b.to_vec());
    };
    view! {
        <section class="pick compare-pick" class:collapsed=move || matches!(phase.get(), Phase::Done(..)) && !pickers_open.get()>
            <p class="loaded-line" data-testid="compare-loaded">{move || format!("Compared: {} ", compared_names(sides, runs))}
                <button class="small" data-testid="compare-change" on:click=move |_| pickers_open.set(true)>"Change runs"</button></p>
            <p>"Compare two runs of the same tasks: for each, choose its materialized inputs and rollouts files (or a *_reward_profiling.jsonl). Tasks are paired by content; the files are read here, in a background worker."</p>
            {picker(0, "A (baseline)", "compare-a")}
            {picker(1, "B (compared)", "compare-b")}
            <div class="compare-side" data-testid="compare-runs-drop" on:dragover=|e: ev::DragEvent| e.prevent_default() on:drop=on_runs_drop>
                {format!("Or several runs at once (up to {MAX_RUNS}): drop all their files here, or choose them ")}
                <label class="file-button">"Choose runs…"<input class="file-input" type="file" multiple accept=".jsonl,.json" data-testid="compare-runs" on:change=on_runs /></label>
            </div>
            // Shown only once runs are chosen: an empty dropdown says nothing (issue 44, item 6).
            {move || (!runs.with(Vec::is_empty)).then(|| view! {
                <p class="chosen" data-testid="compare-runs-names">{move || runs.with(|r| format!("{} runs: {}", r.len(), r.iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>().join(", ")))}</p>
                <label>" baseline: "
                    <select data-testid="compare-baseline" on:change=move |e| { baseline.set(event_target_value(&e).parse().unwrap_or(0)); start(); }>{baseline_options}</select>
                </label>
            })}
            <label><input type="checkbox" data-testid="compare-pair-by-index" prop:checked=move || pair_by_index.get()
                on:change=move |e| { pair_by_index.set(event_target_checked(&e)); start(); } />" pair by task index (for a prompt change)"</label>
            <button data-testid="compare-example" on:click=load_example>"Load the example comparison"</button>
            <span hidden data-worker-state="compare">{move || if worker_ready.get() { "ready" } else { "loading" }}</span>
        </section>
        {move || match phase.get() {
            Phase::Idle => view! { <p class="status" data-testid="compare-status">"Choose both runs, or load the example comparison."</p> }.into_any(),
            Phase::Working(p) => view! {
                <div class="status working" data-testid="compare-status">
                    <progress max=p.total value=p.bytes></progress>{format!(" {:.1} of {:.1} MB ", p.bytes / 1e6, p.total / 1e6)}
                    <button on:click=move |_| { worker.with_value(crate::web::worker_client::WorkerHandle::cancel); phase.set(Phase::Failed("Cancelled.".into())); }>"Cancel"</button>
                </div>
            }.into_any(),
            Phase::Failed(e) => view! { <pre class="status error" data-testid="compare-status">{e}</pre> }.into_any(),
            Phase::Done(c) => view! {
                <p class="status done" data-testid="compare-status">{format!("Compared: {} paired tasks.", c.comparison.tasks.len())}</p>
                {candidate_picker(&c, worker, phase)}
                <CompareResult compared=c worker=worker />
            }.into_any(),
        }}
    }
}
