//! One rollout, read again from the rollouts file by its byte span: the conversation (messages,
//! reasoning, function calls with arguments, their outputs), then reward, usage and every other
//! field; long text collapsed; the raw JSON one click away. Everything is text, never HTML.
//! The rollout's health flags head it as badges, and the items they point at are marked; NeMo
//! Gym's verdict of it too, when its verdict file came with the run. A row carrying
//! `ng_trajectory` shows its turns first (each with its model calls' tokens and durations, tool
//! calls with status and timing), `response.output` below it; items note their generated tokens.

use crate::conversation::{conversation, Conversation, Trajectory};
use crate::inspect::health::{badges, marks_by_item};
use crate::inspect::numbers::for_people;
use crate::inspect::run::RunView;
use crate::web::state::Selection;
use crate::web::widgets::conversation_view::{items_view, marked_items_view};
use leptos::prelude::*;
use leptos::task::spawn_local;
use std::sync::Arc;

#[derive(Clone)]
struct Shown {
    point: usize,
    title: String,
    conversation: Conversation,
    raw: String,
    /// The row's health signals (none for a rollout known only by its numbers).
    signals: Option<crate::health::Signals>,
}

#[component]
pub fn RolloutView(
    run: Arc<RunView>,
    rollouts: Signal<Option<web_sys::File>, LocalStorage>,
    sel: Selection,
) -> impl IntoView {
    let shown = RwSignal::new(None::<Result<Shown, String>>);
    let show_raw = RwSignal::new(false);
    let as_written_set = RwSignal::new(false);
    let r = run.clone();
    let run_v = run.clone();
    Effect::new(move |_| {
        let Some(point) = sel.rollout.get() else {
            shown.set(None);
            return;
        };
        let (offset, len) = (r.cols.point_offset[point], r.cols.point_len[point]);
        let title = r.rollout_title(point);
        let Some(file) = rollouts.get_untracked().filter(|_| !offset.is_nan()) else {
            let note = "The rollout's text is not in a profile file: choose the run's inputs and rollouts files to read it.";
            shown.set(Some(Ok(Shown {
                point,
                title,
                conversation: r.numbers_only(point),
                raw: note.into(),
                signals: None,
            })));
            return;
        };
        show_raw.set(false);
        spawn_local(async move {
            let line = gloo_file::Blob::from(file).slice(offset as u64, (offset + len) as u64);
            let text = gloo_file::futures::read_as_text(&line).await.ok();
            let result = match text.map(|t| (serde_json::from_str::<serde_json::Value>(&t), t)) {
                Some((Ok(value), t)) => Ok(Shown {
                    point,
                    title,
                    conversation: conversation(&value),
                    raw: serde_json::to_string_pretty(&value).unwrap_or_default(),
                    signals: crate::health::row_signals(t.as_bytes(), false).ok(),
                }),
                Some((Err(e), _)) => Err(format!(
                    "The rollout's line no longer parses (was the file changed?): {e}"
                )),
                None => Err("Could not read the rollout from the file.".into()),
            };
            if sel.rollout.get_untracked() == Some(point) {
                shown.set(Some(result));
            }
        });
    });

    move || {
        shown.get().map(|s| match s {
            Err(e) => view! { <section data-testid="rollout-view"><p class="error">{e}</p></section> }.into_any(),
            Ok(s) => {
                let c = s.conversation;
                let as_written = Signal::derive(move || as_written_set.get());
                // Numbers for people (the exact value in the tooltip), text as written.
                let pairs = |title: &'static str, rows: Vec<(String, String)>| {
                    (!rows.is_empty()).then(|| view! {
                        <h3>{title}</h3>
                        <table class="fields">{rows.into_iter().map(|(k, v)| {
                            let shown = for_people(&k, &v);
                            let number = v.parse::<f64>().is_ok();
                            view! { <tr><th>{k}</th><td class:number=number title=v><code>{shown}</code></td></tr> }
                        }).collect_view()}</table>
                    })
                };
                let raw_reward = c.reward.clone().unwrap_or_else(|| "(none)".into());
                let reward = for_people("reward", &raw_reward);
                let raw = s.raw;
                let marks = s.signals.as_ref().map(marks_by_item).unwrap_or_default();
                // gymscope's flags and NeMo Gym's verdict, one row of badges.
                let verdict = run_v.point_verdict(s.point).map(|v| view! {
                    <span class=format!("badge verdict {}", v.level()) data-testid="rollout-upstream-verdict"
                        data-verdict=v.verdict.clone() title=v.unobserved_text()>{v.text()}</span>
                });
                let flags = s.signals.as_ref().map(|sig| {
                    let badges = badges(sig);
                    if badges.is_empty() {
                        return view! { <span class="badge ok">"no health flags"</span> }.into_any();
                    }
                    badges.into_iter().map(|(f, text)| view! {
                        <button class="badge flag" data-flag=f.as_str() title="show the item"
                            on:click=move |_| scroll_to_mark(f.as_str())>{text}</button>
                    }).collect_view().into_any()
                });
                let flags = (flags.is_some() || verdict.is_some()).then(|| view! {
                    <p class="health-flags">
                        {flags.map(|f| view! { <span data-testid="rollout-flags">{f}</span> })}
                        {verdict}
                    </p>
                });
                let output = marked_items_view(&c.output, &c.output_notes, as_written, &marks);
                let response = if c.trajectory.as_ref().is_some_and(|t| !t.turns.is_empty()) {
                    // The turns say it better; the recorded output stays one click away (open
                    // when a flag points into it: it is the evidence).
                    view! {
                        <details class="recorded" open=!marks.is_empty() data-testid="rollout-recorded">
                            <summary>"Response as recorded (response.output)"</summary>
                            <div class="conversation">{output}</div>
                        </details>
                    }
                    .into_any()
                } else {
                    view! { <h3>"Response"</h3><div class="conversation">{output}</div> }.into_any()
                };
                // In one column (below 1,200 px: a phone) the rollout is below the run: brought
                // into view once its content is there, so a tap visibly answers (issue 44,
                // item 12). Not before: the loading line it replaces would move the page.
                let node = NodeRef::<leptos::html::Section>::new();
                Effect::new(move |_| {
                    let narrow = window().inner_width().ok().and_then(|w| w.as_f64()).is_some_and(|w| w < 1200.0);
                    if let (true, Some(el)) = (narrow, node.get()) {
                        el.scroll_into_view();
                    }
                });
                view! {
                    <section class="rollout" data-testid="rollout-view" node_ref=node>
                        <h2 data-testid="rollout-title">{s.title}</h2>
                        {flags}
                        <p class="reward">"reward: "<code data-testid="rollout-reward" title=raw_reward>{reward}</code></p>
                        <label class="as-written"><input type="checkbox" data-testid="rollout-as-written"
                            prop:checked=move || as_written.get() on:change=move |e| as_written_set.set(event_target_checked(&e)) />
                            " show the text as written (no Markdown, no indenting)"</label>
                        <h3>"Prompt"</h3>
                        <div class="conversation">{items_view(&c.input, as_written)}</div>
                        {c.trajectory.as_ref().map(|t| trajectory_view(t, as_written))}
                        {response}
                        {pairs("Usage", c.usage)}
                        {pairs("Fields", c.fields)}
                        <button data-testid="rollout-raw-toggle" on:click=move |_| show_raw.update(|v| *v = !*v)>
                            {move || if show_raw.get() { "Hide raw JSON" } else { "Show raw JSON" }}
                        </button>
                        {move || show_raw.get().then(|| view! { <pre data-testid="rollout-raw" class="raw">{raw.clone()}</pre> })}
                    </section>
                }
                .into_any()
            }
        })
    }
}

