//! The reward profile (`gym eval profile`): streams the materialized-inputs and rollouts files,
//! joins them by rollout key, and computes per-task and per-agent statistics as upstream does.
//!
//! Memory grows with the number of rollouts and numeric fields only: each rollout keeps its key,
//! its numbers and the byte span of its line, never its text.

use crate::error::{ProfileError, RolloutKey};
use crate::json::Num;
use crate::jsonl::{LineSpan, LineSplitter};
use crate::record::{self, key, AgentField, IndexField, KeyId, KeyTable, Reward, Row, RowKind};
use crate::stats::Scratch;
use std::collections::HashMap;

/// An agent's group key: a name, or a number when a rollout's numeric `agent_name` field
/// replaces it (upstream lets that column win).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct AgentKey {
    pub name: Box<str>,
    /// `true` when the key came from a number; it is then written as a JSON number.
    pub numeric: bool,
}

impl AgentKey {
    fn from_num(n: Num) -> Self {
        let mut buf = Vec::new();
        let _ = n.write_json(&mut buf);
        AgentKey { name: String::from_utf8_lossy(&buf).into(), numeric: true }
    }
}

type AgentId = u32;

/// One materialized input row.
struct InputRow {
    key: RolloutKey,
    agent: AgentField,
    span: LineSpan,
}

/// One rollout row, reduced to its numbers.
#[derive(Debug)]
pub struct RolloutRecord {
    pub key: RolloutKey,
    top: Box<[(KeyId, Option<Num>)]>,
    usage: Box<[(KeyId, Option<Num>)]>,
    /// `reward` verbatim, when present.
    pub reward: Option<Reward>,
    /// The rollout row's own `agent_ref.name`, used when its input row has none.
    agent: AgentField,
    /// Where the rollout's line is, to show it again on demand.
    pub span: LineSpan,
}

impl RolloutRecord {
    /// The row's metric values in upstream's frame order: `result | response.usage` (a usage key
    /// overrides a same-named top-level key in its position), numbers only.
    pub fn metric_values(&self, mut f: impl FnMut(KeyId, Num)) {
        for &(k, v) in self.top.iter() {
            let v = match self.usage.iter().find(|(u, _)| *u == k) {
                Some(&(_, usage_value)) => usage_value,
                None => v,
            };
            if let Some(v) = v {
                f(k, v);
            }
        }
        for &(k, v) in self.usage.iter() {
            if let (Some(v), false) = (v, self.top.iter().any(|(t, _)| *t == k)) {
                f(k, v);
            }
        }
    }

    /// Numeric `response.usage` fields, in order (for `rollout_infos`).
    pub fn usage_numbers(&self) -> impl Iterator<Item = (KeyId, Num)> + '_ {
        self.usage.iter().filter_map(|&(k, v)| v.map(|v| (k, v)))
    }

    /// Numeric top-level fields except the reward (for `rollout_infos`).
    pub fn top_numbers(&self) -> impl Iterator<Item = (KeyId, Num)> + '_ {
        self.top.iter().filter(|(k, _)| *k != key::REWARD).filter_map(|&(k, v)| v.map(|v| (k, v)))
    }
}

/// Options of a profile run.
#[derive(Clone, Copy, Debug, Default)]
pub struct ProfileOptions {
    /// Profile completed rollouts of a partial collection instead of failing on missing ones.
    pub allow_partial_rollouts: bool,
}

/// Statistics of one metric column in one group; `None` where upstream writes no key.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ColumnSummary {
    pub mean: Option<f64>,
    pub max: Option<Num>,
    pub min: Option<Num>,
    pub median: Option<f64>,
    pub std: Option<f64>,
}

/// One row of `*_reward_profiling.jsonl`.
#[derive(Debug)]
pub struct TaskProfile {
    pub task: i64,
    /// One entry per [`Profile::columns`] entry.
    pub columns: Vec<ColumnSummary>,
    /// The materialized row written as `sample`.
    pub sample: LineSpan,
    pub num_rollouts: usize,
    pub expected_num_rollouts: usize,
    /// This task's rollouts in [`Profile::rollouts`], ascending rollout index.
    pub rollouts: std::ops::Range<usize>,
}

impl TaskProfile {
    pub fn missing_num_rollouts(&self) -> usize {
        self.expected_num_rollouts - self.num_rollouts
    }
    pub fn completion_pct(&self) -> f64 {
        pct(self.num_rollouts, self.expected_num_rollouts)
    }
}

