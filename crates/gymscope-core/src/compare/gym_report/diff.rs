//! One agent's comparison block (v0.7.0 `nemo_gym/comparison/diff.py`): a row per primary
//! metric either side reports, the Welch interval of the difference over per-repeat values, the
//! per-task flips of the reward, and the notes.

use super::load::LoadedRun;
use crate::gym::metric_names::is_primary;
use serde_json::{json, Map, Value};
use std::collections::{BTreeMap, HashSet};

/// Flips shown per direction, and the cap on kept per-repeat reward lists (`MAX_FLIPS_SHOWN`).
pub const MAX_FLIPS_SHOWN: usize = 10;
const PASS_THRESHOLD: f64 = 0.5;

/// A number that is not a bool (`_numeric`).
fn numeric(v: Option<&Value>) -> Option<f64> {
    v.and_then(Value::as_f64)
}

fn float(v: Option<f64>) -> Value {
    v.map_or(Value::Null, Value::from)
}

/// One side's reading of a metric (`MetricValue`).
#[derive(Clone, Copy, Debug)]
struct Reading {
    value: f64,
    ci_low: Option<f64>,
    ci_high: Option<f64>,
    se: Option<f64>,
    mean_across: Option<f64>,
    std_err_across_runs: Option<f64>,
}

impl Reading {
    fn of(metrics: &Map<String, Value>, name: &str) -> Option<Reading> {
        let get = |k: String| numeric(metrics.get(&k));
        Some(Reading {
            value: numeric(metrics.get(name))?,
            ci_low: get(format!("ci_low_95_across_repeats/{name}")),
            ci_high: get(format!("ci_high_95_across_repeats/{name}")),
            se: get(format!("se_across_repeats/{name}")),
            mean_across: get(format!("mean_across_repeats/{name}")),
            std_err_across_runs: get(format!("{name}/std_err_across_runs")),
        })
    }
    /// The compared value: the mean across repeats when recorded.
    fn point(&self) -> f64 {
        self.mean_across.unwrap_or(self.value)
    }
    fn to_map(self) -> Map<String, Value> {
        let mut m = Map::new();
        m.insert("value".into(), Value::from(self.value));
        m.insert("ci_low".into(), float(self.ci_low));
        m.insert("ci_high".into(), float(self.ci_high));
        m.insert("se_across_repeats".into(), float(self.se));
        m.insert("mean_across_repeats".into(), float(self.mean_across));
        m.insert(
            "std_err_across_runs".into(),
            float(self.std_err_across_runs),
        );
        m
    }
}

/// `{**key_metrics, **agent_metrics}`: key metrics' order, agent metrics' values.
fn merged(run: &LoadedRun) -> Map<String, Value> {
    let mut m = run.key_metrics.clone();
    for (k, v) in run.agent_metrics {
        m.insert(k.clone(), v.clone());
    }
    m
}

/// Finite per-repeat values of `name` (`_repeat_metric_values`).
fn repeat_values(run: &LoadedRun, name: &str) -> Vec<f64> {
    run.repeats
        .iter()
        .filter_map(|e| e.as_object())
        .filter_map(|e| numeric(e.get(name)))
        .filter(|v| v.is_finite())
        .collect()
}

fn mean(v: &[f64]) -> f64 {
    crate::stats::pairwise_sum(v) / v.len() as f64
}

fn sample_variance(v: &[f64], m: f64) -> f64 {
    let squares: Vec<f64> = v.iter().map(|x| (x - m) * (x - m)).collect();
    crate::stats::pairwise_sum(&squares) / (v.len() as f64 - 1.0)
}

