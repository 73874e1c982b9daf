//! A pivot validation's result: the verdict, upstream's line, every error grouped by check (a
//! click shows the row), the summary, stats and the fixed copy.

use crate::inspect::pivot::PivotView;
use crate::pivot::checks::Finding;
use crate::web::download::DownloadLink;
use leptos::prelude::*;
use std::sync::Arc;

#[component]
pub fn PivotResult(
    view: Arc<PivotView>,
    fixed: Option<DownloadLink>,
    on_pick: impl Fn(Finding) + Copy + Send + Sync + 'static,
) -> impl IntoView {
    let verdict = view.verdict();
    let groups = view
        .groups
        .iter()
        .map(|g| {
            let findings = g
                .findings
                .iter()
                .map(|f| {
                    let finding = f.clone();
                    let (place, found) = (f.place(), f.found_note());
                    view! {
                        <li><button class="finding" data-testid="pivot-finding" data-line=f.line.to_string()
                            on:click=move |_| on_pick(finding.clone())>{place}</button>
                            " " {f.message.clone()} {found}</li>
                    }
                })
                .collect_view();
            let more = (g.count as usize > g.findings.len())
                .then(|| view! { <li class="more">{format!("… and {} more", g.count as usize - g.findings.len())}</li> });
            view! {
                <details open data-testid="pivot-group" data-check=g.id.clone()>
                    <summary>{g.title.clone()}" — "{crate::table::plural(g.count as usize, "error")}
                        " "<span class="check-id" data-testid="check-id" title="The check's name in docs/pivot.md and in validate-pivot's output">{format!("check {}", g.id)}</span></summary>
                    <ul>{findings}{more}</ul>
                </details>
            }
        })
        .collect_view();
    let note = view.fix_note().unwrap_or_default();
    let fix_view = view.fix.clone().map(|f| {
        let link = fixed.as_ref().map(|u| {
            u.anchor("pivot-fix-download", format!("Download {} ({} rows, {} changed)", u.name, f.written, f.changed))
        });
        let unfixable = f.unfixable.iter().map(|(_, why)| view! { <li>{why.clone()}</li> }).collect_view();
        view! { <section><h2>"Fixed copy"</h2><p data-testid="pivot-fix-note">{note.clone()}</p>
            {(f.written > 0).then_some(link)}<ul data-testid="pivot-unfixable">{unfixable}</ul></section> }
    });
    view! {
        <p data-testid="pivot-status" class=if view.valid { "status done" } else { "status error" }>
            <span data-testid="pivot-verdict">{verdict}</span></p>
        {view.upstream_error.clone().map(|u| view! { <p><code data-testid="pivot-upstream">{u}</code></p> })}
        {view.valid.then(|| view! { <pre data-testid="pivot-summary">{view.summary_text.clone()}</pre> })}
        {(!view.groups.is_empty()).then(|| view! { <p class="muted">"Each group below is one check the rows must pass, with its name (as in validate-pivot's output); click a line to see its row."</p> })}
        <section data-testid="pivot-errors">{groups}</section>
        {view.stats_text.clone().map(|s| view! { <pre data-testid="pivot-stats">{s}</pre> })}
        {fix_view}
    }
}
