//! The text a row must hold for the expression to be true, searched for in the raw line so that
//! a row without it is answered without parsing it: a text query over a large run mostly reads
//! rows that do not match (docs/performance.md "Text search").
//!
//! Why it is sound. A `~` predicate matches one JSON string of the row after one unescaping. A
//! *plain* character (printable ASCII but `"`, `\` and `/`) is written in JSON as itself or as a
//! `\u00XX` escape, nothing else. So when a matched text holds a run of plain characters, the
//! raw line holds that run, or the `\u00XX` escape of one of its characters. A case-insensitive
//! run is searched for without ASCII case; its letters count as plain only when every character
//! that folds to them is ASCII (`k` and `s` do not: KELVIN SIGN and LONG S fold to them).

use super::field::Field;
use super::parse::{Expr, Pattern};
use regex_syntax::hir::{Class, Hir, HirKind};

/// What a row must hold: one of the runs, raw, or an escape of one of their characters.
#[derive(Clone, Debug)]
pub(super) struct Prefilter {
    search: regex::bytes::Regex,
    /// The ASCII characters whose `\u00XX` escape could hide a run.
    escaped: [bool; 128],
    /// `\u00`, built once (not per line).
    escape_start: memchr::memmem::Finder<'static>,
}

/// A run of plain characters every match holds; `fold`: found without regard to ASCII case.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Run {
    pub text: String,
    pub fold: bool,
}

/// One character of a fixed piece of a regex: `None` where the piece is not plain.
type Atom = Option<(char, bool)>;

impl Prefilter {
    /// The expression's prefilter, when it has one: `None` when some way of matching needs no
    /// text (`not`, a field comparison on one side of `or`).
    pub fn of(e: &Expr) -> Option<Prefilter> {
        let runs = required(e)?;
        let alternation: Vec<String> = runs
            .iter()
            .map(|r| {
                let text = regex::escape(&r.text);
                if r.fold {
                    format!("(?i:{text})")
                } else {
                    text
                }
            })
            .collect();
        let search = regex::bytes::RegexBuilder::new(&alternation.join("|"))
            .unicode(false)
            .build()
            .ok()?;
        let mut escaped = [false; 128];
        for r in &runs {
            for b in r.text.bytes() {
                escaped[usize::from(b)] = true;
                if r.fold {
                    escaped[usize::from(b.to_ascii_lowercase())] = true;
                    escaped[usize::from(b.to_ascii_uppercase())] = true;
                }
            }
        }
        Some(Prefilter {
            search,
            escaped,
            escape_start: memchr::memmem::Finder::new(b"\\u00"),
        })
    }

    /// Whether `line` may make the expression true: it holds a run, or an escape that could
    /// hide one.
    pub fn may_hold(&self, line: &[u8]) -> bool {
        self.search.is_match(line) || self.escape_in(line)
    }

    /// A `\u00XX` escape of one of the runs' characters somewhere in the line. (After an escaped
    /// backslash, `\\u0041` is text, not an escape: taking it for one only costs a full
    /// evaluation.)
    fn escape_in(&self, line: &[u8]) -> bool {
        self.escape_start.find_iter(line).any(|at| {
            let hex = |i: usize| line.get(at + i).and_then(|b| (*b as char).to_digit(16));
            match (hex(4), hex(5)) {
                (Some(hi), Some(lo)) if hi < 8 => self.escaped[(hi * 16 + lo) as usize],
                _ => false,
            }
        })
    }
}

/// The runs of which a true row holds at least one; `None`: no such requirement.
pub(super) fn required(e: &Expr) -> Option<Vec<Run>> {
    match e {
        Expr::Match {
            field: Field::Scope(_) | Field::Path(_) | Field::Usage(_) | Field::Tool,
            pattern,
        } => match pattern {
            Pattern::Substring(s) => {
                let atoms: Vec<Atom> = s.chars().map(|c| plain(c).then_some((c, false))).collect();
                longest_run(&atoms).map(|r| vec![r])
            }
            Pattern::Regex(r) => regex_syntax::parse(r.as_str())
                .ok()
                .and_then(|h| needed(&h)),
        },
        Expr::And(a, b) => match (required(a), required(b)) {
            (Some(x), Some(y)) => Some(if better(&y, &x) { y } else { x }),
            (x, y) => x.or(y),
        },
        Expr::Or(a, b) => {
            let mut x = required(a)?;
            x.extend(required(b)?);
            Some(x)
        }
        _ => None,
    }
}

