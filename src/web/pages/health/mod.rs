//! The Health page: what went wrong in the run the profile page loaded (health is computed in the
//! same read). Per agent, each rate coloured by its threshold with the level in words, every
//! non-zero cell a filter of the profile page's task table; the outcome buckets per agent; the
//! worst rollouts (each opens on the profile page) with NeMo Gym's verdict beside each when its
//! files came with the run; upstream's verdict files (counts per verdict and check id, its
//! unhealthy rollouts) and `ng_trajectory` evidence. All text (agent names, reasons, check ids,
//! gap codes) is laid out as text nodes, never HTML.

use crate::inspect::health::{rate_label, HealthFilter, HealthState, HealthView, RateCell};
use crate::inspect::upstream::{verdict_level, UpstreamView};
use crate::table::short_number;
use crate::web::state::HealthLink;
use leptos::prelude::*;

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
        "{} rollouts · {} with a flag ({}) · {} tasks · a rollout passes at reward ≥ {}",
        h.rollouts,
        h.flagged,
        pct(h.flagged, h.rollouts),
        h.tasks.tasks,
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
            <p class="health-verdict" data-testid="health-verdict">{format!("{} rollouts carry a flag; every rate is within its warning threshold.", h.flagged)}</p>
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
                <p>{format!("{} rates above their warning threshold:", h.findings.len())}</p>
                <ul data-testid="health-findings">{items}</ul>
            </div>
        }
        .into_any()
    };
    // Rates as rows (each with its threshold), agents as columns: a run has few agents.
    let agent_head = h
        .agents
        .iter()
        .map(|a| view! { <th scope="col" data-agent=a.agent.clone()>{a.agent.clone()}<br/><span class="muted">{format!("{} rollouts · {} tool calls", a.rollouts, a.tool_calls)}</span></th> })
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
    view! {
        <section class="health" data-testid="health-page">
            <h2>"Rollout health"</h2>
            <p data-testid="health-headline">{headline}</p>
            <p class="muted">{counts}</p>
            {verdict}
            {run_rates}
            <h2>"Rates per agent"</h2>
            <p class="muted">"Each rate is coloured by its threshold (ok / warn / bad, the word beside the colour). Click a non-zero rate to list the tasks with such a rollout on the Reward profile page."</p>
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

/// `class` when `n` is not zero (a zero count is not coloured).
fn nonzero(class: &'static str, n: u64) -> &'static str {
    if n == 0 {
        "bucket"
    } else {
        class
    }
}

/// One rate: value, level word and counts; a button that filters the task table unless zero.
fn rate_cell(c: &RateCell, agent: &str, link: HealthLink, to_profile: Callback<()>) -> AnyView {
    let class = format!("rate {}", c.word());
    let text = view! {
        // No level word for a rate with nothing to count ("–", 0 of 0 tool calls).
        <span class="value">{c.percent()}</span>" "<span class="level">{c.value.map(|_| c.word())}</span>
        <br/><span class="counts">{c.counts()}</span>
    };
    if c.count == 0 || crate::inspect::health::rate_bit(&c.rate).is_none() {
        return view! {
            <td class=class data-testid="rate-cell" data-rate=c.rate.clone() data-agent=agent.to_string() data-level=c.word() title=c.threshold.clone()>{text}</td>
        }
        .into_any();
    }
    let filter = HealthFilter {
        rate: c.rate.clone(),
        agent: Some(agent.to_string()),
    };
    let title = format!("{} — list these tasks", c.threshold);
    view! {
        <td class=class data-testid="rate-cell" data-rate=c.rate.clone() data-agent=agent.to_string() data-level=c.word()>
            <button class="rate-filter" data-testid="rate-filter" title=title on:click=move |_| {
                link.filter.set(Some(filter.clone()));
                to_profile.run(());
            }>{text}</button>
        </td>
    }
    .into_any()
}

fn worst_view(h: &HealthView, link: HealthLink, to_profile: Callback<()>) -> impl IntoView {
    let has_upstream = h.upstream.as_ref().is_some_and(|u| u.verdicts.is_some());
    (!h.worst.is_empty()).then(|| {
        let rows = h
            .worst
            .iter()
            .map(|w| {
                let key = (w.task, w.rollout);
                view! {
                    <tr data-testid="health-worst-row">
                        <td><button class="rollout-link" data-testid="health-open-rollout" on:click=move |_| {
                            link.open.set(Some(key));
                            to_profile.run(());
                        }>{format!("task {} · rollout {}", w.task, w.rollout)}</button></td>
                        <td class="agents">{w.agent.clone()}</td>
                        <td>{w.reward.map_or("–".to_string(), short_number)}</td>
                        <td class="reason">{w.reason.clone()}</td>
                        {has_upstream.then(|| match &w.upstream {
                            Some(v) => view! { <td class=format!("reason verdict {}", v.level()) data-testid="health-worst-upstream" title=v.unobserved_text()>{v.short()}</td> }.into_any(),
                            None => view! { <td class="reason" data-testid="health-worst-upstream">"–"</td> }.into_any(),
                        })}
                    </tr>
                }
            })
            .collect_view();
        view! {
            <h2>"Worst rollouts"</h2>
            <p class="muted">{format!("{} consistently unhealthy tasks (every repeat flagged, at least 2).", h.unhealthy_tasks)}</p>
            <div class="table-wrap">
                <table data-testid="health-worst">
                    <thead><tr><th>"rollout"</th><th class="text">"agent"</th><th>"reward"</th><th class="text">"why"</th>{has_upstream.then(|| view! { <th class="text">"NeMo Gym's verdict"</th> })}</tr></thead>
                    <tbody>{rows}</tbody>
                </table>
            </div>
        }
    })
}

/// A list of `(id, count)` as a two-column table (ids as code: opaque strings).
fn counts_table(testid: &'static str, rows: &[(String, u64)]) -> impl IntoView {
    let items = rows
        .iter()
        .map(|(k, n)| view! { <tr data-id=k.clone()><th scope="row"><code>{k.clone()}</code></th><td>{*n}</td></tr> })
        .collect_view();
    view! { <table class="fields" data-testid=testid>{items}</table> }
}

/// `healthy 3` `unhealthy 1` `unobserved 40`, each a badge in its verdict's colour.
fn verdict_badges(rows: &[(String, u64)]) -> impl IntoView {
    rows.iter()
        .map(|(k, n)| {
            view! { <span class=format!("badge verdict {}", verdict_level(k)) data-verdict=k.clone()>{format!("{k} {n}")}</span> }
        })
        .collect_view()
}

/// NeMo Gym's own verdict files: the run's verdict counts, findings per check id (those with
/// none counted, not listed), its unhealthy rollouts (each opens on the profile page).
fn upstream_view(u: &UpstreamView, link: HealthLink, to_profile: Callback<()>) -> impl IntoView {
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
