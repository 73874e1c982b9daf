//! The complete reader: `serde_json` drives, for the lines the fast reader leaves (errors, whose
//! message and column come from here, and the rare shapes it does not take).

use super::fields::{Role, RowFields};
use super::{AgentField, IndexField, IndexKind, KeyTable, RowError, RowKind};
use crate::json::{MaybeNum, Num, Skip};
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use std::fmt;

/// Reads `line` (one JSON object and nothing else) into a row's fields.
pub(super) fn read_row<'k>(
    line: &str,
    kind: RowKind,
    keys: &'k mut KeyTable,
) -> Result<RowFields<'k>, RowError> {
    let mut fields = RowFields::new(kind, keys);
    let mut de = serde_json::Deserializer::from_str(line);
    RowSeed(&mut fields).deserialize(&mut de)?;
    de.end()?;
    Ok(fields)
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

struct RowSeed<'f, 'k>(&'f mut RowFields<'k>);

impl<'de> DeserializeSeed<'de> for RowSeed<'_, '_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for RowSeed<'_, '_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let fields = self.0;
        while let Some(name) = map.next_key::<KeyStr>()? {
            let name = name.as_str();
            match fields.role(name) {
                Role::TaskIndex => fields.task(map.next_value::<IndexValue>()?.0),
                Role::RolloutIndex => fields.rollout(map.next_value::<IndexValue>()?.0),
                Role::AgentRef => fields.agent_ref(map.next_value::<AgentRefValue>()?.0),
                Role::Ignored => {
                    map.next_value::<Skip>()?;
                }
                Role::Response => {
                    fields.clear_usage();
                    map.next_value_seed(ObjectOrSkip(ResponseFields(&mut *fields)))?;
                    fields.response_read();
                }
                Role::Reward => fields.reward(map.next_value()?),
                Role::Server => fields.server(map.next_value::<ServerValue>()?.0),
                Role::Mask => fields.mask(&map.next_value()?),
                Role::Number => {
                    let MaybeNum(num) = map.next_value()?;
                    fields.number(name, num);
                }
            }
        }
        Ok(())
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
struct ResponseFields<'f, 'k>(&'f mut RowFields<'k>);

impl<'de> ObjectVisitor<'de> for ResponseFields<'_, '_> {
    fn visit_object<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(name) = map.next_key::<KeyStr>()? {
            if name.as_str() == "usage" {
                self.0.clear_usage();
                map.next_value_seed(ObjectOrSkip(UsageFields(&mut *self.0)))?;
            } else {
                map.next_value::<Skip>()?;
            }
        }
        Ok(())
    }
}

/// `response.usage`: its top-level numeric fields; `*_details` objects are dropped.
struct UsageFields<'f, 'k>(&'f mut RowFields<'k>);

impl<'de> ObjectVisitor<'de> for UsageFields<'_, '_> {
    fn visit_object<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(name) = map.next_key::<KeyStr>()? {
            let MaybeNum(num) = map.next_value()?;
            self.0.usage_field(name.as_str(), num);
        }
        Ok(())
    }
}

pub(super) struct IndexValue(pub(super) IndexField);

impl<'de> de::Deserialize<'de> for IndexValue {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        // The token's text says what it was when it is not an integer (`"0"`, `null`, `[0]`, an
        // integer beyond 64 bits), which the parsed number alone cannot.
        let raw = <&'de serde_json::value::RawValue>::deserialize(d)?;
        let text = raw.get();
        let MaybeNum(num) = serde_json::from_str(text).map_err(de::Error::custom)?;
        let float_text = text.contains(['.', 'e', 'E']);
        Ok(IndexValue(match num {
            _ if text == "true" || text == "false" => {
                IndexField::Typed(i64::from(text == "true"), IndexKind::Bool)
            }
            Some(Num::Int(v)) => IndexField::Int(v),
            // `-0`: Python's `json` reads an int.
            Some(Num::Float(f)) if f == 0.0 && !float_text => IndexField::Int(0),
            // A float holding an integer is the integer's key in Python (`1.0 == 1`); beyond
            // 2^53 a float is not one integer's, and it is refused with other floats.
            Some(Num::Float(f)) if f.fract() == 0.0 && f.abs() <= 9_007_199_254_740_992.0 =>
            {
                #[allow(clippy::cast_possible_truncation)]
                IndexField::Typed(f as i64, IndexKind::Float)
            }
            _ => IndexField::Invalid(crate::json::describe_token(text)),
        }))
    }
}

/// `_ng_environment_server`: a name as `agent_ref.name` is read (`NoAgentRef` stands for an
/// absent key and is never produced here).
pub(super) struct ServerValue(pub(super) AgentField);

impl<'de> de::Deserialize<'de> for ServerValue {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde_json::Value;
        Ok(ServerValue(match Value::deserialize(d)? {
            Value::Null => AgentField::Null,
            Value::String(s) => AgentField::Name(s.into()),
            Value::Number(n) => AgentField::Number(crate::json::number_to_num(&n)),
            Value::Bool(_) => AgentField::Invalid("a bool"),
            _ => AgentField::Invalid("an array or object"),
        }))
    }
}

pub(super) struct AgentRefValue(pub(super) AgentField);

impl<'de> de::Deserialize<'de> for AgentRefValue {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let value = serde_json::Value::deserialize(d)?;
        use serde_json::Value;
        let field = match value {
            Value::Object(mut obj) => match obj.shift_remove("name") {
                None => AgentField::NoName,
                Some(Value::Null) => AgentField::Null,
                Some(Value::String(s)) => AgentField::Name(s.into()),
                Some(Value::Number(n)) => AgentField::Number(crate::json::number_to_num(&n)),
                Some(Value::Bool(_)) => AgentField::Invalid("a bool"),
                Some(_) => AgentField::Invalid("an array or object"),
            },
            _ => AgentField::NoName,
        };
        Ok(AgentRefValue(field))
    }
}
