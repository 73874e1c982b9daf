//! "Export report": the same self-contained HTML file `gymscope report` writes, rendered in the
//! worker by the same core code from the run shown.

use crate::web::download::DownloadLink;
use crate::web::protocol::{Reply, ReportRequest, Request};
use crate::web::worker_client::SharedWorker;
use leptos::prelude::*;

#[component]
pub fn ExportReport(worker: SharedWorker, rollouts_name: String) -> impl IntoView {
    let title = RwSignal::new(crate::names::report_title(&rollouts_name).to_string());
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
        });
        result.set(None);
        worker.with_value(|w| {
            w.request(&request, move |reply| match reply {
                Reply::Report(d) => result.set(Some(Ok(DownloadLink::from(d)))),
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
            {move || result.get().map(|r| match r {
                Ok(link) => {
                    let label = format!("{} ({:.1} MB) — one HTML file, opens offline anywhere", link.name, link.bytes as f64 / 1e6);
                    link.anchor("report-download", label).into_any()
                }
                Err(e) => view! { <span class="error">{e}</span> }.into_any(),
            })}
        </section>
    }
}