/// One entry of `*_agent_metrics.json`.
#[derive(Debug)]
pub struct AgentProfile {
    pub agent: AgentKey,
    pub columns: Vec<ColumnSummary>,
    pub num_rollouts: usize,
}

/// Upstream's completion summary.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct CompletionSummary {
    pub expected_rollout_rows: usize,
    pub completed_rollout_rows: usize,
    pub total_input_rows: usize,
    pub complete_input_rows: usize,
    pub partial_input_rows: usize,
    pub missing_input_rows: usize,
}

impl CompletionSummary {
    pub fn completion_pct(&self) -> f64 {
        pct(self.completed_rollout_rows, self.expected_rollout_rows)
    }
    pub fn missing_rollout_rows(&self) -> usize {
        self.expected_rollout_rows - self.completed_rollout_rows
    }
}

fn pct(done: usize, expected: usize) -> f64 {
    if expected == 0 {
        100.0
    } else {
        100.0 * done as f64 / expected as f64
    }
}

/// A finished profile: everything needed to write both output files and show them.
#[derive(Debug)]
pub struct Profile {
    pub keys: KeyTable,
    /// Metric columns, in upstream's order.
    pub columns: Vec<KeyId>,
    /// max/min are integers only when every metric column is an integer in every rollout.
    pub all_int: bool,
    pub tasks: Vec<TaskProfile>,
    pub agents: Vec<AgentProfile>,
    /// Matched rollouts, ascending (task, rollout).
    pub rollouts: Vec<RolloutRecord>,
    pub summary: CompletionSummary,
    /// Things upstream would crash on that were handled, for the user to know.
    pub warnings: Vec<String>,
}

impl Profile {
    pub fn column_name(&self, column: usize) -> &str {
        self.keys.name(self.columns[column])
    }
}

/// The upstream check an error belongs to; a lower rank is reported first, as upstream would.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Check {
    RolloutKeyField,
    InputKeyField,
    DuplicateInput,
    DuplicateRollout,
}

/// Reads both files in chunks and builds a [`Profile`].
///
/// ```text
/// push_inputs(chunk)* -> push_rollouts(chunk)* -> finish(options)
/// ```
pub struct ProfileBuilder {
    inputs_file: String,
    rollouts_file: String,
    splitter: LineSplitter,
    inputs_done: bool,
    state: ScanState,
}

#[derive(Default)]
struct ScanState {
    keys: KeyTable,
    inputs: Vec<InputRow>,
    input_index: HashMap<RolloutKey, u32>,
    rollouts: Vec<RolloutRecord>,
    rollout_index: HashMap<RolloutKey, u32>,
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
            inputs_done: false,
            state: ScanState::default(),
        }
    }

    /// Feeds the next chunk of the materialized-inputs file.
    pub fn push_inputs(&mut self, chunk: &[u8]) -> Result<(), ProfileError> {
        let (state, file) = (&mut self.state, &self.inputs_file);
        self.splitter.push(chunk, |span, line| state.input_line(file, span, line))
    }

    /// Feeds the next chunk of the rollouts file (after the whole inputs file).
    pub fn push_rollouts(&mut self, chunk: &[u8]) -> Result<(), ProfileError> {
        self.end_inputs()?;
        let (state, file) = (&mut self.state, &self.rollouts_file);
        self.splitter.push(chunk, |span, line| state.rollout_line(file, span, line))
    }

    /// Lines read so far from the file being read now.
    pub fn lines_read(&self) -> u64 {
        self.splitter.lines()
    }

    fn end_inputs(&mut self) -> Result<(), ProfileError> {
        if !self.inputs_done {
            let (state, file) = (&mut self.state, &self.inputs_file);
            self.splitter.finish(|span, line| state.input_line(file, span, line))?;
            self.splitter = LineSplitter::new();
            self.inputs_done = true;
        }
        Ok(())
    }

    /// Ends the rollouts file, runs upstream's checks and computes the profile.
    pub fn finish(mut self, options: ProfileOptions) -> Result<Profile, ProfileError> {
        self.end_inputs()?;
        let (state, file) = (&mut self.state, &self.rollouts_file);
        self.splitter.finish(|span, line| state.rollout_line(file, span, line))?;
        if let Some((_, err)) = self.state.deferred.take() {
            return Err(err);
        }
        self.state.check_keys(&self.inputs_file, &self.rollouts_file, options)?;
        Ok(self.state.compute(&self.inputs_file))
    }
}

