//! The per-task table: every profile statistic as a column, sortable by any of them, filtered
//! by reward group, agent and search, and virtualized (only visible rows are in the DOM) so
//! 100,000 tasks scroll smoothly. Arrow keys move the selection; Enter opens its first rollout.

use crate::inspect::query::{select, TaskQuery};
use crate::inspect::run::RunView;
use crate::inspect::table_columns;
use crate::inspect::table_nav::{key_action, KeyAction, Viewport};
use crate::web::state::{Selection, Snippets};
use crate::web::widgets::column_picker::ColumnPicker;
use crate::web::widgets::health_badges::task_flags_view;
use crate::web::widgets::task_filters::TaskFilters;
use crate::web::widgets::task_rollouts::TaskRollouts;
use leptos::ev;
use leptos::prelude::*;
use std::sync::Arc;

const VIEWPORT: Viewport = Viewport {
    row_px: 28.0,
    view_px: 420.0,
};

fn exact(v: f64) -> String {
    if v.is_nan() {
        String::new()
    } else {
        let mut out = Vec::new();
        let _ = crate::json::write_f64(&mut out, v);
        String::from_utf8(out).unwrap_or_default()
    }
}

#[component]
pub fn TaskTable(run: Arc<RunView>, sel: Selection) -> impl IntoView {
    let query = RwSignal::new(TaskQuery::default());
    // The pass threshold (NeMo Gym's 1); the user's to set when rewards are not 0/1.
    let threshold = sel.threshold;
    let r = run.clone();
    let pass_groups = Memo::new(move |_| {
        let t = threshold.get();
        #[allow(clippy::float_cmp)] // the default, exactly
        let default = t == crate::reward_group::DEFAULT_THRESHOLD;
        (!default).then(|| Arc::new(r.groups_at(t)))
    });
    let snippets = use_context::<Snippets>();
    let scroll_top = RwSignal::new(0.0);
    let wrap = NodeRef::<leptos::html::Div>::new();
    let r = run.clone();
    let order = Memo::new(move |_| {
        // The brush narrows the table like a filter.
        let within = sel.brushed.get();
        let matched = sel
            .matched
            .get()
            .map(|points| Arc::new(crate::inspect::run_query::task_mask(&r, &points)));
        query.with(|q| {
            let q = TaskQuery {
                within,
                matched,
                groups: pass_groups.get(),
                snippets: snippets.and_then(|Snippets(s)| s.get()),
                ..q.clone()
            };
            select(&r.view, &r.cols.task_stats, &q)
        })
    });
    // The rollout panel steps through the rollouts in this order.
    Effect::new(move |_| sel.order.set(Arc::new(order.get())));
    let width = run.view.task_headers.len();
    let total = run.view.tasks.len();
    let has_flags = !run.cols.point_flags.is_empty();

    let sort_by = move |col: usize| {
        query.update(|q| {
            if q.sort == Some(col) {
                q.descending = !q.descending;
            } else {
                q.sort = Some(col);
                q.descending = true;
            }
        });
    };
    let r = run.clone();
    let on_key = move |e: ev::KeyboardEvent| {
        let rows = order.get_untracked();
        let pos = sel
            .task
            .get_untracked()
            .and_then(|t| rows.iter().position(|&i| i as usize == t));
        match key_action(&e.key(), pos, rows.len()) {
            Some(KeyAction::Move(next)) => {
                e.prevent_default();
                sel.task.set(Some(rows[next] as usize));
                if let Some(el) = wrap.get() {
                    if let Some(y) = VIEWPORT.scroll_to(next, f64::from(el.scroll_top())) {
                        el.set_scroll_top(y as i32);
                    }
                }
            }
            Some(KeyAction::Open) => {
                if let Some(t) = sel.task.get_untracked() {
                    sel.open_point(&r, r.task_points(t).start);
                }
            }
            None => {}
        }
    };

    let agents: Vec<String> = run.view.agents.rows.iter().map(|r| r.key.clone()).collect();
    let headers = Arc::new(run.view.task_headers.clone());
    // Columns by field (reward, tokens, each verifier field), some shown by default; hidden ones
    // stay in the page (display: none), so the cells are there to read and the picker is instant.
    let groups = Arc::new(table_columns::groups(&headers));
    let columns: Arc<Vec<usize>> =
        Arc::new(groups.iter().flat_map(|g| g.columns.clone()).collect());
    let shown = RwSignal::new(table_columns::shown_by_default(&headers));
    let is_shown = move |c: usize| shown.with(|s| s.get(c).copied().unwrap_or(true));
    let group_head = groups
        .iter()
        .map(|g| {
            let cols = Arc::new(g.columns.clone());
            let span = move || cols.iter().filter(|&&c| is_shown(c)).count();
            let (span, span2) = (span.clone(), span);
            let name = if g.field.is_empty() { "counts".to_string() } else { g.field.clone() };
            view! { <th class="group" colspan=move || span().max(1).to_string() class:off=move || span2() == 0>{name}</th> }
        })
        .collect_view();
    let head = columns
        .iter()
        .map(|&c| {
            let h = headers[c].clone();
            let arrow = move || match query.with(|q| (q.sort, q.descending)) {
                (Some(s), true) if s == c => " ▼",
                (Some(s), false) if s == c => " ▲",
                _ => "",
            };
            view! { <th class="sortable" data-testid="sort" data-key=h.clone() title=h.clone() class:off=move || !is_shown(c)
                on:click=move |_| sort_by(c)>{table_columns::label(&h).to_string()}{arrow}</th> }
        })
        .collect_view();
    let r = run.clone();
    let (headers_b, columns_b) = (headers.clone(), columns.clone());
    let body = move || {
        let (headers, columns) = (&headers_b, &columns_b);
        let rows = order.get();
        let window = VIEWPORT.window(scroll_top.get(), rows.len());
        let (top_pad, bottom_pad) = VIEWPORT.padding(&window, rows.len());
        let selected = sel.task.get();
        let (at, passes) = (threshold.get(), pass_groups.get());
        let matched = sel.matched.get();
        let visible =
            rows[window]
                .iter()
                .map(|&i| {
                    let i = i as usize;
                    let meta = &r.view.tasks[i];
                    let cells = columns
                    .iter()
                    .map(|&c| {
                        let v = r.cols.task_stats[i * width + c];
                        let text = crate::figures::for_column(&headers[c], v);
                        view! { <td data-key=headers[c].clone() data-value=exact(v) title=exact(v) class:off=move || !is_shown(c)>{text}</td> }
                    })
                    .collect_view();
                    let class = if selected == Some(i) { "selected" } else { "" };
                    // A row opens its task's first rollout in the panel (the query's first, with
                    // one applied), when the run's file holds it: a run read from profile files
                    // has no lines to open.
                    let first = matched
                        .as_ref()
                        .and_then(|m| r.task_points(i).find(|&p| m.get(p).copied().unwrap_or(false)))
                        .unwrap_or(meta.first_point as usize);
                    let openable = meta.num_rollouts > 0
                        && r.cols.point_offset.get(first).is_some_and(|o| o.is_finite());
                    view! {
                        <tr data-testid="task-row" data-key=meta.task.to_string() class=class
                            on:click=move |_| {
                                sel.task.set(Some(i));
                                if openable {
                                    sel.rollout.set(Some(first));
                                }
                            }>
                            <th scope="row">{meta.task}</th>
                            <td class="group" data-testid="task-passes">{r.passes_text(i, passes.as_ref().and_then(|g| g.get(i).copied()).unwrap_or(meta.group), at)}</td>
                            <td class="agents">{meta.agents.join(", ")}</td>
                            {has_flags.then(|| view! { <td class="flags" data-testid="task-flags">{task_flags_view(r.task_flags(i))}</td> })}
                            {cells}
                        </tr>
                    }
                })
                .collect_view();
        view! {
            <tr class="pad" style:height=format!("{top_pad}px")></tr>
            {visible}
            <tr class="pad" style:height=format!("{bottom_pad}px")></tr>
        }
    };
    let count = Signal::derive(move || order.with(Vec::len));
    view! {
        <TaskFilters query=query agents=agents count=count total=total threshold=threshold binary=run.rewards_binary() />
        <ColumnPicker headers=headers groups=groups shown=shown />
        <div class="table-wrap virtual" node_ref=wrap tabindex="0" data-testid="task-table-wrap"
            style:max-height=format!("{}px", VIEWPORT.view_px)
            on:scroll=move |e| {
                let el: web_sys::HtmlElement = event_target(&e);
                scroll_top.set(f64::from(el.scroll_top()));
            }
            on:keydown=on_key>
            <table data-testid="task-table">
                <thead>
                    <tr><th rowspan="2">"task"</th><th rowspan="2" title="a rollout passes at reward ≥ the threshold">{move || format!("passes (reward ≥ {})", crate::figures::reward(Some(threshold.get())))}</th><th rowspan="2">"agents"</th>
                        {has_flags.then(|| view! { <th rowspan="2">"flags"</th> })}{group_head}</tr>
                    <tr class="stats">{head}</tr>
                </thead>
                <tbody>{body}</tbody>
            </table>
        </div>
        <TaskRollouts run=run sel=sel />
    }
}
