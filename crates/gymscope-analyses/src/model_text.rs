//! Model text made readable, safely, for the app and the report alike:
//! - [`markdown_html`]: assistant and user text as Markdown, with every piece of raw HTML shown
//!   as text (never parsed), images shown as their alt text and URL (never fetched), and links
//!   only for `http(s)` URLs, opening elsewhere with `rel="noopener noreferrer"`;
//! - [`pretty_json`]: function-call arguments and JSON tool outputs indented, with the newlines
//!   inside strings shown as line breaks, so code reads as code.
//!
//! The HTML returned holds only tags this module writes; every text and attribute from the data
//! is escaped by pulldown-cmark's writer or by [`crate::html::escape`].

use crate::conversation::{Item, ItemNote};
use crate::html::escape;
use pulldown_cmark::{CowStr, Event, Options, Parser, Tag, TagEnd};
use serde_json::Value;
use std::fmt::Write;

/// How one conversation item is shown, the same in the app and the report.
#[derive(Clone, Debug, PartialEq)]
pub struct Shown {
    /// `message`, `reasoning`, `function_call`, `function_call_output`, `other`.
    pub kind: &'static str,
    /// The label above it: the role, `call NAME (ID)`, `output of ID`, the item type.
    pub head: String,
    pub body: Body,
    /// The text as it is in the row (the "raw" view).
    pub raw: String,
    /// Shown closed at first (reasoning).
    pub collapsed: bool,
    /// Its index in the items given (empty items are left out), to mark an offending one.
    pub index: usize,
    /// What the data says beyond the text ("37 tokens generated · tool failed · 95 ms").
    pub note: Option<String>,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Body {
    /// Safe HTML from [`markdown_html`].
    Markdown(String),
    /// Message text longer than the Markdown limit, shown as it is; escape it when writing HTML.
    Plain(String),
    /// Monospace text, e.g. JSON from [`pretty_json`]; escape it when writing HTML.
    Code(String),
    /// A call whose arguments hold multi-line strings (code, a patch): each such string as it
    /// reads in a file, under its argument's name, and the other arguments as indented JSON
    /// (`None` when there are none). Escape every part when writing HTML.
    Call {
        args: Option<String>,
        blocks: Vec<(String, String)>,
    },
}

/// The longest message the app renders as Markdown; a longer one is shown as plain text.
/// pulldown-cmark's inline events cost up to ~300 bytes for each byte of punctuation-dense text
/// (a run of `<` or `[`), so rendering is bounded by this rather than by the model's output.
pub const MARKDOWN_LIMIT: usize = 64 * 1024;

/// The items worth showing (empty ones are left out), each in its best reading form.
pub fn shown_items(items: &[Item]) -> Vec<Shown> {
    shown_items_noted(items, &[], MARKDOWN_LIMIT)
}

/// [`shown_items`] with each item's note (`notes[i]` belongs to `items[i]`; missing = none), and
/// messages longer than `markdown_limit` bytes as [`Body::Plain`] (the report, which cuts long
/// text, passes its cut so it never renders what it would throw away).
pub fn shown_items_noted(items: &[Item], notes: &[ItemNote], markdown_limit: usize) -> Vec<Shown> {
    items
        .iter()
        .enumerate()
        .filter_map(|(index, item)| {
            let (kind, head, raw, collapsed) = match item {
                Item::Message { role, text } => ("message", role.clone(), text, false),
                Item::Reasoning { text } => ("reasoning", "reasoning".to_string(), text, true),
                Item::FunctionCall {
                    name,
                    call_id,
                    arguments,
                } => (
                    "function_call",
                    format!("call {name} ({call_id})"),
                    arguments,
                    false,
                ),
                Item::FunctionOutput { call_id, output } => (
                    "function_call_output",
                    format!("output of {call_id}"),
                    output,
                    false,
                ),
                Item::Other { kind, json } => ("other", kind.clone(), json, false),
            };
            // An empty message or a call without arguments says nothing: leave it out.
            if raw.trim().is_empty() && kind != "function_call" {
                return None;
            }
            let body = match kind {
                "function_call" => call_body(raw),
                "message" | "reasoning" if raw.len() <= markdown_limit => {
                    Body::Markdown(markdown_html(raw))
                }
                "message" | "reasoning" => Body::Plain(raw.clone()),
                _ => Body::Code(pretty_json(raw).unwrap_or_else(|| raw.clone())),
            };
            Some(Shown {
                kind,
                head,
                body,
                raw: raw.clone(),
                collapsed,
                index,
                note: notes.get(index).and_then(ItemNote::text),
            })
        })
        .collect()
}

/// Markdown → HTML that cannot run anything or make the page fetch anything. The events are
/// rewritten as they stream from the parser to the writer (never collected), so memory follows
/// the parser's own tree.
pub fn markdown_html(text: &str) -> String {
    let options = Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH;
    // While inside an image: its URL and the alt text gathered so far.
    let mut image: Option<(CowStr, String)> = None;
    // Whether each open link was written as `<a>` (its end must close it).
    let mut links: Vec<bool> = Vec::new();
    let events = Parser::new_ext(text, options).filter_map(|event| {
        if let Some((_, alt)) = image.as_mut() {
            match event {
                Event::End(TagEnd::Image) => {
                    let (url, alt) = image.take()?;
                    return Some(Event::Text(format!("[image: {alt}] ({url})").into()));
                }
                Event::Text(t) | Event::Code(t) => alt.push_str(&t),
                _ => {}
            }
            return None;
        }
        match event {
            // Raw HTML in model text is text.
            Event::Html(h) | Event::InlineHtml(h) => Some(Event::Text(h)),
            Event::Start(Tag::Image { dest_url, .. }) => {
                image = Some((dest_url, String::new()));
                None
            }
            Event::Start(Tag::Link { dest_url, .. }) => {
                let web = dest_url.starts_with("http://") || dest_url.starts_with("https://");
                links.push(web);
                web.then(|| {
                    Event::Html(
                        format!(
                            r#"<a href="{}" rel="noopener noreferrer" target="_blank">"#,
                            escape(&dest_url)
                        )
                        .into(),
                    )
                })
            }
            Event::End(TagEnd::Link) => {
                (links.pop() == Some(true)).then(|| Event::Html("</a>".into()))
            }
            other => Some(other),
        }
    });
    let mut out = String::with_capacity(text.len() + text.len() / 4);
    pulldown_cmark::html::push_html(&mut out, events);
    out
}

/// A call's arguments in their reading form: the multi-line string members of an arguments
/// object as [`Body::Call`] blocks, anything else as [`pretty_json`] (or the text as it is).
fn call_body(arguments: &str) -> Body {
    let code = || Body::Code(pretty_json(arguments).unwrap_or_else(|| arguments.to_string()));
    let Ok(Value::Object(mut map)) = serde_json::from_str::<Value>(arguments) else {
        return code();
    };
    let multi_line: Vec<String> = map
        .iter()
        .filter(|(_, v)| v.as_str().is_some_and(|s| s.contains('\n')))
        .map(|(k, _)| k.clone())
        .collect();
    if multi_line.is_empty() {
        return code();
    }
    let blocks = multi_line
        .into_iter()
        .filter_map(|k| match map.shift_remove(&k) {
            Some(Value::String(s)) => Some((k, s)),
            _ => None,
        })
        .collect();
    let args = (!map.is_empty()).then(|| {
        let mut out = String::new();
        write_value(&mut out, &Value::Object(map), 0);
        out
    });
    Body::Call { args, blocks }
}

/// `text` indented as JSON when it is a JSON object or array (else `None`), with each string's
/// newlines and tabs written as themselves instead of `\n` and `\t`, so code and long outputs
/// read as they would in a file. For reading, not for parsing back.
pub fn pretty_json(text: &str) -> Option<String> {
    let trimmed = text.trim_start();
    if !(trimmed.starts_with('{') || trimmed.starts_with('[')) {
        return None;
    }
    let value: Value = serde_json::from_str(text).ok()?;
    let mut out = String::with_capacity(text.len() + text.len() / 2);
    write_value(&mut out, &value, 0);
    Some(out)
}

fn indent(out: &mut String, depth: usize) {
    out.push('\n');
    for _ in 0..depth {
        out.push_str("  ");
    }
}

fn write_value(out: &mut String, v: &Value, depth: usize) {
    match v {
        Value::Object(map) if !map.is_empty() => {
            out.push('{');
            for (i, (k, v)) in map.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                indent(out, depth + 1);
                write_string(out, k);
                out.push_str(": ");
                write_value(out, v, depth + 1);
            }
            indent(out, depth);
            out.push('}');
        }
        Value::Array(items) if !items.is_empty() => {
            out.push('[');
            for (i, v) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                indent(out, depth + 1);
                write_value(out, v, depth + 1);
            }
            indent(out, depth);
            out.push(']');
        }
        Value::String(s) => write_string(out, s),
        other => out.push_str(&other.to_string()),
    }
}

