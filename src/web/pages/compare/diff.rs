//! A paired task opened: two transcripts, one per run, aligned item by item with what differs
//! marked (`compare::row_diff`: an item only one run has, and inside an item both changed, the
//! words that differ), then each run's rollouts of the task side by side. For a regression the
//! pair shown first is A's best rollout against B's worst (for an improvement, the other way).

use crate::compare::conversations::{PairConversations, SideConversations};
use crate::compare::row_diff::{diff_items, parts, Piece, Row};
use crate::conversation::Item;
use crate::web::widgets::conversation_view::items_view;
use leptos::prelude::*;

/// A side's rollouts with their items and reward (none: the task's prompt alone).
fn transcripts(side: &SideConversations) -> Vec<(String, Option<f64>, Vec<Item>)> {
    side.iter()
        .map(|(r, c)| {
            let reward = c.reward.as_deref().and_then(|r| r.parse::<f64>().ok());
            let name = r.map_or("prompt".to_string(), |r| {
                format!("rollout {r} · reward {}", crate::figures::reward(reward))
            });
            let items = c.input.iter().chain(&c.output).cloned().collect();
            (name, reward, items)
        })
        .collect()
}

/// The rollout with the highest (`best`) or lowest reward.
fn extreme(side: &[(String, Option<f64>, Vec<Item>)], best: bool) -> usize {
    let key = |i: usize| side[i].1.unwrap_or(f64::NAN);
    (0..side.len())
        .filter(|&i| !key(i).is_nan())
        .reduce(|x, y| {
            if (key(y) > key(x)) == best && key(y) != key(x) {
                y
            } else {
                x
            }
        })
        .unwrap_or(0)
}

fn pieces_view(pieces: Vec<Piece>, class: &'static str) -> impl IntoView {
    pieces
        .into_iter()
        .map(|p| {
            if p.changed {
                view! { <mark class=class data-testid="diff-mark">{p.text}</mark> }.into_any()
            } else {
                view! { <span>{p.text}</span> }.into_any()
            }
        })
        .collect_view()
}

fn cell(
    item: Option<&Item>,
    body: Option<AnyView>,
    state: &'static str,
    missing: &'static str,
) -> AnyView {
    let Some(item) = item else {
        return view! { <div class="diff-cell diff-none muted">{missing}</div> }.into_any();
    };
    let (label, text) = parts(item);
    let body = body.unwrap_or_else(|| view! { {text.to_string()} }.into_any());
    view! { <div class=format!("diff-cell diff-{state}")><div class="label">{label}</div><pre class="text">{body}</pre></div> }.into_any()
}

/// Two transcripts aligned, a row per item.
fn aligned(a: &[Item], b: &[Item]) -> impl IntoView {
    let rows = diff_items(a, b);
    let count = |f: fn(&Row) -> bool| rows.iter().filter(|r| f(r)).count();
    let summary = format!(
        "Items: {} the same, {} changed, {} only in A, {} only in B",
        count(|r| matches!(r, Row::Same { .. })),
        count(|r| matches!(r, Row::Changed { .. })),
        count(|r| matches!(r, Row::OnlyA { .. })),
        count(|r| matches!(r, Row::OnlyB { .. })),
    );
    let rows = rows
        .into_iter()
        .map(|row| {
            let (kind, left, right) = match row {
                Row::Same { a: i, b: j } => ("same", cell(a.get(i), None, "same", ""), cell(b.get(j), None, "same", "")),
                Row::Changed { a: i, b: j, a_text, b_text } => (
                    "changed",
                    cell(a.get(i), Some(pieces_view(a_text, "diff-a").into_any()), "changed", ""),
                    cell(b.get(j), Some(pieces_view(b_text, "diff-b").into_any()), "changed", ""),
                ),
                Row::OnlyA { a: i } => ("only-a", cell(a.get(i), None, "only-a", ""), cell(None, None, "", "not in B")),
                Row::OnlyB { b: j } => ("only-b", cell(None, None, "", "not in A"), cell(b.get(j), None, "only-b", "")),
            };
            view! { <div class="diff-row" data-testid="diff-row" data-diff=kind>{left}{right}</div> }
        })
        .collect_view();
    view! { <p class="muted" data-testid="diff-summary">{summary}</p><div class="diff-grid">{rows}</div> }
}

/// Both runs' rollouts of a task; `totals` are the task's rollouts in each run, of which the
/// worker reads at most `compare::conversations::MAX_SHOWN_ROLLOUTS` (said when it cut).
#[component]
pub fn SideBySide(
    pair: PairConversations,
    totals: (u32, u32),
    delta: Option<f64>,
) -> impl IntoView {
    let (ta, tb) = (transcripts(&pair.a), transcripts(&pair.b));
    let regressed = delta.is_some_and(|d| d < 0.0);
    let pick_a = RwSignal::new(extreme(&ta, regressed));
    let pick_b = RwSignal::new(extreme(&tb, !regressed));
    let choices = |side: &[(String, Option<f64>, Vec<Item>)],
                   pick: RwSignal<usize>,
                   testid: &'static str| {
        let options = side
            .iter()
            .enumerate()
            .map(|(i, (name, _, _))| view! { <option value=i.to_string() selected=move || pick.get() == i>{name.clone()}</option> })
            .collect_view();
        view! { <select data-testid=testid on:change=move |e| pick.set(event_target_value(&e).parse().unwrap_or(0))>{options}</select> }
    };
    let (da, db) = (ta.clone(), tb.clone());
    let diff = move || {
        let (a, b) = (pick_a.get(), pick_b.get());
        let empty = Vec::new();
        let items_a = da.get(a).map_or(&empty, |t| &t.2);
        let items_b = db.get(b).map_or(&empty, |t| &t.2);
        aligned(items_a, items_b)
    };
    let column = |label: String, side: SideConversations, total: u32, testid: &'static str| {
        let shown = side.iter().filter(|(r, _)| r.is_some()).count();
        let sampled = (shown < total as usize).then(|| view! {
            <p class="muted" data-testid="compare-sampled">{format!("The first {shown} of this task's {total} rollouts in this run.")}</p>
        });
        let rollouts = transcripts(&side)
            .into_iter()
            .map(|(head, _, items)| view! { <details class="rollout" data-testid="compare-rollout"><summary>{head}</summary>{items_view(&items, Signal::stored(false))}</details> })
            .collect_view();
        view! { <div class="side" data-testid=testid><h3>{label}</h3>{sampled}{rollouts}</div> }
    };
    view! {
        <section class="transcript-diff" data-testid="compare-diff">
            <h3>{format!("Task {} in A against task {} in B: what differs", pair.task_a, pair.task_b)}</h3>
            <p class="diff-pick">
                <label>"A: "{choices(&ta, pick_a, "diff-pick-a")}</label>" "
                <label>"B: "{choices(&tb, pick_b, "diff-pick-b")}</label>
            </p>
            {diff}
        </section>
        <section class="side-by-side" data-testid="compare-side-by-side">
            {column(format!("A · task {}", pair.task_a), pair.a, totals.0, "compare-side-a")}
            {column(format!("B · task {}", pair.task_b), pair.b, totals.1, "compare-side-b")}
        </section>
    }
}
