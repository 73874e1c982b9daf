//! The messages between the page and its worker: one enum per direction, converted with
//! `serde-wasm-bindgen`. Core types cross as plain JS objects; `File`s, `Blob`s and typed arrays
//! pass through unchanged (structured clone), so a big column never becomes a million JS numbers.
//! Renaming a field changes both sides at once: there are no string keys to keep in step.

use crate::inspect::pivot::PivotView;
use crate::inspect::pivot_build::PageBuild;
use crate::pivot::PivotOptions;
use crate::pivot_build::select::SelectOptions;
use crate::profile::ProfileOptions;
use crate::read::ranges::ByteRange;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_wasm_bindgen::preserve;
use wasm_bindgen::JsValue;
use web_sys::{Blob, File};

mod columns;
mod optional;
mod payloads;
mod profiled;
mod request_parts;
mod selection;
pub use columns::JsColumns;
pub use payloads::{Compared, Failure, Progress};
pub use profiled::{Download, Profiled, ReadStats, ReaderCosts};
pub use request_parts::{CompareInput, ExportQuery, RangeTask, ReportRequest, UpstreamFiles};
pub use selection::{PivotsBuilt, PivotsSelected, TaskBand, TasksCurated};

/// Trunk's loader for the worker bin (`data-loader-shim`), next to index.html: the page starts
/// one, and that one starts its pool of readers (a worker's relative URL resolves beside it).
pub const WORKER_URL: &str = "./gymscope-worker_loader.js";

/// Page → worker.
#[derive(Serialize, Deserialize)]
pub enum Request {
    /// Profile a run from its two files.
    Profile {
        #[serde(with = "preserve")]
        inputs: File,
        #[serde(with = "preserve")]
        rollouts: File,
        options: ProfileOptions,
        /// NeMo Gym's verdict files dropped with the run (shown on the Health page).
        #[serde(default)]
        upstream: UpstreamFiles,
        /// How many workers read the files (1: the worker itself; more: a pool of them).
        workers: u32,
    },
    /// A pool worker's job: read `range` of `file` for `task`, reply with its parts
    /// ([`Reply::RangePart`]) as postcard bytes (`read::in_order`).
    ReadRange {
        #[serde(with = "preserve")]
        file: File,
        range: ByteRange,
        index: u32,
        task: RangeTask,
    },
    /// A pool worker's setup for a query's matching read (the ranges that follow): the
    /// expression, and what the earlier reads learned (`query::RunFacts` as postcard bytes).
    MatchSetup {
        expr: String,
        #[serde(with = "preserve")]
        facts: js_sys::Uint8Array,
    },
    /// Show an existing `*_reward_profiling.jsonl` (and `*_agent_metrics.json`).
    ProfileFiles {
        #[serde(with = "preserve")]
        profiling: File,
        #[serde(with = "optional", default)]
        metrics: Option<File>,
    },
    ValidatePivot {
        #[serde(with = "preserve")]
        file: File,
        options: PivotOptions,
        /// How many workers read the file (as for [`Request::Profile`]).
        workers: u32,
    },
    /// A pool worker's setup for a pivot validation's ranges (`pivot::pooled`).
    PivotSetup { options: PivotOptions },
    /// Build a pivot dataset from rollouts (two passes over `file`).
    BuildPivots {
        #[serde(with = "preserve")]
        file: File,
        options: PageBuild,
        /// How many workers convert the file (as for [`Request::Profile`]); the first pass is
        /// this worker's.
        workers: u32,
    },
    /// A pool worker's setup for a build's conversion (`pivot_build::pooled`): the converter
    /// (`ConverterSetup` as postcard bytes) and where each range starts.
    ConvertSetup {
        #[serde(with = "preserve")]
        setup: js_sys::Uint8Array,
        starts: Vec<crate::pivot_build::pooled::RangeStart>,
    },
    /// Keep the pivots whose on-policy rollouts (`profile`) had mixed rewards: both files read
    /// and every pivot decided once, then planned with `options` (files made).
    SelectPivots {
        #[serde(with = "preserve")]
        pivots: File,
        #[serde(with = "preserve")]
        profile: File,
        /// The build's `.gym.yaml`, for the selection's config (none: no config offered).
        #[serde(with = "optional", default)]
        config: Option<File>,
        options: SelectOptions,
    },
    /// The last selection's pivots planned again with other options (the λ_diff slider):
    /// no file is read again unless a class depends on the change; the files only when asked.
    PlanPivots { options: SelectOptions, files: bool },
    /// The run shown last's `*_reward_profiling.jsonl` through `select-tasks` with a pass-rate
    /// band (read once, then decided again per band); the curated files only when asked.
    CurateTasks(TaskBand),
    /// Render the report of the run shown last.
    Report(ReportRequest),
    /// Compare a baseline `a` with candidates `b` and `more` (each a run's two files or a
    /// profiling file), each paired with the baseline.
    Compare {
        a: CompareInput,
        b: CompareInput,
        more: Vec<CompareInput>,
        options: crate::compare::CompareOptions,
        /// How many workers read a run's two files (as for [`Request::Profile`]).
        workers: u32,
    },
    /// The last comparison's candidate `index` shown in detail instead.
    CompareCandidate { index: usize },
    /// Both runs' rollouts of paired task `index` of the last comparison.
    CompareTask { index: usize },
    /// The comparison report of the last comparison (the bytes `gymscope compare --report`
    /// writes for the same files and options).
    CompareReport(ReportRequest),
    /// The rollouts of a run that match a query the loaded columns cannot answer (text, tool
    /// calls): the file read again with the core's evaluation, as `gymscope query` reads it.
    Query {
        #[serde(with = "preserve")]
        inputs: File,
        #[serde(with = "preserve")]
        rollouts: File,
        expr: String,
        /// How many workers read the files (as for [`Request::Profile`]).
        workers: u32,
    },
    /// Each task's value of a field of the materialized rows, for "Group by"
    /// (`inspect::grouping`): `tasks` are the run's task indices in the page's order.
    GroupField {
        #[serde(with = "preserve")]
        inputs: File,
        field: String,
        tasks: Vec<f64>,
    },
}

