//! The run's headline: key figures as cards, totals and upstream's completion lines, warnings;
//! and the agent metrics (the lines beside the plot are `groups`).

use crate::inspect::run::RunView;
use crate::table::Table;
use crate::web::state::Selection;
use leptos::prelude::*;
use std::sync::Arc;

/// A name that may break only after its underscores (`code_gen_|simple_|agent`), never
/// mid-word (docs/app.md: a long agent name wraps at its parts).
pub fn breakable(name: &str) -> impl IntoView {
    let parts: Vec<String> = name.split_inclusive('_').map(str::to_string).collect();
    parts
        .into_iter()
        .map(|p| view! { {p}<wbr/> })
        .collect_view()
}

/// `"query"` when a query is applied (the figures and tables say so, docs/app.md), else `"run"`.
pub fn scope(sel: Selection) -> impl Fn() -> &'static str + Copy {
    move || {
        if sel.matched.with(Option::is_some) {
            "query"
        } else {
            "run"
        }
    }
}

#[component]
pub fn Summary(run: Arc<RunView>, sel: Selection) -> impl IntoView {
    let [line1, line2] = run.view.summary.clone();
    let warnings = run
        .view
        .warnings
        .iter()
        .map(|w| view! { <p class="warning">{w.clone()}</p> })
        .collect_view();
    // v0.7.0's additions: masked rollouts, the reward across repeats with its interval.
    let notes = run
        .view
        .repeat_notes
        .iter()
        .map(|n| view! { <p data-testid="repeat-note">{n.clone()}</p> })
        .collect_view();
    // The key figures first, as cards (each card's exact value in its tooltip); the run's
    // lines in words below them, smaller.
    // With a query applied, the cards count its rollouts (the rule of docs/app.md).
    let r = run.clone();
    let cards = move || {
        let figures = sel
            .matched
            .with(|m| m.as_ref().map(|m| r.figures_of(m)))
            .unwrap_or_else(|| r.view.figures.clone());
        figures
        .into_iter()
        .map(|f| {
            view! {
                <div class="figure" data-testid="figure" data-key=f.key.clone() title=f.exact.clone()>
                    <div class="figure-value">{f.value.clone()}</div>
                    <div class="figure-label">{f.label.clone()}</div>
                    <div class="figure-detail">{f.detail.clone()}</div>
                </div>
            }
        })
        .collect_view()
    };
    view! {
        <section data-testid="summary" class="summary">
            <div class="figures" data-testid="key-figures" data-scope=scope(sel)>{cards}</div>
            <div class="summary-lines">
                <p data-testid="totals">{run.view.totals.line()}</p>
                <p>{line1}</p>
                <p>{line2}</p>
                {notes}
            </div>
            {warnings}
        </section>
    }
}

#[component]
pub fn AgentTable(table: Table) -> impl IntoView {
    view! { <KeyedTable table=table testid="agent-metrics" row_testid="agent-row" /> }
}

/// v0.7.0's reward per repeat, an agent's repeats one under the other.
#[component]
pub fn RepeatTable(table: Table) -> impl IntoView {
    view! { <KeyedTable table=table testid="repeat-metrics" row_testid="repeat-row" /> }
}

/// A table whose rows are keyed by agent, each cell with its header and exact value as data.
#[component]
fn KeyedTable(table: Table, testid: &'static str, row_testid: &'static str) -> impl IntoView {
    let headers = table.headers.clone();
    let head = headers
        .iter()
        .map(|h| view! { <th>{h.clone()}</th> })
        .collect_view();
    let rows = table
        .rows
        .into_iter()
        .map(|row| {
            let cells = row
                .cells
                .into_iter()
                .zip(headers.iter().cloned())
                .map(|(cell, header)| {
                    let text = cell.value.map_or("–".into(), |v| crate::figures::for_column(&header, v.as_f64()));
                    view! { <td data-key=header data-value=cell.exact() title=cell.exact()>{text}</td> }
                })
                .collect_view();
            let (key, key_attr) = (row.key.clone(), row.key);
            view! { <tr data-testid=row_testid data-key=key_attr><th scope="row">{key}</th>{cells}</tr> }
        })
        .collect_view();
    view! {
        <div class="table-wrap">
            <table data-testid=testid data-scope="run">
                <thead><tr><th>"agent"</th>{head}</tr></thead>
                <tbody>{rows}</tbody>
            </table>
        </div>
    }
}
