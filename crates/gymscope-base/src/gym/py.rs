//! Python's semantics of JSON values, as upstream's code applies them to a row: truthiness
//! (`if value:`), `repr` (upstream's messages print values with it: `'name'`, `None`, `1e+16`,
//! `['a', 'b']`) and `json.dumps` with its defaults.

use crate::json::{number_to_num, Num};
use serde_json::Value;
use std::fmt::Write;

/// `bool(value)`: false for `None`, `False`, zero, and empty text, lists and dicts.
pub fn truthy(v: &Value) -> bool {
    match v {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64() != Some(0.0),
        Value::String(s) => !s.is_empty(),
        Value::Array(a) => !a.is_empty(),
        Value::Object(o) => !o.is_empty(),
    }
}

/// The value when it is a string Python finds true (`isinstance(v, str) and v`).
pub fn truthy_str(v: &Value) -> Option<&str> {
    v.as_str().filter(|s| !s.is_empty())
}

/// `bool(s)` of an `Optional[str]`.
pub fn truthy_opt_str(s: Option<&str>) -> bool {
    s.is_some_and(|s| !s.is_empty())
}

/// A value Python's `repr` prints: a JSON value, or the pivot validator's tree of one.
pub trait Repr {
    fn write_repr(&self, out: &mut String);
}

/// `repr(value)` (`None`, `True`, `{'k': [1, 2.5]}`).
pub fn repr<T: Repr + ?Sized>(v: &T) -> String {
    let mut out = String::new();
    v.write_repr(&mut out);
    out
}

/// `repr(list)`: `[a, b]`.
pub fn write_list<'a, T: Repr + 'a>(out: &mut String, items: impl IntoIterator<Item = &'a T>) {
    write_seq(out, ('[', ']'), items, |out, item| item.write_repr(out));
}

/// `repr(dict)`: `{'k': v}`.
pub fn write_dict<'a, T: Repr + 'a>(
    out: &mut String,
    entries: impl IntoIterator<Item = (&'a str, &'a T)>,
) {
    write_seq(out, ('{', '}'), entries, |out, (k, item)| {
        out.push_str(&str_repr(k));
        out.push_str(": ");
        item.write_repr(out);
    });
}

/// Items between brackets, separated as Python separates them by default (`", "`).
fn write_seq<I>(
    out: &mut String,
    (open, close): (char, char),
    items: impl IntoIterator<Item = I>,
    mut write: impl FnMut(&mut String, I),
) {
    out.push(open);
    for (i, item) in items.into_iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        write(out, item);
    }
    out.push(close);
}

/// `repr(bool)`.
pub fn bool_repr(b: bool) -> &'static str {
    if b {
        "True"
    } else {
        "False"
    }
}

/// `repr(int)` or `repr(float)` of a JSON number.
pub fn num_repr(n: Num) -> String {
    match n {
        Num::Int(v) => v.to_string(),
        Num::UInt(v) => v.to_string(),
        Num::Float(v) => float_repr(v),
    }
}

impl Repr for Value {
    fn write_repr(&self, out: &mut String) {
        match self {
            Value::Null => out.push_str("None"),
            Value::Bool(b) => out.push_str(bool_repr(*b)),
            Value::Number(n) => out.push_str(&num_repr(number_to_num(n))),
            Value::String(s) => out.push_str(&str_repr(s)),
            Value::Array(items) => write_list(out, items),
            Value::Object(entries) => write_dict(out, entries.iter().map(|(k, v)| (k.as_str(), v))),
        }
    }
}

/// `repr(float)`: the shortest digits that read back to the same float, positional for
/// exponents -4 to 15 (`0.0001`, `1000000000000000.0`), else `d.ddde±XX` (`1e-05`, `1e+16`).
pub fn float_repr(f: f64) -> String {
    if f.is_nan() {
        return "nan".into();
    }
    if f.is_infinite() {
        return if f > 0.0 { "inf" } else { "-inf" }.into();
    }
    let sci = format!("{f:e}"); // the shortest round-trip digits: "-1.25e-5"
    let (mantissa, exp) = sci.split_once('e').expect("`{:e}` has an exponent");
    let exp: i32 = exp.parse().expect("integer exponent");
    let (sign, mantissa) = match mantissa.strip_prefix('-') {
        Some(m) => ("-", m),
        None => ("", mantissa),
    };
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    if (-4..16).contains(&exp) {
        let point = exp + 1; // digits before the decimal point
        if point <= 0 {
            format!("{sign}0.{}{digits}", "0".repeat((-point) as usize))
        } else if point as usize >= digits.len() {
            format!(
                "{sign}{digits}{}.0",
                "0".repeat(point as usize - digits.len())
            )
        } else {
            let (a, b) = digits.split_at(point as usize);
            format!("{sign}{a}.{b}")
        }
    } else {
        let (a, b) = digits.split_at(1);
        let frac = if b.is_empty() {
            String::new()
        } else {
            format!(".{b}")
        };
        format!(
            "{sign}{a}{frac}e{}{:02}",
            if exp < 0 { '-' } else { '+' },
            exp.abs()
        )
    }
}

/// `repr(str)`: single quotes unless the text has `'` and no `"`; escapes for backslash, the
/// quote, `\t \n \r` and characters that are not printable.
pub fn str_repr(s: &str) -> String {
    let quote = if s.contains('\'') && !s.contains('"') {
        '"'
    } else {
        '\''
    };
    let mut out = String::with_capacity(s.len() + 2);
    out.push(quote);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c if !is_printable(c) => {
                let n = c as u32;
                if n < 0x100 {
                    write!(out, "\\x{n:02x}").expect("String write");
                } else if n < 0x10000 {
                    write!(out, "\\u{n:04x}").expect("String write");
                } else {
                    write!(out, "\\U{n:08x}").expect("String write");
                }
            }
            c => out.push(c),
        }
    }
    out.push(quote);
    out
}

