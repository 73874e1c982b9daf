//! One definition of "did this rollout succeed" and of a task's reward group, used everywhere a
//! task is sorted by its rollouts' outcomes: the inspector's filter, `validate-pivot --stats`,
//! pivot selection, comparison and health.
//!
//! A rollout succeeds when its reward is numeric and at least the threshold (default 1.0; a
//! boolean counts as 0 or 1). A task is `all_failure`, `mixed` or `all_success` by its rollouts
//! with a numeric reward, and `no_reward` when none has one. PivotRL keeps `mixed` tasks: the
//! states where the policy sometimes succeeds carry the learning signal.

use serde::{Deserialize, Serialize};

/// The default success threshold: binary verifiers give 1.0 for a pass.
pub const DEFAULT_THRESHOLD: f64 = 1.0;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RewardGroup {
    AllFailure,
    Mixed,
    AllSuccess,
    NoReward,
}

impl RewardGroup {
    pub const ALL: [RewardGroup; 4] = [
        RewardGroup::AllFailure,
        RewardGroup::Mixed,
        RewardGroup::AllSuccess,
        RewardGroup::NoReward,
    ];

    /// The name in files and JSON output: `all_failure`, `mixed`, `all_success`, `no_reward`.
    pub fn as_str(self) -> &'static str {
        match self {
            RewardGroup::AllFailure => "all_failure",
            RewardGroup::Mixed => "mixed",
            RewardGroup::AllSuccess => "all_success",
            RewardGroup::NoReward => "no_reward",
        }
    }

    /// The short label people use for binary rewards: `all-0`, `mixed`, `all-1`, `no reward`.
    pub fn label(self) -> &'static str {
        match self {
            RewardGroup::AllFailure => "all-0",
            RewardGroup::Mixed => "mixed",
            RewardGroup::AllSuccess => "all-1",
            RewardGroup::NoReward => "no reward",
        }
    }

    /// The group in words for the app's reader, against the pass threshold (a pass is
    /// `reward ≥ 1` by default): a task whose rewards are all fractional "never passes", which
    /// `all-0` would misread.
    pub fn plain(self) -> &'static str {
        match self {
            RewardGroup::AllFailure => "never passes",
            RewardGroup::Mixed => "sometimes",
            RewardGroup::AllSuccess => "always passes",
            RewardGroup::NoReward => "no reward",
        }
    }

    pub fn parse(name: &str) -> Option<RewardGroup> {
        RewardGroup::ALL
            .into_iter()
            .find(|g| g.as_str() == name || g.label() == name)
    }
}

/// Whether one reward counts as a success. NaN (a missing reward in a profile column) does not.
pub fn is_success(reward: f64, threshold: f64) -> bool {
    reward >= threshold
}

/// A reward as a number: JSON numbers as they are, booleans as 0/1, anything else none.
pub fn reward_value(value: &serde_json::Value) -> Option<f64> {
    match value {
        serde_json::Value::Number(n) => n.as_f64(),
        serde_json::Value::Bool(b) => Some(f64::from(u8::from(*b))),
        _ => None,
    }
}

/// Counts a task's outcomes one rollout at a time, so callers need not collect rewards.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Outcomes {
    pub successes: u32,
    pub failures: u32,
}

impl Outcomes {
    /// The share of graded rollouts (those with a numeric reward) whose reward passes.
    pub fn pass_rate(&self) -> Option<f64> {
        let n = self.successes + self.failures;
        (n > 0).then(|| f64::from(self.successes) / f64::from(n))
    }

    /// Adds one rollout; `None` or NaN (no numeric reward) is not counted.
    pub fn add(&mut self, reward: Option<f64>, threshold: f64) {
        match reward {
            Some(r) if !r.is_nan() => {
                if is_success(r, threshold) {
                    self.successes += 1;
                } else {
                    self.failures += 1;
                }
            }
            _ => {}
        }
    }

    pub fn group(self) -> RewardGroup {
        match (self.successes, self.failures) {
            (0, 0) => RewardGroup::NoReward,
            (0, _) => RewardGroup::AllFailure,
            (_, 0) => RewardGroup::AllSuccess,
            _ => RewardGroup::Mixed,
        }
    }
}

/// The group of a task from its rollouts' rewards (`None`/NaN for a rollout without one).
pub fn classify(rewards: impl IntoIterator<Item = Option<f64>>, threshold: f64) -> RewardGroup {
    let mut outcomes = Outcomes::default();
    for r in rewards {
        outcomes.add(r, threshold);
    }
    outcomes.group()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn group(rewards: &[f64]) -> RewardGroup {
        classify(rewards.iter().map(|&r| Some(r)), DEFAULT_THRESHOLD)
    }

    #[test]
    fn groups_by_threshold() {
        assert_eq!(group(&[0.0, 0.0]), RewardGroup::AllFailure);
        assert_eq!(group(&[1.0]), RewardGroup::AllSuccess);
        assert_eq!(group(&[1.0, 0.0]), RewardGroup::Mixed);
        assert_eq!(group(&[]), RewardGroup::NoReward);
        assert_eq!(group(&[f64::NAN]), RewardGroup::NoReward);
        // Four equal partial rewards are four failures, not a mixed group.
        assert_eq!(group(&[0.5, 0.5, 0.5, 0.5]), RewardGroup::AllFailure);
        assert_eq!(group(&[1.5, 2.0]), RewardGroup::AllSuccess);
        assert_eq!(
            classify([Some(0.5), Some(0.7), None], 0.6),
            RewardGroup::Mixed
        );
    }

    #[test]
    fn booleans_count_as_0_and_1() {
        assert_eq!(reward_value(&serde_json::json!(true)), Some(1.0));
        assert_eq!(reward_value(&serde_json::json!(false)), Some(0.0));
        assert_eq!(reward_value(&serde_json::json!("1")), None);
        assert_eq!(reward_value(&serde_json::json!(null)), None);
    }

    #[test]
    fn names_round_trip() {
        for g in RewardGroup::ALL {
            assert_eq!(RewardGroup::parse(g.as_str()), Some(g));
            assert_eq!(RewardGroup::parse(g.label()), Some(g));
        }
        assert_eq!(
            serde_json::to_string(&RewardGroup::AllFailure).unwrap(),
            "\"all_failure\""
        );
    }
}
