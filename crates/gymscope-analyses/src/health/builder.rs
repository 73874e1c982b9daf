//! [`HealthBuilder`]: the streaming accumulator. Feed the rollouts file (chunks or lines, each
//! row parsed once), optionally the materialized inputs (what was expected) and the failures
//! file, then [`HealthBuilder::finish`]. Keeps one small record per rollout, never its text.

use super::fast::Reader;
use super::mode;
use super::row::{self, KeyRow, Row};
use super::signals::{signals, Signals};
use super::summary::TrajectoryEvidence;
use crate::read::batch::LineBatch;
use crate::read::jsonl::{self, LineSplitter, LineTooLong, SplitError};
use crate::record::MemberReader;
use std::collections::{BTreeMap, HashMap, HashSet};

/// A row that could not be read, or a line over the limit: the file, line and what is wrong.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("'{file}' line {line}{}{message}", if self.too_long { " " } else { ": " })]
pub struct HealthError {
    pub file: String,
    pub line: u64,
    pub message: String,
    /// The line is over the limit (worded as every command's limit error).
    pub too_long: bool,
}

/// One rollout as kept until the end.
#[derive(Clone, Debug)]
pub(super) struct Rec {
    pub task: i64,
    pub rollout: i64,
    pub agent: u32,
    pub line: u64,
    pub reward: Option<f64>,
    pub signals: Signals,
}

/// A file fed in chunks: its name and line splitter.
struct Feed {
    name: String,
    splitter: LineSplitter,
}

impl Feed {
    fn new(name: &str, max_line: u64) -> Feed {
        Feed {
            name: name.to_string(),
            splitter: LineSplitter::with_max_line_bytes(max_line),
        }
    }
}

pub struct HealthBuilder {
    pub(super) threshold: f64,
    rollouts: Feed,
    inputs: Option<Feed>,
    failures: Option<Feed>,
    max_line: u64,
    pub(super) agents: Vec<Option<String>>,
    /// Ids of named agents; the unnamed agent's apart (a lookup by `&str`, no copy per row).
    agent_ids: HashMap<String, u32>,
    unnamed_agent: Option<u32>,
    pub(super) recs: Vec<Rec>,
    /// (stage, task, rollout) of every row read (v0.7.0's rollout identity).
    seen: HashSet<(Option<i64>, i64, i64)>,
    pub(super) duplicates: u64,
    /// From the materialized inputs: each expected rollout's agent.
    pub(super) expected: Option<HashMap<(i64, i64), u32>>,
    /// Input rows read but not yet labelled: their key, run key and agent name
    /// ([`HealthBuilder::label_inputs`]).
    unlabelled: Vec<UnlabelledInput>,
    pub(super) failure_classes: Option<BTreeMap<String, u64>>,
    pub(super) failure_keys: HashSet<(i64, i64)>,
    pub(super) trajectory: TrajectoryEvidence,
    reader: Reader,
    /// `--single-step`: every rollout is judged as one action (`mode`).
    single_step: bool,
    /// Materialized inputs carrying `expected_action` (pivot rows).
    pivot_inputs: HashSet<(i64, i64)>,
    /// Per agent id, why its rollouts were judged single-step (bits of `SingleStepBy`).
    pub(super) single_step_by: HashMap<u32, u8>,
}

impl HealthBuilder {
    /// `rollouts` names the rollouts file in messages; `threshold` is the pass threshold.
    pub fn new(rollouts: &str, threshold: f64) -> HealthBuilder {
        let max_line = crate::read::jsonl::DEFAULT_MAX_LINE_BYTES;
        HealthBuilder {
            threshold,
            rollouts: Feed::new(rollouts, max_line),
            inputs: None,
            failures: None,
            max_line,
            agents: Vec::new(),
            agent_ids: HashMap::new(),
            unnamed_agent: None,
            recs: Vec::new(),
            seen: HashSet::new(),
            duplicates: 0,
            expected: None,
            unlabelled: Vec::new(),
            failure_classes: None,
            failure_keys: HashSet::new(),
            trajectory: TrajectoryEvidence::default(),
            reader: Reader::Skim,
            single_step: false,
            pivot_inputs: HashSet::new(),
            single_step_by: HashMap::new(),
        }
    }

    /// Lines longer than `max` bytes stop the read with an error naming the file and line.
    pub fn with_max_line_bytes(mut self, max: u64) -> HealthBuilder {
        self.max_line = max;
        self.rollouts.splitter = LineSplitter::with_max_line_bytes(max);
        self
    }

