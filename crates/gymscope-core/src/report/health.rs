//! The report's Health section: per agent the rates against their thresholds (a bad rate in the
//! warning style), the outcome buckets with pass@1 / pass@k, the findings, the consistently
//! unhealthy tasks, the worst rollouts and upstream's verdicts. Every string is escaped; no
//! style attribute (the page's CSP allows only its hashed style element).

use super::part::Part;
use crate::figures::{percent, two_decimals};
use crate::health::{agent_label, HealthReport, Level, Rate};
use crate::html::escape;
use std::fmt::Write;

fn rate_cell(out: &mut String, r: &Rate) {
    let text = format!("{} ({}/{})", percent(r.value), r.count, r.of);
    let _ = match r.level {
        Level::Ok => write!(out, "<td>{text}</td>"),
        Level::Warn => write!(out, "<td><strong>{text} warn</strong></td>"),
        Level::Bad => write!(
            out,
            "<td class=\"warning\"><strong>{text} bad</strong></td>"
        ),
    };
}

pub(super) fn section(out: &mut String, h: &HealthReport, part: Part) {
    let _ = write!(
        out,
        "<section {}><h2>{}</h2>",
        part.attrs("health"),
        escape(&part.heading("Health"))
    );
    let _ = write!(
        out,
        "<p class=\"note\">What went wrong, from what every rollout carries: {} rollouts, {} duplicate keys{}; a rollout passes at reward ≥ {}. \
         Rates above their warning threshold are marked warn, above the bad threshold bad.</p>",
        h.rollouts.total,
        h.rollouts.duplicates,
        match (h.rollouts.failures, h.rollouts.missing) {
            (Some(f), Some(m)) => format!(", {f} failures, {m} missing"),
            (Some(f), None) => format!(", {f} failures"),
            (None, Some(m)) => format!(", {m} missing"),
            (None, None) => String::new(),
        },
        h.pass_threshold
    );
    for a in &h.agents {
        if let Some(mode) = crate::health::mode_line(a) {
            let _ = write!(
                out,
                "<p class=\"note mode\">{}: {}</p>",
                escape(agent_label(a.agent.as_deref())),
                escape(&mode)
            );
        }
    }
    let _ = write!(
        out,
        "<div class=\"scroll\"><table id=\"{}\"><thead><tr><th>agent</th><th>rollouts</th>",
        part.id("health-table")
    );
    if let Some(a) = h.agents.first() {
        for r in &a.rates {
            let strict = if r.rate == "usage_missing" {
                "="
            } else {
                "&gt;"
            };
            let _ = write!(
                out,
                "<th title=\"{}\">{} <small>(warn &gt; {} %, bad {strict} {} %)</small></th>",
                escape(r.rate),
                escape(crate::health::rate_name(r.rate)),
                r.warn * 100.0,
                r.bad * 100.0
            );
        }
    }
    out.push_str(
        "<th>never-pass</th><th>sometimes-pass</th><th>always-pass</th><th>pass@1</th><th>pass@k</th>\
         <th>consistency</th><th>retry value</th><th>mean turns</th><th>mean tool calls</th></tr></thead><tbody>",
    );
    for a in &h.agents {
        let _ = write!(
            out,
            "<tr><th>{}</th><td>{}</td>",
            escape(agent_label(a.agent.as_deref())),
            a.rollouts
        );
        for r in &a.rates {
            rate_cell(out, r);
        }
        let o = &a.outcomes;
        let _ = write!(
            out,
            "<td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            o.never_pass,
            o.sometimes_pass,
            o.always_pass,
            two_decimals(o.pass_at_1),
            two_decimals(o.pass_at_k),
            two_decimals(o.consistency),
            two_decimals(o.retry_value),
            two_decimals(a.turns.mean),
            two_decimals(a.tool_calls_per_rollout.mean)
        );
    }
    out.push_str("</tbody></table></div>");
    let bad = h.findings(Level::Bad);
    let warn: Vec<String> = h
        .findings(Level::Warn)
        .into_iter()
        .filter(|w| !bad.contains(w))
        .collect();
    if !bad.is_empty() || !warn.is_empty() {
        let _ = write!(out, "<ul id=\"{}\">", part.id("health-findings"));
        for b in &bad {
            let _ = write!(out, "<li class=\"warning\">bad: {}</li>", escape(b));
        }
        for w in &warn {
            let _ = write!(out, "<li>warn: {}</li>", escape(w));
        }
        out.push_str("</ul>");
    }
    let _ = write!(
        out,
        "<h4>Consistently unhealthy tasks (every repeat flagged): {}</h4>",
        h.consistently_unhealthy_tasks
    );
    if !h.consistently_unhealthy.is_empty() {
        let _ = write!(out, "<ul id=\"{}\">", part.id("health-unhealthy"));
        for t in &h.consistently_unhealthy {
            let flags: Vec<String> = t.flags.iter().map(|(f, n)| format!("{f} {n}")).collect();
            let _ = write!(
                out,
                "<li>task {} ({}): {} repeats, {}; {}</li>",
                t.task,
                escape(agent_label(t.agent.as_deref())),
                t.repeats,
                t.outcome,
                escape(&flags.join(", "))
            );
        }
        out.push_str("</ul>");
    }
    if !h.worst.is_empty() {
        let _ = write!(
            out,
            "<h4>Worst rollouts</h4><ul id=\"{}\">",
            part.id("health-worst")
        );
        for w in &h.worst {
            let _ = write!(
                out,
                "<li>task {} rollout {} ({}): {}</li>",
                w.task,
                w.rollout,
                escape(agent_label(w.agent.as_deref())),
                escape(&w.reason)
            );
        }
        out.push_str("</ul>");
    }
    if let Some(u) = &h.upstream {
        upstream(out, u, part);
    }
    out.push_str("</section>\n");
}

fn upstream(out: &mut String, u: &crate::health::upstream::Upstream, part: Part) {
    let pairs = |m: &std::collections::BTreeMap<String, u64>| -> String {
        let v: Vec<String> = m
            .iter()
            .filter(|(_, &n)| n > 0)
            .map(|(k, v)| format!("{k} {v}"))
            .collect();
        escape(&if v.is_empty() {
            "none".to_string()
        } else {
            v.join(", ")
        })
    };
    let _ = write!(
        out,
        "<h4>NeMo Gym's verdicts</h4><ul id=\"{}\">",
        part.id("health-upstream")
    );
    if let Some(q) = &u.quality_summary {
        let _ = write!(
            out,
            "<li>quality_summary.json: verdicts {}; findings {}; task flags {}</li>",
            pairs(&q.verdicts),
            pairs(&q.issues),
            pairs(&q.task_flags)
        );
    }
    if let Some(v) = &u.rollout_verdicts {
        let _ = write!(
            out,
            "<li>rollout_verdicts.jsonl: {} rollouts, {}; findings by check {}</li>",
            v.rollouts,
            pairs(&v.verdicts),
            pairs(&v.findings)
        );
    }
    out.push_str("</ul>");
}
