//! A comparison shown: the report's summary sections (the core renders them, escaped), the
//! paired tasks in any order (`tasks`; a click shows both runs' transcripts of the task with
//! their differences marked, `diff`), and "Export report" (the bytes `gymscope compare
//! --report` writes).

use crate::compare::conversations::PairConversations;
use crate::web::download::DownloadLink;
use crate::web::pages::compare::diff::SideBySide;
use crate::web::pages::compare::tasks::PairedTasks;
use crate::web::protocol::{Compared, Reply, ReportRequest, Request};
use crate::web::worker_client::SharedWorker;
use leptos::prelude::*;
use std::sync::Arc;

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
    let counts: Vec<(u32, u32)> = c
        .tasks
        .iter()
        .map(|t| (t.rollouts_a, t.rollouts_b))
        .collect();
    let deltas: Vec<Option<f64>> = c.tasks.iter().map(|t| t.delta).collect();
    let tasks = Arc::new(c.tasks.clone());
    view! {
        <div class="compare-summary" data-testid="compare-summary" on:click=on_flip inner_html=compared.summary_html.clone()></div>
        <PairedTasks tasks=tasks open=Callback::new(open) />
        {move || shown.get().map(|r| match r {
            Ok((i, p)) => {
                let totals = counts.get(i).copied().unwrap_or_default();
                let delta = deltas.get(i).copied().flatten();
                view! { <SideBySide pair=p totals=totals delta=delta /> }.into_any()
            }
            Err(e) => view! { <p class="error">{e}</p> }.into_any(),
        })}
        <ExportComparison worker=worker title=crate::compare::report::default_title(c) />
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