    /// Judges every rollout as one action (`--single-step`), whatever its rows say.
    #[must_use]
    pub fn single_step(mut self, on: bool) -> HealthBuilder {
        self.single_step = on;
        self
    }

    /// Reads every row with serde alone, never by skimming: the reference the skimming reader is
    /// tested against (it must give the same report).
    #[doc(hidden)]
    #[must_use]
    pub fn serde_reader(mut self) -> HealthBuilder {
        self.reader = Reader::Serde;
        self
    }

    /// Feeds a chunk of the rollouts file (any size; lines may straddle chunks).
    pub fn push_rollouts(&mut self, chunk: &[u8]) -> Result<(), HealthError> {
        self.end_inputs()?;
        let r = jsonl::push_held(self, rollouts_splitter, chunk, |b, span, line| {
            b.rollout_line(span.line, line)
        });
        r.map_err(|e| split_error(&self.rollouts.name, e))
    }

    /// Feeds one complete line of the rollouts file (1-based `line` number, no newline): for a
    /// caller that already splits the file into lines.
    pub fn rollout_line(&mut self, line: u64, bytes: &[u8]) -> Result<(), HealthError> {
        self.end_inputs()?;
        self.record_rollout(line, read_rollout_by(bytes, self.reader))
    }

    /// Ends the materialized inputs before the rollouts are recorded in batches (`health::job`):
    /// the first rollout may take its agent or its mode from them.
    pub fn start_rollouts(&mut self) -> Result<(), HealthError> {
        self.end_inputs()
    }

    /// The error of a rollouts line over the limit (its number in the file).
    pub(super) fn rollout_too_long(&self, t: LineTooLong) -> HealthError {
        split_error(&self.rollouts.name, SplitError::TooLong(t))
    }

    /// Records a rollout line read by [`read_rollout`] (perhaps on another thread); lines must
    /// come in file order.
    pub fn record_rollout(
        &mut self,
        line: u64,
        read: Result<Option<RolloutRead>, String>,
    ) -> Result<(), HealthError> {
        let read = read.map_err(|message| HealthError {
            file: self.rollouts.name.clone(),
            line,
            message,
            too_long: false,
        })?;
        let Some(read) = read else {
            return Ok(());
        };
        self.label_inputs();
        let (task, rollout) = read.key;
        if !self.seen.insert((read.stage, task, rollout)) {
            self.duplicates += 1;
        }
        // The agent its materialized input (fed first) is labelled by, as NeMo Gym v0.7.0 names
        // it; else the row's own `agent_ref`.
        let expected = self
            .expected
            .as_ref()
            .and_then(|e| e.get(&(task, rollout)))
            .copied();
        let agent = match (expected, read.agent.as_deref()) {
            (Some(id), _) if self.agents[id as usize].is_some() => id,
            (_, Some(name)) => self.agent_id(Some(name)),
            (Some(id), None) => id,
            (None, None) => self.agent_id(None),
        };
        if let Some(evidence) = read.trajectory {
            self.trajectory.merge(evidence);
        }
        let mut signals = read.signals;
        let by = mode::reasons(
            self.single_step,
            read.expected_action || self.pivot_inputs.contains(&(task, rollout)),
            self.agents[agent as usize].as_deref(),
        );
        if by != 0 {
            signals.judge_single_step();
            *self.single_step_by.entry(agent).or_insert(0) |= by;
        }
        self.recs.push(Rec {
            task,
            rollout,
            agent,
            line,
            reward: read.reward,
            signals,
        });
        Ok(())
    }

    /// Records a materialized-inputs line read by [`read_input`]; lines must come in file order,
    /// all before the first rollout. `name` names the inputs file in messages.
    pub fn record_input(
        &mut self,
        name: &str,
        line: u64,
        read: Result<Option<InputRead>, String>,
    ) -> Result<(), HealthError> {
        let read = read.map_err(|message| HealthError {
            file: name.to_string(),
            line,
            message,
            too_long: false,
        })?;
        self.expect_inputs();
        if let Some(InputRead {
            key,
            agent,
            run,
            expected_action,
        }) = read
        {
            if expected_action {
                self.pivot_inputs.insert(key);
            }
            self.expected
                .get_or_insert_with(HashMap::new)
                .insert(key, 0);
            self.unlabelled.push((key, run, agent));
        }
        Ok(())
    }

    /// The run's materialized inputs will be recorded (even if the file has no rows): what was
    /// expected is known, so missing rollouts are counted.
    pub fn expect_inputs(&mut self) {
        self.expected.get_or_insert_with(HashMap::new);
    }

