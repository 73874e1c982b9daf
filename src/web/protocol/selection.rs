//! The pivot pages' and the pass band's messages: a build, a selection and a curation, each
//! with the files it made.

use super::Download;
use crate::inspect::pivot::PivotView;
use crate::inspect::pivot_build::{BuildSummary, PivotEntry};
use serde::{Deserialize, Serialize};

/// The Profile page's band: `select-tasks --min-pass min --max-pass max`.
#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
pub struct TaskBand {
    pub min_pass: f64,
    pub max_pass: f64,
    /// Write the curated tasks and `.selection.json` (not on every move of a slider).
    pub files: bool,
    /// Send every task's pass rate (the histogram's, once).
    pub rates: bool,
}

/// A pivot build: the counts, the validator's verdict on the rows, the rows listed, the files.
#[derive(Serialize, Deserialize)]
pub struct PivotsBuilt {
    pub summary: BuildSummary,
    /// The same build as a `gymscope build-pivot` command.
    pub command: String,
    /// `validate-pivot --agent-ref` on the rows written (none when none were).
    pub verdict: Option<PivotView>,
    pub pivots: Vec<PivotEntry>,
    /// The pivot rows and the Gym config, when any row was written.
    pub rows: Option<Download>,
    pub config: Option<Download>,
    pub audit: Download,
    pub metrics: Download,
    pub info: Download,
    /// How many workers converted the file.
    pub workers: u32,
}

#[derive(Serialize, Deserialize)]
pub struct PivotsSelected {
    /// `select-pivot`'s counts table and the lines under it.
    pub counts: String,
    pub kept: u64,
    /// Why nothing was kept (`select-pivot` says it and writes nothing).
    pub empty: Option<String>,
    /// The profiled pivots' on-policy mean reward and variance (with a reading, not a re-plan).
    pub means: Vec<f64>,
    pub variances: Vec<f64>,
    /// When asked and something was kept: the selected rows, `.selection.json`, and the
    /// `.gym.yaml` when the build's config was given.
    pub selected: Option<Download>,
    pub selection: Option<Download>,
    pub config: Option<Download>,
}

#[derive(Serialize, Deserialize)]
pub struct TasksCurated {
    /// The counts as `select-tasks` prints them.
    pub text: String,
    pub tasks: u64,
    pub kept: u64,
    /// Per reason (`select-tasks`' names, in its order), zeros included.
    pub dropped: Vec<(String, u64)>,
    /// Why nothing was kept (`select-tasks` says it and writes nothing).
    pub empty: Option<String>,
    /// Every task's pass rate, when asked (tasks without one left out).
    pub rates: Vec<f64>,
    pub curated: Option<Download>,
    pub selection: Option<Download>,
}
