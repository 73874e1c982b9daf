//! Choosing what to train on from a reward profile (`gymscope select-tasks`, docs/select-tasks.md "Choosing
//! tasks"): the tasks within a pass-rate or mean-reward band, of a task-level query, capped by
//! a seeded (optionally stratified) sample and split into train and validation without a group
//! in both. The seeded orders are shared with the pivot selection (`seeded`).
//!
//! `tasks` reads the profile into one small entry per task (its rows stay in the file); the
//! seeded choices (the cap, the grouped split) are `crate::seeded`'s.

mod tasks;

use crate::seeded::{cap, groups, key, split, CapItem, Stream};
pub use tasks::{rollout_only, TaskEntry, TaskReader};

use crate::query::Query;
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;

/// A refused profile or row, naming file and line.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct CurateError(pub String);

/// Why a task was not kept: the first rule, in this order, that it failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum DropReason {
    NoNumericReward,
    TooFewRollouts,
    PassRate,
    MeanReward,
    Saturated,
    Where,
    OverMaxTasks,
}

impl DropReason {
    pub const ALL: [DropReason; 7] = [
        DropReason::NoNumericReward,
        DropReason::TooFewRollouts,
        DropReason::PassRate,
        DropReason::MeanReward,
        DropReason::Saturated,
        DropReason::Where,
        DropReason::OverMaxTasks,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            DropReason::NoNumericReward => "no_numeric_reward",
            DropReason::TooFewRollouts => "too_few_rollouts",
            DropReason::PassRate => "pass_rate_outside_band",
            DropReason::MeanReward => "mean_reward_outside_band",
            DropReason::Saturated => "saturated",
            DropReason::Where => "where",
            DropReason::OverMaxTasks => "over_max_tasks",
        }
    }
}

/// Every option of a task selection (the CLI's flags, the Profile page's band).
#[derive(Clone, Debug)]
pub struct TaskOptions {
    pub pass_threshold: f64,
    pub min_pass: f64,
    pub max_pass: f64,
    pub min_mean: Option<f64>,
    pub max_mean: Option<f64>,
    pub drop_saturated: bool,
    pub min_rollouts: u32,
    pub filter: Option<Query>,
    pub max_tasks: Option<u64>,
    pub seed: u64,
    pub stratify: Option<String>,
    pub target_pass: Option<f64>,
    pub val_fraction: Option<f64>,
    pub group_by: Option<String>,
    pub annotate: bool,
}

impl Default for TaskOptions {
    fn default() -> Self {
        TaskOptions {
            pass_threshold: crate::reward_group::DEFAULT_THRESHOLD,
            min_pass: 0.0,
            max_pass: 1.0,
            min_mean: None,
            max_mean: None,
            drop_saturated: false,
            min_rollouts: 1,
            filter: None,
            max_tasks: None,
            seed: 0,
            stratify: None,
            target_pass: None,
            val_fraction: None,
            group_by: None,
            annotate: false,
        }
    }
}

impl TaskOptions {
    /// Options that cannot select anything or contradict each other: a usage error.
    pub fn check(&self) -> Result<(), String> {
        if self.min_pass > self.max_pass {
            return Err(format!(
                "the pass-rate band is empty: --min-pass {} is above --max-pass {}",
                self.min_pass, self.max_pass
            ));
        }
        if let (Some(lo), Some(hi)) = (self.min_mean, self.max_mean) {
            if lo > hi {
                return Err(format!(
                    "the mean-reward band is empty: --min-mean {lo} is above --max-mean {hi}"
                ));
            }
        }
        if let Some(f) = self.val_fraction {
            if !(0.0..1.0).contains(&f) {
                return Err(format!(
                    "--val-fraction must be at least 0 and below 1, got {f}"
                ));
            }
        }
        if let Some(p) = self.target_pass {
            if !(0.0..=1.0).contains(&p) {
                return Err(format!("--target-pass must be between 0 and 1, got {p}"));
            }
        }
        if let Some(field) = self.filter.as_ref().and_then(rollout_only) {
            return Err(format!(
                "--where: `{field}` is a rollout field; a profile has task-level fields only (task.pass_rate, task.mean_reward, task.group, task, agent, `mean/…` columns, sample.FIELD)"
            ));
        }
        Ok(())
    }

