//! The worker's pivot build, driven as `build-pivot` drives the core: two passes over the source
//! `File` (group rewards, then conversion), the rows checked by the validator as they are made
//! and written into Blobs. The conversion is this worker's ([`build`]) or its pool's
//! (`pivot_build_pool`). The selection is `select_job`'s.

use super::super::protocol::{Download, Failure, PivotsBuilt, Reply};
use super::io::{feed, post_progress, BlobWriter};
use crate::inspect::pivot::PivotView;
use crate::inspect::pivot_build::{entry_of, is_blank_row, BuildSummary, PageBuild, PivotEntry};
use crate::names;
use crate::pivot::{PivotOptions, PivotValidator};
use crate::pivot_build::config;
use crate::pivot_build::PivotBuilder;
use crate::read::chunks::Flow;
use crate::read::jsonl::{LineSpan, LineSplitter};
use std::io::Write;
use web_sys::File;

pub(super) fn write(out: &mut BlobWriter, bytes: &[u8]) -> Result<(), Failure> {
    out.write_all(bytes)
        .map_err(|e| Failure::from(e.to_string()))
}

pub(super) fn text_download(text: &str, name: String, mime: &str) -> Result<Download, Failure> {
    let mut out = BlobWriter::new();
    write(&mut out, text.as_bytes())?;
    Ok(Download {
        blob: out.finish(mime)?,
        name,
    })
}

/// Lines of a stream fed in chunks; a line longer than the splitter's limit fails with its file.
fn split(
    splitter: &mut LineSplitter,
    file: &str,
    chunk: &[u8],
    on_line: impl FnMut(LineSpan, &[u8]) -> Result<(), String>,
) -> Result<(), Failure> {
    splitter
        .push(chunk, on_line)
        .map_err(|e| Failure::from(format!("'{file}': {}", e.into_error(|t| t.to_string()))))
}

/// The rows written so far: checked, listed and stored.
struct Rows {
    name: String,
    validator: PivotValidator,
    splitter: LineSplitter,
    entries: Vec<PivotEntry>,
    blob: BlobWriter,
}

impl Rows {
    fn take(&mut self, bytes: &[u8], sources: &[LineSpan]) -> Result<(), Failure> {
        self.validator.push(bytes);
        let entries = &mut self.entries;
        let name = &self.name;
        split(&mut self.splitter, name, bytes, |span, line| {
            let (trajectory_id, action) =
                entry_of(line).map_err(|e| format!("'{name}' line {}: {e}", span.line))?;
            let source = usize::try_from(trajectory_id)
                .ok()
                .and_then(|i| sources.get(i))
                .map(|s| (s.offset, s.len));
            entries.push(PivotEntry {
                line: span.line,
                offset: span.offset,
                len: span.len,
                trajectory_id,
                action,
                source,
            });
            Ok(())
        })?;
        write(&mut self.blob, bytes)
    }
}

/// What the first pass leaves: the builder, where each source row is (`trajectory_id` → span),
/// and the options' files and config.
pub(super) struct FirstPass {
    pub builder: PivotBuilder,
    pub sources: Vec<LineSpan>,
    pub options: PageBuild,
    pub input: String,
}

/// The first pass (the groups' rewards, the source rows' spans), each line also shown to
/// `each_line`; progress as half the job.
pub(super) fn first_pass(
    file: &File,
    options: PageBuild,
    mut each_line: impl FnMut(LineSpan, &[u8]),
) -> Result<FirstPass, Failure> {
    let input = file.name();
    let total = file.size() as u64;
    config::validate(&options.config_options(&input))?;
    let mut builder = PivotBuilder::new(&input, options.build_options());
    let mut splitter = LineSplitter::new();
    let mut sources: Vec<LineSpan> = Vec::new();
    let rows = std::cell::Cell::new(0u64);
    let mut on_line = |span: LineSpan, line: &[u8]| {
        each_line(span, line);
        if !is_blank_row(line) {
            sources.push(span);
            rows.set(rows.get() + 1);
        }
        Ok::<(), String>(())
    };
    feed::<Failure>(file, |chunk, done| {
        builder.scan(chunk);
        split(&mut splitter, &input, chunk, &mut on_line)?;
        post_progress(done, 2 * total, rows.get());
        Ok(Flow::Continue)
    })?;
    splitter.finish(&mut on_line).map_err(Failure::from)?;
    builder
        .start_conversion()
        .map_err(|e| Failure::from(e.message))?;
    Ok(FirstPass {
        builder,
        sources,
        options,
        input,
    })
}

