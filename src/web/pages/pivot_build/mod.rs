//! The pivot builder page (`#pivot-build`): a rollouts file and the source filters in, the build
//! run in the page's worker (`build-pivot` in the core), then the counts, the verdict, the files
//! and any pivot beside the rollout it came from; below, the selection from a pivot file and its
//! profile.

pub mod pair;
pub mod result;
pub mod select;
pub mod select_result;

use crate::inspect::pivot_build::{pair, PageBuild, PivotEntry, PivotPair};
use crate::web::pages::pivot_build::pair::PairView;
use crate::web::pages::pivot_build::result::{BuildResult, Built};
use crate::web::pages::pivot_build::select::SelectSection;
use crate::web::protocol::{Progress, Reply, Request};
use crate::web::widgets::file_pick::DropFile;
use crate::web::worker_client::start_page_worker;
use leptos::prelude::*;
use leptos::task::spawn_local;
use std::rc::Rc;

#[derive(Clone)]
enum Phase {
    Idle,
    Running(Progress),
    Done(Rc<Built>),
    Failed(String),
}

async fn read(blob: gloo_file::Blob, offset: u64, len: u32) -> Result<Vec<u8>, String> {
    let part = blob.slice(offset, offset + u64::from(len));
    gloo_file::futures::read_as_bytes(&part)
        .await
        .map_err(|e| format!("cannot read the row: {e}"))
}

