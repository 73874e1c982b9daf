//! `gymscope compare --format json`: one JSON document (schema in the docs/compare.md, "Comparing runs").
//! Keys are written in a fixed order; a number that does not exist (no reward, no tokens) is
//! `null`.

use super::multi::{MultiComparison, RunLabel};
use super::power::{Needed, Power, POWER};
use super::summary::{IntervalMethod, MeanDelta};
use super::verdict::{EXACT_MAX_TASKS, PERMUTATIONS, PERMUTATION_MAX_TASKS};
use super::{Comparison, GroupSummary, BOOTSTRAP_RESAMPLES};
use crate::reward_group::RewardGroup;
use serde_json::{json, Map, Value};

fn num(v: Option<f64>) -> Value {
    v.filter(|v| v.is_finite()).map_or(Value::Null, Value::from)
}

fn mean_delta(m: &MeanDelta, with_ci: bool) -> Value {
    Value::Object(mean_delta_map(m, with_ci))
}

fn mean_delta_map(m: &MeanDelta, with_ci: bool) -> Map<String, Value> {
    let mut o = Map::new();
    o.insert("tasks".into(), m.tasks.into());
    o.insert("a".into(), num(m.a));
    o.insert("b".into(), num(m.b));
    o.insert("delta".into(), num(m.delta));
    if with_ci {
        o.insert(
            "ci95".into(),
            m.ci95.map_or(Value::Null, |(lo, hi)| json!([lo, hi])),
        );
        // Said only where it is not the bootstrap, so smaller runs keep their schema.
        if m.ci95_method == IntervalMethod::Normal {
            o.insert("ci95_method".into(), "normal".into());
        }
    }
    o
}

fn transitions(t: &[[usize; 4]; 4]) -> Value {
    let mut rows = Map::new();
    for (i, from) in RewardGroup::ALL.iter().enumerate() {
        let mut row = Map::new();
        for (j, to) in RewardGroup::ALL.iter().enumerate() {
            row.insert(to.as_str().into(), t[i][j].into());
        }
        rows.insert(from.as_str().into(), Value::Object(row));
    }
    Value::Object(rows)
}

fn group(c: &Comparison, s: &GroupSummary) -> Map<String, Value> {
    let mut o = Map::new();
    o.insert("paired_tasks".into(), s.paired_tasks.into());
    o.insert("mean_reward".into(), mean_delta(&s.mean_reward, true));
    o.insert("transitions".into(), transitions(&s.transitions));
    o.insert("improved".into(), s.improved.into());
    o.insert("regressed".into(), s.regressed.into());
    o.insert("unchanged".into(), s.unchanged.into());
    o.insert("without_reward".into(), s.without_reward.into());
    o.insert("output_tokens".into(), mean_delta(&s.tokens, false));
    let fields: Map<String, Value> = c
        .fields
        .iter()
        .zip(&s.fields)
        .map(|(name, m)| (name.clone(), mean_delta(m, false)))
        .collect();
    o.insert("fields".into(), Value::Object(fields));
    o
}

/// The whole comparison as one JSON value.
pub fn to_json(c: &Comparison) -> Value {
    let mut o = Map::new();
    o.insert("a".into(), json!({"name": c.a_name, "tasks": c.tasks_a}));
    o.insert("b".into(), json!({"name": c.b_name, "tasks": c.tasks_b}));
    o.insert("pair_by".into(), c.options.pair_by.as_str().into());
    o.insert("pass_threshold".into(), c.options.pass_threshold.into());
    o.insert(
        "bootstrap".into(),
        json!({"resamples": BOOTSTRAP_RESAMPLES, "seed": c.options.seed, "rng": "fastrand 2 (wyrand)"}),
    );
    o.insert("only_a".into(), c.only_a.into());
    o.insert("only_b".into(), c.only_b.into());
    o.extend(group(c, &c.overall));
    let agents: Map<String, Value> = c
        .agents
        .iter()
        .map(|(name, s)| (name.clone(), Value::Object(group(c, s))))
        .collect();
    o.insert("agents".into(), Value::Object(agents));
    let tasks: Vec<Value> = c
        .tasks
        .iter()
        .map(|t| {
            json!({
                "task_a": t.task_a,
                "task_b": t.task_b,
                "agent": t.agent,
                "mean_a": num(t.mean_a),
                "mean_b": num(t.mean_b),
                "delta": num(t.delta),
                "group_a": t.group_a.as_str(),
                "group_b": t.group_b.as_str(),
                "tokens_a": num(t.tokens_a),
                "tokens_b": num(t.tokens_b),
                "rollouts_a": t.rollouts_a,
                "rollouts_b": t.rollouts_b,
            })
        })
        .collect();
    o.insert("tasks".into(), Value::Array(tasks));
    o.insert("warnings".into(), json!(c.warnings));
    Value::Object(o)
}

