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
                FileKind::Unknown => {}
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
        FileKind::RewardProfiling | FileKind::AgentMetrics => {
            " (an existing profile: shown directly; add the run's inputs and rollouts to read its rollouts)"
        }
        FileKind::QualitySummary | FileKind::RolloutVerdicts => {
            " (NeMo Gym's verdicts: shown on the Health page with the run)"
        }
        _ => "",
    }
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
}
