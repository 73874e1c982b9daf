//! The Markdown gymscope writes (`compare --format md`, `build-pivot`'s `info.md`): untrusted
//! text (run labels, tool and agent names, file names) made literal, so that it cannot split a
//! table cell, start a heading, open a link or pass raw HTML.

/// Text made literal in Markdown: its punctuation backslash-escaped (CommonMark and GitHub
/// honour a backslash before any ASCII punctuation, in table cells too) and line breaks as
/// spaces, so `a_b|c` stays one literal cell and `<script>` or `[x](javascript:…)` stays text
/// (parentheses are left: without its `[…]` a link cannot form, and counts read `12 (50%)`).
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for ch in s.chars() {
        match ch {
            '\n' | '\r' => out.push(' '),
            '\\' | '`' | '*' | '_' | '[' | ']' | '<' | '>' | '|' | '#' | '~' | '!' | '&' => {
                out.push('\\');
                out.push(ch);
            }
            _ => out.push(ch),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::escape;

    #[test]
    fn untrusted_text_stays_literal() {
        assert_eq!(escape("a_b|c"), "a\\_b\\|c");
        assert_eq!(escape("x\ny"), "x y");
        assert_eq!(escape("# h"), "\\# h");
        assert_eq!(escape("<img src=x>"), "\\<img src=x\\>");
        assert_eq!(
            escape("[x](javascript:alert(1))"),
            "\\[x\\](javascript:alert(1))"
        );
        assert_eq!(escape("c1/rollouts.jsonl"), "c1/rollouts.jsonl");
    }

    /// What a CommonMark renderer makes of escaped text: the text itself, no markup.
    #[test]
    fn rendered_it_is_the_text() {
        for s in [
            "a|b",
            "<script>alert(1)</script>",
            "[x](javascript:alert(1))",
            "# heading\n- item",
            "**bold** _em_ `code` ~~del~~",
            "c1/rollouts.jsonl",
            "a\\b",
        ] {
            let md = format!("| {} |\n|---|\n", escape(s));
            let mut html = String::new();
            let opts = pulldown_cmark::Options::ENABLE_TABLES
                | pulldown_cmark::Options::ENABLE_STRIKETHROUGH;
            pulldown_cmark::html::push_html(&mut html, pulldown_cmark::Parser::new_ext(&md, opts));
            let want = crate::html::escape(&s.replace('\n', " "));
            assert!(html.contains(&format!("<th>{want}</th>")), "{s:?}: {html}");
        }
    }
}
