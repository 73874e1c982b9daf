//! A query answered from the columns a loaded run holds (keys, agents, the profile's numeric
//! fields, health flags, task means and groups): every point at once, without the file. An
//! expression that names anything else (text, tool calls, a field the profile has no column for)
//! needs the file, and the worker reads it with the same core evaluation as `gymscope query`.
//!
//! The columns are the profile's numbers: a comparison of a numeric field with a number is
//! answered here; with a string, a boolean or null it is read from the file (a column cannot
//! tell `true` from 1 or a string from a missing value). A field that is a boolean in the rows
//! and 0/1 in the profile (`timed_out == 1`) is the one case the two answers differ.

use super::run::RunView;
use crate::query::{Expr, Field, Lit, Query};
use serde_json::Value;

/// Which points an expression keeps, or that it needs the file.
#[derive(Clone, Debug, PartialEq)]
pub enum Answer {
    /// One flag per point (`RunView::points`).
    Points(Vec<bool>),
    NeedsFile,
}

/// A field as a column of the run.
#[derive(Clone, Copy)]
enum Column {
    Task,
    Rollout,
    Agent,
    Metric(usize),
    Flag(u16),
    TaskMean(Option<usize>),
    TaskPassRate,
    TaskGroup,
}

fn column(run: &RunView, field: &Field) -> Option<Column> {
    let metric = |name: &str| run.metric(name).map(Column::Metric);
    Some(match field {
        Field::Task => Column::Task,
        Field::Rollout => Column::Rollout,
        Field::Agent => Column::Agent,
        Field::Reward => metric("reward")?,
        Field::Path(p) | Field::Usage(p) if p.len() == 1 => metric(&p[0])?,
        Field::Health(flag) if !run.cols.point_flags.is_empty() => Column::Flag(flag.bit()),
        Field::TaskMeanReward => Column::TaskMean(run.metric("reward")),
        Field::TaskPassRate => Column::TaskPassRate,
        Field::TaskGroup => Column::TaskGroup,
        _ => return None,
    })
}

/// The points `q` keeps, from the columns alone when it can be.
///
/// Evaluated a column at a time: each predicate over every point (a predicate of the agent once
/// per agent, of a task aggregate once per task, then spread over the points), then `and`,
/// `or` and `not` over the masks, so a query of 100,000 rollouts never builds a value per point
/// and predicate that it does not need (`cargo bench --bench browser_plot`).
pub fn answer(run: &RunView, q: &Query) -> Answer {
    if !answerable(run, q.expr()) {
        return Answer::NeedsFile;
    }
    let mut pass = None;
    Answer::Points(mask(run, q.expr(), &mut pass))
}

fn mask(run: &RunView, e: &Expr, pass: &mut Option<Vec<f64>>) -> Vec<bool> {
    let both = |a: Vec<bool>, b: Vec<bool>, f: fn(bool, bool) -> bool| {
        a.into_iter().zip(b).map(|(x, y)| f(x, y)).collect()
    };
    match e {
        Expr::Or(a, b) => both(mask(run, a, pass), mask(run, b, pass), |x, y| x || y),
        Expr::And(a, b) => both(mask(run, a, pass), mask(run, b, pass), |x, y| x && y),
        Expr::Not(a) => mask(run, a, pass).into_iter().map(|x| !x).collect(),
        Expr::Cmp { field, .. } | Expr::Match { field, .. } | Expr::Truthy(field) => {
            let Some(c) = column(run, field) else {
                return vec![false; run.points()];
            };
            if matches!(c, Column::TaskPassRate) && pass.is_none() {
                *pass = Some(pass_rates(run));
            }
            leaf(run, e, c, pass.as_deref().unwrap_or(&[]))
        }
    }
}

/// One predicate over every point.
fn leaf(run: &RunView, e: &Expr, c: Column, pass: &[f64]) -> Vec<bool> {
    let test = |v: Option<Value>| crate::query::eval_fields(e, &|_| v.clone());
    let n = run.points();
    match c {
        // A few agents, each named once.
        Column::Agent => {
            let by_agent: Vec<bool> = run
                .view
                .agents
                .rows
                .iter()
                .map(|row| test(Some(Value::String(row.key.clone()))))
                .collect();
            let unknown = test(None);
            (0..n)
                .map(|p| {
                    run.cols
                        .point_agent
                        .get(p)
                        .filter(|a| a.is_finite())
                        .and_then(|&a| by_agent.get(a as usize).copied())
                        .unwrap_or(unknown)
                })
                .collect()
        }
        // Task aggregates: once per task, spread over its points.
        Column::TaskMean(_) | Column::TaskPassRate | Column::TaskGroup => {
            let mut out = vec![test(None); n];
            for t in 0..run.view.tasks.len() {
                let kept = test(task_value(run, c, t, pass));
                for p in run.task_points(t) {
                    if let Some(slot) = out.get_mut(p) {
                        *slot = kept;
                    }
                }
            }
            out
        }
        _ => (0..n).map(|p| test(point_value(run, c, p))).collect(),
    }
}

