//! The shareable report: one self-contained HTML file (no request of any kind, a strict
//! Content-Security-Policy, every data string escaped) with the run's key figures, a reward ×
//! tokens scatter, a reward histogram, the completion summary, the agent and task tables and some
//! tasks' conversations.
//!
//! Target-independent on purpose: the CLI (`gymscope report`) and the web app's "Export report"
//! call the same [`render`], so the two can never drift apart.
//!
//! - [`ReportInput`]: the report as plain data, built by [`ReportInput::from_profile`] (a fresh
//!   profile) or [`ReportInput::from_profile_files`] (upstream's or gymscope's output files);
//! - its key figures and agent lines are `table::key_figures`' (the app's Profile page shows the
//!   same), of its points by [`key_figures_of`];
//! - [`QueryParts`] (`matches`): the sections of a query's matches, which the page opens on;
//! - `data`: the compact columnar JSON the page's script reads;
//! - `svg`: the static plots, shown without JavaScript;
//! - `html`: the page itself and the CSP hashes (escaping is [`crate::html`]).

mod conv;
mod data;
mod files;
mod health;
mod html;
mod input;
mod matches;
mod part;
mod svg;

pub use files::FilesError;
pub use html::render;
// Pieces other self-contained pages (the comparison report) are built from.
pub(crate) use conv::{conversation as write_conversation, items as write_items};
pub(crate) use data::string as json_string;
pub(crate) use html::{header as page_header, page_head, STYLE as BASE_STYLE};
pub use input::conversation_spans;
pub use matches::{health_of_matches, QueryParts};

/// The reward histogram as a standalone SVG file (the report's plot; the app's download).
pub fn histogram_svg(rewards: &[Option<f64>]) -> String {
    svg::histogram(rewards).replacen("<svg ", r#"<svg xmlns="http://www.w3.org/2000/svg" "#, 1)
}

use crate::conversation::Conversation;
use crate::error::RolloutKey;
use crate::profile::CompletionSummary;
use crate::table::Table;

/// A file the report was made from, by name (never its full path: the page is meant to be shared).
#[derive(Clone, Debug, PartialEq)]
pub struct Source {
    pub name: String,
    pub bytes: u64,
}

/// What the caller knows about the run beyond the profile itself.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ReportMeta {
    pub title: String,
    pub sources: Vec<Source>,
    /// Shown as given; there is no default so that the same inputs give the same bytes.
    pub date: Option<String>,
}

/// One value per rollout, columnar (ascending task, rollout), as in `rollout_infos`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Points {
    pub task: Vec<i64>,
    pub rollout: Vec<i64>,
    /// `None` where the reward is missing or not a number.
    pub reward: Vec<Option<f64>>,
    /// The other numeric fields of `rollout_infos` (usage, verifier fields), first-seen order.
    pub fields: Vec<String>,
    /// `values[f][i]`: field `f` of rollout `i`.
    pub values: Vec<Vec<Option<f64>>>,
    /// Each rollout's agent: its row in the agent table (empty when not known, as in profile
    /// files, whose `rollout_infos` do not name it).
    pub agent: Vec<Option<usize>>,
}

impl Points {
    pub fn len(&self) -> usize {
        self.task.len()
    }
    pub fn is_empty(&self) -> bool {
        self.task.is_empty()
    }
    /// The rewards as plot values (NaN where missing).
    pub fn reward_values(&self) -> Vec<f64> {
        self.reward.iter().map(|v| v.unwrap_or(f64::NAN)).collect()
    }
    /// Field `f` as plot values (NaN where missing).
    pub fn field_values(&self, f: usize) -> Vec<f64> {
        self.values[f]
            .iter()
            .map(|v| v.unwrap_or(f64::NAN))
            .collect()
    }
    /// The points `keep` says, in order (a query's matches).
    pub fn only(&self, keep: impl Fn(usize) -> bool) -> Points {
        let kept: Vec<usize> = (0..self.len()).filter(|&i| keep(i)).collect();
        let pick = |v: &Vec<Option<f64>>| kept.iter().map(|&i| v[i]).collect();
        Points {
            task: kept.iter().map(|&i| self.task[i]).collect(),
            rollout: kept.iter().map(|&i| self.rollout[i]).collect(),
            reward: pick(&self.reward),
            fields: self.fields.clone(),
            values: self.values.iter().map(pick).collect(),
            agent: kept
                .iter()
                .filter_map(|&i| self.agent.get(i).copied())
                .collect(),
        }
    }
    /// The agents as plot values (NaN unknown), when any is known.
    pub fn agent_values(&self) -> Option<Vec<f64>> {
        self.agent.iter().any(Option::is_some).then(|| {
            self.agent
                .iter()
                .map(|a| a.map_or(f64::NAN, |a| a as f64))
                .collect()
        })
    }
    /// The binned mean reward against field `f` per agent (the app's overlay).
    pub fn binned_rewards(&self, f: usize, agents: usize) -> Vec<crate::plot::binned::AgentBins> {
        crate::plot::binned::per_agent(
            &self.field_values(f),
            &self.reward_values(),
            self.agent_values().as_deref(),
            agents,
        )
    }
    /// The scales of the reward-against-field-`f` scatter: the plot model's, as the app's.
    pub fn scatter_scales(&self, f: usize) -> (crate::plot::Scale, crate::plot::Scale) {
        crate::plot::scatter_scales(&self.field_values(f), &self.reward_values())
    }
}

