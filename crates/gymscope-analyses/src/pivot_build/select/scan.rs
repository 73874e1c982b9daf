//! Reading the two inputs of a selection: the profile into a [`ProfileIndex`], then the pivot
//! file through a [`Selector`], which decides on every pivot and plans the output.

use super::{error, Class, Decision, Decisions, Plan, SelectError, SelectOptions};
use crate::read::jsonl::{self, LineSpan, LineSplitter, LineTooLong};
use crate::reward_group::{reward_value, Outcomes, RewardGroup};
use serde_json::{json, Value};
use std::collections::HashMap;

struct Entry {
    task_index: Option<u64>,
    rewards: Vec<f64>,
    std: Option<f64>,
}

/// The profile's rows, indexed by `pivot_id` and by `_ng_task_index`.
pub struct ProfileIndex {
    file: String,
    splitter: LineSplitter,
    entries: Vec<Entry>,
    by_id: HashMap<String, usize>,
    by_task: HashMap<u64, usize>,
    error: Option<SelectError>,
}

impl ProfileIndex {
    pub fn new(file: impl Into<String>) -> ProfileIndex {
        ProfileIndex {
            file: file.into(),
            splitter: LineSplitter::new(),
            entries: Vec::new(),
            by_id: HashMap::new(),
            by_task: HashMap::new(),
            error: None,
        }
    }

    /// Reads a chunk; `false` once a line was refused: the caller stops reading (a file that
    /// never ends, `/dev/urandom`, would otherwise be read forever).
    pub fn push(&mut self, chunk: &[u8]) -> bool {
        let pushed = jsonl::push_held_lines(self, |s| &mut s.splitter, chunk, Self::line);
        if self.error.is_none() {
            self.error = too_long(&self.file, pushed);
        }
        self.error.is_none()
    }

    pub fn finish(mut self) -> Result<ProfileIndex, SelectError> {
        jsonl::finish_held_lines(&mut self, |s| &mut s.splitter, Self::line);
        match self.error.take() {
            Some(e) => Err(e),
            None => Ok(self),
        }
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    fn line(&mut self, span: LineSpan, bytes: &[u8]) {
        if self.error.is_some() || bytes.iter().all(u8::is_ascii_whitespace) {
            return;
        }
        let row: Value = match serde_json::from_slice(bytes) {
            Ok(Value::Object(m)) => Value::Object(m),
            Ok(_) => return self.fail(span.line, "a profile row must be a JSON object".into()),
            Err(e) => return self.fail(span.line, format!("invalid JSON: {e}")),
        };
        let Some(infos) = row.get("rollout_infos").and_then(Value::as_array) else {
            return self.fail(
                span.line,
                "field `rollout_infos` is missing (is this a `*_reward_profiling.jsonl`?)".into(),
            );
        };
        let rewards = infos
            .iter()
            .filter_map(|i| i.get("reward").and_then(reward_value))
            .collect();
        let entry = Entry {
            task_index: row.get("_ng_task_index").and_then(Value::as_u64),
            rewards,
            std: row.get("std/reward").and_then(Value::as_f64),
        };
        let i = self.entries.len();
        if let Some(id) = row
            .pointer("/sample/pivot_info/pivot_id")
            .and_then(Value::as_str)
        {
            self.by_id.entry(id.to_string()).or_insert(i);
        }
        if let Some(t) = entry.task_index {
            self.by_task.entry(t).or_insert(i);
        }
        self.entries.push(entry);
    }

    fn fail(&mut self, line: u64, what: String) {
        self.error = Some(error(format!("'{}' line {line}: {what}", self.file)));
    }
}

/// A line over the splitter's limit stops a scan with an error naming it.
fn too_long(file: &str, pushed: Result<(), LineTooLong>) -> Option<SelectError> {
    pushed.err().map(|t| error(t.in_file(file)))
}

/// What a pivot row says about itself, beside its profile: the selection's groups and counts.
struct About {
    trajectory: Option<String>,
    depth: Option<u64>,
    tool: String,
    prefix: Option<[u8; 32]>,
}

/// Reads the pivot file and decides.
pub struct Selector {
    file: String,
    index: ProfileIndex,
    options: SelectOptions,
    splitter: LineSplitter,
    position: u64,
    decisions: Vec<Decision>,
    error: Option<SelectError>,
}

impl Selector {
    pub fn new(file: impl Into<String>, index: ProfileIndex, options: SelectOptions) -> Selector {
        Selector {
            file: file.into(),
            index,
            options,
            splitter: LineSplitter::new(),
            position: 0,
            decisions: Vec::new(),
            error: None,
        }
    }

    /// Reads a chunk; `false` once a line was refused: the caller stops reading (a file that
    /// never ends, `/dev/urandom`, would otherwise be read forever).
    pub fn push(&mut self, chunk: &[u8]) -> bool {
        let pushed = jsonl::push_held_lines(self, |s| &mut s.splitter, chunk, Self::line);
        if self.error.is_none() {
            self.error = too_long(&self.file, pushed);
        }
        self.error.is_none()
    }

