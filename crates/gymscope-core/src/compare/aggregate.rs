//! Runs given only as NeMo Gym's `*_aggregate_metrics.json` (what `gym eval compare` reads): a
//! JSON array with one entry per agent, `{"agent_ref": {"name"}, "agent_metrics": {"mean/reward",
//! …}, "group_level_metrics": [{"mean/reward", "min/reward", "max/reward", …, "sample": {…}}]}`
//! (NeMo Gym's docs, "Aggregate Metrics"; one `group_level_metrics` entry per task).
//!
//! When every task entry names its `_ng_task_index` (in `sample` or beside it), the file becomes a
//! [`RunTasks`] whose tasks pair with another run's by index (never by content: an aggregate
//! carries no prompt), and everything else is as for rollouts: a task's mean is its
//! `mean/reward`, its reward group follows `min/reward` and `max/reward` (all succeed when the
//! minimum does, all fail when the maximum does not), and its other `mean/<field>` values are
//! fields. Otherwise the runs can only be compared as independent samples of per-task means:
//! [`welch`].

use super::side::{AgentNames, RunKind, RunTasks, TaskEntry};
use super::verdict::erfc;
use super::{CompareError, TaskKey};
use serde_json::{Map, Value};

/// One task entry of an aggregate file.
#[derive(Clone, Debug, PartialEq)]
pub struct AggregateTask {
    pub task: Option<i64>,
    pub agent: Option<String>,
    pub mean: Option<f64>,
    pub min: Option<f64>,
    pub max: Option<f64>,
    /// `mean/<field>` for every numeric field but the reward.
    pub fields: Vec<(String, f64)>,
}

/// A parsed `*_aggregate_metrics.json`.
#[derive(Clone, Debug, PartialEq)]
pub struct AggregateFile {
    pub name: String,
    /// Per agent: its name and `agent_metrics["mean/reward"]`.
    pub agents: Vec<(String, Option<f64>)>,
    pub tasks: Vec<AggregateTask>,
}

fn bad(file: &str, at: String, message: &str) -> CompareError {
    CompareError::Aggregate {
        file: file.to_string(),
        at,
        message: message.to_string(),
    }
}

fn number(v: Option<&Value>) -> Option<f64> {
    v.and_then(Value::as_f64).filter(|x| x.is_finite())
}

pub fn read_aggregate(bytes: &[u8], file: &str, name: &str) -> Result<AggregateFile, CompareError> {
    let doc: Value = serde_json::from_slice(bytes).map_err(|e| {
        bad(
            file,
            format!("line {} column {}", e.line(), e.column()),
            &format!("not JSON: {e}"),
        )
    })?;
    let Value::Array(entries) = doc else {
        return Err(bad(file, "top level".into(), "expected an array of agents"));
    };
    let mut out = AggregateFile {
        name: name.to_string(),
        agents: Vec::new(),
        tasks: Vec::new(),
    };
    for (i, entry) in entries.iter().enumerate() {
        let Value::Object(entry) = entry else {
            return Err(bad(file, format!("[{i}]"), "expected an object per agent"));
        };
        let agent = entry
            .get("agent_ref")
            .and_then(|r| r.get("name"))
            .and_then(Value::as_str)
            .map(str::to_string);
        let mean = number(
            entry
                .get("agent_metrics")
                .and_then(|m| m.get("mean/reward")),
        );
        out.agents.push((agent.clone().unwrap_or_default(), mean));
        let groups = match entry.get("group_level_metrics") {
            None | Some(Value::Null) => continue,
            Some(Value::Array(g)) => g,
            Some(_) => {
                return Err(bad(
                    file,
                    format!("[{i}].group_level_metrics"),
                    "expected an array",
                ))
            }
        };
        for (j, g) in groups.iter().enumerate() {
            let at = || format!("[{i}].group_level_metrics[{j}]");
            let Value::Object(g) = g else {
                return Err(bad(file, at(), "expected an object per task"));
            };
            out.tasks
                .push(task_of(g, agent.clone()).map_err(|m| bad(file, at(), m))?);
        }
    }
    Ok(out)
}

fn task_of(g: &Map<String, Value>, agent: Option<String>) -> Result<AggregateTask, &'static str> {
    let index = g
        .get("sample")
        .and_then(|s| s.get("_ng_task_index"))
        .or_else(|| g.get("_ng_task_index"));
    let task = match index {
        None | Some(Value::Null) => None,
        Some(v) => Some(v.as_i64().ok_or("_ng_task_index is not an integer")?),
    };
    let mean = match g.get("mean/reward") {
        None | Some(Value::Null) => None,
        Some(v) => Some(
            v.as_f64()
                .filter(|x| x.is_finite())
                .ok_or("mean/reward is not a finite number")?,
        ),
    };
    let fields = g
        .iter()
        .filter_map(|(k, v)| {
            let field = k.strip_prefix("mean/")?;
            (field != "reward").then_some(())?;
            Some((field.to_string(), number(Some(v))?))
        })
        .collect();
    Ok(AggregateTask {
        task,
        agent,
        mean,
        min: number(g.get("min/reward")),
        max: number(g.get("max/reward")),
        fields,
    })
}

