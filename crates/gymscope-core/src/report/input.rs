//! [`ReportInput`] from a freshly computed [`Profile`], and which rollout lines its
//! conversations need (the caller reads them: the CLI by seeking, the web app from the `File`).

use super::{Points, ReportInput, ReportMeta};
use crate::conversation::Conversation;
use crate::error::RolloutKey;
use crate::gym::keys::{ROLLOUT_INDEX, TASK_INDEX};
use crate::jsonl::LineSpan;
use crate::profile::Profile;
use crate::record::Reward;
use crate::table;

/// The rollouts of the first `max_tasks` tasks, with the span of each one's line in the
/// rollouts file, ascending key.
pub fn conversation_spans(p: &Profile, max_tasks: usize) -> Vec<(RolloutKey, LineSpan)> {
    p.tasks
        .iter()
        .take(max_tasks)
        .flat_map(|t| {
            p.rollouts[t.rollouts.clone()]
                .iter()
                .map(|r| (r.key, r.span))
        })
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
        ReportInput {
            meta,
            summary: p.summary,
            summary_note: None,
            warnings: p.warnings.clone(),
            agents: Some(table::agent_table(p)),
            tasks: table::task_table(p),
            points: points(p),
            conversations,
            prompts: Vec::new(),
            health: None,
        }
    }
}

/// The fields `rollout_infos` would hold, without the id and the two indices: a same-named
/// top-level field replaces a usage field in its place, as `render` writes them.
fn points(p: &Profile) -> Points {
    let mut pts = Points::default();
    let mut row: Vec<(&str, f64)> = Vec::new();
    for (i, r) in p.rollouts.iter().enumerate() {
        pts.task.push(r.key.task);
        pts.rollout.push(r.key.rollout);
        pts.agent.push(p.rollout_agent[i]);
        pts.reward.push(match &r.reward {
            Some(Reward::Num(n)) => Some(n.as_f64()),
            _ => None,
        });
        row.clear();
        for (k, v) in r.usage_numbers().chain(r.top_numbers()) {
            let name = p.keys.name(k);
            if matches!(name, TASK_INDEX | ROLLOUT_INDEX | "rollout_id" | "reward") {
                continue;
            }
            match row.iter_mut().find(|(n, _)| *n == name) {
                Some(slot) => slot.1 = v.as_f64(),
                None => row.push((name, v.as_f64())),
            }
        }
        push_row(&mut pts, i, &row);
    }
    pts
}

/// Appends rollout `i`'s fields, adding columns (filled with `None` so far) for new names.
pub(super) fn push_row(pts: &mut Points, i: usize, row: &[(&str, f64)]) {
    for &(name, _) in row {
        if !pts.fields.iter().any(|f| f == name) {
            pts.fields.push(name.to_string());
            pts.values.push(vec![None; i]);
        }
    }
    for (f, column) in pts.fields.iter().zip(pts.values.iter_mut()) {
        column.push(row.iter().find(|(n, _)| n == f).map(|&(_, v)| v));
    }
}

impl ReportInput {
    /// The report of a profiled run: the conversations of its first `max_tasks` tasks are read
    /// back from the rollouts file by span. The CLI and the web app both make reports this way.
    pub fn from_run(
        p: &Profile,
        meta: ReportMeta,
        rollouts: &mut dyn crate::render::LineSource,
        rollouts_name: &str,
        max_tasks: usize,
    ) -> Result<ReportInput, crate::render::RenderError> {
        let mut conversations = Vec::new();
        for (key, span) in conversation_spans(p, max_tasks) {
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
