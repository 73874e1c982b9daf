//! The report's verdict section (README, "Comparing runs", "Verdict"): a row per candidate and
//! metric, each candidate's power line and flips, and the flipped tasks of the candidate the
//! page shows, each a link to its rollouts (`#task=N`, the baseline's index). Labels only, never
//! a local path: the report is made to be shared.

use super::super::multi::{flip_of, MultiComparison};
use super::super::text::{flips_line, p_methods, power_line};
use super::super::verdict::Verdict;
use super::delta_html;
use crate::html::escape;
use std::fmt::Write;

/// Flipped tasks of the shown candidate listed as links (largest |Δ| first).
const LINKED_FLIPS: usize = 50;

/// A metric's mean as people read it (`figures::for_column`), `–` without one.
fn for_metric(metric: &str, v: Option<f64>) -> String {
    v.map_or_else(|| "–".into(), |v| crate::figures::for_column(metric, v))
}

/// A change of a metric as people read it, signed (`+0.25`, `-76` tokens).
fn signed_for_metric(metric: &str, v: Option<f64>) -> String {
    match v {
        Some(d) if d > 0.0 => format!("+{}", for_metric(metric, Some(d))),
        d => for_metric(metric, d),
    }
}

/// A number as people read it with its exact value in the tooltip.
fn titled(shown: &str, exact: Option<f64>) -> String {
    let exact = exact.map_or_else(String::new, |v| v.to_string());
    format!(
        "<span title=\"{}\">{}</span>",
        escape(&exact),
        escape(shown)
    )
}

pub(super) fn section(out: &mut String, m: &MultiComparison) {
    let _ = write!(
        out,
        "<section id=\"verdicts\"><h2>Is the difference real?</h2><p class=\"note\">Baseline {}; {}.</p>\
         <div class=\"scroll\"><table id=\"verdict-table\"><thead><tr><th>run</th><th>metric</th>\
         <th>baseline</th><th>candidate</th><th>Δ</th><th>95% CI</th><th>p</th><th>p (Holm)</th>\
         <th>verdict</th></tr></thead><tbody>",
        escape(&m.baseline.label),
        escape(&p_methods(m))
    );
    for c in &m.candidates {
        for row in &c.metrics {
            let class = match (row.verdict, row.higher_is_better) {
                (Verdict::Up, true) => "better",
                (Verdict::Down, true) => "worse",
                _ => "same",
            };
            let _ = write!(
                out,
                "<tr class=\"{class}\"><th>{}</th><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>\
                 <td>{}</td><td>{}</td><td class=\"verdict\">{}</td></tr>",
                escape(&c.run.label),
                escape(&row.metric),
                // Numbers for people, by the metric (`total_tokens` whole, with separators;
                // rewards at 4 significant digits, p at 2), exact in the tooltips.
                titled(&for_metric(&row.metric, row.mean.a), row.mean.a),
                titled(&for_metric(&row.metric, row.mean.b), row.mean.b),
                // Coloured only with a verdict: the colour follows it.
                delta_html(
                    row.mean.delta,
                    row.higher_is_better && row.verdict != Verdict::NoDifference,
                    &signed_for_metric(&row.metric, row.mean.delta),
                ),
                escape(&row.mean.ci95.map_or_else(String::new, |(lo, hi)| {
                    format!(
                        "{} … {}",
                        signed_for_metric(&row.metric, Some(lo)),
                        signed_for_metric(&row.metric, Some(hi))
                    )
                })),
                titled(&crate::figures::p_value(row.p.map(|p| p.p)), row.p.map(|p| p.p)),
                titled(&crate::figures::p_value(row.p_holm), row.p_holm),
                escape(row.verdict.word(row.higher_is_better))
            );
        }
    }
    out.push_str("</tbody></table></div><h3>Power (mean reward)</h3><ul class=\"power\">");
    for c in &m.candidates {
        let _ = write!(
            out,
            "<li><b>{}</b>: {}</li>",
            escape(&c.run.label),
            escape(&power_line(&c.power, m.alpha))
        );
    }
    out.push_str("</ul><h3>Flips by task</h3><p class=\"note\">Pass/fail by reward group: all_failure &lt; mixed &lt; all_success.</p><ul class=\"flips\">");
    for c in &m.candidates {
        let _ = write!(
            out,
            "<li><b>{}</b>: {}</li>",
            escape(&c.run.label),
            escape(&flips_line(&c.flips))
        );
    }
    out.push_str("</ul>");
    if let Some(first) = m.candidates.first() {
        let flipped = super::super::multi::largest_flips(&first.comparison, LINKED_FLIPS);
        if !flipped.is_empty() {
            let _ = write!(
                out,
                "<p class=\"note\">Flipped tasks of {} (a click shows both runs' rollouts):</p><p class=\"flip-links\">",
                escape(&first.run.label)
            );
            for t in flipped {
                let up = flip_of(t) == Some(1);
                let _ = write!(
                    out,
                    "<a class=\"flip {}\" href=\"#task={}\">{} {} </a>",
                    if up { "better" } else { "worse" },
                    t.task_a,
                    if up { "↑" } else { "↓" },
                    t.task_a
                );
            }
            out.push_str("</p>");
        }
    }
    out.push_str("</section>\n");
}
