//! The comparison report: one self-contained HTML file, built from the run report's pieces
//! (page head with CSP hashes, header, escaping, conversations, inert JSON data). It shows the
//! headline, the per-agent table, the transition table, the paired scatter (colour by agent),
//! the delta histogram, the token-cost plot, the paired-task table and both runs'
//! conversations of the first regressed tasks side by side. Static HTML reads without
//! JavaScript; `compare.js` makes every count, mark and bar a filter of the task table.
//! Same input, same bytes: nothing reads a clock or iterates a hash map.

mod data;
mod model;
pub mod plots;
mod sections;
mod verdicts;

use super::conversations::PairConversations;
use super::multi::MultiComparison;
use super::summary::MeanDelta;
use super::text::{interval_method, tasks};
use super::Comparison;
use crate::html::escape;
use crate::report::{page_head, page_header, ReportMeta, BASE_STYLE};
use crate::reward_group::RewardGroup;
use std::fmt::Write;

const SCRIPT: &str = include_str!("compare.js");
const STYLE: &str = include_str!("compare.css");

/// The title when none is given: `A vs B` from the runs' names (`base vs step200`), the same in
/// the CLI and the app so both make the same bytes.
pub fn default_title(c: &Comparison) -> String {
    format!(
        "{} vs {}",
        crate::names::report_title(&c.a_name),
        crate::names::report_title(&c.b_name)
    )
}

/// The whole page.
pub fn render(c: &Comparison, meta: &ReportMeta, conversations: &[PairConversations]) -> String {
    render_with(c, None, meta, conversations)
}

/// The report of the baseline against its first candidate (whose tasks and conversations it
/// shows), with the verdicts, power and flips of every candidate after the headline.
pub fn render_multi(
    all: &MultiComparison,
    meta: &ReportMeta,
    conversations: &[PairConversations],
) -> Option<String> {
    let first = all.candidates.first()?;
    Some(render_with(
        &first.comparison,
        Some(all),
        meta,
        conversations,
    ))
}

fn render_with(
    c: &Comparison,
    all: Option<&MultiComparison>,
    meta: &ReportMeta,
    conversations: &[PairConversations],
) -> String {
    let m = model::model(c);
    let mut out = String::with_capacity(2 << 20);
    let title = if meta.title.is_empty() {
        "gymscope comparison"
    } else {
        &meta.title
    };
    let style = format!("{BASE_STYLE}{STYLE}");
    page_head(&mut out, title, "gymscope comparison", SCRIPT, &style);
    page_header(&mut out, meta, title);
    headline(&mut out, c, all);
    if let Some(all) = all {
        verdicts::section(&mut out, all);
    }
    agents(&mut out, c);
    transitions(&mut out, c);
    sections::plots(&mut out, c, &m);
    sections::tasks(&mut out, c, &m);
    sections::conversations(&mut out, c, conversations);
    out.push_str("<script type=\"application/json\" id=\"compare-data\">");
    out.push_str(&data::data_json(c, &m, conversations));
    out.push_str("</script>\n</body></html>\n");
    out
}

/// The report's summary sections (headline, agents, transitions, plots) as one HTML fragment,
/// every data string escaped: the app's Compare page shows exactly what the report shows.
pub fn summary_html(c: &Comparison) -> String {
    summary_html_with(c, None)
}

/// The page's summary: the report's headline, verdicts (when judged), per-agent table,
/// transitions and plots.
pub fn summary_html_with(c: &Comparison, all: Option<&MultiComparison>) -> String {
    let m = model::model(c);
    let mut out = String::with_capacity(64 << 10);
    headline(&mut out, c, all);
    if let Some(all) = all {
        verdicts::section(&mut out, all);
    }
    agents(&mut out, c);
    transitions(&mut out, c);
    sections::plots(&mut out, c, &m);
    out
}

/// A field's mean as people read it (`figures::for_column`), `–` without one.
fn for_field(name: &str, v: Option<f64>) -> String {
    v.map_or_else(|| "–".into(), |v| crate::figures::for_column(name, v))
}

pub(super) fn n(v: Option<f64>) -> String {
    crate::figures::reward(v)
}

/// A delta marked by its direction (`up`/`down`, an arrow), coloured better/worse only when
/// the metric has a known good direction: the reward's. Tokens and verifier fields (a judge
/// score, a count) may be better either way, so they stay neutral (issue 44, item 5).
/// A change of reward as people read it, signed (`+0.25`, `-0.05208`, `0`).
fn signed_reward(d: Option<f64>) -> String {
    match d {
        Some(d) if d > 0.0 => format!("+{}", crate::figures::reward(Some(d))),
        d => crate::figures::reward(d),
    }
}