/// scipy's `ttest_ind(cand, base, equal_var=False).confidence_interval(0.95)`: the difference
/// of means ± the t quantile at Welch's (fractional) degrees of freedom times its standard
/// error. With no spread on either side scipy gives the difference itself as both bounds.
pub(crate) fn welch_interval(cand: &[f64], base: &[f64]) -> (Option<f64>, Option<f64>) {
    let (mc, mb) = (mean(cand), mean(base));
    let finite = |x: f64| x.is_finite().then_some(x);
    let vn_c = sample_variance(cand, mc) / cand.len() as f64;
    let vn_b = sample_variance(base, mb) / base.len() as f64;
    let se2 = vn_c + vn_b;
    let df = se2 * se2
        / (vn_c * vn_c / (cand.len() as f64 - 1.0) + vn_b * vn_b / (base.len() as f64 - 1.0));
    if se2 == 0.0 {
        return (finite(mc - mb), finite(mc - mb));
    }
    if !df.is_finite() {
        return (None, None);
    }
    let q = crate::compare::aggregate::student_quantile_975(df);
    let (d, se) = (mc - mb, se2.sqrt());
    let (lo, hi) = (d - q * se, d + q * se);
    (finite(lo), finite(hi))
}

fn welch_delta(base: &LoadedRun, cand: &LoadedRun, name: &str) -> (Option<f64>, Option<f64>) {
    let across = format!("mean_across_repeats/{name}");
    if [base, cand]
        .iter()
        .any(|r| numeric(r.agent_metrics.get(&across)).is_none())
    {
        return (None, None);
    }
    let (b, c) = (repeat_values(base, name), repeat_values(cand, name));
    if b.len() < 2 || c.len() < 2 {
        return (None, None);
    }
    welch_interval(&c, &b)
}

/// Metric names: the baseline's numeric names in order, then the candidates' new ones.
fn ordered_names<'a>(
    base: &'a Map<String, Value>,
    cands: &'a [Map<String, Value>],
) -> Vec<&'a str> {
    let mut seen = HashSet::new();
    std::iter::once(base)
        .chain(cands)
        .flat_map(|m| m.iter())
        .filter(|(_, v)| v.is_number())
        .map(|(k, _)| k.as_str())
        .filter(|k| seen.insert(*k))
        .collect()
}

/// One row per primary metric (`build_metric_rows`).
fn metric_rows(base: &LoadedRun, cands: &[LoadedRun]) -> Vec<Map<String, Value>> {
    let base_metrics = merged(base);
    let cand_metrics: Vec<Map<String, Value>> = cands.iter().map(merged).collect();
    let key_names: HashSet<&str> = std::iter::once(base)
        .chain(cands)
        .flat_map(|r| r.key_metrics.keys().map(String::as_str))
        .collect();
    let mut rows = Vec::new();
    for name in ordered_names(&base_metrics, &cand_metrics) {
        if !is_primary(name) {
            continue;
        }
        let base_reading = Reading::of(&base_metrics, name);
        let base_point = base_reading.map(|r| r.point());
        let mut present_in: Vec<Value> = Vec::new();
        if base_reading.is_some() {
            present_in.push("baseline".into());
        }
        let mut cand_values = Vec::new();
        for (i, (cand, metrics)) in cands.iter().zip(&cand_metrics).enumerate() {
            let Some(reading) = Reading::of(metrics, name) else {
                cand_values.push(Value::Null);
                continue;
            };
            present_in.push(format!("candidate[{i}]").into());
            let (lo, hi) = if base_reading.is_some() {
                welch_delta(base, cand, name)
            } else {
                (None, None)
            };
            let value = reading.point();
            let delta = base_point.map(|b| value - b);
            let delta_pct = match (delta, base_point) {
                (Some(d), Some(b)) if b != 0.0 => Some(d / b.abs() * 100.0),
                _ => None,
            };
            let mut m = reading.to_map();
            m.insert("delta".into(), float(delta));
            m.insert("delta_pct".into(), float(delta_pct));
            m.insert("delta_ci_low".into(), float(lo));
            m.insert("delta_ci_high".into(), float(hi));
            cand_values.push(Value::Object(m));
        }
        let mut row = Map::new();
        row.insert("metric".into(), name.into());
        row.insert("is_key_metric".into(), key_names.contains(name).into());
        row.insert("present_in".into(), present_in.into());
        row.insert(
            "baseline".into(),
            base_reading.map_or(Value::Null, |r| Value::Object(r.to_map())),
        );
        row.insert("candidates".into(), cand_values.into());
        rows.push(row);
    }
    rows
}