    /// Every rollout read so far, in file order: `(task, rollout)`, its line, its agent
    /// (`agent_ref.name`, or its materialized input's) and its signals (for a flags column in a
    /// task table, badges in a rollout list, a filter by agent).
    pub fn rollout_signals(
        &self,
    ) -> impl Iterator<Item = ((i64, i64), u64, Option<&str>, &Signals)> {
        self.recs.iter().map(|r| {
            (
                (r.task, r.rollout),
                r.line,
                self.agents[r.agent as usize].as_deref(),
                &r.signals,
            )
        })
    }

    fn agent_id(&mut self, name: Option<&str>) -> u32 {
        let known = match name {
            Some(name) => self.agent_ids.get(name).copied(),
            None => self.unnamed_agent,
        };
        if let Some(id) = known {
            return id;
        }
        let id = self.agents.len() as u32;
        self.agents.push(name.map(str::to_string));
        match name {
            Some(name) => {
                self.agent_ids.insert(name.to_string(), id);
            }
            None => self.unnamed_agent = Some(id),
        }
        id
    }

    /// Feeds a chunk of the run's `*_materialized_inputs.jsonl`: each row is one expected rollout
    /// (`_ng_task_index`, `_ng_rollout_index`, `agent_ref.name`). Feed the inputs before the
    /// rollouts: a rollout row without `agent_ref` takes its input row's agent.
    pub fn push_inputs(&mut self, name: &str, chunk: &[u8]) -> Result<(), HealthError> {
        let reader = self.reader;
        let mut feed = self
            .inputs
            .take()
            .unwrap_or_else(|| Feed::new(name, self.max_line));
        let expected = self.expected.get_or_insert_with(HashMap::new);
        let (file, mut expected) = (feed.name.clone(), std::mem::take(expected));
        let mut agents = Vec::new();
        let r = feed.splitter.push(chunk, |span, line| {
            input_line(&file, span.line, line, &mut expected, &mut agents, reader)
        });
        for (key, run, agent, pivot) in agents {
            self.unlabelled.push((key, run, agent));
            if pivot {
                self.pivot_inputs.insert(key);
            }
        }
        self.expected = Some(expected);
        self.inputs = Some(feed);
        r.map_err(|e| split_error(&file, e))
    }

    /// Feeds a chunk of the run's `*_failures.jsonl` (rows by `_ng_failure_class`).
    pub fn push_failures(&mut self, name: &str, chunk: &[u8]) -> Result<(), HealthError> {
        let reader = self.reader;
        let mut feed = self
            .failures
            .take()
            .unwrap_or_else(|| Feed::new(name, self.max_line));
        let file = feed.name.clone();
        let classes = self.failure_classes.get_or_insert_with(BTreeMap::new);
        let keys = &mut self.failure_keys;
        let r = feed.splitter.push(chunk, |span, line| {
            failure_line(&file, span.line, line, classes, keys, reader)
        });
        self.failures = Some(feed);
        r.map_err(|e| split_error(&file, e))
    }

    /// Ends the rollouts file (its last line without a newline), so that
    /// [`HealthBuilder::rollout_signals`] sees every rollout before [`HealthBuilder::finish`].
    pub fn end_rollouts(&mut self) -> Result<(), HealthError> {
        jsonl::finish_held(self, rollouts_splitter, |b, span, line| {
            b.rollout_line(span.line, line)
        })
    }

    /// Ends the files fed in chunks (their last lines without a newline); [`Self::finish`]
    /// then summarizes.
    pub(super) fn end_files(&mut self) -> Result<(), HealthError> {
        self.end_inputs()?;
        self.end_rollouts()?;
        self.end_failures()
    }

    /// Ends the materialized inputs fed in chunks (their last line without a newline): before
    /// the first rollout is recorded, which may take its agent or its mode from them.
    fn end_inputs(&mut self) -> Result<(), HealthError> {
        let reader = self.reader;
        if let Some(mut feed) = self.inputs.take() {
            let mut expected = self.expected.take().unwrap_or_default();
            let mut agents = Vec::new();
            feed.splitter.finish(|span, line| {
                input_line(
                    &feed.name,
                    span.line,
                    line,
                    &mut expected,
                    &mut agents,
                    reader,
                )
            })?;
            for (key, run, agent, pivot) in agents {
                self.unlabelled.push((key, run, agent));
                if pivot {
                    self.pivot_inputs.insert(key);
                }
            }
            self.expected = Some(expected);
        }
        self.label_inputs();
        Ok(())
    }