/// A JSON string with `"` and `\` escaped and other control characters as `\u…`, but newlines
/// and tabs written out.
fn write_string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' | '\t' => out.push(c),
            c if c.is_control() => {
                let _ = write!(out, "\\u{:04x}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markdown_renders_and_raw_html_is_text() {
        let html = markdown_html("# Title\n\n**bold** and `code`\n\n<script>alert(1)</script>\n\nx <img src=x onerror=alert(2)> y");
        assert!(html.contains("<h1>Title</h1>"), "{html}");
        assert!(html.contains("<strong>bold</strong>"));
        assert!(html.contains("<code>code</code>"));
        assert!(!html.contains("<script"), "{html}");
        assert!(!html.contains("<img"), "{html}");
        assert!(
            html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"),
            "{html}"
        );
        assert!(
            html.contains("&lt;img src=x onerror=alert(2)&gt;"),
            "{html}"
        );
    }

    #[test]
    fn images_are_text_and_links_only_for_the_web() {
        let html = markdown_html("![a cat](https://example.com/cat.png) [site](https://example.com/?a=1&b=\"2\") [bad](javascript:alert(1)) [file](file:///etc/passwd)");
        assert!(!html.contains("<img"), "{html}");
        assert!(
            html.contains("[image: a cat] (https://example.com/cat.png)"),
            "{html}"
        );
        assert!(
            html.contains(r#"<a href="https://example.com/?a=1&amp;b=&quot;2&quot;" rel="noopener noreferrer" target="_blank">site</a>"#),
            "{html}"
        );
        assert!(!html.contains("javascript:"), "{html}");
        assert!(!html.contains("file:"), "{html}");
        assert!(html.contains("bad") && html.contains("file"), "{html}");
    }

    #[test]
    fn items_in_their_reading_form_and_empty_ones_left_out() {
        let items = [
            Item::Message {
                role: "assistant".into(),
                text: "  ".into(),
            },
            Item::Message {
                role: "assistant".into(),
                text: "**done**".into(),
            },
            Item::FunctionCall {
                name: "run".into(),
                call_id: "c1".into(),
                arguments: r#"{"code":"a\nb"}"#.into(),
            },
            Item::Reasoning { text: "hm".into() },
        ];
        let shown = shown_items(&items);
        assert_eq!(shown.len(), 3);
        assert_eq!(
            shown[0].body,
            Body::Markdown("<p><strong>done</strong></p>\n".into())
        );
        assert_eq!(
            shown[1].body,
            Body::Call {
                args: None,
                blocks: vec![("code".into(), "a\nb".into())]
            }
        );
        assert_eq!(shown[1].head, "call run (c1)");
        assert!(shown[2].collapsed);
        // Each keeps its index among the items given (the empty one is left out).
        let at: Vec<usize> = shown.iter().map(|s| s.index).collect();
        assert_eq!(at, [1, 2, 3]);
    }

    #[test]
    fn a_message_over_the_limit_is_plain_text_and_markdown_streams_punctuation() {
        let dense = "<[>\\![".repeat(4000);
        let items = [Item::Message {
            role: "assistant".into(),
            text: dense.clone(),
        }];
        // Over the limit given: the text as it is, never parsed as Markdown.
        let shown = shown_items_noted(&items, &[], dense.len() - 1);
        assert_eq!(shown[0].body, Body::Plain(dense.clone()));
        // At the limit: Markdown, with every `<` escaped and nothing dropped.
        let shown = shown_items_noted(&items, &[], dense.len());
        let Body::Markdown(html) = &shown[0].body else {
            panic!("{:?}", shown[0].body)
        };
        let inner = html
            .trim_end()
            .strip_prefix("<p>")
            .and_then(|h| h.strip_suffix("</p>"));
        assert!(inner.is_some_and(|h| !h.contains('<')), "{}", &html[..80]);
        assert_eq!(html.matches("&lt;").count(), 4000);
        assert_eq!(html.matches("&gt;").count(), 4000);
    }

    #[test]
    fn multi_line_arguments_read_as_code() {
        let call = |arguments: &str| {
            let items = [Item::FunctionCall {
                name: "edit".into(),
                call_id: "c".into(),
                arguments: arguments.into(),
            }];
            shown_items(&items).remove(0).body
        };
        let patch = "--- a/f.py\n+++ b/f.py\n-    return \"x\"\n+    return r'\\d'\n";
        let args =
            serde_json::json!({"path": "f.py", "patch": patch, "dry_run": false}).to_string();
        assert_eq!(
            call(&args),
            Body::Call {
                args: Some("{\n  \"path\": \"f.py\",\n  \"dry_run\": false\n}".into()),
                blocks: vec![("patch".into(), patch.into())],
            }
        );
        // Only multi-line strings: no JSON left over.
        let only = serde_json::json!({"code": "a\nb"}).to_string();
        assert_eq!(
            call(&only),
            Body::Call {
                args: None,
                blocks: vec![("code".into(), "a\nb".into())]
            }
        );
        // One-line arguments and text that is not an object stay indented JSON or as they are.
        assert_eq!(
            call(r#"{"q":"x"}"#),
            Body::Code("{\n  \"q\": \"x\"\n}".into())
        );
        assert_eq!(
            call("not json\nat all"),
            Body::Code("not json\nat all".into())
        );
    }

    #[test]
    fn json_is_indented_with_real_newlines() {
        let args = r#"{"code":"def f():\n\treturn \"x\"\n","n":[1,2],"e":{}}"#;
        let pretty = pretty_json(args).unwrap();
        assert_eq!(
            pretty,
            "{\n  \"code\": \"def f():\n\treturn \\\"x\\\"\n\",\n  \"n\": [\n    1,\n    2\n  ],\n  \"e\": {}\n}"
        );
        assert_eq!(pretty_json("plain text"), None);
        assert_eq!(pretty_json("{not json"), None);
        assert_eq!(pretty_json("\"a string\""), None);
    }
}