/// A delta, `shown` as people read it, coloured better or worse only when `higher_is_better`
/// says which is which (and the caller has a verdict), its exact value in the tooltip.
fn delta_html(d: Option<f64>, higher_is_better: bool, shown: &str) -> String {
    let class = match d {
        Some(d) if d > 0.0 && higher_is_better => "delta up better",
        Some(d) if d > 0.0 => "delta up",
        Some(d) if d < 0.0 && higher_is_better => "delta down worse",
        Some(d) if d < 0.0 => "delta down",
        _ => "delta",
    };
    format!(
        "<span class=\"{class}\" title=\"{}\">{}</span>",
        d.map_or_else(String::new, |d| d.to_string()),
        escape(shown)
    )
}

/// A token mean as people read it (whole, with separators), the exact value in its tooltip.
fn tokens_html(v: Option<f64>) -> String {
    format!(
        "<span title=\"{}\">{}</span>",
        v.map_or(String::new(), |v| v.to_string()),
        crate::figures::tokens(v)
    )
}

/// A change of token means: whole, signed, neutral (fewer tokens is not always better).
fn tokens_delta_html(d: Option<f64>) -> String {
    let class = match d {
        Some(d) if d > 0.0 => "delta up",
        Some(d) if d < 0.0 => "delta down",
        _ => "delta",
    };
    let text = match d {
        Some(d) if d > 0.0 => format!("+{}", crate::figures::tokens(Some(d))),
        _ => crate::figures::tokens(d),
    };
    format!(
        "<span class=\"{class}\" title=\"{}\">{text}</span>",
        d.map_or(String::new(), |d| d.to_string())
    )
}

fn ci(m: &MeanDelta) -> String {
    m.ci95.map_or_else(String::new, |(lo, hi)| {
        format!("{} … {}", signed_reward(Some(lo)), signed_reward(Some(hi)))
    })
}

/// Whether the mean reward's change is a finding: the judged verdict when there is one (the
/// colour follows the verdict: a −0.05 with p 0.56 is not red), else a 95 % interval that
/// leaves out 0.
fn reward_changed(c: &Comparison, all: Option<&MultiComparison>) -> bool {
    let judged = all
        .and_then(|m| m.candidates.first())
        .and_then(|first| first.metrics.iter().find(|m| m.metric == "reward"));
    match judged {
        Some(row) => row.verdict != crate::compare::verdict::Verdict::NoDifference,
        None => c
            .overall
            .mean_reward
            .ci95
            .is_some_and(|(lo, hi)| lo > 0.0 || hi < 0.0),
    }
}

fn headline(out: &mut String, c: &Comparison, all: Option<&MultiComparison>) {
    let o = &c.overall;
    let r = &o.mean_reward;
    let _ = write!(
        out,
        "<section id=\"headline\"><h2>Is B better than A?</h2><p class=\"runs\">\
         <span class=\"run-a\">A</span> {} ({}) · <span class=\"run-b\">B</span> {} ({})</p>\
         <div class=\"cards\"><div class=\"card\"><div class=\"label\">mean reward</div>\
         <div class=\"value\">{} → {} {}</div><div class=\"sub\">95% CI {} ({})</div></div>",
        escape(&c.a_name),
        tasks(c.tasks_a),
        escape(&c.b_name),
        tasks(c.tasks_b),
        n(r.a),
        n(r.b),
        delta_html(r.delta, reward_changed(c, all), &signed_reward(r.delta)),
        escape(&ci(r)),
        escape(&interval_method(r, c.options.seed, &tasks(r.tasks))),
    );
    let _ = write!(
        out,
        "<div class=\"card\"><div class=\"label\">tasks</div><div class=\"value\">\
         <button class=\"pick better\" data-pick=\"improved\">↑ {} improved</button> \
         <button class=\"pick worse\" data-pick=\"regressed\">↓ {} regressed</button> \
         <button class=\"pick\" data-pick=\"unchanged\">= {} unchanged</button></div>\
         <div class=\"sub\">{} paired by {}; {} only in A, {} only in B{}</div></div>",
        o.improved,
        o.regressed,
        o.unchanged,
        o.paired_tasks,
        c.options.pair_by.as_str(),
        c.only_a,
        c.only_b,
        if o.without_reward > 0 {
            format!("; {} without a numeric reward", o.without_reward)
        } else {
            String::new()
        }
    );
    let _ = write!(
        out,
        "<div class=\"card\"><div class=\"label\">mean output tokens</div><div class=\"value\">{} → {} {}</div>\
         <div class=\"sub\">per rollout, over {}</div></div></div>",
        tokens_html(o.tokens.a),
        tokens_html(o.tokens.b),
        tokens_delta_html(o.tokens.delta),
        tasks(o.tokens.tasks)
    );
    if !c.fields.is_empty() {
        out.push_str("<div class=\"scroll\"><table class=\"fields\"><thead><tr><th>field (task means)</th><th>A</th><th>B</th><th>Δ</th></tr></thead><tbody>");
        for (name, m) in c.fields.iter().zip(&o.fields) {
            let _ = write!(
                out,
                "<tr><th>{}</th><td>{}</td><td>{}</td><td>{}</td></tr>",
                escape(name),
                // Numbers for people by the field (`total_tokens` whole, with separators).
                for_field(name, m.a),
                for_field(name, m.b),
                escape(&m.delta.map_or_else(
                    || "–".into(),
                    |d| format!(
                        "{}{}",
                        if d > 0.0 { "+" } else { "" },
                        crate::figures::for_column(name, d)
                    )
                ))
            );
        }
        out.push_str("</tbody></table></div>");
    }
    for w in &c.warnings {
        let _ = write!(out, "<p class=\"warning\">Warning: {}</p>", escape(w));
    }
    out.push_str("</section>\n");
}