/// `ng_trajectory`: each turn headed by its model calls (tokens, duration), then its reasoning,
/// answer and tool calls with their outputs; without turns, the model calls alone; gaps named.
fn trajectory_view(t: &Trajectory, as_written: Signal<bool>) -> impl IntoView {
    let calls_list = |calls: &[crate::conversation::ModelCall]| {
        calls
            .iter()
            .map(|c| view! { <li data-testid="rollout-model-call">{c.text()}</li> })
            .collect_view()
    };
    let turns = t
        .turns
        .iter()
        .map(|turn| {
            let steps = turn
                .step_count
                .map(|n| format!(" · {n} tool step{} so far", if n == 1 { "" } else { "s" }));
            view! {
                <div class="turn" data-testid="rollout-turn">
                    <div class="turn-head">{turn.label.clone()}<span class="muted">{steps}</span></div>
                    <ul class="turn-calls">{calls_list(&turn.calls)}</ul>
                    <div class="conversation">{marked_items_view(&turn.items, &turn.notes, as_written, &[])}</div>
                </div>
            }
        })
        .collect_view();
    let body = if t.turns.is_empty() {
        (!t.calls.is_empty())
            .then(|| view! { <h3>"Model calls (ng_trajectory)"</h3><ol class="turn-calls">{calls_list(&t.calls)}</ol> })
            .into_any()
    } else {
        view! { <h3>"Turns (ng_trajectory)"</h3>{turns} }.into_any()
    };
    let gaps = (!t.gaps.is_empty()).then(|| {
        view! { <p class="muted" data-testid="rollout-trajectory-gaps">{format!("ng_trajectory gaps: {}", t.gaps.join(", "))}</p> }
    });
    view! { <section data-testid="rollout-trajectory">{body}{gaps}</section> }
}

/// Scrolls to the first item marked with `flag` (a badge's evidence).
fn scroll_to_mark(flag: &str) {
    let css = format!("[data-testid=rollout-view] .offending[data-flags~={flag}]");
    if let Ok(Some(el)) = gloo_utils::document().query_selector(&css) {
        el.scroll_into_view();
    }
}
