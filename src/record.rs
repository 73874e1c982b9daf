//! Reads one JSONL row of a materialized-inputs or rollouts file, keeping only what the profile
//! needs: the rollout key, the agent, and the numeric fields. Long text (prompts, outputs) is
//! validated and skipped, never copied.

use crate::json::{rewrite_negative_zero_ints, MaybeNum, Num, Skip};
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use std::collections::HashMap;
use std::fmt;

pub const TASK_INDEX: &str = "_ng_task_index";
pub const ROLLOUT_INDEX: &str = "_ng_rollout_index";

/// Interned name of a JSON object key.
pub type KeyId = u32;

/// Interns field names so each rollout stores 4-byte ids instead of strings.
#[derive(Debug)]
pub struct KeyTable {
    ids: HashMap<Box<str>, KeyId>,
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
            ids: HashMap::new(),
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

    pub fn name(&self, id: KeyId) -> &str {
        &self.names[id as usize]
    }
}

/// The value found for `_ng_task_index` or `_ng_rollout_index`.
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub enum IndexField {
    #[default]
    Missing,
    Int(i64),
    /// Present but not an integer; the text says what it was.
    Invalid(&'static str),
}

/// The agent name a row gives in `agent_ref.name`.
#[derive(Clone, Debug, PartialEq, Default)]
pub enum AgentField {
    /// No `agent_ref` key.
    #[default]
    NoAgentRef,
    /// `agent_ref` present but not an object, or without `name`.
    NoName,
    Null,
    Name(Box<str>),
    Number(Num),
    Invalid(&'static str),
}

/// A rollout's `reward`, verbatim: upstream copies it into `rollout_infos` unchanged.
#[derive(Clone, Debug, PartialEq)]
pub enum Reward {
    Num(Num),
    Other(Box<serde_json::Value>),
}

/// What one row holds for profiling.
#[derive(Debug, Default)]
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
}

/// Which parts of a row to read.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum RowKind {
    /// Materialized inputs: the rollout key and `agent_ref.name`.
    Input,
    /// Rollouts: also every numeric field, `response.usage` and `reward`.
    Rollout,
}

/// Why a line could not be read, and where in it (1-based column, in bytes).
#[derive(Debug, PartialEq)]
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
    // One SIMD UTF-8 check of the whole line, then serde_json reads it as `str` and skips its own
    // per-string validation (measured: that validation was 18% of the profile's time).
    let line = simdutf8::compat::from_utf8(line).map_err(|e| RowError {
        column: e.valid_up_to() + 1,
        message: "invalid UTF-8 (the file must be UTF-8 text)".into(),
    })?;
    let mut row = Row::default();
    let mut saw_negative_zero = false;
    scan(line, kind, keys, &mut row, &mut saw_negative_zero)?;
    if saw_negative_zero {
        // serde_json reads the integer `-0` as -0.0; orjson as 0. Rescan with those tokens fixed.
        if let Some(fixed) = rewrite_negative_zero_ints(line.as_bytes()) {
            let fixed = String::from_utf8(fixed).expect("ASCII replacement keeps UTF-8");
            row = Row::default();
            scan(&fixed, kind, keys, &mut row, &mut saw_negative_zero)?;
        }
    }
    if kind == RowKind::Rollout {
        prune_unused_non_numeric(&mut row);
    }
    Ok(row)
}

fn scan(
    line: &str,
    kind: RowKind,
    keys: &mut KeyTable,
    row: &mut Row,
    saw_negative_zero: &mut bool,
) -> Result<(), serde_json::Error> {
    let mut de = serde_json::Deserializer::from_str(line);
    RowSeed {
        kind,
        keys,
        row,
        saw_negative_zero,
    }
    .deserialize(&mut de)?;
    de.end()
}

/// Drops non-numeric top-level fields that no usage key overrides, and non-numeric usage fields
/// that override nothing: they cannot affect the profile.
fn prune_unused_non_numeric(row: &mut Row) {
    let Row { top, usage, .. } = row;
    let usage_keys = key_set(usage);
    top.retain(|(k, v)| v.is_some() || contains(usage, &usage_keys, *k));
    let top_keys = key_set(top);
    usage.retain(|(k, v)| v.is_some() || contains(top, &top_keys, *k));
    top.shrink_to_fit();
    usage.shrink_to_fit();
}

fn is_negative_zero(n: Num) -> bool {
    matches!(n, Num::Float(f) if f == 0.0 && f.is_sign_negative())
}

/// Rows with up to this many fields find a repeated key by a linear search (fastest when small);
/// beyond it, by a hash index, so a row with 128,000 fields is not quadratic.
const LINEAR_FIELDS: usize = 16;

