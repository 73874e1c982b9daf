//! The skimming reader of a rollout row for health: the row's structure found by `crate::skim`
//! (`memchr` over strings, no unescaping, nothing copied), only what the signals look at cut out
//! or decoded, into the same [`Row`] serde reads. Like `record::fast` it takes a line only when
//! it is sure serde reads it the same way; `None` hands the line to the serde path (every error
//! and its message, a repeated field, escaped keys, raw control bytes, a list where serde would
//! read a struct from a sequence, deep nesting).
//!
//! Measured on agent rollouts: serde's borrowed `Row` validated every skipped string through its
//! scratch buffer and allocated each escaped name; this reads the same row at `skim` speed.

use super::row::{AgentRef, IncompleteDetails, Item, KeyRow, Raw, Response, Row, Usage};
use crate::record::MemberReader;
use crate::skim;
use std::borrow::Cow;

/// Which reader reads rows and the values the signals parse: `Serde` alone is the reference
/// the skimming reader is tested against.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub(super) enum Reader {
    #[default]
    Skim,
    Serde,
}

impl Reader {
    pub(super) fn skims(self) -> bool {
        self == Reader::Skim
    }
}

/// Reads `text` (one line, valid UTF-8) as serde would read a [`Row`], or `None` when unsure.
pub(super) fn read_row(text: &str) -> Option<Row<'_>> {
    read_row_beside(text, None)
}

/// [`read_row`], feeding the profile's reader the same walk when one is given: each top-level
/// value as it is delimited, `response.usage` as it is met (`crate::joint_read`). `None` when
/// either reader is unsure.
pub(crate) fn read_row_beside<'t>(
    text: &'t str,
    mut profile: Option<&mut MemberReader>,
) -> Option<Row<'t>> {
    let line = text.as_bytes();
    if skim::has_control_bytes(line) {
        return None;
    }
    let mut row = Row {
        task: None,
        rollout: None,
        stage: None,
        reward: None,
        agent_ref: None,
        response: None,
        ng_trajectory: None,
        expected_action: None,
    };
    let mut seen = Seen::default();
    let end = skim::members(text, skim::skip_ws(line, 0), |name, at| {
        if name == "response" {
            if let Some(p) = profile.as_deref_mut() {
                p.response_begin();
            }
            let (response, end) = response(text, at, profile.as_deref_mut())?;
            if let Some(p) = profile.as_deref_mut() {
                p.response_end();
            }
            row.response = seen.once(4, response)?;
            return Some(end);
        }
        let end = skim::value_end(line, at)?;
        if let Some(p) = profile.as_deref_mut() {
            p.member(text, name, at, end)?;
        }
        let value = &text[at..end];
        match name {
            "_ng_task_index" => row.task = seen.once(0, small(value)?)?,
            "_ng_rollout_index" => row.rollout = seen.once(1, small(value)?)?,
            "reward" => row.reward = seen.once(2, small(value)?)?,
            "agent_ref" => {
                let agent = serde_json::from_str::<Option<AgentRef>>(value).ok()?;
                row.agent_ref = seen.once(3, agent)?;
            }
            "ng_trajectory" => row.ng_trajectory = seen.once(5, raw(value))?,
            "expected_action" => row.expected_action = seen.once(6, raw(value))?,
            "stage_index" => row.stage = seen.once(7, small(value)?)?,
            _ => {}
        }
        Some(end)
    })?;
    (skim::skip_ws(line, end) == line.len()).then_some(row)
}

/// Reads `text` (one line of the materialized inputs or the failures file, valid UTF-8) as
/// serde would read a [`KeyRow`], or `None` when unsure.
pub(super) fn read_key_row(text: &str) -> Option<KeyRow<'_>> {
    read_key_row_beside(text, None)
}

/// [`read_key_row`], feeding the profile's reader of an input row each top-level value as it is
/// delimited (`crate::joint_read`). `None` when either reader is unsure.
pub(crate) fn read_key_row_beside<'t>(
    text: &'t str,
    mut profile: Option<&mut MemberReader>,
) -> Option<KeyRow<'t>> {
    let line = text.as_bytes();
    if skim::has_control_bytes(line) {
        return None;
    }
    let mut row = KeyRow {
        task: None,
        rollout: None,
        agent_ref: None,
        server: None,
        class: None,
        expected_action: None,
    };
    let mut seen = Seen::default();
    let end = skim::members(text, skim::skip_ws(line, 0), |name, at| {
        let end = skim::value_end(line, at)?;
        if let Some(p) = profile.as_deref_mut() {
            p.member(text, name, at, end)?;
        }
        let value = &text[at..end];
        match name {
            "_ng_task_index" => row.task = seen.once(0, small(value)?)?,
            "_ng_rollout_index" => row.rollout = seen.once(1, small(value)?)?,
            "agent_ref" => row.agent_ref = seen.once(2, raw(value))?,
            "_ng_failure_class" => row.class = seen.once(3, small(value)?)?,
            "expected_action" => row.expected_action = seen.once(4, raw(value))?,
            "_ng_environment_server" => row.server = seen.once(5, raw(value))?,
            _ => {}
        }
        Some(end)
    })?;
    (skim::skip_ws(line, end) == line.len()).then_some(row)
}

