//! The comparison when tasks cannot be paired: an aggregate-metrics file without task indices
//! (README, "Comparing runs", "Aggregate metrics"). Each candidate's per-task mean rewards
//! against the baseline's as independent samples (Welch's t-test, as `gym eval compare`
//! does), Holm across the candidates, the same verdict words; said in every output.

use super::aggregate::{welch, Welch};
use super::markdown::escape;
use super::multi::RunLabel;
use super::text::{p_value, signed};
use super::verdict::{holm, Verdict};
use crate::table::short_number;
use serde_json::{json, Value};
use std::fmt::Write;

/// Why the runs are not paired, said first in every output.
pub const UNPAIRED_NOTE: &str = "not paired: an aggregate-metrics file without task indices \
     (no `_ng_task_index` in its group_level_metrics); per-task mean rewards compared as \
     independent samples (Welch's t-test)";

#[derive(Clone, Debug, PartialEq)]
pub struct UnpairedRow {
    pub run: RunLabel,
    pub welch: Option<Welch>,
    pub p_holm: Option<f64>,
    pub verdict: Verdict,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Unpaired {
    pub alpha: f64,
    pub baseline: RunLabel,
    pub rows: Vec<UnpairedRow>,
}

/// Judges each candidate's per-task means against the baseline's.
pub fn unpaired(
    baseline: RunLabel,
    base_means: &[f64],
    candidates: Vec<(RunLabel, Vec<f64>)>,
    alpha: f64,
) -> Unpaired {
    let tests: Vec<Option<Welch>> = candidates
        .iter()
        .map(|(_, means)| welch(base_means, means))
        .collect();
    let adjusted = holm(&tests.iter().map(|w| w.map(|w| w.p)).collect::<Vec<_>>());
    let rows = candidates
        .into_iter()
        .zip(tests)
        .zip(adjusted)
        .map(|(((run, _), w), p_holm)| UnpairedRow {
            run,
            verdict: Verdict::of(w.map(|w| w.delta), p_holm, alpha),
            welch: w,
            p_holm,
        })
        .collect();
    Unpaired {
        alpha,
        baseline,
        rows,
    }
}

impl Unpaired {
    pub fn any_worse(&self) -> bool {
        self.rows.iter().any(|r| r.verdict == Verdict::Down)
    }

    pub fn to_json(&self) -> Value {
        let rows: Vec<Value> = self
            .rows
            .iter()
            .map(|r| {
                let w = r.welch;
                json!({
                    "name": r.run.label, "path": r.run.path, "tasks": r.run.tasks,
                    "mean_reward": w.map(|w| json!({
                        "a": w.a, "b": w.b, "delta": w.delta, "tasks_a": w.n_a, "tasks_b": w.n_b,
                        "ci95": w.ci95.map(|(lo, hi)| json!([lo, hi])), "df": w.df,
                        "p": w.p, "p_method": "welch", "p_holm": r.p_holm,
                        "verdict": r.verdict.word(true),
                    })),
                })
            })
            .collect();
        json!({
            "pair_by": "none",
            "note": UNPAIRED_NOTE,
            "alpha": self.alpha,
            "baseline": {"name": self.baseline.label, "path": self.baseline.path, "tasks": self.baseline.tasks},
            "candidates": rows,
        })
    }

    fn cells(&self, r: &UnpairedRow) -> [String; 6] {
        match r.welch {
            Some(w) => [
                short_number(w.a),
                short_number(w.b),
                signed(Some(w.delta)),
                w.ci95.map_or_else(String::new, |(lo, hi)| {
                    format!("{} … {}", signed(Some(lo)), signed(Some(hi)))
                }),
                p_value(Some(w.p)),
                p_value(r.p_holm),
            ],
            None => Default::default(),
        }
    }

    pub fn text(&self) -> String {
        let mut out = format!(
            "Baseline: {} ({} tasks)\n{UNPAIRED_NOTE}\n\nMean reward (Holm across the candidates, α {}):\n",
            self.baseline.label, self.baseline.tasks, self.alpha
        );
        for r in &self.rows {
            let [a, b, d, ci, p, ph] = self.cells(r);
            let _ = writeln!(
                out,
                "  {}: {a} → {b} (Δ {d}, 95% CI {ci}), p {p}, p (Holm) {ph}: {}",
                r.run.label,
                r.verdict.word(true)
            );
        }
        out
    }

    pub fn markdown(&self) -> String {
        let mut out = format!(
            "## Comparison against {}\n\n{}.\n\n| run | metric | baseline | candidate | Δ | 95% CI | p | p (Holm) | verdict |\n|---|---|---:|---:|---:|---|---:|---:|---|\n",
            escape(&self.baseline.label),
            UNPAIRED_NOTE
        );
        for r in &self.rows {
            let [a, b, d, ci, p, ph] = self.cells(r);
            let _ = writeln!(
                out,
                "| {} | reward | {a} | {b} | {d} | {ci} | {p} | {ph} | {} |",
                escape(&r.run.label),
                r.verdict.word(true)
            );
        }
        out
    }
}
