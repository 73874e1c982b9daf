//! [`PivotBuilder`]: the two passes over a source file fed in chunks, producing pivot rows,
//! audit records and metrics.

use super::detect::{detect, SourceFormat};
use super::extract::CheckOptions;
use super::metrics::Metrics;
use super::skips::{audit_record, Reason, RowRef};
use super::source::{class_slot, dotted, dotted_raw, reward_of, Groups, RawRow};
use super::{chat, conversational, generic, responses, BuildError, BuildOptions};
use crate::read::jsonl::{self, LineSplitter};
use crate::verifier::ComparatorConfig;
use serde_json::Value;
use std::collections::HashSet;
use std::hash::BuildHasherDefault;
use std::sync::Arc;

mod batch;
mod emit;
pub mod pooled;
pub use batch::{ConvertBatch, Converted, Converter};
use emit::IdHasher;

/// Builds a pivot dataset from a source fed twice in chunks: `scan` … `start_conversion`, then
/// `convert` … `finish`; after each `convert`, `take_rows` / `take_audit` hand over the output.
/// The second pass may also run on several threads: `cut` → [`Converter::run`] → `apply`
/// (see [`batch`]); `convert` is those three steps on the calling thread.
pub struct PivotBuilder {
    file: String,
    options: BuildOptions,
    checks: CheckOptions,
    comparator: ComparatorConfig,
    splitter: LineSplitter,
    /// Non-blank lines seen in the current pass (the next one's `trajectory_id`).
    row_index: u64,
    /// Physical line number of the current line.
    line: u64,
    format: Option<SourceFormat>,
    /// Filled by the first pass, then only read (shared with the converters).
    groups: Arc<Groups>,
    /// Task groups of one (rows without the group field), by class.
    single_groups: [u64; 3],
    /// Ids of the pivots written: already SHA-256 bytes, so their first 8 bytes are the hash.
    dedup: HashSet<[u8; 16], BuildHasherDefault<IdHasher>>,
    metrics: Metrics,
    conv_counts: conversational::ConvCounts,
    rows: Vec<u8>,
    audit: Vec<u8>,
    error: Option<BuildError>,
    done: bool,
    /// The pivot ids looked up in `dedup` while converting the current line.
    checked: Vec<[u8; 16]>,
    /// Where each row in `rows` ends.
    row_ends: Vec<usize>,
    /// Non-blank lines cut so far in the second pass (the next one's `trajectory_id`; `row_index`
    /// is the line being converted).
    cut_rows: u64,
    /// A line too long to convert, reported after the lines before it are applied.
    cut_error: Option<BuildError>,
    /// The converter `convert` uses on the calling thread (made on first use).
    converter: Option<Box<Converter>>,
    /// Where rows go as soon as `spill_bytes` of them are held (see [`Self::set_row_sink`]).
    row_sink: Option<RowSink>,
    spill_bytes: usize,
    /// The converters' bound on one line's rows (see `batch`): set on the builder, kept in
    /// `handoff_limit` by its converters only.
    handoff_bytes: usize,
    handoff_limit: Option<usize>,
    /// The current line's rows passed `handoff_limit`: its conversion stopped.
    too_big: bool,
    /// `rows.len()` when the current line began.
    line_rows_start: usize,
}

/// Receives rows in output order while a line is being converted.
pub type RowSink = Box<dyn FnMut(Vec<u8>) + Send>;

/// Rows held before they go to the sink. Each pivot row carries its whole prefix, so a long
/// trajectory's rows grow with the square of its steps (716 MB from one 0.75 MB rollout of 2,000
/// tool calls): handed on in pieces, memory follows the longest row instead.
pub const SPILL_BYTES: usize = 4 << 20;

impl PivotBuilder {
    pub fn new(file: impl Into<String>, options: BuildOptions) -> PivotBuilder {
        let checks = CheckOptions {
            check_tool_names: options.check_tool_names,
            multi_call_batch: options.multi_call_batch,
            tool_calls_only: options.tool_calls_only,
            doom_loop_threshold: options.doom_loop_threshold,
            skip_tool_errors: options.skip_tool_errors,
        };
        PivotBuilder {
            file: file.into(),
            comparator: options.comparator(),
            format: options.source_format,
            options,
            checks,
            splitter: LineSplitter::new(),
            row_index: 0,
            line: 0,
            groups: Arc::default(),
            single_groups: [0; 3],
            dedup: HashSet::default(),
            metrics: Metrics::default(),
            conv_counts: Default::default(),
            rows: Vec::new(),
            audit: Vec::new(),
            error: None,
            done: false,
            checked: Vec::new(),
            row_ends: Vec::new(),
            cut_rows: 0,
            cut_error: None,
            converter: None,
            row_sink: None,
            spill_bytes: SPILL_BYTES,
            handoff_bytes: batch::HANDOFF_BYTES,
            handoff_limit: None,
            too_big: false,
            line_rows_start: 0,
        }
    }

