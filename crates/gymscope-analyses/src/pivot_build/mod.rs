//! Building pivot datasets (PivotRL) from rollouts or chat trajectories: `gymscope build-pivot`
//! in the core, fed chunks of bytes so the CLI and a Web Worker drive it alike.
//!
//! Two passes over the source: [`PivotBuilder::scan`] counts each task group's successes,
//! [`PivotBuilder::convert`] turns every decision point into a pivot row or an audit
//! record. Memory holds one trajectory, the per-group counts and the 16-byte ids of the pivots
//! written (deduplication), never the file.

pub mod chat;
pub mod config;
pub mod conversational;
pub mod detect;
pub mod extract;
pub mod generic;
pub mod metrics;
mod pass;
pub mod responses;
pub mod row;
pub mod select;
pub mod skips;
pub mod source;
pub mod tools;
pub mod turns;

pub use detect::SourceFormat;
pub use metrics::{Metrics, Paths};
pub use pass::{pooled, ConvertBatch, Converted, Converter, PivotBuilder};

use crate::reward_group::RewardGroup;
use crate::verifier::{ComparatorConfig, RewardMode};
use serde_json::Value;

/// `build-pivot`'s options (its flags, docs/pivots.md "Pivot datasets", without file names).
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct BuildOptions {
    pub agent_ref: String,
    /// `None`: detect from the first non-blank line.
    pub source_format: Option<SourceFormat>,
    pub min_reward: f64,
    /// Dotted path of the reward (default: `reward`; chat: `metadata.reward`).
    pub reward_field: Option<String>,
    /// Dotted path of the task group (default `_ng_task_index`).
    pub group_by: String,
    pub source_groups: Vec<RewardGroup>,
    pub include_input_turns: bool,
    pub drop_reasoning: bool,
    pub tool_calls_only: bool,
    pub multi_call_batch: bool,
    /// `--tools FILE`, already parsed (either tool form).
    pub extra_tools: Vec<Value>,
    pub check_tool_names: bool,
    pub doom_loop_threshold: Option<u32>,
    pub skip_tool_errors: bool,
    /// Stop after this many pivot rows.
    pub limit: Option<u64>,
    pub stamp_task_index: bool,
    pub word_count_similarity_threshold: f64,
    /// A failed self-check skips the row (`selfcheck_failed`) instead of failing the build.
    pub selfcheck_skip: bool,
}

impl BuildOptions {
    pub fn new(agent_ref: impl Into<String>) -> BuildOptions {
        BuildOptions {
            agent_ref: agent_ref.into(),
            source_format: None,
            min_reward: crate::reward_group::DEFAULT_THRESHOLD,
            reward_field: None,
            group_by: "_ng_task_index".into(),
            source_groups: vec![RewardGroup::Mixed, RewardGroup::AllSuccess],
            include_input_turns: false,
            drop_reasoning: false,
            tool_calls_only: false,
            multi_call_batch: false,
            extra_tools: Vec::new(),
            check_tool_names: true,
            doom_loop_threshold: None,
            skip_tool_errors: false,
            limit: None,
            stamp_task_index: false,
            word_count_similarity_threshold: 0.1,
            selfcheck_skip: false,
        }
    }

    /// The comparator the generated config declares and the self-check uses: with
    /// `--multi-call batch`, parallel rewarding with f1 and both allowances (the shipped
    /// parallel config's recommendation).
    pub fn comparator(&self) -> ComparatorConfig {
        let mut c = ComparatorConfig::new(self.word_count_similarity_threshold);
        if self.multi_call_batch {
            c.parallel_tool_call_rewarding = true;
            c.allow_subset = true;
            c.allow_superset = true;
            c.parallel_tool_call_reward_mode = RewardMode::F1;
        }
        c
    }
}

/// A build that cannot go on: the source cannot be read as any layout, or a row failed the
/// self-check (with `--on-selfcheck-fail error`).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{message}")]
pub struct BuildError {
    pub message: String,
}

impl BuildError {
    pub fn new(message: impl Into<String>) -> BuildError {
        BuildError {
            message: message.into(),
        }
    }
}

/// Everything one build produces.
#[derive(Debug)]
pub struct Built {
    pub rows: Vec<u8>,
    pub audit: Vec<u8>,
    pub metrics: Metrics,
}

/// Builds from a whole in-memory source, in chunks of `chunk` bytes (tests, small inputs).
pub fn build_bytes(
    file: &str,
    data: &[u8],
    options: BuildOptions,
    chunk: usize,
) -> Result<Built, BuildError> {
    let mut b = PivotBuilder::new(file, options);
    for c in data.chunks(chunk.max(1)) {
        if !b.scan(c) {
            break;
        }
    }
    b.start_conversion()?;
    let (mut rows, mut audit) = (Vec::new(), Vec::new());
    for c in data.chunks(chunk.max(1)) {
        let go_on = b.convert(c);
        rows.extend(b.take_rows());
        audit.extend(b.take_audit());
        if !go_on {
            break;
        }
    }
    let metrics = b.finish()?;
    rows.extend(b.take_rows());
    audit.extend(b.take_audit());
    Ok(Built {
        rows,
        audit,
        metrics,
    })
}
