//! NeMo Gym's own verdict files in the inspector (`quality_summary.json`,
//! `rollout_verdicts.jsonl`, dropped with the run and recognized by content): read by the core's
//! `health::upstream` readers, laid out for the Health page (counts per verdict and per check id,
//! the ids kept as opaque strings: upstream renames them between versions), and each rollout's
//! verdict with its check ids for the worst-rollouts list and the rollout's badges.
//! Plain Rust, tested natively; the worker feeds it, the components lay it out as text.

use super::health_view::HealthState;
pub use super::health_view::{
    verdict_level, SummaryView, UnhealthyRow, UpstreamView, VerdictSet, VerdictsView,
};
use super::model::{Columns, InspectView};
use super::run::RunView;
use crate::health::upstream::{RolloutVerdicts, Upstream};
use crate::health::HealthError;
use crate::read::jsonl::LineSplitter;
use std::collections::{BTreeMap, HashMap};

/// Each rollout's verdict (an index into `sets`), by `(task, rollout)`.
#[derive(Clone, Debug, Default)]
pub struct VerdictIndex {
    pub sets: Vec<VerdictSet>,
    by_set: HashMap<VerdictSet, u32>,
    points: HashMap<(i64, i64), u32>,
}

/// How bad a verdict is, to merge the stages of one rollout: unhealthy, then anything else
/// (unobserved), then healthy.
fn severity(verdict: &str) -> u8 {
    match verdict {
        "unhealthy" => 2,
        "healthy" => 0,
        _ => 1,
    }
}

impl VerdictIndex {
    /// A rollout's verdict; a multi-stage run (NeMo Gym v0.7.0 `stage_index`) has a row per
    /// stage: the rollout gets the worst verdict of its stages and every check any stage found.
    fn add(&mut self, key: (i64, i64), mut set: VerdictSet) {
        if let Some(seen) = self.of(key) {
            let seen = seen.clone();
            if severity(&seen.verdict) > severity(&set.verdict) {
                set.verdict = seen.verdict;
            }
            for (mine, theirs) in [
                (&mut set.checks, seen.checks),
                (&mut set.unobserved, seen.unobserved),
            ] {
                for c in theirs {
                    if !mine.contains(&c) {
                        mine.push(c);
                    }
                }
            }
        }
        let id = if let Some(&id) = self.by_set.get(&set) {
            id
        } else {
            let id = self.sets.len() as u32;
            self.sets.push(set.clone());
            self.by_set.insert(set, id);
            id
        };
        self.points.insert(key, id);
    }

    /// The verdict of rollout `key`, if the file had it.
    pub fn of(&self, key: (i64, i64)) -> Option<&VerdictSet> {
        self.points.get(&key).map(|&i| &self.sets[i as usize])
    }
}

/// Reads `rollout_verdicts.jsonl` in chunks of any size: the counts (`RolloutVerdicts`) and the
/// per-rollout index.
pub struct VerdictReader {
    verdicts: RolloutVerdicts,
    index: VerdictIndex,
    lines: LineSplitter,
}

impl VerdictReader {
    pub fn new(file: &str) -> VerdictReader {
        VerdictReader {
            verdicts: RolloutVerdicts::new(file),
            index: VerdictIndex::default(),
            lines: LineSplitter::new(),
        }
    }

    fn line(
        verdicts: &mut RolloutVerdicts,
        index: &mut VerdictIndex,
        n: u64,
        bytes: &[u8],
    ) -> Result<(), HealthError> {
        if let Some(v) = verdicts.line(n, bytes)? {
            if let Some(key) = v.key() {
                index.add(
                    key,
                    VerdictSet {
                        verdict: v.verdict,
                        checks: v.checks,
                        unobserved: v.unobserved,
                    },
                );
            }
        }
        Ok(())
    }

    pub fn push(&mut self, chunk: &[u8]) -> Result<(), HealthError> {
        let (verdicts, index) = (&mut self.verdicts, &mut self.index);
        let file = verdicts.file.clone();
        self.lines
            .push(chunk, |span, bytes| {
                Self::line(verdicts, index, span.line, bytes)
            })
            .map_err(|e| {
                e.into_error(|t| HealthError {
                    file,
                    line: t.line,
                    message: format!("is longer than {} bytes (the limit)", t.limit),
                    too_long: true,
                })
            })
    }

