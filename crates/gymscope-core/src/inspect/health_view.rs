//! The Health page's view: the data the page shows (rates as cells, outcome buckets, the
//! worst rollouts, upstream's verdicts), as the worker sends it. Only data and how it reads:
//! [`super::health`] and [`super::upstream`] build it, [`super::model::InspectView`] holds it.

use crate::health::{Level, Rate};
use serde::{Deserialize, Serialize};

/// One rate as a cell: "3.1 % · 37 of 1200 rollouts", its level and its thresholds.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RateCell {
    pub rate: String,
    pub count: u64,
    pub of: u64,
    /// What the rate is a share of: `rollouts`, `tool_calls`, `attempts`.
    pub of_what: String,
    pub value: Option<f64>,
    pub level: Level,
    /// "warn > 2 %, bad > 10 %".
    pub threshold: String,
}

impl RateCell {
    pub(super) fn of(r: &Rate) -> RateCell {
        let t = crate::health::THRESHOLDS.iter().find(|t| t.rate == r.rate);
        let pct = |v: f64| format!("{} %", crate::table::short_number(v * 100.0));
        let bad = if t.is_some_and(|t| t.bad_inclusive) {
            format!("bad = {}", pct(r.bad))
        } else {
            format!("bad > {}", pct(r.bad))
        };
        RateCell {
            rate: r.rate.to_string(),
            count: r.count,
            of: r.of,
            of_what: t.map_or("", |t| t.of).replace('_', " "),
            value: r.value,
            level: r.level,
            threshold: format!("warn > {}, {bad}", pct(r.warn)),
        }
    }

    /// The value as a percentage ("–" with nothing to count).
    pub fn percent(&self) -> String {
        self.value
            .map_or("–".to_string(), |v| format!("{:.1} %", v * 100.0))
    }

    /// "37 of 1200 rollouts".
    pub fn counts(&self) -> String {
        format!("{} of {} {}", self.count, self.of, self.of_what)
    }

    /// The level as a word (shown beside its colour).
    pub fn word(&self) -> &'static str {
        match self.level {
            Level::Ok => "ok",
            Level::Warn => "warn",
            Level::Bad => "bad",
        }
    }
}

/// Tasks by outcome bucket (the core reward-group classifier) and pass metrics.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Buckets {
    pub tasks: u64,
    pub never_pass: u64,
    pub sometimes_pass: u64,
    pub always_pass: u64,
    pub no_reward: u64,
    pub pass_at_1: Option<f64>,
    pub pass_at_k: Option<f64>,
}

impl Buckets {
    pub(super) fn of(o: &crate::health::TaskOutcomes) -> Buckets {
        Buckets {
            tasks: o.tasks,
            never_pass: o.never_pass,
            sometimes_pass: o.sometimes_pass,
            always_pass: o.always_pass,
            no_reward: o.no_reward,
            pass_at_1: o.pass_at_1,
            pass_at_k: o.pass_at_k,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AgentRow {
    /// The agent's name as text (`(no agent_ref)` for rows without one).
    pub agent: String,
    pub rollouts: u64,
    /// Rollouts with at least one flag.
    pub flagged: u64,
    pub tool_calls: u64,
    pub rates: Vec<RateCell>,
    pub buckets: Buckets,
    /// How its rollouts were judged, when any was single-step ("mode: single-step (…): …").
    #[serde(default)]
    pub mode: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct WorstRow {
    pub task: i64,
    pub rollout: i64,
    pub agent: String,
    pub reward: Option<f64>,
    pub reason: String,
    /// NeMo Gym's verdict of this rollout, when its `rollout_verdicts.jsonl` was read.
    #[serde(default)]
    pub upstream: Option<VerdictSet>,
}

/// Upstream's evidence on rows carrying `ng_trajectory` (ids and codes as opaque strings).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Trajectory {
    pub rows: u64,
    pub unreadable: u64,
    pub turns: u64,
    pub gaps: Vec<(String, u64)>,
    pub tool_calls_by_status: Vec<(String, u64)>,
}

/// The run's health as the page shows it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HealthView {
    pub pass_threshold: f64,
    pub rollouts: u64,
    pub flagged: u64,
    pub duplicates: u64,
    pub missing: Option<u64>,
    /// Rates of the whole run (failures, when a failures file was read).
    pub run_rates: Vec<RateCell>,
    pub agents: Vec<AgentRow>,
    pub tasks: Buckets,
    /// Every rate at warn or worse, in words.
    pub findings: Vec<String>,
    pub unhealthy_tasks: u64,
    pub worst: Vec<WorstRow>,
    pub trajectory: Option<Trajectory>,
    /// NeMo Gym's verdict files, when dropped with the run (`inspect::upstream`).
    #[serde(default)]
    pub upstream: Option<UpstreamView>,
}

/// Health in the inspector's view: not computed (profile files carry no rollout text), failed
/// (a row the signals cannot read; the profile still shows), or ready.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub enum HealthState {
    #[default]
    NotComputed,
    Failed(String),
    Ready(Box<HealthView>),
}

/// A rollout's verdict as upstream gave it: shared by every rollout with the same one (a run
/// has few distinct verdicts, so a million rollouts keep a small list and an index each).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct VerdictSet {
    /// `healthy`, `unhealthy`, `unobserved` (or whatever upstream writes).
    pub verdict: String,
    /// The checks with a finding.
    pub checks: Vec<String>,
    /// The checks that lacked their evidence.
    pub unobserved: Vec<String>,
}

