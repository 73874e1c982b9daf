//! What one shard's three files have shown so far, kept as running sums: a refresh adds the new
//! rows and never looks at the old ones again.

use super::tail::Tail;
use super::FileKind;
use crate::fast_map::FastMap;
use crate::health::{self, Flag, Signals};
use crate::profile::parse_line;
use crate::read::jsonl::LineSpan;
use crate::record::{AgentField, IndexField, KeyTable, Reward, Row, RowKind};
use crate::reward_group::{Outcomes, DEFAULT_THRESHOLD};
use std::collections::{BTreeMap, HashSet, VecDeque};

/// A rollout key, `(_ng_task_index, _ng_rollout_index)`.
pub(super) type Key = (i64, i64);

/// A sum of floats with Neumaier's compensation: a running mean over millions of rewards stays
/// within an ulp or two of numpy's pairwise sum of the same values.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Sum {
    sum: f64,
    compensation: f64,
    pub(super) n: u64,
}

impl Sum {
    pub(super) fn add(&mut self, x: f64) {
        let t = self.sum + x;
        self.compensation += if self.sum.abs() >= x.abs() {
            (self.sum - t) + x
        } else {
            (x - t) + self.sum
        };
        self.sum = t;
        self.n += 1;
    }
    pub(super) fn merge(&mut self, other: &Sum) {
        if other.n > 0 {
            self.add(other.sum);
            self.compensation += other.compensation;
            self.n += other.n - 1;
        }
    }
    pub(super) fn mean(&self) -> Option<f64> {
        (self.n > 0).then(|| (self.sum + self.compensation) / self.n as f64)
    }
}

/// One agent's rows in one shard.
#[derive(Clone, Debug, Default)]
pub(super) struct AgentSums {
    pub(super) rollouts: u64,
    pub(super) reward: Sum,
    pub(super) output_tokens: Sum,
    /// Reward by repeat (`_ng_rollout_index`): the interval is taken across repeat means, as
    /// `*_agent_metrics.json`'s `ci_*_95_across_repeats/mean/reward` (NeMo Gym v0.7.0).
    pub(super) by_repeat: BTreeMap<i64, Sum>,
    /// Passing and failing rollouts by task, for pass@1.
    pub(super) by_task: FastMap<i64, Outcomes>,
}

/// The health counts of [`crate::health`]'s rates (docs/health.md), summed over rows.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct HealthSums {
    pub(super) rollouts: u64,
    pub(super) flagged: [u64; Flag::ALL.len()],
    pub(super) tool_calls: u64,
    pub(super) tool_errors: u64,
    pub(super) malformed: u64,
    pub(super) usage_missing: u64,
}

impl HealthSums {
    fn add(&mut self, s: &Signals) {
        self.rollouts += 1;
        for (i, f) in Flag::ALL.into_iter().enumerate() {
            self.flagged[i] += u64::from(s.has(f));
        }
        self.tool_calls += u64::from(s.tool_calls);
        self.tool_errors += u64::from(s.tool_error_calls);
        self.malformed += u64::from(s.malformed_arguments);
        self.usage_missing += u64::from(s.tokens.is_none());
    }
    pub(super) fn merge(&mut self, o: &HealthSums) {
        self.rollouts += o.rollouts;
        for (a, b) in self.flagged.iter_mut().zip(o.flagged) {
            *a += b;
        }
        self.tool_calls += o.tool_calls;
        self.tool_errors += o.tool_errors;
        self.malformed += o.malformed;
        self.usage_missing += o.usage_missing;
    }
}

/// The run's agents, named once for every shard.
#[derive(Default)]
pub(super) struct Agents {
    pub(super) names: Vec<String>,
    ids: FastMap<String, u32>,
}

impl Agents {
    fn id(&mut self, field: &AgentField) -> u32 {
        let name = match field {
            AgentField::Name(s) => s.to_string(),
            AgentField::Number(n) => {
                let mut buf = Vec::new();
                let _ = n.write_json(&mut buf);
                String::from_utf8_lossy(&buf).into_owned()
            }
            _ => "(no agent)".to_string(),
        };
        if let Some(&id) = self.ids.get(&name) {
            return id;
        }
        let id = self.names.len() as u32;
        self.ids.insert(name.clone(), id);
        self.names.push(name);
        id
    }
}

/// A row that could not be read: where, and why.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct BadLine {
    pub file: String,
    pub line: u64,
    pub column: usize,
    pub message: String,
}

