//! Streaming scan of both files: rows are read down to keys, numbers and spans, and upstream's
//! checks run in upstream's order.

use super::{ProfileOptions, RolloutRecord};
use crate::error::{ProfileError, RolloutKey};
use crate::fast_map::FastMap;
use crate::gym::keys;
use crate::read::jsonl::{LineSpan, LineSplitter, SplitError, DEFAULT_MAX_LINE_BYTES};
use crate::record::{self, AgentField, IndexField, IndexKind, KeyTable, Row, RowError, RowKind};

/// One materialized input row.
pub(super) struct InputRow {
    pub(super) key: RolloutKey,
    /// What `_ng_task_index` was in the row (v0.7.0 writes a task row's index as pandas holds it).
    pub(super) task_kind: IndexKind,
    pub(super) agent: AgentField,
    /// `_ng_environment_server` (`NoAgentRef`: absent).
    pub(super) server: AgentField,
    pub(super) span: LineSpan,
}

/// The upstream check an error belongs to; a lower rank is reported first, as upstream would.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Check {
    RolloutKeyField,
    InputKeyField,
    DuplicateInput,
    DuplicateRollout,
}

/// Reads both files in chunks and builds a [`Profile`](super::Profile). The faces run it as a
/// `read::job::Job` (`pooled`: batches parsed anywhere, recorded in order); fed line by line on
/// this thread, it is the reference the batch reads are tested against (`output::profile_bytes`):
///
/// ```text
/// push_inputs(chunk)* -> push_rollouts(chunk)* -> finish(options)
/// ```
pub struct ProfileBuilder {
    inputs_file: String,
    rollouts_file: String,
    splitter: LineSplitter,
    max_line_bytes: u64,
    inputs_done: bool,
    pub(super) state: ScanState,
    /// Threads `finish` may use (1 in the browser).
    threads: usize,
}

#[derive(Default)]
pub(super) struct ScanState {
    pub(super) keys: KeyTable,
    pub(super) inputs: Vec<InputRow>,
    pub(super) input_index: FastMap<RolloutKey, u32>,
    pub(super) rollouts: Vec<RolloutRecord>,
    pub(super) rollout_index: FastMap<RolloutKey, u32>,
    /// The first structural error, held until both files are read because upstream reports any
    /// malformed JSON (in either file) before it.
    deferred: Option<(Check, ProfileError)>,
}

impl ProfileBuilder {
    pub fn new(inputs_file: impl Into<String>, rollouts_file: impl Into<String>) -> Self {
        ProfileBuilder {
            inputs_file: inputs_file.into(),
            rollouts_file: rollouts_file.into(),
            splitter: LineSplitter::new(),
            max_line_bytes: DEFAULT_MAX_LINE_BYTES,
            inputs_done: false,
            state: ScanState::default(),
            threads: 1,
        }
    }

    /// Lets `finish` use another thread (natively, when `threads` > 1): the agents' rows are
    /// computed there beside the tasks'; the result is the same.
    pub fn with_threads(mut self, threads: usize) -> Self {
        self.threads = threads;
        self
    }

    /// Refuses lines longer than `max` bytes (default 1 GiB), naming the file and line.
    pub fn with_max_line_bytes(mut self, max: u64) -> Self {
        self.max_line_bytes = max;
        self.splitter = LineSplitter::with_max_line_bytes(max);
        self
    }

    /// Feeds the next chunk of the materialized-inputs file.
    pub fn push_inputs(&mut self, chunk: &[u8]) -> Result<(), ProfileError> {
        let (state, file) = (&mut self.state, &self.inputs_file);
        self.splitter
            .push(chunk, |span, line| state.input_line(file, span, line))
            .map_err(|e| too_long(e, file))
    }

    /// Feeds the next chunk of the rollouts file (after the whole inputs file).
    pub fn push_rollouts(&mut self, chunk: &[u8]) -> Result<(), ProfileError> {
        self.end_inputs()?;
        let (state, file) = (&mut self.state, &self.rollouts_file);
        self.splitter
            .push(chunk, |span, line| state.rollout_line(file, span, line))
            .map_err(|e| too_long(e, file))
    }

    /// Lines read so far from the file being read now.
    pub fn lines_read(&self) -> u64 {
        self.splitter.lines()
    }

