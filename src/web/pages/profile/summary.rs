//! The run's headline: totals, upstream's completion lines, warnings; and the agent metrics.

use crate::inspect::run::RunView;
use crate::table::Table;
use leptos::prelude::*;
use std::sync::Arc;

#[component]
pub fn Summary(run: Arc<RunView>) -> impl IntoView {
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
    view! {
        <section data-testid="summary" class="summary">
            <p data-testid="totals"><strong>{run.view.totals.line()}</strong></p>
            <p>{line1}</p>
            <p>{line2}</p>
            {notes}
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
                .map(|(cell, header)| view! { <td data-key=header data-value=cell.exact()>{cell.text()}</td> })
                .collect_view();
            let (key, key_attr) = (row.key.clone(), row.key);
            view! { <tr data-testid=row_testid data-key=key_attr><th scope="row">{key}</th>{cells}</tr> }
        })
        .collect_view();
    view! {
        <div class="table-wrap">
            <table data-testid=testid>
                <thead><tr><th>"agent"</th>{head}</tr></thead>
                <tbody>{rows}</tbody>
            </table>
        </div>
    }
}