/// The rows as they are made: checked, listed and stored; and the audit records.
pub(super) struct Made {
    rows: Rows,
    audit: BlobWriter,
    pub sources: Vec<LineSpan>,
}

impl Made {
    pub fn new(first: &FirstPass, sources: Vec<LineSpan>) -> Made {
        let output = first.options.paths(&first.input).output;
        Made {
            rows: Rows {
                validator: PivotValidator::new(
                    output.clone(),
                    PivotOptions {
                        agent_ref: Some(first.options.agent_ref.clone()),
                        allow_batch: first.options.multi_call_batch,
                        ..PivotOptions::default()
                    },
                ),
                name: output,
                splitter: LineSplitter::new(),
                entries: Vec::new(),
                blob: BlobWriter::new(),
            },
            audit: BlobWriter::new(),
            sources,
        }
    }

    /// Takes what the builder has made since the last call.
    pub fn take(&mut self, builder: &mut PivotBuilder) -> Result<(), Failure> {
        let made = builder.take_rows();
        self.rows.take(&made, &self.sources)?;
        builder.give_back(made);
        write(&mut self.audit, &builder.take_audit())
    }
}

pub fn build(file: &File, options: PageBuild) -> Result<Reply, Failure> {
    let total = file.size() as u64;
    let mut first = first_pass(file, options, |_, _| {})?;
    let sources = std::mem::take(&mut first.sources);
    let mut made = Made::new(&first, sources);
    // Pass 2: conversion.
    let builder = &mut first.builder;
    feed::<Failure>(file, |chunk, done| {
        let go_on = builder.convert(chunk);
        made.take(builder)?;
        post_progress(total + done, 2 * total, made.sources.len() as u64);
        Ok(if go_on { Flow::Continue } else { Flow::Stop })
    })?;
    finish(first, made, 1)
}

/// The conversion is over: the metrics, the rows' verdict and every file.
pub(super) fn finish(first: FirstPass, mut made: Made, workers: u32) -> Result<Reply, Failure> {
    let FirstPass {
        mut builder,
        options,
        input,
        ..
    } = first;
    let metrics = builder.finish().map_err(|e| Failure::from(e.message))?;
    made.take(&mut builder)?;
    let config_options = options.config_options(&input);
    let paths = options.paths(&input);
    let Made { rows, audit, .. } = made;
    let written = metrics.pivot_rows_written > 0;
    let (report, _) = rows.validator.finish();
    let (rows_file, config_file, verdict) = if written {
        let blob = rows.blob.finish("application/jsonl")?;
        let yaml = config::render(&config_options);
        (
            Some(Download {
                blob,
                name: paths.output.clone(),
            }),
            Some(text_download(
                &yaml,
                paths.config.clone(),
                "application/yaml",
            )?),
            Some(PivotView::new(&report)),
        )
    } else {
        (None, None, None) // no dataset: nothing to train on, as the CLI writes none
    };
    Ok(Reply::PivotsBuilt(Box::new(PivotsBuilt {
        summary: BuildSummary::new(&metrics),
        command: options.command(&input),
        verdict,
        pivots: rows.entries,
        rows: rows_file,
        config: config_file,
        audit: Download {
            blob: audit.finish("application/jsonl")?,
            name: paths.skipped.clone(),
        },
        metrics: text_download(
            &metrics.json_text(&paths),
            names::pivot_metrics(&paths.output),
            "application/json",
        )?,
        info: text_download(
            &metrics.markdown(&paths),
            names::pivot_info(&paths.output),
            "text/markdown",
        )?,
        workers,
    })))
}
