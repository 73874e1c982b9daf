//! The expression's tokens, each with its 1-based column (in characters, as an editor counts).

use super::ParseError;

#[derive(Clone, Debug, PartialEq)]
pub(super) enum Tok {
    /// A name: letters, digits, `_` and `.` (`usage.output_tokens`), or a backticked name.
    Name {
        text: String,
        quoted: bool,
    },
    Str(String),
    /// A number, with its exact value when written as an integer (`9007199254740993` is not
    /// the float it rounds to).
    Num(f64, Option<i128>),
    /// `/source/flags`.
    Regex {
        source: String,
        flags: String,
    },
    Op(Op),
    Tilde,
    Open,
    Close,
    And,
    Or,
    Not,
    True,
    False,
    Null,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

impl Op {
    pub fn as_str(self) -> &'static str {
        match self {
            Op::Eq => "==",
            Op::Ne => "!=",
            Op::Lt => "<",
            Op::Le => "<=",
            Op::Gt => ">",
            Op::Ge => ">=",
        }
    }
}

impl Tok {
    /// How a message names the token.
    pub(super) fn describe(&self) -> String {
        match self {
            Tok::Name { text, .. } => format!("`{text}`"),
            Tok::Str(s) => format!("the string {s:?}"),
            Tok::Num(n, _) => format!("the number {n}"),
            Tok::Regex { source, .. } => format!("the regex /{source}/"),
            Tok::Op(op) => format!("`{}`", op.as_str()),
            Tok::Tilde => "`~`".into(),
            Tok::Open => "`(`".into(),
            Tok::Close => "`)`".into(),
            Tok::And => "`and`".into(),
            Tok::Or => "`or`".into(),
            Tok::Not => "`not`".into(),
            Tok::True => "`true`".into(),
            Tok::False => "`false`".into(),
            Tok::Null => "`null`".into(),
        }
    }
}

/// `s` as a string literal of the language (`"` and `\` escaped, newlines as `\n`): how a
/// filter set by a click writes a name into a query.
pub fn string_literal(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// The tokens of `text`, each with its column.
pub(super) fn tokens(text: &str) -> Result<Vec<(Tok, usize)>, ParseError> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    let err = |column: usize, message: String| ParseError { column, message };
    while i < chars.len() {
        let c = chars[i];
        let column = i + 1;
        if c.is_whitespace() {
            i += 1;
            continue;
        }
        let two = chars.get(i + 1).copied();
        let tok = match c {
            '(' => Tok::Open,
            ')' => Tok::Close,
            '~' => Tok::Tilde,
            '=' if two == Some('=') => Tok::Op(Op::Eq),
            '!' if two == Some('=') => Tok::Op(Op::Ne),
            '<' if two == Some('=') => Tok::Op(Op::Le),
            '>' if two == Some('=') => Tok::Op(Op::Ge),
            '<' => Tok::Op(Op::Lt),
            '>' => Tok::Op(Op::Gt),
            '=' => return Err(err(column, "`=` alone: write `==` to compare".into())),
            '!' => return Err(err(column, "`!` alone: write `!=` or `not`".into())),
            '&' | '|' => {
                return Err(err(
                    column,
                    format!("`{c}` is not an operator: write `and` or `or`"),
                ))
            }
            '"' | '\'' => {
                let (s, end) = string(&chars, i, c).map_err(|m| err(column, m))?;
                out.push((Tok::Str(s), column));
                i = end;
                continue;
            }
            '/' => {
                let (source, flags, end) = regex(&chars, i).map_err(|m| err(column, m))?;
                out.push((Tok::Regex { source, flags }, column));
                i = end;
                continue;
            }
            '`' => {
                let Some(len) = chars[i + 1..].iter().position(|&c| c == '`') else {
                    return Err(err(
                        column,
                        "a backticked name without its closing `".into(),
                    ));
                };
                let text: String = chars[i + 1..i + 1 + len].iter().collect();
                if text.is_empty() {
                    return Err(err(column, "an empty backticked name".into()));
                }
                out.push((Tok::Name { text, quoted: true }, column));
                i += len + 2;
                continue;
            }
            c if c.is_ascii_digit()
                || (c == '-' && two.is_some_and(|d| d.is_ascii_digit() || d == '.'))
                || (c == '.' && two.is_some_and(|d| d.is_ascii_digit())) =>
            {
                let mut end = i + 1;
                while end < chars.len()
                    && (chars[end].is_ascii_alphanumeric()
                        || chars[end] == '.'
                        || ((chars[end] == '-' || chars[end] == '+')
                            && matches!(chars[end - 1], 'e' | 'E')))
                {
                    end += 1;
                }
                let text: String = chars[i..end].iter().collect();
                let n = text
                    .parse::<f64>()
                    .ok()
                    .filter(|n| n.is_finite())
                    .ok_or_else(|| err(column, format!("`{text}` is not a number")))?;
                let exact = text.parse::<i128>().ok();
                out.push((Tok::Num(n, exact), column));
                i = end;
                continue;
            }
            c if c.is_alphabetic() || c == '_' => {
                let mut end = i + 1;
                while end < chars.len()
                    && (chars[end].is_alphanumeric() || chars[end] == '_' || chars[end] == '.')
                {
                    end += 1;
                }
                let text: String = chars[i..end].iter().collect();
                let tok = match text.as_str() {
                    "and" => Tok::And,
                    "or" => Tok::Or,
                    "not" => Tok::Not,
                    "true" => Tok::True,
                    "false" => Tok::False,
                    "null" => Tok::Null,
                    _ => {
                        if text.ends_with('.') || text.contains("..") {
                            return Err(err(
                                column,
                                format!("`{text}`: a dot must join two names"),
                            ));
                        }
                        Tok::Name {
                            text,
                            quoted: false,
                        }
                    }
                };
                out.push((tok, column));
                i = end;
                continue;
            }
            other => return Err(err(column, format!("unexpected `{other}`"))),
        };
        let width = match tok {
            Tok::Op(Op::Eq | Op::Ne | Op::Le | Op::Ge) => 2,
            _ => 1,
        };
        out.push((tok, column));
        i += width;
    }
    Ok(out)
}

