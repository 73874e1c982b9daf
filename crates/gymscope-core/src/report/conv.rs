//! The "Tasks in detail" section: for a bounded number of tasks, each rollout's conversation
//! (from `conversation`), collapsed in `<details>` with ids the deep links open
//! (`task-7`, `task-7-rollout-2`). Static HTML, so it reads without JavaScript.

use super::ReportInput;
use crate::conversation::{Conversation, Item, ItemNote, Trajectory};
use crate::html::escape;
use crate::model_text::{shown_items_noted, Body};
use std::fmt::Write;

/// Longer texts are cut (the page is for reading and sharing; the rollouts file has it all).
const MAX_TEXT: usize = 20_000;

pub(super) fn details(out: &mut String, r: &ReportInput) {
    let mut tasks: Vec<i64> = r.conversations.iter().map(|(k, _)| k.task).collect();
    tasks.extend(r.prompts.iter().map(|(t, _)| *t));
    tasks.sort_unstable();
    tasks.dedup();
    let mean_reward = r.tasks.headers.iter().position(|h| h == "mean/reward");
    for task in tasks {
        let rollouts: Vec<_> = r
            .conversations
            .iter()
            .filter(|(k, _)| k.task == task)
            .collect();
        let key = task.to_string();
        let row = r.tasks.rows.iter().find(|row| row.key == key);
        let mut about = String::new();
        if !rollouts.is_empty() {
            let _ = write!(about, " · {} rollouts", rollouts.len());
        }
        if let (Some(c), Some(row)) = (mean_reward, row) {
            let _ = write!(about, " · mean reward {}", row.cells[c].text());
        }
        let _ = write!(
            out,
            "<details class=\"task\" id=\"task-{task}\"><summary>Task {task}{}</summary>",
            escape(&about)
        );
        if let Some((_, prompt)) = r.prompts.iter().find(|(t, _)| *t == task) {
            out.push_str("<div class=\"conv\"><h4>Prompt (the task's sample)</h4>");
            items(out, &prompt.input, &[]);
            out.push_str("</div>");
        }
        for (key, c) in rollouts {
            let reward = c.reward.as_deref().unwrap_or("–");
            let _ = write!(
                out,
                "<details class=\"rollout\" id=\"task-{}-rollout-{}\"><summary>Rollout {} · reward {}</summary><div class=\"conv\">",
                key.task,
                key.rollout,
                key.rollout,
                escape(reward)
            );
            conversation(out, c);
            out.push_str("</div></details>");
        }
        out.push_str("</details>");
    }
}

pub(crate) fn conversation(out: &mut String, c: &Conversation) {
    out.push_str("<h4>Prompt</h4>");
    items(out, &c.input, &[]);
    if let Some(t) = &c.trajectory {
        trajectory(out, t);
    }
    out.push_str("<h4>Answer</h4>");
    items(out, &c.output, &c.output_notes);
    let pairs = |out: &mut String, title: &str, list: &[(String, String)]| {
        if list.is_empty() {
            return;
        }
        let _ = write!(out, "<h4>{title}</h4><dl class=\"fields\">");
        for (k, v) in list {
            let _ = write!(out, "<dt>{}</dt><dd>{}</dd>", escape(k), escape(&cut(v)));
        }
        out.push_str("</dl>");
    };
    pairs(out, "Usage", &c.usage);
    pairs(out, "Fields", &c.fields);
}

/// A row's `ng_trajectory`: each turn headed by its model calls (tokens, duration), then its
/// items; without turns, the model calls alone. Gaps named.
fn trajectory(out: &mut String, t: &Trajectory) {
    if !t.turns.is_empty() {
        out.push_str("<h4>Turns (ng_trajectory)</h4>");
        for turn in &t.turns {
            let _ = write!(
                out,
                "<div class=\"turn\"><div class=\"turn-head\">{}",
                escape(&turn.label)
            );
            for call in &turn.calls {
                let _ = write!(out, " · {}", escape(&call.text()));
            }
            out.push_str("</div>");
            items(out, &turn.items, &turn.notes);
            out.push_str("</div>");
        }
    } else if !t.calls.is_empty() {
        out.push_str("<h4>Model calls (ng_trajectory)</h4><ol class=\"calls\">");
        for call in &t.calls {
            let _ = write!(out, "<li>{}</li>", escape(&call.text()));
        }
        out.push_str("</ol>");
    }
    if !t.gaps.is_empty() {
        let _ = write!(
            out,
            "<p class=\"gaps\">ng_trajectory gaps: {}</p>",
            escape(&t.gaps.join(", "))
        );
    }
}