    /// Rows are handed to `sink`, in order, whenever [`SPILL_BYTES`] of them are held while a
    /// line is converted on this builder; `take_rows` still returns the rest. Without a sink
    /// (the app) the rows stay until taken.
    pub fn set_row_sink(&mut self, sink: RowSink) {
        self.row_sink = Some(sink);
    }

    /// Other bounds than [`SPILL_BYTES`] and `batch::HANDOFF_BYTES` (before `converter`): tiny ones
    /// let a test take the hand-off and the sink on every line. The output is the same.
    pub fn set_memory_bounds(&mut self, spill_bytes: usize, handoff_bytes: usize) {
        self.spill_bytes = spill_bytes;
        self.handoff_bytes = handoff_bytes;
    }

    /// After a row is written: hands the rows to the sink when they are many, and stops a
    /// converter's line whose rows passed its hand-off limit.
    fn row_written(&mut self) {
        if let Some(sink) = self.row_sink.as_mut() {
            if self.rows.len() >= self.spill_bytes {
                self.row_ends.clear();
                sink(std::mem::take(&mut self.rows));
            }
        }
        if let Some(limit) = self.handoff_limit {
            self.too_big |= self.rows.len() - self.line_rows_start > limit;
        }
    }

    // ---- pass 1 ----

    /// Feeds the next chunk of the first pass (rewards per task group). Returns false once the
    /// pass has failed (a line over the limit): reading on cannot help, and a source that never
    /// ends a line (`/dev/zero`) would never stop.
    pub fn scan(&mut self, chunk: &[u8]) -> bool {
        let pushed = jsonl::push_held_lines(
            self,
            |b| &mut b.splitter,
            chunk,
            |b, span, bytes| {
                b.line = span.line;
                b.scan_line(bytes);
            },
        );
        self.too_long(pushed);
        self.error.is_none()
    }

    /// A line over the splitter's limit (1 GiB) fails the build, naming the file and line.
    fn too_long(&mut self, pushed: Result<(), jsonl::LineTooLong>) {
        if let (Err(t), None) = (pushed, &self.error) {
            self.error = Some(BuildError::new(t.in_file(&self.file)));
        }
    }

    /// Ends the first pass; returns the layout being converted.
    pub fn start_conversion(&mut self) -> Result<SourceFormat, BuildError> {
        jsonl::finish_held_lines(
            self,
            |b| &mut b.splitter,
            |b, span, bytes| {
                b.line = span.line;
                b.scan_line(bytes);
            },
        );
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        let format = self.format.ok_or_else(|| {
            BuildError::new(format!(
                "'{}' has no source rows (the file is empty or blank)",
                self.file
            ))
        })?;
        self.metrics.source_format = format.as_str().into();
        self.row_index = 0;
        self.line = 0;
        Ok(format)
    }

