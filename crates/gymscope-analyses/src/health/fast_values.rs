//! The values the signals parse — a call's arguments (canonical form), a tool's JSON answer (the
//! error rule's keys), a message's content parts (blank text) — read by skimming (`crate::skim`)
//! instead of building a `serde_json::Value`. Each answers only when sure it gives what the
//! `Value` reading in `signals` gives; `None` hands the value to that reading.
//!
//! Measured on agent rollouts: parsing every call's arguments and every tool answer into a
//! `Value` (a map and a `String` per member) was most of health's time after the row itself.

use crate::skim;

/// Objects nested deeper than this are left to serde.
const MAX_DEPTH: usize = 64;

/// `text` (one JSON value, whitespace around it allowed) in [`crate::json::write_sorted`]'s form: compact,
/// every object's keys sorted, strings and numbers as `serde_json` writes them.
pub(super) fn sorted_text(text: &str) -> Option<String> {
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let end = write_value(text, skim::skip_ws(b, 0), &mut out, 0)?;
    (skim::skip_ws(b, end) == b.len()).then_some(out)
}

/// Writes the canonical form of the value at `i`; returns its end.
fn write_value(text: &str, i: usize, out: &mut String, depth: usize) -> Option<usize> {
    let b = text.as_bytes();
    match b.get(i)? {
        b'"' => {
            let end = skim::string_end(b, i)?;
            let span = &text[i..end];
            if has_control(span) {
                return None;
            }
            if skim::canonical_string_end(b, i) == Some(end) {
                out.push_str(span);
            } else {
                // Escapes serde_json does not write (`\u00e9`, `\/`): decoded and written again.
                let s: String = serde_json::from_str(span).ok()?;
                out.push_str(&serde_json::to_string(&s).ok()?);
            }
            Some(end)
        }
        b'-' | b'0'..=b'9' => {
            let end = skim::number_end(b, i)?;
            let token = &text[i..end];
            if token.len() <= 18 && token.bytes().all(|c| c.is_ascii_digit()) {
                out.push_str(token);
            } else {
                let n: serde_json::Number = serde_json::from_str(token).ok()?;
                out.push_str(&n.to_string());
            }
            Some(end)
        }
        b't' | b'f' | b'n' => {
            let word: &str = match b[i] {
                b't' => "true",
                b'f' => "false",
                _ => "null",
            };
            text.get(i..i + word.len()).filter(|w| *w == word)?;
            out.push_str(word);
            Some(i + word.len())
        }
        b'[' if depth < MAX_DEPTH => {
            out.push('[');
            let mut j = skim::skip_ws(b, i + 1);
            if b.get(j) == Some(&b']') {
                out.push(']');
                return Some(j + 1);
            }
            loop {
                j = skim::skip_ws(b, write_value(text, j, out, depth + 1)?);
                match b.get(j)? {
                    b',' => {
                        out.push(',');
                        j = skim::skip_ws(b, j + 1);
                    }
                    b']' => {
                        out.push(']');
                        return Some(j + 1);
                    }
                    _ => return None,
                }
            }
        }
        b'{' if depth < MAX_DEPTH => write_object(text, i, out, depth),
        _ => None,
    }
}

/// An object with its members in key order (keys without escapes or control bytes, so their
/// bytes are their text and their order; a repeated key is left to serde).
fn write_object(text: &str, i: usize, out: &mut String, depth: usize) -> Option<usize> {
    let b = text.as_bytes();
    // The members' keys and where their canonical values lie in `values`.
    let mut members: Vec<(&str, usize, usize)> = Vec::new();
    let mut values = String::new();
    let mut j = skim::skip_ws(b, i + 1);
    let end = if b.get(j) == Some(&b'}') {
        j + 1
    } else {
        loop {
            let (key, at) = skim::plain_key(text, j)?;
            if has_control(key) {
                return None;
            }
            let start = values.len();
            j = write_value(text, at, &mut values, depth + 1)?;
            members.push((key, start, values.len()));
            j = skim::skip_ws(b, j);
            match b.get(j)? {
                b',' => j = skim::skip_ws(b, j + 1),
                b'}' => break j + 1,
                _ => return None,
            }
        }
    };
    members.sort_unstable_by(|x, y| x.0.cmp(y.0));
    if members.windows(2).any(|w| w[0].0 == w[1].0) {
        return None;
    }
    out.push('{');
    for (n, (key, start, stop)) in members.iter().enumerate() {
        if n > 0 {
            out.push(',');
        }
        out.push('"');
        out.push_str(key);
        out.push_str("\":");
        out.push_str(&values[*start..*stop]);
    }
    out.push('}');
    Some(end)
}