/// Which of a struct's fields were met: serde refuses a repeated field, so the serde path says so.
#[derive(Default)]
struct Seen(u16);

impl Seen {
    fn once<T>(&mut self, field: u16, value: T) -> Option<T> {
        let bit = 1 << field;
        if self.0 & bit != 0 {
            return None;
        }
        self.0 |= bit;
        Some(value)
    }
}

/// A short value as serde reads an `Option<serde_json::Value>` (null is `None`).
#[allow(clippy::option_option)] // outer `None`: unsure (serde decides); inner: JSON null
fn small(value: &str) -> Option<Option<serde_json::Value>> {
    serde_json::from_str(value).ok()
}

/// A value kept as text (`Option<&RawValue>`: null is `None`).
fn raw(value: &str) -> Option<Raw<'_>> {
    (value != "null").then_some(Raw(value))
}

/// `response` at `at`: null, or an object read member by member; and its end. The profile's
/// reader, when given, reads `usage` too.
fn response<'t>(
    text: &'t str,
    at: usize,
    mut profile: Option<&mut MemberReader>,
) -> Option<(Option<Response<'t>>, usize)> {
    let line = text.as_bytes();
    match line.get(at)? {
        b'n' => return Some((None, skim::value_end(line, at)?)),
        b'{' => {}
        _ => return None,
    }
    let mut r = Response {
        status: None,
        incomplete_details: None,
        output: None,
        usage: None,
    };
    let mut seen = Seen::default();
    let end = skim::members(text, at, |name, at| {
        if name == "output" {
            let (output, end) = output(text, at)?;
            r.output = seen.once(2, output)?;
            return Some(end);
        }
        let end = skim::value_end(line, at)?;
        let value = &text[at..end];
        match name {
            "status" => r.status = seen.once(0, string(value)?)?,
            "incomplete_details" => {
                let details = serde_json::from_str::<Option<IncompleteDetails>>(value).ok()?;
                r.incomplete_details = seen.once(1, details)?;
            }
            "usage" => {
                if let Some(p) = profile.as_deref_mut() {
                    p.usage(text, at)?;
                }
                r.usage = seen.once(3, serde_json::from_str::<Option<Usage>>(value).ok()?)?;
            }
            _ => {}
        }
        Some(end)
    })?;
    Some((Some(r), end))
}

/// `response.output` at `at`: null, or a list of objects; and its end.
fn output(text: &str, at: usize) -> Option<(Option<Vec<Item<'_>>>, usize)> {
    let line = text.as_bytes();
    match line.get(at)? {
        b'n' => return Some((None, skim::value_end(line, at)?)),
        b'[' => {}
        _ => return None,
    }
    let mut items = Vec::new();
    let mut i = skim::skip_ws(line, at + 1);
    if line.get(i) == Some(&b']') {
        return Some((Some(items), i + 1));
    }
    loop {
        let (item, end) = item(text, i)?;
        items.push(item);
        i = skim::skip_ws(line, end);
        match line.get(i)? {
            b',' => i = skim::skip_ws(line, i + 1),
            b']' => return Some((Some(items), i + 1)),
            _ => return None,
        }
    }
}

/// One output item (an object; serde would read a list as the struct's fields in order, left to
/// it) and its end.
fn item(text: &str, at: usize) -> Option<(Item<'_>, usize)> {
    if text.as_bytes().get(at) != Some(&b'{') {
        return None;
    }
    let mut item = Item {
        kind: None,
        role: None,
        content: None,
        name: None,
        arguments: None,
        call_id: None,
        output: None,
    };
    let mut seen = Seen::default();
    let end = skim::members(text, at, |name, at| {
        let end = skim::value_end(text.as_bytes(), at)?;
        let value = &text[at..end];
        match name {
            "type" => item.kind = seen.once(0, string(value)?)?,
            "role" => item.role = seen.once(1, string(value)?)?,
            "content" => item.content = seen.once(2, raw(value))?,
            "name" => item.name = seen.once(3, string(value)?)?,
            "arguments" => item.arguments = seen.once(4, raw(value))?,
            "call_id" => item.call_id = seen.once(5, string(value)?)?,
            "output" => item.output = seen.once(6, raw(value))?,
            _ => {}
        }
        Some(end)
    })?;
    Some((item, end))
}

/// A value read as `Option<Cow<str>>`: null, or a string (borrowed when it has no escapes); any
/// other value is serde's error.
#[allow(clippy::option_option)] // outer `None`: unsure (serde decides); inner: JSON null
pub(super) fn string(value: &str) -> Option<Option<Cow<'_, str>>> {
    match value.as_bytes()[0] {
        b'n' => Some(None),
        b'"' => {
            let inner = &value[1..value.len() - 1];
            if inner.contains('\\') {
                serde_json::from_str::<String>(value)
                    .ok()
                    .map(|s| Some(Cow::Owned(s)))
            } else {
                Some(Some(Cow::Borrowed(inner)))
            }
        }
        _ => None,
    }
}