    fn scan_line(&mut self, bytes: &[u8]) {
        let Ok(text) = simdutf8::basic::from_utf8(bytes) else {
            self.row_index += 1;
            return;
        };
        if text.trim().is_empty() {
            return;
        }
        self.row_index += 1;
        if self.format.is_none() && self.error.is_none() {
            let row = match serde_json::from_str::<Value>(text) {
                Ok(row) => row,
                Err(e) => {
                    // Not a layout question: the line is not JSON at all.
                    let what = e.to_string();
                    let what = what
                        .rsplit_once(" at line ")
                        .map_or(what.as_str(), |(w, _)| w);
                    self.error = Some(BuildError::new(format!(
                        "'{}' line {}, column {}: not JSON ({what}); the source is one JSON row a line",
                        self.file,
                        self.line,
                        e.column()
                    )));
                    return;
                }
            };
            if let Some(f) = detect(&row) {
                self.format = Some(f);
            } else {
                self.error = Some(BuildError::new(format!(
                    "'{}' line {}: the first row fits no source layout (Gym rollouts with `responses_create_params` and `response.output`, tau2 rollouts with `result.messages`, chat rows with `messages`, or a JSON array of candidates with `problem` and `expected_action`); pass --source-format to say which it is",
                    self.file, self.line
                )));
                return;
            }
        }
        let Some(reward_path) = self.reward_path() else {
            return;
        };
        let Ok(raw) = serde_json::from_str::<RawRow<'_>>(text) else {
            return;
        };
        let reward = reward_of(dotted_raw(&raw, &reward_path).as_ref());
        if reward.is_none() && self.format == Some(SourceFormat::Chat) {
            return; // chat rows without a reward are not grouped
        }
        let key = dotted_raw(&raw, &self.options.group_by).map(|v| v.to_string());
        // Only the first pass writes: no converter holds the groups yet, so nothing is copied.
        Arc::make_mut(&mut self.groups)
            .add(key, reward.is_some_and(|r| r >= self.options.min_reward));
    }

    fn reward_path(&self) -> Option<String> {
        let format = self.format?;
        self.options
            .reward_field
            .clone()
            .or_else(|| format.default_reward_field().map(String::from))
    }

    // ---- pass 2 ----

    /// Feeds the next chunk of the second pass. Returns false once done (`--limit` reached) or
    /// failed (the error comes from `finish`).
    pub fn convert(&mut self, chunk: &[u8]) -> bool {
        self.convert_batches(chunk, Self::convert_here)
    }

    /// Cuts a chunk into batches and converts each with `each`, unless already done or failed.
    fn convert_batches(
        &mut self,
        chunk: &[u8],
        each: fn(&mut PivotBuilder, &ConvertBatch) -> bool,
    ) -> bool {
        if self.done || self.error.is_some() {
            return false;
        }
        let mut go_on = true;
        for batch in self.cut(chunk) {
            go_on = each(self, &batch);
        }
        go_on
    }

    /// Converts a batch on the calling thread and applies it.
    fn convert_here(&mut self, batch: &ConvertBatch) -> bool {
        let mut converter = match self.converter.take() {
            Some(c) => c,
            None => Box::new(self.converter()),
        };
        let converted = converter.run(batch);
        self.converter = Some(converter);
        self.apply(batch, converted)
    }

    /// Pivot rows produced so far (JSONL bytes); the caller writes them out.
    pub fn take_rows(&mut self) -> Vec<u8> {
        self.row_ends.clear();
        std::mem::take(&mut self.rows)
    }

    /// Hands back a buffer returned by `take_rows` once written, so the next rows reuse its
    /// memory instead of faulting in fresh pages.
    pub fn give_back(&mut self, mut buffer: Vec<u8>) {
        if self.rows.is_empty() && buffer.capacity() > self.rows.capacity() {
            buffer.clear();
            self.rows = buffer;
        }
    }

    /// Audit records produced so far (JSONL bytes).
    pub fn take_audit(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.audit)
    }

    /// Ends the second pass: the last rows and records are left for `take_rows`/`take_audit`.
    pub fn finish(&mut self) -> Result<Metrics, BuildError> {
        if !self.done && self.error.is_none() {
            let batch = self.cut_end();
            self.convert_here(&batch);
        }
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        let mut m = self.metrics.clone();
        let tasks = self.groups.class_counts();
        for ((slot, t), single) in m.group_tasks.iter_mut().zip(tasks).zip(self.single_groups) {
            *slot = t + single;
        }
        if self.format == Some(SourceFormat::Conversational) {
            let c = self.conv_counts;
            m.conversational = Some([
                c.skipped_seed_assistant_messages,
                c.dropped_user_tool_messages,
                c.dropped_unconvertible_messages,
            ]);
        }
        Ok(m)
    }

    fn skip_row(&mut self, row: &RowRef, reason: Reason, detail: String) {
        *self.metrics.skips.entry(reason).or_default() += 1;
        if reason == Reason::InvalidSourceRow {
            self.metrics.invalid_source_rows += 1;
        }
        audit_record(row, None, reason, Some(detail), &mut self.audit);
    }

    fn convert_line(&mut self, bytes: &[u8]) {
        self.checked.clear();
        self.line_rows_start = self.rows.len();
        let format = self.format.expect("start_conversion ran");
        let text = match simdutf8::compat::from_utf8(bytes) {
            Ok(t) if t.trim().is_empty() => return,
            Ok(t) => Ok(t),
            Err(e) => Err(format!(
                "line {}: invalid UTF-8 at byte {}",
                self.line,
                e.valid_up_to()
            )),
        };
        let trajectory_id = self.row_index;
        self.row_index += 1;
        self.metrics.source_rows_seen += 1;
        let index_kind = if format == SourceFormat::Responses {
            super::skips::IndexKind::Item
        } else {
            super::skips::IndexKind::Message
        };
        let bare = RowRef {
            trajectory_id,
            uuid: None,
            task_index: None,
            rollout_index: None,
            metadata: None,
            index_kind,
        };
        let mut row: Value = match text.and_then(|t| {
            serde_json::from_str(t).map_err(|e| format!("line {}: invalid JSON: {e}", self.line))
        }) {
            Ok(v) => v,
            Err(detail) => return self.skip_row(&bare, Reason::InvalidSourceRow, detail),
        };
        if format == SourceFormat::Generic {
            return self.convert_generic(&row, &bare);
        }
        // Owned copies of the small identity fields: the row's items are moved out below.
        let field = |k: &str| row.get(k).filter(|v| !v.is_null()).cloned();
        let (uuid, task_index, rollout_index, metadata) = (
            field("uuid"),
            field("_ng_task_index"),
            field("_ng_rollout_index"),
            field("metadata"),
        );
        let rref = RowRef {
            trajectory_id,
            uuid: uuid.as_ref(),
            task_index: task_index.as_ref(),
            rollout_index: rollout_index.as_ref(),
            metadata: metadata.as_ref(),
            index_kind,
        };
        if detect(&row) != Some(format)
            && !(format == SourceFormat::Responses
                && detect(&row) == Some(SourceFormat::Conversational))
        {
            let detail = format!(
                "line {}: the row is not in the {} layout",
                self.line,
                format.as_str()
            );
            return self.skip_row(&rref, Reason::InvalidSourceRow, detail);
        }
        // Reward and source group.
        let reward_path = self.reward_path().unwrap_or_default();
        let reward_owned = dotted(&row, &reward_path).cloned();
        let reward_value = reward_owned.as_ref();
        let reward = reward_of(reward_value);
        let facts = if reward_value.is_none() && format == SourceFormat::Chat {
            None
        } else {
            let success = reward.is_some_and(|r| r >= self.options.min_reward);
            let key = dotted(&row, &self.options.group_by).map(std::string::ToString::to_string);
            let facts = self.groups.facts(key.as_deref(), success);
            self.metrics.group_trajectories[class_slot(facts.class)] += 1;
            if key.is_none() {
                self.single_groups[class_slot(facts.class)] += 1;
            }
            if !success {
                let detail = match reward_value {
                    None => format!("no reward at `{reward_path}`"),
                    Some(v) if reward.is_none() => format!("reward {v} is not numeric"),
                    Some(v) => format!("reward {v} < --min-reward {}", self.options.min_reward),
                };
                return self.skip_row(&rref, Reason::BelowMinReward, detail);
            }
            if !self.options.source_groups.contains(&facts.class) {
                let detail = format!("source group is {}", facts.class.as_str());
                return self.skip_row(&rref, Reason::SourceGroupFiltered, detail);
            }
            Some(facts)
        };
        let built = match format {
            SourceFormat::Responses => {
                responses::trajectory(&mut row, self.options.include_input_turns)
                    .map_err(|e| (Reason::InvalidSourceRow, e))
            }
            SourceFormat::Chat => {
                chat::trajectory(&row, trajectory_id, &mut self.metrics.nameless_tool_calls)
            }
            SourceFormat::Conversational => conversational::trajectory(
                &row,
                trajectory_id,
                &mut self.metrics.nameless_tool_calls,
                &mut self.conv_counts,
            ),
            SourceFormat::Generic => unreachable!("handled above"),
        };
        let t = match built {
            Ok(t) => t,
            Err((reason, detail)) => {
                return self.skip_row(&rref, reason, format!("line {}: {detail}", self.line))
            }
        };
        self.metrics.source_rows_used += 1;
        let base = self.base_info(&row, format, reward_value, facts);
        let wrote = self.convert_trajectory(t, &rref, &base, None);
        self.metrics.trajectories_with_pivots += u64::from(wrote);
    }

    fn convert_generic(&mut self, line: &Value, rref: &RowRef) {
        let candidates = match generic::candidates(
            line,
            rref.trajectory_id,
            &mut self.metrics.nameless_tool_calls,
        ) {
            Ok(c) => c,
            Err((reason, detail)) => {
                return self.skip_row(rref, reason, format!("line {}: {detail}", self.line))
            }
        };
        self.metrics.source_rows_used += 1;
        let base = self.base_info(&Value::Null, SourceFormat::Generic, None, None);
        let mut wrote = false;
        for c in candidates {
            if self.done {
                break;
            }
            wrote |= self.convert_trajectory(c.trajectory, rref, &base, Some(&c.source_model_info));
        }
        self.metrics.trajectories_with_pivots += u64::from(wrote);
    }
}
