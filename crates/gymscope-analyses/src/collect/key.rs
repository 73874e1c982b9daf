//! Rollout keys `(_ng_task_index, _ng_rollout_index)` compared as Python compares dict keys, and
//! row parsing that reads numbers as orjson does.

use super::Row;
use crate::gym::keys::{ROLLOUT_INDEX, TASK_INDEX};
use serde_json::Value;
use std::fmt;

/// One half of a rollout key. Python's `1 == 1.0 == True` share one dict slot, so every integral
/// number (and bool) is an `Int`; anything else is kept as its compact JSON text.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum KeyPart {
    Int(i128),
    Other(String),
}

impl KeyPart {
    pub fn of(v: &Value) -> KeyPart {
        match v {
            Value::Bool(b) => KeyPart::Int(i128::from(*b)),
            Value::Number(n) => {
                if let Some(i) = n.as_i64() {
                    KeyPart::Int(i128::from(i))
                } else if let Some(u) = n.as_u64() {
                    KeyPart::Int(i128::from(u))
                } else {
                    let f = n.as_f64().unwrap_or(f64::NAN);
                    if f.fract() == 0.0 && f.abs() < 1e38 {
                        KeyPart::Int(f as i128)
                    } else {
                        KeyPart::Other(v.to_string())
                    }
                }
            }
            _ => KeyPart::Other(v.to_string()),
        }
    }
}

impl fmt::Display for KeyPart {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            KeyPart::Int(i) => write!(f, "{i}"),
            KeyPart::Other(s) => f.write_str(s),
        }
    }
}

/// `(task, rollout)`; ordered ints first, as upstream's sort orders the usual all-int keys.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RolloutKey(pub KeyPart, pub KeyPart);

impl RolloutKey {
    /// The row's key, or `None` when either index is missing.
    pub fn of(row: &Row) -> Option<RolloutKey> {
        Some(RolloutKey(
            KeyPart::of(row.get(TASK_INDEX)?),
            KeyPart::of(row.get(ROLLOUT_INDEX)?),
        ))
    }
}

impl fmt::Display for RolloutKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "({}, {})", self.0, self.1)
    }
}

/// Parses one JSON line as orjson would: like serde_json, except that the integer literal `-0`
/// is the integer 0 (serde_json makes it the float -0.0, which would print differently).
pub fn parse_value(line: &[u8]) -> Result<Value, serde_json::Error> {
    if memchr::memmem::find(line, b"-0").is_some() {
        if let Some(fixed) = crate::json::rewrite_negative_zero_ints(line) {
            return serde_json::from_slice(&fixed);
        }
    }
    serde_json::from_slice(line)
}

/// Parses a line that must be a JSON object; the error says what was wrong and at which column
/// (the caller names the file and line), in the words `gymscope profile` uses.
pub fn parse_row(line: &[u8]) -> Result<Row, String> {
    if let Err(e) = simdutf8::compat::from_utf8(line) {
        let column = String::from_utf8_lossy(&line[..e.valid_up_to()])
            .chars()
            .count()
            + 1;
        return Err(format!(
            "Malformed JSON at column {column}: invalid UTF-8 (the file must be UTF-8 text)"
        ));
    }
    match parse_value(line) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(other) => Err(format!(
            "expected a JSON object, found {}",
            kind_name(&other)
        )),
        Err(e) => {
            // serde_json ends with " at line 1 column N": the line is the caller's, so keep
            // only the column (in characters, as editors count).
            let message = e.to_string();
            let message = message
                .rfind(" at line ")
                .map_or(message.as_str(), |at| &message[..at]);
            let prefix = &line[..e.column().saturating_sub(1).min(line.len())];
            let column = String::from_utf8_lossy(prefix).chars().count() + 1;
            Err(format!("Malformed JSON at column {column}: {message}"))
        }
    }
}

pub fn kind_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a bool",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Compact orjson bytes of a value followed by `\n`: one JSONL line.
pub fn to_line<T: serde::Serialize + ?Sized>(value: &T) -> Vec<u8> {
    let mut out = Vec::with_capacity(256);
    crate::json::to_writer_orjson(&mut out, value).expect("writing to a Vec cannot fail");
    out.push(b'\n');
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn keys_compare_like_python() {
        assert_eq!(KeyPart::of(&json!(1)), KeyPart::of(&json!(1.0)));
        assert_eq!(KeyPart::of(&json!(1)), KeyPart::of(&json!(true)));
        assert_ne!(KeyPart::of(&json!(1)), KeyPart::of(&json!("1")));
        assert_eq!(KeyPart::of(&json!(1.5)), KeyPart::Other("1.5".into()));
        let row = parse_row(br#"{"_ng_task_index":3,"_ng_rollout_index":0}"#).unwrap();
        assert_eq!(RolloutKey::of(&row).unwrap().to_string(), "(3, 0)");
    }

    #[test]
    fn minus_zero_integer_is_zero_as_in_orjson() {
        let v = parse_value(br#"{"a":-0,"b":-0.0,"c":"-0"}"#).unwrap();
        assert_eq!(to_line(&v), b"{\"a\":0,\"b\":-0.0,\"c\":\"-0\"}\n".to_vec());
    }
}