/// A verdict's colour class: `ok` for healthy, `bad` for unhealthy, `warn` for anything else
/// (unobserved: the checks lacked their evidence).
pub fn verdict_level(verdict: &str) -> &'static str {
    match verdict {
        "healthy" => "ok",
        "unhealthy" => "bad",
        _ => "warn",
    }
}

impl VerdictSet {
    /// "unhealthy · model_call_failed, record_unreadable".
    pub fn short(&self) -> String {
        if self.checks.is_empty() {
            self.verdict.clone()
        } else {
            format!("{} · {}", self.verdict, self.checks.join(", "))
        }
    }

    /// The badge's words: "NeMo Gym: unhealthy · model_call_failed, record_unreadable".
    pub fn text(&self) -> String {
        format!("NeMo Gym: {}", self.short())
    }

    /// The badge's tooltip: what could not be checked.
    pub fn unobserved_text(&self) -> String {
        if self.unobserved.is_empty() {
            String::new()
        } else {
            format!("not observed: {}", self.unobserved.join(", "))
        }
    }

    /// The badge's colour class ([`verdict_level`]).
    pub fn level(&self) -> &'static str {
        verdict_level(&self.verdict)
    }
}

/// `quality_summary.json` on the page.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SummaryView {
    pub file: String,
    pub verdicts: Vec<(String, u64)>,
    /// Findings per check id, the checks with findings first (most first), then the others.
    pub issues: Vec<(String, u64)>,
    pub task_flags: Vec<(String, u64)>,
    pub ignored: Vec<String>,
}

/// An unhealthy rollout as upstream lists it; `key` when it is a rollout of the run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct UnhealthyRow {
    /// `task 3 · rollout 0 (3-0)`: as upstream wrote the key (its unreadable records have text ids).
    pub label: String,
    pub key: Option<(i64, i64)>,
    pub checks: String,
}

/// `rollout_verdicts.jsonl` on the page.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct VerdictsView {
    pub file: String,
    pub rollouts: u64,
    pub verdicts: Vec<(String, u64)>,
    /// Rollouts with a finding of each check (most first).
    pub findings: Vec<(String, u64)>,
    /// Rollouts where each check lacked its evidence (most first).
    pub unobserved: Vec<(String, u64)>,
    pub unhealthy: Vec<UnhealthyRow>,
    /// Rollouts of the run the file has a verdict for, of the run's rollouts.
    pub matched: u64,
    pub run_rollouts: u64,
}

/// Upstream's verdicts on the Health page.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct UpstreamView {
    pub summary: Option<SummaryView>,
    pub verdicts: Option<VerdictsView>,
    /// The distinct per-rollout verdicts (`Columns::point_verdict` indexes them).
    pub sets: Vec<VerdictSet>,
    /// Why the files could not be read (the rest of the Health page is unaffected).
    pub error: Option<String>,
}
