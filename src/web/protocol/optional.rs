//! `preserve` for an optional JS object: `undefined`/`null` is `None`.

use serde::de::Error;
use serde::{Deserializer, Serializer};
use wasm_bindgen::{JsCast, JsValue};

#[allow(clippy::ref_option)] // the signature serde's `with` requires
pub fn serialize<S: Serializer, T: JsCast>(v: &Option<T>, s: S) -> Result<S::Ok, S::Error> {
    match v {
        Some(v) => serde_wasm_bindgen::preserve::serialize(v, s),
        None => s.serialize_none(),
    }
}

pub fn deserialize<'de, D: Deserializer<'de>, T: JsCast>(d: D) -> Result<Option<T>, D::Error> {
    let v: JsValue = serde_wasm_bindgen::preserve::deserialize(d)?;
    if v.is_undefined() || v.is_null() {
        return Ok(None);
    }
    v.dyn_into()
        .map(Some)
        .map_err(|_| D::Error::custom("not the expected JS type"))
}
