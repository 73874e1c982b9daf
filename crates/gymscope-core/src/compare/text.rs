//! `gymscope compare` on a terminal: the headline numbers, the transition table, per-agent lines
//! and the ten largest regressions and improvements; with the verdicts, the power and the flips of
//! every candidate ([`format_multi`]).

use super::multi::{Flips, MultiComparison};
use super::power::{Needed, Power};
use super::summary::{IntervalMethod, MeanDelta, BOOTSTRAP_MAX_TASKS};
use super::verdict::{PMethod, EXACT_MAX_TASKS, PERMUTATIONS, PERMUTATION_MAX_TASKS};
use super::{Comparison, PairedTask, BOOTSTRAP_RESAMPLES};
use crate::reward_group::RewardGroup;
use crate::table::short_number;
use std::fmt::Write;

/// How many regressions and improvements are listed.
pub const LISTED: usize = 10;

fn n(v: Option<f64>) -> String {
    v.map_or_else(|| "–".into(), short_number)
}

/// `1 task`, `3 tasks`.
pub fn tasks(n: usize) -> String {
    if n == 1 {
        "1 task".into()
    } else {
        format!("{n} tasks")
    }
}

/// A delta with its sign: `+0.25`, `-0.5`, `0`.
pub fn signed(v: Option<f64>) -> String {
    match v {
        Some(d) if d > 0.0 => format!("+{}", short_number(d)),
        Some(d) => short_number(d),
        None => "–".into(),
    }
}

/// `A 0.5 → B 0.75 (Δ +0.25, 95% CI +0.1 … +0.4)`.
pub fn mean_line(m: &MeanDelta) -> String {
    let mut s = format!("A {} → B {} (Δ {}", n(m.a), n(m.b), signed(m.delta));
    if let Some((lo, hi)) = m.ci95 {
        let _ = write!(s, ", 95% CI {} … {}", signed(Some(lo)), signed(Some(hi)));
    }
    s.push(')');
    s
}

/// How the mean reward's interval was made (`over`: "tasks", or their count), said beside it.
pub fn interval_method(m: &MeanDelta, seed: u64, over: &str) -> String {
    match m.ci95_method {
        IntervalMethod::Bootstrap => {
            format!("paired bootstrap over {over}, {BOOTSTRAP_RESAMPLES} resamples, seed {seed}")
        }
        IntervalMethod::Normal => format!(
            "normal approximation over {over}: more than {BOOTSTRAP_MAX_TASKS}, mean ± 1.96 standard errors"
        ),
    }
}

pub fn format(c: &Comparison) -> String {
    let mut out = String::new();
    let o = &c.overall;
    let _ = writeln!(out, "A: {} ({})", c.a_name, tasks(c.tasks_a));
    let _ = writeln!(out, "B: {} ({})", c.b_name, tasks(c.tasks_b));
    let _ = writeln!(
        out,
        "Paired {} by {} ({} only in A, {} only in B)",
        tasks(o.paired_tasks),
        c.options.pair_by.as_str(),
        c.only_a,
        c.only_b
    );
    for w in &c.warnings {
        let _ = writeln!(out, "Warning: {w}");
    }
    let _ = writeln!(
        out,
        "\nMean reward: {}\n  {}",
        mean_line(&o.mean_reward),
        interval_method(&o.mean_reward, c.options.seed, "tasks")
    );
    let _ = write!(
        out,
        "Tasks: {} improved, {} regressed, {} unchanged",
        o.improved, o.regressed, o.unchanged
    );
    if o.without_reward > 0 {
        let _ = write!(out, ", {} without a numeric reward", o.without_reward);
    }
    out.push('\n');
    let _ = writeln!(out, "Output tokens: {}", mean_line(&o.tokens));
    for (name, m) in c.fields.iter().zip(&o.fields) {
        let _ = writeln!(out, "{name}: {}", mean_line(m));
    }

    let _ = writeln!(
        out,
        "\nReward groups (rows: A, columns: B; success = reward ≥ {}):",
        c.options.pass_threshold
    );
    let _ = write!(out, "{:<12}", "A \\ B");
    for g in RewardGroup::ALL {
        let _ = write!(out, "{:>12}", g.as_str());
    }
    out.push('\n');
    for (i, g) in RewardGroup::ALL.iter().enumerate() {
        let _ = write!(out, "{:<12}", g.as_str());
        for count in o.transitions[i] {
            let _ = write!(out, "{count:>12}");
        }
        out.push('\n');
    }

    if c.agents.len() > 1 || c.agents.first().is_some_and(|(a, _)| !a.is_empty()) {
        out.push_str("\nPer agent (A's agent name):\n");
        for (name, s) in &c.agents {
            let name = if name.is_empty() { "(none)" } else { name };
            let _ = writeln!(
                out,
                "  {name}: {}, reward {}; {} improved, {} regressed, {} unchanged; tokens Δ {}",
                tasks(s.paired_tasks),
                mean_line(&s.mean_reward),
                s.improved,
                s.regressed,
                s.unchanged,
                signed(s.tokens.delta)
            );
        }
    }

    let regressions: Vec<&PairedTask> = c
        .tasks
        .iter()
        .filter(|t| t.delta.is_some_and(|d| d < 0.0))
        .take(LISTED)
        .collect();
    let improvements: Vec<&PairedTask> = c
        .tasks
        .iter()
        .rev()
        .filter(|t| t.delta.is_some_and(|d| d > 0.0))
        .take(LISTED)
        .collect();
    list(&mut out, "Largest regressions", &regressions);
    list(&mut out, "Largest improvements", &improvements);
    out
}