    /// Gives every input row read its agent: its run key's label, as NeMo Gym v0.7.0 labels runs
    /// (an agent behind several environment servers is named by each server).
    fn label_inputs(&mut self) {
        if self.unlabelled.is_empty() {
            return;
        }
        let rows = std::mem::take(&mut self.unlabelled);
        let labels = crate::profile::labels::label_run_names(
            rows.iter()
                .map(|(_, run, agent)| (run.as_deref(), agent.as_deref())),
        );
        let mut expected = self.expected.take().unwrap_or_default();
        for (key, run, _) in rows {
            let label = run.as_deref().and_then(|r| labels.get(r));
            let id = self.agent_id(label.map(String::as_str));
            expected.insert(key, id);
        }
        self.expected = Some(expected);
    }

    fn end_failures(&mut self) -> Result<(), HealthError> {
        let reader = self.reader;
        if let Some(mut feed) = self.failures.take() {
            let classes = self.failure_classes.get_or_insert_with(BTreeMap::new);
            let keys = &mut self.failure_keys;
            feed.splitter.finish(|span, line| {
                failure_line(&feed.name, span.line, line, classes, keys, reader)
            })?;
        }
        Ok(())
    }

    /// The longest line it reads (`with_max_line_bytes`).
    pub fn max_line_bytes(&self) -> u64 {
        self.max_line
    }

    /// The rollouts file's name.
    pub fn rollouts_name(&self) -> &str {
        &self.rollouts.name
    }
}

/// Reads every line of a batch of rollouts (on any thread), for
/// [`HealthBuilder::record_rollout`] in order (`health::job`).
pub fn read_rollout_batch(batch: &LineBatch) -> Vec<(u64, Result<Option<RolloutRead>, String>)> {
    batch
        .lines()
        .map(|(span, line)| (span.line, read_rollout(line)))
        .collect()
}

/// A rollout line read on its own, to be recorded in order by [`HealthBuilder::record_rollout`].
#[derive(Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct RolloutRead {
    key: (i64, i64),
    /// `stage_index` when an integer: a multi-stage run's rows of one rollout are not duplicates.
    stage: Option<i64>,
    agent: Option<String>,
    reward: Option<f64>,
    signals: Signals,
    /// What the row's `ng_trajectory` adds to the run's evidence.
    trajectory: Option<TrajectoryEvidence>,
    /// The row carries `expected_action` (a pivot row: `mode`).
    expected_action: bool,
}

/// Reads one rollout line: `None` for a blank line; the error says what is wrong with the row
/// (the recorder names the file and line).
pub fn read_rollout(bytes: &[u8]) -> Result<Option<RolloutRead>, String> {
    read_rollout_by(bytes, Reader::Skim)
}

fn read_rollout_by(bytes: &[u8], reader: Reader) -> Result<Option<RolloutRead>, String> {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Ok(None);
    }
    match read_row(bytes, reader) {
        Ok(row) => rollout_read(row, reader).map(Some),
        Err(e) => match deduplicated(bytes) {
            Some(text) => rollout_read(parse(text.as_bytes())?, reader).map(Some),
            None => Err(e),
        },
    }
}

/// A row the typed read refused, as Python's `json` reads it: a repeated key keeps its first
/// place and takes its last value (as `gymscope profile` reads the row), re-written without
/// repeats. `None` when the row is no JSON object. Only on the error path: a row refused for
/// its shape is refused again, with the same message.
fn deduplicated(bytes: &[u8]) -> Option<String> {
    let value: serde_json::Value = serde_json::from_slice(bytes).ok()?;
    value.is_object().then(|| value.to_string())
}

/// A rollout line (UTF-8, not blank) read in the same walk as the profile's reading of it:
/// `None` when either reader is unsure, and each must then read the line alone.
pub fn read_rollout_beside(
    text: &str,
    profile: &mut MemberReader,
) -> Option<Result<RolloutRead, String>> {
    let row = super::fast::read_row_beside(text, Some(profile))?;
    Some(rollout_read(row, Reader::Skim))
}