    /// The first per-task rule `entry` fails (the cap comes later, over the survivors).
    fn first_drop(&self, entry: &TaskEntry, row: &Value) -> Option<DropReason> {
        self.entry_drop(entry).or_else(|| {
            let q = self.filter.as_ref()?;
            let kept = crate::query::eval_fields(q.expr(), &|f| tasks::task_field(entry, row, f));
            (!kept).then_some(DropReason::Where)
        })
    }

    /// The rules an entry alone answers: all but `--where`, which needs the row.
    fn entry_drop(&self, entry: &TaskEntry) -> Option<DropReason> {
        let Some(pass) = entry.pass_rate() else {
            return Some(DropReason::NoNumericReward);
        };
        if (entry.rewards.len() as u64) < u64::from(self.min_rollouts) {
            return Some(DropReason::TooFewRollouts);
        }
        if pass < self.min_pass || pass > self.max_pass {
            return Some(DropReason::PassRate);
        }
        let mean = entry.mean().unwrap_or(f64::NAN);
        // A task without a mean (NaN) is outside every mean band.
        let banded = self.min_mean.is_some() || self.max_mean.is_some();
        if (banded && mean.is_nan())
            || self.min_mean.is_some_and(|lo| mean < lo)
            || self.max_mean.is_some_and(|hi| mean > hi)
        {
            return Some(DropReason::MeanReward);
        }
        if self.drop_saturated && entry.group_name() != crate::reward_group::RewardGroup::Mixed {
            return Some(DropReason::Saturated);
        }
        None
    }

    /// Every option, for `.selection.json`.
    pub fn to_json(&self) -> Value {
        json!({
            "pass_threshold": self.pass_threshold,
            "min_pass": self.min_pass,
            "max_pass": self.max_pass,
            "min_mean": self.min_mean,
            "max_mean": self.max_mean,
            "drop_saturated": self.drop_saturated,
            "min_rollouts": self.min_rollouts,
            "where": self.filter.as_ref().map(|q| q.source.clone()),
            "max_tasks": self.max_tasks,
            "seed": self.seed,
            "stratify": self.stratify,
            "target_pass": self.target_pass,
            "val_fraction": self.val_fraction,
            "group_by": self.group_by,
            "annotate": self.annotate,
        })
    }
}

/// Per agent: tasks read, kept, sent to validation.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AgentCounts {
    pub tasks: u64,
    pub kept: u64,
    pub validation: u64,
}

/// What a selection did, for the printout and `.selection.json`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TaskCounts {
    pub tasks: u64,
    pub groups: BTreeMap<&'static str, u64>,
    pub dropped: BTreeMap<DropReason, u64>,
    pub kept: u64,
    pub validation: u64,
    pub per_agent: BTreeMap<String, AgentCounts>,
}

/// The agent name counts are kept under when a task names none.
pub const NO_AGENT: &str = "(no agent)";

impl TaskCounts {
    pub fn dropped(&self, r: DropReason) -> u64 {
        self.dropped.get(&r).copied().unwrap_or(0)
    }

    pub fn to_json(&self, options: &TaskOptions) -> Value {
        let dropped: Map<String, Value> = DropReason::ALL
            .iter()
            .map(|&r| (r.as_str().to_string(), self.dropped(r).into()))
            .collect();
        let groups: Map<String, Value> = crate::reward_group::RewardGroup::ALL
            .iter()
            .map(|g| {
                let n = self.groups.get(g.as_str()).copied().unwrap_or(0);
                (g.as_str().to_string(), n.into())
            })
            .collect();
        let per_agent: Map<String, Value> = self
            .per_agent
            .iter()
            .map(|(a, c)| {
                let v = json!({"tasks": c.tasks, "kept": c.kept, "validation": c.validation});
                (a.clone(), v)
            })
            .collect();
        json!({
            "tasks": self.tasks,
            "kept": self.kept,
            "validation": self.validation,
            "dropped": dropped,
            "groups": groups,
            "per_agent": per_agent,
            "options": options.to_json(),
        })
    }

