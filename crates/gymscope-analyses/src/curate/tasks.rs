//! Reading a reward profile for `select-tasks`: one small entry per task row (its key, agent,
//! rewards, and what the options ask of it), the row itself left in the file to be copied later
//! by its byte span.

use super::{CurateError, DropReason, TaskOptions};
use crate::query::{Field, Query};
use crate::read::jsonl::{self, LineSpan, LineSplitter};
use crate::reward_group::{reward_value, Outcomes, RewardGroup};
use serde_json::{json, Value};

/// One task row of the profile, as selection sees it.
#[derive(Clone, Debug)]
pub struct TaskEntry {
    pub span: LineSpan,
    pub task: i64,
    /// The row's `agent_ref.name` (a fan-out run's), else `sample.agent_ref.name`.
    pub agent: Option<String>,
    /// The numeric rewards of its `rollout_infos` (booleans as 0/1), in rollout order.
    pub rewards: Vec<f64>,
    pub std: Option<f64>,
    pub outcomes: Outcomes,
    /// The value of the `--stratify` field, and of the `--group-by` field (as JSON text).
    pub stratum: Option<String>,
    pub group: Option<String>,
    /// The first rule that dropped it.
    pub dropped: Option<DropReason>,
}

impl TaskEntry {
    pub fn mean(&self) -> Option<f64> {
        (!self.rewards.is_empty())
            .then(|| self.rewards.iter().sum::<f64>() / self.rewards.len() as f64)
    }

    /// The share of its numeric rewards at or above the threshold.
    pub fn pass_rate(&self) -> Option<f64> {
        self.outcomes.pass_rate()
    }

    pub fn group_name(&self) -> RewardGroup {
        self.outcomes.group()
    }

    /// `profile_info` of `--annotate`: `select-pivot`'s keys and the pass rate.
    pub fn profile_info(&self) -> Value {
        let std = self.std.or_else(|| {
            crate::stats::Scratch::default()
                .column_stats(&self.rewards)
                .std
        });
        let finite = |x: Option<f64>| {
            x.filter(|x| x.is_finite())
                .map_or(Value::Null, |x| json!(x))
        };
        json!({
            "num_rollouts": self.rewards.len(),
            "rewards": self.rewards,
            "reward_mean": finite(self.mean()),
            "reward_std": finite(std),
            "reward_var": finite(std.map(|s| s * s)),
            "group": self.group_name().as_str(),
            "pass_rate": finite(self.pass_rate()),
        })
    }
}

/// Reads the profile in chunks into [`TaskEntry`]s, deciding the per-task rules as it goes.
pub struct TaskReader<'o> {
    file: String,
    options: &'o TaskOptions,
    splitter: LineSplitter,
    pub(super) entries: Vec<TaskEntry>,
    error: Option<CurateError>,
    /// The line of each (task, row agent) read: a task listed twice is refused, as it could
    /// land in training and validation both.
    seen: std::collections::HashMap<(i64, Option<String>), u64>,
}

impl<'o> TaskReader<'o> {
    pub fn new(file: impl Into<String>, options: &'o TaskOptions) -> Self {
        TaskReader {
            file: file.into(),
            options,
            splitter: LineSplitter::new(),
            entries: Vec::new(),
            error: None,
            seen: std::collections::HashMap::new(),
        }
    }

    /// Reads a chunk; `false` once a line was refused (the caller stops reading).
    pub fn push(&mut self, chunk: &[u8]) -> bool {
        let pushed = jsonl::push_held_lines(self, |s| &mut s.splitter, chunk, Self::line);
        if let (None, Err(t)) = (&self.error, pushed) {
            self.error = Some(CurateError(t.in_file(&self.file)));
        }
        self.error.is_none()
    }

    pub fn finish(mut self) -> Result<Vec<TaskEntry>, CurateError> {
        jsonl::finish_held_lines(&mut self, |s| &mut s.splitter, Self::line);
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        // A `--group-by` field no task has makes every task one group: with a validation
        // share asked for, none could go to validation (it was an empty file, unsaid).
        if let (Some(field), Some(_)) = (
            &self.options.group_by,
            self.options.val_fraction.filter(|f| *f > 0.0),
        ) {
            if !self.entries.is_empty()
                && self
                    .entries
                    .iter()
                    .all(|e| e.group.as_deref() == Some("null"))
            {
                return Err(CurateError(format!(
                    "--group-by '{field}': no task of '{}' has this field (in the row or its `sample`), so the tasks are one group and none could go to validation",
                    self.file
                )));
            }
        }
        Ok(self.entries)
    }

    fn fail(&mut self, line: u64, what: String) {
        self.error = Some(CurateError(format!("'{}' line {line}: {what}", self.file)));
    }