/// Task entries by `_ng_task_index` (integers; a later entry of an index replaces an earlier).
fn groups_by_task<'a>(run: &'a LoadedRun) -> BTreeMap<i64, &'a Map<String, Value>> {
    run.groups
        .iter()
        .filter_map(Value::as_object)
        .filter_map(|g| {
            g.get("_ng_task_index")
                .and_then(Value::as_i64)
                .map(|t| (t, g))
        })
        .collect()
}

/// A task's rewards by repeat, when every rollout has a numeric one (`_per_repeat_rewards`).
fn per_repeat_rewards(group: &Map<String, Value>) -> Value {
    let Some(infos) = group.get("rollout_infos").and_then(Value::as_array) else {
        return Value::Null;
    };
    if infos.is_empty() {
        return Value::Null;
    }
    let mut ordered: Vec<&Value> = infos.iter().collect();
    let index = |v: &Value| numeric(v.get("_ng_rollout_index")).unwrap_or(0.0);
    ordered.sort_by(|a, b| {
        index(a)
            .partial_cmp(&index(b))
            .unwrap_or(std::cmp::Ordering::Equal)
    });
    let rewards: Option<Vec<Value>> = ordered
        .iter()
        .map(|i| numeric(i.get("reward")).map(Value::from))
        .collect();
    rewards.map_or(Value::Null, Value::from)
}

/// Every task's min and max reward (else its mean) is exactly 0 or 1 on both sides.
fn looks_binary(tasks: &[i64], sides: [&BTreeMap<i64, &Map<String, Value>>; 2]) -> bool {
    tasks.iter().all(|t| {
        sides.iter().all(|groups| {
            let g = groups[t];
            let mut observed: Vec<&Value> = ["min/reward", "max/reward"]
                .iter()
                .filter_map(|k| g.get(*k).filter(|v| !v.is_null()))
                .collect();
            if observed.is_empty() {
                observed.push(g.get("mean/reward").unwrap_or(&Value::Null));
            }
            observed
                .iter()
                .all(|v| numeric(Some(v)).is_some_and(|x| x == 0.0 || x == 1.0))
        })
    })
}

struct Flip {
    task: i64,
    base: f64,
    cand: f64,
    direction: &'static str,
}

impl Flip {
    fn delta(&self) -> f64 {
        self.cand - self.base
    }
}

fn flip_values(
    flips: &[Flip],
    base_groups: &BTreeMap<i64, &Map<String, Value>>,
    cand_groups: &BTreeMap<i64, &Map<String, Value>>,
) -> Vec<Value> {
    let mut per_direction: BTreeMap<&str, usize> = BTreeMap::new();
    flips
        .iter()
        .map(|f| {
            let n = per_direction.entry(f.direction).or_default();
            *n += 1;
            let keep = *n <= MAX_FLIPS_SHOWN;
            let rewards = |g: &BTreeMap<i64, &Map<String, Value>>| {
                if keep {
                    per_repeat_rewards(g[&f.task])
                } else {
                    Value::Null
                }
            };
            json!({
                "task_index": f.task,
                "baseline_score": f.base,
                "candidate_score": f.cand,
                "delta": f.delta(),
                "direction": f.direction,
                "baseline_rewards": rewards(base_groups),
                "candidate_rewards": rewards(cand_groups),
            })
        })
        .collect()
}

