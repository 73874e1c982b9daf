//! The one place the row rules live: which field goes where, a repeated key keeping its first
//! position and its last value (as a Python dict), the `-0` flag, what is pruned. Both readers
//! (`fast`, and `serde_path` for what `fast` leaves) feed a row's fields here in order.

use super::{key, AgentField, IndexField, KeyId, KeyTable, Reward, Row, RowKind};
use crate::gym::keys::{ENVIRONMENT_SERVER, MASK_SAMPLE, ROLLOUT_INDEX, TASK_INDEX};
use crate::json::Num;
use std::collections::HashMap;

/// What a top-level field is to the profile.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Role {
    TaskIndex,
    RolloutIndex,
    AgentRef,
    /// An object whose `usage` is read.
    Response,
    /// Kept verbatim (upstream copies it into `rollout_infos`).
    Reward,
    /// Kept when numeric.
    Number,
    /// `_ng_environment_server`, read as an agent name is.
    Server,
    /// `mask_sample`: its truthiness, and kept when numeric.
    Mask,
    /// Not read (every other field of a materialized input).
    Ignored,
}

/// A row being read.
pub(super) struct RowFields<'k> {
    kind: RowKind,
    keys: &'k mut KeyTable,
    row: Row,
    top_index: FieldIndex,
    usage_index: FieldIndex,
    saw_negative_zero: bool,
}

impl<'k> RowFields<'k> {
    pub(super) fn new(kind: RowKind, keys: &'k mut KeyTable) -> Self {
        RowFields {
            kind,
            keys,
            row: Row::default(),
            top_index: FieldIndex::default(),
            usage_index: FieldIndex::default(),
            saw_negative_zero: false,
        }
    }

    pub(super) fn role(&self, name: &str) -> Role {
        match name {
            TASK_INDEX => Role::TaskIndex,
            ROLLOUT_INDEX => Role::RolloutIndex,
            "agent_ref" => Role::AgentRef,
            ENVIRONMENT_SERVER => Role::Server,
            _ if self.kind == RowKind::Input => Role::Ignored,
            MASK_SAMPLE => Role::Mask,
            "response" => Role::Response,
            "reward" => Role::Reward,
            _ => Role::Number,
        }
    }

    pub(super) fn task(&mut self, value: IndexField) {
        self.row.task = value;
    }

    pub(super) fn rollout(&mut self, value: IndexField) {
        self.row.rollout = value;
    }

    pub(super) fn agent_ref(&mut self, agent: AgentField) {
        self.row.agent = agent;
        if self.kind == RowKind::Rollout {
            upsert(&mut self.row.top, &mut self.top_index, key::AGENT_REF, None);
        }
    }

    /// A `response` (a repeated key: the last one's usage wins) or its `usage` key begins.
    pub(super) fn clear_usage(&mut self) {
        self.row.usage.clear();
        self.usage_index.0.clear();
    }

    pub(super) fn usage_field(&mut self, name: &str, num: Option<Num>) {
        self.saw_negative_zero |= num.is_some_and(is_negative_zero);
        let id = self.keys.intern(name);
        upsert(&mut self.row.usage, &mut self.usage_index, id, num);
    }

    /// The `response` value has been read (whatever it was).
    pub(super) fn response_read(&mut self) {
        upsert(&mut self.row.top, &mut self.top_index, key::RESPONSE, None);
    }

    pub(super) fn reward(&mut self, value: serde_json::Value) {
        let (reward, num) = reward_from_value(value);
        self.saw_negative_zero |= num.is_some_and(is_negative_zero);
        self.row.reward = Some(reward);
        upsert(&mut self.row.top, &mut self.top_index, key::REWARD, num);
    }

    pub(super) fn number(&mut self, name: &str, num: Option<Num>) {
        self.saw_negative_zero |= num.is_some_and(is_negative_zero);
        let id = self.keys.intern(name);
        upsert(&mut self.row.top, &mut self.top_index, id, num);
    }

    pub(super) fn server(&mut self, server: AgentField) {
        self.row.server = server;
    }

    /// `mask_sample`'s value: the row is masked when Python finds it true; a number (or bool)
    /// is also kept as a field, as any other.
    pub(super) fn mask(&mut self, value: &serde_json::Value) {
        self.row.masked = crate::gym::py::truthy(value);
        let num = match value {
            serde_json::Value::Bool(b) => Some(Num::Int(i64::from(*b))),
            serde_json::Value::Number(n) => Some(crate::json::number_to_num(n)),
            _ => None,
        };
        self.number(MASK_SAMPLE, num);
    }

    /// Whether a `-0.0` was read where orjson may have read the integer `-0` (see `json`).
    pub(super) fn saw_negative_zero(&self) -> bool {
        self.saw_negative_zero
    }

    pub(super) fn finish(mut self) -> Row {
        if self.kind == RowKind::Rollout {
            prune_unused_non_numeric(&mut self.row);
        }
        self.row
    }
}

fn reward_from_value(value: serde_json::Value) -> (Reward, Option<Num>) {
    use serde_json::Value;
    let num = match &value {
        Value::Bool(b) => Some(Num::Int(i64::from(*b))),
        Value::Number(n) => Some(crate::json::number_to_num(n)),
        _ => None,
    };
    match (&value, num) {
        (Value::Number(_), Some(n)) => (Reward::Num(n), num),
        _ => (Reward::Other(Box::new(value)), num),
    }
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
pub(super) struct FieldIndex(HashMap<KeyId, usize>);

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