fn answerable(run: &RunView, e: &Expr) -> bool {
    match e {
        Expr::Or(a, b) | Expr::And(a, b) => answerable(run, a) && answerable(run, b),
        Expr::Not(a) => answerable(run, a),
        // A numeric column holds numbers only: what it cannot tell (a boolean, a string, a
        // null beside a value that is not a number) is read from the file.
        Expr::Cmp { field, value, .. } => match column(run, field) {
            Some(Column::Metric(_)) => matches!(value, Lit::Num(_) | Lit::Int(_)),
            Some(_) => true,
            None => false,
        },
        Expr::Truthy(field) => matches!(column(run, field), Some(Column::Flag(_))),
        Expr::Match { field, .. } => matches!(field, Field::Agent | Field::TaskGroup),
    }
}

/// Each task's share of graded rollouts passing at the default threshold.
fn pass_rates(run: &RunView) -> Vec<f64> {
    let Some(m) = run.metric("reward") else {
        return vec![f64::NAN; run.view.tasks.len()];
    };
    (0..run.view.tasks.len())
        .map(|t| {
            let mut o = crate::reward_group::Outcomes::default();
            for p in run.task_points(t) {
                let r = run.value(p, m);
                o.add(
                    (!r.is_nan()).then_some(r),
                    crate::reward_group::DEFAULT_THRESHOLD,
                );
            }
            let n = o.successes + o.failures;
            if n == 0 {
                f64::NAN
            } else {
                f64::from(o.successes) / f64::from(n)
            }
        })
        .collect()
}

fn num(v: f64) -> Option<Value> {
    serde_json::Number::from_f64(v).map(Value::Number)
}

/// A point's own value in column `c` (task aggregates are [`task_value`]'s).
fn point_value(run: &RunView, c: Column, p: usize) -> Option<Value> {
    match c {
        Column::Task => num(run.cols.point_task[p]),
        Column::Rollout => num(run.cols.point_rollout[p]),
        Column::Metric(m) => num(run.value(p, m)),
        Column::Flag(bit) => {
            let bits = run
                .cols
                .point_flags
                .get(p)
                .copied()
                .filter(|b| b.is_finite())?;
            Some(Value::Bool(bits as u16 & bit != 0))
        }
        Column::Agent | Column::TaskMean(_) | Column::TaskPassRate | Column::TaskGroup => None,
    }
}

/// Task `t`'s aggregate in column `c`.
fn task_value(run: &RunView, c: Column, t: usize, pass: &[f64]) -> Option<Value> {
    match c {
        Column::TaskMean(m) => num(run.task_mean(t, m?)),
        Column::TaskPassRate => num(*pass.get(t)?),
        Column::TaskGroup => Some(Value::String(
            run.view.tasks.get(t)?.group.as_str().to_string(),
        )),
        _ => None,
    }
}

/// Per task (index in `view.tasks`), whether any of its points is kept.
pub fn task_mask(run: &RunView, points: &[bool]) -> Vec<bool> {
    (0..run.view.tasks.len())
        .map(|t| {
            run.task_points(t)
                .any(|p| points.get(p).copied().unwrap_or(false))
        })
        .collect()
}

