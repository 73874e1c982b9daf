//! The worker's profile job: both files read slice by slice with `FileReaderSync`, the core
//! profile, both output files as Blobs, and the inspector's view as JSON plus typed arrays.

use super::protocol::object;
use super::worker::{js_error, progress, read_slice, SLICE};
use crate::inspect::model;
use crate::jsonl::LineSpan;
use crate::output::output_file_names;
use crate::profile::{ProfileBuilder, ProfileOptions};
use crate::render::{self, LineSource};
use std::collections::HashMap;
use wasm_bindgen::JsValue;
use web_sys::{DedicatedWorkerGlobalScope, File, FileReaderSync};

const WINDOW: u64 = 4 << 20;

/// The last run shown, kept for a later "report" request (the page's Export report): a profile
/// with its files, or a report input read from profile files.
enum Kept {
    Run {
        profile: crate::profile::Profile,
        inputs: File,
        rollouts: File,
    },
    Files(crate::report::ReportInput),
}

thread_local! {
    static LAST: std::cell::RefCell<Option<Kept>> = const { std::cell::RefCell::new(None) };
}

/// `sample` lines read back from the inputs file; each one's prompt snippet is kept on the way.
/// Samples come in task order, which is (nearly always) file order, so they are read through a
/// 4 MB window: one `FileReaderSync` call per window, not one per task (measured: one call per
/// task made a 1 GB run take 34 s instead of a few).
struct SampleLines<'a> {
    reader: &'a FileReaderSync,
    file: &'a File,
    /// Bytes read at once: a window for samples in file order, 0 for scattered lines.
    window_size: u64,
    window: Vec<u8>,
    window_start: u64,
    snippets: HashMap<u64, String>,
}

impl LineSource for SampleLines<'_> {
    fn read_span(&mut self, span: LineSpan) -> std::io::Result<Vec<u8>> {
        let end = span.offset + u64::from(span.len);
        if span.offset < self.window_start || end > self.window_start + self.window.len() as u64 {
            let stop = (span.offset + self.window_size.max(u64::from(span.len)))
                .min(self.file.size() as u64);
            self.window = read_slice(self.reader, self.file, span.offset as f64, stop as f64)
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
                    "the inputs file changed while profiling",
                )
            })?
            .to_vec();
        self.snippets.insert(span.offset, model::snippet(&bytes));
        Ok(bytes)
    }
}

/// Output written into a Blob in 4 MB parts, so a file never sits whole in wasm memory.
struct BlobWriter {
    parts: js_sys::Array,
    buf: Vec<u8>,
}

