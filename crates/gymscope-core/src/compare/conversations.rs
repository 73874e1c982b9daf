//! Both runs' conversations of the first N regressed tasks, for the report: which lines to read
//! ([`lines_needed`], so the web app can fetch them ahead) and reading them ([`read`]) through a
//! [`LineSource`] per side (the CLI seeks in the files).

use super::side::{RunKind, RunTasks};
use super::{CompareError, Comparison, PairedTask};
use crate::conversation::{conversation, Conversation};
use crate::read::jsonl::LineSpan;
use crate::render::LineSource;

/// The most rollouts of one task and one run that a page embeds: the first ones in file order.
/// A task of 20,000 rollouts made a 271 MB comparison page from 1.2 GB of memory; the page says
/// how many of how many it shows.
pub const MAX_SHOWN_ROLLOUTS: usize = 8;

/// The lines of one task of `run` that a page shows: at most [`MAX_SHOWN_ROLLOUTS`].
fn shown_lines(run: &RunTasks, pos: usize) -> &[super::LineRef] {
    let t = &run.tasks[pos];
    let lines = &run.lines[t.lines.start as usize..t.lines.end as usize];
    &lines[..lines.len().min(MAX_SHOWN_ROLLOUTS)]
}

/// One side of one task: its rollouts' conversations (rollout index, conversation), or, from a
/// profiling file, the prompt of its `sample` alone (rollout `None`).
pub type SideConversations = Vec<(Option<i64>, Conversation)>;

/// A regressed task's conversations in A and in B.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct PairConversations {
    pub task_a: i64,
    pub task_b: i64,
    pub a: SideConversations,
    pub b: SideConversations,
}

/// The first `n` regressed tasks, worst first.
pub fn shown_tasks(c: &Comparison, n: usize) -> impl Iterator<Item = &PairedTask> {
    c.tasks
        .iter()
        .filter(|t| t.delta.is_some_and(|d| d < 0.0))
        .take(n)
}

/// The lines of A's and of B's files that [`read`] will ask for.
pub fn lines_needed(
    c: &Comparison,
    a: &RunTasks,
    b: &RunTasks,
    n: usize,
) -> (Vec<LineSpan>, Vec<LineSpan>) {
    let spans = |run: &RunTasks, pos: usize| {
        shown_lines(run, pos)
            .iter()
            .map(|l| l.span)
            .collect::<Vec<_>>()
    };
    let (mut la, mut lb) = (Vec::new(), Vec::new());
    for t in shown_tasks(c, n) {
        la.extend(spans(a, t.pos_a));
        lb.extend(spans(b, t.pos_b));
    }
    (la, lb)
}

/// Both runs' conversations of one paired task (`c.tasks[index]`), for a side-by-side view.
pub fn task_conversations(
    c: &Comparison,
    index: usize,
    (a, file_a, src_a): (&RunTasks, &str, &mut dyn LineSource),
    (b, file_b, src_b): (&RunTasks, &str, &mut dyn LineSource),
) -> Result<PairConversations, CompareError> {
    let t = c.tasks.get(index).ok_or_else(|| CompareError::Sample {
        file: c.a_name.clone(),
        line: 0,
        message: format!("no paired task {index}"),
    })?;
    Ok(PairConversations {
        task_a: t.task_a,
        task_b: t.task_b,
        a: side(a, t.pos_a, file_a, src_a)?,
        b: side(b, t.pos_b, file_b, src_b)?,
    })
}

/// Reads the conversations of the first `n` regressed tasks; `file_a`/`file_b` name the files
/// the sources read (rollouts, or the profiling file) in errors.
pub fn read(
    c: &Comparison,
    (a, file_a, src_a): (&RunTasks, &str, &mut dyn LineSource),
    (b, file_b, src_b): (&RunTasks, &str, &mut dyn LineSource),
    n: usize,
) -> Result<Vec<PairConversations>, CompareError> {
    let mut out = Vec::new();
    for t in shown_tasks(c, n) {
        out.push(PairConversations {
            task_a: t.task_a,
            task_b: t.task_b,
            a: side(a, t.pos_a, file_a, src_a)?,
            b: side(b, t.pos_b, file_b, src_b)?,
        });
    }
    Ok(out)
}

fn side(
    run: &RunTasks,
    pos: usize,
    file: &str,
    src: &mut dyn LineSource,
) -> Result<SideConversations, CompareError> {
    let mut out = Vec::new();
    for l in shown_lines(run, pos) {
        let bytes = src.read_span(l.span)?;
        let row: serde_json::Value =
            serde_json::from_slice(&bytes).map_err(|e| CompareError::Sample {
                file: file.to_string(),
                line: l.span.line,
                message: format!("changed since it was read ({e}); run again"),
            })?;
        let c = match run.kind {
            RunKind::Run => conversation(&row),
            // An aggregate's tasks have no lines, so this loop never reaches one.
            RunKind::Aggregate => Conversation::default(),
            RunKind::ProfilingFile => Conversation {
                input: row
                    .get("sample")
                    .map(conversation)
                    .unwrap_or_default()
                    .input,
                ..Conversation::default()
            },
        };
        out.push((l.rollout, c));
    }
    Ok(out)
}
