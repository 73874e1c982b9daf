//! The Profile page's pass-rate band, driven as `select-tasks` drives the core: the run's
//! `*_reward_profiling.jsonl` (the one made here and offered for download, or the one the run
//! was read from) read once into task entries, each band decided again from them
//! (`curate::redecide`), and when asked the curated rows and `.selection.json` written as
//! `gymscope select-tasks --min-pass A --max-pass B` writes them.

use super::super::protocol::{Download, Failure, Reply, TaskBand, TasksCurated};
use super::io::{feed, BlobWriter, SpanReader, WINDOW};
use super::pivot_build_job::{text_download, write};
use crate::curate::{self, curated_row, DropReason, TaskEntry, TaskOptions, TaskReader};
use crate::names;
use crate::read::chunks::Flow;
use crate::render::LineSource;
use std::cell::RefCell;
use web_sys::File;

/// The name the curated tasks are offered under (docs/app.md's command writes it).
pub const CURATED: &str = "curated.jsonl";

struct Curating {
    profiling: File,
    entries: Option<Vec<TaskEntry>>,
}

thread_local! {
    static CURATING: RefCell<Option<Curating>> = const { RefCell::new(None) };
}

/// The profile shown now: its entries are read at the first band asked for.
pub fn remember(profiling: &web_sys::Blob, name: &str) -> Result<(), Failure> {
    let parts = js_sys::Array::of1(profiling);
    let file = File::new_with_blob_sequence(&parts, name).map_err(super::io::js_error)?;
    CURATING.with(|c| {
        *c.borrow_mut() = Some(Curating {
            profiling: file,
            entries: None,
        });
    });
    Ok(())
}

fn read(file: &File) -> Result<Vec<TaskEntry>, Failure> {
    let options = TaskOptions::default();
    let mut reader = TaskReader::new(file.name(), &options);
    feed::<Failure>(file, |chunk, _| {
        Ok(if reader.push(chunk) {
            Flow::Continue
        } else {
            Flow::Stop
        })
    })?;
    reader.finish().map_err(|e| Failure::from(e.0))
}

pub fn run(band: TaskBand) -> Result<Reply, Failure> {
    let options = TaskOptions {
        min_pass: band.min_pass,
        max_pass: band.max_pass,
        ..TaskOptions::default()
    };
    options.check().map_err(Failure::from)?;
    CURATING.with(|c| {
        let mut c = c.borrow_mut();
        let c = c.as_mut().ok_or("profile a run first")?;
        if c.entries.is_none() {
            c.entries = Some(read(&c.profiling)?);
        }
        let Some(entries) = c.entries.as_mut() else {
            return Err(Failure::from("the profile was not read"));
        };
        curate::redecide(entries, &options).map_err(Failure::from)?;
        let plan = curate::plan(entries, &options);
        let counts = &plan.counts;
        let mut reply = TasksCurated {
            text: counts.text(),
            tasks: counts.tasks,
            kept: counts.kept,
            dropped: DropReason::ALL
                .iter()
                .map(|&r| (r.as_str().to_string(), counts.dropped(r)))
                .collect(),
            empty: (counts.kept == 0).then(|| counts.why_empty()),
            rates: if band.rates {
                entries.iter().filter_map(TaskEntry::pass_rate).collect()
            } else {
                Vec::new()
            },
            curated: None,
            selection: None,
        };
        // As `select-tasks`: nothing written when nothing is kept.
        if band.files && counts.kept > 0 {
            let mut reader = SpanReader::new(&c.profiling, WINDOW, |_, _| {})?;
            let mut out = BlobWriter::new();
            for &i in &plan.kept {
                let span = entries[i].span;
                let at = |e: String| format!("'{}' line {}: {e}", c.profiling.name(), span.line);
                let line = reader.read_span(span).map_err(|e| at(e.to_string()))?;
                write(&mut out, &curated_row(&line, None).map_err(at)?)?;
            }
            let mut json = serde_json::to_string_pretty(&counts.to_json(&options))
                .map_err(|e| Failure::from(e.to_string()))?;
            json.push('\n');
            reply.selection = Some(text_download(
                &json,
                names::pivot_selection(CURATED),
                "application/json",
            )?);
            reply.curated = Some(Download {
                blob: out.finish("application/jsonl")?,
                name: CURATED.to_string(),
            });
        }
        Ok(Reply::TasksCurated(Box::new(reply)))
    })
}
