//! The data the page's script reads, as compact columnar JSON: one array per table column and per
//! rollout field instead of one object per row (100,000 rollouts and 25,000 tasks stay a few MB).
//!
//! Numbers are written at the precision shown: table cells as the table's text (`table::Cell`)
//! so the script's cells read exactly as the static table's, plot values at 6 significant digits.
//! The JSON is made safe to sit inside `<script type="application/json">`: `<`, `>`, `&`, U+2028
//! and U+2029 only occur inside strings and are written as `\u003c` etc., so nothing in the data
//! can close the element or be read as markup.

use super::ReportInput;
use crate::table::Table;
use serde_json::Value;
use std::fmt::Write;

pub(super) fn data_json(r: &ReportInput) -> String {
    let mut out = String::with_capacity(1 << 20);
    out.push_str("{\"title\":");
    string(&mut out, &r.meta.title);
    out.push_str(",\"tasks\":");
    table(&mut out, &r.tasks);
    out.push_str(",\"points\":{\"task_runs\":[");
    // Rollouts come grouped by task: (task, count) runs instead of a task per rollout.
    let p = &r.points;
    for (k, run) in task_runs(p).enumerate() {
        if k > 0 {
            out.push(',');
        }
        let _ = write!(out, "{},{}", p.task[run.start], run.len());
    }
    out.push_str("],\"rollout\":");
    ints(&mut out, &p.rollout);
    out.push_str(",\"reward\":");
    numbers(&mut out, &p.reward);
    out.push_str(",\"fields\":[");
    for (i, f) in p.fields.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        string(&mut out, f);
    }
    out.push_str("],\"values\":[");
    for (i, column) in p.values.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        numbers(&mut out, column);
    }
    // Each field's scatter axes, from the plot model (the script draws what the app draws).
    out.push_str("],\"scales\":[");
    for f in 0..p.fields.len() {
        if f > 0 {
            out.push(',');
        }
        let (x, y) = p.scatter_scales(f);
        out.push('[');
        scale(&mut out, &x);
        out.push(',');
        scale(&mut out, &y);
        out.push(']');
    }
    out.push_str("],\"x\":");
    match crate::plot::default_x(&p.fields) {
        Some(x) => {
            let _ = write!(out, "{x}");
        }
        None => out.push_str("null"),
    }
    // Agents: each rollout's (null unknown), their names and colours, and per field the binned
    // mean reward per agent (the plot model's overlay: the script only draws it).
    let agents: Vec<String> = r
        .agents
        .as_ref()
        .map(|t| t.rows.iter().map(|row| row.key.clone()).collect())
        .unwrap_or_default();
    if p.agent_values().is_some() {
        out.push_str(",\"agent\":[");
        for (i, a) in p.agent.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            match a {
                Some(a) => {
                    let _ = write!(out, "{a}");
                }
                None => out.push_str("null"),
            }
        }
        out.push_str("],\"agents\":[");
        for (i, name) in agents.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            string(&mut out, name);
        }
        out.push_str("],\"colours\":[");
        for i in 0..agents.len() {
            if i > 0 {
                out.push(',');
            }
            let _ = write!(
                out,
                "\"{}\"",
                crate::plot::hex(crate::plot::agent_colour(i))
            );
        }
        out.push(']');
    }
    overlay(&mut out, "overlay", p, agents.len());
    // The query's matches' own curves, drawn while the filter box holds that query.
    if r.query.is_some() {
        overlay(
            &mut out,
            "overlay_query",
            &r.query_parts.points,
            agents.len(),
        );
    }
    out.push_str("},\"detail\":");
    let mut detail: Vec<i64> = r.conversations.iter().map(|(k, _)| k.task).collect();
    detail.extend(r.prompts.iter().map(|(t, _)| *t));
    detail.sort_unstable();
    detail.dedup();
    ints(&mut out, &detail);
    query_data(&mut out, r);
    out.push('}');
    out
}