#[component]
pub fn PivotBuildPage() -> impl IntoView {
    let source = RwSignal::new_local(None::<web_sys::File>);
    // Without a file chosen here, the run loaded on the Profile page is the source.
    let loaded = use_context::<crate::web::state::LoadedRollouts>()
        .map_or_else(|| RwSignal::new_local(None), |l| l.0);
    let chosen = move || source.get().or_else(|| loaded.get());
    // Empty: the name suggested from the source's file name (shown as the placeholder).
    let agent_ref = RwSignal::new(String::new());
    let suggested =
        move || chosen().map_or_else(String::new, |f| crate::names::pivot_agent_ref(&f.name()));
    let min_reward = RwSignal::new("1.0".to_string());
    let groups = [true, true, false].map(RwSignal::new);
    let limit = RwSignal::new(String::new());
    let phase = RwSignal::new_local(Phase::Idle);
    let shown = RwSignal::new(None::<Result<PivotPair, String>>);
    let (worker, worker_ready) = start_page_worker();

    let run = move || {
        let Some(file) = source.get_untracked().or_else(|| loaded.get_untracked()) else {
            phase.set(Phase::Failed(
                "Choose a rollouts file first (or load a run on the Profile page).".into(),
            ));
            return;
        };
        let typed = agent_ref.get_untracked();
        let name = if typed.trim().is_empty() {
            crate::names::pivot_agent_ref(&file.name())
        } else {
            typed
        };
        let options = match PageBuild::parse(
            &name,
            &min_reward.get_untracked(),
            groups.map(|g| g.get_untracked()),
            &limit.get_untracked(),
        ) {
            Ok(o) => o,
            Err(e) => return phase.set(Phase::Failed(e)),
        };
        shown.set(None);
        phase.set(Phase::Running(Progress {
            bytes: 0.0,
            total: 2.0 * file.size(),
            lines: 0,
        }));
        let request = Request::BuildPivots {
            file: file.clone(),
            options,
            workers: crate::web::readers::reading_workers(file.size()),
        };
        worker.with_value(|w| {
            w.request(&request, move |reply| match reply {
                Reply::Progress(p) => phase.set(Phase::Running(p)),
                Reply::PivotsBuilt(b) => {
                    crate::web::readers::mark("data-build-workers", b.workers);
                    phase.set(Phase::Done(Rc::new(Built::new(*b, file.clone()))));
                }
                Reply::Failed(f) => phase.set(Phase::Failed(f.message)),
                _ => phase.set(Phase::Failed("unexpected reply from the worker".into())),
            });
        });
    };
    let cancel = move |_| {
        worker.with_value(crate::web::worker_client::WorkerHandle::cancel);
        phase.set(Phase::Failed("Cancelled.".into()));
    };
    let open = move |entry: PivotEntry| {
        let Phase::Done(built) = phase.get_untracked() else {
            return;
        };
        let Some(rows) = built.rows_blob.clone() else {
            return;
        };
        let source = gloo_file::Blob::from(built.source.clone());
        spawn_local(async move {
            let result = async {
                let row = read(gloo_file::Blob::from(rows), entry.offset, entry.len).await?;
                let from = match entry.source {
                    Some((offset, len)) => Some(read(source, offset, len).await?),
                    None => None,
                };
                pair(&row, from.as_deref())
            };
            shown.set(Some(result.await));
        });
    };
    // A file chosen or dropped here is built at once.
    Effect::new(move |_| {
        if source.with(Option::is_some) {
            run();
        }
    });
    let text = move |signal: RwSignal<String>, testid: &'static str, label: &'static str| {
        view! { <label>{label}<input type="text" data-testid=testid prop:value=move || signal.get()
        on:input=move |e| signal.set(event_target_value(&e)) /></label> }
    };
    let group_box = move |i: usize, name: &'static str, label: &'static str| {
        let g = groups[i];
        view! { <label><input type="checkbox" data-testid=format!("pb-group-{name}") prop:checked=move || g.get()
        on:change=move |e| g.set(event_target_checked(&e)) />{label}</label> }
    };

    view! {
        <section class="pick">
            <p>"Build a PivotRL dataset (one assistant decision point per row) from a run's rollouts, as "<code>"gymscope build-pivot"</code>" does. The file is read here, in a background worker, twice: rewards per task first, then conversion."</p>
            <DropFile label="Rollouts JSONL…" testid="pb-source-file" hint="a rollouts file" file=source />
            <p data-testid="pb-source-name">{move || match (source.get(), loaded.get()) {
                (Some(f), _) => format!("Source: {}", f.name()),
                (None, Some(f)) => format!("Source: {} (the run loaded on the Profile page; choose a file to use another)", f.name()),
                (None, None) => "Source: none yet (choose a file, or load a run on the Profile page)".to_string(),
            }}</p>
            <label>"agent_ref name "<input type="text" class="wide" data-testid="pb-agent-ref" prop:value=move || agent_ref.get()
                placeholder=suggested on:input=move |e| agent_ref.set(event_target_value(&e)) /></label>
            {text(min_reward, "pb-min-reward", "Minimum reward of a success ")}
            <div class="options">"Source reward groups: "
                {group_box(0, "mixed", " mixed (preferred: the policy sometimes fails)")}
                {group_box(1, "all_success", " all_success")}
                {group_box(2, "all_failure", " all_failure")}
            </div>
            {text(limit, "pb-limit", "Stop after N pivots (empty: all) ")}
            <button data-testid="pb-build" on:click=move |_| run()>"Build"</button>
            <span hidden data-testid="pb-worker" data-worker-state="pivot-build">{move || if worker_ready.get() { "ready" } else { "loading" }}</span>
        </section>
        {move || match phase.get() {
            Phase::Idle => view! { <p data-testid="pb-status" class="status">{move || if chosen().is_some() {
                "Set the filters and press Build."
            } else {
                "Choose a rollouts file."
            }}</p> }.into_any(),
            Phase::Running(p) => view! {
                <div data-testid="pb-status" class="status working">
                    <progress max=p.total value=p.bytes></progress>
                    {format!(" {:.1} of {:.1} MB read (two passes), {} source rows ", p.bytes / 1e6, p.total / 1e6, p.lines)}
                    <button data-testid="pb-cancel" on:click=cancel>"Cancel"</button>
                </div>
            }.into_any(),
            Phase::Failed(e) => view! { <pre data-testid="pb-status" class="status error">{e}</pre> }.into_any(),
            Phase::Done(built) => view! { <BuildResult built=built on_open=open /> }.into_any(),
        }}
        {move || shown.get().map(|p| match p {
            Ok(p) => view! { <PairView pair=p /> }.into_any(),
            Err(e) => view! { <p data-testid="pb-pair" class="status error">{e}</p> }.into_any(),
        })}
        <SelectSection worker=worker />
    }
}
