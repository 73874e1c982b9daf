//! A JSON row parsed only as deep as the checks look: the parts named by an [`Interest`] are
//! built (strings borrowed from the line), everything else is validated and skipped, keeping only
//! its kind. A 10 KB prompt inside `input` costs a scan, not an allocation.

use crate::fast_map::LastValues;
use crate::json::{Num, Skip};
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use std::borrow::Cow;
use std::fmt;

/// The kind of a value that was skipped, with the length of arrays and objects.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Kind {
    Null,
    Bool,
    Num,
    Str,
    Arr(usize),
    Obj(usize),
}

#[derive(Clone, Debug, PartialEq)]
pub enum Json<'a> {
    Null,
    Bool(bool),
    Num(Num),
    Str(Cow<'a, str>),
    Arr(Vec<Json<'a>>),
    /// Entries in first-seen key order; a repeated key keeps its first position and last value,
    /// as Python's `json` does.
    Obj(Vec<(Cow<'a, str>, Json<'a>)>),
    Skipped(Kind),
}

impl<'a> Json<'a> {
    /// `dict.get(key)` for an object; `None` otherwise.
    pub fn get(&self, key: &str) -> Option<&Json<'a>> {
        match self {
            Json::Obj(entries) => entries.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    pub fn is_null(&self) -> bool {
        matches!(self, Json::Null | Json::Skipped(Kind::Null))
    }

    pub fn is_object(&self) -> bool {
        matches!(self, Json::Obj(_) | Json::Skipped(Kind::Obj(_)))
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Json::Str(s) => Some(s),
            _ => None,
        }
    }

    /// Length of an array, built or skipped.
    pub fn array_len(&self) -> Option<usize> {
        match self {
            Json::Arr(items) => Some(items.len()),
            Json::Skipped(Kind::Arr(n)) => Some(*n),
            _ => None,
        }
    }

    /// The kind, for messages ("found null", "found an array").
    pub fn kind(&self) -> Kind {
        match self {
            Json::Null => Kind::Null,
            Json::Bool(_) => Kind::Bool,
            Json::Num(_) => Kind::Num,
            Json::Str(_) => Kind::Str,
            Json::Arr(a) => Kind::Arr(a.len()),
            Json::Obj(o) => Kind::Obj(o.len()),
            Json::Skipped(k) => *k,
        }
    }
}

/// Which parts of a row to build. `all` builds the whole subtree; otherwise only `keys` (for an
/// object) or `elements` (for an array) are built and the rest is skipped.
#[derive(Clone, Debug, Default)]
pub struct Interest {
    pub all: bool,
    pub keys: Vec<(String, Interest)>,
    pub elements: Option<Box<Interest>>,
}

impl Interest {
    pub fn all() -> Interest {
        Interest {
            all: true,
            ..Interest::default()
        }
    }

    /// The node for `key`, created if missing.
    pub fn key(&mut self, key: &str) -> &mut Interest {
        let at = if let Some(at) = self.keys.iter().position(|(k, _)| k == key) {
            at
        } else {
            self.keys.push((key.to_string(), Interest::default()));
            self.keys.len() - 1
        };
        &mut self.keys[at].1
    }

    /// Builds the whole value at a dotted path (as `--require-field` names it).
    pub fn add_path(&mut self, dotted: &str) {
        let mut node = self;
        for part in dotted.split('.') {
            node = node.key(part);
        }
        node.all = true;
    }

    fn child(&self, key: &str) -> Option<&Interest> {
        self.keys.iter().find(|(k, _)| k == key).map(|(_, i)| i)
    }
}

/// Parses one line. Errors are serde_json's (with the byte column).
pub fn parse<'a>(line: &'a str, interest: &Interest) -> Result<Json<'a>, serde_json::Error> {
    let mut de = super::depth::deserializer(line);
    let value = TreeSeed {
        interest: Some(interest),
    }
    .deserialize(&mut de)?;
    de.end()?;
    Ok(value)
}

struct TreeSeed<'i> {
    interest: Option<&'i Interest>,
}

