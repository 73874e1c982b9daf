//! The terminal report of [`HealthReport`]: per agent the rates with their thresholds, counts,
//! token use and outcome buckets, the cross-tab, the unhealthy tasks, the worst rollouts and
//! upstream's verdicts.

use super::summary::{agent_label, Dist, Level, Rate, TaskOutcomes};
use super::HealthReport;
use crate::figures::{percent, two_decimals};
use std::fmt::Write;

fn dist(d: &Dist) -> String {
    let n = |v: Option<f64>| v.map_or_else(|| "-".to_string(), |v| format!("{v:.1}"));
    format!(
        "mean {} p50 {} p90 {} max {}",
        n(d.mean),
        n(d.p50),
        n(d.p90),
        n(d.max)
    )
}

fn rate_line(out: &mut String, r: &Rate, of: &str) {
    let mark = match r.level {
        Level::Ok => "",
        Level::Warn => "  WARN",
        Level::Bad => "  BAD",
    };
    let _ = writeln!(
        out,
        "  {:<20} {:>7}  ({} of {} {})  warn > {} %, bad {} {} %{mark}",
        super::rate_name(r.rate),
        percent(r.value),
        r.count,
        r.of,
        super::unit_name(of),
        r.warn * 100.0,
        if r.rate == "usage_missing" { "=" } else { ">" },
        r.bad * 100.0,
    );
}

fn outcomes_line(o: &TaskOutcomes) -> String {
    let opt = |v: Option<u64>| v.map_or_else(|| "?".to_string(), |v| v.to_string());
    format!(
        "{} tasks: {} never-pass, {} sometimes-pass, {} always-pass, {} without reward, {} missing, {} partial; pass@1 {}, pass@k {}, consistency {}, coverage {}, retry value {}",
        o.tasks,
        o.never_pass,
        o.sometimes_pass,
        o.always_pass,
        o.no_reward,
        opt(o.missing),
        opt(o.partial),
        two_decimals(o.pass_at_1),
        two_decimals(o.pass_at_k),
        two_decimals(o.consistency),
        two_decimals(o.coverage),
        two_decimals(o.retry_value)
    )
}

