//! What a page shows of a query's rollouts: the key figures and the per-agent lines of the
//! points the query keeps, so every table and figure on the Profile page follows the applied
//! query (docs/app.md, "Every table and figure follows the query").

use super::model::{field_of, lines_of, spans};
use super::run::RunView;
use crate::figures::count;
use crate::table::key_figures::{key_figures, AgentLine, KeyFigure, Totals};

/// What the page says when no rollout carries a reward, and how to add one (docs/atif.md).
pub fn no_reward_note(from_atif: bool) -> String {
    if from_atif {
        "No rollout has a reward: ATIF trajectories carry none. To add one, pick a Harbor job's \
         folder with \"ATIF folder…\" (each trial's result.json gives its reward), or choose the \
         ATIF files together with the Gym rollouts file they were exported from (joined by \
         _ng_task_index and _ng_rollout_index), as `gymscope profile --rewards FILE` does."
            .into()
    } else {
        "No rollout has a reward (no numeric `reward` field): the mean reward, pass rates and \
         the reward plots are empty."
            .into()
    }
}

impl RunView {
    /// Whether any rollout has a numeric reward.
    pub fn has_rewards(&self) -> bool {
        self.metric("reward")
            .is_some_and(|m| (0..self.points()).any(|p| self.value(p, m).is_finite()))
    }

    /// The key figures of the points `shown` keeps. The interval across repeats is the whole
    /// run's (a query keeps parts of repeats), so the mean reward card has none; the rollouts
    /// card says how many the run has.
    pub fn figures_of(&self, shown: &[bool]) -> Vec<KeyFigure> {
        let metrics = &self.view.metrics;
        let keep = |p: usize| shown.get(p).copied().unwrap_or(false);
        let mean = |name: &str| {
            let field = field_of(metrics, &self.cols, name);
            let (mut sum, mut n) = (0.0, 0usize);
            for v in (0..self.points()).filter(|&p| keep(p)).filter_map(&field) {
                sum += v;
                n += 1;
            }
            (n > 0).then(|| sum / n as f64)
        };
        let tasks = spans(&self.view.tasks);
        let kept: Vec<_> = tasks
            .iter()
            .filter(|t| (t.first..t.first + t.n).any(keep))
            .copied()
            .collect();
        let mut agents = vec![false; self.view.agents.rows.len()];
        for p in (0..self.points()).filter(|&p| keep(p)) {
            if let Some(a) = self.agent_of(p).and_then(|a| agents.get_mut(a)) {
                *a = true;
            }
        }
        let rollouts = (0..self.points()).filter(|&p| keep(p)).count();
        let totals = Totals {
            tasks: kept.len(),
            rollouts,
            expected_rollouts: rollouts,
            agents: agents.iter().filter(|a| **a).count(),
            mean_reward: mean("reward"),
            mean_output_tokens: mean("output_tokens"),
            mean_total_tokens: mean("total_tokens"),
        };
        let reward = field_of(metrics, &self.cols, "reward");
        let mut cards = key_figures(&totals, &kept, |p| reward(p).filter(|_| keep(p)), &[]);
        for c in &mut cards {
            if c.key == "rollouts" {
                c.detail = format!("the query's, of {}", count(self.points()));
            }
        }
        cards
    }

    /// The per-agent lines of the points `shown` keeps: their rollouts, mean reward, pass@1
    /// and output tokens (no interval across repeats: that is the whole run's).
    pub fn agent_lines_of(&self, shown: &[bool]) -> Vec<AgentLine> {
        let names: Vec<String> = self
            .view
            .agent_lines
            .iter()
            .map(|l| l.agent.clone())
            .collect();
        lines_of(
            &names,
            &spans(&self.view.tasks),
            &self.view.metrics,
            &self.cols,
            &[],
            |p| shown.get(p).copied().unwrap_or(false),
        )
    }
}
