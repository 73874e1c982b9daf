//! A pivot build's result: the outcome line, counts kept and skipped by reason, the validator's
//! verdict on the rows, the files to save, the equivalent command and the pivots (a click opens
//! one beside its rollout).

use crate::inspect::pivot::PivotView;
use crate::inspect::pivot_build::{BuildSummary, PivotEntry};
use crate::web::download::DownloadLink;
use crate::web::protocol::PivotsBuilt;
use leptos::prelude::*;
use std::rc::Rc;

/// Pivots listed at once; any other opens by its line number.
const LISTED: usize = 200;

pub struct Built {
    pub summary: BuildSummary,
    pub command: String,
    pub verdict: Option<PivotView>,
    pub pivots: Vec<PivotEntry>,
    pub links: Vec<(&'static str, DownloadLink)>,
    /// The pivot rows, read back by span to show one.
    pub rows_blob: Option<web_sys::Blob>,
    pub source: web_sys::File,
}

impl Built {
    /// The worker's reply, its files as download links; `source` is the file built from.
    pub fn new(b: PivotsBuilt, source: web_sys::File) -> Built {
        let link = |d| Some(DownloadLink::from(d));
        Built {
            rows_blob: b.rows.as_ref().map(|d| d.blob.clone()),
            summary: b.summary,
            command: b.command,
            verdict: b.verdict,
            pivots: b.pivots,
            source,
            links: [
                ("pb-download-rows", b.rows.and_then(link)),
                ("pb-download-audit", link(b.audit)),
                ("pb-download-metrics", link(b.metrics)),
                ("pb-download-info", link(b.info)),
                ("pb-download-config", b.config.and_then(link)),
            ]
            .into_iter()
            .filter_map(|(id, l)| l.map(|l| (id, l)))
            .collect(),
        }
    }
}

#[component]
pub fn BuildResult(
    built: Rc<Built>,
    on_open: impl Fn(PivotEntry) + Copy + Send + Sync + 'static,
) -> impl IntoView {
    let s = &built.summary;
    let skips = s
        .skips
        .iter()
        .map(|k| {
            let level = if k.row_level { "source row" } else { "decision point" };
            let class = if k.count > 0 { "" } else { "zero" };
            view! {
                <tr data-testid="pb-skip" data-reason=k.reason.clone() data-count=k.count.to_string() class=class>
                    <td><code>{k.reason.clone()}</code></td><td>{level}</td><td>{k.count}</td>
                </tr>
            }
        })
        .collect_view();
    let groups = s
        .groups
        .iter()
        .map(|(g, tasks, rows)| view! { <tr><td>{g.clone()}</td><td>{*tasks}</td><td>{*rows}</td></tr> })
        .collect_view();
    let verdict = built.verdict.as_ref().map(|v| {
        let class = if v.valid { "status done" } else { "status error" };
        view! { <p class=class>"validate-pivot: "<span data-testid="pb-verdict">{v.verdict()}</span></p> }
    });
    let empty = (s.kept == 0).then(|| {
        view! { <p data-testid="pb-empty" class="status error">"No pivot written: see the skip reasons below (no dataset or config is offered)."</p> }
    });
    let links = built
        .links
        .iter()
        .map(|(id, l)| view! { <li>{l.anchor(id, format!("{} ({})", l.name, crate::inspect::numbers::file_size(l.bytes)))}</li> })
        .collect_view();
    let entries = built.pivots.clone();
    let by_line = entries.clone();
    let listed = entries
        .into_iter()
        .take(LISTED)
        .map(|e| {
            let label = format!(
                "line {} · source row {} · {}",
                e.line, e.trajectory_id, e.action
            );
            let line = e.line.to_string();
            view! { <li><button class="finding" data-testid="pb-pivot" data-line=line
            on:click=move |_| on_open(e.clone())>{label}</button></li> }
        })
        .collect_view();
    let more = (built.pivots.len() > LISTED)
        .then(|| view! { <li class="more">{format!("… and {} more: open one by its line", built.pivots.len() - LISTED)}</li> });
    let line = RwSignal::new(String::new());
    let open_line = move |_| {
        let n = line.get_untracked().trim().parse::<u64>().ok();
        if let Some(e) = n.and_then(|n| by_line.iter().find(|e| e.line == n)) {
            on_open(e.clone());
        }
    };
    view! {
        <p data-testid="pb-status" class="status done"><span data-testid="pb-headline">{s.headline.clone()}</span></p>
        {empty}
        {verdict}
        <p>"Kept: "<strong data-testid="pb-kept">{s.kept}</strong>
            {format!(" pivots from {} source rows ({}). Skipped: {} source rows, and {} of the {} decision points in the rows used (by reason below).",
                s.source_rows, s.source_format, s.skipped_rows, s.skipped_decision_points, s.decision_points)}</p>
        <p data-testid="pb-funnel">{s.funnel()}</p>
        <ul class="downloads">{links}</ul>
        <p>"The same build on the command line: "<code data-testid="pb-command">{built.command.clone()}</code></p>
        <details><summary>"Skipped, by reason"</summary>
            <div class="table-wrap"><table data-testid="pb-skips"><tr><th>"reason"</th><th>"skips a"</th><th>"count"</th></tr>{skips}</table></div></details>
        <details><summary>"Source reward groups"</summary>
            <div class="table-wrap"><table><tr><th>"group"</th><th>"tasks"</th><th>"rows"</th></tr>{groups}</table></div></details>
        <section>
            <h2>"Pivots"</h2>
            <label>"Open the pivot on line " <input type="text" data-testid="pb-open-line" prop:value=move || line.get()
                on:input=move |e| line.set(event_target_value(&e)) /></label>
            <button data-testid="pb-open" on:click=open_line>"Open"</button>
            <ul class="pivot-list" data-testid="pb-pivots">{listed}{more}</ul>
        </section>
    }
}