impl AggregateFile {
    /// Whether every task names its index (and there is a task): then it pairs by index.
    pub fn indexed(&self) -> bool {
        !self.tasks.is_empty() && self.tasks.iter().all(|t| t.task.is_some())
    }

    /// The per-task mean rewards (for the unpaired comparison).
    pub fn task_means(&self) -> Vec<f64> {
        self.tasks.iter().filter_map(|t| t.mean).collect()
    }

    /// As a [`RunTasks`] paired by index ([`Self::indexed`] files only: a task without an
    /// index is left out). Its rewards are the task's minimum and maximum (or its mean alone),
    /// which give the reward group; its mean is the file's `mean/reward`.
    pub fn to_run_tasks(&self) -> RunTasks {
        let mut fields: Vec<String> = Vec::new();
        for t in &self.tasks {
            for (f, _) in &t.fields {
                if !fields.contains(f) {
                    fields.push(f.clone());
                }
            }
        }
        let mut agents = AgentNames::default();
        let mut rewards = Vec::new();
        let mut tasks: Vec<TaskEntry> = Vec::with_capacity(self.tasks.len());
        for t in &self.tasks {
            let Some(index) = t.task else { continue };
            let start = rewards.len() as u32;
            match (t.min, t.max, t.mean) {
                (Some(lo), Some(hi), _) => rewards.extend([lo, hi]),
                (_, _, Some(m)) => rewards.push(m),
                _ => {}
            }
            let mut means = vec![f64::NAN; fields.len()];
            for (f, v) in &t.fields {
                if let Some(k) = fields.iter().position(|x| x == f) {
                    means[k] = *v;
                }
            }
            tasks.push(TaskEntry {
                task: index,
                key: TaskKey::of_row(&Value::from(index), &mut Vec::new()),
                agent: agents.id(t.agent.clone()),
                rollouts: (rewards.len() as u32 - start).max(1),
                mean_reward: t.mean,
                rewards: start..rewards.len() as u32,
                means,
                lines: 0..0,
            });
        }
        tasks.sort_by_key(|t| t.task);
        RunTasks {
            kind: RunKind::Aggregate,
            name: self.name.clone(),
            fields,
            agents: agents.names,
            tasks,
            rewards,
            lines: Vec::new(),
            warnings: Vec::new(),
        }
    }
}

/// Welch's unpaired comparison of two samples' means (candidate − baseline).
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Welch {
    pub n_a: usize,
    pub n_b: usize,
    pub a: f64,
    pub b: f64,
    pub delta: f64,
    /// Welch–Satterthwaite degrees of freedom; `None` when both variances are zero.
    pub df: Option<f64>,
    pub ci95: Option<(f64, f64)>,
    /// Two-sided; 1 when the means are equal and nothing varies.
    pub p: f64,
}

/// Welch's t-test of `b` against `a`; `None` with fewer than two values on a side.
pub fn welch(a: &[f64], b: &[f64]) -> Option<Welch> {
    let stats = |v: &[f64]| {
        let n = v.len() as f64;
        let m = v.iter().sum::<f64>() / n;
        (
            m,
            v.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / (n - 1.0),
        )
    };
    if a.len() < 2 || b.len() < 2 {
        return None;
    }
    let ((ma, va), (mb, vb)) = (stats(a), stats(b));
    let (sa, sb) = (va / a.len() as f64, vb / b.len() as f64);
    let se2 = sa + sb;
    let delta = mb - ma;
    let mut w = Welch {
        n_a: a.len(),
        n_b: b.len(),
        a: ma,
        b: mb,
        delta,
        df: None,
        ci95: None,
        p: if delta == 0.0 { 1.0 } else { 0.0 },
    };
    if se2 <= 0.0 {
        return Some(w);
    }
    let df = se2 * se2 / (sa * sa / (a.len() - 1) as f64 + sb * sb / (b.len() - 1) as f64);
    let t = delta / se2.sqrt();
    w.df = Some(df);
    w.p = student_two_sided(t, df);
    let q = student_quantile_975(df);
    w.ci95 = Some((delta - q * se2.sqrt(), delta + q * se2.sqrt()));
    Some(w)
}

/// `P(|T| ≥ |t|)` for Student's t with `df` degrees of freedom: the regularized incomplete
/// beta `I_{df/(df+t²)}(df/2, 1/2)`.
pub fn student_two_sided(t: f64, df: f64) -> f64 {
    if df > 1e6 {
        return erfc(t.abs() / std::f64::consts::SQRT_2);
    }
    incomplete_beta(df / 2.0, 0.5, df / (df + t * t)).clamp(0.0, 1.0)
}