/// One shard: its files and what their rows added up to.
#[derive(Default)]
pub(super) struct Shard {
    pub(super) paths: [String; 3],
    pub(super) tails: [Tail; 3],
    /// Materialized rows: key → agent.
    pub(super) expected: FastMap<Key, u32>,
    /// Keys with a row in the rollouts file.
    pub(super) done: HashSet<Key>,
    /// Keys with a row in the failures sidecar, and the rows by class.
    pub(super) failed: HashSet<Key>,
    /// Keys with a row in either file, and those of them that are materialized: kept as counts
    /// so that a refresh never walks every key.
    pub(super) finished: u64,
    pub(super) finished_expected: u64,
    pub(super) failure_rows: u64,
    pub(super) classes: BTreeMap<String, u64>,
    pub(super) agents: Vec<AgentSums>,
    pub(super) health: HealthSums,
    /// Rows whose key had a row already (counted once).
    pub(super) repeated_keys: u64,
    /// When the newest row was seen (the caller's clock, seconds).
    pub(super) last_row_at: Option<f64>,
    /// When the materialized inputs were written (their time as fed): the run's start, for the
    /// average rate before the refreshes span a window (and for `--once`).
    pub(super) started_at: Option<f64>,
    /// (time, rows and failures so far) at each refresh of the last minutes: the rate.
    pub(super) samples: VecDeque<(f64, u64)>,
    /// The writer is done (declared by the caller, e.g. the aggregate file appeared).
    pub(super) declared_done: bool,
    /// The failures sidecar exists (v0.7.0 makes it, empty, at the start of a run): the
    /// failures rate is shown, as `gymscope health` shows it beside a sidecar.
    pub(super) has_sidecar: bool,
}

impl Shard {
    pub(super) fn new(paths: [String; 3], max_line: u64) -> Shard {
        Shard {
            paths,
            tails: [
                Tail::new(max_line),
                Tail::new(max_line),
                Tail::new(max_line),
            ],
            ..Shard::default()
        }
    }

    /// Forgets what `kind`'s file added (it is read again); the inputs decide every row's agent,
    /// so their restart resets the whole shard.
    pub(super) fn reset(&mut self, kind: FileKind, max_line: u64) {
        let reset_rollouts = |s: &mut Shard| {
            s.done.clear();
            s.agents.clear();
            s.health = HealthSums::default();
            s.repeated_keys = 0;
        };
        match kind {
            // Its tail has reset itself (and kept the file's new identity).
            FileKind::Rollouts => reset_rollouts(self),
            FileKind::Failures => {
                self.failed.clear();
                self.failure_rows = 0;
                self.classes.clear();
            }
            FileKind::Inputs => {
                self.expected.clear();
                self.started_at = None;
                reset_rollouts(self);
                self.tails[FileKind::Rollouts as usize] = Tail::new(max_line);
            }
        }
        self.recount();
    }

    fn recount(&mut self) {
        let finished: HashSet<&Key> = self.done.union(&self.failed).collect();
        self.finished = finished.len() as u64;
        self.finished_expected = finished
            .iter()
            .filter(|k| self.expected.contains_key(**k))
            .count() as u64;
    }

    /// A key got its first row in either file.
    fn finish_key(&mut self, key: Key) {
        self.finished += 1;
        self.finished_expected += u64::from(self.expected.contains_key(&key));
    }

    pub(super) fn complete(&self) -> bool {
        let rows_in = !self.tails.iter().any(Tail::is_mid_line);
        self.declared_done
            || (rows_in
                && !self.expected.is_empty()
                && self.finished_expected == self.expected.len() as u64)
    }

    pub(super) fn line(
        &mut self,
        kind: FileKind,
        agents: &mut Agents,
        keys: &mut KeyTable,
        span: LineSpan,
        bytes: &[u8],
        at: f64,
    ) -> Result<(), BadLine> {
        self.read_line(kind, agents, keys, span, bytes, at)
            .map_err(|(column, message)| BadLine {
                file: self.paths[kind as usize].clone(),
                line: span.line,
                column,
                message,
            })
    }

