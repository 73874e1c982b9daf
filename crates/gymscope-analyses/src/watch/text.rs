//! A snapshot as text for a terminal 80 columns wide: totals and ETA, one line per agent,
//! failures by class, the health rates, one line per shard. Plain text; the CLI redraws it in
//! place on a terminal and makes untrusted names safe there.

use super::{Snapshot, Totals};
use crate::figures::{count, percent, reward, tokens};
use crate::health::Level;

/// The width every line fits in.
pub const WIDTH: usize = 80;

/// The snapshot as lines of at most [`WIDTH`] characters.
pub fn text(s: &Snapshot) -> String {
    let mut out = String::new();
    totals(&mut out, &s.totals, s.complete);
    out.push('\n');
    out.push_str(&format!(
        "{:<30} {:>8} {:>7} {:>13} {:>7} {:>8}\n",
        "agent", "rollouts", "reward", "95 % CI", "pass@1", "out tok"
    ));
    if s.agents.is_empty() {
        out.push_str("  (no rollout row yet)\n");
    }
    for a in &s.agents {
        let interval = a.interval.map_or("–".to_string(), |i| {
            format!("{}–{}", reward(Some(i.low)), reward(Some(i.high)))
        });
        out.push_str(&format!(
            "{:<30} {:>8} {:>7} {:>13} {:>7} {:>8}\n",
            fit_middle(&a.agent, 30),
            count(a.rollouts as usize),
            reward(a.mean_reward),
            fit(&interval, 13),
            percent(a.pass_at_1),
            tokens(a.mean_output_tokens)
        ));
    }
    if !s.failures.is_empty() {
        let items: Vec<String> = s
            .failures
            .iter()
            .map(|(class, n)| format!("{} {}", fit(class, 40), count(*n as usize)))
            .collect();
        wrapped(&mut out, "failures: ", &items);
    }
    let rates: Vec<String> = s
        .health
        .iter()
        .filter(|h| h.rate.value.is_some())
        .map(|h| {
            let level = match h.rate.level {
                Level::Ok => "",
                Level::Warn => " (warn)",
                Level::Bad => " (BAD)",
            };
            format!("{} {}{level}", h.name, percent(h.rate.value))
        })
        .collect();
    if !rates.is_empty() {
        wrapped(&mut out, "health: ", &rates);
    }
    out.push('\n');
    out.push_str(&format!(
        "{:<32} {:>15} {:>8} {:>12}\n",
        "shard", "done / expected", "rows/min", "last row"
    ));
    for sh in &s.shards {
        let state = if sh.complete {
            "  done"
        } else if sh.stalled {
            "  STALLED"
        } else {
            ""
        };
        let last = sh
            .seconds_since_last_row
            .map_or("no row yet".to_string(), |t| format!("{} ago", minutes(t)));
        out.push_str(&format!(
            "{:<32} {:>15} {:>8} {:>12}{state}\n",
            fit_left(crate::names::base_name(&sh.rollouts), 32),
            format!(
                "{} / {}",
                count((sh.done + sh.failed) as usize),
                count(sh.expected as usize)
            ),
            sh.rows_per_minute
                .map_or("–".to_string(), |r| format!("{r:.1}")),
            last
        ));
    }
    for note in &s.notes {
        wrapped(&mut out, "note: ", std::slice::from_ref(note));
    }
    if s.unreadable_rows > 0 {
        out.push_str(&format!(
            "{} unreadable row(s); the first:\n",
            count(s.unreadable_rows as usize)
        ));
        if let Some(b) = s.unreadable.first() {
            let line = format!(
                "{} line {} column {}: {}",
                b.file, b.line, b.column, b.message
            );
            wrapped(&mut out, "  ", std::slice::from_ref(&line));
        }
    }
    out
}

fn totals(out: &mut String, t: &Totals, complete: bool) {
    let finished = t.done + t.failed;
    let share = (t.expected > 0).then(|| finished as f64 / t.expected as f64);
    out.push_str(&format!(
        "{} of {} rollouts ({}) · {} failed · {} shard{}",
        count(finished as usize),
        count(t.expected as usize),
        percent(share),
        count(t.failed as usize),
        count(t.shards),
        if t.shards == 1 { "" } else { "s" }
    ));
    out.push('\n');
    if complete {
        out.push_str("complete\n");
        return;
    }
    let rate = t
        .rows_per_minute
        .map_or("rate: measuring".to_string(), |r| {
            format!("{r:.1} rows/min")
        });
    let eta = match t.eta_seconds {
        Some(s) => format!("ETA {}", minutes(s)),
        None if t.stalled_shards > 0 => "ETA unknown: a shard is stalled".to_string(),
        None if t.rows_per_minute.is_some() => "ETA unknown: a shard has no new row".to_string(),
        None => "ETA after a few refreshes".to_string(),
    };
    let stalled = if t.stalled_shards > 0 {
        format!(" · {} stalled", count(t.stalled_shards))
    } else {
        String::new()
    };
    out.push_str(&format!("{rate} · {eta}{stalled}\n"));
}

/// Seconds as people read a wait: `45 s`, `12 min`, `3.5 h`.
fn minutes(s: f64) -> String {
    if s < 90.0 {
        format!("{s:.0} s")
    } else if s < 90.0 * 60.0 {
        format!("{:.0} min", s / 60.0)
    } else {
        format!("{:.1} h", s / 3600.0)
    }
}

/// `items` after `lead`, joined by ` · `, wrapped at [`WIDTH`] under the lead.
fn wrapped(out: &mut String, lead: &str, items: &[String]) {
    let indent = " ".repeat(lead.chars().count());
    let mut line = lead.to_string();
    let mut first = true;
    for item in items {
        let item = fit(item, WIDTH - indent.len());
        let sep = if first { "" } else { " · " };
        if !first && line.chars().count() + sep.len() + item.chars().count() > WIDTH {
            out.push_str(&line);
            out.push('\n');
            line = format!("{indent}{item}");
        } else {
            line.push_str(sep);
            line.push_str(&item);
        }
        first = false;
    }
    out.push_str(&line);
    out.push('\n');
}

/// `s` cut to `n` characters with `…` at the end.
fn fit(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        return s.to_string();
    }
    let mut t: String = s.chars().take(n - 1).collect();
    t.push('…');
    t
}

/// `s` cut to `n` characters with `…` in the middle (agents' names differ at either end).
fn fit_middle(s: &str, n: usize) -> String {
    let len = s.chars().count();
    if len <= n {
        return s.to_string();
    }
    let head = (n - 1) / 2;
    let tail = n - 1 - head;
    let mut t: String = s.chars().take(head).collect();
    t.push('…');
    t.extend(s.chars().skip(len - tail));
    t
}

/// `s` cut to `n` characters with `…` at the start (a shard's name differs at its end).
fn fit_left(s: &str, n: usize) -> String {
    let len = s.chars().count();
    if len <= n {
        return s.to_string();
    }
    let mut t = String::from("…");
    t.extend(s.chars().skip(len - (n - 1)));
    t
}