/// Per-task movement of the reward, tasks joined on `_ng_task_index` (`build_flip_summary`).
fn flip_summary(base: &LoadedRun, cand: &LoadedRun, index: usize) -> Value {
    let bg = groups_by_task(base);
    let cg = groups_by_task(cand);
    let common: Vec<i64> = bg.keys().copied().filter(|t| cg.contains_key(t)).collect();
    let mut s = Map::new();
    s.insert("candidate_index".into(), index.into());
    s.insert("mode".into(), "unavailable".into());
    s.insert("reason".into(), Value::Null);
    s.insert("field".into(), "reward".into());
    s.insert("common_task_count".into(), common.len().into());
    s.insert(
        "baseline_only_task_count".into(),
        bg.keys().filter(|t| !cg.contains_key(t)).count().into(),
    );
    s.insert(
        "candidate_only_task_count".into(),
        cg.keys().filter(|t| !bg.contains_key(t)).count().into(),
    );
    for k in [
        "pass_to_fail_count",
        "fail_to_pass_count",
        "tied_count",
        "unchanged_count",
        "net",
    ] {
        s.insert(k.into(), Value::Null);
    }
    s.insert("flips".into(), json!([]));
    let reason = if bg.is_empty() || cg.is_empty() {
        Some("one or both runs recorded no per-task metrics.".to_string())
    } else if common.is_empty() {
        Some(format!(
            "no overlapping task indices (baseline has {}, candidate has {}).",
            bg.len(),
            cg.len()
        ))
    } else {
        None
    };
    if let Some(r) = reason {
        s.insert("reason".into(), r.into());
        return Value::Object(s);
    }
    let scored: Vec<(i64, f64, f64)> = common
        .iter()
        .filter_map(|t| {
            Some((
                *t,
                numeric(bg[t].get("mean/reward"))?,
                numeric(cg[t].get("mean/reward"))?,
            ))
        })
        .collect();
    if scored.is_empty() {
        s.insert(
            "reason".into(),
            "no `mean/reward` recorded for the overlapping tasks.".into(),
        );
        return Value::Object(s);
    }
    let tasks: Vec<i64> = scored.iter().map(|(t, _, _)| *t).collect();
    let by_size = |a: &Flip, b: &Flip| {
        b.delta()
            .abs()
            .partial_cmp(&a.delta().abs())
            .unwrap_or(std::cmp::Ordering::Equal)
            .then(a.task.cmp(&b.task))
    };
    if !looks_binary(&tasks, [&bg, &cg]) {
        let mut movers: Vec<Flip> = scored
            .iter()
            .filter(|(_, b, c)| c != b)
            .map(|&(task, base, cand)| Flip {
                task,
                base,
                cand,
                direction: "changed",
            })
            .collect();
        movers.sort_by(by_size);
        s.insert("mode".into(), "continuous".into());
        s.insert(
            "unchanged_count".into(),
            (scored.len() - movers.len()).into(),
        );
        s.insert("flips".into(), flip_values(&movers, &bg, &cg).into());
        return Value::Object(s);
    }
    let (mut tied, mut unchanged) = (0usize, 0usize);
    let mut flips = Vec::new();
    for &(task, base, cand) in &scored {
        let (bp, cp) = (base > PASS_THRESHOLD, cand > PASS_THRESHOLD);
        let direction = if base == PASS_THRESHOLD || cand == PASS_THRESHOLD {
            None
        } else if bp && !cp {
            Some("pass_to_fail")
        } else if cp && !bp {
            Some("fail_to_pass")
        } else {
            None
        };
        match direction {
            Some(direction) => flips.push(Flip {
                task,
                base,
                cand,
                direction,
            }),
            None if base == PASS_THRESHOLD || cand == PASS_THRESHOLD => tied += 1,
            None => unchanged += 1,
        }
    }
    flips.sort_by(|a, b| {
        (a.direction != "pass_to_fail")
            .cmp(&(b.direction != "pass_to_fail"))
            .then_with(|| by_size(a, b))
    });
    let pass_to_fail = flips
        .iter()
        .filter(|f| f.direction == "pass_to_fail")
        .count();
    let fail_to_pass = flips.len() - pass_to_fail;
    s.insert("mode".into(), "binary".into());
    s.insert("pass_to_fail_count".into(), pass_to_fail.into());
    s.insert("fail_to_pass_count".into(), fail_to_pass.into());
    s.insert("tied_count".into(), tied.into());
    s.insert("unchanged_count".into(), unchanged.into());
    s.insert(
        "net".into(),
        (fail_to_pass as i64 - pass_to_fail as i64).into(),
    );
    s.insert("flips".into(), flip_values(&flips, &bg, &cg).into());
    Value::Object(s)
}

