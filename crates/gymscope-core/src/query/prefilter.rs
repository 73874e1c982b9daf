//! The substrings a row must hold for the expression to be true, found on the raw line so that a
//! row without any of them is answered without parsing it (a text query over a large run
//! mostly reads rows that do not match).
//!
//! Sound because a needle is printable ASCII without `"`, `\` or `/`: JSON writes such
//! characters literally, except as `\u00XX` escapes, and a line holding one of those (XX below
//! 0x80) is always evaluated in full.

use super::field::Field;
use super::parse::{Expr, Pattern};

/// `None`: no requirement; `Some(n)`: the row must hold at least one of `n`.
pub(super) fn needles(e: &Expr) -> Option<Vec<String>> {
    match e {
        Expr::Match {
            field: Field::Scope(_) | Field::Path(_) | Field::Usage(_),
            pattern: Pattern::Substring(s),
        } if safe(s) => Some(vec![s.clone()]),
        Expr::Match {
            field: Field::Scope(_) | Field::Path(_) | Field::Usage(_),
            pattern: Pattern::Regex(r),
        } => regex_prefixes(r.as_str()),
        Expr::And(a, b) => match (needles(a), needles(b)) {
            (Some(x), Some(y)) => Some(if x.len() <= y.len() { x } else { y }),
            (x, y) => x.or(y),
        },
        Expr::Or(a, b) => {
            let mut x = needles(a)?;
            x.extend(needles(b)?);
            Some(x)
        }
        _ => None,
    }
}

/// The literals every match of the regex starts with, when there are a few and each is safe: a
/// text the regex matches holds one of them.
fn regex_prefixes(source: &str) -> Option<Vec<String>> {
    use regex_syntax::hir::literal::{ExtractKind, Extractor};
    let hir = regex_syntax::parse(source).ok()?;
    let mut extractor = Extractor::new();
    extractor.kind(ExtractKind::Prefix);
    let seq = extractor.extract(&hir);
    let literals = seq.literals()?;
    if literals.is_empty() || literals.len() > 64 {
        return None;
    }
    literals
        .iter()
        .map(|l| {
            let s = std::str::from_utf8(l.as_bytes()).ok()?;
            safe(s).then(|| s.to_string())
        })
        .collect()
}

/// One search for every needle at once (the regex crate's multi-literal search).
pub(super) fn searcher(needles: &[String]) -> Option<regex::bytes::Regex> {
    let alternation: Vec<String> = needles.iter().map(|n| regex::escape(n)).collect();
    regex::bytes::Regex::new(&alternation.join("|")).ok()
}

fn safe(s: &str) -> bool {
    !s.is_empty()
        && s.bytes()
            .all(|b| (0x20..0x7f).contains(&b) && !matches!(b, b'"' | b'\\' | b'/'))
}

/// Whether `line` may make the expression true: it holds a needle, or an escape that could
/// hide one.
pub(super) fn may_hold(line: &[u8], needles: &regex::bytes::Regex) -> bool {
    needles.is_match(line) || ascii_escape(line)
}

/// A `\u00XX` escape of an ASCII character (XX below 0x80) somewhere in the line.
fn ascii_escape(line: &[u8]) -> bool {
    memchr::memmem::find_iter(line, b"\\u00").any(|at| {
        // An escaped backslash before it (`\\u00…`) is text, but counting that is not needed:
        // a false positive only costs the full evaluation.
        matches!(line.get(at + 4), Some(b'0'..=b'7'))
    })
}