    /// The longest line it reads (`with_max_line_bytes`): a reading driver's limit.
    pub fn max_line_bytes(&self) -> u64 {
        self.max_line_bytes
    }

    fn restart_splitter(&mut self) {
        self.splitter = LineSplitter::with_max_line_bytes(self.max_line_bytes);
    }

    pub(crate) fn file_of(&self, kind: RowKind) -> &str {
        match kind {
            RowKind::Input => &self.inputs_file,
            RowKind::Rollout => &self.rollouts_file,
        }
    }

    fn end_inputs(&mut self) -> Result<(), ProfileError> {
        if !self.inputs_done {
            let (state, file) = (&mut self.state, &self.inputs_file);
            self.splitter
                .finish(|span, line| state.input_line(file, span, line))?;
            self.restart_splitter();
            self.inputs_done = true;
        }
        Ok(())
    }

    /// Ends the rollouts file and runs upstream's checks: what [`Self::finish`] computes the
    /// profile from (the scan, the inputs file's name, the threads it may use).
    pub(super) fn end_scan(
        mut self,
        options: ProfileOptions,
    ) -> Result<(ScanState, String, usize), ProfileError> {
        self.end_inputs()?;
        let (state, file) = (&mut self.state, &self.rollouts_file);
        self.splitter
            .finish(|span, line| state.rollout_line(file, span, line))?;
        if let Some((_, err)) = self.state.deferred.take() {
            return Err(err);
        }
        self.state
            .check_keys(&self.inputs_file, &self.rollouts_file, options)?;
        Ok((self.state, self.inputs_file, self.threads))
    }
}

/// Reads one line of either file: a blank line and a byte order mark get their own message.
/// One line of either file read for the profile (a blank line or a byte order mark is an error).
pub fn parse_line(
    span: LineSpan,
    line: &[u8],
    kind: RowKind,
    keys: &mut KeyTable,
) -> Result<Row, RowError> {
    if line.iter().all(u8::is_ascii_whitespace) {
        return Err(RowError {
            column: 1,
            message: "empty line (each line must hold one JSON object)".into(),
        });
    }
    // Offset 0 is line 1; a range of the file read alone knows its offsets, not its line numbers.
    if span.offset == 0 && line.starts_with(b"\xEF\xBB\xBF") {
        return Err(RowError {
            column: 1,
            message:
                "the file starts with a UTF-8 byte order mark (BOM); save it as UTF-8 without BOM"
                    .into(),
        });
    }
    record::parse_row(line, kind, keys)
}

pub(super) fn malformed(file: &str, span: LineSpan, e: RowError) -> ProfileError {
    ProfileError::MalformedJson {
        file: file.to_string(),
        line: span.line,
        column: e.column,
        message: e.message,
    }
}

pub(super) fn too_long(e: SplitError<ProfileError>, file: &str) -> ProfileError {
    e.into_error(|t| ProfileError::LineTooLong {
        file: file.to_string(),
        line: t.line,
        limit: t.limit,
    })
}

impl ScanState {
    fn defer(&mut self, check: Check, err: ProfileError) {
        if self.deferred.as_ref().is_none_or(|(c, _)| check < *c) {
            self.deferred = Some((check, err));
        }
    }

    fn input_line(&mut self, file: &str, span: LineSpan, line: &[u8]) -> Result<(), ProfileError> {
        let row = parse_line(span, line, RowKind::Input, &mut self.keys)
            .map_err(|e| malformed(file, span, e))?;
        self.record_input(file, span, row);
        Ok(())
    }

    pub(super) fn record_input(&mut self, file: &str, span: LineSpan, row: Row) {
        let Some(key) = self.rollout_key(file, span, &row, Check::InputKeyField) else {
            return;
        };
        let idx = self.inputs.len() as u32;
        if let Some(&first) = self.input_index.get(&key) {
            let first_line = self.inputs[first as usize].span.line;
            let err = ProfileError::DuplicateKey {
                what: "materialized input",
                key,
                file: file.to_string(),
                line: span.line,
                first_line,
            };
            self.defer(Check::DuplicateInput, err);
            return;
        }
        self.input_index.insert(key, idx);
        self.inputs.push(InputRow {
            key,
            task_kind: row.task.value().map_or(IndexKind::Int, |(_, kind)| kind),
            agent: row.agent,
            server: row.server,
            span,
        });
    }

