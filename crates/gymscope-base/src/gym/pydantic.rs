//! Pydantic's rules as upstream's models apply them to JSON (pydantic 2.13 and pydantic-core
//! 2.46, upstream's `uv.lock`; the coercions as pydantic-core's `input_json.rs` and
//! `shared.rs` write them): the lax coercions of a scalar field (`"5"` is an int) and the
//! rules of a model's fields (`extra="forbid"`, required fields, literals, lists). Messages name
//! the field's place (`ng_trajectory.turns[0].turn_no: field required`); the wording is ours.

use crate::json::{number_to_num, Num};
use serde_json::{Map, Value};

/// A validation's result: the error is the field's place and what is wrong there.
pub type R<T> = Result<T, String>;

/// A scalar as Pydantic's lax mode sees it, from whichever JSON tree holds it (a
/// `serde_json::Value`, or the pivot validator's tree).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Scalar<'a> {
    Bool(bool),
    Num(Num),
    Str(&'a str),
    /// Null, a list or an object: no scalar coercion takes it.
    Other,
}

impl<'a> From<&'a Value> for Scalar<'a> {
    fn from(v: &'a Value) -> Self {
        match v {
            Value::Bool(b) => Scalar::Bool(*b),
            Value::Number(n) => Scalar::Num(number_to_num(n)),
            Value::String(s) => Scalar::Str(s),
            _ => Scalar::Other,
        }
    }
}

/// Pydantic's lax bool from a string (`str_as_bool`): the words for true and false, in any case.
pub fn str_as_bool(s: &str) -> Option<bool> {
    match s.to_ascii_lowercase().as_str() {
        "0" | "off" | "f" | "false" | "n" | "no" => Some(false),
        "1" | "on" | "t" | "true" | "y" | "yes" => Some(true),
        _ => None,
    }
}

/// pydantic-core's `float_as_int`: a float without a fraction, strictly inside i64's range.
fn float_as_int(f: f64) -> Option<i64> {
    (f.fract() == 0.0 && (i64::MIN as f64) < f && f < (i64::MAX as f64)).then_some(f as i64)
}

/// Pydantic's lax bool (pydantic-core's `validate_bool`): a bool, the integer 0 or 1, a float
/// that is 0.0 or 1.0, or a string [`str_as_bool`] reads.
pub fn lax_bool<'a>(v: impl Into<Scalar<'a>>) -> Option<bool> {
    match v.into() {
        Scalar::Bool(b) => Some(b),
        Scalar::Num(Num::Int(i)) => int_as_bool(i),
        Scalar::Num(Num::Float(f)) => float_as_int(f).and_then(int_as_bool),
        Scalar::Str(s) => str_as_bool(s),
        Scalar::Num(Num::UInt(_)) | Scalar::Other => None,
    }
}

fn int_as_bool(i: i64) -> Option<bool> {
    match i {
        0 => Some(false),
        1 => Some(true),
        _ => None,
    }
}

/// Pydantic's lax int (`validate_int`): an integer (of any size), a bool, a float without a
/// fraction inside i64's range, or a string of an integer.
pub fn lax_int<'a>(v: impl Into<Scalar<'a>>) -> Option<i128> {
    match v.into() {
        Scalar::Bool(b) => Some(i128::from(b)),
        Scalar::Num(Num::Int(i)) => Some(i128::from(i)),
        Scalar::Num(Num::UInt(u)) => Some(i128::from(u)),
        Scalar::Num(Num::Float(f)) => float_as_int(f).map(i128::from),
        Scalar::Str(s) => s.trim().parse::<i64>().ok().map(i128::from),
        Scalar::Other => None,
    }
}

/// Pydantic's lax float (`validate_float`): a number, a bool, or a numeric string.
pub fn lax_float<'a>(v: impl Into<Scalar<'a>>) -> Option<f64> {
    match v.into() {
        Scalar::Bool(b) => Some(f64::from(u8::from(b))),
        Scalar::Num(n) => Some(n.as_f64()),
        Scalar::Str(s) => s.trim().parse().ok(),
        Scalar::Other => None,
    }
}

/// The value as a model (a JSON object).
pub fn object<'a>(v: &'a Value, at: &str) -> R<&'a Map<String, Value>> {
    v.as_object().ok_or_else(|| format!("{at}: not an object"))
}

/// Refuses keys the model does not declare (`extra="forbid"`).
pub fn only(m: &Map<String, Value>, at: &str, allowed: &[&str]) -> R<()> {
    match m.keys().find(|k| !allowed.contains(&k.as_str())) {
        Some(k) => Err(format!("{at}.{k}: extra inputs are not permitted")),
        None => Ok(()),
    }
}

