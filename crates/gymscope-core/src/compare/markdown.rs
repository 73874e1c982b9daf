//! `gymscope compare --format md`: what people paste into a pull request, as GitHub renders
//! Markdown: the summary, the verdict table (a row per candidate and metric, the run's label in
//! every row), the power line, the flips and the largest ones.

use super::multi::{largest_flips, MultiComparison};
use super::text::{flips_line, p_methods, p_value, power_line, signed, tasks};
pub use crate::markdown::escape;
use crate::table::short_number;
use std::fmt::Write;

/// Flipped tasks listed per candidate.
pub const FLIPS_LISTED: usize = 10;

fn n(v: Option<f64>) -> String {
    v.map_or_else(|| "–".into(), short_number)
}

pub fn format(m: &MultiComparison) -> String {
    let mut out = String::new();
    let base = escape(&m.baseline.label);
    let _ = writeln!(out, "## Comparison against {base}\n");
    let by = m
        .candidates
        .first()
        .map_or("content", |c| c.comparison.options.pair_by.as_str());
    let _ = writeln!(
        out,
        "Baseline **{base}** ({}); tasks paired by {by}.\n",
        tasks(m.baseline.tasks)
    );
    for c in &m.candidates {
        let cmp = &c.comparison;
        let _ = writeln!(
            out,
            "- **{}** ({}): {} paired, {} only in the baseline, {} only in the candidate",
            escape(&c.run.label),
            tasks(c.run.tasks),
            tasks(cmp.overall.paired_tasks),
            cmp.only_a,
            cmp.only_b
        );
        for w in &cmp.warnings {
            let _ = writeln!(out, "  - warning: {}", escape(w));
        }
    }
    out.push_str(
        "\n| run | metric | baseline | candidate | Δ | 95% CI | p | p (Holm) | verdict |\n",
    );
    out.push_str("|---|---|---:|---:|---:|---|---:|---:|---|\n");
    for c in &m.candidates {
        for row in &c.metrics {
            let ci = row.mean.ci95.map_or_else(String::new, |(lo, hi)| {
                format!("{} … {}", signed(Some(lo)), signed(Some(hi)))
            });
            let word = row.verdict.word(row.higher_is_better);
            let verdict = if row.verdict == super::verdict::Verdict::NoDifference {
                word.to_string()
            } else {
                format!("**{word}**")
            };
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {} | {ci} | {} | {} | {verdict} |",
                escape(&c.run.label),
                escape(&row.metric),
                n(row.mean.a),
                n(row.mean.b),
                signed(row.mean.delta),
                p_value(row.p.map(|p| p.p)),
                p_value(row.p_holm),
            );
        }
    }
    let _ = writeln!(out, "\n{}.\n", escape(&p_methods(m)));
    out.push_str("**Power** (mean reward):\n\n");
    for c in &m.candidates {
        let _ = writeln!(
            out,
            "- {}: {}",
            escape(&c.run.label),
            escape(&power_line(&c.power, m.alpha))
        );
    }
    out.push_str(
        "\n**Flips by task** (pass/fail by reward group: all\\_failure < mixed < all\\_success):\n\n",
    );
    for c in &m.candidates {
        let _ = writeln!(out, "- {}: {}", escape(&c.run.label), flips_line(&c.flips));
    }
    let flipped: Vec<_> = m
        .candidates
        .iter()
        .flat_map(|c| {
            largest_flips(&c.comparison, FLIPS_LISTED)
                .into_iter()
                .map(move |t| (c, t))
        })
        .collect();
    if !flipped.is_empty() {
        let _ = writeln!(
            out,
            "\n### Largest flips\n\n| run | task (baseline) | task (candidate) | baseline | candidate | Δ | groups |\n|---|---:|---:|---:|---:|---:|---|"
        );
        for (c, t) in flipped {
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {} | {} | {} → {} |",
                escape(&c.run.label),
                t.task_a,
                t.task_b,
                n(t.mean_a),
                n(t.mean_b),
                signed(t.delta),
                escape(t.group_a.as_str()),
                escape(t.group_b.as_str())
            );
        }
    }
    out
}
