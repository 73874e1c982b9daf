//! The fast reader: a row's structure found by skimming (`crate::skim`, `memchr` over strings, no
//! unescaping), only the few values the profile needs decoded. It takes a line only when it is
//! sure `serde_json` reads it the same way; `None` hands the line to `serde_path` (every error,
//! escaped keys, raw control bytes, the `-0` literal, deep nesting).

use super::fields::{Role, RowFields};
use super::serde_path::{AgentRefValue, IndexValue, ServerValue};
use super::{AgentField, IndexField, KeyTable, Row, RowKind};
use crate::json::{MaybeNum, Num};
use crate::skim;

/// Reads `line`, already checked to be UTF-8 (`text` is the same bytes as `str`).
pub(super) fn read_row(text: &str, kind: RowKind, keys: &mut KeyTable) -> Option<Row> {
    let line = text.as_bytes();
    if skim::has_control_bytes(line) {
        return None;
    }
    let mut fields = MemberReader::new(kind, keys);
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
            let end = if name == "response" && kind == RowKind::Rollout {
                fields.response_begin();
                let end = response(text, at, &mut fields)?;
                fields.response_end();
                end
            } else {
                let end = skim::value_end(line, at)?;
                fields.member(text, name, at, end)?;
                end
            };
            i = after_member(line, end)?;
            if line[i - 1] == b'}' {
                break;
            }
        }
    }
    if skim::skip_ws(line, i) != line.len() {
        return None;
    }
    fields.finish()
}

/// The profile's reading of a row's members, fed by a walk of the row found elsewhere: this
/// module's [`read_row`], or health's skimming reader when both read a rollout line in one walk
/// (`crate::joint_read`). The walker delimits each value; `response` is left to the walker
/// between [`response_begin`](Self::response_begin) and [`response_end`](Self::response_end),
/// its `usage` handed to [`usage`](Self::usage).
pub struct MemberReader<'k> {
    fields: RowFields<'k>,
}

impl<'k> MemberReader<'k> {
    pub fn new(kind: RowKind, keys: &'k mut KeyTable) -> Self {
        MemberReader {
            fields: RowFields::new(kind, keys),
        }
    }

    /// A top-level member other than a rollout's `response`, its value at `text[at..end]`
    /// (already validated by the walker). `None`: unsure, let serde_json read the line.
    pub fn member(&mut self, text: &str, name: &str, at: usize, end: usize) -> Option<()> {
        let fields = &mut self.fields;
        let value = &text[at..end];
        match fields.role(name) {
            Role::TaskIndex => fields.task(index_value(value)?),
            Role::RolloutIndex => fields.rollout(index_value(value)?),
            Role::AgentRef => {
                let agent = match agent_ref(text, at) {
                    Some(agent) => agent,
                    None => serde_json::from_str::<AgentRefValue>(value).ok()?.0,
                };
                fields.agent_ref(agent);
            }
            Role::Ignored => {}
            // A walker that does not descend into `response` (an input row's is `Ignored`).
            Role::Response => {
                self.response_begin();
                response(text, at, self)?;
                self.response_end();
            }
            Role::Reward => fields.reward(serde_json::from_str(value).ok()?),
            Role::Number => fields.number(name, maybe_num(value)?),
            Role::Server => match value.as_bytes()[0] {
                b'"' if !value.contains('\\') => {
                    fields.server(AgentField::Name(value[1..value.len() - 1].into()));
                }
                _ => fields.server(serde_json::from_str::<ServerValue>(value).ok()?.0),
            },
            Role::Mask => fields.mask(&serde_json::from_str(value).ok()?),
        }
        Some(())
    }

    /// A rollout's `response` begins (whatever its value; a repeated one's usage replaces the
    /// last one's).
    pub fn response_begin(&mut self) {
        self.fields.clear_usage();
    }

    /// `response.usage`'s value at `at`: its numeric members are read. Returns the value's end.
    pub fn usage(&mut self, text: &str, at: usize) -> Option<usize> {
        self.fields.clear_usage();
        object_members(text, at, |name, value_at| {
            let end = skim::value_end(text.as_bytes(), value_at)?;
            self.fields
                .usage_field(name, maybe_num(&text[value_at..end])?);
            Some(end)
        })
    }

