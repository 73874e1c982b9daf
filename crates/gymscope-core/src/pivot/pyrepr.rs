//! Python's `repr` of JSON values, as upstream's validator messages print them
//! (`'name'`, `None`, `1e+16`, `['a', 'b']`).

use super::tree::{Json, Kind};
use crate::gym::py::{float_repr, str_repr};
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