/// The points of the rollouts `keys` names (as the worker's read of the file finds them).
pub fn points_of_keys(run: &RunView, keys: &[(i64, i64)]) -> Vec<bool> {
    let mut out = vec![false; run.points()];
    for &(task, rollout) in keys {
        if let Some(p) = run
            .task_position(task)
            .and_then(|t| run.point_of(t, rollout))
        {
            out[p] = true;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::query::{read_keyed, RunFacts};

    /// Every fixture run loaded as the app loads it, with its rollout lines.
    fn runs() -> Vec<(String, RunView, Vec<String>, Vec<String>)> {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../tests/fixtures/gym-examples");
        let mut out = Vec::new();
        let mut dirs: Vec<_> = std::fs::read_dir(&root)
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .collect();
        dirs.sort();
        for dir in dirs {
            let Ok(inputs) = std::fs::read(dir.join("example_rollouts_materialized_inputs.jsonl"))
            else {
                continue;
            };
            let rollouts = std::fs::read(dir.join("example_rollouts.jsonl")).unwrap();
            let Ok(p) =
                crate::output::profile_bytes(&inputs, "i", &rollouts, "r", Default::default())
            else {
                continue;
            };
            let (view, cols) = crate::inspect::model::build(&p, "i", "r", &Default::default());
            let lines = String::from_utf8(rollouts)
                .unwrap()
                .lines()
                .map(str::to_string)
                .collect();
            let input_lines = String::from_utf8(inputs)
                .unwrap()
                .lines()
                .map(str::to_string)
                .collect();
            out.push((
                dir.display().to_string(),
                RunView::new(view, cols),
                lines,
                input_lines,
            ));
        }
        assert!(out.len() > 8, "{}", out.len());
        out
    }

    fn run() -> (RunView, Vec<String>) {
        let (_, run, lines, _) = runs()
            .into_iter()
            .find(|(d, ..)| d.ends_with("blackjack"))
            .unwrap();
        (run, lines)
    }

    /// What the file's evaluation (`gymscope query`) keeps, as points.
    fn by_file(run: &RunView, lines: &[String], inputs: &[String], expr: &str) -> Vec<bool> {
        let q = Query::parse(expr).unwrap();
        let mut facts = RunFacts {
            pass_threshold: 1.0,
            ..RunFacts::default()
        };
        let mut keys = crate::record::KeyTable::default();
        for l in inputs {
            facts.add_input_line(l.as_bytes(), &mut keys).unwrap();
        }
        facts.label_inputs();
        for l in lines {
            let row = read_keyed(l.as_bytes()).unwrap().unwrap();
            let reward = row
                .reward
                .as_ref()
                .and_then(crate::reward_group::reward_value);
            facts.add_rollout(row.key.0, reward);
        }
        let keys: Vec<(i64, i64)> = lines
            .iter()
            .filter_map(|l| {
                let row = read_keyed(l.as_bytes()).unwrap().unwrap();
                q.matches(l.as_bytes(), row, &facts, &[]).map(|m| m.key)
            })
            .collect();
        points_of_keys(run, &keys)
    }

    #[test]
    fn columns_answer_as_the_file_does() {
        let mut answered = 0;
        for (dir, run, lines, inputs) in runs() {
            for expr in [
                "reward == 1",
                "reward > 0.5 or rollout == 2",
                "not (task == 0 and reward >= 0)",
                "agent == \"blackjack_gymnasium_agent\"",
                "agent ~ /AGENT/i",
                "task.group == \"mixed\" and reward < 1",
                "task.group != \"all_success\"",
                "task.mean_reward > 0.3",
                "task.pass_rate >= 0.5",
                "input_tokens > 100",
                "usage.output_tokens < 200",
                "reward == null",
                "task >= 2 and rollout <= 1",
            ] {
                let q = Query::parse(expr).unwrap();
                if let Answer::Points(points) = answer(&run, &q) {
                    answered += 1;
                    assert_eq!(
                        points,
                        by_file(&run, &lines, &inputs, expr),
                        "{expr} on {dir}"
                    );
                }
            }
        }
        assert!(answered > 100, "{answered}");
    }

    #[test]
    fn text_and_tools_need_the_file() {
        let (run, _) = run();
        for expr in [
            "output ~ \"stand\"",
            "tool_calls > 1",
            "tool == \"x\"",
            "reward == 1 and text ~ \"a\"",
            "verdict == \"healthy\"",
        ] {
            assert_eq!(
                answer(&run, &Query::parse(expr).unwrap()),
                Answer::NeedsFile,
                "{expr}"
            );
        }
    }

    #[test]
    fn a_task_shows_when_any_of_its_rollouts_matches() {
        let (run, _) = run();
        let Answer::Points(p) = answer(&run, &Query::parse("rollout == 0").unwrap()) else {
            panic!()
        };
        let tasks = task_mask(&run, &p);
        assert!(tasks.iter().all(|&t| t), "{tasks:?}");
    }
}
