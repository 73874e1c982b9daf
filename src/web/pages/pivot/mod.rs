//! The pivot validator page: a file and upstream's options in, the verdict, every error grouped
//! by check (click one to see its row with the offending value marked), stats and the fixed copy.

pub mod result;

use crate::inspect::pivot::PivotView;
use crate::pivot::checks::Finding;
use crate::pivot::highlight::{pretty_segments, Segment};
use crate::pivot::PivotOptions;
use crate::web::download::DownloadLink;
use crate::web::pages::pivot::result::PivotResult;
use crate::web::protocol::{Download, Progress, Reply, Request};
use crate::web::widgets::file_pick::DropFile;
use crate::web::worker_client::start_page_worker;
use leptos::prelude::*;
use leptos::task::spawn_local;
use std::sync::Arc;

#[derive(Clone)]
enum Phase {
    Idle,
    Running(Progress),
    Done(Arc<PivotView>, Option<DownloadLink>),
    Failed(String),
}

#[component]
pub fn PivotPage(
    /// The file to validate: chosen here, or dropped on the profile page and recognized there.
    file: RwSignal<Option<web_sys::File>, LocalStorage>,
) -> impl IntoView {
    let agent_ref = RwSignal::new(String::new());
    let require_fields = RwSignal::new(String::new());
    let check_tool_names = RwSignal::new(true);
    let allow_batch = RwSignal::new(false);
    let fail_fast = RwSignal::new(false);
    let fix = RwSignal::new(false);
    let stats = RwSignal::new(false);
    let phase = RwSignal::new_local(Phase::Idle);
    let (worker, worker_ready) = start_page_worker();
    let shown_row = RwSignal::new(None::<(Finding, Vec<Segment>)>);

    let options = move || PivotOptions {
        agent_ref: Some(agent_ref.get_untracked()).filter(|s| !s.is_empty()),
        check_tool_names: check_tool_names.get_untracked(),
        require_fields: crate::pivot::split_field_list(&require_fields.get_untracked()),
        allow_batch: allow_batch.get_untracked(),
        fail_fast: fail_fast.get_untracked(),
        fix: fix.get_untracked(),
        stats: stats.get_untracked(),
        ..PivotOptions::default()
    };

    let run = move || {
        let Some(file) = file.get_untracked() else {
            return;
        };
        shown_row.set(None);
        phase.set(Phase::Running(Progress {
            bytes: 0.0,
            total: file.size(),
            lines: 0,
        }));
        let workers = crate::web::readers::reading_workers(file.size());
        let request = Request::ValidatePivot {
            file,
            options: options(),
            workers,
        };
        worker.with_value(|w| {
            w.request(&request, move |reply| match reply {
                Reply::Progress(p) => phase.set(Phase::Running(p)),
                Reply::PivotChecked {
                    view,
                    fixed,
                    workers,
                } => {
                    crate::web::readers::mark("data-validate-workers", workers);
                    let fixed = fixed.map(|blob| {
                        let name = crate::names::fixed_pivots(&view.file);
                        DownloadLink::from(Download { blob, name })
                    });
                    phase.set(Phase::Done(Arc::new(*view), fixed));
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
    // A new file (from this page or handed over by the profile page) is validated at once.
    Effect::new(move |_| {
        if file.with(Option::is_some) {
            run();
        }
    });
    let show_row = move |finding: Finding| {
        let (Some(f), Some((offset, len))) = (file.get_untracked(), finding.span) else {
            return;
        };
        spawn_local(async move {
            let row = gloo_file::Blob::from(f).slice(offset, offset + u64::from(len));
            let Ok(text) = gloo_file::futures::read_as_text(&row).await else {
                return;
            };
            let segments = pretty_segments(&text, &finding.path);
            shown_row.set(Some((finding, segments)));
        });
    };
    let checkbox = move |signal: RwSignal<bool>, testid: &'static str, label: &'static str| {
        view! {
            <label><input type="checkbox" data-testid=testid prop:checked=move || signal.get()
                on:change=move |e| signal.set(event_target_checked(&e)) />{label}</label>
        }
    };

    view! {
        <section class="pick">
            <p>"Check a pivot dataset (one assistant decision point per JSONL row) against NeMo Gym's row contract. The file is read here, in a background worker."</p>
            <DropFile label="Pivot JSONL…" testid="pivot-file" hint="a pivot dataset" file=file />
            <label>"Expected agent_ref.name (--agent-ref) "
                <input type="text" data-testid="pivot-agent-ref" prop:value=move || agent_ref.get()
                    on:input=move |e| agent_ref.set(event_target_value(&e)) /></label>
            <label>"Required fields (--require-field, comma separated) "
                <input type="text" data-testid="pivot-require-field" prop:value=move || require_fields.get()
                    on:input=move |e| require_fields.set(event_target_value(&e)) /></label>
            <div class="options">
                {checkbox(check_tool_names, "pivot-check-tool-names", " expected tools must be in tools")}
                {checkbox(allow_batch, "pivot-allow-batch", " accept function_call_batch")}
                {checkbox(fail_fast, "pivot-fail-fast", " stop at the first error (upstream)")}
                {checkbox(stats, "pivot-stats-option", " conversion stats")}
                {checkbox(fix, "pivot-fix", " make a fixed copy")}
            </div>
            <button data-testid="pivot-validate" on:click=move |_| run()>"Validate"</button>
            <span hidden data-testid="pivot-worker" data-worker-state="pivot">{move || if worker_ready.get() { "ready" } else { "loading" }}</span>
        </section>
        {move || match phase.get() {
            Phase::Idle => view! { <p data-testid="pivot-status" class="status">"Choose a pivot JSONL file."</p> }.into_any(),
            Phase::Running(p) => view! {
                <div data-testid="pivot-status" class="status working">
                    <progress max=p.total value=p.bytes data-testid="pivot-progress"></progress>
                    {format!(" {:.1} of {:.1} MB, {} lines ", p.bytes / 1e6, p.total / 1e6, p.lines)}
                    <button data-testid="pivot-cancel" on:click=cancel>"Cancel"</button>
                </div>
            }.into_any(),
            Phase::Failed(e) => view! { <pre data-testid="pivot-status" class="status error">{e}</pre> }.into_any(),
            Phase::Done(view, fixed) => view! { <PivotResult view=view fixed=fixed on_pick=show_row /> }.into_any(),
        }}
        {move || shown_row.get().map(|(finding, segments)| view! {
            <section class="row-view">
                <h2>{format!("Line {}: {}", finding.line, finding.path)}</h2>
                <pre data-testid="pivot-row">{segments.into_iter().map(|s| if s.marked {
                    view! { <mark>{s.text}</mark> }.into_any()
                } else {
                    view! { <span>{s.text}</span> }.into_any()
                }).collect_view()}</pre>
            </section>
        })}
    }
}
