//! Messages between the page and its worker: plain JS objects with a `kind`, files passed as
//! `File` (the worker reads them itself), structured results as JSON text of core types.

use wasm_bindgen::{JsCast, JsValue};

pub fn object(entries: &[(&str, JsValue)]) -> JsValue {
    let obj = js_sys::Object::new();
    for (k, v) in entries {
        let _ = js_sys::Reflect::set(&obj, &JsValue::from_str(k), v);
    }
    obj.into()
}

pub fn field(msg: &JsValue, key: &str) -> JsValue {
    js_sys::Reflect::get(msg, &JsValue::from_str(key)).unwrap_or(JsValue::UNDEFINED)
}

pub fn text(msg: &JsValue, key: &str) -> String {
    field(msg, key).as_string().unwrap_or_default()
}

pub fn number(msg: &JsValue, key: &str) -> f64 {
    field(msg, key).as_f64().unwrap_or(0.0)
}

pub fn file(msg: &JsValue, key: &str) -> Option<web_sys::File> {
    field(msg, key).dyn_into::<web_sys::File>().ok()
}

pub fn blob(msg: &JsValue, key: &str) -> Option<web_sys::Blob> {
    field(msg, key).dyn_into::<web_sys::Blob>().ok()
}
