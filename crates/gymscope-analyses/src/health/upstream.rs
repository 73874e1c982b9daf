//! NeMo Gym v0.6's own health files, shown beside gymscope's signals when they sit next to the
//! rollouts: `quality_summary.json` (run verdict counts, finding counts per check, task flags)
//! and `rollout_verdicts.jsonl` (one verdict per rollout with its findings). Check IDs are kept
//! as opaque strings: upstream renames them between versions.

use super::HealthError;
use serde::Serialize;
use serde_json::Value;
use std::collections::BTreeMap;

/// Upstream's fixed file names (read only; gymscope never writes them).
pub const QUALITY_SUMMARY: &str = "quality_summary.json";
pub const ROLLOUT_VERDICTS: &str = "rollout_verdicts.jsonl";

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Upstream {
    pub quality_summary: Option<QualitySummary>,
    pub rollout_verdicts: Option<RolloutVerdicts>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct QualitySummary {
    pub file: String,
    /// `run.verdicts`: `healthy`, `unhealthy`, `unobserved` (as upstream names them).
    pub verdicts: BTreeMap<String, u64>,
    /// `run.issues`: findings per check id (every registered id, zeros included).
    pub issues: BTreeMap<String, u64>,
    pub ignored_checks: Vec<String>,
    /// Tasks per flag, from `tasks.*.flags`.
    pub task_flags: BTreeMap<String, u64>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct RolloutVerdicts {
    pub file: String,
    pub rollouts: u64,
    pub verdicts: BTreeMap<String, u64>,
    /// Rollouts with a finding of each check.
    pub findings: BTreeMap<String, u64>,
    /// Rollouts where each check lacked its evidence.
    pub unobserved: BTreeMap<String, u64>,
    /// The first unhealthy rollouts (up to [`super::MAX_LISTED`]) with their check ids.
    pub unhealthy: Vec<UpstreamRollout>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct UpstreamRollout {
    pub task: Value,
    pub rollout: Value,
    pub rollout_id: Option<String>,
    pub checks: Vec<String>,
}

/// One line of `rollout_verdicts.jsonl` as read: the rollout's key as upstream wrote it, its
/// verdict, and the check ids of its findings (each once) and of what it could not observe.
#[derive(Clone, Debug, PartialEq)]
pub struct RolloutVerdict {
    pub task: Value,
    pub rollout: Value,
    pub rollout_id: Option<String>,
    pub verdict: String,
    pub checks: Vec<String>,
    pub unobserved: Vec<String>,
}

impl RolloutVerdict {
    /// The `(task, rollout)` key when both are integers (an unreadable record's synthetic task
    /// id is not a rollout of the run).
    pub fn key(&self) -> Option<(i64, i64)> {
        Some((self.task.as_i64()?, self.rollout.as_i64()?))
    }
}

fn err(file: &str, line: u64, message: String) -> HealthError {
    HealthError {
        file: file.to_string(),
        line,
        message,
        too_long: false,
    }
}

fn count(v: &Value) -> u64 {
    v.as_u64().unwrap_or(0)
}

/// Reads `quality_summary.json` (the whole file). Missing parts are left empty; a file that is
/// not a JSON object is an error naming it.
pub fn quality_summary(file: &str, bytes: &[u8]) -> Result<QualitySummary, HealthError> {
    let v: Value = serde_json::from_slice(bytes).map_err(|e| {
        err(
            file,
            e.line() as u64,
            format!("column {}: not valid JSON ({e})", e.column()),
        )
    })?;
    if !v.is_object() {
        return Err(err(file, 1, "not a JSON object".to_string()));
    }
    let run = &v["run"];
    let map = |x: &Value| -> BTreeMap<String, u64> {
        x.as_object()
            .map(|m| m.iter().map(|(k, v)| (k.clone(), count(v))).collect())
            .unwrap_or_default()
    };
    let mut task_flags = BTreeMap::new();
    if let Some(tasks) = v["tasks"].as_object() {
        for t in tasks.values() {
            for f in t["flags"].as_array().into_iter().flatten() {
                let id = f.as_str().map_or_else(|| f.to_string(), str::to_string);
                *task_flags.entry(id).or_insert(0) += 1;
            }
        }
    }
    Ok(QualitySummary {
        file: file.to_string(),
        verdicts: map(&run["verdicts"]),
        issues: map(&run["issues"]),
        ignored_checks: run["ignored_checks"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|c| c.as_str().map_or_else(|| c.to_string(), str::to_string))
            .collect(),
        task_flags,
    })
}

impl RolloutVerdicts {
    pub fn new(file: &str) -> RolloutVerdicts {
        RolloutVerdicts {
            file: file.to_string(),
            ..RolloutVerdicts::default()
        }
    }

    /// Adds one line of `rollout_verdicts.jsonl` and hands it back (`None` for a blank line).
    pub fn line(&mut self, line: u64, bytes: &[u8]) -> Result<Option<RolloutVerdict>, HealthError> {
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return Ok(None);
        }
        let v: Value = serde_json::from_slice(bytes).map_err(|e| {
            err(
                &self.file,
                line,
                format!("column {}: not valid JSON ({e})", e.column()),
            )
        })?;
        let Some(verdict) = v.get("verdict").and_then(Value::as_str) else {
            return Err(err(
                &self.file,
                line,
                "field `verdict` is missing or not a string".to_string(),
            ));
        };
        self.rollouts += 1;
        *self.verdicts.entry(verdict.to_string()).or_insert(0) += 1;
        let id = |c: &Value| c.as_str().map_or_else(|| c.to_string(), str::to_string);
        let mut checks: Vec<String> = Vec::new();
        for f in v["findings"].as_array().into_iter().flatten() {
            let c = id(&f["check"]);
            if !checks.contains(&c) {
                checks.push(c);
            }
        }
        for c in &checks {
            *self.findings.entry(c.clone()).or_insert(0) += 1;
        }
        let unobserved: Vec<String> = v["unobserved"]
            .as_array()
            .into_iter()
            .flatten()
            .map(id)
            .collect();
        for u in &unobserved {
            *self.unobserved.entry(u.clone()).or_insert(0) += 1;
        }
        let read = RolloutVerdict {
            task: v["_ng_task_index"].clone(),
            rollout: v["_ng_rollout_index"].clone(),
            rollout_id: v["rollout_id"].as_str().map(str::to_string),
            verdict: verdict.to_string(),
            checks,
            unobserved,
        };
        if verdict == "unhealthy" && self.unhealthy.len() < super::MAX_LISTED {
            self.unhealthy.push(UpstreamRollout {
                task: read.task.clone(),
                rollout: read.rollout.clone(),
                rollout_id: read.rollout_id.clone(),
                checks: read.checks.clone(),
            });
        }
        Ok(Some(read))
    }
}