/// A required `str` field.
pub fn req_str(m: &Map<String, Value>, at: &str, k: &str) -> R<String> {
    match m.get(k) {
        Some(Value::String(s)) => Ok(s.clone()),
        Some(_) => Err(format!("{at}.{k}: not a string")),
        None => Err(format!("{at}.{k}: field required")),
    }
}

/// An `Optional[str]` field.
pub fn opt_str(m: &Map<String, Value>, at: &str, k: &str) -> R<Option<String>> {
    match m.get(k) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err(format!("{at}.{k}: not a string")),
    }
}

/// An `Optional[int]` field, at least `min` when given ([`lax_int`]).
pub fn opt_int(m: &Map<String, Value>, at: &str, k: &str, min: Option<i64>) -> R<Option<i64>> {
    match m.get(k) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => {
            let i = lax_int(v)
                .and_then(|i| i64::try_from(i).ok())
                .ok_or_else(|| format!("{at}.{k}: not an integer"))?;
            if min.is_some_and(|min| i < min) {
                return Err(format!("{at}.{k}: below {}", min.unwrap_or(0)));
            }
            Ok(Some(i))
        }
    }
}

/// An `Optional[bool]` field ([`lax_bool`]).
pub fn opt_bool(m: &Map<String, Value>, at: &str, k: &str) -> R<Option<bool>> {
    match m.get(k) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => lax_bool(v)
            .map(Some)
            .ok_or_else(|| format!("{at}.{k}: not a boolean")),
    }
}

/// An `Optional[float]` field, not negative when `non_negative` ([`lax_float`]).
pub fn opt_float(m: &Map<String, Value>, at: &str, k: &str, non_negative: bool) -> R<Option<f64>> {
    match m.get(k) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => {
            let f = lax_float(v).ok_or_else(|| format!("{at}.{k}: not a number"))?;
            if non_negative && f < 0.0 {
                return Err(format!("{at}.{k}: below 0"));
            }
            Ok(Some(f))
        }
    }
}

/// A `Literal[...]` field with a default: absent (`None`), or one of `allowed`.
pub fn literal<'a>(
    m: &'a Map<String, Value>,
    at: &str,
    k: &str,
    allowed: &[&str],
) -> R<Option<&'a str>> {
    match m.get(k) {
        None => Ok(None),
        Some(Value::String(s)) if allowed.contains(&s.as_str()) => Ok(Some(s)),
        Some(_) => Err(format!("{at}.{k}: not one of {allowed:?}")),
    }
}

/// A `list` field with an empty default.
pub fn list<'a>(m: &'a Map<String, Value>, at: &str, k: &str) -> R<&'a [Value]> {
    match m.get(k) {
        None => Ok(&[]),
        Some(Value::Array(a)) => Ok(a),
        Some(_) => Err(format!("{at}.{k}: not a list")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn lax_bool_takes_what_pydantic_takes() {
        for (v, want) in [
            (json!(true), Some(true)),
            (json!(0), Some(false)),
            (json!(1), Some(true)),
            // pydantic-core: a float goes through `float_as_int`, then 0 or 1.
            (json!(1.0), Some(true)),
            (json!(0.0), Some(false)),
            (json!(-0.0), Some(false)),
            (json!(0.5), None),
            (json!(2.0), None),
            (json!(2), None),
            (json!("YES"), Some(true)),
            (json!("off"), Some(false)),
            (json!("maybe"), None),
            (json!(null), None),
            (json!([1]), None),
        ] {
            assert_eq!(lax_bool(&v), want, "{v}");
        }
    }

    #[test]
    fn lax_int_and_float_take_bools_and_whole_floats() {
        assert_eq!(lax_int(&json!(true)), Some(1));
        assert_eq!(lax_int(&json!(2.0)), Some(2));
        assert_eq!(lax_int(&json!(2.5)), None);
        assert_eq!(lax_int(&json!(1e19)), None, "outside i64: int_parsing_size");
        assert_eq!(lax_int(&json!(u64::MAX)), Some(i128::from(u64::MAX)));
        assert_eq!(lax_int(&json!(" 5 ")), Some(5));
        assert_eq!(lax_int(&json!("5.5")), None);
        assert_eq!(lax_float(&json!(false)), Some(0.0));
        assert_eq!(lax_float(&json!("1.5")), Some(1.5));
        assert_eq!(lax_float(&json!({})), None);
    }
}
