//! The statistics: columns in upstream's order, task rows, agent rows, completion summary.

use super::scan::{InputRow, ScanState};
use super::{
    AgentKey, AgentProfile, ColumnSummaries, ColumnSummary, CompletionSummary, Profile,
    RolloutRecord, TaskProfile,
};
use crate::fast_map::FastMap;
use crate::json::Num;
use crate::record::{key, AgentField, KeyId};
use crate::stats::Scratch;
use std::borrow::Cow;

type AgentId = u32;

/// Sorts the matched rollouts and computes task rows, agent rows and the completion summary.
pub(super) fn compute(scan: ScanState, inputs_file: &str) -> Profile {
    let ScanState {
        keys,
        inputs,
        input_index,
        mut rollouts,
        ..
    } = scan;
    rollouts.sort_unstable_by_key(|r| r.key);

    // Columns: numeric keys in first-seen order over rollouts in key order.
    let mut columns: Vec<KeyId> = Vec::new();
    // Each key's column (`NO_COLUMN` if none), indexed by key id: looked up for every value.
    let mut column_of: Vec<u32> = vec![NO_COLUMN; keys.len()];
    let mut present_everywhere_as_int: Vec<usize> = Vec::new(); // per column: rollouts with an int
    for r in &rollouts {
        r.metric_values(|k, v| {
            if is_metric_column(k) {
                let slot = &mut column_of[k as usize];
                if *slot == NO_COLUMN {
                    *slot = columns.len() as u32;
                    columns.push(k);
                    present_everywhere_as_int.push(0);
                }
                let c = *slot as usize;
                if matches!(v, Num::Int(_)) {
                    present_everywhere_as_int[c] += 1;
                }
            }
        });
    }
    let all_int = present_everywhere_as_int
        .iter()
        .all(|&n| n == rollouts.len());

    // Agents: the input row's agent_ref.name (or the rollout's, when the input has none),
    // replaced by a numeric `agent_name` field as upstream's frame does.
    let mut warnings = Vec::new();
    // Looked up by borrowed name: a rollout costs no allocation (an agent's key is owned once).
    let mut agent_ids: FastMap<(Cow<'_, str>, bool), AgentId> = FastMap::default();
    let mut agent_keys: Vec<AgentKey> = Vec::new();
    let mut rollout_agent: Vec<Option<AgentId>> = Vec::with_capacity(rollouts.len());
    let mut no_agent = (0usize, u64::MAX);
    for r in &rollouts {
        let input = &inputs[input_index[&r.key] as usize];
        let mut agent = match (&input.agent, &r.agent) {
            (AgentField::NoAgentRef | AgentField::NoName, fallback) => agent_key(fallback),
            (field, _) => agent_key(field),
        };
        r.metric_values(|k, v| {
            if k == key::AGENT_NAME {
                agent = Some((Cow::Owned(AgentKey::from_num(v).name.into()), true));
            }
        });
        rollout_agent.push(agent.map(|a| {
            if let Some(&id) = agent_ids.get(&a) {
                return id;
            }
            let id = agent_keys.len() as AgentId;
            agent_keys.push(AgentKey {
                name: a.0.as_ref().into(),
                numeric: a.1,
            });
            agent_ids.insert(a, id);
            id
        }));
        if rollout_agent.last() == Some(&None) {
            no_agent = (no_agent.0 + 1, no_agent.1.min(input.span.line));
        }
    }
    if no_agent.0 > 0 {
        warnings.push(format!(
                "{} rollouts have no agent name (`agent_ref.name` missing or null in '{}', first at line {}): \
                 they are in the task rows but not in the agent metrics",
                no_agent.0, inputs_file, no_agent.1
            ));
    }

    let mut grouper = Grouper::new(&columns, &column_of, all_int);

    // Task rows: rollouts of one task are contiguous in key order.
    let mut expected_by_task: FastMap<i64, usize> = FastMap::default();
    for input in &inputs {
        *expected_by_task.entry(input.key.task).or_default() += 1;
    }
    let mut tasks = Vec::new();
    let mut start = 0;
    while start < rollouts.len() {
        let task = rollouts[start].key.task;
        let end = start
            + rollouts[start..]
                .iter()
                .take_while(|r| r.key.task == task)
                .count();
        let members: Vec<usize> = (start..end).collect();
        tasks.push(TaskProfile {
            task,
            columns: grouper.summarize(&rollouts, &members),
            sample: inputs[input_index[&rollouts[start].key] as usize].span,
            num_rollouts: end - start,
            expected_num_rollouts: expected_by_task[&task],
            rollouts: start..end,
        });
        start = end;
    }

    // Agent rows: over rollouts (not task means), sorted by agent key.
    let mut members_by_agent: Vec<Vec<usize>> = vec![Vec::new(); agent_keys.len()];
    for (i, agent) in rollout_agent.iter().enumerate() {
        if let Some(a) = agent {
            members_by_agent[*a as usize].push(i);
        }
    }
    let mut agents: Vec<(AgentId, AgentProfile)> = agent_keys
        .into_iter()
        .zip(members_by_agent)
        .enumerate()
        .map(|(id, (agent, members))| {
            let columns = grouper.summarize(&rollouts, &members);
            (
                id as AgentId,
                AgentProfile {
                    columns,
                    num_rollouts: members.len(),
                    agent,
                },
            )
        })
        .collect();
    agents.sort_by(|a, b| agent_order(&a.1.agent, &b.1.agent));
    // Each rollout's agent as a position in the sorted list.
    let mut position = vec![0usize; agents.len()];
    for (at, (id, _)) in agents.iter().enumerate() {
        position[*id as usize] = at;
    }
    let rollout_agent = rollout_agent
        .iter()
        .map(|a| a.map(|id| position[id as usize]))
        .collect();
    let agents = agents.into_iter().map(|(_, a)| a).collect();

    let summary = completion_summary(&inputs, &expected_by_task, &tasks);
    Profile {
        keys,
        columns,
        all_int,
        tasks,
        agents,
        rollouts,
        summary,
        warnings,
        rollout_agent,
    }
}

/// `column_of`'s mark of a key that is not a metric column.
const NO_COLUMN: u32 = u32::MAX;

/// The metric columns are the numeric fields except the keys and the agent override.
fn is_metric_column(k: KeyId) -> bool {
    !matches!(k, key::TASK_INDEX | key::ROLLOUT_INDEX | key::AGENT_NAME)
}

/// An agent's key as (name, numeric), borrowed from the row when it is a name.
fn agent_key(field: &AgentField) -> Option<(Cow<'_, str>, bool)> {
    match field {
        AgentField::Name(name) => Some((Cow::Borrowed(&**name), false)),
        AgentField::Number(n) => Some((Cow::Owned(AgentKey::from_num(*n).name.into()), true)),
        _ => None,
    }
}

/// Numbers before names (upstream cannot mix them at all), names in code point order.
fn agent_order(a: &AgentKey, b: &AgentKey) -> std::cmp::Ordering {
    match (a.numeric, b.numeric) {
        (true, true) => {
            let parse = |k: &AgentKey| k.name.parse::<f64>().unwrap_or(f64::NAN);
            parse(a).total_cmp(&parse(b))
        }
        (true, false) => std::cmp::Ordering::Less,
        (false, true) => std::cmp::Ordering::Greater,
        (false, false) => a.name.cmp(&b.name),
    }
}

fn completion_summary(
    inputs: &[InputRow],
    expected_by_task: &FastMap<i64, usize>,
    tasks: &[TaskProfile],
) -> CompletionSummary {
    let completed: usize = tasks.iter().map(|t| t.num_rollouts).sum();
    let complete = tasks
        .iter()
        .filter(|t| t.num_rollouts == t.expected_num_rollouts)
        .count();
    let total = expected_by_task.len();
    CompletionSummary {
        expected_rollout_rows: inputs.len(),
        completed_rollout_rows: completed,
        total_input_rows: total,
        complete_input_rows: complete,
        partial_input_rows: tasks.len() - complete,
        missing_input_rows: total - tasks.len(),
    }
}

/// Computes [`ColumnSummaries`] of a group of rollouts, reusing its buffers between groups.
/// Only the columns the group has values in are computed and kept: time and memory follow the
/// data, not groups × columns.
struct Grouper<'a> {
    column_of: &'a [u32],
    width: usize,
    all_int: bool,
    /// (column, row in the group, value) of every metric value in the group.
    cells: Vec<(u32, u32, Num)>,
    /// `sort_cells_by_counting`'s buffers: each column's next slot, and the placed cells.
    starts: Vec<usize>,
    sorted: Vec<(u32, u32, Num)>,
    column: Vec<f64>,
    scratch: Scratch,
}

