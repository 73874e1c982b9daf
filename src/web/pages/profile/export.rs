//! "Export report": the same self-contained HTML file `gymscope report` writes, rendered in the
//! worker by the same core code from the run shown; with a query applied, the page opens on its
//! matches, as `gymscope report --query` makes it.

use crate::inspect::run::RunView;
use crate::web::download::DownloadLink;
use crate::web::protocol::{ExportQuery, Reply, ReportRequest, Request};
use crate::web::state::Selection;
use crate::web::worker_client::SharedWorker;
use leptos::prelude::*;
use std::sync::Arc;

/// The applied query and the keys of the points it matched (none while it is being answered).
fn applied_query(run: &RunView, sel: Selection) -> Option<ExportQuery> {
    let source = sel.query.get_untracked();
    let mask = sel.matched.get_untracked()?;
    (!source.trim().is_empty()).then(|| ExportQuery {
        source,
        keys: (0..run.points())
            .filter(|&p| mask.get(p).copied().unwrap_or(false))
            .map(|p| (run.cols.point_task[p], run.cols.point_rollout[p]))
            .collect(),
    })
}

#[component]
pub fn ExportReport(worker: SharedWorker, run: Arc<RunView>, sel: Selection) -> impl IntoView {
    // The run's folder when the browser knows it (a folder chosen or dropped), as the CLI
    // titles a report; else the rollouts file's stem.
    let folder = use_context::<crate::web::state::LoadedRollouts>()
        .and_then(|l| l.0.get_untracked())
        .and_then(|f| js_sys::Reflect::get(&f, &"webkitRelativePath".into()).ok())
        .and_then(|p| p.as_string())
        .unwrap_or_default();
    let title = RwSignal::new(crate::names::run_title(std::path::Path::new(
        if folder.is_empty() {
            &run.view.rollouts_name
        } else {
            &folder
        },
    )));
    let today = js_sys::Date::new_0()
        .to_iso_string()
        .as_string()
        .unwrap_or_default();
    let date = RwSignal::new(today.get(..10).unwrap_or_default().to_string());
    let conversations = RwSignal::new(crate::report::DEFAULT_CONVERSATION_TASKS);
    let result = RwSignal::new_local(None::<Result<DownloadLink, String>>);
    let export = move |_| {
        let request = Request::Report(ReportRequest {
            title: title.get_untracked(),
            date: Some(date.get_untracked()).filter(|d| !d.is_empty()),
            conversations: conversations.get_untracked(),
            query: applied_query(&run, sel),
        });
        result.set(None);
        worker.with_value(|w| {
            w.request(&request, move |reply| match reply {
                Reply::Report(d) => {
                    let link = DownloadLink::from(d);
                    link.save();
                    result.set(Some(Ok(link)));
                }
                Reply::Progress(_) => {}
                Reply::Failed(f) => result.set(Some(Err(f.message))),
                _ => result.set(Some(Err("unexpected reply from the worker".into()))),
            });
        });
    };
    let text_input = move |signal: RwSignal<String>, testid: &'static str| {
        view! { <input type="text" data-testid=testid prop:value=move || signal.get() on:input=move |e| signal.set(event_target_value(&e)) /> }
    };
    view! {
        <section class="export">
            <h2>"Share"</h2>
            <label>"Title " {text_input(title, "report-title")}</label>
            <label>" Date " {text_input(date, "report-date")}</label>
            <label>" Conversations of the first " <input type="number" min="0" data-testid="report-conversations" style:width="5em"
                prop:value=move || conversations.get().to_string()
                on:input=move |e| conversations.set(event_target_value(&e).parse().unwrap_or(0)) />" tasks "</label>
            <button data-testid="export-report" on:click=export>"Export report"</button>
            {move || sel.matched.get().map(|m| {
                let n = m.iter().filter(|x| **x).count();
                view! { <span class="muted" data-testid="export-query">{format!(" opens on the query's {} matching rollouts ", crate::figures::count(n))}</span> }
            })}
            {move || result.get().map(|r| match r {
                Ok(link) => {
                    let label = format!("Saved {} ({:.1} MB): one HTML file, opens offline anywhere. Save again", link.name, link.bytes as f64 / 1e6);
                    link.anchor("report-download", label).into_any()
                }
                Err(e) => view! { <span class="error">{e}</span> }.into_any(),
            })}
        </section>
    }
}
