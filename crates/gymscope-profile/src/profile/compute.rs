//! The statistics: columns in upstream's order, task rows, agent rows, completion summary.

use super::scan::{InputRow, ScanState};
use super::{
    AgentKey, AgentProfile, ColumnSummaries, ColumnSummary, CompletionSummary, Profile,
    ProfileBuilder, ProfileOptions, RolloutRecord, TaskProfile, NO_COLUMN,
};
use crate::error::ProfileError;
use crate::error::RolloutKey;
use crate::fast_map::{FastMap, FastSet};
use crate::json::Num;
use crate::record::{key, IndexKind, KeyId};
use crate::stats::{self, Scratch};
use std::borrow::Cow;

type AgentId = u32;

impl ProfileBuilder {
    /// Ends the rollouts file, runs upstream's checks and computes the profile.
    pub fn finish(self, options: ProfileOptions) -> Result<Profile, ProfileError> {
        let (scan, inputs_file, threads) = self.end_scan(options)?;
        Ok(compute(scan, &inputs_file, threads))
    }
}

/// Sorts the matched rollouts, sets the masked ones apart, and computes task rows, agent rows,
/// repeat-level entries, coverage and the completion summary, in NeMo Gym v0.7.0's order
/// (`cli/eval.py` `reward_profile`); with `threads` > 1 (natively), on two threads.
fn compute(scan: ScanState, inputs_file: &str, threads: usize) -> Profile {
    let ScanState {
        keys,
        inputs,
        input_index,
        mut rollouts,
        rollout_index,
        ..
    } = scan;
    rollouts.sort_unstable_by_key(|r| r.key);
    // Coverage and completion count every result, masked or not.
    let coverage = super::coverage::by_agent(&inputs, &input_index, &rollouts);
    let runs = super::labels::Runs::of(&inputs);
    let summary = completion_summary(&inputs, &runs.of_input, &rollout_index);
    let (mut rollouts, masked): (Vec<RolloutRecord>, Vec<RolloutRecord>) =
        rollouts.into_iter().partition(|r| !r.masked);
    let masked_keys: FastSet<RolloutKey> = masked.iter().map(|r| r.key).collect();
    let measured = |input: &InputRow| !masked_keys.contains(&input.key);
    let labels = runs.labels(&inputs, &measured);

    // Columns: numeric keys in first-seen order over rollouts in key order, except upstream's
    // `_`-prefixed keys and the mask flag.
    let metric_key: Vec<bool> = (0..keys.len())
        .map(|k| is_metric_column(k as KeyId, keys.name(k as KeyId)))
        .collect();
    let mut columns: Vec<KeyId> = Vec::new();
    // Each key's column (`NO_COLUMN` if none), indexed by key id: looked up for every value.
    let mut column_of: Vec<u32> = vec![NO_COLUMN; keys.len()];
    let mut present_everywhere_as_int: Vec<usize> = Vec::new(); // per column: rollouts with an int
    for r in &rollouts {
        r.metric_values(|k, v| {
            if metric_key[k as usize] {
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

    // A task run by several agents (labels) has a row per agent.
    let fan_out = {
        let mut tasks = FastSet::<i64>::default();
        let mut pairs = FastSet::<(i64, u32)>::default();
        for (input, &run) in inputs.iter().zip(&runs.of_input) {
            if measured(input) {
                tasks.insert(input.key.task);
                pairs.insert((input.key.task, run));
            }
        }
        pairs.len() > tasks.len()
    };

    // Agents: the input row's run label, replaced by a numeric `agent_name` field as upstream's
    // frame does.
    let mut warnings = Vec::new();
    // Looked up by borrowed name: a rollout costs no allocation (an agent's key is owned once).
    let mut agent_ids: FastMap<(Cow<'_, str>, bool), AgentId> = FastMap::default();
    let mut agent_keys: Vec<AgentKey> = Vec::new();
    let mut rollout_agent: Vec<Option<AgentId>> = Vec::with_capacity(rollouts.len());
    let mut rollout_run: Vec<u32> = Vec::with_capacity(rollouts.len());
    let mut no_agent = (0usize, u64::MAX);
    let agent_of = |r: &RolloutRecord| {
        let run = runs.of_input[input_index[&r.key] as usize];
        let mut agent = labels[run as usize]
            .as_ref()
            .map(|l| (Cow::Borrowed(&*l.name), l.numeric));
        r.metric_values(|k, v| {
            if k == key::AGENT_NAME {
                agent = Some((Cow::Owned(AgentKey::from_num(v).name.into()), true));
            }
        });
        agent
    };
    let float_names = float_agent_names(rollouts.iter().map(agent_of));
    for r in &rollouts {
        let at = input_index[&r.key] as usize;
        rollout_run.push(runs.of_input[at]);
        let agent = agent_of(r).map(|(name, numeric)| {
            if numeric && float_names {
                (Cow::Owned(as_float_name(&name)), true)
            } else {
                (name, numeric)
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
            no_agent = (no_agent.0 + 1, no_agent.1.min(inputs[at].span.line));
        }
    }
    if no_agent.0 > 0 {
        warnings.push(format!(
            "{} rollouts have no agent name (`_ng_environment_server` and `agent_ref.name` missing or null in '{}', first at line {}): \
             they are in the task rows but not in the agent metrics",
            no_agent.0, inputs_file, no_agent.1
        ));
    }

    // Groups of task rows: a task, or in a fan-out run a task and a label (labels in code point
    // order, rollouts without one in no row).
    let label_rank = ranks_of(&labels);
    let group_of = |task: i64, run: u32| -> (i64, u32) {
        if fan_out {
            (task, label_rank[run as usize])
        } else {
            (task, 0)
        }
    };
    if fan_out {
        let mut order: Vec<usize> = (0..rollouts.len()).collect();
        order.sort_by_key(|&i| {
            (
                group_of(rollouts[i].key.task, rollout_run[i]),
                rollouts[i].key,
            )
        });
        rollouts = permute(rollouts, &order);
        rollout_agent = order.iter().map(|&i| rollout_agent[i]).collect();
        rollout_run = order.iter().map(|&i| rollout_run[i]).collect();
    }
    let mut expected_by_group: FastMap<(i64, u32), usize> = FastMap::default();
    for (input, &run) in inputs.iter().zip(&runs.of_input) {
        if measured(input) {
            *expected_by_group
                .entry(group_of(input.key.task, run))
                .or_default() += 1;
        }
    }
    let mut bounds = Vec::new();
    let mut start = 0;
    while start < rollouts.len() {
        let group = group_of(rollouts[start].key.task, rollout_run[start]);
        let end = start
            + (start..rollouts.len())
                .take_while(|&i| group_of(rollouts[i].key.task, rollout_run[i]) == group)
                .count();
        if group.1 != NO_RANK {
            bounds.push(start..end);
        }
        start = end;
    }
    // How pandas writes the `_ng_task_index` of a task row (the matched rows' indices): a bool
    // column as bools, a numeric one as floats when any is a float. A column mixing bools with
    // numbers is of objects: its groups are keyed by each task's first row in (task, rollout)
    // order (`True` and `1.0` are one key), and the keys' index is then inferred again (floats
    // if any is a float and none a bool; each as it was read otherwise).
    let task_kind_of = |r: &RolloutRecord| inputs[input_index[&r.key] as usize].task_kind;
    let first_kinds: FastMap<i64, (i64, IndexKind)> = {
        let mut first: FastMap<i64, (i64, IndexKind)> = FastMap::default();
        for r in &rollouts {
            let entry = first
                .entry(r.key.task)
                .or_insert((r.key.rollout, task_kind_of(r)));
            if r.key.rollout < entry.0 {
                *entry = (r.key.rollout, task_kind_of(r));
            }
        }
        first
    };
    let column_kind = {
        let count = |kind: IndexKind, kinds: &mut dyn Iterator<Item = IndexKind>| {
            kinds.filter(|k| *k == kind).count()
        };
        let bools = count(IndexKind::Bool, &mut rollouts.iter().map(task_kind_of));
        let floats = count(IndexKind::Float, &mut rollouts.iter().map(task_kind_of));
        if bools > 0 && bools == rollouts.len() {
            Some(IndexKind::Bool)
        } else if bools > 0 {
            let uniques = first_kinds.values().map(|(_, k)| *k);
            let (b, f) = uniques.fold((false, false), |(b, f), k| {
                (b || k == IndexKind::Bool, f || k == IndexKind::Float)
            });
            match (b, f) {
                (true, _) => None,
                (false, true) => Some(IndexKind::Float),
                (false, false) => Some(IndexKind::Int),
            }
        } else if floats > 0 {
            Some(IndexKind::Float)
        } else {
            Some(IndexKind::Int)
        }
    };
    let new_grouper = || Grouper::new(columns.len(), &column_of, all_int);
    let task_rows = |bounds: &[std::ops::Range<usize>]| -> Vec<TaskProfile> {
        let mut grouper = new_grouper();
        let mut members = Vec::new();
        bounds
            .iter()
            .map(|range| {
                let first = &rollouts[range.start];
                let run = rollout_run[range.start];
                members.clear();
                members.extend(range.clone());
                TaskProfile {
                    task: first.key.task,
                    task_kind: column_kind.unwrap_or_else(|| {
                        first_kinds
                            .get(&first.key.task)
                            .map_or(IndexKind::Int, |f| f.1)
                    }),
                    agent: if fan_out {
                        labels[run as usize].clone()
                    } else {
                        None
                    },
                    columns: grouper.summarize(&rollouts, &members),
                    sample: inputs[input_index[&first.key] as usize].span,
                    num_rollouts: range.len(),
                    expected_num_rollouts: expected_by_group[&group_of(first.key.task, run)],
                    rollouts: range.clone(),
                }
            })
            .collect()
    };
    // With threads, the agents' statistics are computed on another thread meanwhile, with the
    // last tasks': the same values grouped otherwise, an agent's placed by counting, cost about
    // 40% of the tasks' (perf: 127 against 330 samples on 25,000 tasks of 4), so the other
    // thread takes the last [`TASKS_BESIDE_AGENTS`] of the tasks and both end together.
    let (tasks, mut agents) = if threads > 1 && rollouts.len() >= PARALLEL_ROLLOUTS {
        let split = bounds.len() - bounds.len() * TASKS_BESIDE_AGENTS.0 / TASKS_BESIDE_AGENTS.1;
        let (first, last) = bounds.split_at(split);
        std::thread::scope(|scope| {
            let other = scope.spawn(|| {
                let agents = agent_rows(&mut new_grouper(), &rollouts, agent_keys, &rollout_agent);
                (task_rows(last), agents)
            });
            let mut tasks = task_rows(first);
            // A panic there is a bug; carried on here as it happened there.
            let (last_tasks, agents) = other
                .join()
                .unwrap_or_else(|e| std::panic::resume_unwind(e));
            tasks.extend(last_tasks);
            (tasks, agents)
        })
    } else {
        let tasks = task_rows(&bounds);
        let agents = agent_rows(&mut new_grouper(), &rollouts, agent_keys, &rollout_agent);
        (tasks, agents)
    };

    agents.sort_by(|a, b| agent_order(&a.1.agent, &b.1.agent));
    // Each rollout's agent as a position in the sorted list.
    let mut position = vec![0usize; agents.len()];
    for (at, (id, _)) in agents.iter().enumerate() {
        position[*id as usize] = at;
    }
    let rollout_agent: Vec<Option<usize>> = rollout_agent
        .iter()
        .map(|a| a.map(|id| position[id as usize]))
        .collect();
    let mut agents: Vec<AgentProfile> = agents.into_iter().map(|(_, a)| a).collect();

    let agent_names: Vec<AgentKey> = agents.iter().map(|a| a.agent.clone()).collect();
    let (repeats, warning) = super::repeats::repeat_entries(
        &rollouts,
        &rollout_agent,
        &columns,
        &column_of,
        &keys,
        &agent_names,
    );
    warnings.extend(warning);
    let across = super::repeats::across_repeats(&repeats, &columns, &keys, &agent_names);
    for (agent, across) in agents.iter_mut().zip(across) {
        agent.across = across;
    }
    let mut coverage_only = Vec::new();
    for (name, c) in coverage {
        match agents.iter_mut().find(|a| a.agent == name) {
            Some(agent) => agent.coverage = Some(c),
            None => coverage_only.push((name, c)),
        }
    }

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
        masked,
        repeats,
        coverage_only,
    }
}

/// The rank of a run without a label (it sorts last and is in no fan-out task row).
const NO_RANK: u32 = u32::MAX;

/// Each run's label's rank in code point order (as the agents are sorted).
fn ranks_of(labels: &[Option<AgentKey>]) -> Vec<u32> {
    let mut order: Vec<usize> = (0..labels.len()).filter(|&i| labels[i].is_some()).collect();
    order.sort_by(|&a, &b| {
        agent_order(
            labels[a].as_ref().expect("labelled"),
            labels[b].as_ref().expect("labelled"),
        )
    });
    let mut rank = vec![NO_RANK; labels.len()];
    for (r, i) in order.into_iter().enumerate() {
        rank[i] = r as u32;
    }
    rank
}

/// `items` in the order of `order` (a permutation of its indices).
fn permute<T>(items: Vec<T>, order: &[usize]) -> Vec<T> {
    let mut slots: Vec<Option<T>> = items.into_iter().map(Some).collect();
    order
        .iter()
        .map(|&i| slots[i].take().expect("a permutation"))
        .collect()
}

/// The share of the tasks (numerator, denominator) computed beside the agents when on two
/// threads: (1 - 0.4) / 2 ≈ 3/10 of the tasks' cost evens the threads out.
const TASKS_BESIDE_AGENTS: (usize, usize) = (3, 10);

/// Below this many rollouts everything is computed on one thread (a thread costs more).
const PARALLEL_ROLLOUTS: usize = 20_000;

/// Agent rows: over rollouts (not task means), each with its agent's id, unsorted.
fn agent_rows(
    grouper: &mut Grouper,
    rollouts: &[RolloutRecord],
    agent_keys: Vec<AgentKey>,
    rollout_agent: &[Option<AgentId>],
) -> Vec<(AgentId, AgentProfile)> {
    let mut members_by_agent: Vec<Vec<usize>> = vec![Vec::new(); agent_keys.len()];
    for (i, agent) in rollout_agent.iter().enumerate() {
        if let Some(a) = agent {
            members_by_agent[*a as usize].push(i);
        }
    }
    agent_keys
        .into_iter()
        .zip(members_by_agent)
        .enumerate()
        .map(|(id, (agent, members))| {
            let columns = grouper.summarize(rollouts, &members);
            (
                id as AgentId,
                AgentProfile {
                    columns,
                    num_rollouts: members.len(),
                    agent,
                    across: Vec::new(),
                    coverage: None,
                },
            )
        })
        .collect()
}

/// Whether upstream's `agent_name` column is float64: every name a number (or missing, NaN), at
/// least one a number, and one a float or missing. pandas then writes every name as a float
/// (`7.0`), and names equal as floats (`7`, `7.0`) are one agent.
fn float_agent_names<'a>(agents: impl Iterator<Item = Option<(Cow<'a, str>, bool)>>) -> bool {
    let (mut any_number, mut any_float) = (false, false);
    for agent in agents {
        match agent {
            None => any_float = true,
            Some((_, false)) => return false,
            Some((name, true)) => {
                any_number = true;
                any_float |= name.contains(['.', 'e', 'E']);
            }
        }
    }
    any_number && any_float
}

/// A numeric name's JSON text as a float's (`7` → `7.0`).
fn as_float_name(name: &str) -> String {
    let mut buf = Vec::new();
    let _ = crate::json::write_f64(&mut buf, name.parse::<f64>().unwrap_or(f64::NAN));
    String::from_utf8_lossy(&buf).into_owned()
}

/// The metric columns are the numeric fields except the agent override, the mask flag and
/// every key that starts with `_` (v0.7.0 skips them all; the row keys among them).
fn is_metric_column(k: KeyId, name: &str) -> bool {
    k != key::AGENT_NAME && !name.starts_with('_') && name != crate::gym::keys::MASK_SAMPLE
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

/// v0.7.0's completion summary (`profile_completion_summary`): over every materialized row and
/// result, masked ones included, by (task, run key), so that one agent's missing rollouts of a
/// fan-out task are not hidden behind another's.
fn completion_summary(
    inputs: &[InputRow],
    run_of_input: &[u32],
    rollout_index: &FastMap<RolloutKey, u32>,
) -> CompletionSummary {
    let mut groups: FastMap<(i64, u32), (usize, usize)> = FastMap::default();
    let mut completed = 0;
    for (input, &run) in inputs.iter().zip(run_of_input) {
        let done = rollout_index.contains_key(&input.key);
        completed += usize::from(done);
        let group = groups.entry((input.key.task, run)).or_default();
        group.0 += 1;
        group.1 += usize::from(done);
    }
    let mut s = CompletionSummary {
        expected_rollout_rows: inputs.len(),
        completed_rollout_rows: completed,
        total_input_rows: groups.len(),
        ..CompletionSummary::default()
    };
    for &(expected, done) in groups.values() {
        if done == expected {
            s.complete_input_rows += 1;
        } else if done > 0 {
            s.partial_input_rows += 1;
        } else {
            s.missing_input_rows += 1;
        }
    }
    s
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
    /// `column` with its missing values filled, for the max and min.
    filled: Vec<f64>,
    scratch: Scratch,
}

impl<'a> Grouper<'a> {
    fn new(width: usize, column_of: &'a [u32], all_int: bool) -> Self {
        Grouper {
            column_of,
            width,
            all_int,
            cells: Vec::new(),
            starts: Vec::new(),
            sorted: Vec::new(),
            column: Vec::new(),
            filled: Vec::new(),
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
                // pandas' `DataFrame.max`/`min`: NaN filled with -inf/+inf, then numpy's
                // reduction, whose lanes decide between -0.0 and 0.0.
                let mx = stats::nan_max(&self.column, &mut self.filled);
                let mn = stats::nan_min(&self.column, &mut self.filled);
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

#[cfg(test)]
mod tests {
    use crate::output::{render_in_memory, RenderedProfile};
    use crate::profile::{ProfileBuilder, ProfileOptions};
    use std::fmt::Write as _;

    fn rendered(inputs: &str, rollouts: &str, threads: usize) -> RenderedProfile {
        let mut b = ProfileBuilder::new("i", "r").with_threads(threads);
        b.push_inputs(inputs.as_bytes()).unwrap();
        b.push_rollouts(rollouts.as_bytes()).unwrap();
        let p = b.finish(ProfileOptions::default()).unwrap();
        render_in_memory(&p, inputs.as_bytes(), "i").unwrap()
    }

    #[test]
    fn two_threads_give_the_one_thread_profile() {
        let (mut inputs, mut rollouts) = (String::new(), String::new());
        let n = super::PARALLEL_ROLLOUTS + 4_321;
        for i in 0..n {
            // Tasks of 1 to 5 rollouts, listed out of order; agents by name, one by number;
            // sparse and mixed int/float columns.
            let (task, rollout) = (i / 3 + i % 2 * 7, i % 3 + i % 2 * 3);
            let agent = ["a", "b", "c"][task % 3];
            let _ = writeln!(
                inputs,
                r#"{{"_ng_task_index":{task},"_ng_rollout_index":{rollout},"agent_ref":{{"name":"{agent}"}}}}"#
            );
            let mut extra = String::new();
            if i % 7 == 0 {
                let _ = write!(extra, r#","sparse_{}":{}.5"#, i % 4, i % 11);
            }
            if i % 1000 == 0 {
                extra.push_str(r#","agent_name":3"#);
            }
            let _ = writeln!(
                rollouts,
                r#"{{"_ng_rollout_index":{rollout},"reward":{},"score":{}{extra},"response":{{"usage":{{"input_tokens":{}}}}},"_ng_task_index":{task}}}"#,
                i % 2,
                (i * 37 % 101) as f64 / 8.0,
                i * 13 % 997
            );
        }
        let lines: Vec<&str> = rollouts.lines().collect();
        let shuffled: String = (0..lines.len())
            .map(|k| format!("{}\n", lines[(k * 7919) % lines.len()]))
            .collect();
        let one = rendered(&inputs, &shuffled, 1);
        let two = rendered(&inputs, &shuffled, 2);
        assert!(one.reward_profiling.len() > 1_000_000);
        assert_eq!(one.reward_profiling, two.reward_profiling);
        assert_eq!(one.agent_metrics, two.agent_metrics);
    }
}