    /// The `response` value has been read.
    pub fn response_end(&mut self) {
        self.fields.response_read();
    }

    /// The row, or `None` when serde_json must read it again (a `-0`, see `json`).
    pub fn finish(self) -> Option<Row> {
        (!self.fields.saw_negative_zero()).then(|| self.fields.finish())
    }
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
fn response(text: &str, at: usize, fields: &mut MemberReader) -> Option<usize> {
    object_members(text, at, |name, value_at| {
        if name == "usage" {
            fields.usage(text, value_at)
        } else {
            skim::value_end(text.as_bytes(), value_at)
        }
    })
}

/// Calls `member(name, value_start) -> value_end` for each member when the value at `at` is an
/// object; skips any other value. Returns the value's end.
fn object_members(
    text: &str,
    at: usize,
    member: impl FnMut(&str, usize) -> Option<usize>,
) -> Option<usize> {
    let line = text.as_bytes();
    if line.get(at) != Some(&b'{') {
        return skim::value_end(line, at);
    }
    skim::members(text, at, member)
}

/// `agent_ref`'s name (its value at `at`, already validated) when it is plain: an object of plain
/// keys whose `name` (the last one, as serde_json's map keeps it) is null or a string without
/// escapes. `None`: serde_json reads the value. Why: every row has an `agent_ref`, and reading it
/// into a `serde_json::Value` (a map, a string per key) was 3% of the read on gymnasium rows.
fn agent_ref(text: &str, at: usize) -> Option<AgentField> {
    let line = text.as_bytes();
    if line[at] != b'{' {
        return Some(AgentField::NoName);
    }
    let mut name = None;
    skim::members(text, at, |key, value_at| {
        let end = skim::value_end(line, value_at)?;
        if key == "name" {
            name = Some(value_at..end);
        }
        Some(end)
    })?;
    let Some(name) = name else {
        return Some(AgentField::NoName);
    };
    match line[name.start] {
        b'n' => Some(AgentField::Null),
        b'"' => {
            let inner = &text[name.start + 1..name.end - 1];
            (!inner.contains('\\')).then(|| AgentField::Name(inner.into()))
        }
        _ => None,
    }
}

/// A short run of digits: an `i64` read directly, as `serde_json` would read it.
fn small_int(token: &str) -> Option<i64> {
    (!token.is_empty() && token.len() <= 18 && token.bytes().all(|b| b.is_ascii_digit()))
        .then(|| token.parse().ok())
        .flatten()
}

/// A value (already delimited) reduced to its number (bools as 0/1) or nothing.
#[allow(clippy::option_option)] // outer `None`: unsure (serde decides); inner: not a number
fn maybe_num(value: &str) -> Option<Option<Num>> {
    Some(match value.as_bytes()[0] {
        b'-' | b'0'..=b'9' => Some(match small_int(value) {
            Some(v) => Num::Int(v),
            None => serde_json::from_str::<MaybeNum>(value).ok()?.0?,
        }),
        b't' => Some(Num::Int(1)),
        b'f' => Some(Num::Int(0)),
        _ => None,
    })
}

/// `_ng_task_index` / `_ng_rollout_index` (a value already delimited).
fn index_value(value: &str) -> Option<IndexField> {
    Some(match small_int(value) {
        Some(v) => IndexField::Int(v),
        None => serde_json::from_str::<IndexValue>(value).ok()?.0,
    })
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
            r#"{"agent_ref":{"name":"a","type":"t","name":"b é"},"x":1}"#,
            r#"{"agent_ref":{"name":null,"name":"c"},"agent_ref":{"type":"t"}}"#,
            r#"{"agent_ref":{"name":"c","name":null}}"#,
            r#"{"agent_ref":[{"name":"d"}]}"#,
            r#"{"agent_ref":{"name":true,"n":{"name":"e"}}}"#,
            r#"{"agent_ref":{"name":{"x":1}}}"#,
            r#"{"agent_ref":"f"}"#,
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