    fn read_line(
        &mut self,
        kind: FileKind,
        agents: &mut Agents,
        keys: &mut KeyTable,
        span: LineSpan,
        bytes: &[u8],
        at: f64,
    ) -> Result<(), (usize, String)> {
        let bad = |column: usize, message: String| (column, message);
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return Ok(());
        }
        match kind {
            FileKind::Inputs => {
                let row = parse_line(span, bytes, RowKind::Input, keys)
                    .map_err(|e| bad(e.column, e.message))?;
                let key = key_of(&row).map_err(|m| bad(1, m))?;
                let agent = agents.id(&row.agent);
                self.started_at = Some(self.started_at.map_or(at, |t| t.min(at)));
                if self.expected.insert(key, agent).is_none()
                    && (self.done.contains(&key) || self.failed.contains(&key))
                {
                    self.finished_expected += 1;
                }
            }
            FileKind::Failures => {
                let Some((key, class)) = health::read_failure(bytes).map_err(|m| bad(1, m))? else {
                    return Ok(());
                };
                self.failure_rows += 1;
                if self.failed.insert(key) && !self.done.contains(&key) {
                    self.finish_key(key);
                }
                *self.classes.entry(class).or_insert(0) += 1;
                self.seen_row(at);
            }
            FileKind::Rollouts => {
                let row = parse_line(span, bytes, RowKind::Rollout, keys)
                    .map_err(|e| bad(e.column, e.message))?;
                let key = key_of(&row).map_err(|m| bad(1, m))?;
                self.seen_row(at);
                if !self.done.insert(key) {
                    self.repeated_keys += 1;
                    return Ok(());
                }
                if !self.failed.contains(&key) {
                    self.finish_key(key);
                }
                let agent = match self.expected.get(&key) {
                    Some(&a) => a,
                    None => agents.id(&row.agent),
                } as usize;
                if self.agents.len() <= agent {
                    self.agents.resize(agent + 1, AgentSums::default());
                }
                let signals = health::row_signals(bytes, false).map_err(|m| bad(1, m))?;
                self.health.add(&signals);
                let sums = &mut self.agents[agent];
                sums.rollouts += 1;
                if row.masked {
                    // Not a measurement (v0.7.0 `select_measured`): done, but out of the figures.
                    return Ok(());
                }
                let reward = match &row.reward {
                    Some(Reward::Num(n)) => Some(n.as_f64()).filter(|r| !r.is_nan()),
                    _ => None,
                };
                if let Some(r) = reward {
                    sums.reward.add(r);
                    sums.by_repeat.entry(key.1).or_default().add(r);
                }
                sums.by_task
                    .entry(key.0)
                    .or_default()
                    .add(reward, DEFAULT_THRESHOLD);
                if let Some(t) = output_tokens(&row, keys) {
                    sums.output_tokens.add(t);
                }
            }
        }
        Ok(())
    }

    fn seen_row(&mut self, at: f64) {
        self.last_row_at = Some(self.last_row_at.map_or(at, |t| t.max(at)));
    }

    /// Records the count at `now`, keeping `window` seconds of samples (and one before them).
    pub(super) fn sample(&mut self, now: f64, window: f64) {
        let count = self.done.len() as u64 + self.failure_rows;
        self.samples.push_back((now, count));
        while self.samples.len() > 2 && self.samples[1].0 <= now - window {
            self.samples.pop_front();
        }
    }

    /// Rows a minute over the sampled window once it spans `min_span` seconds; before that (and
    /// for `--once`), the average since the run started (its materialized inputs) until `now`,
    /// so a shard that stopped long ago shows a falling rate, not its old pace.
    pub(super) fn rows_per_minute(&self, now: f64, min_span: f64) -> Option<f64> {
        let (&(t0, c0), &(t1, c1)) = (self.samples.front()?, self.samples.back()?);
        if t1 - t0 >= min_span {
            return Some((c1.saturating_sub(c0)) as f64 * 60.0 / (t1 - t0));
        }
        let span = now - self.started_at?;
        (span >= min_span).then(|| c1 as f64 * 60.0 / span)
    }
}

fn key_of(row: &Row) -> Result<Key, String> {
    let index = |name: &str, f: IndexField| match f {
        IndexField::Int(v) | IndexField::Typed(v, _) => Ok(v),
        IndexField::Missing => Err(format!("field `{name}` is missing")),
        IndexField::Invalid(what) => {
            Err(format!("field `{name}` must be an integer, found {what}"))
        }
    };
    Ok((
        index(crate::gym::keys::TASK_INDEX, row.task)?,
        index(crate::gym::keys::ROLLOUT_INDEX, row.rollout)?,
    ))
}

/// `output_tokens` as the profile reads it: `response.usage`'s value wins over a top-level one.
fn output_tokens(row: &Row, keys: &KeyTable) -> Option<f64> {
    let find = |fields: &[(crate::record::KeyId, Option<crate::json::Num>)]| {
        fields
            .iter()
            .find(|(k, _)| keys.name(*k) == "output_tokens")
            .map(|(_, v)| v.map(crate::json::Num::as_f64))
    };
    find(&row.usage).or_else(|| find(&row.top)).flatten()
}