    /// Why nothing was kept, in words a user can act on.
    pub fn why_empty(&self) -> String {
        if self.tasks == 0 {
            return "the profile has no task rows".into();
        }
        if self.kept == 0 && self.validation > 0 {
            return format!(
                "--val-fraction sent all {} kept tasks to validation",
                self.validation
            );
        }
        let found: Vec<String> = DropReason::ALL
            .iter()
            .filter(|&&r| self.dropped(r) > 0)
            .map(|&r| format!("{} {}", self.dropped(r), r.as_str()))
            .collect();
        format!(
            "every one of the {} tasks was dropped ({}): widen the band or loosen --where",
            self.tasks,
            found.join(", ")
        )
    }

    /// The counts as the command prints them.
    pub fn text(&self) -> String {
        let pct = |n: u64| crate::figures::percent_of(n, self.tasks);
        let groups: Vec<String> = crate::reward_group::RewardGroup::ALL
            .iter()
            .filter_map(|g| {
                let n = self.groups.get(g.as_str()).copied().unwrap_or(0);
                (n > 0).then(|| format!("{} {n}", g.as_str()))
            })
            .collect();
        let mut out = format!("tasks read: {} ({})\n", self.tasks, groups.join(", "));
        out.push_str(&format!("kept: {} ({})\n", self.kept, pct(self.kept)));
        if self.validation > 0 {
            out.push_str(&format!(
                "validation: {} ({})\n",
                self.validation,
                pct(self.validation)
            ));
        }
        for r in DropReason::ALL {
            let n = self.dropped(r);
            if n > 0 {
                out.push_str(&format!("dropped, {}: {n} ({})\n", r.as_str(), pct(n)));
            }
        }
        if self.per_agent.len() > 1 || !self.per_agent.contains_key(NO_AGENT) {
            let width = self
                .per_agent
                .keys()
                .map(|a| a.chars().count())
                .max()
                .unwrap_or(5)
                .max(5);
            out.push_str(&format!(
                "{:<width$}  {:>7}  {:>7}  {:>10}\n",
                "agent", "tasks", "kept", "validation"
            ));
            for (a, c) in &self.per_agent {
                out.push_str(&format!(
                    "{a:<width$}  {:>7}  {:>7}  {:>10}\n",
                    c.tasks, c.kept, c.validation
                ));
            }
        }
        out
    }
}

/// What to write: the entries kept and those sent to validation, each in task order.
#[derive(Debug)]
pub struct TaskPlan {
    pub kept: Vec<usize>,
    pub validation: Vec<usize>,
    pub counts: TaskCounts,
}

/// Decides the per-task rules again for `options` on entries read once (with the default
/// options' pass threshold), without the file: the Profile page's pass-rate band re-plans on
/// every move. Refused for what the entries do not hold: `--where` needs the row, `--stratify`
/// and `--group-by` values read from it, another `--pass-threshold` other outcomes.
pub fn redecide(entries: &mut [TaskEntry], options: &TaskOptions) -> Result<(), String> {
    let read = TaskOptions::default();
    if options.filter.is_some()
        || options.stratify.is_some()
        || options.group_by.is_some()
        || options.pass_threshold.to_bits() != read.pass_threshold.to_bits()
    {
        return Err("these options need the profile read again".into());
    }
    for e in entries.iter_mut() {
        e.dropped = options.entry_drop(e);
    }
    Ok(())
}

/// The pass-rate band `min..=max` as a query of the Profile page's bar (the one filter model).
pub fn band_query(min: f64, max: f64) -> String {
    format!("task.pass_rate >= {min} and task.pass_rate <= {max}")
}