/// Printable ASCII that JSON writes as itself (or as `\u00XX`).
fn plain(c: char) -> bool {
    matches!(c, ' '..='~') && !matches!(c, '"' | '\\' | '/')
}

/// Whether requirement `a` rejects more rows than `b`: its shortest run is longer, or as long
/// with fewer alternatives.
fn better(a: &[Run], b: &[Run]) -> bool {
    let shortest = |r: &[Run]| r.iter().map(|r| r.text.len()).min().unwrap_or(0);
    (shortest(a), std::cmp::Reverse(a.len())) > (shortest(b), std::cmp::Reverse(b.len()))
}

/// The longest run of plain atoms (case-insensitive if any of its atoms is).
fn longest_run(atoms: &[Atom]) -> Option<Run> {
    atoms
        .split(Option::is_none)
        .max_by_key(|run| run.len())
        .filter(|run| !run.is_empty())
        .map(|run| Run {
            text: run.iter().flatten().map(|(c, _)| c).collect(),
            fold: run.iter().flatten().any(|(_, fold)| *fold),
        })
}

/// The runs every match of `hir` holds one of.
fn needed(hir: &Hir) -> Option<Vec<Run>> {
    if let Some(atoms) = fixed(hir) {
        return longest_run(&atoms).map(|r| vec![r]);
    }
    match hir.kind() {
        HirKind::Capture(c) => needed(&c.sub),
        HirKind::Repetition(r) if r.min >= 1 => needed(&r.sub),
        HirKind::Alternation(branches) => {
            let mut all = Vec::new();
            for b in branches {
                all.extend(needed(b)?);
            }
            Some(all)
        }
        HirKind::Concat(children) => {
            // Fixed neighbours join into one run; every other child may require its own.
            let mut best: Option<Vec<Run>> = None;
            let mut consider = |c: Option<Vec<Run>>| {
                if let Some(c) = c {
                    if best.as_ref().is_none_or(|b| better(&c, b)) {
                        best = Some(c);
                    }
                }
            };
            let mut atoms: Vec<Atom> = Vec::new();
            for child in children {
                if let Some(a) = fixed(child) {
                    atoms.extend(a);
                } else {
                    consider(longest_run(&atoms).map(|r| vec![r]));
                    atoms.clear();
                    consider(needed(child));
                }
            }
            consider(longest_run(&atoms).map(|r| vec![r]));
            best
        }
        _ => None,
    }
}

/// The characters of every match of `hir`, when they are the same each time up to ASCII case
/// (zero-width assertions are empty); `None` otherwise.
fn fixed(hir: &Hir) -> Option<Vec<Atom>> {
    match hir.kind() {
        HirKind::Empty | HirKind::Look(_) => Some(Vec::new()),
        HirKind::Literal(l) => Some(
            std::str::from_utf8(&l.0)
                .ok()?
                .chars()
                .map(|c| plain(c).then_some((c, false)))
                .collect(),
        ),
        HirKind::Class(class) => one_char(class).map(|a| vec![a]),
        HirKind::Capture(c) => fixed(&c.sub),
        HirKind::Repetition(r) if Some(r.min) == r.max && r.min <= 16 => {
            let once = fixed(&r.sub)?;
            Some(once.repeat(r.min as usize))
        }
        HirKind::Concat(children) => {
            let mut all = Vec::new();
            for c in children {
                all.extend(fixed(c)?);
            }
            Some(all)
        }
        _ => None,
    }
}

