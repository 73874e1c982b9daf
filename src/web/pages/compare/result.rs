//! A comparison shown: the report's summary sections (the core renders them, escaped), the
//! paired tasks worst regression first (a click shows both runs' rollouts of the task side by
//! side), and "Export report" (the bytes `gymscope compare --report` writes).

use crate::compare::conversations::{PairConversations, SideConversations};
use crate::table::short_number;
use crate::web::download::DownloadLink;
use crate::web::protocol::{Compared, Reply, ReportRequest, Request};
use crate::web::widgets::conversation_view::items_view;
use crate::web::worker_client::SharedWorker;
use leptos::prelude::*;
use std::sync::Arc;

/// Rows of the paired-task list drawn at once (the worst regressions and best improvements
/// are at its two ends; the report's table holds them all).
const ROWS: usize = 200;

fn num(v: Option<f64>) -> String {
    v.map_or("–".into(), short_number)
}

#[component]
pub fn CompareResult(compared: Arc<Compared>, worker: SharedWorker) -> impl IntoView {
    // The task opened (its place in the comparison, for its rollout counts) and its rollouts.
    let shown = RwSignal::new(None::<Result<(usize, PairConversations), String>>);
    let open = move |index: usize| {
        shown.set(None);
        worker.with_value(|w| {
            w.request(&Request::CompareTask { index }, move |reply| match reply {
                Reply::ComparedTask(p) => shown.set(Some(Ok((index, *p)))),
                Reply::Failed(f) => shown.set(Some(Err(f.message))),
                _ => {}
            });
        });
    };
    let c = &compared.comparison;
    // The verdict section's flipped tasks link to `#task=N` (the baseline's index), as in the
    // report; here a click shows that task's rollouts instead of leaving the page.
    let task_a: Vec<i64> = c.tasks.iter().map(|t| t.task_a).collect();
    let on_flip = move |e: leptos::ev::MouseEvent| {
        use wasm_bindgen::JsCast;
        let link = e
            .target()
            .and_then(|t| t.dyn_into::<web_sys::Element>().ok())
            .and_then(|el| el.closest("a.flip").ok().flatten());
        let Some(href) = link.and_then(|a| a.get_attribute("href")) else {
            return;
        };
        e.prevent_default();
        let n = href
            .strip_prefix("#task=")
            .and_then(|n| n.parse::<i64>().ok());
        if let Some(i) = n.and_then(|n| task_a.iter().position(|&t| t == n)) {
            open(i);
        }
    };
    let rows = c
        .tasks
        .iter()
        .enumerate()
        .take(ROWS)
        .map(|(i, t)| {
            view! {
                <tr data-testid="compare-task-row" data-task-a=t.task_a.to_string() on:click=move |_| open(i)>
                    <td>{t.task_a}</td><td>{t.task_b}</td><td>{t.agent.clone().unwrap_or_default()}</td>
                    <td>{num(t.mean_a)}</td><td>{num(t.mean_b)}</td><td data-testid="compare-delta">{num(t.delta)}</td>
                    <td>{format!("{} → {}", t.group_a.as_str(), t.group_b.as_str())}</td>
                    <td>{crate::figures::tokens(t.tokens_a)}</td><td>{crate::figures::tokens(t.tokens_b)}</td>
                </tr>
            }
        })
        .collect_view();
    let counts: Vec<(u32, u32)> = c
        .tasks
        .iter()
        .map(|t| (t.rollouts_a, t.rollouts_b))
        .collect();
    let more = (c.tasks.len() > ROWS).then(|| format!("The first {ROWS} of {} paired tasks, worst regression first; the exported report lists them all.", c.tasks.len()));
    view! {
        <div class="compare-summary" data-testid="compare-summary" on:click=on_flip inner_html=compared.summary_html.clone()></div>
        <section>
            <h2>"Paired tasks"</h2>
            <p class="muted">"Click a task to see both runs' rollouts of it side by side."</p>
            <div class="table-wrap"><table data-testid="compare-tasks">
                <thead><tr><th>"task A"</th><th>"task B"</th><th>"agent"</th><th>"mean A"</th><th>"mean B"</th><th>"Δ"</th><th>"groups"</th><th>"tokens A"</th><th>"tokens B"</th></tr></thead>
                <tbody>{rows}</tbody>
            </table></div>
            {more.map(|m| view! { <p class="muted">{m}</p> })}
        </section>
        {move || shown.get().map(|r| match r {
            Ok((i, p)) => {
                let totals = counts.get(i).copied().unwrap_or_default();
                view! { <SideBySide pair=p totals=totals /> }.into_any()
            }
            Err(e) => view! { <p class="error">{e}</p> }.into_any(),
        })}
        <ExportComparison worker=worker title=crate::compare::report::default_title(c) />
    }
}

