//! The expression's tree, parsed from its tokens. Precedence, tightest first: comparisons and
//! `~`, then `not`, then `and`, then `or` (docs/query.md "gymscope query").

use super::field::Field;
use super::lex::{tokens, Op, Tok};
use super::ParseError;

#[derive(Clone, Debug)]
pub enum Expr {
    Or(Box<Expr>, Box<Expr>),
    And(Box<Expr>, Box<Expr>),
    Not(Box<Expr>),
    Cmp {
        field: Field,
        op: Op,
        value: Lit,
    },
    Match {
        field: Field,
        pattern: Pattern,
    },
    /// A field alone: true when it is `true` (`health.loop and agent == "a"`).
    Truthy(Field),
}

#[derive(Clone, Debug, PartialEq)]
pub enum Lit {
    Num(f64),
    /// A number written as an integer: compared exactly with integers (above 2^53 too).
    Int(i128),
    Str(String),
    Bool(bool),
    Null,
}

#[derive(Clone, Debug)]
pub enum Pattern {
    /// Case-sensitive substring.
    Substring(String),
    Regex(regex::Regex),
}

impl Pattern {
    /// Where the pattern first matches in `text`: its byte range.
    pub fn find(&self, text: &str) -> Option<(usize, usize)> {
        match self {
            Pattern::Substring(s) => {
                memchr::memmem::find(text.as_bytes(), s.as_bytes()).map(|at| (at, at + s.len()))
            }
            Pattern::Regex(r) => r.find(text).map(|m| (m.start(), m.end())),
        }
    }
}

/// Parses `text` into its tree.
pub(super) fn parse(text: &str) -> Result<Expr, ParseError> {
    let toks = tokens(text)?;
    let end = text.chars().count() + 1;
    let mut p = Parser {
        toks,
        at: 0,
        end,
        nest: 0,
        depth: 0,
    };
    if p.toks.is_empty() {
        return Err(ParseError {
            column: 1,
            message: "the expression is empty".into(),
        });
    }
    let e = p.or()?;
    match p.peek() {
        None => Ok(e),
        Some((Tok::Close, c)) => Err(ParseError {
            column: c,
            message: "a `)` without its `(`".into(),
        }),
        Some((t, c)) => Err(ParseError {
            column: c,
            message: format!("expected `and`, `or` or the end, found {}", t.describe()),
        }),
    }
}

struct Parser {
    toks: Vec<(Tok, usize)>,
    at: usize,
    /// The column after the last character (where "the end" is).
    end: usize,
    /// `(` and `not` open around the token being read (the parser's own recursion).
    nest: usize,
    /// The depth of the expression last built (a leaf is 1).
    depth: usize,
}

/// How deep an expression may nest: its tree is walked recursively (evaluation, the prefilter,
/// the app's worker, whose stack is small), and a query 6,000 `(` deep overflowed the stack.
pub const MAX_DEPTH: usize = 100;

/// `terms` (each with its depth) joined pairwise into a tree of the least depth, in order; the
/// tree and its depth.
fn balanced(
    mut terms: Vec<(Expr, usize)>,
    join: fn(Box<Expr>, Box<Expr>) -> Expr,
) -> (Expr, usize) {
    if terms.len() == 1 {
        return terms.pop().expect("one term");
    }
    let right = terms.split_off(terms.len() / 2);
    let (a, da) = balanced(terms, join);
    let (b, db) = balanced(right, join);
    (join(Box::new(a), Box::new(b)), da.max(db) + 1)
}

impl Parser {
    fn peek(&self) -> Option<(&Tok, usize)> {
        self.toks.get(self.at).map(|(t, c)| (t, *c))
    }
    fn next(&mut self) -> Option<(Tok, usize)> {
        let t = self.toks.get(self.at).cloned();
        self.at += 1;
        t
    }
    fn here(&self) -> usize {
        self.peek().map_or(self.end, |(_, c)| c)
    }
    fn fail<T>(&self, message: String) -> Result<T, ParseError> {
        Err(ParseError {
            column: self.here(),
            message,
        })
    }

    /// Records the depth of a node over children of depth `below`; a usage error past
    /// [`MAX_DEPTH`], at the token being read.
    fn deeper(&mut self, below: usize) -> Result<(), ParseError> {
        self.depth = below + 1;
        if self.depth > MAX_DEPTH || self.nest > MAX_DEPTH {
            return self.fail(format!(
                "the expression nests more than {MAX_DEPTH} levels deep (`(`, `not`, `and`, `or`)"
            ));
        }
        Ok(())
    }

    fn or(&mut self) -> Result<Expr, ParseError> {
        self.chain(&Tok::Or, Self::and, Expr::Or)
    }

    fn and(&mut self) -> Result<Expr, ParseError> {
        self.chain(&Tok::And, Self::not, Expr::And)
    }