/// A class that is one character, or one ASCII letter in both cases (`(?i)d` is `[Dd]`): its
/// atom; a class of anything else (`(?i)k` is `[Kk\u{212A}]`) is not fixed.
fn one_char(class: &Class) -> Option<Atom> {
    let chars: Vec<char> = match class {
        Class::Unicode(u) => {
            let mut out = Vec::new();
            for r in u.ranges() {
                if out.len() + (r.end() as usize - r.start() as usize) >= 2 {
                    return None;
                }
                out.extend(r.start()..=r.end());
            }
            out
        }
        Class::Bytes(b) => {
            let mut out = Vec::new();
            for r in b.ranges() {
                if out.len() + usize::from(r.end() - r.start()) >= 2 || !r.end().is_ascii() {
                    return None;
                }
                out.extend((r.start()..=r.end()).map(char::from));
            }
            out
        }
    };
    match chars[..] {
        [c] => Some(plain(c).then_some((c, false))),
        [a, b] if a.is_ascii_alphabetic() && a.eq_ignore_ascii_case(&b) => {
            Some(plain(a).then_some((a.to_ascii_lowercase(), true)))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn runs(expr: &str) -> Option<Vec<(String, bool)>> {
        let e = super::super::parse::parse(expr).unwrap();
        required(&e).map(|r| r.into_iter().map(|r| (r.text, r.fold)).collect())
    }
    #[allow(clippy::unnecessary_wraps)] // compared with `runs`, an Option
    fn one(text: &str, fold: bool) -> Option<Vec<(String, bool)>> {
        Some(vec![(text.to_string(), fold)])
    }

    #[test]
    fn substrings_keep_their_longest_plain_run() {
        assert_eq!(
            runs(r#"output ~ "zebra crossing""#),
            one("zebra crossing", false)
        );
        assert_eq!(runs(r#"output ~ "café au lait""#), one(" au lait", false));
        assert_eq!(runs(r#"args ~ "{\"city\": \"SF\"}""#), one("city", false));
        assert_eq!(runs(r#"output ~ "é""#), None);
        assert_eq!(
            runs(r#"agent ~ "math""#),
            None,
            "the agent may come from the inputs"
        );
        assert_eq!(runs(r#"not output ~ "x""#), None);
        assert_eq!(runs(r#"output ~ "ab" or reward > 0"#), None);
        assert_eq!(
            runs(r#"output ~ "ab" or text ~ "cd""#),
            Some(vec![("ab".into(), false), ("cd".into(), false)])
        );
        assert_eq!(
            runs(r#"output ~ "ab" and text ~ "cdef""#),
            one("cdef", false)
        );
    }

    #[test]
    fn regexes_give_their_fixed_pieces() {
        assert_eq!(runs(r"output ~ /\bdeadline\b/i"), one("deadline", true));
        assert_eq!(runs(r"output ~ /zebra\s+crossing/"), one("crossing", false));
        assert_eq!(
            runs(r"output ~ /(?i)desk/"),
            one("de", true),
            "k folds to KELVIN SIGN"
        );
        assert_eq!(
            runs(r"output ~ /give up|i cannot/i"),
            Some(vec![("give up".into(), true), ("i cannot".into(), true)])
        );
        assert_eq!(runs(r"output ~ /a.*/"), one("a", false));
        assert_eq!(runs(r"output ~ /(ab){2}c/"), one("ababc", false));
        assert_eq!(runs(r"output ~ /x?/"), None);
        assert_eq!(runs(r"output ~ /[ab]c/"), one("c", false));
        assert_eq!(runs(r"output ~ /\w{60}c/i"), one("c", true));
    }

    #[test]
    fn escapes_of_a_runs_characters_make_a_candidate() {
        let p = |expr: &str| Prefilter::of(&super::super::parse::parse(expr).unwrap()).unwrap();
        let zebra = p(r#"output ~ "zebra""#);
        assert!(zebra.may_hold(br#"{"t":"a zebra"}"#));
        assert!(zebra.may_hold(br#"{"t":"a z\u0065bra"}"#));
        assert!(
            !zebra.may_hold(br#"{"t":"a z\u0045bra"}"#),
            "`E` is not in the run"
        );
        assert!(!zebra.may_hold(br#"{"t":"a Zebra \u001b[0m \u00e9"}"#));
        let folded = p(r"output ~ /zebra/i");
        assert!(folded.may_hold(br#"{"t":"a ZEBRA"}"#));
        assert!(folded.may_hold(br#"{"t":"a \u005aEBRA"}"#));
        assert!(!folded.may_hold(br#"{"t":"a ZEBR"}"#));
    }
}
