//! The Health page: what went wrong in the run the profile page loaded (health is computed in the
//! same read). Per agent, each rate coloured by its threshold with the level in words, every
//! non-zero cell a filter of the profile page's task table; the outcome buckets per agent; the
//! worst rollouts (each opens on the profile page) with NeMo Gym's verdict beside each when its
//! files came with the run; upstream's verdict files (counts per verdict and check id, its
//! unhealthy rollouts) and `ng_trajectory` evidence. All text (agent names, reasons, check ids,
//! gap codes) is laid out as text nodes, never HTML.

use crate::figures::count;
use crate::inspect::health::{rate_label, HealthState, HealthView};
use crate::table::{plural, short_number};
use crate::web::pages::profile::summary::breakable;
use crate::web::state::HealthLink;
use leptos::prelude::*;
use rates::{nonzero, rate_cell, worst_view};
use upstream::upstream_view;

mod rates;
mod upstream;

#[component]
pub fn HealthPage(
    link: HealthLink,
    /// Shows the profile page (after a cell set the filter or a rollout was asked for).
    to_profile: Callback<()>,
) -> impl IntoView {
    move || {
        let Some(run) = link.run.get() else {
            return view! {
                <p class="status" data-testid="health-status">"No run loaded yet: choose a run's two files (or load the example) on the Reward profile page; its health is computed in the same read."</p>
            }
            .into_any();
        };
        match &run.view.health {
            HealthState::NotComputed => view! {
                <p class="status" data-testid="health-status">"Health reads each rollout's response, which profile files (*_reward_profiling.jsonl) do not carry: choose the run's rollouts and materialized inputs instead."</p>
            }
            .into_any(),
            HealthState::Failed(e) => view! {
                <div class="status error" data-testid="health-status"><pre>{format!("Rollout health could not be computed (the profile is unaffected): {e}")}</pre></div>
            }
            .into_any(),
            HealthState::Ready(h) => health_view(h, link, to_profile).into_any(),
        }
    }
}

