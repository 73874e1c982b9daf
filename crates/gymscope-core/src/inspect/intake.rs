//! Which slot each chosen or dropped file fills, recognized by content, and what to do next:
//! profile the run, show existing profile files, or hand a pivot dataset to the validator.
//! Generic over the file handle so it is tested natively with names.

use super::detect::FileKind;

/// The files the profile page holds.
#[derive(Clone, Debug, PartialEq)]
pub struct Slots<F> {
    pub inputs: Option<F>,
    pub rollouts: Option<F>,
    pub profiling: Option<F>,
    pub agent_metrics: Option<F>,
    /// NeMo Gym's own health files, read with the run (recognized by content).
    pub quality_summary: Option<F>,
    pub rollout_verdicts: Option<F>,
}

impl<F> Default for Slots<F> {
    fn default() -> Self {
        Slots {
            inputs: None,
            rollouts: None,
            profiling: None,
            agent_metrics: None,
            quality_summary: None,
            rollout_verdicts: None,
        }
    }
}

/// What the profile page does after taking files.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Next {
    /// Both run files are there and one of them (or an upstream health file) is new: profile
    /// the run (its health read with upstream's verdicts).
    ProfileRun,
    /// Profile files came and the run is incomplete: show them directly.
    ShowProfileFiles,
    /// Nothing to start (still missing a file, or nothing recognized).
    Wait,
}

/// The outcome of taking files: the profile page's next step, and a pivot dataset for the
/// validator if one came along.
#[derive(Clone, Debug, PartialEq)]
pub struct Taken<F> {
    pub next: Next,
    pub pivot: Option<F>,
}

impl<F: Clone> Slots<F> {
    pub fn has_run(&self) -> bool {
        self.inputs.is_some() && self.rollouts.is_some()
    }

    /// Puts each file in its slot and says what to do next.
    pub fn take(&mut self, files: Vec<(F, FileKind)>) -> Taken<F> {
        let (mut run_changed, mut profile_files, mut pivot) = (false, false, None);
        for (file, kind) in files {
            match kind {
                FileKind::MaterializedInputs => {
                    self.inputs = Some(file);
                    run_changed = true;
                }
                FileKind::Rollouts => {
                    self.rollouts = Some(file);
                    run_changed = true;
                }
                FileKind::RewardProfiling => {
                    self.profiling = Some(file);
                    profile_files = true;
                }
                FileKind::AgentMetrics => {
                    self.agent_metrics = Some(file);
                    profile_files = true;
                }
                // Read with the run: a run already shown is read again with them.
                FileKind::QualitySummary => {
                    self.quality_summary = Some(file);
                    run_changed = true;
                }
                FileKind::RolloutVerdicts => {
                    self.rollout_verdicts = Some(file);
                    run_changed = true;
                }
                FileKind::Pivot => pivot = Some(file),
                // Turned into rollouts and inputs before they get here (`atif::run::from_files`).
                FileKind::Atif | FileKind::AtifManifest | FileKind::Unknown => {}
            }
        }
        let next = if run_changed && self.has_run() {
            Next::ProfileRun
        } else if profile_files && !self.has_run() && self.profiling.is_some() {
            Next::ShowProfileFiles
        } else {
            Next::Wait
        };
        Taken { next, pivot }
    }

    /// The run files still missing, by name, once something was chosen.
    pub fn missing(&self) -> Vec<&'static str> {
        [
            (self.inputs.is_none(), "materialized inputs"),
            (self.rollouts.is_none(), "rollouts"),
        ]
        .into_iter()
        .filter_map(|(missing, name)| missing.then_some(name))
        .collect()
    }
}

/// How the page lists a recognized file.
pub fn role_note(kind: FileKind) -> &'static str {
    match kind {
        FileKind::Pivot => " (opened in the pivot validator)",
        FileKind::Atif | FileKind::AtifManifest => " (read as a run: its rollouts and inputs below)",
        FileKind::RewardProfiling | FileKind::AgentMetrics => {
            " (an existing profile: shown directly; add the run's inputs and rollouts to read its rollouts)"
        }
        FileKind::QualitySummary | FileKind::RolloutVerdicts => {
            " (NeMo Gym's verdicts: shown on the Health page with the run)"
        }
        _ => "",
    }
}

/// Runs the Compare page can hold at once (the baseline and seven candidates).
pub const MAX_RUNS: usize = 8;

/// One run among files dropped together: its rollouts with their materialized inputs, or a
/// `*_reward_profiling.jsonl` alone.
#[derive(Clone, Debug, PartialEq)]
pub enum RunFiles<F> {
    Run { inputs: F, rollouts: F },
    Profiling(F),
}

