//! Reads one JSONL row of a materialized-inputs or rollouts file, keeping only what the profile
//! needs: the rollout key, the agent, and the numeric fields. Long text (prompts, outputs) is
//! validated and skipped, never copied.

mod fast;
mod fields;
mod serde_path;
mod wire;

pub use fast::MemberReader;

use crate::fast_map::FastMap;
use crate::json::{rewrite_negative_zero_ints, Num};

use crate::gym::keys::{ROLLOUT_INDEX, TASK_INDEX};

/// Interned name of a JSON object key.
pub type KeyId = u32;

/// Interns field names so each rollout stores 4-byte ids instead of strings.
#[derive(Debug)]
pub struct KeyTable {
    ids: FastMap<Box<str>, KeyId>,
    names: Vec<Box<str>>,
}

/// Ids fixed at construction, so hot paths compare integers.
pub mod key {
    use super::KeyId;
    pub const TASK_INDEX: KeyId = 0;
    pub const ROLLOUT_INDEX: KeyId = 1;
    pub const REWARD: KeyId = 2;
    pub const RESPONSE: KeyId = 3;
    pub const AGENT_NAME: KeyId = 4;
    pub const AGENT_REF: KeyId = 5;
    pub const USAGE: KeyId = 6;
    pub(super) const PRESET: [&str; 7] = [
        super::TASK_INDEX,
        super::ROLLOUT_INDEX,
        "reward",
        "response",
        "agent_name",
        "agent_ref",
        "usage",
    ];
}

impl Default for KeyTable {
    fn default() -> Self {
        let mut table = KeyTable {
            ids: FastMap::default(),
            names: Vec::new(),
        };
        for name in key::PRESET {
            table.intern(name);
        }
        table
    }
}

impl KeyTable {
    pub fn intern(&mut self, name: &str) -> KeyId {
        if let Some(&id) = self.ids.get(name) {
            return id;
        }
        let id = self.names.len() as KeyId;
        self.names.push(name.into());
        self.ids.insert(name.into(), id);
        id
    }

    /// The id of `name`, if it was interned.
    pub fn get(&self, name: &str) -> Option<KeyId> {
        self.ids.get(name).copied()
    }

    /// How many names are interned (ids run from 0 to `len() - 1`).
    pub fn len(&self) -> usize {
        self.names.len()
    }

    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    pub fn name(&self, id: KeyId) -> &str {
        &self.names[id as usize]
    }
}

/// The value found for `_ng_task_index` or `_ng_rollout_index`.
#[derive(Clone, Copy, Debug, PartialEq, Default, serde::Serialize, serde::Deserialize)]
pub enum IndexField {
    #[default]
    Missing,
    Int(i64),
    /// A bool or a float holding an integer: Python keys it as the integer (`True == 1`,
    /// `1.0 == 1`), and v0.7.0's profile writes it as it was read (`"0:True"`, `1.0`).
    Typed(i64, IndexKind),
    /// Present but not an integer; the text says what it was.
    Invalid(#[serde(with = "wire::static_text")] wire::ValueKind),
}

/// What an index was in the row's JSON.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub enum IndexKind {
    #[default]
    Int,
    Bool,
    Float,
}

impl IndexField {
    /// The index as Python compares it, with its kind; `None` when missing or not an integer.
    pub fn value(self) -> Option<(i64, IndexKind)> {
        match self {
            IndexField::Int(v) => Some((v, IndexKind::Int)),
            IndexField::Typed(v, kind) => Some((v, kind)),
            IndexField::Missing | IndexField::Invalid(_) => None,
        }
    }
}

impl IndexKind {
    /// Writes `v` as this kind's JSON (`1`, `true`, `1.0`).
    pub fn write_json<W: std::io::Write>(self, w: &mut W, v: i64) -> std::io::Result<()> {
        match self {
            IndexKind::Int => crate::json::Num::Int(v).write_json(w),
            IndexKind::Bool => w.write_all(if v != 0 { b"true" } else { b"false" }),
            IndexKind::Float => crate::json::write_f64(w, v as f64),
        }
    }