    pub fn finish(mut self) -> Result<(RolloutVerdicts, VerdictIndex), HealthError> {
        let (verdicts, index) = (&mut self.verdicts, &mut self.index);
        self.lines
            .finish(|span, bytes| Self::line(verdicts, index, span.line, bytes))?;
        Ok((self.verdicts, self.index))
    }
}

fn pairs(m: &BTreeMap<String, u64>) -> Vec<(String, u64)> {
    m.iter().map(|(k, v)| (k.clone(), *v)).collect()
}

/// Most first, then by id; zeros last.
fn by_count(m: &BTreeMap<String, u64>) -> Vec<(String, u64)> {
    let mut v = pairs(m);
    v.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    v
}

/// A JSON key part as text (`3`, or an unreadable record's id without quotes).
fn key_text(v: &serde_json::Value) -> String {
    v.as_str().map_or_else(|| v.to_string(), str::to_string)
}

/// Lays upstream's files out on the Health page (which must be ready), fills
/// `cols.point_verdict` for the profile's points (NaN where the file has no verdict) and notes
/// each worst rollout's verdict.
pub fn attach(
    view: &mut InspectView,
    cols: &mut Columns,
    upstream: &Upstream,
    index: Option<&VerdictIndex>,
) {
    let HealthState::Ready(h) = &mut view.health else {
        return;
    };
    let empty = VerdictIndex::default();
    let index = index.unwrap_or(&empty);
    cols.point_verdict = cols
        .point_task
        .iter()
        .zip(&cols.point_rollout)
        .map(|(&t, &r)| {
            index
                .points
                .get(&(t as i64, r as i64))
                .map_or(f64::NAN, |&i| f64::from(i))
        })
        .collect();
    let matched = cols.point_verdict.iter().filter(|v| !v.is_nan()).count() as u64;
    for w in &mut h.worst {
        w.upstream = index.of((w.task, w.rollout)).cloned();
    }
    let summary = upstream.quality_summary.as_ref().map(|q| SummaryView {
        file: q.file.clone(),
        verdicts: pairs(&q.verdicts),
        issues: by_count(&q.issues),
        task_flags: by_count(&q.task_flags),
        ignored: q.ignored_checks.clone(),
    });
    let verdicts = upstream.rollout_verdicts.as_ref().map(|v| VerdictsView {
        file: v.file.clone(),
        rollouts: v.rollouts,
        verdicts: pairs(&v.verdicts),
        findings: by_count(&v.findings),
        unobserved: by_count(&v.unobserved),
        unhealthy: v
            .unhealthy
            .iter()
            .map(|u| UnhealthyRow {
                label: format!(
                    "task {} · rollout {}{}",
                    key_text(&u.task),
                    key_text(&u.rollout),
                    u.rollout_id
                        .as_ref()
                        .map_or_else(String::new, |id| format!(" ({id})"))
                ),
                key: u.task.as_i64().zip(u.rollout.as_i64()),
                checks: u.checks.join(", "),
            })
            .collect(),
        matched,
        run_rollouts: cols.point_task.len() as u64,
    });
    h.upstream = Some(UpstreamView {
        summary,
        verdicts,
        sets: index.sets.clone(),
        error: None,
    });
}

/// Says on the Health page that upstream's files could not be read, and why.
pub fn attach_error(view: &mut InspectView, error: String) {
    if let HealthState::Ready(h) = &mut view.health {
        h.upstream = Some(UpstreamView {
            error: Some(error),
            ..UpstreamView::default()
        });
    }
}

