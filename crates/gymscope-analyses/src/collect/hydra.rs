//! Hydra-typed values, as `gym eval run` types its flags: `--temperature 1` is the int 1,
//! `0.5` a float, `true`/`null` a bool/None, `{a: 4, _default: 1}` a dict, `[1, x]` a list,
//! quoted text or anything else a string. Needed for byte parity of the materialized rows.

use serde_json::{Map, Number, Value};

/// Parses one Hydra override value.
pub fn parse(text: &str) -> Result<Value, String> {
    let mut p = Parser {
        s: text.as_bytes(),
        i: 0,
    };
    let v = p.value(true)?;
    p.ws();
    if p.i != p.s.len() {
        return Err(format!("cannot parse value `{text}`"));
    }
    Ok(v)
}

struct Parser<'a> {
    s: &'a [u8],
    i: usize,
}

impl Parser<'_> {
    fn ws(&mut self) {
        while self.i < self.s.len() && self.s[self.i].is_ascii_whitespace() {
            self.i += 1;
        }
    }

    fn value(&mut self, top: bool) -> Result<Value, String> {
        self.ws();
        match self.s.get(self.i) {
            Some(b'{') => self.dict(),
            Some(b'[') => self.list(),
            Some(q @ (b'"' | b'\'')) => self.quoted(*q).map(Value::String),
            _ => {
                // A bare word runs to the end at top level, or to `,` `]` `}` inside a container.
                let start = self.i;
                while self.i < self.s.len()
                    && (top || !matches!(self.s[self.i], b',' | b']' | b'}'))
                {
                    self.i += 1;
                }
                let word = std::str::from_utf8(&self.s[start..self.i])
                    .map_err(|e| e.to_string())?
                    .trim();
                // Hydra's grammar has no empty element in a list or dict (`[1,,2]`,
                // `{_default: }`); a top-level `key=` is the empty string.
                if word.is_empty() && !top {
                    return Err("an empty value in a list or dict (quote it: '')".into());
                }
                Ok(primitive(word))
            }
        }
    }

    fn quoted(&mut self, q: u8) -> Result<String, String> {
        self.i += 1;
        let mut out = Vec::new();
        while let Some(&b) = self.s.get(self.i) {
            self.i += 1;
            if b == b'\\' && self.s.get(self.i).is_some_and(|&n| n == q || n == b'\\') {
                out.push(self.s[self.i]);
                self.i += 1;
            } else if b == q {
                return String::from_utf8(out).map_err(|e| e.to_string());
            } else {
                out.push(b);
            }
        }
        Err("unterminated quoted string".into())
    }

    fn list(&mut self) -> Result<Value, String> {
        self.i += 1;
        let mut items = Vec::new();
        self.ws();
        if self.s.get(self.i) == Some(&b']') {
            self.i += 1;
            return Ok(Value::Array(items));
        }
        loop {
            items.push(self.value(false)?);
            self.ws();
            match self.s.get(self.i) {
                Some(b',') => self.i += 1,
                Some(b']') => {
                    self.i += 1;
                    return Ok(Value::Array(items));
                }
                _ => return Err("expected `,` or `]` in list".into()),
            }
        }
    }

    fn dict(&mut self) -> Result<Value, String> {
        self.i += 1;
        let mut map = Map::new();
        self.ws();
        if self.s.get(self.i) == Some(&b'}') {
            self.i += 1;
            return Ok(Value::Object(map));
        }
        loop {
            self.ws();
            let key = if let Some(q @ (b'"' | b'\'')) = self.s.get(self.i) {
                self.quoted(*q)?
            } else {
                let start = self.i;
                while self.i < self.s.len() && self.s[self.i] != b':' {
                    self.i += 1;
                }
                let key = String::from_utf8_lossy(&self.s[start..self.i])
                    .trim()
                    .to_string();
                if key.is_empty() {
                    return Err("a dict entry without a key (`{: x}`)".into());
                }
                key
            };
            self.ws();
            if self.s.get(self.i) != Some(&b':') {
                return Err(format!("expected `:` after key `{key}` in dict"));
            }
            self.i += 1;
            let v = self.value(false)?;
            map.insert(key, v);
            self.ws();
            match self.s.get(self.i) {
                Some(b',') => self.i += 1,
                Some(b'}') => {
                    self.i += 1;
                    return Ok(Value::Object(map));
                }
                _ => return Err("expected `,` or `}` in dict".into()),
            }
        }
    }
}

