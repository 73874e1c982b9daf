//! Python's `json.dumps` with its defaults (`", "` and `": "` separators, `ensure_ascii`, floats
//! as `repr`), for the one place upstream stores JSON *text* inside a row: the seed that
//! `+num_repeats_add_seed` writes into `responses_create_params.metadata.extra_body`.

use serde_json::Value;
use std::fmt::Write;

pub fn dumps(v: &Value) -> String {
    let mut out = String::new();
    write_value(&mut out, v);
    out
}

fn write_value(out: &mut String, v: &Value) {
    match v {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => match (n.as_i64(), n.as_u64()) {
            (Some(i), _) => write!(out, "{i}").expect("String write"),
            (_, Some(u)) => write!(out, "{u}").expect("String write"),
            _ => out.push_str(&float_repr(n.as_f64().unwrap_or(f64::NAN))),
        },
        Value::String(s) => write_str(out, s),
        Value::Array(a) => {
            out.push('[');
            for (i, x) in a.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_value(out, x);
            }
            out.push(']');
        }
        Value::Object(o) => {
            out.push('{');
            for (i, (k, x)) in o.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_str(out, k);
                out.push_str(": ");
                write_value(out, x);
            }
            out.push('}');
        }
    }
}

/// A JSON string with everything outside ASCII escaped as `\uXXXX` (surrogate pairs beyond the
/// BMP), as `ensure_ascii=True` does.
fn write_str(out: &mut String, s: &str) {
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

/// Python's `repr(float)`: the shortest round-trip digits, positional for exponents -4..16,
/// else `d.ddde+XX`.
fn float_repr(f: f64) -> String {
    if f.is_nan() {
        return "NaN".into();
    }
    if f.is_infinite() {
        return if f > 0.0 { "Infinity" } else { "-Infinity" }.into();
    }
    let sci = format!("{f:e}"); // shortest round-trip: "-1.25e-5"
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_python_json_dumps() {
        let v: Value = serde_json::from_str(
            r#"{"seed": 3, "a": [1.5, 1e-05, 1e16, 100.0, 0.0001, true, null], "é": "x😀\n"}"#,
        )
        .unwrap();
        // python3 -c 'import json; print(json.dumps({"seed": 3, "a": [1.5, 1e-05, 1e16, 100.0, 0.0001, True, None], "é": "x😀\n"}))'
        assert_eq!(
            dumps(&v),
            r#"{"seed": 3, "a": [1.5, 1e-05, 1e+16, 100.0, 0.0001, true, null], "\u00e9": "x\ud83d\ude00\n"}"#
        );
        assert_eq!(float_repr(123456.789), "123456.789");
        assert_eq!(float_repr(-2.5e-7), "-2.5e-07");
        assert_eq!(float_repr(1.2345e20), "1.2345e+20");
        assert_eq!(float_repr(0.0), "0.0");
    }
}
