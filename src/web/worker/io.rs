//! The worker's files: `File`s read synchronously with `FileReaderSync` behind `std::io::Read`
//! (gloo has no synchronous reader; synchronous reads are allowed only in workers), fed to the
//! core by [`crate::read::chunks`]; rollout lines read back by span through a window; outputs written
//! into Blobs part by part; replies posted to the page.

use super::super::protocol::{encode, Failure, Progress, Reply};
use crate::read::chunks::{for_each_chunk, Flow};
use crate::read::jsonl::LineSpan;
use crate::render::LineSource;
use wasm_bindgen::{JsCast, JsValue};
use web_sys::{DedicatedWorkerGlobalScope, File, FileReaderSync};

/// Bytes read per `FileReaderSync` call when streaming a file.
pub const SLICE: usize = 8 << 20;
/// Blob parts and the read-back window.
pub const WINDOW: u64 = 4 << 20;

pub fn js_error(e: JsValue) -> String {
    e.as_string().unwrap_or_else(|| format!("{e:?}"))
}

/// Posts a reply to the page (a reply that cannot be encoded becomes a failure).
pub fn post(reply: &Reply) {
    let scope: DedicatedWorkerGlobalScope = js_sys::global().unchecked_into();
    let message = encode(reply).or_else(|e| encode(&Reply::Failed(Failure::from(e))));
    if let Ok(message) = message {
        let _ = scope.post_message(&message);
    }
}

pub fn post_progress(bytes: u64, total: u64, lines: u64) {
    post(&Reply::Progress(Progress {
        bytes: bytes as f64,
        total: total as f64,
        lines,
    }));
}

/// A `File` as a `Read`, one synchronous slice read per call.
pub struct SyncFile<'a> {
    reader: FileReaderSync,
    file: &'a File,
    at: u64,
}

impl<'a> SyncFile<'a> {
    pub fn open(file: &'a File) -> Result<SyncFile<'a>, String> {
        Ok(SyncFile {
            reader: FileReaderSync::new().map_err(js_error)?,
            file,
            at: 0,
        })
    }

    pub fn size(&self) -> u64 {
        self.file.size() as u64
    }

    /// Bytes `start..end` of the file.
    pub fn read_range(&self, start: u64, end: u64) -> Result<Vec<u8>, String> {
        let blob = self
            .file
            .slice_with_f64_and_f64(start as f64, end as f64)
            .map_err(js_error)?;
        let buffer = self.reader.read_as_array_buffer(&blob).map_err(js_error)?;
        Ok(js_sys::Uint8Array::new(&buffer).to_vec())
    }
}

impl std::io::Read for SyncFile<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let end = (self.at + buf.len() as u64).min(self.size());
        if end <= self.at {
            return Ok(0);
        }
        let blob = self
            .file
            .slice_with_f64_and_f64(self.at as f64, end as f64)
            .map_err(|e| std::io::Error::other(js_error(e)))?;
        let buffer = self
            .reader
            .read_as_array_buffer(&blob)
            .map_err(|e| std::io::Error::other(js_error(e)))?;
        let n = (end - self.at) as usize;
        js_sys::Uint8Array::new(&buffer).copy_to(&mut buf[..n]);
        self.at = end;
        Ok(n)
    }
}

/// Streams `file` to `each` chunk by chunk, with the bytes read so far (this chunk included).
pub fn feed<E: From<String>>(
    file: &File,
    mut each: impl FnMut(&[u8], u64) -> Result<Flow, E>,
) -> Result<(), E> {
    let mut reader = SyncFile::open(file)?;
    let mut buf = vec![0u8; SLICE];
    let mut done = 0u64;
    for_each_chunk(
        &mut reader,
        &mut buf,
        |chunk| {
            done += chunk.len() as u64;
            each(chunk, done)
        },
        |e| E::from(format!("reading '{}': {e}", file.name())),
    )?;
    Ok(())
}

