//! PivotRL selection (spec §d.2-§d.3, `gymscope select-pivot`): the pivots whose on-policy
//! rollouts had mixed rewards, tied to their profile rows by `pivot_id` (from the profile's
//! `sample.pivot_info`) or else by `_ng_task_index` = the pivot's position in its file.
//!
//! Fed in chunks: the profile first ([`ProfileIndex`]), then the pivot file ([`Selector`]),
//! which yields a [`Plan`]: the byte spans of the rows to write, in output order, each with its
//! `profile_info`. Memory: the profile's rewards and one entry per pivot, never the rows.

use crate::jsonl::{LineSpan, LineSplitter};
use crate::reward_group::{reward_value, Outcomes, RewardGroup};
use serde_json::{json, Map, Value};
use std::collections::HashMap;

/// What selection decided about one pivot (spec §d.3 steps 1-3).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Class {
    Unprofiled,
    InsufficientRollouts,
    AllSuccess,
    AllFailure,
    Mixed,
}

impl Class {
    pub const ALL: [Class; 5] = [
        Class::Unprofiled,
        Class::InsufficientRollouts,
        Class::AllSuccess,
        Class::AllFailure,
        Class::Mixed,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Class::Unprofiled => "unprofiled",
            Class::InsufficientRollouts => "insufficient_rollouts",
            Class::AllSuccess => "all_success",
            Class::AllFailure => "all_failure",
            Class::Mixed => "mixed",
        }
    }

    pub fn parse(s: &str) -> Option<Class> {
        Class::ALL.into_iter().find(|c| c.as_str() == s)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sort {
    None,
    Difficulty,
    Variance,
}

#[derive(Clone, Debug)]
pub struct SelectOptions {
    pub min_rollouts: u32,
    pub success_threshold: f64,
    pub keep: Vec<Class>,
    pub max_pivots: Option<u64>,
    pub difficulty_threshold: Option<f64>,
    pub sort: Sort,
}

impl Default for SelectOptions {
    fn default() -> Self {
        SelectOptions {
            min_rollouts: 8,
            success_threshold: crate::reward_group::DEFAULT_THRESHOLD,
            keep: vec![Class::Mixed],
            max_pivots: None,
            difficulty_threshold: None,
            sort: Sort::None,
        }
    }
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{message}")]
pub struct SelectError {
    pub message: String,
}

fn error(message: String) -> SelectError {
    SelectError { message }
}

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

    pub fn push(&mut self, chunk: &[u8]) {
        let mut splitter = std::mem::take(&mut self.splitter);
        let _ = splitter.push::<()>(chunk, |span, bytes| {
            self.line(span, bytes);
            Ok(())
        });
        self.splitter = splitter;
    }

    pub fn finish(mut self) -> Result<ProfileIndex, SelectError> {
        let mut splitter = std::mem::take(&mut self.splitter);
        let _ = splitter.finish::<()>(|span, bytes| {
            self.line(span, bytes);
            Ok(())
        });
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

/// One pivot's outcome.
#[derive(Clone, Debug)]
pub struct Decision {
    pub span: LineSpan,
    pub class: Class,
    pub pass_rate: f64,
    pub variance: f64,
    pub profile_info: Option<Value>,
}

/// Counts of `<selected stem>.selection.json` (spec §d.3 step 7).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SelectionCounts {
    pub pivots: u64,
    pub profiled: u64,
    pub classes: HashMap<Class, u64>,
    pub dropped_above_difficulty_threshold: u64,
    pub dropped_easiest: u64,
    pub kept: u64,
    pub rollouts_per_pivot: std::collections::BTreeMap<u64, u64>,
}

impl SelectionCounts {
    pub fn class(&self, c: Class) -> u64 {
        self.classes.get(&c).copied().unwrap_or(0)
    }

    pub fn to_json(&self) -> Value {
        let mut m = Map::new();
        m.insert("pivots".into(), self.pivots.into());
        m.insert("profiled".into(), self.profiled.into());
        for c in [
            Class::Unprofiled,
            Class::InsufficientRollouts,
            Class::AllSuccess,
            Class::AllFailure,
            Class::Mixed,
        ] {
            m.insert(c.as_str().into(), self.class(c).into());
        }
        m.insert(
            "dropped_above_difficulty_threshold".into(),
            self.dropped_above_difficulty_threshold.into(),
        );
        m.insert("dropped_easiest".into(), self.dropped_easiest.into());
        m.insert("kept".into(), self.kept.into());
        let per: Map<String, Value> = self
            .rollouts_per_pivot
            .iter()
            .map(|(n, c)| (n.to_string(), (*c).into()))
            .collect();
        m.insert("rollouts_per_pivot".into(), Value::Object(per));
        Value::Object(m)
    }

    /// The counts as a markdown table, `count / pivots (pct)` cells.
    pub fn markdown(&self) -> String {
        let j = self.to_json();
        let mut out = String::from("| selection | count |\n| --- | --- |\n");
        for (k, v) in j.as_object().into_iter().flatten() {
            if let Some(c) = v.as_u64() {
                let cell = if k == "pivots" {
                    c.to_string()
                } else {
                    format!(
                        "{c} / {} ({})",
                        self.pivots,
                        super::metrics::pct(c, self.pivots)
                    )
                };
                out.push_str(&format!("| {k} | {cell} |\n"));
            }
        }
        out
    }
}

/// What to write: the rows' spans in output order, each with the `profile_info` to append.
#[derive(Debug)]
pub struct Plan {
    pub selected: Vec<Decision>,
    pub counts: SelectionCounts,
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

    pub fn push(&mut self, chunk: &[u8]) {
        let mut splitter = std::mem::take(&mut self.splitter);
        let _ = splitter.push::<()>(chunk, |span, bytes| {
            self.line(span, bytes);
            Ok(())
        });
        self.splitter = splitter;
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
        self.decisions.push(self.decide(span, entry));
    }

    fn decide(&self, span: LineSpan, entry: Option<usize>) -> Decision {
        let Some(e) = entry.map(|i| &self.index.entries[i]) else {
            return Decision {
                span,
                class: Class::Unprofiled,
                pass_rate: f64::NAN,
                variance: f64::NAN,
                profile_info: None,
            };
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
        Decision {
            span,
            class,
            pass_rate: mean,
            variance: std * std,
            profile_info: Some(info),
        }
    }

    pub fn finish(mut self) -> Result<Plan, SelectError> {
        let mut splitter = std::mem::take(&mut self.splitter);
        let _ = splitter.finish::<()>(|span, bytes| {
            self.line(span, bytes);
            Ok(())
        });
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        let o = &self.options;
        let mut counts = SelectionCounts {
            pivots: self.decisions.len() as u64,
            ..Default::default()
        };
        for d in &self.decisions {
            *counts.classes.entry(d.class).or_default() += 1;
            if let Some(info) = &d.profile_info {
                counts.profiled += 1;
                *counts
                    .rollouts_per_pivot
                    .entry(info["num_rollouts"].as_u64().unwrap_or(0))
                    .or_default() += 1;
            }
        }
        let mut kept: Vec<Decision> = self
            .decisions
            .into_iter()
            .filter(|d| o.keep.contains(&d.class))
            .collect();
        if let Some(t) = o.difficulty_threshold.filter(|t| *t > 0.0) {
            let before = kept.len();
            // NaN (unprofiled, kept for inspection) is not above the threshold.
            kept.retain(|d| d.pass_rate.partial_cmp(&t) != Some(std::cmp::Ordering::Greater));
            counts.dropped_above_difficulty_threshold = (before - kept.len()) as u64;
        }
        if let Some(max) = o.max_pivots {
            if kept.len() as u64 > max {
                // Keep the hardest: lowest pass rate first, ties by file order; then back to file order.
                let mut order: Vec<usize> = (0..kept.len()).collect();
                order.sort_by(|&a, &b| rate(&kept[a]).total_cmp(&rate(&kept[b])).then(a.cmp(&b)));
                let mut keep = vec![false; kept.len()];
                order
                    .iter()
                    .take(max as usize)
                    .for_each(|&i| keep[i] = true);
                counts.dropped_easiest = (kept.len() as u64) - max;
                let mut i = 0;
                kept.retain(|_| {
                    i += 1;
                    keep[i - 1]
                });
            }
        }
        match o.sort {
            Sort::None => {}
            Sort::Difficulty => kept.sort_by(|a, b| rate(a).total_cmp(&rate(b))),
            Sort::Variance => kept.sort_by(|a, b| var(b).total_cmp(&var(a))),
        }
        counts.kept = kept.len() as u64;
        Ok(Plan {
            selected: kept,
            counts,
        })
    }
}

/// Unprofiled pivots (kept only for inspection) sort last.
fn rate(d: &Decision) -> f64 {
    if d.pass_rate.is_nan() {
        f64::INFINITY
    } else {
        d.pass_rate
    }
}

fn var(d: &Decision) -> f64 {
    if d.variance.is_nan() {
        f64::NEG_INFINITY
    } else {
        d.variance
    }
}

fn finite(x: f64) -> Value {
    if x.is_finite() {
        json!(x)
    } else {
        Value::Null
    }
}

/// A selected row: the original pivot row with `profile_info` right after `pivot_info`.
pub fn selected_row(line: &[u8], profile_info: Option<&Value>) -> Result<Vec<u8>, String> {
    let row: Map<String, Value> = serde_json::from_slice(line).map_err(|e| e.to_string())?;
    let mut out = Map::with_capacity(row.len() + 1);
    let has_pivot_info = row.contains_key("pivot_info");
    for (k, v) in row {
        let after = k == "pivot_info";
        out.insert(k, v);
        if after {
            if let Some(info) = profile_info {
                out.insert("profile_info".into(), info.clone());
            }
        }
    }
    if !has_pivot_info {
        if let Some(info) = profile_info {
            out.insert("profile_info".into(), info.clone());
        }
    }
    let mut bytes = serde_json::to_vec(&Value::Object(out)).map_err(|e| e.to_string())?;
    bytes.push(b'\n');
    Ok(bytes)
}
