//! What the page's requests carry beside the enum itself: verdict files, a comparison's sides,
//! the report's settings, and what a pool worker reads a range for.

use super::optional;
use serde::{Deserialize, Serialize};
use serde_wasm_bindgen::preserve;
use web_sys::File;

/// What a pool worker reads a range for.
#[derive(Clone, Copy, Serialize, Deserialize)]
pub enum RangeTask {
    /// The profile and health (`joint_read::pooled`).
    Profile,
    /// The profile alone (a compared run: `profile::pooled`).
    ProfileOnly,
    /// One of a query's reads (`query::pooled`).
    Query(crate::query::pooled::QueryRead),
    /// A pivot file's validation (`pivot::pooled`).
    Pivot,
    /// A build's conversion (`pivot_build::pooled`).
    Convert,
}

/// NeMo Gym's `quality_summary.json` and `rollout_verdicts.jsonl`, when the page has them.
#[derive(Clone, Default, Serialize, Deserialize)]
pub struct UpstreamFiles {
    #[serde(with = "optional", default)]
    pub quality_summary: Option<File>,
    #[serde(with = "optional", default)]
    pub rollout_verdicts: Option<File>,
}

/// One side of a comparison, as the page has it.
#[derive(Clone, Serialize, Deserialize)]
pub enum CompareInput {
    Run {
        #[serde(with = "preserve")]
        inputs: File,
        #[serde(with = "preserve")]
        rollouts: File,
    },
    Profiling {
        #[serde(with = "preserve")]
        file: File,
    },
}

/// Settings of the page's "Export report".
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ReportRequest {
    pub title: String,
    pub date: Option<String>,
    pub conversations: usize,
    /// The profile page's query and its matches: the page opens filtered to them, as
    /// `gymscope report --query` makes it.
    #[serde(default)]
    pub query: Option<ExportQuery>,
}

/// A query and the `(task, rollout)` keys it matched (numbers as JS holds them).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ExportQuery {
    pub source: String,
    pub keys: Vec<(f64, f64)>,
}
