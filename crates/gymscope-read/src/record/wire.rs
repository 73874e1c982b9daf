//! How rows cross between threads that share no memory (the app's reading workers): serde for
//! the parts derive cannot do. A format that is not self-describing (postcard) needs each value
//! in a shape it can read back: a key table as its names, a verbatim reward as JSON text, and the
//! fixed descriptions of a wrong value as one of their own texts.

use super::KeyTable;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// The text of a wrong value's kind (an alias, so serde's derive does not borrow it from the
/// input as it does a written `&str`).
pub type ValueKind = &'static str;

/// Every text an `IndexField::Invalid` or `AgentField::Invalid` holds: `json::describe_token`'s
/// kinds and the agent reader's own (tested below against their producers).
const INVALID_KINDS: [&str; 8] = [
    "null",
    "a bool",
    "a string",
    "an array",
    "an object",
    "an integer out of the 64-bit range",
    "a float",
    "an array or object",
];

/// A `&'static str` from [`INVALID_KINDS`], sent as its text.
pub mod static_text {
    use super::{Deserialize, Deserializer, Serializer, INVALID_KINDS};

    pub fn serialize<S: Serializer>(text: &&'static str, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(text)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<&'static str, D::Error> {
        let text = String::deserialize(d)?;
        INVALID_KINDS
            .iter()
            .find(|k| **k == text)
            .copied()
            .ok_or_else(|| serde::de::Error::custom(format!("unknown value kind {text:?}")))
    }
}

/// A JSON value sent as its text (serde_json's `Value` reads only from self-describing formats).
pub mod json_text {
    use super::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(v: &serde_json::Value, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&v.to_string())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<Box<serde_json::Value>, D::Error> {
        let text = String::deserialize(d)?;
        serde_json::from_str(&text).map_err(serde::de::Error::custom)
    }
}

impl Serialize for KeyTable {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.names.serialize(s)
    }
}

impl<'de> Deserialize<'de> for KeyTable {
    /// The names in id order; the ids are their positions again.
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let names = Vec::<Box<str>>::deserialize(d)?;
        let mut table = KeyTable::default();
        for (id, name) in names.iter().enumerate() {
            if table.intern(name) as usize != id {
                return Err(serde::de::Error::custom("a key table with a repeated name"));
            }
        }
        Ok(table)
    }
}

#[cfg(test)]
mod tests {
    use super::super::{parse_row, AgentField, IndexField, Reward, Row, RowKind};
    use super::*;
    use crate::json::describe_token;

    fn round_trip(row: &Row) -> Row {
        let bytes = postcard::to_allocvec(row).unwrap();
        postcard::from_bytes(&bytes).unwrap()
    }

    #[test]
    fn every_description_of_a_wrong_value_is_sent_as_itself() {
        for token in [
            "null",
            "true",
            "\"x\"",
            "[1]",
            "{}",
            "99999999999999999999",
            "1.5",
        ] {
            assert!(INVALID_KINDS.contains(&describe_token(token)), "{token}");
        }
        let mut keys = KeyTable::default();
        for (line, agent) in [
            (r#"{"agent_ref": {"name": true}}"#, "a bool"),
            (r#"{"agent_ref": {"name": [1]}}"#, "an array or object"),
        ] {
            let row = parse_row(line.as_bytes(), RowKind::Rollout, &mut keys).unwrap();
            assert_eq!(row.agent, AgentField::Invalid(agent));
            assert_eq!(round_trip(&row).agent, row.agent);
        }
    }

    #[test]
    fn a_row_and_its_key_table_come_back_as_they_left() {
        let mut keys = KeyTable::default();
        let line = br#"{"_ng_task_index": 1.5, "_ng_rollout_index": 2, "agent_ref": {"name": "a"},
            "reward": {"b": [1, -0.0, 1e300], "a": null}, "acc": 0.25, "big": 18446744073709551615,
            "response": {"usage": {"input_tokens": 7, "note": "x"}}}"#;
        let row = parse_row(line, RowKind::Rollout, &mut keys).unwrap();
        let back = round_trip(&row);
        assert_eq!(back.task, IndexField::Invalid("a float"));
        assert_eq!(back.rollout, row.rollout);
        assert_eq!(back.agent, row.agent);
        assert_eq!(back.top, row.top);
        assert_eq!(back.usage, row.usage);
        match (&back.reward, &row.reward) {
            (Some(Reward::Other(a)), Some(Reward::Other(b))) => {
                assert_eq!(a.to_string(), b.to_string());
            }
            other => panic!("{other:?}"),
        }
        let table: KeyTable = postcard::from_bytes(&postcard::to_allocvec(&keys).unwrap()).unwrap();
        assert_eq!(table.len(), keys.len());
        for id in 0..keys.len() as u32 {
            assert_eq!(table.name(id), keys.name(id));
            assert_eq!(table.get(keys.name(id)), Some(id));
        }
    }
}
