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

/// `sample` lines read back from the inputs file; each one's prompt snippet is kept on the way.
struct SampleLines<'a> {
    reader: &'a FileReaderSync,
    file: &'a File,
    snippets: HashMap<u64, String>,
}

impl LineSource for SampleLines<'_> {
    fn read_span(&mut self, span: LineSpan) -> std::io::Result<Vec<u8>> {
        let start = span.offset as f64;
        let bytes = read_slice(self.reader, self.file, start, start + f64::from(span.len))
            .map_err(std::io::Error::other)?;
        self.snippets.insert(span.offset, model::snippet(&bytes));
        Ok(bytes)
    }
}

fn f64_array(v: &[f64]) -> JsValue {
    js_sys::Float64Array::from(v).into()
}

fn blob(bytes: &[u8], mime: &str) -> Result<JsValue, String> {
    let parts = js_sys::Array::of1(&js_sys::Uint8Array::from(bytes));
    let options = web_sys::BlobPropertyBag::new();
    options.set_type(mime);
    Ok(
        web_sys::Blob::new_with_u8_array_sequence_and_options(&parts, &options)
            .map_err(js_error)?
            .into(),
    )
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
        snippets: HashMap::new(),
    };
    let mut profiling = Vec::new();
    render::write_reward_profiling(&profile, &mut samples, &inputs.name(), &mut profiling)
        .map_err(|e| e.to_string())?;
    let mut metrics = Vec::new();
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
    let (view, cols) = model::build(&profile, &inputs.name(), &rollouts.name(), &snippets);
    drop(profile);
    let (profiling_name, metrics_name) = output_file_names(&rollouts.name());
    Ok(object(&[
        ("kind", "profile-done".into()),
        (
            "view",
            serde_json::to_string(&view)
                .map_err(|e| e.to_string())?
                .into(),
        ),
        ("task_stats", f64_array(&cols.task_stats)),
        ("point_task", f64_array(&cols.point_task)),
        ("point_rollout", f64_array(&cols.point_rollout)),
        ("point_offset", f64_array(&cols.point_offset)),
        ("point_len", f64_array(&cols.point_len)),
        ("point_values", f64_array(&cols.point_values)),
        ("profiling", blob(&profiling, "application/jsonl")?),
        ("profiling_name", profiling_name.into()),
        ("metrics", blob(&metrics, "application/json")?),
        ("metrics_name", metrics_name.into()),
    ]))
}

fn error(e: &crate::error::ProfileError) -> JsValue {
    object(&[
        ("kind", "error".into()),
        ("message", e.to_string().into()),
        ("missing_rollouts", e.is_missing_rollouts().into()),
    ])
}
