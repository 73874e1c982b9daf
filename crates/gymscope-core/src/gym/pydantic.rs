//! Pydantic's rules as upstream's models apply them to JSON (pydantic 2.13 and pydantic-core
//! 2.46, upstream's `uv.lock`): the lax coercions of a scalar field (`"5"` is an int) and the
//! rules of a model's fields (`extra="forbid"`, required fields, literals, lists). Messages name
//! the field's place (`ng_trajectory.turns[0].turn_no: field required`); the wording is ours.

use serde_json::{Map, Value};

/// A validation's result: the error is the field's place and what is wrong there.
pub(crate) type R<T> = Result<T, String>;

/// Pydantic's lax bool from a string (`str_as_bool`): the words for true and false, in any case.
pub fn str_as_bool(s: &str) -> Option<bool> {
    match s.to_ascii_lowercase().as_str() {
        "0" | "off" | "f" | "false" | "n" | "no" => Some(false),
        "1" | "on" | "t" | "true" | "y" | "yes" => Some(true),
        _ => None,
    }
}

/// Pydantic's lax bool: a bool, the integer 0 or 1, or a string [`str_as_bool`] reads.
pub fn lax_bool(v: &Value) -> Option<bool> {
    match v {
        Value::Bool(b) => Some(*b),
        Value::Number(n) => match n.as_i64() {
            Some(0) => Some(false),
            Some(1) => Some(true),
            _ => None,
        },
        Value::String(s) => str_as_bool(s),
        _ => None,
    }
}

/// Pydantic's lax int: an integer, a float without a fraction, a bool, or a string of one.
pub fn lax_int(v: &Value) -> Option<i64> {
    match v {
        Value::Bool(b) => Some(i64::from(*b)),
        Value::Number(n) => n.as_i64().or_else(|| {
            n.as_f64()
                .filter(|f| f.fract() == 0.0 && f.abs() < 9.2e18)
                .map(|f| f as i64)
        }),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

/// Pydantic's lax float: a number, a bool, or a numeric string.
pub fn lax_float(v: &Value) -> Option<f64> {
    match v {
        Value::Bool(b) => Some(f64::from(u8::from(*b))),
        Value::Number(n) => n.as_f64(),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

/// The value as a model (a JSON object).
pub(crate) fn object<'a>(v: &'a Value, at: &str) -> R<&'a Map<String, Value>> {
    v.as_object().ok_or_else(|| format!("{at}: not an object"))
}

/// Refuses keys the model does not declare (`extra="forbid"`).
pub(crate) fn only(m: &Map<String, Value>, at: &str, allowed: &[&str]) -> R<()> {
    match m.keys().find(|k| !allowed.contains(&k.as_str())) {
        Some(k) => Err(format!("{at}.{k}: extra inputs are not permitted")),
        None => Ok(()),
    }
}

/// A required `str` field.
pub(crate) fn req_str(m: &Map<String, Value>, at: &str, k: &str) -> R<String> {
    match m.get(k) {
        Some(Value::String(s)) => Ok(s.clone()),
        Some(_) => Err(format!("{at}.{k}: not a string")),
        None => Err(format!("{at}.{k}: field required")),
    }
}

/// An `Optional[str]` field.
pub(crate) fn opt_str(m: &Map<String, Value>, at: &str, k: &str) -> R<Option<String>> {
    match m.get(k) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err(format!("{at}.{k}: not a string")),
    }
}

/// An `Optional[int]` field, at least `min` when given ([`lax_int`]).
pub(crate) fn opt_int(
    m: &Map<String, Value>,
    at: &str,
    k: &str,
    min: Option<i64>,
) -> R<Option<i64>> {
    match m.get(k) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => {
            let i = lax_int(v).ok_or_else(|| format!("{at}.{k}: not an integer"))?;
            if min.is_some_and(|min| i < min) {
                return Err(format!("{at}.{k}: below {}", min.unwrap_or(0)));
            }
            Ok(Some(i))
        }
    }
}

/// An `Optional[float]` field, not negative when `non_negative` ([`lax_float`]).
pub(crate) fn opt_float(
    m: &Map<String, Value>,
    at: &str,
    k: &str,
    non_negative: bool,
) -> R<Option<f64>> {
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

/// A `Literal[...]` field with a default: absent, or one of `allowed`.
pub(crate) fn literal(m: &Map<String, Value>, at: &str, k: &str, allowed: &[&str]) -> R<()> {
    match m.get(k) {
        None => Ok(()),
        Some(Value::String(s)) if allowed.contains(&s.as_str()) => Ok(()),
        Some(_) => Err(format!("{at}.{k}: not one of {allowed:?}")),
    }
}

/// A `list` field with an empty default.
pub(crate) fn list<'a>(m: &'a Map<String, Value>, at: &str, k: &str) -> R<&'a [Value]> {
    match m.get(k) {
        None => Ok(&[]),
        Some(Value::Array(a)) => Ok(a),
        Some(_) => Err(format!("{at}.{k}: not a list")),
    }
}