fn health_view(h: &HealthView, link: HealthLink, to_profile: Callback<()>) -> impl IntoView {
    let pct = |n: u64, of: u64| {
        if of == 0 {
            "–".to_string()
        } else {
            format!("{:.1} %", n as f64 / of as f64 * 100.0)
        }
    };
    let headline = format!(
        // One vocabulary (docs/app.md): a rollout is flagged by the rates below, named as the
        // report and the CLI name them.
        "{} · {} flagged ({}) · {} · a rollout passes at reward ≥ {}",
        plural(h.rollouts as usize, "rollout"),
        count(h.flagged as usize),
        pct(h.flagged, h.rollouts),
        plural(h.tasks.tasks as usize, "task"),
        short_number(h.pass_threshold)
    );
    let counts = format!(
        "{} duplicate keys{}",
        h.duplicates,
        h.missing.map_or(String::new(), |m| format!(
            " · {m} expected rollouts missing"
        ))
    );
    let verdict = if h.flagged == 0 && h.findings.is_empty() {
        view! {
            <p class="health-verdict ok" data-testid="health-verdict">"✓ No flags in this run: every rollout finished with a final answer, none was truncated, and no tool call looped, failed or went unanswered. Every rate below is at 0 and within its threshold."</p>
        }
        .into_any()
    } else if h.findings.is_empty() {
        view! {
            <p class="health-verdict" data-testid="health-verdict">{format!("{} a flag; every rate is within its warning threshold.", if h.flagged == 1 { "1 rollout carries".to_string() } else { format!("{} rollouts carry", count(h.flagged as usize)) })}</p>
        }
        .into_any()
    } else {
        let items = h
            .findings
            .iter()
            .map(|f| view! { <li>{f.clone()}</li> })
            .collect_view();
        view! {
            <div class="health-verdict warn" data-testid="health-verdict">
                <p>{format!("{} above {} warning threshold:", plural(h.findings.len(), "rate"), if h.findings.len() == 1 { "its" } else { "their" })}</p>
                <ul data-testid="health-findings">{items}</ul>
            </div>
        }
        .into_any()
    };
    // A single-step run is judged on its one action; say so before any rate is read.
    let modes = h
        .agents
        .iter()
        .filter_map(|a| {
            let mode = a.mode.clone()?;
            Some(view! { <p class="muted" data-testid="health-mode">{format!("{}: {mode}", a.agent)}</p> })
        })
        .collect_view();
    // Rates as rows (each with its threshold), agents as columns: a run has few agents.
    let agent_head = h
        .agents
        .iter()
        .map(|a| view! { <th scope="col" data-agent=a.agent.clone()>{breakable(&a.agent)}<br/><span class="muted">{format!("{} rollouts · {} tool calls", a.rollouts, a.tool_calls)}</span></th> })
        .collect_view();
    let rate_names: Vec<(String, String)> = h
        .agents
        .first()
        .map(|a| {
            a.rates
                .iter()
                .map(|r| (r.rate.clone(), r.threshold.clone()))
                .collect()
        })
        .unwrap_or_default();
    let rows = rate_names
        .into_iter()
        .map(|(rate, threshold)| {
            let cells = h
                .agents
                .iter()
                .map(|a| match a.rates.iter().find(|c| c.rate == rate) {
                    Some(c) => rate_cell(c, &a.agent, link, to_profile),
                    None => view! { <td></td> }.into_any(),
                })
                .collect_view();
            view! {
                <tr data-testid="health-rate-row" data-rate=rate.clone()>
                    <th scope="row">{rate_label(&rate).to_string()}<br/><span class="muted">{threshold}</span></th>
                    {cells}
                </tr>
            }
        })
        .collect_view();
    let buckets = h
        .agents
        .iter()
        .map(|a| {
            let b = &a.buckets;
            let metric = |v: Option<f64>| v.map_or("–".to_string(), |v| format!("{v:.2}"));
            view! {
                <tr data-testid="health-bucket-row" data-agent=a.agent.clone()>
                    <th scope="row">{a.agent.clone()}</th>
                    <td>{b.tasks}</td>
                    <td class={nonzero("bucket never", b.never_pass)} data-bucket="never_pass">{b.never_pass}</td>
                    <td class="bucket" data-bucket="sometimes_pass">{b.sometimes_pass}</td>
                    <td class={nonzero("bucket always", b.always_pass)} data-bucket="always_pass">{b.always_pass}</td>
                    <td data-bucket="no_reward">{b.no_reward}</td>
                    <td>{metric(b.pass_at_1)}</td>
                    <td>{metric(b.pass_at_k)}</td>
                </tr>
            }
        })
        .collect_view();
    let run_rates = (!h.run_rates.is_empty()).then(|| {
        let cells = h
            .run_rates
            .iter()
            .map(|c| {
                view! {
                    <li><span class=format!("rate {}", c.word())>{format!("{} {} · {}", rate_label(&c.rate), c.percent(), c.word())}</span>
                        <span class="muted">{format!(" {} ({})", c.counts(), c.threshold)}</span></li>
                }
            })
            .collect_view();
        view! { <ul class="run-rates" data-testid="health-run-rates">{cells}</ul> }
    });
    let worst = worst_view(h, link, to_profile);
    let trajectory = h.trajectory.as_ref().map(|t| {
        let list = |title: &'static str, rows: &[(String, u64)]| {
            let items = rows
                .iter()
                .map(|(k, n)| view! { <tr><th scope="row"><code>{k.clone()}</code></th><td>{*n}</td></tr> })
                .collect_view();
            view! { <h3>{title}</h3><table class="fields">{items}</table> }
        };
        view! {
            <section data-testid="health-trajectory">
                <h2>"Upstream's evidence (ng_trajectory)"</h2>
                <p>{format!("{} rows carry ng_trajectory ({} unreadable) · {} turns recorded", t.rows, t.unreadable, t.turns)}</p>
                {(!t.gaps.is_empty()).then(|| list("Gaps (by code)", &t.gaps))}
                {(!t.tool_calls_by_status.is_empty()).then(|| list("Tool calls by status", &t.tool_calls_by_status))}
            </section>
        }
    });
    // Health is the whole run's: with a query applied on the profile page, it says so.
    let scope_note = move || {
        let q = link.applied.get();
        (!q.is_empty()).then(|| view! {
            <p class="warning" data-testid="scope-whole-run">{format!("The whole run: the query applied on the Reward profile page ({q}) does not filter this page.")}</p>
        })
    };
    view! {
        <section class="health" data-testid="health-page" data-scope="run">
            <h2>"Rollout health"</h2>
            {scope_note}
            <p data-testid="health-headline">{headline}</p>
            <p class="muted">{counts}</p>
            {modes}
            {verdict}
            {run_rates}
            <h2>"Rates per agent"</h2>
            <p class="muted">"Each rate is coloured by its threshold (ok / warn / bad, the word beside the colour). Click a non-zero rate to filter the Reward profile page by its query (health.FLAG == true and agent == …): the tasks with such a rollout."</p>
            <div class="table-wrap">
                <table data-testid="health-rates">
                    <thead><tr><th>"rate (threshold)"</th>{agent_head}</tr></thead>
                    <tbody>{rows}</tbody>
                </table>
            </div>
            <h2>"Tasks by outcome"</h2>
            <div class="table-wrap">
                <table data-testid="health-buckets">
                    <thead><tr><th>"agent"</th><th>"tasks"</th><th>"never pass"</th><th>"sometimes pass"</th><th>"always pass"</th><th>"no reward"</th><th>"pass@1"</th><th>"pass@k"</th></tr></thead>
                    <tbody>{buckets}</tbody>
                </table>
            </div>
            {worst}
            {h.upstream.as_ref().map(|u| upstream_view(u, link, to_profile))}
            {trajectory}
        </section>
    }
}
