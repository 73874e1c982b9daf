//! The paired tasks, every one sortable by its reward delta (either way), a mean, tokens, task
//! or agent (`compare::row_diff::sorted_tasks`), the flipped ones alone on a tick; numbers as
//! people read them, the exact value in each cell's tooltip. A click opens the task.

use crate::compare::multi::flip_of;
use crate::compare::row_diff::{sorted_tasks, TaskSort};
use crate::compare::PairedTask;
use leptos::prelude::*;
use std::sync::Arc;

/// Rows drawn at once (the sort brings any task to the top; the report lists them all).
const ROWS: usize = 200;

fn exact(v: Option<f64>) -> String {
    v.map_or_else(String::new, |v| v.to_string())
}

/// A delta as people read it, signed (`+0.25`, `-0.5`, `0`).
fn signed(v: Option<f64>) -> String {
    match v {
        Some(d) if d > 0.0 => format!("+{}", crate::figures::reward(Some(d))),
        d => crate::figures::reward(d),
    }
}

#[component]
pub fn PairedTasks(tasks: Arc<Vec<PairedTask>>, open: Callback<usize>) -> impl IntoView {
    let sort = RwSignal::new((TaskSort::Delta, false));
    let flipped = RwSignal::new(false);
    let all = tasks.len();
    let t = tasks.clone();
    let order = Memo::new(move |_| {
        let (by, descending) = sort.get();
        sorted_tasks(&t, by, descending, flipped.get())
    });
    let header = move |label: &'static str, by: TaskSort, title: &'static str| {
        let key = format!("{by:?}").to_lowercase();
        let arrow = move || match sort.get() {
            (s, false) if s == by => " ▲",
            (s, true) if s == by => " ▼",
            _ => "",
        };
        let aria = move || match sort.get() {
            (s, d) if s == by => {
                if d {
                    "descending"
                } else {
                    "ascending"
                }
            }
            _ => "none",
        };
        view! {
            <th aria-sort=aria title=title>
                <button class="sort" data-testid=format!("compare-sort-{key}") on:click=move |_| sort.update(|(s, d)| {
                    if *s == by {
                        *d = !*d;
                    } else {
                        // Means and tokens highest first; Δ worst first; task and agent in order.
                        let high_first = matches!(by, TaskSort::MeanA | TaskSort::MeanB | TaskSort::TokensA | TaskSort::TokensB);
                        (*s, *d) = (by, high_first);
                    }
                })>{label}{arrow}</button>
            </th>
        }
    };
    let rows = move || {
        order
            .get()
            .into_iter()
            .take(ROWS)
            .map(|i| {
                let t = &tasks[i];
                let flip = match flip_of(t) {
                    Some(1) => " ↑",
                    Some(-1) => " ↓",
                    _ => "",
                };
                view! {
                    <tr data-testid="compare-task-row" data-task-a=t.task_a.to_string() data-delta=exact(t.delta) on:click=move |_| open.run(i)>
                        <td>{t.task_a}</td><td>{t.task_b}</td><td>{t.agent.clone().unwrap_or_default()}</td>
                        <td title=exact(t.mean_a)>{crate::figures::reward(t.mean_a)}</td>
                        <td title=exact(t.mean_b)>{crate::figures::reward(t.mean_b)}</td>
                        <td data-testid="compare-delta" title=exact(t.delta)>{signed(t.delta)}</td>
                        <td>{format!("{} → {}{flip}", t.group_a.as_str(), t.group_b.as_str())}</td>
                        <td title=exact(t.tokens_a)>{crate::figures::tokens(t.tokens_a)}</td>
                        <td title=exact(t.tokens_b)>{crate::figures::tokens(t.tokens_b)}</td>
                    </tr>
                }
            })
            .collect_view()
    };
    let count = move || {
        let n = order.with(Vec::len);
        let of = if flipped.get() {
            format!("{n} flipped of {all} paired tasks")
        } else {
            format!("{all} paired tasks")
        };
        if n > ROWS {
            format!("{of}; the first {ROWS} in this order (sort to bring others up; the exported report lists them all).")
        } else {
            format!("{of}.")
        }
    };
    view! {
        <section>
            <h2>"Paired tasks"</h2>
            <p class="muted">"Sort by any column (Δ: worst regression first, again: best improvement first). Click a task to see both runs' transcripts with their differences marked."</p>
            <p class="filters">
                <label><input type="checkbox" data-testid="compare-flipped-only" on:change=move |e| flipped.set(event_target_checked(&e)) />
                    " only flipped tasks (the reward group changed: all_failure < mixed < all_success)"</label>
                " "<span data-testid="compare-task-count">{count}</span>
            </p>
            <div class="table-wrap"><table data-testid="compare-tasks">
                <thead><tr>
                    {header("task A", TaskSort::Task, "the task's index in A")}<th>"task B"</th>
                    {header("agent", TaskSort::Agent, "A's agent")}
                    {header("mean A", TaskSort::MeanA, "mean reward in A")}{header("mean B", TaskSort::MeanB, "mean reward in B")}
                    {header("Δ", TaskSort::Delta, "mean reward B − A")}<th>"groups"</th>
                    {header("tokens A", TaskSort::TokensA, "mean output tokens in A")}{header("tokens B", TaskSort::TokensB, "mean output tokens in B")}
                </tr></thead>
                <tbody>{rows}</tbody>
            </table></div>
        </section>
    }
}