/// What health keeps of a rollout row.
fn rollout_read(row: Row, reader: Reader) -> Result<RolloutRead, String> {
    let key = |field: &str, v: Option<&serde_json::Value>| match row::index(v) {
        Ok(Some(i)) => Ok(i),
        Ok(None) => Err(format!("field `{field}` is missing")),
        Err(()) => Err(format!("field `{field}` is not an integer")),
    };
    let task = key("_ng_task_index", row.task.as_ref())?;
    let rollout = key("_ng_rollout_index", row.rollout.as_ref())?;
    let trajectory = row.ng_trajectory.map(|raw| {
        let mut evidence = TrajectoryEvidence::default();
        evidence.add(raw.0);
        evidence
    });
    Ok(RolloutRead {
        key: (task, rollout),
        stage: row::index(row.stage.as_ref()).ok().flatten(),
        agent: row
            .agent_ref
            .as_ref()
            .and_then(|a| a.name.as_deref())
            .map(str::to_string),
        reward: row::reward(row.reward.as_ref()),
        signals: signals(row.response.as_ref(), reader),
        trajectory,
        expected_action: row.expected_action.is_some(),
    })
}

/// A materialized-inputs line read on its own: the expected rollout and its agent.
#[derive(Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct InputRead {
    key: (i64, i64),
    agent: Option<String>,
    /// The run key (v0.7.0 `rollout_run_key`): `_ng_environment_server`, else the agent.
    run: Option<String>,
    expected_action: bool,
}

/// An input row's key, run key and agent, until labelled.
type UnlabelledInput = ((i64, i64), Option<String>, Option<String>);

/// An input row's key, run key, agent and whether it is a pivot row.
type InputAgent = ((i64, i64), Option<String>, Option<String>, bool);

/// A row's run key: its `_ng_environment_server` when a string or a number, else its agent.
fn run_key(row: &KeyRow, agent: Option<&str>) -> Option<String> {
    let server = row
        .server
        .and_then(|raw| serde_json::from_str::<serde_json::Value>(raw.0).ok())
        .and_then(|v| match v {
            serde_json::Value::String(s) => Some(s),
            serde_json::Value::Number(n) => Some(n.to_string()),
            _ => None,
        });
    server.or_else(|| agent.map(str::to_string))
}

/// Reads one materialized-inputs line (`None` for a blank line), for
/// [`HealthBuilder::record_input`].
pub fn read_input(bytes: &[u8]) -> Result<Option<InputRead>, String> {
    let Some(row) = read_key_row(bytes, Reader::Skim)? else {
        return Ok(None);
    };
    let agent = agent_name(&row);
    Ok(Some(InputRead {
        key: key_of(&row),
        run: run_key(&row, agent.as_deref()),
        agent,
        expected_action: row.expected_action.is_some(),
    }))
}

/// A materialized-inputs line (UTF-8, not blank) read in the same walk as the profile's reading
/// of it: `None` when either reader is unsure, and each must then read the line alone.
pub fn read_input_beside(
    text: &str,
    profile: &mut MemberReader,
) -> Option<Result<InputRead, String>> {
    let row = super::fast::read_key_row_beside(text, Some(profile))?;
    Some(checked_keys(row).map(|row| {
        let agent = agent_name(&row);
        InputRead {
            key: key_of(&row),
            run: run_key(&row, agent.as_deref()),
            agent,
            expected_action: row.expected_action.is_some(),
        }
    }))
}

fn agent_name(row: &KeyRow) -> Option<String> {
    row.agent_ref.and_then(|raw| {
        serde_json::from_str::<serde_json::Value>(raw.0)
            .ok()?
            .get("name")?
            .as_str()
            .map(str::to_string)
    })
}

/// The signals of one rollout row (a rollout view reading a single line), judged as one action
/// when the row says it is single-step (`expected_action`, a single-step agent) or
/// `single_step` is set; the error says what is wrong with the row (the caller names the file
/// and line).
pub fn row_signals(line: &[u8], single_step: bool) -> Result<Signals, String> {
    let deduped;
    let row = match read_row(line, Reader::Skim) {
        Ok(row) => row,
        Err(e) => {
            deduped = deduplicated(line).ok_or(e)?;
            parse(deduped.as_bytes())?
        }
    };
    let mut s = signals(row.response.as_ref(), Reader::Skim);
    let agent = row.agent_ref.as_ref().and_then(|a| a.name.as_deref());
    if mode::reasons(single_step, row.expected_action.is_some(), agent) != 0 {
        s.judge_single_step();
    }
    Ok(s)
}

/// A rollout row: by skimming when the reader is sure (`fast`), else by serde.
fn read_row(bytes: &[u8], reader: Reader) -> Result<Row<'_>, String> {
    let text = simdutf8::basic::from_utf8(bytes)
        .ok()
        .filter(|_| reader.skims());
    match text.and_then(super::fast::read_row) {
        Some(row) => Ok(row),
        None => parse(bytes),
    }
}