/// Both runs' rollouts of a task; `totals` are the task's rollouts in each run, of which the
/// worker reads at most `compare::conversations::MAX_SHOWN_ROLLOUTS` (said when it cut).
#[component]
fn SideBySide(pair: PairConversations, totals: (u32, u32)) -> impl IntoView {
    let column = |label: String, side: SideConversations, total: u32, testid: &'static str| {
        let shown = side.iter().filter(|(r, _)| r.is_some()).count();
        let sampled = (shown < total as usize).then(|| view! {
            <p class="muted" data-testid="compare-sampled">{format!("The first {shown} of this task's {total} rollouts in this run.")}</p>
        });
        let rollouts = side
            .into_iter()
            .map(|(rollout, c)| {
                let head = rollout.map_or("prompt".to_string(), |r| format!("rollout {r} · reward {}", c.reward.clone().unwrap_or_else(|| "–".into())));
                let items: Vec<_> = c.input.into_iter().chain(c.output).collect();
                let items = items_view(&items, Signal::stored(false));
                view! { <details class="rollout" data-testid="compare-rollout"><summary>{head}</summary>{items}</details> }
            })
            .collect_view();
        view! { <div class="side" data-testid=testid><h3>{label}</h3>{sampled}{rollouts}</div> }
    };
    view! {
        <section class="side-by-side" data-testid="compare-side-by-side">
            {column(format!("A · task {}", pair.task_a), pair.a, totals.0, "compare-side-a")}
            {column(format!("B · task {}", pair.task_b), pair.b, totals.1, "compare-side-b")}
        </section>
    }
}

#[component]
fn ExportComparison(worker: SharedWorker, title: String) -> impl IntoView {
    let title = RwSignal::new(title);
    let result = RwSignal::new_local(None::<Result<DownloadLink, String>>);
    let export = move |_| {
        let request = Request::CompareReport(ReportRequest {
            title: title.get_untracked(),
            date: None,
            conversations: crate::report::DEFAULT_CONVERSATION_TASKS,
            query: None,
        });
        worker.with_value(|w| {
            w.request(&request, move |reply| match reply {
                Reply::Report(d) => {
                    let link = DownloadLink::from(d);
                    link.save();
                    result.set(Some(Ok(link)));
                }
                Reply::Failed(f) => result.set(Some(Err(f.message))),
                _ => {}
            });
        });
    };
    view! {
        <section class="export">
            <h2>"Share"</h2>
            <label>"Title " <input type="text" data-testid="compare-report-title" prop:value=move || title.get()
                on:input=move |e| title.set(event_target_value(&e)) /></label>
            <button data-testid="compare-export" on:click=export>"Export report"</button>
            {move || result.get().map(|r| match r {
                Ok(link) => {
                    let label = format!("Saved {} ({:.1} MB): one HTML file, opens offline anywhere. Save again", link.name, link.bytes as f64 / 1e6);
                    link.anchor("compare-report-download", label).into_any()
                }
                Err(e) => view! { <span class="error">{e}</span> }.into_any(),
            })}
        </section>
    }
}