/// Groups files dropped at once into runs, by name and kind: a rollouts file `x.jsonl` with the
/// `x_materialized_inputs.jsonl` beside it, a profiling file alone; ordered by the name of the
/// rollouts or profiling file. Errors name the file left without its partner, or the kind
/// the page cannot compare.
pub fn group_runs<F: Clone>(
    files: &[(F, String, FileKind)],
) -> Result<Vec<(String, RunFiles<F>)>, String> {
    let mut runs: Vec<(String, RunFiles<F>)> = Vec::new();
    let mut used = vec![false; files.len()];
    for (i, (file, name, kind)) in files.iter().enumerate() {
        match kind {
            FileKind::RewardProfiling => {
                used[i] = true;
                runs.push((name.clone(), RunFiles::Profiling(file.clone())));
            }
            FileKind::Rollouts => {
                let want = crate::names::materialized_inputs(name);
                let Some(j) = files
                    .iter()
                    .position(|(_, n, k)| *k == FileKind::MaterializedInputs && *n == want)
                else {
                    return Err(format!(
                        "'{name}': its materialized inputs '{want}' were not chosen with it"
                    ));
                };
                used[i] = true;
                used[j] = true;
                runs.push((
                    name.clone(),
                    RunFiles::Run {
                        inputs: files[j].0.clone(),
                        rollouts: file.clone(),
                    },
                ));
            }
            _ => {}
        }
    }
    if let Some(i) = (0..files.len()).find(|&i| !used[i]) {
        let (_, name, kind) = &files[i];
        return Err(format!(
            "'{name}' ({}) is not part of a run: choose each run's rollouts with its materialized inputs, or a *_reward_profiling.jsonl",
            kind.label()
        ));
    }
    if runs.len() > MAX_RUNS {
        return Err(format!("{} runs chosen; the page compares at most {MAX_RUNS} at once (the CLI takes any number)", runs.len()));
    }
    runs.sort_by(|x, y| x.0.cmp(&y.0));
    Ok(runs)
}

#[cfg(test)]
mod tests {
    use super::*;
    use FileKind::*;

    fn next(s: &mut Slots<&'static str>, files: Vec<(&'static str, FileKind)>) -> Next {
        s.take(files).next
    }

    #[test]
    fn the_run_starts_when_both_files_are_there() {
        let mut s = Slots::default();
        assert_eq!(next(&mut s, vec![("i", MaterializedInputs)]), Next::Wait);
        assert_eq!(s.missing(), ["rollouts"]);
        assert_eq!(next(&mut s, vec![("r", Rollouts)]), Next::ProfileRun);
        assert!(s.missing().is_empty());
        // Both in one drop, in either order.
        let mut s = Slots::default();
        assert_eq!(
            next(&mut s, vec![("r", Rollouts), ("i", MaterializedInputs)]),
            Next::ProfileRun
        );
    }

    #[test]
    fn profile_files_show_directly_without_a_run() {
        let mut s = Slots::default();
        assert_eq!(
            next(&mut s, vec![("p", RewardProfiling), ("m", AgentMetrics)]),
            Next::ShowProfileFiles
        );
        assert_eq!(
            next(&mut s, vec![("m", AgentMetrics)]),
            Next::ShowProfileFiles
        );
        assert_eq!(next(&mut s, vec![("x", Unknown)]), Next::Wait);
        // Metrics alone are not enough to show anything.
        let mut s = Slots::default();
        assert_eq!(next(&mut s, vec![("m", AgentMetrics)]), Next::Wait);
    }

    #[test]
    fn upstream_health_files_come_with_the_run() {
        let mut s = Slots::default();
        // Before the run: kept, nothing starts yet.
        assert_eq!(next(&mut s, vec![("q", QualitySummary)]), Next::Wait);
        assert_eq!(s.quality_summary, Some("q"));
        assert_eq!(
            next(
                &mut s,
                vec![
                    ("i", MaterializedInputs),
                    ("r", Rollouts),
                    ("v", RolloutVerdicts)
                ]
            ),
            Next::ProfileRun
        );
        assert_eq!(s.rollout_verdicts, Some("v"));
        // After the run: the run is read again with them.
        assert_eq!(
            next(&mut s, vec![("v2", RolloutVerdicts)]),
            Next::ProfileRun
        );
        assert_eq!(s.rollout_verdicts, Some("v2"));
    }

    #[test]
    fn a_pivot_file_goes_to_the_validator_beside_the_run() {
        let mut s = Slots::default();
        let taken = s.take(vec![
            ("p", Pivot),
            ("i", MaterializedInputs),
            ("r", Rollouts),
        ]);
        assert_eq!(taken.pivot, Some("p"));
        assert_eq!(taken.next, Next::ProfileRun);
    }

    #[test]
    fn files_dropped_at_once_group_into_runs() {
        use super::{group_runs, RunFiles};
        let f = |n: &str, k| (n.to_string(), n.to_string(), k);
        let runs = group_runs(&[
            f("c1.jsonl", FileKind::Rollouts),
            f(
                "base_materialized_inputs.jsonl",
                FileKind::MaterializedInputs,
            ),
            f("c1_materialized_inputs.jsonl", FileKind::MaterializedInputs),
            f("base.jsonl", FileKind::Rollouts),
            f("x_reward_profiling.jsonl", FileKind::RewardProfiling),
        ])
        .unwrap();
        let names: Vec<&str> = runs.iter().map(|r| r.0.as_str()).collect();
        assert_eq!(
            names,
            ["base.jsonl", "c1.jsonl", "x_reward_profiling.jsonl"]
        );
        assert_eq!(
            runs[0].1,
            RunFiles::Run {
                inputs: "base_materialized_inputs.jsonl".to_string(),
                rollouts: "base.jsonl".to_string()
            }
        );
        let e = group_runs(&[f("a.jsonl", FileKind::Rollouts)]).unwrap_err();
        assert!(e.contains("a_materialized_inputs.jsonl"), "{e}");
        let e = group_runs(&[
            f("a.jsonl", FileKind::Rollouts),
            f("a_materialized_inputs.jsonl", FileKind::MaterializedInputs),
            f("b_materialized_inputs.jsonl", FileKind::MaterializedInputs),
        ])
        .unwrap_err();
        assert!(e.contains("b_materialized_inputs.jsonl"), "{e}");
        let many: Vec<_> = (0..9)
            .map(|i| {
                f(
                    &format!("r{i}_reward_profiling.jsonl"),
                    FileKind::RewardProfiling,
                )
            })
            .collect();
        assert!(group_runs(&many).unwrap_err().contains("at most 8"));
    }
}
