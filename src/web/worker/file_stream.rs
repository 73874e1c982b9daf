//! A pool worker's file read as a stream: a range of a `File` from its first byte on, chunk by
//! chunk into wasm memory (`range_job`).

use super::io::js_error;
use wasm_bindgen::JsCast;
use web_sys::File;

/// A `File` read from a byte on as a stream (`Blob.stream()`), chunk by chunk into wasm memory.
/// Faster than `FileReaderSync` slices in Chromium, most of all while the worker parses
/// (`cargo bench --bench browser_file_read`; docs/performance.md).
pub struct FileStream {
    reader: web_sys::ReadableStreamDefaultReader,
}

impl FileStream {
    /// The stream of `file` from byte `at` to its end.
    pub fn open(file: &File, at: u64) -> Result<FileStream, String> {
        let rest = file.slice_with_f64(at as f64).map_err(js_error)?;
        Ok(FileStream {
            reader: rest.stream().get_reader().unchecked_into(),
        })
    }

    /// The next chunk into `chunk` (replacing it); false once the file has ended (`chunk` is
    /// then empty).
    pub async fn next_into(&mut self, chunk: &mut Vec<u8>) -> Result<bool, String> {
        let result = wasm_bindgen_futures::JsFuture::from(self.reader.read())
            .await
            .map_err(js_error)?;
        let field = |name: &str| js_sys::Reflect::get(&result, &name.into()).map_err(js_error);
        chunk.clear();
        if field("done")?.as_bool().unwrap_or(true) {
            return Ok(false);
        }
        let value: js_sys::Uint8Array = field("value")?.unchecked_into();
        chunk.resize(value.length() as usize, 0);
        value.copy_to(chunk);
        Ok(true)
    }

    /// Stops reading: the rest of the file is not needed.
    pub fn cancel(self) {
        let _ = self.reader.cancel();
    }
}