/// A whole (small) file.
pub fn read_all(file: &File) -> Result<Vec<u8>, String> {
    let mut out = Vec::with_capacity(file.size() as usize);
    feed::<String>(file, |c, _| {
        out.extend_from_slice(c);
        Ok(Flow::Continue)
    })?;
    Ok(out)
}

/// Lines read back by their spans. Spans come in (nearly always) file order, so a window of
/// `window` bytes is read at once: one `FileReaderSync` call per window, not one per line
/// (measured: one call per task made a 1 GB run take 34 s instead of a few). `on_line` sees
/// each line read (the profile keeps each sample's prompt snippet on the way).
pub struct SpanReader<'a, F: FnMut(LineSpan, &[u8])> {
    file: SyncFile<'a>,
    window_size: u64,
    window: Vec<u8>,
    window_start: u64,
    on_line: F,
}

impl<'a, F: FnMut(LineSpan, &[u8])> SpanReader<'a, F> {
    pub fn new(file: &'a File, window_size: u64, on_line: F) -> Result<Self, String> {
        Ok(SpanReader {
            file: SyncFile::open(file)?,
            window_size,
            window: Vec::new(),
            window_start: 0,
            on_line,
        })
    }
}

impl<F: FnMut(LineSpan, &[u8])> LineSource for SpanReader<'_, F> {
    fn read_span(&mut self, span: LineSpan) -> std::io::Result<Vec<u8>> {
        let end = span.offset + u64::from(span.len);
        if span.offset < self.window_start || end > self.window_start + self.window.len() as u64 {
            let stop =
                (span.offset + self.window_size.max(u64::from(span.len))).min(self.file.size());
            self.window = self
                .file
                .read_range(span.offset, stop)
                .map_err(std::io::Error::other)?;
            self.window_start = span.offset;
        }
        let at = (span.offset - self.window_start) as usize;
        let bytes = self
            .window
            .get(at..at + span.len as usize)
            .ok_or_else(|| {
                std::io::Error::new(
                    std::io::ErrorKind::UnexpectedEof,
                    "the file changed while it was read",
                )
            })?
            .to_vec();
        (self.on_line)(span, &bytes);
        Ok(bytes)
    }
}

/// Output written into a Blob in parts of [`WINDOW`] bytes, so a file never sits whole in wasm
/// memory. (gloo's `Blob::new` takes one buffer; a Blob of many parts needs web-sys.)
pub struct BlobWriter {
    parts: js_sys::Array,
    buf: Vec<u8>,
}

impl BlobWriter {
    pub fn new() -> Self {
        BlobWriter {
            parts: js_sys::Array::new(),
            buf: Vec::new(),
        }
    }

    fn flush_part(&mut self) {
        if !self.buf.is_empty() {
            self.parts
                .push(&js_sys::Uint8Array::from(self.buf.as_slice()));
            self.buf.clear();
        }
    }

    pub fn finish(mut self, mime: &str) -> Result<web_sys::Blob, String> {
        self.flush_part();
        let options = web_sys::BlobPropertyBag::new();
        options.set_type(mime);
        web_sys::Blob::new_with_u8_array_sequence_and_options(&self.parts, &options)
            .map_err(js_error)
    }
}

impl std::io::Write for BlobWriter {
    fn write(&mut self, data: &[u8]) -> std::io::Result<usize> {
        self.buf.extend_from_slice(data);
        if self.buf.len() as u64 >= WINDOW {
            self.flush_part();
        }
        Ok(data.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// This worker's wasm memory, for the browser benchmark.
pub fn memory_bytes() -> f64 {
    use wasm_bindgen::JsCast;
    wasm_bindgen::memory()
        .dyn_into::<js_sys::WebAssembly::Memory>()
        .map_or(0.0, |m| {
            js_sys::ArrayBuffer::from(m.buffer()).byte_length() as f64
        })
}

/// This worker's clock in milliseconds (`performance.now()`, finer than `Date`).
pub fn now_ms() -> f64 {
    js_sys::global()
        .unchecked_into::<web_sys::WorkerGlobalScope>()
        .performance()
        .map_or_else(js_sys::Date::now, |p| p.now())
}