    /// Terms joined by `joint`, made a balanced tree: `a or b or c or d` is `(a or b) or (c or
    /// d)`, the same terms in the same order (and and or are associative, evaluated left to
    /// right), so a list of 10,000 tasks nests 14 deep, not 10,000.
    fn chain(
        &mut self,
        joint: &Tok,
        term: fn(&mut Self) -> Result<Expr, ParseError>,
        join: fn(Box<Expr>, Box<Expr>) -> Expr,
    ) -> Result<Expr, ParseError> {
        let mut terms = vec![(term(self)?, self.depth)];
        while self.peek().is_some_and(|(t, _)| t == joint) {
            self.at += 1;
            terms.push((term(self)?, self.depth));
        }
        let (e, depth) = balanced(terms, join);
        self.deeper(depth - 1)?;
        Ok(e)
    }

    fn not(&mut self) -> Result<Expr, ParseError> {
        if matches!(self.peek(), Some((Tok::Not, _))) {
            self.at += 1;
            self.nest += 1;
            self.deeper(self.nest)?;
            let inner = self.not()?;
            self.nest -= 1;
            self.deeper(self.depth)?;
            return Ok(Expr::Not(Box::new(inner)));
        }
        self.primary()
    }

    fn primary(&mut self) -> Result<Expr, ParseError> {
        let Some((tok, column)) = self.next() else {
            let after = self
                .toks
                .last()
                .map(|(t, _)| t.describe())
                .unwrap_or_default();
            self.at -= 1;
            return self.fail(format!("expected a field or `(` after {after}"));
        };
        let (name, quoted) = match tok {
            Tok::Open => {
                self.nest += 1;
                self.deeper(self.nest)?;
                let e = self.or()?;
                self.nest -= 1;
                if let Some((Tok::Close, _)) = self.next() {
                    return Ok(e);
                }
                self.at -= 1;
                return self.fail(format!("expected `)` to close the `(` at column {column}"));
            }
            Tok::Name { text, quoted } => (text, quoted),
            other => {
                self.at -= 1;
                return self.fail(format!(
                    "expected a field or `(`, found {}",
                    other.describe()
                ));
            }
        };
        let field =
            Field::parse(&name, quoted).map_err(|message| ParseError { column, message })?;
        match self.peek() {
            Some((Tok::Op(op), _)) => {
                let op = *op;
                self.at += 1;
                if field.is_scope() {
                    return Err(ParseError {
                        column,
                        message: format!("`{name}` is text: match it with `~ \"…\"` or `~ /…/`"),
                    });
                }
                let value = self.literal(op.as_str())?;
                self.depth = 1;
                Ok(Expr::Cmp { field, op, value })
            }
            Some((Tok::Tilde, _)) => {
                self.at += 1;
                let pattern = self.pattern()?;
                self.depth = 1;
                Ok(Expr::Match { field, pattern })
            }
            _ if field.is_scope() => self.fail(format!(
                "expected `~` after `{name}` (it is text: `{name} ~ \"…\"`)"
            )),
            _ => {
                self.depth = 1;
                Ok(Expr::Truthy(field))
            }
        }
    }

    fn literal(&mut self, after: &str) -> Result<Lit, ParseError> {
        let lit = match self.peek() {
            Some((Tok::Num(_, Some(i)), _)) => Lit::Int(*i),
            Some((Tok::Num(n, None), _)) => Lit::Num(*n),
            Some((Tok::Str(s), _)) => Lit::Str(s.clone()),
            Some((Tok::True, _)) => Lit::Bool(true),
            Some((Tok::False, _)) => Lit::Bool(false),
            Some((Tok::Null, _)) => Lit::Null,
            _ => return self.fail(format!("expected a value after `{after}`")),
        };
        self.at += 1;
        Ok(lit)
    }

    fn pattern(&mut self) -> Result<Pattern, ParseError> {
        let column = self.here();
        match self.next() {
            Some((Tok::Str(s), _)) => Ok(Pattern::Substring(s)),
            // The flag written into the pattern, so that the prefilter's parse of `as_str()` sees it.
            Some((Tok::Regex { source, flags }, _)) => {
                regex::RegexBuilder::new(&if flags.contains('i') {
                    format!("(?i){source}")
                } else {
                    source
                })
                .size_limit(1 << 22)
                .build()
                .map(Pattern::Regex)
                .map_err(|e| ParseError {
                    column,
                    message: format!("the regex does not compile: {}", first_line(&e.to_string())),
                })
            }
            _ => {
                self.at -= 1;
                self.fail("expected a string or /regex/ after `~`".into())
            }
        }
    }
}

fn first_line(s: &str) -> String {
    s.lines()
        .filter(|l| l.starts_with("error:"))
        .map(|l| l.trim_start_matches("error:").trim().to_string())
        .next()
        .unwrap_or_else(|| s.lines().last().unwrap_or(s).trim().to_string())
}
