//! Python's `repr` of JSON values, as upstream's validator messages print them
//! (`'name'`, `None`, `1e+16`, `['a', 'b']`).

use super::tree::{Json, Kind};
use crate::json::Num;

pub fn repr(v: &Json) -> String {
    let mut out = String::new();
    write_repr(&mut out, v);
    out
}

fn write_repr(out: &mut String, v: &Json) {
    match v {
        Json::Null | Json::Skipped(Kind::Null) => out.push_str("None"),
        Json::Bool(b) => out.push_str(if *b { "True" } else { "False" }),
        Json::Num(n) => out.push_str(&num_repr(*n)),
        Json::Str(s) => out.push_str(&str_repr(s)),
        Json::Arr(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_repr(out, item);
            }
            out.push(']');
        }
        Json::Obj(entries) => {
            out.push('{');
            for (i, (k, item)) in entries.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                out.push_str(&str_repr(k));
                out.push_str(": ");
                write_repr(out, item);
            }
            out.push('}');
        }
        Json::Skipped(kind) => out.push_str(match kind {
            Kind::Bool => "<bool>",
            Kind::Num => "<number>",
            Kind::Str => "<string>",
            Kind::Arr(_) => "[...]",
            Kind::Obj(_) => "{...}",
            Kind::Null => "None",
        }),
    }
}

pub fn num_repr(n: Num) -> String {
    match n {
        Num::Int(v) => v.to_string(),
        Num::UInt(v) => v.to_string(),
        Num::Float(v) => float_repr(v),
    }
}

/// Python's `repr(float)`: shortest round-trip digits; scientific below 1e-4 and from 1e16.
pub fn float_repr(v: f64) -> String {
    if v.is_nan() {
        return "nan".into();
    }
    if v.is_infinite() {
        return if v > 0.0 { "inf".into() } else { "-inf".into() };
    }
    let sci = format!("{v:e}"); // shortest digits, e.g. "1.5e-5"
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    if v == 0.0 || (-4..16).contains(&exp) {
        let fixed = format!("{v}");
        if fixed.contains('.') {
            fixed
        } else {
            format!("{fixed}.0")
        }
    } else {
        format!(
            "{mantissa}e{}{:02}",
            if exp < 0 { '-' } else { '+' },
            exp.abs()
        )
    }
}

/// Python's `repr(str)`: single quotes unless the text has `'` and no `"`; escapes for
/// backslash, the quote, `\t \n \r` and non-printable characters.
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
                    out.push_str(&format!("\\x{n:02x}"));
                } else if n < 0x10000 {
                    out.push_str(&format!("\\u{n:04x}"));
                } else {
                    out.push_str(&format!("\\U{n:08x}"));
                }
            }
            c => out.push(c),
        }
    }
    out.push(quote);
    out
}

/// An approximation of Python's `str.isprintable` without the Unicode database: controls,
/// separators other than space, format characters and private use are not printable.
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::borrow::Cow;

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
        let list = Json::Arr(vec![
            Json::Str(Cow::Borrowed("a")),
            Json::Null,
            Json::Bool(true),
            Json::Num(Num::Int(3)),
        ]);
        assert_eq!(repr(&list), "['a', None, True, 3]");
        let obj = Json::Obj(vec![(
            Cow::Borrowed("type"),
            Json::Str(Cow::Borrowed("function")),
        )]);
        assert_eq!(repr(&obj), "{'type': 'function'}");
    }
}