/// An unquoted word: null, bool, int, float (Python's float, so `inf`/`nan` become JSON null
/// as orjson writes them), else the string itself.
fn primitive(word: &str) -> Value {
    let lower = word.to_ascii_lowercase();
    match lower.as_str() {
        "null" => return Value::Null,
        "true" => return Value::Bool(true),
        "false" => return Value::Bool(false),
        _ => {}
    }
    let digits = word.replace('_', "");
    let body = digits.trim_start_matches(['+', '-']);
    let is_int = !body.is_empty()
        && body.bytes().all(|b| b.is_ascii_digit())
        && (body == "0" || !body.starts_with('0'))
        && digits.len() - body.len() <= 1;
    if is_int {
        if let Ok(i) = digits.parse::<i64>() {
            return Value::Number(i.into());
        }
        if let Ok(u) = digits.parse::<u64>() {
            return Value::Number(u.into());
        }
    }
    let floaty = body.bytes().any(|b| b.is_ascii_digit())
        && body.bytes().any(|b| matches!(b, b'.' | b'e' | b'E'))
        && body
            .bytes()
            .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'E' | b'+' | b'-'));
    let special = matches!(body.to_ascii_lowercase().as_str(), "inf" | "nan");
    if (floaty && !is_int) || special {
        if let Ok(f) = digits.parse::<f64>() {
            return Number::from_f64(f).map_or(Value::Null, Value::Number);
        }
    }
    Value::String(word.to_string())
}

/// Sets `root[a][b]…= value` for a dotted key, creating dicts on the way (Hydra's `+a.b=v`).
pub fn set_dotted(root: &mut Map<String, Value>, dotted: &str, value: Value) {
    let mut parts = dotted.split('.').peekable();
    let mut map = root;
    while let Some(part) = parts.next() {
        if parts.peek().is_none() {
            map.insert(part.to_string(), value);
            return;
        }
        let slot = map
            .entry(part.to_string())
            .or_insert_with(|| Value::Object(Map::new()));
        if !slot.is_object() {
            *slot = Value::Object(Map::new());
        }
        map = slot.as_object_mut().expect("just made an object");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn hydras_grammar_refuses_empty_keys_and_elements() {
        for bad in ["{: x}", "{_default: }", "[1,,2]", "{a: 1, : 2}", "[ ]x"] {
            assert!(parse(bad).is_err(), "{bad}");
        }
        assert_eq!(parse("").unwrap(), json!(""));
        assert_eq!(parse("{a: ''}").unwrap(), json!({"a": ""}));
        assert_eq!(parse("[]").unwrap(), json!([]));
    }

    #[test]
    fn values_are_typed_like_hydra() {
        assert_eq!(parse("1").unwrap(), json!(1));
        assert_eq!(parse("-3").unwrap(), json!(-3));
        assert_eq!(parse("0.5").unwrap(), json!(0.5));
        assert_eq!(parse("1e-3").unwrap(), json!(0.001));
        assert_eq!(parse("1.").unwrap(), json!(1.0));
        assert_eq!(parse("True").unwrap(), json!(true));
        assert_eq!(parse("null").unwrap(), json!(null));
        assert_eq!(parse("abc def").unwrap(), json!("abc def"));
        assert_eq!(parse("'0.5'").unwrap(), json!("0.5"));
        assert_eq!(parse("v1.2").unwrap(), json!("v1.2"));
        assert_eq!(parse("007").unwrap(), json!("007"));
        assert_eq!(parse("nan").unwrap(), json!(null));
        assert_eq!(
            parse("{a: 4, _default: 1, 'b c': [1, x, 2.5]}").unwrap(),
            json!({"a": 4, "_default": 1, "b c": [1, "x", 2.5]})
        );
        assert_eq!(
            parse("{host: 127.0.0.1, port: 11000}").unwrap(),
            json!({"host": "127.0.0.1", "port": 11000})
        );
        assert!(parse("{a 1}").is_err());
    }

    #[test]
    fn dotted_keys_nest() {
        let mut m = Map::new();
        set_dotted(&mut m, "metadata.x", json!(1));
        set_dotted(&mut m, "top_p", json!(0.9));
        assert_eq!(
            Value::Object(m),
            json!({"metadata": {"x": 1}, "top_p": 0.9})
        );
    }
}
