//! The data the comparison page's script reads: the paired tasks as columns (one array per
//! column, not an object per task), each task's mark and bar for the filters, and which tasks
//! have their conversations in the page. Strings go through the run report's inert JSON
//! writer, so nothing in them can close the `<script>` element.

use super::model::Model;
use crate::compare::conversations::PairConversations;
use crate::compare::Comparison;
use crate::report::json_string;
use crate::reward_group::RewardGroup;
use std::fmt::Write;

fn list<T>(
    out: &mut String,
    items: impl Iterator<Item = T>,
    mut write: impl FnMut(&mut String, T),
) {
    out.push('[');
    for (i, item) in items.enumerate() {
        if i > 0 {
            out.push(',');
        }
        write(out, item);
    }
    out.push(']');
}

/// At 6 significant digits (integers exactly), `null` when absent.
fn number(out: &mut String, v: Option<f64>) {
    match v.filter(|v| v.is_finite()) {
        Some(v) if v.fract() == 0.0 && v.abs() < 1e15 => {
            let _ = write!(out, "{}", v as i64);
        }
        Some(v) => out.push_str(ryu::Buffer::new().format_finite(crate::figures::round6(v))),
        None => out.push_str("null"),
    }
}

fn index(out: &mut String, v: Option<usize>) {
    match v {
        Some(i) => {
            let _ = write!(out, "{i}");
        }
        None => out.push_str("null"),
    }
}

pub(super) fn data_json(c: &Comparison, m: &Model, convs: &[PairConversations]) -> String {
    let mut out = String::with_capacity(64 * c.tasks.len() + 1024);
    out.push_str("{\"agents\":");
    list(&mut out, m.agents.iter(), |o, a| json_string(o, a));
    out.push_str(",\"groups\":");
    list(&mut out, RewardGroup::ALL.iter(), |o, g| {
        json_string(o, g.as_str());
    });
    let t = &c.tasks;
    out.push_str(",\"tasks\":{\"task_a\":");
    list(&mut out, t.iter(), |o, t| {
        let _ = write!(o, "{}", t.task_a);
    });
    out.push_str(",\"task_b\":");
    list(&mut out, t.iter(), |o, t| {
        let _ = write!(o, "{}", t.task_b);
    });
    out.push_str(",\"agent\":");
    list(&mut out, m.series.iter(), |o, &s| index(o, Some(s)));
    for (name, get) in [
        (
            "mean_a",
            (|t| t.mean_a) as fn(&crate::compare::PairedTask) -> Option<f64>,
        ),
        ("mean_b", |t| t.mean_b),
        ("delta", |t| t.delta),
        ("tokens_a", |t| t.tokens_a),
        ("tokens_b", |t| t.tokens_b),
    ] {
        let _ = write!(out, ",\"{name}\":");
        list(&mut out, t.iter(), |o, t| number(o, get(t)));
    }
    let group = |g: RewardGroup| RewardGroup::ALL.iter().position(|&x| x == g);
    out.push_str(",\"group_a\":");
    list(&mut out, t.iter(), |o, t| index(o, group(t.group_a)));
    out.push_str(",\"group_b\":");
    list(&mut out, t.iter(), |o, t| index(o, group(t.group_b)));
    out.push_str(",\"scatter\":");
    list(&mut out, m.scatter.of.iter(), |o, &v| index(o, v));
    out.push_str(",\"cost\":");
    list(&mut out, m.cost.of.iter(), |o, &v| index(o, v));
    out.push_str(",\"histogram\":");
    list(&mut out, m.bar_of.iter(), |o, &v| index(o, v));
    out.push_str("},\"pairs\":");
    list(&mut out, convs.iter(), |o, p| {
        let _ = write!(o, "{}", p.task_a);
    });
    out.push('}');
    out
}
