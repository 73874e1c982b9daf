//! The browser's side of following a growing file: Chromium's File System Access handles
//! (`showOpenFilePicker`, `FileSystemFileHandle.getFile()`), called through `js_sys` so the app
//! needs no unstable web-sys API; reads of a file's byte ranges; and a timer to wait on.
//! A `File` is a snapshot: once the file on disk changes, Chromium refuses to read it, so every
//! refresh asks the handle for a new one.

use js_sys::{Array, Function, Object, Promise, Reflect};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;

/// Whether this browser hands out file handles (Chromium); others give only snapshots.
pub fn can_follow() -> bool {
    picker().is_some()
}

fn picker() -> Option<Function> {
    Reflect::get(&gloo_utils::window(), &"showOpenFilePicker".into())
        .ok()?
        .dyn_into()
        .ok()
}

fn js_error(e: &JsValue) -> String {
    e.dyn_ref::<js_sys::Error>()
        .map_or_else(|| format!("{e:?}"), |e| String::from(e.message()))
}

/// The handles of the files the user picks (several at once). An empty list when they cancel.
pub async fn pick() -> Result<Vec<JsValue>, String> {
    let Some(picker) = picker() else {
        return Err("this browser has no file picker that can follow a file".into());
    };
    let options = Object::new();
    let _ = Reflect::set(&options, &"multiple".into(), &true.into());
    let promise = picker
        .call1(&gloo_utils::window(), &options)
        .map_err(|e| js_error(&e))?;
    match JsFuture::from(Promise::from(promise)).await {
        Ok(list) => Ok(Array::from(&list).iter().collect()),
        // The user closed the picker.
        Err(e) if Reflect::get(&e, &"name".into()).ok() == Some("AbortError".into()) => {
            Ok(Vec::new())
        }
        Err(e) => Err(js_error(&e)),
    }
}

/// The file as it is now (`handle.getFile()`).
pub async fn file_of(handle: &JsValue) -> Result<web_sys::File, String> {
    let get: Function = Reflect::get(handle, &"getFile".into())
        .and_then(JsCast::dyn_into)
        .map_err(|e| js_error(&e))?;
    let promise = get.call0(handle).map_err(|e| js_error(&e))?;
    JsFuture::from(Promise::from(promise))
        .await
        .map_err(|e| js_error(&e))?
        .dyn_into()
        .map_err(|_| "the handle gave no file".to_string())
}

/// Bytes `start..end` of `file`.
pub async fn read(file: &web_sys::File, start: u64, end: u64) -> Result<Vec<u8>, String> {
    let blob = gloo_file::Blob::from(file.clone());
    gloo_file::futures::read_as_bytes(&blob.slice(start, end))
        .await
        .map_err(|e| format!("cannot read '{}': {e}", file.name()))
}

/// The first `len` bytes of `file` as a file of the same name (no copy: a slice of it).
pub fn first_bytes(file: &web_sys::File, len: u64) -> Result<web_sys::File, String> {
    #[allow(clippy::cast_precision_loss)] // file sizes are far below 2^53
    let slice = file
        .slice_with_f64_and_f64(0.0, len as f64)
        .map_err(|e| js_error(&e))?;
    web_sys::File::new_with_blob_sequence(&Array::of1(&slice), &file.name())
        .map_err(|e| js_error(&e))
}

/// Where the file's last whole line ends (0 when it has none): a writer's torn last line waits
/// for its end. Reads back from the end a megabyte at a time.
pub async fn whole_lines(file: &web_sys::File) -> Result<u64, String> {
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let mut end = file.size() as u64;
    while end > 0 {
        let start = end.saturating_sub(CHUNK);
        let bytes = read(file, start, end).await?;
        if let Some(i) = bytes.iter().rposition(|b| *b == b'\n') {
            return Ok(start + i as u64 + 1);
        }
        end = start;
    }
    Ok(0)
}

/// The most a refresh reads or feeds at once, so no step is a long task on the page's thread.
pub const CHUNK: u64 = 1 << 20;

/// Waits `ms` milliseconds (a `setTimeout`), leaving the thread to the page meanwhile.
pub async fn sleep(ms: i32) {
    let promise = Promise::new(&mut |resolve, _| {
        let _ = gloo_utils::window()
            .set_timeout_with_callback_and_timeout_and_arguments_0(&resolve, ms);
    });
    let _ = JsFuture::from(promise).await;
}
