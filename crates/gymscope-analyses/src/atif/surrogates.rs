//! Lone surrogate escapes (`"\ud83d"`) in a rollout line, as NeMo Gym v0.7.0's export meets
//! them: Python's `json` reads them into a `str`, and `_validate_json_value`
//! (`nemo_gym/atif_export.py`) then refuses the row at the first string that cannot be encoded
//! as UTF-8, named by its path (`rollout.response.output[2].content[0].text`, a key as
//! `….<key>`). serde_json cannot hold such a string, so the line is read twice: once with each
//! lone escape replaced by `\ufffd` (is the rest strict JSON?), and once by a small walk of the
//! text that keeps the path, for the first string holding one.

/// The line with each lone surrogate escape replaced by `\ufffd`, when it has any.
pub fn replaced(text: &str) -> Option<String> {
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let (mut last, mut found) = (0, false);
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'"' {
            let end = string_end(b, i);
            for (start, len) in lone_escapes(&b[i..end]) {
                out.push_str(&text[last..i + start]);
                out.push_str("\\ufffd");
                last = i + start + len;
                found = true;
            }
            i = end;
        } else {
            i += 1;
        }
    }
    out.push_str(&text[last..]);
    found.then_some(out)
}

/// The path of the first string (or key) with a lone surrogate escape, in document order, as
/// upstream's walk names it from `rollout`. `text` is a JSON object but for those escapes.
pub fn first_path(text: &str) -> Option<String> {
    enum Frame {
        Object { path: String, key: Option<String> },
        Array { path: String, index: usize },
    }
    let b = text.as_bytes();
    let mut stack: Vec<Frame> = Vec::new();
    let value_path = |stack: &[Frame]| match stack.last() {
        None => "rollout".to_string(),
        Some(Frame::Object { path, key }) => format!("{path}.{}", key.as_deref().unwrap_or("")),
        Some(Frame::Array { path, index }) => format!("{path}[{index}]"),
    };
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'{' => {
                let path = value_path(&stack);
                stack.push(Frame::Object { path, key: None });
            }
            b'[' => {
                let path = value_path(&stack);
                stack.push(Frame::Array { path, index: 0 });
            }
            b'}' | b']' => {
                stack.pop();
            }
            b',' => match stack.last_mut() {
                Some(Frame::Object { key, .. }) => *key = None,
                Some(Frame::Array { index, .. }) => *index += 1,
                None => {}
            },
            b'"' => {
                let end = string_end(b, i);
                let is_key = matches!(stack.last(), Some(Frame::Object { key: None, .. }));
                if lone_escapes(&b[i..end]).next().is_some() {
                    return Some(if is_key {
                        match stack.last() {
                            Some(Frame::Object { path, .. }) => format!("{path}.<key>"),
                            _ => "rollout".into(),
                        }
                    } else {
                        value_path(&stack)
                    });
                }
                if is_key {
                    let name: String = serde_json::from_str(&text[i..end]).unwrap_or_default();
                    if let Some(Frame::Object { key, .. }) = stack.last_mut() {
                        *key = Some(name);
                    }
                }
                i = end;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    None
}

/// One past the closing quote of the string starting at `start`.
fn string_end(b: &[u8], start: usize) -> usize {
    let mut i = start + 1;
    while i < b.len() && b[i] != b'"' {
        i += if b[i] == b'\\' { 2 } else { 1 };
    }
    (i + 1).min(b.len())
}

/// The lone surrogate escapes of a string token: (offset, length 6).
fn lone_escapes(token: &[u8]) -> impl Iterator<Item = (usize, usize)> + '_ {
    let unit = |at: usize| -> Option<u16> {
        let hex = token.get(at..at + 6)?;
        if hex[0] != b'\\' || hex[1] != b'u' {
            return None;
        }
        u16::from_str_radix(std::str::from_utf8(&hex[2..]).ok()?, 16).ok()
    };
    let mut i = 1;
    std::iter::from_fn(move || {
        while i < token.len() {
            if token[i] != b'\\' {
                i += 1;
                continue;
            }
            let at = i;
            match unit(at) {
                Some(0xD800..=0xDBFF) if matches!(unit(at + 6), Some(0xDC00..=0xDFFF)) => i += 12,
                Some(0xD800..=0xDFFF) => {
                    i += 6;
                    return Some((at, 6));
                }
                _ => i += 2,
            }
        }
        None
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lone_escapes_are_found_by_path_and_pairs_are_not() {
        let text = r#"{"a":"ok \ud83d\ude00","b":[1,{"c":"x\ud83dy"}],"d":"\udc00"}"#;
        assert_eq!(first_path(text).as_deref(), Some("rollout.b[1].c"));
        let fixed = replaced(text).unwrap();
        assert_eq!(
            fixed,
            r#"{"a":"ok \ud83d\ude00","b":[1,{"c":"x\ufffdy"}],"d":"\ufffd"}"#
        );
        assert!(serde_json::from_str::<serde_json::Value>(&fixed).is_ok());
        assert_eq!(replaced(r#"{"a":"\ud83d\ude00 \\ud83d"}"#), None);
        assert_eq!(
            first_path(r#"{"a":{"k\udfff":1}}"#).as_deref(),
            Some("rollout.a.<key>")
        );
    }
}