    fn line(&mut self, span: LineSpan, bytes: &[u8]) {
        if self.error.is_some() || bytes.iter().all(u8::is_ascii_whitespace) {
            return;
        }
        let position = self.position;
        self.position += 1;
        let row: Value = match serde_json::from_slice(bytes) {
            Ok(v) => v,
            Err(e) => {
                self.error = Some(error(format!(
                    "'{}' line {}: invalid JSON: {e}",
                    self.file, span.line
                )));
                return;
            }
        };
        let id = row.pointer("/pivot_info/pivot_id").and_then(Value::as_str);
        let stamped = row.get("_ng_task_index").and_then(Value::as_u64);
        let by_id = id.and_then(|id| self.index.by_id.get(id)).copied();
        if let (Some(i), Some(t)) = (by_id, stamped) {
            if self.index.entries[i].task_index.is_some_and(|pt| pt != t) {
                self.error = Some(error(format!(
                    "'{}' line {}: pivot_id {} is profiled under _ng_task_index {}, but the row says {t}",
                    self.file,
                    span.line,
                    id.unwrap_or_default(),
                    self.index.entries[i].task_index.unwrap_or_default()
                )));
                return;
            }
        }
        // Without ids in the profile, the collection's task index is the position in the file.
        let entry = match by_id {
            Some(i) => Some(i),
            None if self.index.by_id.is_empty() || id.is_none() => self
                .index
                .by_task
                .get(&stamped.unwrap_or(position))
                .copied(),
            None => None,
        };
        let about = About {
            trajectory: row.get("trajectory_id").map(|t| match t {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            }),
            depth: row.pointer("/meta_info/depth").and_then(Value::as_u64),
            tool: match row.get("expected_action") {
                Some(a) if a.get("type").and_then(Value::as_str) == Some("message") => {
                    "message".into()
                }
                Some(a) => a
                    .get("name")
                    .and_then(Value::as_str)
                    .unwrap_or("(no name)")
                    .to_string(),
                None => "(no expected action)".into(),
            },
            prefix: self.options.dedupe_prefix.then(|| {
                use sha2::Digest;
                let mut h = sha2::Sha256::new();
                let input = row.pointer("/responses_create_params/input");
                h.update(serde_json::to_vec(&input).unwrap_or_default());
                h.update([0]);
                h.update(serde_json::to_vec(&row.get("expected_action")).unwrap_or_default());
                h.finalize().into()
            }),
        };
        let (class, pass_rate, variance, profile_info) = self.decide(entry);
        self.decisions.push(Decision {
            span,
            class,
            pass_rate,
            variance,
            profile_info,
            trajectory: about.trajectory,
            depth: about.depth,
            tool: about.tool,
            prefix: about.prefix,
        });
    }

    /// The class, pass rate, variance and `profile_info` of a pivot from its profile entry.
    fn decide(&self, entry: Option<usize>) -> (Class, f64, f64, Option<Value>) {
        let Some(e) = entry.map(|i| &self.index.entries[i]) else {
            return (Class::Unprofiled, f64::NAN, f64::NAN, None);
        };
        let n = e.rewards.len();
        let mean = if n > 0 {
            e.rewards.iter().sum::<f64>() / n as f64
        } else {
            f64::NAN
        };
        let std = e.std.unwrap_or_else(|| {
            crate::stats::Scratch::default()
                .column_stats(&e.rewards)
                .std
                .unwrap_or(f64::NAN)
        });
        let mut outcomes = Outcomes::default();
        for r in &e.rewards {
            outcomes.add(Some(*r), self.options.success_threshold);
        }
        let class = if n < self.options.min_rollouts as usize || n == 0 {
            Class::InsufficientRollouts
        } else {
            match outcomes.group() {
                RewardGroup::AllSuccess => Class::AllSuccess,
                RewardGroup::AllFailure => Class::AllFailure,
                RewardGroup::Mixed => Class::Mixed,
                RewardGroup::NoReward => Class::InsufficientRollouts,
            }
        };
        let info = json!({"num_rollouts": n, "rewards": e.rewards, "reward_mean": finite(mean), "reward_std": finite(std),
            "reward_var": finite(std * std), "group": class.as_str()});
        (class, mean, std * std, Some(info))
    }

    /// Every pivot's decision, read once: any number of [`Decisions::plan`]s follow without
    /// reading a file again (the page's λ_diff slider re-plans on every move).
    pub fn decisions(mut self) -> Result<Decisions, SelectError> {
        jsonl::finish_held_lines(&mut self, |s| &mut s.splitter, Self::line);
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        Ok(Decisions::new(self.decisions, self.options))
    }

    /// [`Selector::decisions`] planned with the selector's own options (`select-pivot`).
    pub fn finish(self) -> Result<Plan, SelectError> {
        let options = self.options.clone();
        Ok(self.decisions()?.into_plan(&options))
    }
}

fn finite(x: f64) -> Value {
    if x.is_finite() {
        json!(x)
    } else {
        Value::Null
    }
}
