//! The fast reader: a row's structure found by skimming (`crate::skim`, `memchr` over strings, no
//! unescaping), only the few values the profile needs decoded. It takes a line only when it is
//! sure `serde_json` reads it the same way; `None` hands the line to `serde_path` (every error,
//! escaped keys, raw control bytes, the `-0` literal, deep nesting).

use super::fields::{Role, RowFields};
use super::serde_path::{AgentRefValue, IndexValue};
use super::{IndexField, KeyTable, Row, RowKind};
use crate::json::{MaybeNum, Num};
use crate::skim;

/// Reads `line`, already checked to be UTF-8 (`text` is the same bytes as `str`).
pub(super) fn read_row(text: &str, kind: RowKind, keys: &mut KeyTable) -> Option<Row> {
    let line = text.as_bytes();
    if skim::has_control_bytes(line) {
        return None;
    }
    let mut fields = RowFields::new(kind, keys);
    let mut i = skim::skip_ws(line, 0);
    if line.get(i) != Some(&b'{') {
        return None;
    }
    i = skim::skip_ws(line, i + 1);
    if line.get(i) == Some(&b'}') {
        i += 1;
    } else {
        loop {
            let (name, at) = skim::plain_key(text, i)?;
            let end = match fields.role(name) {
                Role::TaskIndex => {
                    let (end, value) = index_value(text, at)?;
                    fields.task(value);
                    end
                }
                Role::RolloutIndex => {
                    let (end, value) = index_value(text, at)?;
                    fields.rollout(value);
                    end
                }
                Role::AgentRef => {
                    let end = skim::value_end(line, at)?;
                    let agent: AgentRefValue = serde_json::from_str(&text[at..end]).ok()?;
                    fields.agent_ref(agent.0);
                    end
                }
                Role::Ignored => skim::value_end(line, at)?,
                Role::Response => {
                    fields.clear_usage();
                    let end = response(text, at, &mut fields)?;
                    fields.response_read();
                    end
                }
                Role::Reward => {
                    let end = skim::value_end(line, at)?;
                    fields.reward(serde_json::from_str(&text[at..end]).ok()?);
                    end
                }
                Role::Number => {
                    let (end, num) = maybe_num(text, at)?;
                    fields.number(name, num);
                    end
                }
            };
            i = after_member(line, end)?;
            if line[i - 1] == b'}' {
                break;
            }
        }
    }
    if skim::skip_ws(line, i) != line.len() || fields.saw_negative_zero() {
        return None;
    }
    Some(fields.finish())
}

/// After an object member ending at `end`: the start of the next key after a comma, or the index
/// after the closing brace.
fn after_member(line: &[u8], end: usize) -> Option<usize> {
    let i = skim::skip_ws(line, end);
    match line.get(i)? {
        b',' => Some(skim::skip_ws(line, i + 1)),
        b'}' => Some(i + 1),
        _ => None,
    }
}

/// `response`: only its `usage` object is read; any other value is validated and skipped.
fn response(text: &str, at: usize, fields: &mut RowFields) -> Option<usize> {
    object_members(text, at, |name, value_at| {
        if name != "usage" {
            return skim::value_end(text.as_bytes(), value_at);
        }
        fields.clear_usage();
        object_members(text, value_at, |name, value_at| {
            let (end, num) = maybe_num(text, value_at)?;
            fields.usage_field(name, num);
            Some(end)
        })
    })
}

/// Calls `member(name, value_start) -> value_end` for each member when the value at `at` is an
/// object; skips any other value. Returns the value's end.
fn object_members(
    text: &str,
    at: usize,
    mut member: impl FnMut(&str, usize) -> Option<usize>,
) -> Option<usize> {
    let line = text.as_bytes();
    if line.get(at) != Some(&b'{') {
        return skim::value_end(line, at);
    }
    let mut i = skim::skip_ws(line, at + 1);
    if line.get(i) == Some(&b'}') {
        return Some(i + 1);
    }
    loop {
        let (name, value_at) = skim::plain_key(text, i)?;
        i = after_member(line, member(name, value_at)?)?;
        if line[i - 1] == b'}' {
            return Some(i);
        }
    }
}

/// A short run of digits: an `i64` read directly, as `serde_json` would read it.
fn small_int(token: &str) -> Option<i64> {
    (!token.is_empty() && token.len() <= 18 && token.bytes().all(|b| b.is_ascii_digit()))
        .then(|| token.parse().ok())
        .flatten()
}