impl<'de> DeserializeSeed<'de> for TreeSeed<'_> {
    type Value = Json<'de>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Json<'de>, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for TreeSeed<'_> {
    type Value = Json<'de>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Json<'de>, E> {
        Ok(if self.interest.is_some() {
            Json::Bool(v)
        } else {
            Json::Skipped(Kind::Bool)
        })
    }
    fn visit_i64<E>(self, v: i64) -> Result<Json<'de>, E> {
        Ok(if self.interest.is_some() {
            Json::Num(Num::Int(v))
        } else {
            Json::Skipped(Kind::Num)
        })
    }
    fn visit_u64<E>(self, v: u64) -> Result<Json<'de>, E> {
        Ok(if self.interest.is_some() {
            Json::Num(Num::from_u64(v))
        } else {
            Json::Skipped(Kind::Num)
        })
    }
    fn visit_f64<E>(self, v: f64) -> Result<Json<'de>, E> {
        Ok(if self.interest.is_some() {
            Json::Num(Num::Float(v))
        } else {
            Json::Skipped(Kind::Num)
        })
    }
    fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Json<'de>, E> {
        Ok(if self.interest.is_some() {
            Json::Str(Cow::Borrowed(v))
        } else {
            Json::Skipped(Kind::Str)
        })
    }
    fn visit_str<E>(self, v: &str) -> Result<Json<'de>, E> {
        Ok(if self.interest.is_some() {
            Json::Str(Cow::Owned(v.to_string()))
        } else {
            Json::Skipped(Kind::Str)
        })
    }
    fn visit_unit<E>(self) -> Result<Json<'de>, E> {
        Ok(if self.interest.is_some() {
            Json::Null
        } else {
            Json::Skipped(Kind::Null)
        })
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Json<'de>, A::Error> {
        let elements = self.interest.and_then(|i| {
            if i.all {
                Some(i)
            } else {
                i.elements.as_deref()
            }
        });
        if elements.is_some() {
            let mut items = Vec::new();
            while let Some(v) = seq.next_element_seed(TreeSeed { interest: elements })? {
                items.push(v);
            }
            return Ok(Json::Arr(items));
        }
        // Elements not needed (e.g. `input`, whose items only count): keep the length.
        let mut n = 0;
        while seq.next_element::<Skip>()?.is_some() {
            n += 1;
        }
        Ok(Json::Skipped(Kind::Arr(n)))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Json<'de>, A::Error> {
        let Some(interest) = self.interest else {
            let mut n = 0;
            while map.next_key::<Skip>()?.is_some() {
                map.next_value::<Skip>()?;
                n += 1;
            }
            return Ok(Json::Skipped(Kind::Obj(n)));
        };
        let mut entries: LastValues<Cow<'de, str>, Json<'de>> = LastValues::default();
        while let Some(key) = map.next_key::<CowStr<'de>>()? {
            let child = if interest.all {
                Some(interest)
            } else {
                interest.child(&key.0)
            };
            let value = map.next_value_seed(TreeSeed { interest: child })?;
            entries.set(key.0, value);
        }
        Ok(Json::Obj(entries.into_entries()))
    }
}

struct CowStr<'de>(Cow<'de, str>);

impl<'de> de::Deserialize<'de> for CowStr<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = CowStr<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<CowStr<'de>, E> {
                Ok(CowStr(Cow::Borrowed(v)))
            }
            fn visit_str<E>(self, v: &str) -> Result<CowStr<'de>, E> {
                Ok(CowStr(Cow::Owned(v.to_string())))
            }
        }
        d.deserialize_str(V)
    }
}

/// `serde_json::from_str` for borrowed values, without the recursion limit (see `depth`).
pub(super) fn deep_from_str<'a, T: serde::Deserialize<'a>>(text: &'a str) -> serde_json::Result<T> {
    let mut de = super::depth::deserializer(text);
    let value = T::deserialize(&mut de)?;
    de.end()?;
    Ok(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn interest() -> Interest {
        let mut i = Interest::default();
        i.key("a").all = true;
        i.key("list").elements = Some(Box::new(Interest {
            keys: vec![("name".into(), Interest::all())],
            ..Interest::default()
        }));
        i
    }

    #[test]
    fn builds_wanted_parts_and_skips_the_rest() {
        let line = r#"{"a":{"x":[1,"s"]},"big":{"text":"long"},"list":[{"name":"n","body":"b"},3],"n":null,"a":{"y":true}}"#;
        let v = parse(line, &interest()).unwrap();
        assert_eq!(v.get("big"), Some(&Json::Skipped(Kind::Obj(1))));
        assert_eq!(v.get("n").map(Json::is_null), Some(true));
        // repeated key: last value, first position
        assert_eq!(v.get("a").unwrap().get("y"), Some(&Json::Bool(true)));
        let list = v.get("list").unwrap();
        let Json::Arr(items) = list else {
            panic!("{list:?}")
        };
        assert_eq!(items[0].get("name").and_then(Json::as_str), Some("n"));
        assert_eq!(items[0].get("body"), Some(&Json::Skipped(Kind::Str)));
        assert_eq!(items[1], Json::Num(Num::Int(3)));
    }

    #[test]
    fn a_wide_object_keeps_first_positions_and_last_values_past_the_linear_search() {
        // 40 keys, each given twice (the second time with another value), some repeated before
        // the index exists and some after.
        let mut members: Vec<String> = (0..40).map(|k| format!("\"k{k}\":{k}")).collect();
        members.extend((0..40).rev().map(|k| format!("\"k{k}\":{}", k + 100)));
        members.insert(5, "\"k1\":-1".into());
        let line = format!("{{\"a\":{{{}}}}}", members.join(","));
        let v = parse(&line, &interest()).unwrap();
        let Some(Json::Obj(entries)) = v.get("a") else {
            panic!("{v:?}")
        };
        let keys: Vec<String> = entries.iter().map(|(k, _)| k.to_string()).collect();
        let want: Vec<String> = (0..40).map(|k| format!("k{k}")).collect();
        assert_eq!(keys, want);
        for (k, (_, value)) in entries.iter().enumerate() {
            assert_eq!(value, &Json::Num(Num::Int(k as i64 + 100)), "k{k}");
        }
    }
}
