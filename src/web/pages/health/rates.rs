//! The rate cells and the worst rollouts of the Health page: each non-zero rate a query of the
//! profile page (`health.loop == true and agent == "a"`), each worst rollout a link to it.

use crate::inspect::health::{HealthFilter, HealthView, RateCell};
use crate::table::short_number;
use crate::web::state::HealthLink;
use leptos::prelude::*;

/// `class` when `n` is not zero (a zero count is not coloured).
pub fn nonzero(class: &'static str, n: u64) -> &'static str {
    if n == 0 {
        "bucket"
    } else {
        class
    }
}

/// One rate: value, level word and counts; a button that filters the task table unless zero.
pub fn rate_cell(c: &RateCell, agent: &str, link: HealthLink, to_profile: Callback<()>) -> AnyView {
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
                link.query.set(filter.as_query());
                to_profile.run(());
            }>{text}</button>
        </td>
    }
    .into_any()
}

pub fn worst_view(h: &HealthView, link: HealthLink, to_profile: Callback<()>) -> impl IntoView {
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
