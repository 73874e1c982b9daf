//! The reply that shows a profiled run, how the run was read, and the files made for it.

use super::JsColumns;
use crate::inspect::model::InspectView;
use serde::{Deserialize, Serialize};
use serde_wasm_bindgen::preserve;
use web_sys::Blob;

#[derive(Serialize, Deserialize)]
pub struct Profiled {
    /// The view as postcard bytes ([`InspectView::to_bytes`]): decoding tens of thousands of
    /// task rows from JS objects field by field took longer than the rest of the reply.
    #[serde(with = "preserve")]
    view: js_sys::Uint8Array,
    pub columns: JsColumns,
    /// The profile's two output files (none when the run was read from them).
    pub downloads: Vec<Download>,
    /// The output files come in a [`super::Reply::Downloads`] of their own, after this.
    pub files_follow: bool,
    /// How the run was read, for the browser benchmark.
    pub read: ReadStats,
}

impl Profiled {
    pub fn new(
        view: &InspectView,
        columns: JsColumns,
        downloads: Vec<Download>,
        files_follow: bool,
        read: ReadStats,
    ) -> Result<Profiled, String> {
        Ok(Profiled {
            view: js_sys::Uint8Array::from(view.to_bytes()?.as_slice()),
            columns,
            downloads,
            files_follow,
            read,
        })
    }

    pub fn view(&self) -> Result<InspectView, String> {
        InspectView::from_bytes(&self.view.to_vec())
    }
}

/// How a run was read: by how many workers, their wasm memory in bytes, and the milliseconds
/// of the read (files to recorded rows) and of what follows until the run is shown (statistics,
/// view); the output files are written after ([`super::Reply::Downloads`]).
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize)]
pub struct ReadStats {
    pub workers: u32,
    pub memory: f64,
    /// The largest of the pool's workers (0 when the worker read alone).
    pub reader_memory: f64,
    pub read_ms: f64,
    /// Of `read_ms`, the time this worker spent recording the pool's parts in order (what more
    /// workers cannot share).
    pub record_ms: f64,
    pub finish_ms: f64,
    /// Of `finish_ms`: the statistics (profile and health).
    pub stats_ms: f64,
    /// Of `record_ms`: decoding the parts (copied out of their message, postcard).
    pub decode_ms: f64,
    /// The pool workers' time, summed over them: reading their ranges.
    pub readers: ReaderCosts,
    /// When this worker took the job and when it posted the profile (ms since the epoch,
    /// `performance.timeOrigin + now()`: comparable across the page and its workers), so the
    /// page's side can be told from the worker's.
    pub taken_at: f64,
    pub posted_at: f64,
}

/// Where a pool worker's time went on its ranges, in ms: `File` slices read and copied into
/// wasm memory, the lines parsed, the parts encoded and posted.
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize)]
pub struct ReaderCosts {
    pub io_ms: f64,
    pub parse_ms: f64,
    pub send_ms: f64,
}

impl ReaderCosts {
    pub fn add(&mut self, other: ReaderCosts) {
        self.io_ms += other.io_ms;
        self.parse_ms += other.parse_ms;
        self.send_ms += other.send_ms;
    }
}

/// A file made in the worker, to offer for download under `name`.
#[derive(Serialize, Deserialize)]
pub struct Download {
    #[serde(with = "preserve")]
    pub blob: Blob,
    pub name: String,
}
