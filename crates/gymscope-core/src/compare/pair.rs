//! Pairs A's tasks with B's, by content key (tasks sharing a key pair in task-index order) or by
//! task index, and computes the comparison.

use super::side::{RunTasks, TaskEntry};
use super::summary::{agent_seed, summarize};
use super::{CompareError, CompareOptions, Comparison, PairBy, PairedTask};
use std::cmp::Ordering;
use std::collections::BTreeMap;

/// Compares two sides. Errors only when the threshold is not a number or no task pairs.
pub fn compare(
    a: &RunTasks,
    b: &RunTasks,
    options: CompareOptions,
) -> Result<Comparison, CompareError> {
    if !options.pass_threshold.is_finite() {
        return Err(CompareError::BadThreshold(options.pass_threshold));
    }
    let pairs = match options.pair_by {
        PairBy::Content => join(a, b, |t| t.key),
        PairBy::Index => join(a, b, |t| t.task),
    };
    if pairs.is_empty() {
        return Err(CompareError::NothingInCommon {
            a: a.name.clone(),
            b: b.name.clone(),
            by: options.pair_by.as_str(),
            a_tasks: a.tasks.len(),
            b_tasks: b.tasks.len(),
            hint: match options.pair_by {
                PairBy::Content => "; if the prompts changed on purpose, try --pair-by index",
                PairBy::Index => "",
            },
        });
    }
    let mut warnings: Vec<String> = Vec::new();
    for (side, run) in [("A", a), ("B", b)] {
        warnings.extend(run.warnings.iter().map(|w| format!("{side}: {w}")));
    }
    let smaller = a.tasks.len().min(b.tasks.len());
    if options.pair_by == PairBy::Content && pairs.len() * 2 < smaller {
        warnings.push(format!(
            "only {} of {} tasks paired by content: if the prompts changed between the runs, \
             compare with --pair-by index",
            pairs.len(),
            smaller
        ));
    }

    // Fields in both runs, in A's order; output tokens have their own place. B's fields looked
    // up by name through one index (a row of 100,000 numeric fields searched linearly took 79 s).
    let b_at: crate::fast_map::FastMap<&str, usize> = b
        .fields
        .iter()
        .enumerate()
        .map(|(i, f)| (f.as_str(), i))
        .rev() // the first of a repeated name, as `RunTasks::field` finds it
        .collect();
    let (fa, fb): (Vec<usize>, Vec<usize>) = a
        .fields
        .iter()
        .enumerate()
        .filter(|(_, f)| f.as_str() != "output_tokens")
        .filter_map(|(i, f)| b_at.get(f.as_str()).map(|&j| (i, j)))
        .unzip();
    let fields: Vec<String> = fa.iter().map(|&i| a.fields[i].clone()).collect();
    let (tok_a, tok_b) = (a.field("output_tokens"), b.field("output_tokens"));
    let mut tasks: Vec<PairedTask> = pairs
        .iter()
        .map(|&(i, j)| {
            let (x, y) = (&a.tasks[i], &b.tasks[j]);
            let delta = match (x.mean_reward, y.mean_reward) {
                (Some(m), Some(n)) => Some(n - m),
                _ => None,
            };
            PairedTask {
                task_a: x.task,
                task_b: y.task,
                pos_a: i,
                pos_b: j,
                agent: a.agent_of(x).map(str::to_string),
                rollouts_a: x.rollouts,
                rollouts_b: y.rollouts,
                mean_a: x.mean_reward,
                mean_b: y.mean_reward,
                delta,
                group_a: a.outcomes(x, options.pass_threshold).group(),
                group_b: b.outcomes(y, options.pass_threshold).group(),
                tokens_a: tok_a.and_then(|f| x.mean(f)),
                tokens_b: tok_b.and_then(|f| y.mean(f)),
                fields_a: fa.iter().map(|&f| x.mean(f)).collect(),
                fields_b: fb.iter().map(|&f| y.mean(f)).collect(),
            }
        })
        .collect();
    tasks.sort_by(|x, y| by_delta(x.delta, y.delta).then(x.task_a.cmp(&y.task_a)));

    let all: Vec<&PairedTask> = tasks.iter().collect();
    let overall = summarize(&all, fields.len(), options.seed);
    let mut by_agent: BTreeMap<&str, Vec<&PairedTask>> = BTreeMap::new();
    for t in &tasks {
        by_agent
            .entry(t.agent.as_deref().unwrap_or(""))
            .or_default()
            .push(t);
    }
    let agents = by_agent
        .into_iter()
        .map(|(name, group)| {
            let seed = agent_seed(options.seed, name);
            (name.to_string(), summarize(&group, fields.len(), seed))
        })
        .collect();
    Ok(Comparison {
        options,
        a_name: a.name.clone(),
        b_name: b.name.clone(),
        tasks_a: a.tasks.len(),
        tasks_b: b.tasks.len(),
        only_a: a.tasks.len() - pairs.len(),
        only_b: b.tasks.len() - pairs.len(),
        tasks,
        overall,
        agents,
        fields,
        warnings,
    })
}

/// Ascending delta, tasks without one last.
fn by_delta(x: Option<f64>, y: Option<f64>) -> Ordering {
    match (x, y) {
        (Some(x), Some(y)) => x.total_cmp(&y),
        (Some(_), None) => Ordering::Less,
        (None, Some(_)) => Ordering::Greater,
        (None, None) => Ordering::Equal,
    }
}

/// Positions `(in a, in b)` of the paired tasks: equal keys pair in task-index order.
fn join<K: Ord + Copy>(
    a: &RunTasks,
    b: &RunTasks,
    key: impl Fn(&TaskEntry) -> K,
) -> Vec<(usize, usize)> {
    let sorted = |run: &RunTasks| {
        let mut v: Vec<(K, i64, usize)> = run
            .tasks
            .iter()
            .enumerate()
            .map(|(i, t)| (key(t), t.task, i))
            .collect();
        v.sort_unstable_by(|x, y| x.0.cmp(&y.0).then(x.1.cmp(&y.1)));
        v
    };
    let (sa, sb) = (sorted(a), sorted(b));
    let (mut i, mut j) = (0, 0);
    let mut pairs = Vec::with_capacity(sa.len().min(sb.len()));
    while i < sa.len() && j < sb.len() {
        match sa[i].0.cmp(&sb[j].0) {
            Ordering::Less => i += 1,
            Ordering::Greater => j += 1,
            Ordering::Equal => {
                pairs.push((sa[i].2, sb[j].2));
                i += 1;
                j += 1;
            }
        }
    }
    pairs
}