/// The t distribution's 97.5th percentile, by bisection on [`student_two_sided`].
pub(crate) fn student_quantile_975(df: f64) -> f64 {
    let (mut lo, mut hi) = (0.0, 1000.0);
    for _ in 0..100 {
        let mid = f64::midpoint(lo, hi);
        if student_two_sided(mid, df) > 0.05 {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    f64::midpoint(lo, hi)
}

/// The regularized incomplete beta function `I_x(a, b)` (Numerical Recipes' continued
/// fraction, with the symmetry `I_x(a, b) = 1 − I_{1−x}(b, a)` where it converges faster).
fn incomplete_beta(a: f64, b: f64, x: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    if x >= 1.0 {
        return 1.0;
    }
    let ln_front = ln_gamma(a + b) - ln_gamma(a) - ln_gamma(b) + a * x.ln() + b * (1.0 - x).ln();
    if x < (a + 1.0) / (a + b + 2.0) {
        ln_front.exp() * beta_fraction(a, b, x) / a
    } else {
        1.0 - ln_front.exp() * beta_fraction(b, a, 1.0 - x) / b
    }
}

fn beta_fraction(a: f64, b: f64, x: f64) -> f64 {
    const TINY: f64 = 1e-300;
    let (qab, qap, qam) = (a + b, a + 1.0, a - 1.0);
    let mut c = 1.0;
    let mut d = 1.0 - qab * x / qap;
    if d.abs() < TINY {
        d = TINY;
    }
    d = 1.0 / d;
    let mut h = d;
    for m in 1..300 {
        let m = f64::from(m);
        let m2 = 2.0 * m;
        for aa in [
            m * (b - m) * x / ((qam + m2) * (a + m2)),
            -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2)),
        ] {
            d = 1.0 + aa * d;
            if d.abs() < TINY {
                d = TINY;
            }
            c = 1.0 + aa / c;
            if c.abs() < TINY {
                c = TINY;
            }
            d = 1.0 / d;
            h *= d * c;
        }
        if (d * c - 1.0).abs() < 1e-15 {
            break;
        }
    }
    h
}

/// `ln Γ(x)` for `x > 0` (Lanczos, g = 7, 9 terms: 15 digits).
fn ln_gamma(x: f64) -> f64 {
    const G: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        let pi = std::f64::consts::PI;
        return (pi / (pi * x).sin()).ln() - ln_gamma(1.0 - x);
    }
    let x = x - 1.0;
    let mut s = G[0];
    for (i, g) in G.iter().enumerate().skip(1) {
        s += g / (x + i as f64);
    }
    let t = x + 7.5;
    0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + s.ln()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn student_t_against_tables() {
        // t tables: P(|T| ≥ 2.228) = 0.05 at 10 df; P(|T| ≥ 1.0) = 2 (1 − 0.8184) at 5 df.
        assert!((student_two_sided(2.228_138_85, 10.0) - 0.05).abs() < 1e-7);
        assert!((student_two_sided(1.0, 5.0) - 0.363_217).abs() < 1e-5);
        assert!((student_quantile_975(10.0) - 2.228_138_85).abs() < 1e-6);
        assert_eq!(student_two_sided(0.0, 7.0), 1.0);
    }

    #[test]
    fn welch_by_hand() {
        // a: mean 2, var 1 (n 3); b: mean 4, var 4 (n 3). se² = 1/3 + 4/3 = 5/3, t = 2/√(5/3)
        // = 1.549; df = (5/3)² / ((1/3)²/2 + (4/3)²/2) = 2.778/0.9444 = 2.941.
        let w = welch(&[1.0, 2.0, 3.0], &[2.0, 4.0, 6.0]).unwrap();
        assert_eq!((w.a, w.b, w.delta), (2.0, 4.0, 2.0));
        assert!((w.df.unwrap() - 2.941_176).abs() < 1e-5);
        let t = 2.0 / (5.0f64 / 3.0).sqrt();
        assert!((w.p - student_two_sided(t, w.df.unwrap())).abs() < 1e-15);
        assert!(w.p > 0.2 && w.p < 0.25, "{}", w.p);
        let same = welch(&[1.0, 1.0], &[1.0, 1.0]).unwrap();
        assert_eq!((same.p, same.df), (1.0, None));
        assert_eq!(welch(&[1.0], &[1.0, 2.0]), None);
    }

    #[test]
    fn errors_name_the_file_and_the_entry() {
        let e = read_aggregate(b"{}", "x_aggregate_metrics.json", "x").unwrap_err();
        assert!(e.to_string().contains("x_aggregate_metrics.json"), "{e}");
        let e = read_aggregate(
            br#"[{"agent_ref": {"name": "a"}, "group_level_metrics": [{"mean/reward": 1}, {"mean/reward": "high"}]}]"#,
            "f.json",
            "f",
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("f.json")
                && e.contains("[0].group_level_metrics[1]")
                && e.contains("mean/reward"),
            "{e}"
        );
        let e = read_aggregate(b"[1,", "g.json", "g")
            .unwrap_err()
            .to_string();
        assert!(e.contains("g.json") && e.contains("line 1"), "{e}");
    }
}