fn list(out: &mut String, title: &str, tasks: &[&PairedTask]) {
    if tasks.is_empty() {
        let _ = writeln!(out, "\n{title}: none");
        return;
    }
    let _ = writeln!(out, "\n{title}:");
    let _ = writeln!(
        out,
        "  {:>8} {:>8} {:>8} {:>8} {:>8}  {:<26} {:>10} {:>10}  agent",
        "task A", "task B", "A", "B", "Δ", "groups", "tokens A", "tokens B"
    );
    for t in tasks {
        let groups = format!("{} → {}", t.group_a.as_str(), t.group_b.as_str());
        let _ = writeln!(
            out,
            "  {:>8} {:>8} {:>8} {:>8} {:>8}  {:<26} {:>10} {:>10}  {}",
            t.task_a,
            t.task_b,
            n(t.mean_a),
            n(t.mean_b),
            signed(t.delta),
            groups,
            n(t.tokens_a),
            n(t.tokens_b),
            t.agent.as_deref().unwrap_or("")
        );
    }
}

/// A p-value as shown: four decimals, `< 0.0001` below.
pub fn p_value(p: Option<f64>) -> String {
    match p {
        Some(p) if p < 1e-4 => "< 0.0001".into(),
        Some(p) => short_number(p),
        None => "–".into(),
    }
}

/// How the p-values were computed, said once under the verdict table.
pub fn p_methods(m: &MultiComparison) -> String {
    let mut used: Vec<PMethod> = Vec::new();
    for c in &m.candidates {
        for row in &c.metrics {
            if let Some(p) = row.p {
                if !used.contains(&p.method) {
                    used.push(p.method);
                }
            }
        }
    }
    let seed = m
        .candidates
        .first()
        .map_or(0, |c| c.comparison.options.seed);
    let said: Vec<String> = used
        .iter()
        .map(|method| match method {
            PMethod::Exact => format!("every sign pattern (up to {EXACT_MAX_TASKS} tasks)"),
            PMethod::Permutation => format!("{PERMUTATIONS} seeded sign patterns (seed {seed})"),
            PMethod::Normal => {
                format!("the normal approximation (more than {PERMUTATION_MAX_TASKS} tasks)")
            }
        })
        .collect();
    format!(
        "p: two-sided paired sign-flip permutation test over tasks, {}; Holm-corrected across \
         the {} per metric; verdict at α {}",
        said.join(", "),
        candidates(m.candidates.len()),
        m.alpha
    )
}

fn candidates(n: usize) -> String {
    if n == 1 {
        "1 candidate".into()
    } else {
        format!("{n} candidates")
    }
}