    fn rollout_line(
        &mut self,
        file: &str,
        span: LineSpan,
        line: &[u8],
    ) -> Result<(), ProfileError> {
        let row = parse_line(span, line, RowKind::Rollout, &mut self.keys)
            .map_err(|e| malformed(file, span, e))?;
        self.record_rollout(file, span, row);
        Ok(())
    }

    pub(super) fn record_rollout(&mut self, file: &str, span: LineSpan, row: Row) {
        let Some(key) = self.rollout_key(file, span, &row, Check::RolloutKeyField) else {
            return;
        };
        if let Some(&first) = self.rollout_index.get(&key) {
            let first_line = self.rollouts[first as usize].span.line;
            let err = ProfileError::DuplicateKey {
                what: "result",
                key,
                file: file.to_string(),
                line: span.line,
                first_line,
            };
            self.defer(Check::DuplicateRollout, err);
            return;
        }
        if self.rollouts.is_empty() {
            // As many rollouts as materialized inputs are expected: room made once, instead of
            // growing by copies into fresh memory (whose page faults are costly on VMs).
            self.rollouts.reserve(self.inputs.len());
            self.rollout_index.reserve(self.inputs.len());
        }
        self.rollout_index.insert(key, self.rollouts.len() as u32);
        self.rollouts.push(RolloutRecord {
            key,
            kinds: (
                row.task.value().map_or(IndexKind::Int, |(_, kind)| kind),
                row.rollout.value().map_or(IndexKind::Int, |(_, kind)| kind),
            ),
            top: row.top.into_boxed_slice(),
            usage: row.usage.into_boxed_slice(),
            reward: row.reward,
            masked: row.masked,
            span,
        });
    }

    fn rollout_key(
        &mut self,
        file: &str,
        span: LineSpan,
        row: &Row,
        check: Check,
    ) -> Option<RolloutKey> {
        let field = |name: &'static str, value: IndexField| {
            match value {
            IndexField::Int(v) | IndexField::Typed(v, _) => Ok(v),
            IndexField::Missing => Err((name, "is missing (every row needs `_ng_task_index` and `_ng_rollout_index`; files from older Gym versions lack them: re-run collection, or add them)".to_string())),
            IndexField::Invalid(what) => Err((name, format!("must be an integer, found {what}"))),
        }
        };
        let key = field(keys::TASK_INDEX, row.task).and_then(|task| {
            field(keys::ROLLOUT_INDEX, row.rollout).map(|rollout| RolloutKey { task, rollout })
        });
        match key {
            Ok(key) => Some(key),
            Err((field, problem)) => {
                let err = ProfileError::BadField {
                    file: file.to_string(),
                    line: span.line,
                    field,
                    problem,
                };
                self.defer(check, err);
                None
            }
        }
    }

    /// Upstream's key checks, in its order: extra rollouts always fail; missing ones unless partial.
    fn check_keys(
        &self,
        inputs_file: &str,
        rollouts_file: &str,
        options: ProfileOptions,
    ) -> Result<(), ProfileError> {
        let mut extra: Vec<&RolloutRecord> = self
            .rollouts
            .iter()
            .filter(|r| !self.input_index.contains_key(&r.key))
            .collect();
        if !extra.is_empty() {
            let first_line = extra.iter().map(|r| r.span.line).min().unwrap_or(0);
            extra.sort_unstable_by_key(|r| r.key);
            return Err(ProfileError::ExtraRollouts {
                count: extra.len(),
                keys: extra.iter().take(10).map(|r| r.key).collect(),
                file: rollouts_file.to_string(),
                first_line,
            });
        }
        if !options.allow_partial_rollouts {
            let mut missing: Vec<&InputRow> = self
                .inputs
                .iter()
                .filter(|r| !self.rollout_index.contains_key(&r.key))
                .collect();
            if !missing.is_empty() {
                let first_line = missing.iter().map(|r| r.span.line).min().unwrap_or(0);
                missing.sort_unstable_by_key(|r| r.key);
                return Err(ProfileError::MissingRollouts {
                    count: missing.len(),
                    keys: missing.iter().take(10).map(|r| r.key).collect(),
                    file: inputs_file.to_string(),
                    first_line,
                });
            }
        }
        Ok(())
    }
}