/// The value at `at` reduced to its number (bools as 0/1) or nothing, and its end.
fn maybe_num(text: &str, at: usize) -> Option<(usize, Option<Num>)> {
    let line = text.as_bytes();
    match line.get(at)? {
        b'-' | b'0'..=b'9' => {
            let end = skim::number_end(line, at)?;
            let token = &text[at..end];
            let num = match small_int(token) {
                Some(v) => Num::Int(v),
                None => serde_json::from_str::<MaybeNum>(token).ok()?.0?,
            };
            Some((end, Some(num)))
        }
        b't' | b'f' => {
            let end = skim::value_end(line, at)?;
            Some((end, Some(Num::Int(i64::from(line[at] == b't')))))
        }
        _ => Some((skim::value_end(line, at)?, None)),
    }
}

/// `_ng_task_index` / `_ng_rollout_index`.
fn index_value(text: &str, at: usize) -> Option<(usize, IndexField)> {
    let end = skim::value_end(text.as_bytes(), at)?;
    let token = &text[at..end];
    let value = match small_int(token) {
        Some(v) => IndexField::Int(v),
        None => serde_json::from_str::<IndexValue>(token).ok()?.0,
    };
    Some((end, value))
}

#[cfg(test)]
mod tests {
    use super::super::serde_path;
    use super::*;

    /// The fast reader, when it takes a line, reads what the complete reader reads.
    fn same_as_serde(line: &str, kind: RowKind) -> bool {
        let mut fast_keys = KeyTable::default();
        let Some(fast) = read_row(line, kind, &mut fast_keys) else {
            return false;
        };
        let mut keys = KeyTable::default();
        let slow = serde_path::read_row(line, kind, &mut keys)
            .unwrap()
            .finish();
        let named = |keys: &KeyTable, row: &Row| {
            let names = |f: &[(u32, Option<Num>)]| {
                f.iter()
                    .map(|(k, v)| (keys.name(*k).to_string(), *v))
                    .collect::<Vec<_>>()
            };
            (
                row.task,
                row.rollout,
                row.agent.clone(),
                names(&row.top),
                names(&row.usage),
                row.reward.clone(),
            )
        };
        assert_eq!(named(&fast_keys, &fast), named(&keys, &slow), "{line}");
        true
    }

    #[test]
    fn takes_real_shapes_and_reads_them_as_serde_does() {
        let lines = [
            r#"{"responses_create_params":{"input":[{"role":"user","content":"a \"q\" \u00e9 \ud83d\ude00"}]},"response":{"id":"r","output":[{"type":"function_call","arguments":"{\"code\": \"print(1)\\n\"}"}],"usage":{"input_tokens":3,"input_tokens_details":{"cached_tokens":0},"output_tokens":7.5,"total_tokens":10,"note":"x"}},"reward":1.0,"ok":true,"bad":false,"s":"t","n":null,"big":123456789012345678901,"neg":-4,"f":-1.5e-3,"_ng_task_index":4,"_ng_rollout_index":2,"agent_ref":{"type":"a","name":"agent \"one\""}}"#,
            r#"{"a":1,"b":2,"a":3.5,"response":{"usage":{"x":1}},"response":{"usage":null},"reward":[1,2]}"#,
            r#"{"x":"s","response":{"usage":{"x":2},"usage":{"y":3}},"reward":{"v":1}}"#,
            r#" { "_ng_task_index" : 1.5 , "_ng_rollout_index" : "0" , "agent_ref" : null } "#,
            r#"{"_ng_task_index":99999999999999999999,"agent_ref":{"name":7}}"#,
            r"{}",
            r#"{"response":"n/a","reward":null}"#,
        ];
        for line in lines {
            for kind in [RowKind::Rollout, RowKind::Input] {
                assert!(same_as_serde(line, kind), "fast path refused {line}");
            }
        }
    }

    #[test]
    fn leaves_errors_and_rare_shapes_to_serde() {
        let refused = [
            r#"{"a":1,}"#,
            r#"{"a":1} x"#,
            r"[1]",
            "{\"a\":\t1}",
            r#"{"\u0061":1}"#,
            r#"{"a":-0}"#,
            r#"{"response":{"usage":{"a":-0}}}"#,
            r#"{"a":"\ud800"}"#,
            r#"{"a":1e999}"#,
            r#"{"a":01}"#,
        ];
        for line in refused {
            assert!(
                read_row(line, RowKind::Rollout, &mut KeyTable::default()).is_none(),
                "{line}"
            );
        }
    }
}