impl ScanState {
    fn defer(&mut self, check: Check, err: ProfileError) {
        if self.deferred.as_ref().is_none_or(|(c, _)| check < *c) {
            self.deferred = Some((check, err));
        }
    }

    fn parse(&mut self, file: &str, span: LineSpan, line: &[u8], kind: RowKind) -> Result<Row, ProfileError> {
        if line.iter().all(u8::is_ascii_whitespace) {
            return Err(ProfileError::MalformedJson {
                file: file.to_string(),
                line: span.line,
                column: 1,
                message: "empty line (each line must hold one JSON object)".into(),
            });
        }
        if span.line == 1 && line.starts_with(b"\xEF\xBB\xBF") {
            return Err(ProfileError::MalformedJson {
                file: file.to_string(),
                line: 1,
                column: 1,
                message: "the file starts with a UTF-8 byte order mark (BOM); save it as UTF-8 without BOM".into(),
            });
        }
        record::parse_row(line, kind, &mut self.keys).map_err(|e| ProfileError::MalformedJson {
            file: file.to_string(),
            line: span.line,
            column: e.column,
            message: e.message,
        })
    }

    fn input_line(&mut self, file: &str, span: LineSpan, line: &[u8]) -> Result<(), ProfileError> {
        let row = self.parse(file, span, line, RowKind::Input)?;
        let Some(key) = self.rollout_key(file, span, &row, Check::InputKeyField) else {
            return Ok(());
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
            return Ok(());
        }
        self.input_index.insert(key, idx);
        self.inputs.push(InputRow { key, agent: row.agent, span });
        Ok(())
    }

    fn rollout_line(&mut self, file: &str, span: LineSpan, line: &[u8]) -> Result<(), ProfileError> {
        let row = self.parse(file, span, line, RowKind::Rollout)?;
        let Some(key) = self.rollout_key(file, span, &row, Check::RolloutKeyField) else {
            return Ok(());
        };
        if let Some(&first) = self.rollout_index.get(&key) {
            let first_line = self.rollouts[first as usize].span.line;
            let err =
                ProfileError::DuplicateKey { what: "result", key, file: file.to_string(), line: span.line, first_line };
            self.defer(Check::DuplicateRollout, err);
            return Ok(());
        }
        self.rollout_index.insert(key, self.rollouts.len() as u32);
        self.rollouts.push(RolloutRecord {
            key,
            top: row.top.into_boxed_slice(),
            usage: row.usage.into_boxed_slice(),
            reward: row.reward,
            agent: row.agent,
            span,
        });
        Ok(())
    }