    fn line(&mut self, span: LineSpan, bytes: &[u8]) {
        if self.error.is_some() || bytes.iter().all(u8::is_ascii_whitespace) {
            return;
        }
        let row = match serde_json::from_slice::<Value>(bytes) {
            Ok(Value::Object(m)) => m,
            Ok(_) => return self.fail(span.line, "a profile row must be a JSON object".into()),
            Err(e) => return self.fail(span.line, format!("invalid JSON: {e}")),
        };
        let row = Value::Object(row);
        if let Some(what) = not_a_profile(&row) {
            return self.fail(span.line, what);
        }
        let Some(task) = row
            .get(crate::gym::keys::TASK_INDEX)
            .and_then(Value::as_i64)
        else {
            return self.fail(
                span.line,
                "field `_ng_task_index` must be an integer".into(),
            );
        };
        // A fan-out run's profile has a row per task and agent, with that row's `agent_ref`
        // (NeMo Gym v0.7.0); otherwise one row per task.
        let row_agent = row
            .pointer("/agent_ref/name")
            .and_then(Value::as_str)
            .map(str::to_string);
        if let Some(first) = self.seen.insert((task, row_agent.clone()), span.line) {
            let whose = row_agent
                .as_ref()
                .map_or(String::new(), |a| format!(" of agent '{a}'"));
            return self.fail(
                span.line,
                format!(
                    "task {task}{whose} is listed twice (first at line {first}): a profile has one row per task, so its tasks could be split between training and validation"
                ),
            );
        }
        if !row.get("sample").is_some_and(Value::is_object) {
            return self.fail(
                span.line,
                "field `sample` must be an object (the task as given to `gym eval run`)".into(),
            );
        }
        let infos = row["rollout_infos"]
            .as_array()
            .map_or(&[][..], Vec::as_slice);
        let rewards: Vec<f64> = infos
            .iter()
            .filter_map(|i| i.get("reward").and_then(reward_value))
            .filter(|r| r.is_finite())
            .collect();
        let mut outcomes = Outcomes::default();
        for r in &rewards {
            outcomes.add(Some(*r), self.options.pass_threshold);
        }
        let mut entry = TaskEntry {
            span,
            task,
            agent: row_agent.or_else(|| {
                row.pointer("/sample/agent_ref/name")
                    .and_then(Value::as_str)
                    .map(str::to_string)
            }),
            std: row.get("std/reward").and_then(Value::as_f64),
            rewards,
            outcomes,
            stratum: self
                .options
                .stratify
                .as_deref()
                .map(|f| field_text(&row, f)),
            group: self
                .options
                .group_by
                .as_deref()
                .map(|f| field_text(&row, f)),
            dropped: None,
        };
        entry.dropped = self.options.first_drop(&entry, &row);
        self.entries.push(entry);
    }
}

/// Why a row that lacks `rollout_infos` is not a profile row, naming what it looks like.
fn not_a_profile(row: &Value) -> Option<String> {
    match row.get("rollout_infos") {
        Some(Value::Array(_)) => return None,
        Some(other) => {
            return Some(format!(
                "field `rollout_infos` must be a list of rollouts, found {}",
                crate::json::describe(other)
            ))
        }
        None => {}
    }
    let has = |k: &str| row.get(k).is_some();
    let looks = if has("expected_action") || has("pivot_info") {
        "this looks like a pivot dataset row (`expected_action`)"
    } else if has("response") {
        "this looks like a rollout row (`response`): profile the run first, `gymscope profile --inputs M --rollouts R`"
    } else if has(crate::gym::keys::ROLLOUT_INDEX) {
        "this looks like a materialized input row (`_ng_rollout_index`)"
    } else if has("responses_create_params") {
        "this looks like an input dataset row (`responses_create_params`)"
    } else {
        "this is not a profile row"
    };
    Some(format!(
        "field `rollout_infos` is missing: {looks}; select-tasks reads a `*_reward_profiling.jsonl`"
    ))
}

/// A stratum or group key: `agent` is the task's agent; any other name is a path into the
/// profile row (`sample.x.y`, or `x.y` read as `sample.x.y` when the row has no `x`). The value
/// as JSON text; `null` when missing.
pub(super) fn field_text(row: &Value, field: &str) -> String {
    let path: Vec<&str> = if field == "agent" {
        vec!["sample", "agent_ref", "name"]
    } else {
        field.split('.').collect()
    };
    let walk = |path: &[&str]| {
        path.iter()
            .try_fold(row, |v, k| v.as_object().and_then(|m| m.get(*k)))
    };
    let found = walk(&path).or_else(|| {
        let mut in_sample = vec!["sample"];
        in_sample.extend(&path);
        walk(&in_sample)
    });
    match found {
        Some(Value::String(s)) => s.clone(),
        Some(v) => v.to_string(),
        None => "null".into(),
    }
}

/// A task-level field's value for `--where`.
pub(super) fn task_field(entry: &TaskEntry, row: &Value, field: &Field) -> Option<Value> {
    let num = |x: Option<f64>| serde_json::Number::from_f64(x?).map(Value::Number);
    match field {
        Field::Task => Some(Value::from(entry.task)),
        Field::Agent => entry.agent.clone().map(Value::String),
        Field::TaskMeanReward => num(entry.mean()),
        Field::TaskPassRate => num(entry.pass_rate()),
        Field::TaskGroup => Some(Value::String(entry.group_name().as_str().into())),
        Field::Path(path) => path
            .iter()
            .try_fold(row, |v, k| v.as_object().and_then(|m| m.get(k)))
            .cloned(),
        _ => None,
    }
}

/// The first rollout-level field a task expression names (`reward`, `output`, `health.loop`,
/// …): the profile has none of them, so `--where` refuses it rather than match nothing.
pub fn rollout_only(query: &Query) -> Option<String> {
    query.fields().into_iter().find_map(|f| match f {
        Field::Task
        | Field::Agent
        | Field::TaskMeanReward
        | Field::TaskPassRate
        | Field::TaskGroup
        | Field::Path(_) => None,
        Field::Rollout => Some("rollout".into()),
        Field::Reward => Some("reward".into()),
        Field::ToolCalls => Some("tool_calls".into()),
        Field::Tool => Some("tool".into()),
        Field::Verdict => Some("verdict".into()),
        Field::Health(flag) => Some(format!("health.{}", flag.as_str())),
        Field::Usage(p) => Some(format!("usage.{}", p.join("."))),
        Field::Scope(s) => Some(s.as_str().into()),
    })
}