fn run(r: &RunLabel) -> Map<String, Value> {
    let mut o = Map::new();
    o.insert("name".into(), r.label.clone().into());
    o.insert("path".into(), r.path.clone().into());
    o.insert("tasks".into(), r.tasks.into());
    o
}

fn power(p: &Power, alpha: f64) -> Value {
    let needed = match p.needed {
        None => Value::Null,
        Some(Needed::Already) => "already".into(),
        Some(Needed::Repeats(r)) => json!({"repeats": r}),
        Some(Needed::Tasks(n)) => json!({"tasks": n}),
        Some(Needed::TooSmall) => "too_small".into(),
    };
    json!({
        "power": POWER,
        "alpha": alpha,
        "tasks": p.tasks,
        "repeats": num(Some(p.repeats)),
        "variance": num(p.variance),
        "between": num(p.between),
        "within": num(p.within),
        "within_per_rollout": num(p.within_per_rollout),
        "minimum_detectable_effect": num(p.mde),
        "zero_variance": p.variance == Some(0.0),
        "effect": num(p.effect),
        "needed": needed,
    })
}

/// The comparison of several runs: the first candidate's two-run document (its schema
/// unchanged), plus `alpha`, `permutation`, `baseline` and a `candidates` list with every one.
pub fn multi_to_json(m: &MultiComparison) -> Value {
    let Some(first) = m.candidates.first() else {
        return Value::Null;
    };
    let Value::Object(mut o) = to_json(&first.comparison) else {
        return Value::Null;
    };
    o.insert("alpha".into(), m.alpha.into());
    o.insert(
        "permutation".into(),
        json!({"test": "paired sign-flip over tasks, two-sided", "patterns": PERMUTATIONS,
            "exact_up_to_tasks": EXACT_MAX_TASKS, "normal_above_tasks": PERMUTATION_MAX_TASKS,
            "seed": first.comparison.options.seed, "correction": "holm across candidates per metric"}),
    );
    o.insert("baseline".into(), Value::Object(run(&m.baseline)));
    let candidates = m
        .candidates
        .iter()
        .map(|c| {
            let cmp = &c.comparison;
            let metrics: Map<String, Value> = c
                .metrics
                .iter()
                .map(|row| {
                    let mut v = mean_delta_map(&row.mean, row.metric == "reward");
                    v.insert("p".into(), num(row.p.map(|p| p.p)));
                    v.insert(
                        "p_method".into(),
                        row.p.map_or(Value::Null, |p| p.method.as_str().into()),
                    );
                    v.insert("p_holm".into(), num(row.p_holm));
                    v.insert(
                        "verdict".into(),
                        row.verdict.word(row.higher_is_better).into(),
                    );
                    (row.metric.clone(), Value::Object(v))
                })
                .collect();
            let f = &c.flips;
            let mut o = run(&c.run);
            o.insert("paired_tasks".into(), cmp.overall.paired_tasks.into());
            o.insert("metrics".into(), Value::Object(metrics));
            o.insert("power".into(), power(&c.power, m.alpha));
            o.insert(
                "flips".into(),
                json!({"identical": f.identical, "flipped_to_pass": f.flipped_to_pass,
                    "flipped_to_fail": f.flipped_to_fail, "without_reward": f.without_reward,
                    "only_baseline": f.only_baseline, "only_candidate": f.only_candidate}),
            );
            o.insert("warnings".into(), json!(cmp.warnings));
            Value::Object(o)
        })
        .collect();
    o.insert("candidates".into(), Value::Array(candidates));
    Value::Object(o)
}
