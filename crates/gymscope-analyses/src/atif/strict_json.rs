//! JSON read as NeMo Gym v0.7.0 reads it at its ATIF boundaries (`nemo_gym/atif_json.py`,
//! `strict_json_loads` and `json_values_equal`): a duplicate key, a number outside the finite
//! float range, a float that underflows to zero or one whose digits a float cannot hold exactly
//! (`0.10000000000000000001`) make the text invalid. One difference, on purpose: an integer
//! beyond 64 bits (which Python keeps exactly and serde_json would round) is refused by name
//! rather than carried.

use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};
use std::fmt;

/// Why a text is not strict JSON. `Invalid` is upstream's (`invalid JSON`); `WideInteger` ours.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StrictError {
    Invalid(String),
    WideInteger(String),
}

impl fmt::Display for StrictError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StrictError::Invalid(why) => write!(f, "invalid JSON ({why})"),
            StrictError::WideInteger(n) => {
                write!(
                    f,
                    "the integer {n} does not fit in 64 bits (gymscope keeps integers to 64 bits)"
                )
            }
        }
    }
}

/// Parses `text` strictly (see the module's note). Nesting is bounded by serde_json's limit.
pub fn parse(text: &str) -> Result<Value, StrictError> {
    check_numbers(text)?;
    let mut de = serde_json::Deserializer::from_str(text);
    let value = StrictSeed
        .deserialize(&mut de)
        .map_err(|e| StrictError::Invalid(e.to_string()))?;
    de.end().map_err(|e| StrictError::Invalid(e.to_string()))?;
    Ok(value)
}

/// Checks every number token outside strings: finite, no underflow, exact, at most 64 bits.
fn check_numbers(text: &str) -> Result<(), StrictError> {
    let b = text.as_bytes();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'"' => {
                i += 1;
                while i < b.len() && b[i] != b'"' {
                    i += if b[i] == b'\\' { 2 } else { 1 };
                }
                i += 1;
            }
            b'-' | b'0'..=b'9' => {
                let start = i;
                while i < b.len() && matches!(b[i], b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9')
                {
                    i += 1;
                }
                check_number(&text[start..i])?;
            }
            _ => i += 1,
        }
    }
    Ok(())
}

fn check_number(token: &str) -> Result<(), StrictError> {
    if !token.contains(['.', 'e', 'E']) {
        let fits = token.parse::<i64>().is_ok() || token.parse::<u64>().is_ok();
        // A malformed token is left to the parser, which names it.
        let digits = token.trim_start_matches('-');
        if !fits && !digits.is_empty() && digits.bytes().all(|c| c.is_ascii_digit()) {
            return Err(StrictError::WideInteger(token.to_string()));
        }
        return Ok(());
    }
    let Ok(parsed) = token.parse::<f64>() else {
        return Ok(());
    };
    if !parsed.is_finite() {
        return Err(StrictError::Invalid(format!(
            "JSON number {token} exceeds the finite float range"
        )));
    }
    let significand = token.split(['e', 'E']).next().unwrap_or("");
    if parsed == 0.0 {
        return if significand.bytes().any(|c| (b'1'..=b'9').contains(&c)) {
            Err(StrictError::Invalid(format!(
                "JSON number {token} underflows the finite float range"
            )))
        } else {
            Ok(())
        };
    }
    let shortest = ryu::Buffer::new().format_finite(parsed).to_string();
    if decimal_value(token) != decimal_value(&shortest) {
        return Err(StrictError::Invalid(format!(
            "JSON number {token} cannot be represented without precision loss"
        )));
    }
    Ok(())
}

/// A decimal number's exact value as (negative, significant digits, exponent of the last digit):
/// equal for equal values (`1.50` and `1.5e0`), as Python's `Decimal` compares them.
fn decimal_value(text: &str) -> (bool, String, i64) {
    let (negative, text) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    let (mantissa, exp) = match text.split_once(['e', 'E']) {
        Some((m, e)) => (m, e.trim_start_matches('+').parse::<i64>().unwrap_or(0)),
        None => (text, 0),
    };
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let digits: String = format!("{int}{frac}");
    let mut exp = exp - frac.len() as i64;
    let trimmed_end = digits.trim_end_matches('0');
    exp += (digits.len() - trimmed_end.len()) as i64;
    let sig = trimmed_end.trim_start_matches('0').to_string();
    (negative, sig, exp)
}