    /// Writes `v` as Python's `str()` of this kind (`1`, `True`, `1.0`).
    pub fn write_str<W: std::io::Write>(self, w: &mut W, v: i64) -> std::io::Result<()> {
        match self {
            IndexKind::Bool => w.write_all(if v != 0 { b"True" } else { b"False" }),
            _ => self.write_json(w, v),
        }
    }
}

/// The agent name a row gives in `agent_ref.name`.
#[derive(Clone, Debug, PartialEq, Default, serde::Serialize, serde::Deserialize)]
pub enum AgentField {
    /// No `agent_ref` key.
    #[default]
    NoAgentRef,
    /// `agent_ref` present but not an object, or without `name`.
    NoName,
    Null,
    Name(Box<str>),
    Number(Num),
    Invalid(#[serde(with = "wire::static_text")] wire::ValueKind),
}

/// A rollout's `reward`, verbatim: upstream copies it into `rollout_infos` unchanged.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum Reward {
    Num(Num),
    Other(#[serde(with = "wire::json_text")] Box<serde_json::Value>),
}

/// What one row holds for profiling.
#[derive(Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct Row {
    pub task: IndexField,
    pub rollout: IndexField,
    pub agent: AgentField,
    /// Top-level fields in row order, `Some` when numeric (bools as 0/1). Non-numeric fields are
    /// kept only when a `response.usage` key of the same name overrides them (their position
    /// decides the column order).
    pub top: Vec<(KeyId, Option<Num>)>,
    /// Fields of `response.usage`, in order, numeric ones as `Some`.
    pub usage: Vec<(KeyId, Option<Num>)>,
    /// The `reward` value, when the key exists.
    pub reward: Option<Reward>,
    /// `_ng_environment_server` (`NoAgentRef`: absent), read as `agent_ref.name` is: the run
    /// key of a materialized row (NeMo Gym v0.7.0 `global_config.rollout_run_key`).
    pub server: AgentField,
    /// A rollout whose `mask_sample` is truthy: not a measurement (v0.7.0 `select_measured`).
    pub masked: bool,
}

/// Which file a line is from, so which parts of its row to read (the read layer's tag).
pub use crate::read::RowKind;

/// Why a line could not be read, and where in it (1-based column, in bytes).
#[derive(Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct RowError {
    pub column: usize,
    pub message: String,
}

impl From<serde_json::Error> for RowError {
    fn from(e: serde_json::Error) -> Self {
        // serde_json appends " at line 1 column N"; the column is kept apart.
        let message = e.to_string();
        let message = message
            .rfind(" at line ")
            .map_or(message.as_str(), |at| &message[..at])
            .to_string();
        RowError {
            column: e.column(),
            message,
        }
    }
}

/// Parses one JSONL line. Error columns count characters, as editors do.
pub fn parse_row(line: &[u8], kind: RowKind, keys: &mut KeyTable) -> Result<Row, RowError> {
    parse_row_bytes_column(line, kind, keys).map_err(|mut e| {
        let prefix = &line[..(e.column.saturating_sub(1)).min(line.len())];
        e.column = String::from_utf8_lossy(prefix).chars().count() + 1;
        e
    })
}