    fn rollout_key(&mut self, file: &str, span: LineSpan, row: &Row, check: Check) -> Option<RolloutKey> {
        let field = |name: &'static str, value: IndexField| match value {
            IndexField::Int(v) => Ok(v),
            IndexField::Missing => Err((name, "is missing (every row needs `_ng_task_index` and `_ng_rollout_index`; files from older Gym versions lack them: re-run collection, or add them)".to_string())),
            IndexField::Invalid(what) => Err((name, format!("must be an integer, found {what}"))),
        };
        let key = field(record::TASK_INDEX, row.task)
            .and_then(|task| field(record::ROLLOUT_INDEX, row.rollout).map(|rollout| RolloutKey { task, rollout }));
        match key {
            Ok(key) => Some(key),
            Err((field, problem)) => {
                let err = ProfileError::BadField { file: file.to_string(), line: span.line, field, problem };
                self.defer(check, err);
                None
            }
        }
    }

    /// Upstream's key checks, in its order: extra rollouts always fail; missing ones unless partial.
    fn check_keys(&self, inputs_file: &str, rollouts_file: &str, options: ProfileOptions) -> Result<(), ProfileError> {
        let mut extra: Vec<&RolloutRecord> =
            self.rollouts.iter().filter(|r| !self.input_index.contains_key(&r.key)).collect();
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
            let mut missing: Vec<&InputRow> =
                self.inputs.iter().filter(|r| !self.rollout_index.contains_key(&r.key)).collect();
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

    fn compute(self, inputs_file: &str) -> Profile {
        let ScanState { keys, inputs, input_index, mut rollouts, .. } = self;
        rollouts.sort_unstable_by_key(|r| r.key);

        // Columns: numeric keys in first-seen order over rollouts in key order.
        let mut columns: Vec<KeyId> = Vec::new();
        let mut column_of: HashMap<KeyId, usize> = HashMap::new();
        let mut present_everywhere_as_int: Vec<usize> = Vec::new(); // per column: rollouts with an int
        for r in &rollouts {
            r.metric_values(|k, v| {
                if is_metric_column(k) {
                    let c = *column_of.entry(k).or_insert_with(|| {
                        columns.push(k);
                        present_everywhere_as_int.push(0);
                        columns.len() - 1
                    });
                    if matches!(v, Num::Int(_)) {
                        present_everywhere_as_int[c] += 1;
                    }
                }
            });
        }
        let all_int = present_everywhere_as_int.iter().all(|&n| n == rollouts.len());

        // Agents: the input row's agent_ref.name (or the rollout's, when the input has none),
        // replaced by a numeric `agent_name` field as upstream's frame does.
        let mut warnings = Vec::new();
        let mut agent_ids: HashMap<AgentKey, AgentId> = HashMap::new();
        let mut agent_keys: Vec<AgentKey> = Vec::new();
        let mut rollout_agent: Vec<Option<AgentId>> = Vec::with_capacity(rollouts.len());
        let mut no_agent = (0usize, u64::MAX);
        for r in &rollouts {
            let input = &inputs[input_index[&r.key] as usize];
            let mut agent = match (&input.agent, &r.agent) {
                (AgentField::NoAgentRef | AgentField::NoName, fallback) => agent_key(fallback),
                (field, _) => agent_key(field),
            };
            r.metric_values(|k, v| {
                if k == key::AGENT_NAME {
                    agent = Some(AgentKey::from_num(v));
                }
            });
            rollout_agent.push(agent.map(|a| {
                let next = agent_keys.len() as AgentId;
                *agent_ids.entry(a.clone()).or_insert_with(|| {
                    agent_keys.push(a);
                    next
                })
            }));
            if rollout_agent.last() == Some(&None) {
                no_agent = (no_agent.0 + 1, no_agent.1.min(input.span.line));
            }
        }
        if no_agent.0 > 0 {
            warnings.push(format!(
                "{} rollouts have no agent name (`agent_ref.name` missing or null in '{}', first at line {}): \
                 they are in the task rows but not in the agent metrics",
                no_agent.0, inputs_file, no_agent.1
            ));
        }

        let mut grouper = Grouper::new(&columns, &column_of, all_int);

        // Task rows: rollouts of one task are contiguous in key order.
        let mut expected_by_task: HashMap<i64, usize> = HashMap::new();
        for input in &inputs {
            *expected_by_task.entry(input.key.task).or_default() += 1;
        }
        let mut tasks = Vec::new();
        let mut start = 0;
        while start < rollouts.len() {
            let task = rollouts[start].key.task;
            let end = start + rollouts[start..].iter().take_while(|r| r.key.task == task).count();
            let members: Vec<usize> = (start..end).collect();
            tasks.push(TaskProfile {
                task,
                columns: grouper.summarize(&rollouts, &members),
                sample: inputs[input_index[&rollouts[start].key] as usize].span,
                num_rollouts: end - start,
                expected_num_rollouts: expected_by_task[&task],
                rollouts: start..end,
            });
            start = end;
        }

        // Agent rows: over rollouts (not task means), sorted by agent key.
        let mut members_by_agent: Vec<Vec<usize>> = vec![Vec::new(); agent_keys.len()];
        for (i, agent) in rollout_agent.iter().enumerate() {
            if let Some(a) = agent {
                members_by_agent[*a as usize].push(i);
            }
        }
        let mut agents: Vec<AgentProfile> = agent_keys
            .into_iter()
            .zip(members_by_agent)
            .map(|(agent, members)| AgentProfile {
                columns: grouper.summarize(&rollouts, &members),
                num_rollouts: members.len(),
                agent,
            })
            .collect();
        agents.sort_by(|a, b| agent_order(&a.agent, &b.agent));

        let summary = completion_summary(&inputs, &expected_by_task, &tasks);
        Profile { keys, columns, all_int, tasks, agents, rollouts, summary, warnings }
    }
}

/// The metric columns are the numeric fields except the keys and the agent override.
fn is_metric_column(k: KeyId) -> bool {
    !matches!(k, key::TASK_INDEX | key::ROLLOUT_INDEX | key::AGENT_NAME)
}

fn agent_key(field: &AgentField) -> Option<AgentKey> {
    match field {
        AgentField::Name(name) => Some(AgentKey { name: name.clone(), numeric: false }),
        AgentField::Number(n) => Some(AgentKey::from_num(*n)),
        _ => None,
    }
}