fn first_five(mut names: Vec<&str>) -> String {
    names.sort_unstable();
    names.truncate(5);
    if names.is_empty() {
        "none".into()
    } else {
        names.join(", ")
    }
}

/// One agent's block (`compare_runs`): rows, flips and notes; an error when the sides share no
/// metric.
pub fn compare_agent(base: &LoadedRun, cands: &[LoadedRun]) -> Result<Map<String, Value>, String> {
    let rows = metric_rows(base, cands);
    let has_base = |r: &Map<String, Value>| !r["baseline"].is_null();
    let has_cand = |r: &Map<String, Value>| {
        r["candidates"]
            .as_array()
            .is_some_and(|c| c.iter().any(|v| !v.is_null()))
    };
    if !rows.iter().any(|r| has_base(r) && has_cand(r)) {
        fn name(r: &Map<String, Value>) -> &str {
            r["metric"].as_str().unwrap_or("")
        }
        let base_only: Vec<&str> = rows.iter().filter(|r| has_base(r)).map(name).collect();
        let cand_only: Vec<&str> = rows.iter().filter(|r| !has_base(r)).map(name).collect();
        return Err(format!(
            "Baseline and candidate share no metric keys, so there is nothing to compare.\n  \
             baseline-only (first 5): {}\n  candidate-only (first 5): {}\nRuns collected with \
             different --num-repeats produce different pass@k metric names.",
            first_five(base_only),
            first_five(cand_only)
        ));
    }
    let mut notes: Vec<String> = Vec::new();
    let counts: Vec<Option<i64>> = cands.iter().map(|c| c.num_repeats).collect();
    if let Some(b) = base.num_repeats {
        if counts.iter().any(|c| c.is_some_and(|c| c != b)) {
            let listed: Vec<String> = counts
                .iter()
                .map(|c| c.map_or("None".to_string(), |c| c.to_string()))
                .collect();
            notes.push(format!(
                "Repeat counts differ (baseline {b}, candidate {}). Metric names that embed k \
                 (e.g. pass@1[avg-of-k]) will not line up across the runs.",
                listed.join(", ")
            ));
        }
    }
    if !base.has_repeat_cis && !cands.iter().any(|c| c.has_repeat_cis) {
        notes.push(
            "Neither run recorded per-run cross-repeat confidence intervals, so every \
             baseline/candidate CI cell is empty. They are written for repeat-aggregated metrics \
             when a run has 2 or more repeats."
                .into(),
        );
    }
    let one_sided = rows
        .iter()
        .filter(|r| r["present_in"].as_array().map_or(0, Vec::len) < 1 + cands.len())
        .count();
    if one_sided > 0 {
        notes.push(format!(
            "{one_sided} metric(s) were reported by only one of the runs."
        ));
    }
    let mut m = Map::new();
    m.insert("baseline_agent".into(), base.agent.into());
    m.insert(
        "candidate_agents".into(),
        cands.iter().map(|c| c.agent).collect::<Vec<_>>().into(),
    );
    m.insert("baseline_task_count".into(), base.groups.len().into());
    m.insert(
        "candidate_task_counts".into(),
        cands
            .iter()
            .map(|c| c.groups.len())
            .collect::<Vec<_>>()
            .into(),
    );
    m.insert("baseline_repeat_count".into(), base.num_repeats.into());
    m.insert("candidate_repeat_counts".into(), counts.into());
    m.insert(
        "metrics".into(),
        rows.into_iter().map(Value::Object).collect(),
    );
    m.insert(
        "flips".into(),
        cands
            .iter()
            .enumerate()
            .map(|(i, c)| flip_summary(base, c, i))
            .collect(),
    );
    m.insert("notes".into(), notes.into());
    Ok(m)
}