/// An approximation of `str.isprintable` without the Unicode database: controls, separators
/// other than space, format characters and private use are not printable.
fn is_printable(c: char) -> bool {
    let n = c as u32;
    !(n < 0x20
        || (0x7f..=0xa0).contains(&n)
        || n == 0xad
        || (0x2000..=0x200f).contains(&n)
        || (0x2028..=0x202f).contains(&n)
        || (0x205f..=0x206f).contains(&n)
        || n == 0x3000
        || n == 0xfeff
        || (0xfff9..=0xfffb).contains(&n)
        || (0xe000..=0xf8ff).contains(&n)
        || n >= 0xf0000)
}

/// `json.dumps(value)` with its defaults: `", "` and `": "` separators, `ensure_ascii`, floats
/// as `repr` (`NaN`, `Infinity` for the values JSON lacks). Upstream stores JSON *text* inside a
/// row in one place: the seed that `+num_repeats_add_seed` writes into
/// `responses_create_params.metadata.extra_body`.
pub fn json_dumps(v: &Value) -> String {
    let mut out = String::new();
    write_json(&mut out, v);
    out
}

fn write_json(out: &mut String, v: &Value) {
    match v {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => match (n.as_i64(), n.as_u64()) {
            (Some(i), _) => write!(out, "{i}").expect("String write"),
            (_, Some(u)) => write!(out, "{u}").expect("String write"),
            _ => match n.as_f64().unwrap_or(f64::NAN) {
                f if f.is_nan() => out.push_str("NaN"),
                f if f.is_infinite() => {
                    out.push_str(if f > 0.0 { "Infinity" } else { "-Infinity" });
                }
                f => out.push_str(&float_repr(f)),
            },
        },
        Value::String(s) => write_ascii_str(out, s),
        Value::Array(a) => write_seq(out, ('[', ']'), a, write_json),
        Value::Object(o) => write_seq(out, ('{', '}'), o, |out, (k, x)| {
            write_ascii_str(out, k);
            out.push_str(": ");
            write_json(out, x);
        }),
    }
}

/// A JSON string with everything outside ASCII escaped as `\uXXXX` (surrogate pairs beyond the
/// BMP), as `ensure_ascii=True` does.
fn write_ascii_str(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if (c as u32) < 0x20 || (c as u32) > 0x7e => {
                let mut units = [0u16; 2];
                for u in c.encode_utf16(&mut units) {
                    write!(out, "\\u{u:04x}").expect("String write");
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn truthiness() {
        assert!(!truthy(&json!(null)));
        assert!(!truthy(&json!(0)));
        assert!(!truthy(&json!(0.0)));
        assert!(!truthy(&json!("")));
        assert!(truthy(&json!("x")));
        assert!(truthy(&json!(true)));
        assert!(!truthy(&json!({})));
        assert!(!truthy(&json!([])));
        assert_eq!(truthy_str(&json!("id")), Some("id"));
        assert_eq!(truthy_str(&json!("")), None);
        assert_eq!(truthy_str(&json!(1)), None);
        assert!(!truthy_opt_str(Some("")) && !truthy_opt_str(None) && truthy_opt_str(Some("e")));
    }

    #[test]
    fn matches_python_repr() {
        assert_eq!(str_repr("auto"), "'auto'");
        assert_eq!(str_repr("it's"), "\"it's\"");
        assert_eq!(str_repr("a'b\"c"), "'a\\'b\"c'");
        assert_eq!(str_repr("tab\there\u{200b}"), "'tab\\there\\u200b'");
        assert_eq!(str_repr("naïve λ"), "'naïve λ'");
        assert_eq!(float_repr(1.5), "1.5");
        assert_eq!(float_repr(1e16), "1e+16");
        assert_eq!(float_repr(1e15), "1000000000000000.0");
        assert_eq!(float_repr(0.0001), "0.0001");
        assert_eq!(float_repr(0.00001), "1e-05");
        assert_eq!(float_repr(1.5e-7), "1.5e-07");
        assert_eq!(float_repr(-0.0), "-0.0");
        assert_eq!(float_repr(0.0), "0.0");
        assert_eq!(float_repr(123456.789), "123456.789");
        assert_eq!(float_repr(-2.5e-7), "-2.5e-07");
        assert_eq!(float_repr(1.2345e20), "1.2345e+20");
        assert_eq!(float_repr(f64::NAN), "nan");
        assert_eq!(float_repr(f64::NEG_INFINITY), "-inf");
        // python3 -c 'print(repr({"t": 0.5, "n": None, "l": [1, True, 1e16], "s": "it\x27s"}))'
        assert_eq!(
            repr(&json!({"t": 0.5, "n": null, "l": [1, true, 1e16], "s": "it's"})),
            r#"{'t': 0.5, 'n': None, 'l': [1, True, 1e+16], 's': "it's"}"#
        );
    }

    #[test]
    fn matches_python_json_dumps() {
        let v: Value = serde_json::from_str(
            r#"{"seed": 3, "a": [1.5, 1e-05, 1e16, 100.0, 0.0001, true, null], "é": "x😀\n"}"#,
        )
        .unwrap();
        // python3 -c 'import json; print(json.dumps({"seed": 3, "a": [1.5, 1e-05, 1e16, 100.0, 0.0001, True, None], "é": "x😀\n"}))'
        assert_eq!(
            json_dumps(&v),
            r#"{"seed": 3, "a": [1.5, 1e-05, 1e+16, 100.0, 0.0001, true, null], "\u00e9": "x\ud83d\ude00\n"}"#
        );
    }
}
