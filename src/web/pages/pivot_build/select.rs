//! The selection (`select-pivot`): a pivot file and the profile of its on-policy rollouts in,
//! the counts by class and the selected rows out.

use crate::inspect::pivot_build::select_options;
use crate::web::download::DownloadLink;
use crate::web::protocol::{Reply, Request};
use crate::web::worker_client::SharedWorker;
use leptos::prelude::*;

#[derive(Clone)]
enum Phase {
    Idle,
    Running,
    Done(String, u64, [DownloadLink; 2]),
    Failed(String),
}

fn chosen(e: &leptos::ev::Event) -> Option<web_sys::File> {
    let input: web_sys::HtmlInputElement = event_target(e);
    input.files().and_then(|l| l.get(0))
}

#[component]
pub fn SelectSection(worker: SharedWorker) -> impl IntoView {
    let pivots = RwSignal::new_local(None::<web_sys::File>);
    let profile = RwSignal::new_local(None::<web_sys::File>);
    let min_rollouts = RwSignal::new("8".to_string());
    let threshold = RwSignal::new("1.0".to_string());
    let max_pivots = RwSignal::new(String::new());
    let phase = RwSignal::new_local(Phase::Idle);

    let run = move || {
        let (Some(pivots), Some(profile)) = (pivots.get_untracked(), profile.get_untracked())
        else {
            phase.set(Phase::Failed(
                "Choose a pivot file and its *_reward_profiling.jsonl.".into(),
            ));
            return;
        };
        let options = match select_options(
            &min_rollouts.get_untracked(),
            &threshold.get_untracked(),
            &max_pivots.get_untracked(),
        ) {
            Ok(o) => o,
            Err(e) => return phase.set(Phase::Failed(e)),
        };
        phase.set(Phase::Running);
        let request = Request::SelectPivots {
            pivots,
            profile,
            options,
        };
        worker.with_value(|w| {
            w.request(&request, move |reply| match reply {
                Reply::Progress(_) => {}
                Reply::PivotsSelected(s) => {
                    let s = *s;
                    phase.set(Phase::Done(
                        s.counts,
                        s.kept,
                        [
                            DownloadLink::from(s.selected),
                            DownloadLink::from(s.selection),
                        ],
                    ));
                }
                Reply::Failed(f) => phase.set(Phase::Failed(f.message)),
                _ => phase.set(Phase::Failed("unexpected reply from the worker".into())),
            });
        });
    };
    let text = move |signal: RwSignal<String>, testid: &'static str, label: &'static str| {
        view! { <label>{label}<input type="text" data-testid=testid prop:value=move || signal.get()
        on:input=move |e| signal.set(event_target_value(&e)) /></label> }
    };
    view! {
        <section class="pick">
            <h2>"Select pivots by their on-policy rollouts"</h2>
            <p>"After "<code>"gymscope collect --num-repeats 8"</code>" against the pivot agent and "<code>"gymscope profile"</code>": keep the pivots whose rollouts had mixed rewards, as "<code>"gymscope select-pivot"</code>" does."</p>
            <label>"Pivot JSONL " <input type="file" accept=".jsonl" data-testid="pb-pivots-file"
                on:change=move |e| pivots.set(chosen(&e)) /></label>
            <label>"Its profile (*_reward_profiling.jsonl) " <input type="file" accept=".jsonl" data-testid="pb-profile-file"
                on:change=move |e| profile.set(chosen(&e)) /></label>
            {text(min_rollouts, "pb-min-rollouts", "Minimum rollouts ")}
            {text(threshold, "pb-success-threshold", "Success threshold ")}
            {text(max_pivots, "pb-max-pivots", "At most N pivots (empty: all) ")}
            <button data-testid="pb-select" on:click=move |_| run()>"Select"</button>
        </section>
        {move || match phase.get() {
            Phase::Idle => view! { <p data-testid="pb-select-status" class="status">"Choose a pivot file and its profile."</p> }.into_any(),
            Phase::Running => view! { <p data-testid="pb-select-status" class="status working">"Selecting…"</p> }.into_any(),
            Phase::Failed(e) => view! { <pre data-testid="pb-select-status" class="status error">{e}</pre> }.into_any(),
            Phase::Done(counts, kept, [selected, selection]) => view! {
                <p data-testid="pb-select-status" class="status done">{format!("{kept} pivots selected.")}</p>
                <div data-testid="pb-select-counts">{counts_view(&counts)}</div>
                <ul class="downloads">
                    <li>{selected.anchor("pb-download-selected", format!("{} ({} bytes)", selected.name, selected.bytes))}</li>
                    <li>{selection.anchor("pb-download-selection", selection.name.clone())}</li>
                </ul>
            }.into_any(),
        }}
    }
}

/// The CLI's counts text as the page shows it: its Markdown table as a table (rendered by the
/// core's safe Markdown: tool names are data) and each line under it as a line.
fn counts_view(counts: &str) -> impl IntoView {
    let table_end = counts
        .lines()
        .take_while(|l| l.starts_with('|'))
        .map(|l| l.len() + 1)
        .sum::<usize>()
        .min(counts.len());
    let (table, rest) = counts.split_at(table_end);
    let lines = rest
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| view! { <p class="muted">{l.to_string()}</p> })
        .collect_view();
    view! {
        <div class="md counts" inner_html=crate::model_text::markdown_html(table)></div>
        {lines}
    }
}
