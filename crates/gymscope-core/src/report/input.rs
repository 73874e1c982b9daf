//! [`ReportInput`] from a freshly computed [`Profile`], and which rollout lines its
//! conversations need (the caller reads them: the CLI by seeking, the web app from the `File`).

use super::{Points, ReportInput, ReportMeta};
use crate::conversation::Conversation;
use crate::error::RolloutKey;
use crate::fast_map::{FastMap, LastValues};
use crate::gym::keys::{ROLLOUT_INDEX, TASK_INDEX};
use crate::profile::Profile;
use crate::read::jsonl::LineSpan;
use crate::record::Reward;
use crate::table;

/// The rollouts of the first `max_tasks` tasks, with the span of each one's line in the
/// rollouts file, ascending key. With `only` (a query's matches, ascending `(task, rollout)`),
/// only those rollouts, of the first `max_tasks` tasks that have one: the report's details
/// follow the query it was made with.
pub fn conversation_spans(
    p: &Profile,
    max_tasks: usize,
    only: Option<&[(i64, i64)]>,
) -> Vec<(RolloutKey, LineSpan)> {
    let kept = |r: &&crate::profile::RolloutRecord| {
        only.is_none_or(|keys| keys.binary_search(&(r.key.task, r.key.rollout)).is_ok())
    };
    p.tasks
        .iter()
        .map(|t| {
            p.rollouts[t.rollouts.clone()]
                .iter()
                .filter(kept)
                .peekable()
        })
        .filter_map(|mut rollouts| rollouts.peek().is_some().then_some(rollouts))
        .take(max_tasks)
        .flatten()
        .map(|r| (r.key, r.span))
        .collect()
}

impl ReportInput {
    /// The report of a profile; `conversations` are the rows read back at
    /// [`conversation_spans`] (possibly none).
    pub fn from_profile(
        p: &Profile,
        meta: ReportMeta,
        mut conversations: Vec<(RolloutKey, Conversation)>,
    ) -> ReportInput {
        conversations.sort_by_key(|(k, _)| *k);
        let points = points(p);
        let figures = super::key_figures_of(
            &points,
            p.summary.expected_rollout_rows,
            p.agents.len(),
            &table::reward_across(p),
        );
        ReportInput {
            meta,
            summary: p.summary,
            summary_note: None,
            warnings: p.warnings.clone(),
            figures,
            agents: Some(table::agent_table(p)),
            repeats: table::repeat_table(p),
            repeat_notes: table::repeat_notes(p),
            tasks: table::task_table(p),
            points,
            conversations,
            prompts: Vec::new(),
            health: None,
            query: None,
            query_parts: super::QueryParts::default(),
        }
    }
}

/// The fields `rollout_infos` would hold, without the id and the two indices: a same-named
/// top-level field replaces a usage field in its place, as `render` writes them.
fn points(p: &Profile) -> Points {
    let mut pts = Points::default();
    let mut row: LastValues<&str, f64> = LastValues::default();
    let mut columns = FieldColumns::default();
    for (i, r) in p.rollouts.iter().enumerate() {
        pts.task.push(r.key.task);
        pts.rollout.push(r.key.rollout);
        pts.agent.push(p.rollout_agent[i]);
        pts.reward.push(match &r.reward {
            Some(Reward::Num(n)) => Some(n.as_f64()),
            _ => None,
        });
        row.clear();
        for (k, v) in r.usage_numbers() {
            row_field(&mut row, p.keys.name(k), v.as_f64());
        }
        // v0.7.0 leaves `_`-prefixed top-level fields and the mask flag out of `rollout_infos`.
        for (k, v) in r.top_numbers() {
            let name = p.keys.name(k);
            if !name.starts_with('_') && name != crate::gym::keys::MASK_SAMPLE {
                row_field(&mut row, name, v.as_f64());
            }
        }
        columns.push_row(&mut pts, i, row.entries());
    }
    pts
}

/// A field of a point, but the ones every point has apart (the indices, the id, the reward).
fn row_field<'a>(row: &mut LastValues<&'a str, f64>, name: &'a str, v: f64) {
    if !matches!(name, TASK_INDEX | ROLLOUT_INDEX | "rollout_id" | "reward") {
        row.set(name, v);
    }
}

/// Where each field's column is in a [`Points`] being filled, so a row of many fields costs
/// one lookup a field (a row of 100,000 fields took two minutes by searching).
#[derive(Default)]
pub(super) struct FieldColumns {
    at: FastMap<String, usize>,
}

impl FieldColumns {
    /// Appends rollout `i`'s fields (distinct names), adding columns (filled with `None` so far)
    /// for new names, and `None` to every column the row does not have.
    pub(super) fn push_row(&mut self, pts: &mut Points, i: usize, row: &[(&str, f64)]) {
        for &(name, v) in row {
            let f = if let Some(&f) = self.at.get(name) {
                f
            } else {
                pts.fields.push(name.to_string());
                pts.values.push(vec![None; i]);
                self.at.insert(name.to_string(), pts.fields.len() - 1);
                pts.fields.len() - 1
            };
            pts.values[f].push(Some(v));
        }
        for column in &mut pts.values {
            if column.len() == i {
                column.push(None);
            }
        }
    }
}

impl ReportInput {
    /// The report of a profiled run: the conversations of its first `max_tasks` tasks (with
    /// a query, of its matches: [`conversation_spans`]) are read back from the rollouts
    /// file by span. The CLI and the web app both make reports this way.
    pub fn from_run(
        p: &Profile,
        meta: ReportMeta,
        rollouts: &mut dyn crate::render::LineSource,
        rollouts_name: &str,
        max_tasks: usize,
        query: Option<&super::ReportQuery>,
    ) -> Result<ReportInput, crate::render::RenderError> {
        let only = query.map(|q| q.keys.as_slice());
        let mut conversations = Vec::new();
        for (key, span) in conversation_spans(p, max_tasks, only) {
            let line = rollouts.read_span(span)?;
            let row: serde_json::Value = serde_json::from_slice(&line).map_err(|e| {
                crate::render::RenderError::InputChanged {
                    file: rollouts_name.to_string(),
                    line: span.line,
                    message: e.to_string(),
                }
            })?;
            conversations.push((key, crate::conversation::conversation(&row)));
        }
        Ok(ReportInput::from_profile(p, meta, conversations))
    }
}
