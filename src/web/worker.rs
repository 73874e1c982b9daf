//! Runs inside the Web Worker: reads a `File` slice by slice with `FileReaderSync` (synchronous
//! reads are allowed in workers) and feeds the core, posting progress and then the result.

use super::protocol::{self, object};
use crate::pivot::{report::PivotView, PivotOptions, PivotValidator};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{DedicatedWorkerGlobalScope, File, FileReaderSync, MessageEvent};

pub(super) const SLICE: f64 = 8.0 * 1024.0 * 1024.0;

pub fn start() {
    console_error_panic_hook::set_once();
    let scope: DedicatedWorkerGlobalScope = js_sys::global().unchecked_into();
    let handler = Closure::<dyn FnMut(MessageEvent)>::new(move |e: MessageEvent| {
        let scope: DedicatedWorkerGlobalScope = js_sys::global().unchecked_into();
        let reply = match handle(&scope, &e.data()) {
            Ok(reply) => reply,
            Err(message) => object(&[("kind", "error".into()), ("message", message.into())]),
        };
        let _ = scope.post_message(&reply);
    });
    scope.set_onmessage(Some(handler.as_ref().unchecked_ref()));
    handler.forget();
    let _ = scope.post_message(&object(&[("kind", "ready".into())]));
}

fn handle(scope: &DedicatedWorkerGlobalScope, msg: &JsValue) -> Result<JsValue, String> {
    match protocol::text(msg, "kind").as_str() {
        "validate-pivot" => {
            let file = protocol::file(msg, "file").ok_or("no file")?;
            let options: PivotOptions =
                serde_json::from_str(&protocol::text(msg, "options")).map_err(|e| e.to_string())?;
            validate_pivot(scope, &file, options)
        }
        "profile" => {
            let inputs = protocol::file(msg, "inputs").ok_or("no inputs file")?;
            let rollouts = protocol::file(msg, "rollouts").ok_or("no rollouts file")?;
            let options =
                serde_json::from_str(&protocol::text(msg, "options")).map_err(|e| e.to_string())?;
            super::worker_profile::run(scope, &inputs, &rollouts, options)
        }
        "profile-files" => {
            let profiling = protocol::file(msg, "profiling").ok_or("no profiling file")?;
            super::worker_profile::run_files(&profiling, protocol::file(msg, "metrics"))
        }
        "report" => {
            let request =
                serde_json::from_str(&protocol::text(msg, "request")).map_err(|e| e.to_string())?;
            super::worker_profile::report(request)
        }
        other => Err(format!("unknown request {other:?}")),
    }
}

pub(super) fn read_slice(
    reader: &FileReaderSync,
    file: &File,
    start: f64,
    end: f64,
) -> Result<Vec<u8>, String> {
    let blob = file.slice_with_f64_and_f64(start, end).map_err(js_error)?;
    let buffer = reader.read_as_array_buffer(&blob).map_err(js_error)?;
    Ok(js_sys::Uint8Array::new(&buffer).to_vec())
}

pub(super) fn js_error(e: JsValue) -> String {
    e.as_string().unwrap_or_else(|| format!("{e:?}"))
}

pub(super) fn progress(scope: &DedicatedWorkerGlobalScope, bytes: f64, total: f64, lines: u64) {
    let msg = object(&[
        ("kind", "progress".into()),
        ("bytes", bytes.into()),
        ("total", total.into()),
        ("lines", (lines as f64).into()),
    ]);
    let _ = scope.post_message(&msg);
}

fn validate_pivot(
    scope: &DedicatedWorkerGlobalScope,
    file: &File,
    options: PivotOptions,
) -> Result<JsValue, String> {
    let reader = FileReaderSync::new().map_err(js_error)?;
    let fix = options.fix;
    let mut validator = PivotValidator::new(file.name(), options);
    // The fixed copy is kept as JS byte arrays (outside wasm memory) and joined into a Blob.
    let fixed_parts = js_sys::Array::new();
    let size = file.size();
    let mut at = 0.0;
    while at < size {
        let end = (at + SLICE).min(size);
        let chunk = read_slice(&reader, file, at, end)?;
        let go_on = validator.push(&chunk);
        if fix {
            fixed_parts.push(&js_sys::Uint8Array::from(validator.take_fixed().as_slice()));
        }
        at = end;
        progress(scope, at, size, validator.lines_read());
        if !go_on {
            break;
        }
    }
    let (report, rest) = validator.finish();
    let view = PivotView::new(&report);
    let fixed = if fix {
        fixed_parts.push(&js_sys::Uint8Array::from(rest.as_slice()));
        let options = web_sys::BlobPropertyBag::new();
        options.set_type("application/jsonl");
        web_sys::Blob::new_with_u8_array_sequence_and_options(&fixed_parts, &options)
            .map_err(js_error)?
            .into()
    } else {
        JsValue::NULL
    };
    let view = serde_json::to_string(&view).map_err(|e| e.to_string())?;
    Ok(object(&[
        ("kind", "pivot-done".into()),
        ("view", view.into()),
        ("fixed", fixed),
    ]))
}
