//! The worker's pivot selection, driven as `select-pivot` drives the core: the profile and the
//! pivots read once into every pivot's decision (`Decisions`, kept here), then any number of
//! plans from them (the page's λ_diff slider); the files written as the CLI writes them, the
//! selected rows read back by span.

use super::super::protocol::{Download, Failure, PivotsSelected, Reply};
use super::io::{feed, post_progress, read_all, BlobWriter, SpanReader, WINDOW};
use super::pivot_build_job::{text_download, write};
use crate::names;
use crate::pivot_build::config;
use crate::pivot_build::select::{selected_row, Decisions, ProfileIndex, SelectOptions, Selector};
use crate::read::chunks::Flow;
use crate::render::LineSource;
use std::cell::RefCell;
use web_sys::File;

/// The last selection's files and decisions.
struct Selecting {
    pivots: File,
    profile: File,
    config: Option<String>,
    decisions: Decisions,
}

thread_local! {
    static SELECTING: RefCell<Option<Selecting>> = const { RefCell::new(None) };
}

fn read(pivots: &File, profile: &File, options: &SelectOptions) -> Result<Decisions, Failure> {
    let total = (profile.size() + pivots.size()) as u64;
    let mut index = ProfileIndex::new(profile.name());
    feed::<Failure>(profile, |chunk, done| {
        let go_on = index.push(chunk);
        post_progress(done, total, 0);
        Ok(if go_on { Flow::Continue } else { Flow::Stop })
    })?;
    let index = index.finish().map_err(|e| Failure::from(e.message))?;
    let mut selector = Selector::new(pivots.name(), index, options.clone());
    let before = profile.size() as u64;
    feed::<Failure>(pivots, |chunk, done| {
        let go_on = selector.push(chunk);
        post_progress(before + done, total, 0);
        Ok(if go_on { Flow::Continue } else { Flow::Stop })
    })?;
    selector.decisions().map_err(|e| Failure::from(e.message))
}

/// Reads both files (and the build's config), keeps the decisions and plans with `options`.
pub fn select(
    pivots: &File,
    profile: &File,
    config: Option<&File>,
    options: &SelectOptions,
) -> Result<Reply, Failure> {
    let config = config
        .map(|c| {
            let bytes = read_all(c)?;
            String::from_utf8(bytes).map_err(|_| format!("'{}' is not UTF-8 text", c.name()))
        })
        .transpose()?;
    let decisions = read(pivots, profile, options)?;
    let (means, variances) = decisions.profiled_means_and_variances();
    SELECTING.with(|s| {
        *s.borrow_mut() = Some(Selecting {
            pivots: pivots.clone(),
            profile: profile.clone(),
            config,
            decisions,
        });
    });
    let mut reply = plan(options, true)?;
    if let Reply::PivotsSelected(s) = &mut reply {
        (s.means, s.variances) = (means, variances);
    }
    Ok(reply)
}

/// The last selection planned with `options`: the counts, and the files when `files`.
pub fn plan(options: &SelectOptions, files: bool) -> Result<Reply, Failure> {
    SELECTING.with(|s| {
        let mut s = s.borrow_mut();
        let s = s
            .as_mut()
            .ok_or("select from a pivot file and its profile first")?;
        if !s.decisions.fits(options) {
            // A class or prefix depends on the change: read the files again.
            s.decisions = read(&s.pivots, &s.profile, options)?;
        }
        let counts = s.decisions.counts(options);
        let empty = (counts.kept == 0).then(|| counts.why_empty(options));
        let mut reply = PivotsSelected {
            counts: counts.markdown(),
            kept: counts.kept,
            empty,
            means: Vec::new(),
            variances: Vec::new(),
            selected: None,
            selection: None,
            config: None,
        };
        // As `select-pivot`: nothing written when nothing is kept.
        if files && counts.kept > 0 {
            let plan = s.decisions.plan(options);
            let name = names::selected_pivots(&s.pivots.name());
            let mut reader = SpanReader::new(&s.pivots, WINDOW, |_, _| {})?;
            let mut out = BlobWriter::new();
            for d in &plan.selected {
                let at = |e: String| format!("'{}' line {}: {e}", s.pivots.name(), d.span.line);
                let line = reader.read_span(d.span).map_err(|e| at(e.to_string()))?;
                write(
                    &mut out,
                    &selected_row(&line, d.profile_info.as_ref()).map_err(at)?,
                )?;
            }
            let mut json = serde_json::to_string_pretty(&plan.counts.to_json())
                .map_err(|e| Failure::from(e.to_string()))?;
            json.push('\n');
            reply.selection = Some(text_download(
                &json,
                names::pivot_selection(&name),
                "application/json",
            )?);
            // The config names the selection by its bare name, as `select-pivot --output NAME`
            // run in the pivots' folder writes it (build-pivot's `--relative-paths` config).
            if let Some(text) = &s.config {
                let yaml = config::retarget(text, &name, None).map_err(Failure::from)?;
                let yaml_name = names::pivot_gym_config(&name);
                reply.config = Some(text_download(&yaml, yaml_name, "application/yaml")?);
            }
            reply.selected = Some(Download {
                blob: out.finish("application/jsonl")?,
                name,
            });
        }
        Ok(Reply::PivotsSelected(Box::new(reply)))
    })
}