/// `minimum detectable effect 0.12 (80% power, α 0.05; 24 tasks, 2 repeats; …)` and what
/// `--effect` needs.
pub fn power_line(p: &Power, alpha: f64) -> String {
    let mut s = match (p.mde, p.variance) {
        (Some(mde), Some(v)) => {
            let mut s = format!(
                "minimum detectable effect {} (80% power, α {alpha}; {}, {}; paired variance {}",
                short_number(mde),
                tasks(p.tasks),
                if p.repeats > 0.0 {
                    format!("{} repeats per task", short_number(p.repeats))
                } else {
                    "per-task means only".to_string()
                },
                short_number(v)
            );
            match (p.between, p.within) {
                (Some(b), Some(w)) => {
                    let _ = write!(
                        s,
                        " = between-task {} + within-task {}",
                        short_number(b),
                        short_number(w)
                    );
                }
                _ if p.repeats > 0.0 => {
                    s.push_str(", within-task part unknown: one rollout per task");
                }
                _ => s.push_str(", within-task part unknown"),
            }
            s.push(')');
            s
        }
        (None, Some(_)) => format!(
            "minimum detectable effect: none, the observed variance is zero ({}, every delta the same)",
            tasks(p.tasks)
        ),
        _ => format!(
            "minimum detectable effect: unknown, {} with a delta (two are needed)",
            tasks(p.tasks)
        ),
    };
    if let (Some(d), Some(needed)) = (p.effect, p.needed) {
        let _ = write!(s, "; to detect {}: ", short_number(d));
        match needed {
            Needed::Already => s.push_str("already detectable"),
            Needed::Repeats(r) => {
                let _ = write!(s, "{r} repeats per task at {}", tasks(p.tasks));
            }
            Needed::Tasks(n) => {
                let _ = write!(
                    s,
                    "{} at these repeats (more repeats alone cannot)",
                    tasks(n as usize)
                );
            }
            Needed::TooSmall => s.push_str(
                "too small to plan for (over a trillion tasks or repeats at this variance)",
            ),
        }
    }
    s
}

/// `12 identical, 3 flipped to pass, …`.
pub fn flips_line(f: &Flips) -> String {
    format!(
        "{} identical, {} flipped to pass, {} flipped to fail, {} without reward, {} only in \
         the baseline, {} only in the candidate",
        f.identical,
        f.flipped_to_pass,
        f.flipped_to_fail,
        f.without_reward,
        f.only_baseline,
        f.only_candidate
    )
}

/// The baseline against every candidate: each pair's two-run text (headed by its labels when
/// there are several), then the verdict table (a row per candidate and metric), the power and
/// the flips, a line per candidate.
pub fn format_multi(m: &MultiComparison) -> String {
    let mut out = String::new();
    let several = m.candidates.len() > 1;
    for c in &m.candidates {
        if several {
            let _ = writeln!(out, "== {} vs {} ==", m.baseline.label, c.run.label);
        }
        out.push_str(&format(&c.comparison));
        out.push('\n');
    }
    let _ = writeln!(
        out,
        "Baseline: {} ({}); {}",
        m.baseline.label,
        tasks(m.baseline.tasks),
        candidates(m.candidates.len())
    );
    let width = m
        .candidates
        .iter()
        .map(|c| c.run.label.chars().count())
        .max()
        .unwrap_or(0)
        .max(3);
    let metric = m
        .candidates
        .iter()
        .flat_map(|c| c.metrics.iter().map(|r| r.metric.chars().count()))
        .max()
        .unwrap_or(0)
        .max(6);
    let _ = writeln!(out, "\nVerdicts:");
    let _ = writeln!(
        out,
        "  {:<width$}  {:<metric$} {:>10} {:>10} {:>9}  {:<21} {:>8} {:>8}  verdict",
        "run", "metric", "baseline", "candidate", "Δ", "95% CI", "p", "p (Holm)"
    );
    for c in &m.candidates {
        for row in &c.metrics {
            let ci = row.mean.ci95.map_or_else(String::new, |(lo, hi)| {
                format!("{} … {}", signed(Some(lo)), signed(Some(hi)))
            });
            let _ = writeln!(
                out,
                "  {:<width$}  {:<metric$} {:>10} {:>10} {:>9}  {:<21} {:>8} {:>8}  {}",
                c.run.label,
                row.metric,
                n(row.mean.a),
                n(row.mean.b),
                signed(row.mean.delta),
                ci,
                p_value(row.p.map(|p| p.p)),
                p_value(row.p_holm),
                row.verdict.word(row.higher_is_better)
            );
        }
    }
    let _ = writeln!(out, "  {}", p_methods(m));
    let _ = writeln!(out, "\nPower (mean reward):");
    for c in &m.candidates {
        let _ = writeln!(out, "  {}: {}", c.run.label, power_line(&c.power, m.alpha));
    }
    let _ = writeln!(
        out,
        "\nFlips by task (pass/fail by reward group: all_failure < mixed < all_success):"
    );
    for c in &m.candidates {
        let _ = writeln!(out, "  {}: {}", c.run.label, flips_line(&c.flips));
    }
    out
}
