//! The reply that shows a profiled run, how the run was read, and the files made for it.

use super::JsColumns;
use crate::inspect::model::InspectView;
use serde::{Deserialize, Serialize};
use serde_wasm_bindgen::preserve;
use web_sys::Blob;

#[derive(Serialize, Deserialize)]
pub struct Profiled {
    pub view: InspectView,
    pub columns: JsColumns,
    /// The profile's two output files (none when the run was read from them).
    pub downloads: Vec<Download>,
    /// The output files come in a [`super::Reply::Downloads`] of their own, after this.
    pub files_follow: bool,
    /// How the run was read, for the browser benchmark.
    pub read: ReadStats,
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
}

/// A file made in the worker, to offer for download under `name`.
#[derive(Serialize, Deserialize)]
pub struct Download {
    #[serde(with = "preserve")]
    pub blob: Blob,
    pub name: String,
}