/// Numbers before names (upstream cannot mix them at all), names in code point order.
fn agent_order(a: &AgentKey, b: &AgentKey) -> std::cmp::Ordering {
    match (a.numeric, b.numeric) {
        (true, true) => {
            let parse = |k: &AgentKey| k.name.parse::<f64>().unwrap_or(f64::NAN);
            parse(a).total_cmp(&parse(b))
        }
        (true, false) => std::cmp::Ordering::Less,
        (false, true) => std::cmp::Ordering::Greater,
        (false, false) => a.name.cmp(&b.name),
    }
}

fn completion_summary(
    inputs: &[InputRow],
    expected_by_task: &HashMap<i64, usize>,
    tasks: &[TaskProfile],
) -> CompletionSummary {
    let completed: usize = tasks.iter().map(|t| t.num_rollouts).sum();
    let complete = tasks.iter().filter(|t| t.num_rollouts == t.expected_num_rollouts).count();
    let total = expected_by_task.len();
    CompletionSummary {
        expected_rollout_rows: inputs.len(),
        completed_rollout_rows: completed,
        total_input_rows: total,
        complete_input_rows: complete,
        partial_input_rows: tasks.len() - complete,
        missing_input_rows: total - tasks.len(),
    }
}

/// Computes [`ColumnSummary`]s of a group of rollouts, reusing its buffers between groups.
struct Grouper<'a> {
    columns: &'a [KeyId],
    column_of: &'a HashMap<KeyId, usize>,
    all_int: bool,
    /// Row-major [rollout][column] values of the current group; NaN where missing.
    values: Vec<f64>,
    ints: Vec<Option<Num>>,
    column: Vec<f64>,
    scratch: Scratch,
}

impl<'a> Grouper<'a> {
    fn new(columns: &'a [KeyId], column_of: &'a HashMap<KeyId, usize>, all_int: bool) -> Self {
        Grouper {
            columns,
            column_of,
            all_int,
            values: Vec::new(),
            ints: Vec::new(),
            column: Vec::new(),
            scratch: Scratch::default(),
        }
    }

    fn summarize(&mut self, rollouts: &[RolloutRecord], members: &[usize]) -> Vec<ColumnSummary> {
        let width = self.columns.len();
        self.values.clear();
        self.values.resize(members.len() * width, f64::NAN);
        self.ints.clear();
        self.ints.resize(members.len() * width, None);
        for (row, &i) in members.iter().enumerate() {
            rollouts[i].metric_values(|k, v| {
                if let Some(&c) = self.column_of.get(&k) {
                    self.values[row * width + c] = v.as_f64();
                    self.ints[row * width + c] = Some(v);
                }
            });
        }
        let mut out = Vec::with_capacity(width);
        for c in 0..width {
            self.column.clear();
            self.column.extend((0..members.len()).map(|row| self.values[row * width + c]));
            let st = self.scratch.column_stats(&self.column);
            let (max, min) = if self.all_int {
                let ints = (0..members.len()).filter_map(|row| match self.ints[row * width + c] {
                    Some(Num::Int(v)) => Some(v),
                    _ => None,
                });
                let (mx, mn) = ints.fold((None, None), |(mx, mn): (Option<i64>, Option<i64>), v| {
                    (Some(mx.map_or(v, |m| m.max(v))), Some(mn.map_or(v, |m| m.min(v))))
                });
                (mx.map(Num::Int), mn.map(Num::Int))
            } else {
                let present = self.column.iter().copied().filter(|v| !v.is_nan());
                let (mx, mn) = present.fold((None, None), |(mx, mn): (Option<f64>, Option<f64>), v| {
                    (Some(mx.map_or(v, |m| if v > m { v } else { m })), Some(mn.map_or(v, |m| if v < m { v } else { m })))
                });
                (mx.map(Num::Float), mn.map(Num::Float))
            };
            out.push((ColumnSummary { mean: st.mean, max, min, median: st.median, std: st.std }, st.count));
        }
        // Upstream: "std is more interpretable as 0 than NaN": only when *every* column's std is
        // NaN, columns with no missing value in the group get std 0.
        if out.iter().all(|(s, _)| s.std.is_none()) {
            for (s, count) in &mut out {
                if *count == members.len() {
                    s.std = Some(0.0);
                }
            }
        }
        out.into_iter().map(|(s, _)| s).collect()
    }
}