/// Each task's points: the ranges of equal `task` (points are grouped by task).
fn task_runs(p: &super::Points) -> impl Iterator<Item = std::ops::Range<usize>> + '_ {
    let mut i = 0;
    std::iter::from_fn(move || {
        let start = i;
        let t = *p.task.get(start)?;
        i += p.task[start..].iter().take_while(|&&x| x == t).count();
        Some(start..i)
    })
}

/// What the filter box's query language needs beyond the columns: each task's aggregates by
/// the core's rules (one entry per task run of `points.task_runs`), the health flags' names
/// (for its messages) and the query the report was made with, with its matches.
fn query_data(out: &mut String, r: &ReportInput) {
    let threshold = crate::reward_group::DEFAULT_THRESHOLD;
    let (mut means, mut passes, mut groups) = (Vec::new(), Vec::new(), Vec::new());
    for run in task_runs(&r.points) {
        let mut stats = crate::query::TaskStats::default();
        for reward in &r.points.reward[run] {
            stats.add(*reward, threshold);
        }
        means.push(stats.mean());
        passes.push(stats.pass_rate());
        groups.push(stats.outcomes.group().as_str());
    }
    out.push_str(",\"task_stats\":{\"mean_reward\":");
    exact(out, &means);
    out.push_str(",\"pass_rate\":");
    exact(out, &passes);
    out.push_str(",\"group\":[");
    for (k, g) in groups.iter().enumerate() {
        if k > 0 {
            out.push(',');
        }
        string(out, g);
    }
    out.push_str("]},\"health_flags\":[");
    for (k, f) in crate::health::Flag::ALL.iter().enumerate() {
        if k > 0 {
            out.push(',');
        }
        string(out, f.as_str());
    }
    out.push(']');
    if let Some(q) = &r.query {
        out.push_str(",\"query\":{\"source\":");
        string(out, &q.source);
        out.push_str(",\"keys\":[");
        for (k, (task, rollout)) in q.keys.iter().enumerate() {
            if k > 0 {
                out.push(',');
            }
            let _ = write!(out, "{task},{rollout}");
        }
        out.push_str("]}");
    }
}

/// `{"lo":…,"hi":…,"ticks":[…]}`.
fn scale(out: &mut String, s: &crate::plot::Scale) {
    out.push_str("{\"lo\":");
    number(out, s.lo);
    out.push_str(",\"hi\":");
    number(out, s.hi);
    out.push_str(",\"ticks\":[");
    for (i, &t) in s.ticks.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        number(out, t);
    }
    out.push_str("]}");
}

/// `{"headers":[…],"key":[…],"cols":[[…],…]}`, column-major.
fn table(out: &mut String, t: &Table) {
    out.push_str("{\"headers\":[");
    for (i, h) in t.headers.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        string(out, h);
    }
    out.push_str("],\"key\":[");
    for (i, row) in t.rows.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        // Task keys are integers; anything else (agent names) stays a string.
        match row.key.parse::<i64>() {
            Ok(k) if k.to_string() == row.key => {
                let _ = write!(out, "{k}");
            }
            _ => string(out, &row.key),
        }
    }
    out.push_str("],\"cols\":[");
    for c in 0..t.headers.len() {
        if c > 0 {
            out.push(',');
        }
        out.push('[');
        for (i, row) in t.rows.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            cell(
                out,
                row.cells
                    .get(c)
                    .map_or_else(|| "–".into(), crate::table::Cell::text)
                    .as_str(),
            );
        }
        out.push(']');
    }
    out.push_str("]}");
}

/// A cell's shown text as a number when it is one (`0.6667`, `1.700e-17`), `null` for no value,
/// else the text itself.
fn cell(out: &mut String, text: &str) {
    if text == "–" {
        out.push_str("null");
        return;
    }
    match text.parse::<f64>() {
        Ok(v)
            if v.is_finite()
                && text
                    .bytes()
                    .all(|b| b.is_ascii_digit() || b"-.e".contains(&b)) =>
        {
            number(out, v);
        }
        _ => string(out, text),
    }
}