/// `fields` and the position of each key in it; `index` is empty until `fields` outgrows
/// [`LINEAR_FIELDS`], then kept in step.
#[derive(Default)]
struct FieldIndex(HashMap<KeyId, usize>);

/// Sets `key` to `value` keeping the first position, as a Python dict does on a repeated key.
fn upsert(
    fields: &mut Vec<(KeyId, Option<Num>)>,
    index: &mut FieldIndex,
    key: KeyId,
    value: Option<Num>,
) {
    let index = &mut index.0;
    if index.is_empty() && fields.len() < LINEAR_FIELDS {
        match fields.iter_mut().find(|(k, _)| *k == key) {
            Some(slot) => slot.1 = value,
            None => fields.push((key, value)),
        }
        return;
    }
    if index.is_empty() {
        index.extend(fields.iter().enumerate().map(|(i, (k, _))| (*k, i)));
    }
    if let Some(&i) = index.get(&key) {
        fields[i].1 = value;
    } else {
        index.insert(key, fields.len());
        fields.push((key, value));
    }
}

/// Whether `key` is among `fields`' keys: a linear search for few, a set for many.
fn key_set(fields: &[(KeyId, Option<Num>)]) -> Option<std::collections::HashSet<KeyId>> {
    (fields.len() > LINEAR_FIELDS).then(|| fields.iter().map(|(k, _)| *k).collect())
}

fn contains(
    fields: &[(KeyId, Option<Num>)],
    set: &Option<std::collections::HashSet<KeyId>>,
    key: KeyId,
) -> bool {
    match set {
        Some(set) => set.contains(&key),
        None => fields.iter().any(|(k, _)| *k == key),
    }
}

/// An object key, borrowed from the line when it has no escapes.
enum KeyStr<'de> {
    Borrowed(&'de str),
    Owned(String),
}

impl KeyStr<'_> {
    fn as_str(&self) -> &str {
        match self {
            KeyStr::Borrowed(s) => s,
            KeyStr::Owned(s) => s,
        }
    }
}

impl<'de> de::Deserialize<'de> for KeyStr<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = KeyStr<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a string key")
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(KeyStr::Borrowed(v))
            }
            fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
                Ok(KeyStr::Owned(v.to_owned()))
            }
        }
        d.deserialize_str(V)
    }
}

struct RowSeed<'a> {
    kind: RowKind,
    keys: &'a mut KeyTable,
    row: &'a mut Row,
    saw_negative_zero: &'a mut bool,
}

/// The positions of the row's keys while it is read (see [`upsert`]).
#[derive(Default)]
struct RowIndex {
    top: FieldIndex,
    usage: FieldIndex,
}

impl<'de> DeserializeSeed<'de> for RowSeed<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for RowSeed<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let rollout = self.kind == RowKind::Rollout;
        let mut index = RowIndex::default();
        while let Some(name) = map.next_key::<KeyStr>()? {
            let name = name.as_str();
            match name {
                TASK_INDEX => self.row.task = map.next_value::<IndexValue>()?.0,
                ROLLOUT_INDEX => self.row.rollout = map.next_value::<IndexValue>()?.0,
                "agent_ref" => {
                    self.row.agent = map.next_value::<AgentRefValue>()?.0;
                    if rollout {
                        upsert(&mut self.row.top, &mut index.top, key::AGENT_REF, None);
                    }
                }
                _ if !rollout => {
                    map.next_value::<Skip>()?;
                }
                "response" => {
                    self.row.usage.clear(); // a repeated key: the last value wins
                    index.usage.0.clear();
                    map.next_value_seed(ObjectOrSkip(ResponseFields {
                        keys: &mut *self.keys,
                        usage: &mut self.row.usage,
                        index: &mut index.usage,
                        saw_negative_zero: &mut *self.saw_negative_zero,
                    }))?;
                    upsert(&mut self.row.top, &mut index.top, key::RESPONSE, None);
                }
                "reward" => {
                    let value: serde_json::Value = map.next_value()?;
                    let (reward, num) = reward_from_value(value);
                    *self.saw_negative_zero |= num.is_some_and(is_negative_zero);
                    self.row.reward = Some(reward);
                    upsert(&mut self.row.top, &mut index.top, key::REWARD, num);
                }
                _ => {
                    let MaybeNum(num) = map.next_value()?;
                    *self.saw_negative_zero |= num.is_some_and(is_negative_zero);
                    let id = self.keys.intern(name);
                    upsert(&mut self.row.top, &mut index.top, id, num);
                }
            }
        }
        if rollout {
            // The index keys are part of the row's numbers (upstream puts them in the frame),
            // but as keys, never as metric columns; keep them out of `top`.
            self.row
                .top
                .retain(|(k, _)| *k != key::TASK_INDEX && *k != key::ROLLOUT_INDEX);
        }
        Ok(())
    }
}