impl RunView {
    /// Upstream's verdict of point `p`, when its verdict file was read with the run.
    pub fn point_verdict(&self, p: usize) -> Option<&VerdictSet> {
        let i = *self.cols.point_verdict.get(p).filter(|v| !v.is_nan())?;
        match &self.view.health {
            HealthState::Ready(h) => h.upstream.as_ref()?.sets.get(i as usize),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::health::HealthBuilder;
    use crate::inspect::health::{attach as attach_health, PointSignals};
    use crate::profile::{ProfileBuilder, ProfileOptions};
    use serde_json::json;

    const VERDICTS: &str = concat!(
        r#"{"_ng_task_index":0,"_ng_rollout_index":0,"rollout_id":"0-0","verdict":"unobserved","findings":[],"unobserved":["agent_turn_hollow"]}"#,
        "\n",
        r#"{"_ng_task_index":1,"_ng_rollout_index":0,"rollout_id":"1-0","verdict":"unhealthy","findings":[{"check":"<img src=x onerror=alert(1)>","detail":{}},{"check":"model_call_failed","detail":{}},{"check":"model_call_failed","detail":{}}],"unobserved":[]}"#,
        "\n\n",
        r#"{"_ng_task_index":"__unreadable_record__:input-0:line-9","_ng_rollout_index":0,"rollout_id":"u","verdict":"unhealthy","findings":[{"check":"record_unreadable","detail":{}}],"unobserved":[]}"#
    );

    fn run() -> (InspectView, Columns, crate::health::HealthReport) {
        let mut inputs = String::new();
        let mut rollouts = String::new();
        for t in 0..2 {
            inputs.push_str(
                &json!({"_ng_task_index": t, "_ng_rollout_index": 0, "responses_create_params": {"input": "q"}}).to_string(),
            );
            inputs.push('\n');
            rollouts.push_str(&json!({"_ng_task_index": t, "_ng_rollout_index": 0, "reward": 1.0,
                "response": {"status": "incomplete", "incomplete_details": {"reason": "max_output_tokens"},
                "output": [], "usage": {"input_tokens": 1, "output_tokens": 2, "total_tokens": 3}}}).to_string());
            rollouts.push('\n');
        }
        let mut p = ProfileBuilder::new("i.jsonl", "r.jsonl");
        p.push_inputs(inputs.as_bytes()).unwrap();
        p.push_rollouts(rollouts.as_bytes()).unwrap();
        let profile = p.finish(ProfileOptions::default()).unwrap();
        let mut h = HealthBuilder::new("r.jsonl", 1.0);
        h.push_rollouts(rollouts.as_bytes()).unwrap();
        h.end_rollouts().unwrap();
        let points = PointSignals::of(&h);
        let report = h.finish().unwrap();
        let (mut view, mut cols) = crate::inspect::model::build(
            &profile,
            "i.jsonl",
            "r.jsonl",
            &std::collections::HashMap::new(),
        );
        attach_health(&mut view, &mut cols, &report, &points);
        (view, cols, report)
    }

    fn read(chunk: usize) -> (RolloutVerdicts, VerdictIndex) {
        let mut r = VerdictReader::new("rollout_verdicts.jsonl");
        for c in VERDICTS.as_bytes().chunks(chunk) {
            r.push(c).unwrap();
        }
        r.finish().unwrap()
    }

    #[test]
    fn verdicts_read_in_any_chunks_index_each_rollout() {
        let (v, index) = read(VERDICTS.len());
        for chunk in [1, 7, 100] {
            let (v2, i2) = read(chunk);
            assert_eq!(v2, v);
            assert_eq!(i2.sets, index.sets);
        }
        assert_eq!(v.rollouts, 3);
        assert_eq!(
            v.findings["model_call_failed"], 1,
            "a check counts once a rollout"
        );
        let bad = index.of((1, 0)).unwrap();
        assert_eq!(bad.verdict, "unhealthy");
        assert_eq!(
            bad.checks,
            ["<img src=x onerror=alert(1)>", "model_call_failed"]
        );
        assert_eq!(
            bad.text(),
            "NeMo Gym: unhealthy · <img src=x onerror=alert(1)>, model_call_failed"
        );
        assert_eq!(bad.level(), "bad");
        let unobserved = index.of((0, 0)).unwrap();
        assert_eq!(
            unobserved.unobserved_text(),
            "not observed: agent_turn_hollow"
        );
        assert_eq!(unobserved.level(), "warn");
        // The unreadable record has no key of the run.
        assert_eq!(index.points.len(), 2);
    }

    #[test]
    fn stages_of_one_rollout_merge_into_its_worst_verdict() {
        let lines = [
            r#"{"_ng_task_index":0,"_ng_rollout_index":0,"rollout_id":"0-0","verdict":"healthy","findings":[],"unobserved":[],"stage_index":0}"#,
            r#"{"_ng_task_index":0,"_ng_rollout_index":0,"rollout_id":"0-0","verdict":"unhealthy","findings":[{"check":"model_call_failed","detail":{}}],"unobserved":["agent_turn_hollow"],"stage_index":1}"#,
            r#"{"_ng_task_index":0,"_ng_rollout_index":0,"rollout_id":"0-0","verdict":"unobserved","findings":[],"unobserved":["model_call_runaway_generation"],"stage_index":2}"#,
        ];
        let mut r = VerdictReader::new("rollout_verdicts.jsonl");
        r.push((lines.join("\n") + "\n").as_bytes()).unwrap();
        let (_, index) = r.finish().unwrap();
        let set = index.of((0, 0)).unwrap();
        assert_eq!(set.verdict, "unhealthy");
        assert_eq!(set.checks, ["model_call_failed"]);
        assert_eq!(
            set.unobserved,
            ["model_call_runaway_generation", "agent_turn_hollow"]
        );
    }

    #[test]
    fn a_broken_line_names_the_file_and_line() {
        let mut r = VerdictReader::new("rollout_verdicts.jsonl");
        let e = r
            .push(b"{\"verdict\": \"healthy\"}\n{\"verdict\": 1}\n")
            .unwrap_err();
        assert_eq!((e.file.as_str(), e.line), ("rollout_verdicts.jsonl", 2));
        assert!(e.message.contains("`verdict`"), "{}", e.message);
    }

    #[test]
    fn the_page_gets_counts_points_and_worst_rollouts_verdicts() {
        let (mut view, mut cols, _) = run();
        let (verdicts, index) = read(64);
        let summary = crate::health::upstream::quality_summary(
            "quality_summary.json",
            br#"{"run": {"verdicts": {"healthy": 0, "unhealthy": 2, "unobserved": 1}, "issues": {"a_zero": 0, "model_call_failed": 1, "record_unreadable": 1}, "ignored_checks": ["x"]}, "tasks": {"1": {"flags": ["task_consistently_unhealthy"]}}}"#,
        )
        .unwrap();
        let up = Upstream {
            quality_summary: Some(summary),
            rollout_verdicts: Some(verdicts),
        };
        attach(&mut view, &mut cols, &up, Some(&index));
        let HealthState::Ready(h) = &view.health else {
            panic!("health ready")
        };
        let u = h.upstream.as_ref().unwrap();
        let s = u.summary.as_ref().unwrap();
        assert_eq!(s.issues[0], ("model_call_failed".to_string(), 1));
        assert_eq!(s.issues.last().unwrap(), &("a_zero".to_string(), 0));
        assert_eq!(
            s.task_flags,
            [("task_consistently_unhealthy".to_string(), 1)]
        );
        let v = u.verdicts.as_ref().unwrap();
        assert_eq!((v.matched, v.run_rollouts), (2, 2));
        assert_eq!(v.unhealthy.len(), 2);
        assert_eq!(v.unhealthy[0].key, Some((1, 0)));
        assert_eq!(
            v.unhealthy[1].label,
            "task __unreadable_record__:input-0:line-9 · rollout 0 (u)"
        );
        assert_eq!(v.unhealthy[1].key, None);
        // Every rollout is truncated, so both are among the worst, each with its verdict.
        let worst: Vec<_> = h
            .worst
            .iter()
            .map(|w| (w.task, w.upstream.as_ref().map(VerdictSet::short)))
            .collect();
        assert!(
            worst.contains(&(0, Some("unobserved".to_string()))),
            "{worst:?}"
        );
        assert!(
            worst.contains(&(
                1,
                Some("unhealthy · <img src=x onerror=alert(1)>, model_call_failed".to_string())
            )),
            "{worst:?}"
        );
        let run = RunView::new(view.clone(), cols.clone());
        let p = (0..2).find(|&p| cols.point_task[p] == 1.0).unwrap();
        assert_eq!(run.point_verdict(p).unwrap().verdict, "unhealthy");
    }

    #[test]
    fn without_a_verdict_file_points_have_none() {
        let (mut view, mut cols, _) = run();
        let up = Upstream::default();
        attach(&mut view, &mut cols, &up, None);
        assert!(cols.point_verdict.iter().all(|v| v.is_nan()));
        let run = RunView::new(view, cols);
        assert!(run.point_verdict(0).is_none());
    }
}