fn agents(out: &mut String, c: &Comparison) {
    out.push_str(
        "<section id=\"agents\"><h2>Per agent</h2><div class=\"scroll\"><table id=\"agent-table\"><thead><tr>\
         <th>agent (A's)</th><th>tasks</th><th>mean A</th><th>mean B</th><th>Δ</th><th>95% CI</th>\
         <th>improved</th><th>regressed</th><th>unchanged</th><th>tokens A</th><th>tokens B</th><th>Δ tokens</th></tr></thead><tbody>",
    );
    for (i, (name, s)) in c.agents.iter().enumerate() {
        let shown = if name.is_empty() { "(no agent)" } else { name };
        let _ = write!(
            out,
            "<tr class=\"link\" data-agent=\"{i}\"><th><svg class=\"swatch\" width=\"10\" height=\"10\"><rect width=\"10\" height=\"10\" fill=\"{}\"/></svg> {}</th>\
             <td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            plots::colour(i),
            escape(shown),
            s.paired_tasks,
            n(s.mean_reward.a),
            n(s.mean_reward.b),
            delta_html(s.mean_reward.delta, true, &signed_reward(s.mean_reward.delta)),
            escape(&ci(&s.mean_reward)),
            s.improved,
            s.regressed,
            s.unchanged,
            tokens_html(s.tokens.a),
            tokens_html(s.tokens.b),
            tokens_delta_html(s.tokens.delta)
        );
    }
    out.push_str("</tbody></table></div></section>\n");
}

fn transitions(out: &mut String, c: &Comparison) {
    let t = &c.overall.transitions;
    let _ = write!(
        out,
        "<section id=\"transitions\"><h2>Reward groups, A → B</h2><p class=\"note\">A task is all-0, mixed or \
         all-1 by its rollouts (success: reward ≥ {}). Rows: A's group; columns: B's. Click a count to list those tasks.</p>\
         <div class=\"scroll\"><table id=\"transition-table\"><thead><tr><th>A \\ B</th>",
        escape(&c.options.pass_threshold.to_string())
    );
    for g in RewardGroup::ALL {
        let _ = write!(out, "<th>{}</th>", g.as_str());
    }
    out.push_str("</tr></thead><tbody>");
    for (i, from) in RewardGroup::ALL.iter().enumerate() {
        let _ = write!(out, "<tr><th>{}</th>", from.as_str());
        for (j, _) in RewardGroup::ALL.iter().enumerate() {
            // Up the order (all_failure → mixed → all_success) is better; no_reward is neither.
            let class = match (i, j) {
                _ if i == j || i == 3 || j == 3 => "same",
                _ if j > i => "better",
                _ => "worse",
            };
            let _ = write!(
                out,
                "<td class=\"cell {class}\" data-ga=\"{i}\" data-gb=\"{j}\">{}</td>",
                t[i][j]
            );
        }
        out.push_str("</tr>");
    }
    out.push_str("</tbody></table></div></section>\n");
}