/// Applies the cap and the split to the entries the per-task rules kept.
pub fn plan(entries: &mut [TaskEntry], options: &TaskOptions) -> TaskPlan {
    let mut counts = TaskCounts {
        tasks: entries.len() as u64,
        ..Default::default()
    };
    let mut survivors: Vec<usize> = (0..entries.len())
        .filter(|&i| entries[i].dropped.is_none())
        .collect();
    survivors.sort_by_key(|&i| (entries[i].task, entries[i].span.line));
    let task_key = |e: &TaskEntry, stream| key(options.seed, stream, e.task.to_string().as_bytes());
    if let Some(k) = options.max_tasks {
        let mut strata: BTreeMap<&str, usize> = BTreeMap::new();
        for &i in &survivors {
            let n = strata.len();
            strata
                .entry(entries[i].stratum.as_deref().unwrap_or(""))
                .or_insert(n);
        }
        let items: Vec<CapItem> = survivors
            .iter()
            .map(|&i| {
                let e = &entries[i];
                CapItem {
                    key: task_key(e, Stream::Cap),
                    stratum: strata[e.stratum.as_deref().unwrap_or("")],
                    distance: options
                        .target_pass
                        .map_or(0.0, |p| (e.pass_rate().unwrap_or(f64::NAN) - p).abs()),
                }
            })
            .collect();
        let chosen = cap(&items, k as usize, options.stratify.is_some());
        for (&i, &c) in survivors.iter().zip(&chosen) {
            if !c {
                entries[i].dropped = Some(DropReason::OverMaxTasks);
            }
        }
        survivors.retain(|&i| entries[i].dropped.is_none());
    }
    let mut validation = Vec::new();
    if let Some(f) = options.val_fraction.filter(|f| *f > 0.0) {
        let keys: Vec<u64> = survivors
            .iter()
            .map(|&i| task_key(&entries[i], Stream::Split))
            .collect();
        let grouping = options.group_by.as_ref().map(|_| {
            groups(
                options.seed,
                survivors
                    .iter()
                    .map(|&i| entries[i].group.as_deref().unwrap_or("")),
            )
        });
        let val = split(
            &keys,
            grouping.as_ref().map(|(g, k)| (g.as_slice(), k.as_slice())),
            f,
        );
        let mut train = Vec::new();
        for (i, to_val) in survivors.into_iter().zip(val) {
            if to_val {
                validation.push(i);
            } else {
                train.push(i);
            }
        }
        survivors = train;
    }
    for e in entries.iter() {
        *counts.groups.entry(e.group_name().as_str()).or_default() += 1;
        if let Some(r) = e.dropped {
            *counts.dropped.entry(r).or_default() += 1;
        }
        let agent = e.agent.clone().unwrap_or_else(|| NO_AGENT.into());
        counts.per_agent.entry(agent).or_default().tasks += 1;
    }
    let agent_of = |i: usize| entries[i].agent.clone().unwrap_or_else(|| NO_AGENT.into());
    for &i in &survivors {
        counts.per_agent.entry(agent_of(i)).or_default().kept += 1;
    }
    for &i in &validation {
        counts.per_agent.entry(agent_of(i)).or_default().validation += 1;
    }
    counts.kept = survivors.len() as u64;
    counts.validation = validation.len() as u64;
    TaskPlan {
        kept: survivors,
        validation,
        counts,
    }
}

/// A curated row: the profile row's `sample`, with `profile_info` last when annotating.
pub fn curated_row(line: &[u8], profile_info: Option<&Value>) -> Result<Vec<u8>, String> {
    let mut row: Map<String, Value> = serde_json::from_slice(line).map_err(|e| e.to_string())?;
    let Some(Value::Object(mut sample)) = row.remove("sample") else {
        return Err("field `sample` must be an object".into());
    };
    if let Some(info) = profile_info {
        sample.insert("profile_info".into(), info.clone());
    }
    let mut bytes = serde_json::to_vec(&Value::Object(sample)).map_err(|e| e.to_string())?;
    bytes.push(b'\n');
    Ok(bytes)
}

#[cfg(test)]
mod tests;