/// A string literal from the quote at `i`: `\"`, `\\`, `\n`, `\t` and `\'` escapes.
fn string(chars: &[char], i: usize, quote: char) -> Result<(String, usize), String> {
    let mut s = String::new();
    let mut j = i + 1;
    while j < chars.len() {
        match chars[j] {
            c if c == quote => return Ok((s, j + 1)),
            '\\' => {
                let e = chars.get(j + 1).ok_or("a string ends in `\\`")?;
                s.push(match e {
                    'n' => '\n',
                    't' => '\t',
                    'r' => '\r',
                    '\\' | '"' | '\'' => *e,
                    other => return Err(format!("unknown escape `\\{other}` in a string")),
                });
                j += 2;
            }
            c => {
                s.push(c);
                j += 1;
            }
        }
    }
    Err("a string without its closing quote".into())
}

/// A regex literal from the slash at `i`: `\/` is a slash; flags follow the closing slash.
fn regex(chars: &[char], i: usize) -> Result<(String, String, usize), String> {
    let mut source = String::new();
    let mut j = i + 1;
    while j < chars.len() {
        match chars[j] {
            '/' => {
                let mut end = j + 1;
                let mut flags = String::new();
                while end < chars.len() && chars[end].is_ascii_alphabetic() {
                    flags.push(chars[end]);
                    end += 1;
                }
                if let Some(bad) = flags.chars().find(|&f| f != 'i') {
                    return Err(format!("unknown regex flag `{bad}` (the flag is `i`)"));
                }
                return Ok((source, flags, end));
            }
            '\\' if chars.get(j + 1) == Some(&'/') => {
                source.push('/');
                j += 2;
            }
            '\\' => {
                source.push('\\');
                if let Some(&c) = chars.get(j + 1) {
                    source.push(c);
                }
                j += 2;
            }
            c => {
                source.push(c);
                j += 1;
            }
        }
    }
    Err("a regex without its closing `/`".into())
}