/// The whole text report.
pub fn text(h: &HealthReport) -> String {
    let mut out = String::new();
    let r = &h.rollouts;
    let _ = writeln!(
        out,
        "Rollout health: {} ({} rollouts, {}; a rollout passes at reward >= {})",
        h.rollouts_file,
        r.total,
        crate::table::plural(h.agents.len(), "agent"),
        h.pass_threshold
    );
    let mut line = format!(
        "Rollouts: {} read, {} duplicate keys",
        r.total, r.duplicates
    );
    match (&r.failures, &r.failures_by_class) {
        (Some(n), Some(classes)) => {
            let by: Vec<String> = classes.iter().map(|(c, n)| format!("{c} {n}")).collect();
            let _ = write!(line, ", {n} failures ({})", by.join(", "));
        }
        _ => line.push_str(", no failures file"),
    }
    match (r.expected, r.missing) {
        (Some(e), Some(m)) => {
            let _ = write!(line, ", {e} expected, {m} missing (in neither file)");
        }
        _ => line.push_str(", missing unknown (no --inputs)"),
    }
    let _ = writeln!(out, "{line}");
    for rate in &h.rates {
        rate_line(&mut out, rate, "attempts");
    }
    for a in &h.agents {
        let _ = writeln!(
            out,
            "\nAgent {}: {} rollouts, {} tool calls",
            agent_label(a.agent.as_deref()),
            a.rollouts,
            a.tool_calls
        );
        if let Some(mode) = mode_line(a) {
            let _ = writeln!(out, "  {mode}");
        }
        for rate in &a.rates {
            let of = super::THRESHOLDS
                .iter()
                .find(|t| t.rate == rate.rate)
                .map_or("", |t| t.of);
            rate_line(&mut out, rate, of);
        }
        if !a.truncated_by_reason.is_empty() {
            let by: Vec<String> = a
                .truncated_by_reason
                .iter()
                .map(|(k, v)| format!("{k} {v}"))
                .collect();
            let _ = writeln!(out, "  truncated by reason: {}", by.join(", "));
        }
        let _ = writeln!(
            out,
            "  empty output {}, rollouts with tool errors {}, dangling calls {} (in {} rollouts)",
            a.empty_output,
            a.rollouts_with_tool_errors,
            a.dangling_calls,
            a.rollouts_with_dangling_calls
        );
        let _ = writeln!(out, "  turns: {}", dist(&a.turns));
        let _ = writeln!(
            out,
            "  tool calls per rollout: {}",
            dist(&a.tool_calls_per_rollout)
        );
        let t = &a.tokens;
        let opt = |v: Option<f64>| v.map_or_else(|| "unknown".to_string(), |v| format!("{v:.0}"));
        let _ = writeln!(
            out,
            "  tokens: input {:.0}, output {:.0} ({}), reasoning {} ({} of output), cached {}; usage missing on {} of {}",
            t.input,
            t.output,
            dist(&t.output_per_rollout),
            opt(t.reasoning),
            percent(t.reasoning_share),
            opt(t.cached),
            t.missing,
            a.rollouts
        );
        let _ = writeln!(out, "  {}", outcomes_line(&a.outcomes));
        let flagged: Vec<String> = a
            .cross_tab
            .iter()
            .filter(|(_, b)| b.never_pass + b.sometimes_pass + b.always_pass + b.no_reward > 0)
            .map(|(f, b)| {
                format!(
                    "{f}: never {} / sometimes {} / always {} / no reward {}",
                    b.never_pass, b.sometimes_pass, b.always_pass, b.no_reward
                )
            })
            .collect();
        if !flagged.is_empty() {
            let _ = writeln!(out, "  flagged rollouts by task outcome:");
            for f in flagged {
                let _ = writeln!(out, "    {f}");
            }
        }
    }
    let _ = writeln!(out, "\nAll tasks: {}", outcomes_line(&h.tasks));
    let _ = writeln!(
        out,
        "Consistently unhealthy tasks (every repeat flagged, at least 2): {}",
        h.consistently_unhealthy_tasks
    );
    for t in &h.consistently_unhealthy {
        let flags: Vec<String> = t.flags.iter().map(|(f, n)| format!("{f} {n}")).collect();
        let _ = writeln!(
            out,
            "  task {} ({}): {} repeats, {}; {}",
            t.task,
            agent_label(t.agent.as_deref()),
            t.repeats,
            t.outcome,
            flags.join(", ")
        );
    }
    if !h.worst.is_empty() {
        let _ = writeln!(out, "Worst rollouts:");
        for w in &h.worst {
            let _ = writeln!(
                out,
                "  task {} rollout {} (line {}, {}, reward {}): {}",
                w.task,
                w.rollout,
                w.line,
                agent_label(w.agent.as_deref()),
                w.reward
                    .map_or_else(|| "none".to_string(), |r| r.to_string()),
                w.reason
            );
        }
    }
    if let Some(t) = &h.trajectory {
        let gaps: Vec<String> = t.gaps.iter().map(|(k, v)| format!("{k} {v}")).collect();
        let tools: Vec<String> = t
            .tool_calls_by_status
            .iter()
            .map(|(k, v)| format!("{k} {v}"))
            .collect();
        let _ = writeln!(
            out,
            "ng_trajectory: {} rows ({} unreadable), {} turns; gaps: {}; tool calls: {}",
            t.rows,
            t.unreadable,
            t.turns,
            if gaps.is_empty() {
                "none".to_string()
            } else {
                gaps.join(", ")
            },
            if tools.is_empty() {
                "none".to_string()
            } else {
                tools.join(", ")
            }
        );
    }
    if let Some(u) = &h.upstream {
        upstream(&mut out, u);
    }
    let bad = h.findings(Level::Bad);
    let warn: Vec<String> = h
        .findings(Level::Warn)
        .into_iter()
        .filter(|w| !bad.contains(w))
        .collect();
    let _ = writeln!(out);
    for b in &bad {
        let _ = writeln!(out, "BAD: {b}");
    }
    for w in &warn {
        let _ = writeln!(out, "warn: {w}");
    }
    if bad.is_empty() && warn.is_empty() {
        let _ = writeln!(out, "No rate above its warning threshold.");
    }
    out
}