fn reward_from_value(value: serde_json::Value) -> (Reward, Option<Num>) {
    use serde_json::Value;
    let num = match &value {
        Value::Bool(b) => Some(Num::Int(i64::from(*b))),
        Value::Number(n) => Some(number_to_num(n)),
        _ => None,
    };
    match (&value, num) {
        (Value::Number(_), Some(n)) => (Reward::Num(n), num),
        _ => (Reward::Other(Box::new(value)), num),
    }
}

pub fn number_to_num(n: &serde_json::Number) -> Num {
    if let Some(i) = n.as_i64() {
        Num::Int(i)
    } else if let Some(u) = n.as_u64() {
        Num::UInt(u)
    } else {
        Num::Float(n.as_f64().unwrap_or(f64::NAN))
    }
}

/// Reads an object's entries; what [`ObjectOrSkip`] calls for a JSON object.
trait ObjectVisitor<'de> {
    fn visit_object<A: MapAccess<'de>>(self, map: A) -> Result<(), A::Error>;
}

/// A value that is read when it is an object and validated and skipped otherwise
/// (`response: null`, `usage: "n/a"` and the like are not errors).
struct ObjectOrSkip<V>(V);

impl<'de, V: ObjectVisitor<'de>> DeserializeSeed<'de> for ObjectOrSkip<V> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de, V: ObjectVisitor<'de>> Visitor<'de> for ObjectOrSkip<V> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<(), A::Error> {
        self.0.visit_object(map)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while seq.next_element::<Skip>()?.is_some() {}
        Ok(())
    }
    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }
    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }
    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }
    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        Ok(())
    }
    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }
}

/// `response`: only its `usage` object is read.
struct ResponseFields<'a> {
    keys: &'a mut KeyTable,
    usage: &'a mut Vec<(KeyId, Option<Num>)>,
    index: &'a mut FieldIndex,
    saw_negative_zero: &'a mut bool,
}

impl<'de> ObjectVisitor<'de> for ResponseFields<'_> {
    fn visit_object<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(name) = map.next_key::<KeyStr>()? {
            if name.as_str() == "usage" {
                self.usage.clear();
                self.index.0.clear();
                map.next_value_seed(ObjectOrSkip(UsageFields {
                    keys: &mut *self.keys,
                    usage: &mut *self.usage,
                    index: &mut *self.index,
                    saw_negative_zero: &mut *self.saw_negative_zero,
                }))?;
            } else {
                map.next_value::<Skip>()?;
            }
        }
        Ok(())
    }
}

/// `response.usage`: its top-level numeric fields; `*_details` objects are dropped.
struct UsageFields<'a> {
    keys: &'a mut KeyTable,
    usage: &'a mut Vec<(KeyId, Option<Num>)>,
    index: &'a mut FieldIndex,
    saw_negative_zero: &'a mut bool,
}

impl<'de> ObjectVisitor<'de> for UsageFields<'_> {
    fn visit_object<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(name) = map.next_key::<KeyStr>()? {
            let MaybeNum(num) = map.next_value()?;
            *self.saw_negative_zero |= num.is_some_and(is_negative_zero);
            let id = self.keys.intern(name.as_str());
            upsert(self.usage, self.index, id, num);
        }
        Ok(())
    }
}

struct IndexValue(IndexField);

impl<'de> de::Deserialize<'de> for IndexValue {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        // The token's text says what it was when it is not an integer (`"0"`, `null`, `[0]`, an
        // integer beyond 64 bits), which the parsed number alone cannot.
        let raw = <&'de serde_json::value::RawValue>::deserialize(d)?;
        let text = raw.get();
        let MaybeNum(num) = serde_json::from_str(text).map_err(de::Error::custom)?;
        Ok(IndexValue(match num {
            Some(Num::Int(v)) => IndexField::Int(v),
            Some(Num::Float(f)) if f == 0.0 && f.is_sign_negative() => IndexField::Int(0),
            _ => IndexField::Invalid(crate::json::describe_token(text)),
        }))
    }
}

struct AgentRefValue(AgentField);

impl<'de> de::Deserialize<'de> for AgentRefValue {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let value = serde_json::Value::deserialize(d)?;
        use serde_json::Value;
        let field = match value {
            Value::Object(mut obj) => match obj.shift_remove("name") {
                None => AgentField::NoName,
                Some(Value::Null) => AgentField::Null,
                Some(Value::String(s)) => AgentField::Name(s.into()),
                Some(Value::Number(n)) => AgentField::Number(number_to_num(&n)),
                Some(Value::Bool(_)) => AgentField::Invalid("a bool"),
                Some(_) => AgentField::Invalid("an array or object"),
            },
            _ => AgentField::NoName,
        };
        Ok(AgentRefValue(field))
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