/// Worker → page.
#[derive(Serialize, Deserialize)]
pub enum Reply {
    /// The worker has loaded and takes requests.
    Ready,
    Progress(Progress),
    /// A run's view; with `files_follow`, [`Reply::Downloads`] follows once its output files
    /// are written (the profile is shown first).
    Profiled(Box<Profiled>),
    Downloads {
        downloads: Vec<Download>,
        /// Milliseconds spent writing them.
        render_ms: f64,
        /// Each task's prompt snippet in the view's task order, read while the files were
        /// written (`inspect::model::SnippetTap`): the profile is shown without them first.
        snippets: Vec<String>,
    },
    PivotChecked {
        view: Box<PivotView>,
        /// The fixed copy, when `--fix` was asked for.
        #[serde(with = "optional", default)]
        fixed: Option<Blob>,
        /// How many workers read the file.
        workers: u32,
    },
    PivotsBuilt(Box<PivotsBuilt>),
    PivotsSelected(Box<PivotsSelected>),
    TasksCurated(Box<TasksCurated>),
    Report(Download),
    Compared(Box<Compared>),
    ComparedTask(Box<crate::compare::conversations::PairConversations>),
    /// The `(task, rollout)` keys of the matching rollouts, in file order.
    QueryMatched {
        keys: Vec<(f64, f64)>,
        /// How many workers read the files.
        workers: u32,
    },
    /// A field's groups and each task's, for "Group by".
    Grouped(Box<crate::inspect::grouping::FieldGroups>),
    /// A part of a range a pool worker read (`read::in_order::Part` as bytes).
    RangePart {
        index: u32,
        #[serde(with = "preserve")]
        bytes: js_sys::Uint8Array,
        /// The pool worker's wasm memory as it sent the part.
        memory: f64,
        /// The range's last part (`read::in_order::Part::End`): the worker can take another.
        end: bool,
        /// The worker's time on the range so far (its whole with the last part).
        costs: ReaderCosts,
    },
    /// The one error path: every failure of a job ends here.
    Failed(Failure),
}

/// A message as a JS value (objects, not `Map`s, for maps; JS objects passed through).
pub fn encode<T: Serialize>(message: &T) -> Result<JsValue, String> {
    message
        .serialize(&serde_wasm_bindgen::Serializer::new().serialize_maps_as_objects(true))
        .map_err(|e| format!("cannot encode a message: {e}"))
}

pub fn decode<T: DeserializeOwned>(value: JsValue) -> Result<T, String> {
    serde_wasm_bindgen::from_value(value).map_err(|e| format!("unexpected message: {e}"))
}
