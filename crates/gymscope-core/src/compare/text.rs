//! `gymscope compare` on a terminal: the headline numbers, the transition table, per-agent lines
//! and the ten largest regressions and improvements.

use super::summary::{IntervalMethod, MeanDelta, BOOTSTRAP_MAX_TASKS};
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