fn upstream(out: &mut String, u: &super::upstream::Upstream) {
    let pairs = |m: &std::collections::BTreeMap<String, u64>| -> String {
        let v: Vec<String> = m.iter().map(|(k, v)| format!("{k} {v}")).collect();
        if v.is_empty() {
            "none".to_string()
        } else {
            v.join(", ")
        }
    };
    if let Some(q) = &u.quality_summary {
        let issues: std::collections::BTreeMap<String, u64> = q
            .issues
            .iter()
            .filter(|(_, &n)| n > 0)
            .map(|(k, &v)| (k.clone(), v))
            .collect();
        let _ = writeln!(
            out,
            "Upstream health ({}): verdicts {}; findings {}; task flags {}{}",
            q.file,
            pairs(&q.verdicts),
            pairs(&issues),
            pairs(&q.task_flags),
            if q.ignored_checks.is_empty() {
                String::new()
            } else {
                format!("; ignored {}", q.ignored_checks.join(", "))
            }
        );
    }
    if let Some(v) = &u.rollout_verdicts {
        let _ = writeln!(
            out,
            "Upstream verdicts ({}): {} rollouts, {}; findings by check {}; unobserved by check {}",
            v.file,
            v.rollouts,
            pairs(&v.verdicts),
            pairs(&v.findings),
            pairs(&v.unobserved)
        );
        for r in &v.unhealthy {
            let _ = writeln!(
                out,
                "  unhealthy: task {} rollout {}{}: {}",
                r.task,
                r.rollout,
                r.rollout_id
                    .as_ref()
                    .map_or_else(String::new, |id| format!(" ({id})")),
                r.checks.join(", ")
            );
        }
    }
}

/// How an agent's rollouts were judged, when any was single-step: the mode, why, and what
/// `empty_answer` then counts.
pub fn mode_line(a: &super::AgentHealth) -> Option<String> {
    if a.single_step_rollouts == 0 {
        return None;
    }
    let by: Vec<&str> = a.single_step_by.iter().map(|r| r.describe()).collect();
    let share = if a.mode == "mixed" {
        format!(" for {} of {} rollouts", a.single_step_rollouts, a.rollouts)
    } else {
        String::new()
    };
    Some(format!(
        "mode: single-step{share} ({}): each rollout is one action, a tool call is its answer; empty_answer counts rollouts with no action",
        by.join(", ")
    ))
}

/// One line of behavioural flags over every agent, printed after upstream's two health lines
/// at the end of `gymscope collect` / `health-check` (docs/collect.md "Observability": `Behaviour: …`).
pub fn behaviour_line(h: &HealthReport) -> String {
    let sum = |f: fn(&super::AgentHealth) -> u64| h.agents.iter().map(f).sum::<u64>();
    let rollouts = sum(|a| a.rollouts);
    let share = |n: u64, of: u64| percent((of > 0).then(|| n as f64 / of as f64));
    let single_step = sum(|a| a.single_step_rollouts);
    let mode = match single_step {
        0 => String::new(),
        n if n == rollouts => "single-step run: ".to_string(),
        n => format!("{n} single-step rollouts: "),
    };
    let empty = if single_step > 0 && single_step == rollouts {
        "without an action"
    } else {
        "empty answers"
    };
    format!(
        "Behaviour: {mode}{} truncated, {} {empty}, {} ended on a tool, {} loops, {} tool-error calls, {} malformed tool arguments ({} rollouts; `gymscope health` for details)",
        share(sum(|a| a.truncated), rollouts),
        share(sum(|a| a.empty_answer), rollouts),
        share(sum(|a| a.ended_on_tool), rollouts),
        sum(|a| a.loops),
        share(sum(|a| a.tool_error_calls), sum(|a| a.tool_calls)),
        share(sum(|a| a.malformed_arguments), sum(|a| a.tool_calls)),
        rollouts
    )
}
