//! Whether a task passes, said with its rule (docs/app.md, "Passes"): a rollout passes at
//! reward ≥ the threshold (NeMo Gym's 1 by default). With rewards that are not 0/1 the
//! threshold is the user's to set, and a task that never reaches it says how close it came
//! ("never ≥ 1 (best 0.97)"), so a mean of 0.667 is not read as a failure.

use super::run::RunView;
use crate::figures::reward;
use crate::reward_group::{classify, RewardGroup};

impl RunView {
    /// Whether every reward is 0 or 1 (then the threshold 1 is the only sensible one).
    pub fn rewards_binary(&self) -> bool {
        let Some(m) = self.metric("reward") else {
            return true;
        };
        (0..self.points())
            .map(|p| self.value(p, m))
            .filter(|v| v.is_finite())
            .all(|v| v == 0.0 || v == 1.0)
    }

    /// Each task's group (in `view.tasks` order) at pass threshold `threshold`.
    pub fn groups_at(&self, threshold: f64) -> Vec<RewardGroup> {
        let m = self.metric("reward");
        (0..self.view.tasks.len())
            .map(|t| {
                let rewards = self.task_points(t).map(|p| {
                    let v = m.map_or(f64::NAN, |m| self.value(p, m));
                    v.is_finite().then_some(v)
                });
                classify(rewards, threshold)
            })
            .collect()
    }

    /// Task `t`'s group in words with its rule: `always ≥ 1`, `sometimes ≥ 1`, `never ≥ 1`
    /// (with the best reward when some were above 0: `never ≥ 1 (best 0.97)`), `no reward`.
    pub fn passes_text(&self, t: usize, group: RewardGroup, threshold: f64) -> String {
        let at = reward(Some(threshold));
        match group {
            RewardGroup::AllSuccess => format!("always ≥ {at}"),
            RewardGroup::Mixed => format!("sometimes ≥ {at}"),
            RewardGroup::NoReward => "no reward".into(),
            RewardGroup::AllFailure => {
                let best = self.metric("reward").and_then(|m| {
                    self.task_points(t)
                        .map(|p| self.value(p, m))
                        .filter(|v| v.is_finite())
                        .reduce(f64::max)
                });
                match best {
                    Some(b) if b > 0.0 => format!("never ≥ {at} (best {})", reward(Some(b))),
                    _ => format!("never ≥ {at}"),
                }
            }
        }
    }
}