/// Builds a `Value` as serde_json does, but refuses an object's repeated key.
struct StrictSeed;

impl<'de> DeserializeSeed<'de> for StrictSeed {
    type Value = Value;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(StrictVisitor)
    }
}

struct StrictVisitor;

impl<'de> Visitor<'de> for StrictVisitor {
    type Value = Value;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Value, E> {
        Number::from_f64(v)
            .map(Value::Number)
            .ok_or_else(|| E::custom("non-finite number"))
    }
    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_string()))
    }
    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut out = Vec::new();
        while let Some(v) = seq.next_element_seed(StrictSeed)? {
            out.push(v);
        }
        Ok(Value::Array(out))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut out = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            let v = map.next_value_seed(StrictSeed)?;
            if out.contains_key(&key) {
                return Err(de::Error::custom(format!(
                    "duplicate object key {}",
                    crate::gym::py::str_repr(&key)
                )));
            }
            out.insert(key, v);
        }
        Ok(Value::Object(out))
    }
}

/// `json_values_equal`: JSON equality in which `1 == 1.0` but `true != 1`, and key order does
/// not count.
pub fn values_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Null, Value::Null) => true,
        (Value::Bool(x), Value::Bool(y)) => x == y,
        (Value::Number(x), Value::Number(y)) => numbers_equal(x, y),
        (Value::String(x), Value::String(y)) => x == y,
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| values_equal(p, q))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| values_equal(v, w)))
        }
        _ => false,
    }
}

fn numbers_equal(x: &Number, y: &Number) -> bool {
    let int = |n: &Number| {
        n.as_i64()
            .map(i128::from)
            .or_else(|| n.as_u64().map(i128::from))
    };
    match (int(x), int(y)) {
        (Some(p), Some(q)) => p == q,
        // Python compares an int with a float exactly.
        (Some(i), None) | (None, Some(i)) => {
            let f = if x.is_f64() { x.as_f64() } else { y.as_f64() }.unwrap_or(f64::NAN);
            f.fract() == 0.0 && f.abs() < 1.8e19 && f as i128 == i
        }
        (None, None) => x.as_f64() == y.as_f64(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn refuses_what_upstream_refuses() {
        assert!(parse(r#"{"a": 1, "a": 2}"#).is_err());
        assert!(parse(r#"{"a": {"b": 1, "b": 1}}"#).is_err());
        assert!(parse("1e400").is_err());
        assert!(parse("1e-400").is_err());
        assert!(parse("0.10000000000000000001").is_err());
        assert!(parse("NaN").is_err());
        assert_eq!(
            parse("123456789012345678901234"),
            Err(StrictError::WideInteger("123456789012345678901234".into()))
        );
    }

    #[test]
    fn keeps_what_upstream_keeps() {
        for ok in [
            "0.0",
            "-0.0",
            "0e5",
            "1.50",
            "1.5e0",
            "1e16",
            "0.1",
            "1796417685.0597594",
            "18446744073709551615",
            "-9223372036854775808",
            r#""1e400 \" 0.10000000000000000001""#,
        ] {
            assert!(parse(ok).is_ok(), "{ok}");
        }
        assert_eq!(
            parse(r#"{"b": 1, "a": [true]}"#).unwrap(),
            json!({"b": 1, "a": [true]})
        );
    }

    #[test]
    fn equality_is_pythons() {
        assert!(values_equal(&json!(1), &json!(1.0)));
        assert!(!values_equal(&json!(true), &json!(1)));
        assert!(values_equal(
            &json!({"a": 1, "b": 2}),
            &json!({"b": 2, "a": 1})
        ));
        assert!(!values_equal(&json!({"a": 1}), &json!({"a": 1, "b": null})));
        assert!(!values_equal(&json!(null), &json!(0)));
    }
}
