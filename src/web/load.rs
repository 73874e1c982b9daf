//! Reads the two files in slices (`Blob.slice`), feeds the core profile, and renders both output
//! files, yielding to the browser between slices so the page keeps painting.

use super::download::ObjectUrl;
use crate::output::output_file_names;
use crate::profile::{ProfileBuilder, ProfileOptions};
use crate::render;
use crate::table::{self, Table};
use std::collections::HashMap;
use wasm_bindgen::JsValue;
use wasm_bindgen_futures::JsFuture;

const SLICE: f64 = 8.0 * 1024.0 * 1024.0;

/// Where a file's bytes come from: a picked or dropped file, or the embedded example.
#[derive(Clone)]
pub enum Source {
    File(web_sys::File),
    Embedded {
        name: &'static str,
        bytes: &'static [u8],
    },
}

impl Source {
    pub fn name(&self) -> String {
        match self {
            Source::File(f) => f.name(),
            Source::Embedded { name, .. } => name.to_string(),
        }
    }

    fn size(&self) -> f64 {
        match self {
            Source::File(f) => f.size(),
            Source::Embedded { bytes, .. } => bytes.len() as f64,
        }
    }

    async fn read(&self, start: f64, end: f64) -> Result<Vec<u8>, String> {
        match self {
            Source::File(f) => {
                let blob = f.slice_with_f64_and_f64(start, end).map_err(js_error)?;
                let buf = JsFuture::from(blob.array_buffer())
                    .await
                    .map_err(js_error)?;
                Ok(js_sys::Uint8Array::new(&buf).to_vec())
            }
            Source::Embedded { bytes, .. } => Ok(bytes[start as usize..end as usize].to_vec()),
        }
    }
}

fn js_error(e: JsValue) -> String {
    e.as_string().unwrap_or_else(|| format!("{e:?}"))
}

/// What the page shows for a profiled run.
pub struct RunView {
    pub summary: [String; 2],
    pub warnings: Vec<String>,
    pub tasks: Table,
    pub agents: Table,
    pub downloads: [ObjectUrl; 2],
}

/// Profiles `inputs` × `rollouts`, reporting progress through `progress`.
pub async fn profile_files(
    inputs: &Source,
    rollouts: &Source,
    options: ProfileOptions,
    progress: impl Fn(String),
) -> Result<RunView, String> {
    let (inputs_name, rollouts_name) = (inputs.name(), rollouts.name());
    let mut builder = ProfileBuilder::new(&inputs_name, &rollouts_name);
    for (source, is_inputs) in [(inputs, true), (rollouts, false)] {
        let size = source.size();
        let mut at = 0.0;
        while at < size {
            let end = (at + SLICE).min(size);
            let chunk = source.read(at, end).await?;
            if is_inputs {
                builder.push_inputs(&chunk)
            } else {
                builder.push_rollouts(&chunk)
            }
            .map_err(|e| e.to_string())?;
            at = end;
            progress(format!(
                "Reading {}: {:.1} of {:.1} MB, {} lines",
                source.name(),
                at / 1e6,
                size / 1e6,
                builder.lines_read()
            ));
            yield_to_browser().await;
        }
    }
    let profile = builder.finish(options).map_err(|e| e.to_string())?;

    // `sample` rows are read back from the inputs file by their spans, not kept while scanning.
    let mut samples = HashMap::new();
    for task in &profile.tasks {
        let span = task.sample;
        let bytes = inputs
            .read(
                span.offset as f64,
                (span.offset + u64::from(span.len)) as f64,
            )
            .await?;
        samples.insert(span.offset, bytes);
    }
    let mut profiling = Vec::new();
    render::write_reward_profiling(&profile, &mut samples, &inputs_name, &mut profiling)
        .map_err(|e| e.to_string())?;
    let mut metrics = Vec::new();
    render::write_agent_metrics(&mut metrics, &profile).map_err(|e| e.to_string())?;
    let (profiling_name, metrics_name) = output_file_names(&rollouts_name);
    Ok(RunView {
        summary: table::summary_lines(&profile),
        warnings: profile.warnings.clone(),
        tasks: table::task_table(&profile),
        agents: table::agent_table(&profile),
        downloads: [
            ObjectUrl::new(profiling_name, &profiling, "application/jsonl")?,
            ObjectUrl::new(metrics_name, &metrics, "application/json")?,
        ],
    })
}

/// Lets the browser handle events and paint before the next slice.
async fn yield_to_browser() {
    let promise = js_sys::Promise::new(&mut |resolve, _| {
        if let Some(window) = web_sys::window() {
            let _ = window.set_timeout_with_callback_and_timeout_and_arguments_0(&resolve, 0);
        }
    });
    let _ = JsFuture::from(promise).await;
}
