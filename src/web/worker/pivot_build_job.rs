//! The worker's pivot build, driven as `build-pivot` drives the core: two passes over the source
//! `File` (group rewards, then conversion), the rows checked by the validator as they are made
//! and written into Blobs. The selection is `select_job`'s.

use super::super::protocol::{Download, Failure, PivotsBuilt, Reply};
use super::io::{feed, post_progress, BlobWriter};
use crate::chunks::Flow;
use crate::inspect::pivot::PivotView;
use crate::inspect::pivot_build::{entry_of, is_blank_row, BuildSummary, PageBuild, PivotEntry};
use crate::jsonl::{LineSpan, LineSplitter};
use crate::names;
use crate::pivot::{PivotOptions, PivotValidator};
use crate::pivot_build::config;
use crate::pivot_build::PivotBuilder;
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

pub fn build(file: &File, options: PageBuild) -> Result<Reply, Failure> {
    let input = file.name();
    let total = file.size() as u64;
    let config_options = options.config_options(&input);
    config::validate(&config_options)?;
    let paths = options.paths(&input);
    let mut builder = PivotBuilder::new(&input, options.build_options());
    // Pass 1: the groups' rewards, and where each source row is (`trajectory_id` → span).
    let mut splitter = LineSplitter::new();
    let mut sources: Vec<LineSpan> = Vec::new();
    feed::<Failure>(file, |chunk, done| {
        builder.scan(chunk);
        split(&mut splitter, &input, chunk, |span, line| {
            if !is_blank_row(line) {
                sources.push(span);
            }
            Ok(())
        })?;
        post_progress(done, 2 * total, sources.len() as u64);
        Ok(Flow::Continue)
    })?;
    splitter
        .finish(|span, line| {
            if !is_blank_row(line) {
                sources.push(span);
            }
            Ok::<(), String>(())
        })
        .map_err(Failure::from)?;
    builder
        .start_conversion()
        .map_err(|e| Failure::from(e.message))?;
    // Pass 2: conversion.
    let mut rows = Rows {
        name: paths.output.clone(),
        validator: PivotValidator::new(
            paths.output.clone(),
            PivotOptions {
                agent_ref: Some(options.agent_ref.clone()),
                allow_batch: options.multi_call_batch,
                ..PivotOptions::default()
            },
        ),
        splitter: LineSplitter::new(),
        entries: Vec::new(),
        blob: BlobWriter::new(),
    };
    let mut audit = BlobWriter::new();
    feed::<Failure>(file, |chunk, done| {
        let go_on = builder.convert(chunk);
        let made = builder.take_rows();
        rows.take(&made, &sources)?;
        builder.give_back(made);
        write(&mut audit, &builder.take_audit())?;
        post_progress(total + done, 2 * total, sources.len() as u64);
        Ok(if go_on { Flow::Continue } else { Flow::Stop })
    })?;
    let metrics = builder.finish().map_err(|e| Failure::from(e.message))?;
    rows.take(&builder.take_rows(), &sources)?;
    write(&mut audit, &builder.take_audit())?;

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
    })))
}