fn has_control(s: &str) -> bool {
    s.bytes().any(|c| c < 0x20)
}

/// Whether the JSON object `text` (whitespace after it allowed) is an error answer by
/// [`super::rules::is_error_object`], reading only its `error`, `status`, `detail` and `exit_code`
/// (the last of a repeated key, as a parsed map keeps).
pub(super) fn error_object(text: &str) -> Option<bool> {
    let b = text.as_bytes();
    if skim::has_control_bytes(b) || b.first() != Some(&b'{') {
        return None;
    }
    let mut keys: [Option<&str>; 4] = [None; 4];
    let mut j = skim::skip_ws(b, 1);
    let end = if b.get(j) == Some(&b'}') {
        j + 1
    } else {
        loop {
            let (key, at) = skim::plain_key(text, j)?;
            let value_end = skim::value_end(b, at)?;
            let slot = match key {
                "error" => Some(0),
                "status" => Some(1),
                "detail" => Some(2),
                "exit_code" => Some(3),
                _ => None,
            };
            if let Some(slot) = slot {
                keys[slot] = Some(&text[at..value_end]);
            }
            j = skim::skip_ws(b, value_end);
            match b.get(j)? {
                b',' => j = skim::skip_ws(b, j + 1),
                b'}' => break j + 1,
                _ => return None,
            }
        }
    };
    if skim::skip_ws(b, end) != b.len() {
        return None;
    }
    // The few keys read are parsed as the `Value` rule reads them.
    let mut object = serde_json::Map::new();
    for (key, value) in ["error", "status", "detail", "exit_code"].iter().zip(keys) {
        if let Some(value) = value {
            object.insert((*key).to_string(), serde_json::from_str(value).ok()?);
        }
    }
    Some(super::rules::is_error_object(&serde_json::Value::Object(
        object,
    )))
}

/// Whether a message's `content` list (JSON text from a skimmed line) has no non-blank
/// `output_text`/`text` part, as [`super::rules::text_part`] reads its parts.
pub(super) fn blank_parts(text: &str) -> Option<bool> {
    let b = text.as_bytes();
    if b.first() != Some(&b'[') {
        return None;
    }
    let mut blank = true;
    let mut j = skim::skip_ws(b, 1);
    if b.get(j) == Some(&b']') {
        return Some(true);
    }
    loop {
        if b.get(j) != Some(&b'{') {
            return None;
        }
        let (mut kind, mut part_text) = (None, None);
        let (mut seen_kind, mut seen_text) = (false, false);
        let mut k = skim::skip_ws(b, j + 1);
        let part_end = if b.get(k) == Some(&b'}') {
            k + 1
        } else {
            loop {
                let (key, at) = skim::plain_key(text, k)?;
                let value_end = skim::value_end(b, at)?;
                let value = &text[at..value_end];
                match key {
                    "type" if !seen_kind => {
                        seen_kind = true;
                        kind = super::fast::string(value)?;
                    }
                    "text" if !seen_text => {
                        seen_text = true;
                        part_text = (value != "null").then_some(value);
                    }
                    // A repeated field is serde's error.
                    "type" | "text" => return None,
                    _ => {}
                }
                k = skim::skip_ws(b, value_end);
                match b.get(k)? {
                    b',' => k = skim::skip_ws(b, k + 1),
                    b'}' => break k + 1,
                    _ => return None,
                }
            }
        };
        if super::rules::text_part(kind.as_deref(), part_text) {
            blank = false;
        }
        j = skim::skip_ws(b, part_end);
        match b.get(j)? {
            b',' => j = skim::skip_ws(b, j + 1),
            b']' => break,
            _ => return None,
        }
    }
    (skim::skip_ws(b, j + 1) == b.len()).then_some(blank)
}