fn ints(out: &mut String, values: &[i64]) {
    out.push('[');
    for (i, v) in values.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        let _ = write!(out, "{v}");
    }
    out.push(']');
}

/// Plot values at 6 significant digits (integers, such as token counts, exactly).
fn numbers(out: &mut String, values: &[Option<f64>]) {
    out.push('[');
    for (i, v) in values.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        match v {
            Some(v) if v.is_finite() => number(out, crate::figures::round6(*v)),
            _ => out.push_str("null"),
        }
    }
    out.push(']');
}

/// Values exactly, in their shortest round-trip form.
fn exact(out: &mut String, values: &[Option<f64>]) {
    out.push('[');
    for (i, v) in values.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        match v {
            Some(v) if v.is_finite() => number(out, *v),
            _ => out.push_str("null"),
        }
    }
    out.push(']');
}

/// Shortest form: integers without `.0`, others in ryu's shortest round-trip digits.
fn number(out: &mut String, v: f64) {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        let _ = write!(out, "{}", v as i64);
    } else {
        out.push_str(ryu::Buffer::new().format_finite(v));
    }
}

/// A JSON string that is also inert inside a `<script>` element.
pub(crate) fn string(out: &mut String, s: &str) {
    let json = Value::String(s.to_string()).to_string();
    for ch in json.chars() {
        match ch {
            '<' => out.push_str("\\u003c"),
            '>' => out.push_str("\\u003e"),
            '&' => out.push_str("\\u0026"),
            '\u{2028}' => out.push_str("\\u2028"),
            '\u{2029}' => out.push_str("\\u2029"),
            c => out.push(c),
        }
    }
}

/// Per field, the binned mean reward per agent of `p` (the plot model's overlay: the script
/// only draws it), as member `name`.
fn overlay(out: &mut String, name: &str, p: &super::Points, agents: usize) {
    let _ = write!(out, ",\"{name}\":[");
    for f in 0..p.fields.len() {
        if f > 0 {
            out.push(',');
        }
        out.push('[');
        for (k, (agent, bins, interval)) in p.binned_rewards(f, agents).iter().enumerate() {
            if k > 0 {
                out.push(',');
            }
            match agent {
                Some(a) => {
                    let _ = write!(out, "{{\"agent\":{a},");
                }
                None => out.push_str("{\"agent\":null,"),
            }
            out.push_str("\"interval\":");
            string(out, interval.label());
            out.push_str(",\"bins\":[");
            for (b, bin) in bins.iter().enumerate() {
                if b > 0 {
                    out.push(',');
                }
                numbers(
                    out,
                    &[bin.x, bin.mean, bin.lo, bin.hi, bin.n as f64].map(Some),
                );
            }
            out.push_str("]}");
        }
        out.push(']');
    }
    out.push(']');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_cannot_close_the_script_element() {
        let mut out = String::new();
        string(&mut out, "</script><b>&\u{2028}\"");
        assert_eq!(out, r#""\u003c/script\u003e\u003cb\u003e\u0026\u2028\"""#);
        let back: String = serde_json::from_str(&out).unwrap();
        assert_eq!(back, "</script><b>&\u{2028}\"");
    }

    #[test]
    fn numbers_are_short() {
        let mut out = String::new();
        numbers(
            &mut out,
            &[
                Some(3.0),
                Some(0.123456789),
                Some(-0.0),
                None,
                Some(1.5e-9),
                Some(f64::NAN),
            ],
        );
        assert_eq!(out, "[3,0.123457,0,null,1.5e-9,null]");
        let mut out = String::new();
        for t in ["0.6667", "1.700e-17", "–", "∞", "165"] {
            cell(&mut out, t);
            out.push(' ');
        }
        assert_eq!(out, "0.6667 1.7e-17 null \"∞\" 165 ");
    }
}