impl<'a> Grouper<'a> {
    fn new(columns: &'a [KeyId], column_of: &'a [u32], all_int: bool) -> Self {
        Grouper {
            column_of,
            width: columns.len(),
            all_int,
            cells: Vec::new(),
            starts: Vec::new(),
            sorted: Vec::new(),
            column: Vec::new(),
            scratch: Scratch::default(),
        }
    }

    /// `cells` ordered by column, keeping the order within a column: counts per column, their
    /// running sums as starts, each cell placed at its column's next slot.
    fn sort_cells_by_counting(&mut self) {
        let starts = &mut self.starts;
        starts.clear();
        starts.resize(self.width + 1, 0);
        for &(c, _, _) in &self.cells {
            starts[c as usize + 1] += 1;
        }
        for c in 0..self.width {
            starts[c + 1] += starts[c];
        }
        self.sorted.clear();
        self.sorted.resize(self.cells.len(), (0, 0, Num::Int(0)));
        for &cell in &self.cells {
            let at = &mut starts[cell.0 as usize];
            self.sorted[*at] = cell;
            *at += 1;
        }
        std::mem::swap(&mut self.cells, &mut self.sorted);
    }

    fn summarize(&mut self, rollouts: &[RolloutRecord], members: &[usize]) -> ColumnSummaries {
        self.cells.clear();
        for (row, &i) in members.iter().enumerate() {
            rollouts[i].metric_values(|k, v| {
                let c = self.column_of[k as usize];
                if c != NO_COLUMN {
                    self.cells.push((c, row as u32, v));
                }
            });
        }
        // Stable: within a column, rows stay in group order (a row has a column at most once).
        // A group with more values than columns (an agent's) is placed by counting, in linear
        // time; a small one (a task's) is sorted.
        if self.cells.len() > self.width {
            self.sort_cells_by_counting();
        } else {
            self.cells.sort_by_key(|&(c, _, _)| c);
        }
        let mut out: Vec<(u32, ColumnSummary, usize)> = Vec::new();
        let mut start = 0;
        while start < self.cells.len() {
            let c = self.cells[start].0;
            let end = start
                + self.cells[start..]
                    .iter()
                    .take_while(|cell| cell.0 == c)
                    .count();
            let cells = &self.cells[start..end];
            // NaN where a rollout has no value: numpy's NaN-skipping sums depend on positions.
            // A lone value is the exception (its sum with zeros is itself, unless it is -0.0), so
            // a column that one rollout of a large group has costs 1, not the group's size.
            self.column.clear();
            match cells {
                [(_, _, v)] if !(v.as_f64() == 0.0 && v.as_f64().is_sign_negative()) => {
                    self.column.push(v.as_f64());
                }
                _ => {
                    self.column.resize(members.len(), f64::NAN);
                    for &(_, row, v) in cells {
                        self.column[row as usize] = v.as_f64();
                    }
                }
            }
            let st = self.scratch.column_stats(&self.column);
            let (max, min) = if self.all_int {
                let ints = cells.iter().filter_map(|(_, _, v)| match v {
                    Num::Int(v) => Some(*v),
                    _ => None,
                });
                let (mx, mn) =
                    ints.fold((None, None), |(mx, mn): (Option<i64>, Option<i64>), v| {
                        (
                            Some(mx.map_or(v, |m| m.max(v))),
                            Some(mn.map_or(v, |m| m.min(v))),
                        )
                    });
                (mx.map(Num::Int), mn.map(Num::Int))
            } else {
                let present = self.column.iter().copied().filter(|v| !v.is_nan());
                let (mx, mn) =
                    present.fold((None, None), |(mx, mn): (Option<f64>, Option<f64>), v| {
                        (
                            Some(mx.map_or(v, |m| if v > m { v } else { m })),
                            Some(mn.map_or(v, |m| if v < m { v } else { m })),
                        )
                    });
                (mx.map(Num::Float), mn.map(Num::Float))
            };
            out.push((
                c,
                ColumnSummary {
                    mean: st.mean,
                    max,
                    min,
                    median: st.median,
                    std: st.std,
                },
                st.count,
            ));
            start = end;
        }
        // Upstream: "std is more interpretable as 0 than NaN": only when *every* column's std is
        // NaN, columns with no missing value in the group get std 0. (Columns the group has no
        // value in have NaN std and a count of 0: they change neither side of this rule.)
        if out.iter().all(|(_, s, _)| s.std.is_none()) {
            for (_, s, count) in &mut out {
                if *count == members.len() {
                    s.std = Some(0.0);
                }
            }
        }
        ColumnSummaries::new(
            self.width,
            out.into_iter().map(|(c, s, _)| (c, s)).collect(),
        )
    }
}
