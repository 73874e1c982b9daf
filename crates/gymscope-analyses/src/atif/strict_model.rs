//! Pydantic's strict mode on one JSON object (`model_validate(..., strict=True)`, as NeMo Gym
//! v0.7.0's ATIF export validates a trajectory): a `str` field takes only a string, an `int`
//! only an integer (not a bool, not a float), a `float` an integer or a float (kept as a
//! float), a `bool` only a bool; with `extra="forbid"` an unknown key fails. Errors name the
//! field's place; upstream's own message for any of them is the caller's.

use serde_json::{Map, Value};

/// A field's place and what is wrong there.
pub type Invalid = String;

/// One object being validated: its map and its place (`ng_trajectory.turns[0]`).
pub struct Fields<'a> {
    pub map: &'a Map<String, Value>,
    pub path: String,
}

/// `value` as an object, or an error naming `path`.
pub fn object<'a>(value: &'a Value, path: &str) -> Result<Fields<'a>, Invalid> {
    match value {
        Value::Object(map) => Ok(Fields {
            map,
            path: path.to_string(),
        }),
        _ => Err(format!("{path}: expected an object")),
    }
}

/// `value` as a list, or an error naming `path`.
pub fn list<'a>(value: &'a Value, path: &str) -> Result<&'a [Value], Invalid> {
    match value {
        Value::Array(items) => Ok(items),
        _ => Err(format!("{path}: expected a list")),
    }
}

impl<'a> Fields<'a> {
    pub fn at(&self, key: &str) -> String {
        format!("{}.{key}", self.path)
    }

    /// The field, absent and null alike as `None`.
    pub fn get(&self, key: &str) -> Option<&'a Value> {
        self.map.get(key).filter(|v| !v.is_null())
    }

    /// The field as given (null when absent): an `Any` field.
    pub fn any(&self, key: &str) -> Value {
        self.map.get(key).cloned().unwrap_or(Value::Null)
    }

    /// `extra="forbid"`: every key is one of `allowed`.
    pub fn forbid_extra(&self, allowed: &[&str]) -> Result<(), Invalid> {
        match self.map.keys().find(|k| !allowed.contains(&k.as_str())) {
            Some(k) => Err(format!("{}: unexpected field {k:?}", self.path)),
            None => Ok(()),
        }
    }

    pub fn req_str(&self, key: &str) -> Result<&'a str, Invalid> {
        match self.map.get(key) {
            Some(Value::String(s)) => Ok(s),
            Some(_) => Err(format!("{}: expected a string", self.at(key))),
            None => Err(format!("{}: field required", self.at(key))),
        }
    }

    pub fn opt_str(&self, key: &str) -> Result<Option<&'a str>, Invalid> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(_) => Err(format!("{}: expected a string", self.at(key))),
        }
    }

    pub fn opt_bool(&self, key: &str) -> Result<Option<bool>, Invalid> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(*b)),
            Some(_) => Err(format!("{}: expected a bool", self.at(key))),
        }
    }

    /// An `int` field (with `ge=0` when `non_negative`).
    pub fn opt_int(&self, key: &str, non_negative: bool) -> Result<Option<i64>, Invalid> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::Number(n)) if !n.is_f64() => match n.as_i64() {
                Some(i) if non_negative && i < 0 => {
                    Err(format!("{}: must be at least 0", self.at(key)))
                }
                Some(i) => Ok(Some(i)),
                None => Err(format!("{}: integer out of range", self.at(key))),
            },
            Some(_) => Err(format!("{}: expected an integer", self.at(key))),
        }
    }

    pub fn req_int(&self, key: &str, min: i64) -> Result<i64, Invalid> {
        match self.opt_int(key, false)? {
            Some(i) if i < min => Err(format!("{}: must be at least {min}", self.at(key))),
            Some(i) => Ok(i),
            None if self.map.contains_key(key) => {
                Err(format!("{}: expected an integer", self.at(key)))
            }
            None => Err(format!("{}: field required", self.at(key))),
        }
    }

    /// A `float` field: an integer is taken and becomes a float, as Pydantic's strict float.
    pub fn opt_float(&self, key: &str, non_negative: bool) -> Result<Option<f64>, Invalid> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::Number(n)) => {
                let f = n.as_f64().unwrap_or(f64::NAN);
                if non_negative && f < 0.0 {
                    return Err(format!("{}: must be at least 0", self.at(key)));
                }
                Ok(Some(f))
            }
            Some(_) => Err(format!("{}: expected a number", self.at(key))),
        }
    }

    pub fn req_float(&self, key: &str) -> Result<f64, Invalid> {
        match self.opt_float(key, false)? {
            Some(f) => Ok(f),
            None if self.map.contains_key(key) => {
                Err(format!("{}: expected a number", self.at(key)))
            }
            None => Err(format!("{}: field required", self.at(key))),
        }
    }

    /// A `Literal[...]` field with a default (`None` for an `Optional` one).
    pub fn literal(
        &self,
        key: &str,
        allowed: &[&str],
        default: Option<&'static str>,
    ) -> Result<Option<String>, Invalid> {
        match self.map.get(key) {
            None => Ok(default.map(str::to_string)),
            Some(Value::Null) if default.is_none() => Ok(None),
            Some(Value::String(s)) if allowed.contains(&s.as_str()) => Ok(Some(s.clone())),
            Some(_) => Err(format!("{}: expected one of {allowed:?}", self.at(key))),
        }
    }

    /// A list field with a default of `[]`.
    pub fn opt_list(&self, key: &str) -> Result<&'a [Value], Invalid> {
        match self.map.get(key) {
            None => Ok(&[]),
            Some(v) => list(v, &self.at(key)),
        }
    }
}

/// Builds a dumped object from `(key, value)` pairs in the model's field order, leaving out the
/// nulls (`model_dump(mode="json", exclude_none=True)`).
pub fn dump(fields: Vec<(&str, Value)>) -> Value {
    Value::Object(
        fields
            .into_iter()
            .filter(|(_, v)| !v.is_null())
            .map(|(k, v)| (k.to_string(), v))
            .collect(),
    )
}

/// An optional float as its dump holds it.
pub fn float_value(f: Option<f64>) -> Value {
    f.and_then(serde_json::Number::from_f64)
        .map_or(Value::Null, Value::Number)
}

/// Python's `str.strip()` leaves nothing: every character is whitespace as `str.isspace` has it.
pub fn is_blank(s: &str) -> bool {
    s.chars()
        .all(|c| c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c))
}