fn parse_row_bytes_column(
    line: &[u8],
    kind: RowKind,
    keys: &mut KeyTable,
) -> Result<Row, RowError> {
    // One SIMD UTF-8 check of the whole line; both readers then take the text as valid `str`
    // (measured: serde_json's own per-string validation was 18% of the profile's time).
    // The faster check first; the one that says where, only for a line that fails it.
    let text = match simdutf8::basic::from_utf8(line) {
        Ok(text) => text,
        Err(_) => simdutf8::compat::from_utf8(line).map_err(|e| RowError {
            column: e.valid_up_to() + 1,
            message: "invalid UTF-8 (the file must be UTF-8 text)".into(),
        })?,
    };
    if let Some(row) = fast::read_row(text, kind, keys) {
        return Ok(row);
    }
    let fields = serde_path::read_row(text, kind, keys)?;
    if !fields.saw_negative_zero() {
        return Ok(fields.finish());
    }
    // serde_json reads the integer `-0` as -0.0; orjson as 0. Read again with those tokens fixed.
    match rewrite_negative_zero_ints(line) {
        Some(fixed) => {
            let fixed = String::from_utf8(fixed).expect("ASCII replacement keeps UTF-8");
            Ok(serde_path::read_row(&fixed, kind, keys)?.finish())
        }
        None => Ok(fields.finish()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(keys: &KeyTable, fields: &[(KeyId, Option<Num>)]) -> Vec<(String, Option<Num>)> {
        fields
            .iter()
            .map(|(k, v)| (keys.name(*k).to_string(), *v))
            .collect()
    }

    #[test]
    fn rollout_row_keeps_numbers_and_skips_text() {
        let mut keys = KeyTable::default();
        let line = br#"{"responses_create_params":{"input":"long"},"response":{"id":"x","output":[{"text":"hi"}],"usage":{"input_tokens":3,"input_tokens_details":{"cached_tokens":0},"total_tokens":5}},"reward":1.0,"ok":true,"note":"s","_ng_task_index":4,"_ng_rollout_index":2,"agent_ref":{"name":"a"}}"#;
        let row = parse_row(line, RowKind::Rollout, &mut keys).unwrap();
        assert_eq!(row.task, IndexField::Int(4));
        assert_eq!(row.rollout, IndexField::Int(2));
        assert_eq!(row.agent, AgentField::Name("a".into()));
        assert_eq!(row.reward, Some(Reward::Num(Num::Float(1.0))));
        assert_eq!(
            names(&keys, &row.top),
            vec![
                ("reward".into(), Some(Num::Float(1.0))),
                ("ok".into(), Some(Num::Int(1)))
            ]
        );
        assert_eq!(
            names(&keys, &row.usage),
            vec![
                ("input_tokens".into(), Some(Num::Int(3))),
                ("total_tokens".into(), Some(Num::Int(5)))
            ]
        );
    }

    #[test]
    fn repeated_keys_keep_first_position_and_last_value() {
        let mut keys = KeyTable::default();
        let row = parse_row(br#"{"a":1,"b":2,"a":3.5}"#, RowKind::Rollout, &mut keys).unwrap();
        assert_eq!(
            names(&keys, &row.top),
            vec![
                ("a".into(), Some(Num::Float(3.5))),
                ("b".into(), Some(Num::Int(2)))
            ]
        );
    }

    #[test]
    fn wide_rows_use_the_hash_index_with_the_same_result() {
        // Beyond LINEAR_FIELDS fields a repeated key is found by hash: same first position and
        // last value as the linear search, in `top` and in `usage`.
        let mut line = String::from("{");
        for i in 0..40 {
            line.push_str(&format!("\"f{i}\":{i},"));
        }
        line.push_str("\"f3\":3.5,\"response\":{\"usage\":{");
        for i in 0..40 {
            line.push_str(&format!("\"u{i}\":{i},"));
        }
        line.push_str("\"u7\":\"s\",\"f5\":1}}}");
        let mut keys = KeyTable::default();
        let row = parse_row(line.as_bytes(), RowKind::Rollout, &mut keys).unwrap();
        let top = names(&keys, &row.top);
        assert_eq!(top.len(), 40, "`response` is not a number: pruned");
        assert_eq!(top[3], ("f3".into(), Some(Num::Float(3.5))));
        let usage = names(&keys, &row.usage);
        // u7 became a string (dropped: it overrides nothing); f5 overrides the top-level f5.
        assert_eq!(usage.len(), 40);
        assert!(!usage.iter().any(|(k, _)| k == "u7"));
        assert_eq!(
            usage.last().unwrap(),
            &("f5".to_string(), Some(Num::Int(1)))
        );
    }

    #[test]
    fn negative_zero_integer_is_int_zero() {
        let mut keys = KeyTable::default();
        let row = parse_row(
            br#"{"a":-0,"b":-0.0,"_ng_task_index":-0}"#,
            RowKind::Rollout,
            &mut keys,
        )
        .unwrap();
        assert_eq!(row.task, IndexField::Int(0));
        assert_eq!(names(&keys, &row.top)[0].1, Some(Num::Int(0)));
        assert!(matches!(names(&keys, &row.top)[1].1, Some(Num::Float(f)) if f.is_sign_negative()));
    }

    #[test]
    fn non_numeric_field_kept_only_when_usage_overrides_it() {
        let mut keys = KeyTable::default();
        let row = parse_row(
            br#"{"x":"s","y":"t","response":{"usage":{"x":2}}}"#,
            RowKind::Rollout,
            &mut keys,
        )
        .unwrap();
        assert_eq!(names(&keys, &row.top), vec![("x".into(), None)]);
        let row = parse_row(
            br#"{"response":null,"reward":null}"#,
            RowKind::Rollout,
            &mut keys,
        )
        .unwrap();
        assert!(row.usage.is_empty());
        assert_eq!(
            row.reward,
            Some(Reward::Other(Box::new(serde_json::Value::Null)))
        );
    }

    #[test]
    fn bool_and_integral_float_indices_keep_their_kind() {
        let mut keys = KeyTable::default();
        let read = |line: &str, keys: &mut KeyTable| {
            let row = parse_row(line.as_bytes(), RowKind::Rollout, keys).unwrap();
            (row.task, row.rollout)
        };
        assert_eq!(
            read(
                r#"{"_ng_task_index":1.0,"_ng_rollout_index":true}"#,
                &mut keys
            ),
            (
                IndexField::Typed(1, IndexKind::Float),
                IndexField::Typed(1, IndexKind::Bool)
            )
        );
        assert_eq!(
            read(
                r#"{"_ng_task_index":-0,"_ng_rollout_index":2e1}"#,
                &mut keys
            ),
            (IndexField::Int(0), IndexField::Typed(20, IndexKind::Float))
        );
        assert_eq!(
            read(
                r#"{"_ng_task_index":1e300,"_ng_rollout_index":false}"#,
                &mut keys
            ),
            (
                IndexField::Invalid("a float"),
                IndexField::Typed(0, IndexKind::Bool)
            )
        );
    }

    #[test]
    fn input_rows_read_only_keys_and_agent() {
        let mut keys = KeyTable::default();
        let row = parse_row(
            br#"{"x":1,"agent_ref":{"type":"t","name":null},"_ng_task_index":1.5}"#,
            RowKind::Input,
            &mut keys,
        )
        .unwrap();
        assert!(row.top.is_empty());
        assert_eq!(row.agent, AgentField::Null);
        assert_eq!(row.task, IndexField::Invalid("a float"));
        assert_eq!(row.rollout, IndexField::Missing);
    }

    #[test]
    fn errors_carry_the_column() {
        let mut keys = KeyTable::default();
        let err = parse_row(br#"{"a":[1,}"#, RowKind::Rollout, &mut keys).unwrap_err();
        assert_eq!(err.column, 9);
        let err = parse_row(b"{\"a\":\"\xff\"}", RowKind::Rollout, &mut keys).unwrap_err();
        assert_eq!(
            (err.column, err.message.as_str()),
            (7, "invalid UTF-8 (the file must be UTF-8 text)")
        );
        assert!(parse_row(b"[1]", RowKind::Rollout, &mut keys).is_err());
        assert!(parse_row(b"{} x", RowKind::Rollout, &mut keys).is_err());
    }
}