/// A row as `T`: only a JSON object (serde would take a list for a struct too); the message of
/// a row that is not one names the column or field.
fn parse<'a, T: serde::Deserialize<'a>>(bytes: &'a [u8]) -> Result<T, String> {
    if bytes.trim_ascii_start().first() != Some(&b'{') {
        return Err(row::diagnose(bytes));
    }
    serde_json::from_slice(bytes).map_err(|_| row::diagnose(bytes))
}

/// Where the rollouts file's splitter is held (for [`jsonl::push_held`]).
fn rollouts_splitter(b: &mut HealthBuilder) -> &mut LineSplitter {
    &mut b.rollouts.splitter
}

fn split_error(file: &str, e: SplitError<HealthError>) -> HealthError {
    e.into_error(|t| HealthError {
        file: file.to_string(),
        line: t.line,
        message: format!(
            "is longer than {} bytes (the limit; raise it with --max-line-bytes)",
            t.limit
        ),
        too_long: true,
    })
}

fn key_row<'a>(
    file: &str,
    line: u64,
    bytes: &'a [u8],
    reader: Reader,
) -> Result<Option<KeyRow<'a>>, HealthError> {
    read_key_row(bytes, reader).map_err(|message| HealthError {
        file: file.to_string(),
        line,
        message,
        too_long: false,
    })
}

fn read_key_row(bytes: &[u8], reader: Reader) -> Result<Option<KeyRow<'_>>, String> {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Ok(None);
    }
    let text = simdutf8::basic::from_utf8(bytes)
        .ok()
        .filter(|_| reader.skims());
    let row = match text.and_then(super::fast::read_key_row) {
        Some(row) => row,
        None => parse(bytes)?,
    };
    checked_keys(row).map(Some)
}

/// The row when both its rollout key fields are integers.
fn checked_keys(row: KeyRow) -> Result<KeyRow, String> {
    for (field, v) in [
        ("_ng_task_index", &row.task),
        ("_ng_rollout_index", &row.rollout),
    ] {
        match row::index(v.as_ref()) {
            Ok(Some(_)) => {}
            Ok(None) => return Err(format!("field `{field}` is missing")),
            Err(()) => return Err(format!("field `{field}` is not an integer")),
        }
    }
    Ok(row)
}

fn key_of(row: &KeyRow) -> (i64, i64) {
    let i =
        |v: &Option<serde_json::Value>| v.as_ref().and_then(serde_json::Value::as_i64).unwrap_or(0);
    (i(&row.task), i(&row.rollout))
}

fn input_line(
    file: &str,
    line: u64,
    bytes: &[u8],
    expected: &mut HashMap<(i64, i64), u32>,
    agents: &mut Vec<InputAgent>,
    reader: Reader,
) -> Result<(), HealthError> {
    let Some(row) = key_row(file, line, bytes, reader)? else {
        return Ok(());
    };
    let agent = agent_name(&row);
    let key = key_of(&row);
    expected.insert(key, 0);
    agents.push((
        key,
        run_key(&row, agent.as_deref()),
        agent,
        row.expected_action.is_some(),
    ));
    Ok(())
}

/// A failures-sidecar row: its rollout key `(task, rollout)` and its failure class.
pub type FailureRow = ((i64, i64), String);

/// One row of a `*_failures.jsonl` sidecar: its rollout key and `_ng_failure_class` (`unknown`
/// when absent or null); `None` for a blank line. The watch reads sidecars with it.
pub fn read_failure(bytes: &[u8]) -> Result<Option<FailureRow>, String> {
    let Some(row) = read_key_row(bytes, Reader::Skim)? else {
        return Ok(None);
    };
    Ok(Some((key_of(&row), failure_class(&row))))
}

fn failure_class(row: &KeyRow) -> String {
    match &row.class {
        Some(serde_json::Value::String(s)) => s.clone(),
        Some(serde_json::Value::Null) | None => "unknown".to_string(),
        Some(other) => other.to_string(),
    }
}

fn failure_line(
    file: &str,
    line: u64,
    bytes: &[u8],
    classes: &mut BTreeMap<String, u64>,
    keys: &mut HashSet<(i64, i64)>,
    reader: Reader,
) -> Result<(), HealthError> {
    let Some(row) = key_row(file, line, bytes, reader)? else {
        return Ok(());
    };
    *classes.entry(failure_class(&row)).or_insert(0) += 1;
    keys.insert(key_of(&row));
    Ok(())
}