impl BlobWriter {
    fn new() -> Self {
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

    fn finish(mut self, mime: &str) -> Result<JsValue, String> {
        self.flush_part();
        let options = web_sys::BlobPropertyBag::new();
        options.set_type(mime);
        let blob = web_sys::Blob::new_with_u8_array_sequence_and_options(&self.parts, &options)
            .map_err(js_error)?;
        Ok(blob.into())
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

/// The "profile-done" message: the view as JSON and the columns as typed arrays.
fn done_message(
    view: &model::InspectView,
    cols: &model::Columns,
) -> Result<Vec<(&'static str, JsValue)>, String> {
    Ok(vec![
        ("kind", "profile-done".into()),
        (
            "view",
            serde_json::to_string(view)
                .map_err(|e| e.to_string())?
                .into(),
        ),
        ("task_stats", f64_array(&cols.task_stats)),
        ("point_task", f64_array(&cols.point_task)),
        ("point_rollout", f64_array(&cols.point_rollout)),
        ("point_offset", f64_array(&cols.point_offset)),
        ("point_len", f64_array(&cols.point_len)),
        ("point_values", f64_array(&cols.point_values)),
        ("worker_memory", memory_bytes().into()),
    ])
}

fn f64_array(v: &[f64]) -> JsValue {
    js_sys::Float64Array::from(v).into()
}

/// This worker's wasm memory, for the benchmark's report.
fn memory_bytes() -> f64 {
    use wasm_bindgen::JsCast;
    wasm_bindgen::memory()
        .dyn_into::<js_sys::WebAssembly::Memory>()
        .map(|m| js_sys::ArrayBuffer::from(m.buffer()).byte_length() as f64)
        .unwrap_or(0.0)
}

pub fn run(
    scope: &DedicatedWorkerGlobalScope,
    inputs: &File,
    rollouts: &File,
    options: ProfileOptions,
) -> Result<JsValue, String> {
    let reader = FileReaderSync::new().map_err(js_error)?;
    let mut builder = ProfileBuilder::new(inputs.name(), rollouts.name());
    let total = inputs.size() + rollouts.size();
    let mut done = 0.0;
    for (file, is_inputs) in [(inputs, true), (rollouts, false)] {
        let size = file.size();
        let mut at = 0.0;
        while at < size {
            let end = (at + SLICE).min(size);
            let chunk = read_slice(&reader, file, at, end)?;
            let pushed = if is_inputs {
                builder.push_inputs(&chunk)
            } else {
                builder.push_rollouts(&chunk)
            };
            if let Err(e) = pushed {
                return Ok(error(&e));
            }
            done += end - at;
            at = end;
            progress(scope, done, total, builder.lines_read());
        }
    }
    let profile = match builder.finish(options) {
        Ok(p) => p,
        Err(e) => return Ok(error(&e)),
    };
    let mut samples = SampleLines {
        reader: &reader,
        file: inputs,
        window_size: WINDOW,
        window: Vec::new(),
        window_start: 0,
        snippets: HashMap::new(),
    };
    let mut profiling = BlobWriter::new();
    render::write_reward_profiling(&profile, &mut samples, &inputs.name(), &mut profiling)
        .map_err(|e| e.to_string())?;
    let mut metrics = BlobWriter::new();
    render::write_agent_metrics(&mut metrics, &profile).map_err(|e| e.to_string())?;
    let snippets: HashMap<i64, String> = profile
        .tasks
        .iter()
        .filter_map(|t| {
            samples
                .snippets
                .get(&t.sample.offset)
                .map(|s| (t.task, s.clone()))
        })
        .collect();
    drop(samples);
    let (view, cols) = model::build(&profile, &inputs.name(), &rollouts.name(), &snippets);
    LAST.with(|last| {
        *last.borrow_mut() = Some(Kept::Run {
            profile,
            inputs: inputs.clone(),
            rollouts: rollouts.clone(),
        })
    });
    let (profiling_name, metrics_name) = output_file_names(&rollouts.name());
    let mut reply = done_message(&view, &cols)?;
    reply.extend([
        ("profiling", profiling.finish("application/jsonl")?),
        ("profiling_name", profiling_name.into()),
        ("metrics", metrics.finish("application/json")?),
        ("metrics_name", metrics_name.into()),
    ]);
    Ok(object(&reply))
}

fn error(e: &crate::error::ProfileError) -> JsValue {
    object(&[
        ("kind", "error".into()),
        ("message", e.to_string().into()),
        ("missing_rollouts", e.is_missing_rollouts().into()),
    ])
}

/// Settings of the page's "Export report".
#[derive(serde::Deserialize)]
pub struct ReportRequest {
    pub title: String,
    pub date: Option<String>,
    pub conversations: usize,
}

/// Renders the report of the last run with the same core renderer as `gymscope report`.
pub fn report(request: ReportRequest) -> Result<JsValue, String> {
    use crate::report::{self, ReportInput, ReportMeta, Source};
    LAST.with(|last| {
        let last = last.borrow();
        let date = request.date.filter(|d| !d.is_empty());
        let (input, name) = match last.as_ref().ok_or("profile a run first")? {
            Kept::Run {
                profile,
                inputs,
                rollouts,
            } => {
                let reader = FileReaderSync::new().map_err(js_error)?;
                let mut lines = SampleLines {
                    reader: &reader,
                    file: rollouts,
                    window_size: 0,
                    window: Vec::new(),
                    window_start: 0,
                    snippets: HashMap::new(),
                };
                let source = |f: &File| Source {
                    name: f.name(),
                    bytes: f.size() as u64,
                };
                let meta = ReportMeta {
                    title: request.title,
                    sources: vec![source(inputs), source(rollouts)],
                    date,
                };
                let input = ReportInput::from_run(
                    profile,
                    meta,
                    &mut lines,
                    &rollouts.name(),
                    request.conversations,
                )
                .map_err(|e| e.to_string())?;
                (input, rollouts.name())
            }
            Kept::Files(input) => {
                let mut input = input.clone();
                input.meta.title = request.title;
                input.meta.date = date;
                input.prompts.truncate(request.conversations);
                let name = input
                    .meta
                    .sources
                    .first()
                    .map(|s| s.name.clone())
                    .unwrap_or_default();
                (input, name)
            }
        };
        let html = report::render(&input);
        let mut out = BlobWriter::new();
        std::io::Write::write_all(&mut out, html.as_bytes()).map_err(|e| e.to_string())?;
        Ok(object(&[
            ("kind", "report-done".into()),
            ("report", out.finish("text/html")?),
            ("name", crate::names::report(&name).into()),
        ]))
    })
}

fn read_all(reader: &FileReaderSync, file: &File) -> Result<Vec<u8>, String> {
    let mut out = Vec::with_capacity(file.size() as usize);
    let mut at = 0.0;
    while at < file.size() {
        let end = (at + SLICE).min(file.size());
        out.extend_from_slice(&read_slice(reader, file, at, end)?);
        at = end;
    }
    Ok(out)
}

/// Shows an existing `*_reward_profiling.jsonl` (and `*_agent_metrics.json`) directly.
pub fn run_files(profiling: &File, metrics: Option<File>) -> Result<JsValue, String> {
    use crate::report::{ReportInput, ReportMeta, Source};
    let reader = FileReaderSync::new().map_err(js_error)?;
    let profiling_bytes = read_all(&reader, profiling)?;
    let metrics_bytes = metrics.as_ref().map(|m| read_all(&reader, m)).transpose()?;
    let mut sources = vec![Source {
        name: profiling.name(),
        bytes: profiling.size() as u64,
    }];
    if let Some(m) = &metrics {
        sources.push(Source {
            name: m.name(),
            bytes: m.size() as u64,
        });
    }
    let name = profiling.name();
    let title = name
        .rsplit_once('.')
        .map_or(name.as_str(), |(s, _)| s)
        .replace("_reward_profiling", "");
    let meta = ReportMeta {
        title,
        sources,
        date: None,
    };
    let metrics_name = metrics.as_ref().map(File::name).unwrap_or_default();
    let input = match ReportInput::from_profile_files(
        meta,
        (&name, &profiling_bytes),
        metrics_bytes.as_deref().map(|b| (metrics_name.as_str(), b)),
        usize::MAX,
    ) {
        Ok(input) => input,
        Err(e) => {
            return Ok(object(&[
                ("kind", "error".into()),
                ("message", e.to_string().into()),
            ]))
        }
    };
    drop(profiling_bytes);
    let (view, cols) = model::from_report_input(&input);
    LAST.with(|last| *last.borrow_mut() = Some(Kept::Files(input)));
    Ok(object(&done_message(&view, &cols)?))
}
