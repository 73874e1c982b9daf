//! NeMo Gym's own verdict files on the Health page (`quality_summary.json`,
//! `rollout_verdicts.jsonl`), laid out from `inspect::upstream`.

use crate::inspect::upstream::{verdict_level, UpstreamView};
use crate::web::state::HealthLink;
use leptos::prelude::*;

/// A list of `(id, count)` as a two-column table (ids as code: opaque strings).
pub fn counts_table(testid: &'static str, rows: &[(String, u64)]) -> impl IntoView {
    let items = rows
        .iter()
        .map(|(k, n)| view! { <tr data-id=k.clone()><th scope="row"><code>{k.clone()}</code></th><td>{*n}</td></tr> })
        .collect_view();
    view! { <table class="fields" data-testid=testid>{items}</table> }
}

/// `healthy 3` `unhealthy 1` `unobserved 40`, each a badge in its verdict's colour.
pub fn verdict_badges(rows: &[(String, u64)]) -> impl IntoView {
    rows.iter()
        .map(|(k, n)| {
            view! { <span class=format!("badge verdict {}", verdict_level(k)) data-verdict=k.clone()>{format!("{k} {n}")}</span> }
        })
        .collect_view()
}

/// NeMo Gym's own verdict files: the run's verdict counts, findings per check id (those with
/// none counted, not listed), its unhealthy rollouts (each opens on the profile page).
pub fn upstream_view(
    u: &UpstreamView,
    link: HealthLink,
    to_profile: Callback<()>,
) -> impl IntoView {
    let error = u.error.as_ref().map(|e| {
        view! { <div class="status error" data-testid="health-upstream-error"><pre>{format!("NeMo Gym's verdict files could not be read (the rest of this page is unaffected): {e}")}</pre></div> }
    });
    let summary = u.summary.as_ref().map(|s| {
        let (found, zero): (Vec<_>, Vec<_>) = s.issues.iter().cloned().partition(|(_, n)| *n > 0);
        view! {
            <h3>{format!("Run summary ({})", s.file)}</h3>
            <p data-testid="health-upstream-verdicts">"Rollout verdicts: "{verdict_badges(&s.verdicts)}</p>
            {(!found.is_empty()).then(|| view! { <p class="muted">"Findings per check:"</p>{counts_table("health-upstream-issues", &found)} })}
            <p class="muted">{format!("checks without findings: {}{}", zero.len(), if s.ignored.is_empty() { String::new() } else { format!(" · ignored: {}", s.ignored.join(", ")) })}</p>
            {(!s.task_flags.is_empty()).then(|| view! { <p class="muted">"Tasks flagged:"</p>{counts_table("health-upstream-task-flags", &s.task_flags)} })}
        }
    });
    let verdicts = u.verdicts.as_ref().map(|v| {
        let unhealthy = v
            .unhealthy
            .iter()
            .map(|r| {
                let label = r.label.clone();
                let opener = match r.key {
                    Some(key) => view! {
                        <button class="rollout-link" data-testid="health-upstream-open" on:click=move |_| {
                            link.open.set(Some(key));
                            to_profile.run(());
                        }>{label}</button>
                    }
                    .into_any(),
                    None => view! { <span>{label}</span> }.into_any(),
                };
                view! { <tr data-testid="health-upstream-unhealthy-row"><td>{opener}</td><td class="reason"><code>{r.checks.clone()}</code></td></tr> }
            })
            .collect_view();
        view! {
            <h3>{format!("Rollout verdicts ({})", v.file)}</h3>
            <p data-testid="health-upstream-rollouts">{format!("{} rollouts: ", v.rollouts)}{verdict_badges(&v.verdicts)}{format!(" · {} of the run's {} rollouts have a verdict", v.matched, v.run_rollouts)}</p>
            {(!v.findings.is_empty()).then(|| view! { <p class="muted">"Rollouts with a finding, per check:"</p>{counts_table("health-upstream-findings", &v.findings)} })}
            {(!v.unobserved.is_empty()).then(|| view! {
                <details><summary>{format!("Rollouts a check could not observe ({} checks)", v.unobserved.len())}</summary>{counts_table("health-upstream-unobserved", &v.unobserved)}</details>
            })}
            {(!v.unhealthy.is_empty()).then(|| view! {
                <p class="muted">{format!("Unhealthy rollouts (the first {}):", v.unhealthy.len())}</p>
                <div class="table-wrap"><table data-testid="health-upstream-unhealthy">
                    <thead><tr><th>"rollout"</th><th class="text">"checks with findings"</th></tr></thead>
                    <tbody>{unhealthy}</tbody>
                </table></div>
            })}
        }
    });
    view! {
        <section data-testid="health-upstream">
            <h2>"NeMo Gym's verdicts"</h2>
            <p class="muted">"From NeMo Gym's own health files (quality_summary.json, rollout_verdicts.jsonl), shown as they are: check ids are NeMo Gym's, not gymscope's."</p>
            {error}
            {summary}
            {verdicts}
        </section>
    }
}