/// Each item in its reading form (`model_text`): messages and reasoning as safe Markdown,
/// calls and outputs as indented JSON; reasoning collapsed; empty items left out; each item's
/// note (generated tokens, tool timing) beside its label.
pub(crate) fn items(out: &mut String, items: &[Item], notes: &[ItemNote]) {
    // Markdown only up to the cut: text cut mid-way could read wrongly as Markdown.
    for item in shown_items_noted(items, notes, MAX_TEXT) {
        let body = match &item.body {
            Body::Markdown(html) => format!("<div class=\"md\">{html}</div>"),
            Body::Plain(text) => format!("<pre>{}</pre>", escape(&cut(text))),
            Body::Code(code) => format!("<pre class=\"code\">{}</pre>", escape(&cut(code))),
            Body::Call { args, blocks } => {
                let mut body = String::new();
                if let Some(args) = args {
                    let _ = write!(body, "<pre class=\"code\">{}</pre>", escape(&cut(args)));
                }
                for (name, code) in blocks {
                    let _ = write!(
                        body,
                        "<div class=\"arg\">{}</div><pre class=\"code block\">{}</pre>",
                        escape(name),
                        escape(&cut(code))
                    );
                }
                body
            }
        };
        let head = match &item.note {
            Some(note) => format!(
                "{}<span class=\"note\"> · {}</span>",
                escape(&item.head),
                escape(note)
            ),
            None => escape(&item.head),
        };
        if item.collapsed {
            let _ = write!(
                out,
                "<details class=\"item {}\"><summary class=\"role\">{head}</summary>{body}</details>",
                item.kind,
            );
        } else {
            let _ = write!(
                out,
                "<div class=\"item {}\"><div class=\"role\">{head}</div>{body}</div>",
                item.kind,
            );
        }
    }
}

fn cut(text: &str) -> std::borrow::Cow<'_, str> {
    if text.len() <= MAX_TEXT {
        return text.into();
    }
    let mut end = MAX_TEXT;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}… ({} more bytes)", &text[..end], text.len() - end).into()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn turns_tokens_and_notes_in_the_report_escaped() {
        let evil = "<script>alert(1)</script>";
        let row = json!({"response": {"output": [
                {"type": "message", "role": "assistant", "content": "hi", "generation_token_ids": [1, 2, 3]},
                {"type": "function_call", "name": "f", "call_id": "c1", "arguments": "{}"}]},
            "ng_trajectory": {"turns": [{"invocation_id": "root", "turn_no": 1, "step_count": 1,
                    "answer": [{"type": "function_call", "name": "f", "call_id": "c1", "arguments": "{}"}],
                    "model_calls": [{"model_call_id": "m1"}]}],
                "model_calls": [{"model_call_id": "m1", "duration_ms": 250.0,
                    "response_metadata": {"model": evil},
                    "token_stats": {"prompt_tokens": 30, "completion_tokens": 7}}],
                "tool_calls": [{"tool_call_id": "c1", "status": "failed", "error_type": evil, "duration_ms": 4.0, "output": "no"}],
                "gaps": [{"code": evil}]}});
        let mut out = String::new();
        conversation(&mut out, &crate::conversation::conversation(&row));
        assert!(!out.contains("<script>"), "{out}");
        assert!(out.contains("<h4>Turns (ng_trajectory)</h4>"), "{out}");
        assert!(
            out.contains("Turn 1 of 1 · &lt;script&gt;alert(1)&lt;/script&gt; · 30 prompt + 7 completion tokens · 250 ms"),
            "{out}"
        );
        assert!(
            out.contains("<span class=\"note\"> · tool failed (&lt;script&gt;"),
            "{out}"
        );
        assert!(
            out.contains("<span class=\"note\"> · 3 tokens generated</span>"),
            "{out}"
        );
        assert!(out.contains("ng_trajectory gaps: &lt;script&gt;"), "{out}");
    }
}