/// Everything the page shows, as plain data.
#[derive(Clone, Debug, PartialEq)]
pub struct ReportInput {
    pub meta: ReportMeta,
    pub summary: CompletionSummary,
    /// Said under the summary when part of it is unknown (tasks without any rollout are not in
    /// `*_reward_profiling.jsonl`).
    pub summary_note: Option<String>,
    pub warnings: Vec<String>,
    /// The run's key figures, the report's first cards (`key_figures`).
    pub figures: Vec<crate::table::key_figures::KeyFigure>,
    /// `None` when there is no agent metrics file.
    pub agents: Option<Table>,
    /// v0.7.0's per-repeat reward (`table::repeat_table`), when computed from the rollouts.
    pub repeats: Option<Table>,
    /// Masked rollouts and the reward across repeats, in words (`table::repeat_notes`).
    pub repeat_notes: Vec<String>,
    /// One row per task with at least one rollout, keyed by task index.
    pub tasks: Table,
    pub points: Points,
    /// Rollouts shown as conversations (a bounded number of tasks), ascending key.
    pub conversations: Vec<(RolloutKey, Conversation)>,
    /// Tasks whose prompt only is shown (from a profiling file's `sample`), ascending.
    pub prompts: Vec<(i64, Conversation)>,
    /// The run's rollout health, when the caller computed it (the Health section); set with
    /// [`ReportInput::with_health`].
    pub health: Option<Box<crate::health::HealthReport>>,
    /// The query the report was made with and the rollouts it matched; set with
    /// [`ReportInput::with_query`].
    pub query: Option<ReportQuery>,
    /// The sections of the query's matches (the page opens on them; the run's come back when
    /// the filter box no longer holds the query).
    pub query_parts: QueryParts,
}

/// A query of the query language (docs/query.md) and the rollouts it matched in the run: the
/// page opens filtered to them, whatever the expression needs (text, health, tools), since the
/// keys were found by the core reading the run's files.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ReportQuery {
    pub source: String,
    /// `(task, rollout)` of each match, ascending.
    pub keys: Vec<(i64, i64)>,
}

impl ReportQuery {
    /// The query and its matches in any order: kept ascending, each once (so any order gives
    /// the same page, and the report's parts can search them).
    pub fn new(source: String, mut keys: Vec<(i64, i64)>) -> ReportQuery {
        keys.sort_unstable();
        keys.dedup();
        ReportQuery { source, keys }
    }
}

impl ReportInput {
    /// The report with a Health section (computed in the same read as the profile).
    pub fn with_health(mut self, health: crate::health::HealthReport) -> ReportInput {
        self.health = Some(Box::new(health));
        self
    }

    /// The report opened filtered to `query`'s matches ([`ReportQuery::new`]): its figures,
    /// histogram, agent and repeat tables are the matches'.
    pub fn with_query(mut self, query: ReportQuery) -> ReportInput {
        let pts = &self.points;
        let matched = pts.only(|i| {
            query
                .keys
                .binary_search(&(pts.task[i], pts.rollout[i]))
                .is_ok()
        });
        let names: Vec<String> = self
            .agents
            .as_ref()
            .map(|t| t.rows.iter().map(|r| r.key.clone()).collect())
            .unwrap_or_default();
        let mut agents: Vec<usize> = matched.agent.iter().flatten().copied().collect();
        agents.sort_unstable();
        agents.dedup();
        self.query_parts = QueryParts {
            // The interval across repeats is the whole run's: none for a part of it.
            figures: key_figures_of(&matched, matched.len(), agents.len(), &[]),
            agents: self
                .agents
                .is_some()
                .then(|| matches::agent_table(&matched, &names)),
            repeats: self
                .repeats
                .is_some()
                .then(|| matches::repeat_table(&matched, &names)),
            points: matched,
            health: self.query_parts.health.take(),
        };
        self.query = Some(query);
        self
    }

    /// The Health section of the query's matches ([`health_of_matches`]), shown while the page
    /// holds the query.
    pub fn with_query_health(mut self, health: crate::health::HealthReport) -> ReportInput {
        self.query_parts.health = Some(Box::new(health));
        self
    }
}

/// How many tasks get their conversations by default.
pub const DEFAULT_CONVERSATION_TASKS: usize = 20;

/// The cards of a report's points (grouped by task, in order): the page's figures for the
/// static report (`report::html`).
pub(crate) fn key_figures_of(
    points: &Points,
    expected_rollouts: usize,
    agents: usize,
    across: &[crate::table::RewardAcross],
) -> Vec<crate::table::key_figures::KeyFigure> {
    let mean = |values: &mut dyn Iterator<Item = f64>| {
        let v: Vec<f64> = values.filter(|v| !v.is_nan()).collect();
        (!v.is_empty()).then(|| crate::stats::np_sum(&v) / v.len() as f64)
    };
    let field = |name: &str| {
        let f = points.fields.iter().position(|n| n == name)?;
        mean(&mut points.values[f].iter().flatten().copied())
    };
    use crate::table::key_figures::{key_figures, TaskSpan, Totals};
    let mut tasks: Vec<TaskSpan> = Vec::new();
    for (i, &task) in points.task.iter().enumerate() {
        match tasks.last_mut() {
            Some(t) if points.task[t.first] == task => t.n += 1,
            _ => tasks.push(TaskSpan { first: i, n: 1 }),
        }
    }
    let totals = Totals {
        tasks: tasks.len(),
        rollouts: points.len(),
        expected_rollouts,
        agents,
        mean_reward: mean(&mut points.reward.iter().flatten().copied()),
        mean_output_tokens: field("output_tokens"),
        mean_total_tokens: field("total_tokens"),
    };
    key_figures(
        &totals,
        &tasks,
        |p| points.reward.get(p).copied().flatten(),
        across,
    )
}
