//! A loaded run as the inspector reads it: the view and its columns, with the lookups the page's
//! components need (a rollout's value, the point of a task's rollout, a task's mean) and the plot
//! model's axes and bars for it. Plain Rust, so it is tested natively.

use super::model::{Columns, InspectView};
use crate::plot::binned::{per_agent, AgentBins};
use crate::plot::brush::{self, Brush};
use crate::plot::jitter::PointMode;
use crate::plot::{self, Histogram, Scale};

#[derive(Clone, Debug, PartialEq)]
pub struct RunView {
    pub view: InspectView,
    pub cols: Columns,
}

impl RunView {
    pub fn new(view: InspectView, cols: Columns) -> RunView {
        RunView { view, cols }
    }

    pub fn points(&self) -> usize {
        self.cols.point_task.len()
    }

    pub fn metric(&self, name: &str) -> Option<usize> {
        self.view.metrics.iter().position(|m| m == name)
    }

    /// The value of metric `m` for point `i` (NaN when missing).
    pub fn value(&self, i: usize, m: usize) -> f64 {
        self.cols
            .point_values
            .get(i * self.view.metrics.len() + m)
            .copied()
            .unwrap_or(f64::NAN)
    }

    /// Metric `m` of every point (NaN where missing; all NaN for no metric).
    pub fn metric_values(&self, m: Option<usize>) -> Vec<f64> {
        (0..self.points())
            .map(|i| m.map_or(f64::NAN, |m| self.value(i, m)))
            .collect()
    }

    /// The point of (task index in `view.tasks`, rollout index).
    pub fn point_of(&self, task: usize, rollout: i64) -> Option<usize> {
        let t = self.view.tasks.get(task)?;
        (t.first_point as usize..(t.first_point + t.num_rollouts) as usize)
            .find(|&i| self.cols.point_rollout[i] as i64 == rollout)
    }

    /// The task (index in `view.tasks`) a point belongs to.
    pub fn task_of_point(&self, point: usize) -> Option<usize> {
        let tasks = &self.view.tasks;
        let at = tasks.partition_point(|t| (t.first_point as usize) <= point);
        at.checked_sub(1)
            .filter(|&t| point < (tasks[t].first_point + tasks[t].num_rollouts) as usize)
    }

    /// The index in `view.tasks` of a task by its `_ng_task_index`.
    pub fn task_position(&self, task: i64) -> Option<usize> {
        self.view.tasks.iter().position(|m| m.task == task)
    }

    /// The points of task `t` (index in `view.tasks`).
    pub fn task_points(&self, t: usize) -> std::ops::Range<usize> {
        self.view.tasks.get(t).map_or(0..0, |m| {
            m.first_point as usize..(m.first_point + m.num_rollouts) as usize
        })
    }

    /// Task `t`'s mean of metric `m`, as the profile computed it (`mean/<metric>`; NaN when
    /// the profile has no such column).
    pub fn task_mean(&self, t: usize, m: usize) -> f64 {
        self.mean_column(m)
            .and_then(|c| {
                self.cols
                    .task_stats
                    .get(t * self.view.task_headers.len() + c)
            })
            .copied()
            .unwrap_or(f64::NAN)
    }

    /// The task table's column of `mean/<metric m>`.
    fn mean_column(&self, m: usize) -> Option<usize> {
        let header = format!("mean/{}", self.view.metrics.get(m)?);
        self.view.task_headers.iter().position(|h| *h == header)
    }

    /// Metric `m`'s per-task means, one per task in `view.tasks` order (the column found once,
    /// not per task: 125,000 tasks on an axis change).
    pub fn task_means(&self, m: Option<usize>) -> Vec<f64> {
        let width = self.view.task_headers.len();
        let column = m.and_then(|m| self.mean_column(m));
        (0..self.view.tasks.len())
            .map(|t| {
                column
                    .and_then(|c| self.cols.task_stats.get(t * width + c))
                    .copied()
                    .unwrap_or(f64::NAN)
            })
            .collect()
    }

    /// "task T · rollout R · agent" of a point (the agent when known: the panel's header names
    /// whose transcript it is).
    pub fn rollout_title(&self, point: usize) -> String {
        let agent = self
            .agent_of(point)
            .and_then(|a| self.view.agents.rows.get(a))
            .map(|row| format!(" · {}", row.key))
            .unwrap_or_default();
        format!(
            "task {} · rollout {}{agent}",
            self.cols.point_task[point], self.cols.point_rollout[point]
        )
    }

    /// A rollout known only by its numbers (read from profile files, whose rows hold no text):
    /// its reward and every known field, as a conversation without messages.
    pub fn numbers_only(&self, point: usize) -> crate::conversation::Conversation {
        let known = |m: usize| Some(self.value(point, m)).filter(|v| !v.is_nan());
        crate::conversation::Conversation {
            reward: self
                .metric("reward")
                .and_then(known)
                .map(crate::table::short_number),
            fields: self
                .view
                .metrics
                .iter()
                .enumerate()
                .filter_map(|(m, name)| Some((name.clone(), crate::table::short_number(known(m)?))))
                .collect(),
            ..Default::default()
        }
    }

    /// The field plotted against the reward first (the plot model's rule, as in the report).
    pub fn default_x(&self) -> Option<usize> {
        let fields: Vec<&str> = self
            .view
            .metrics
            .iter()
            .map(String::as_str)
            .filter(|m| *m != "reward")
            .collect();
        let name = fields.get(plot::default_x(&fields)?)?;
        self.metric(name)
    }

    /// The rollout scatter's axes for x metric `x` (the report's for the same field).
    pub fn scatter_scales(&self, x: usize) -> (Scale, Scale) {
        plot::scatter_scales(
            &self.metric_values(Some(x)),
            &self.metric_values(self.metric("reward")),
        )
    }

    /// The agents' names, in the order of the agent table (a point's agent indexes it).
    pub fn agent_names(&self) -> Vec<String> {
        self.view
            .agents
            .rows
            .iter()
            .map(|r| r.key.clone())
            .collect()
    }

    /// The agent (row of the agent table) of point `i`, when known.
    pub fn agent_of(&self, i: usize) -> Option<usize> {
        self.cols
            .point_agent
            .get(i)
            .filter(|a| a.is_finite())
            .map(|&a| a as usize)
    }

    /// Whether point `i` is drawn when the agents marked in `hidden` are not.
    pub fn shown(&self, i: usize, hidden: &[bool]) -> bool {
        self.agent_of(i)
            .is_none_or(|a| !hidden.get(a).copied().unwrap_or(false))
    }

    /// How the rollout scatter places points first: jitter for discrete rewards.
    pub fn default_point_mode(&self) -> PointMode {
        PointMode::default_for(&self.metric_values(self.metric("reward")))
    }

    /// Per task (in `view.tasks` order), whether one of its shown rollouts lies in `brush` on
    /// the scatter of `ys` against `xs` (the plot's columns, from [`RunView::metric_values`]:
    /// taken as given, not gathered again from a million rows).
    pub fn tasks_in_brush(&self, xs: &[f64], ys: &[f64], b: &Brush, hidden: &[bool]) -> Vec<bool> {
        brush::tasks_in(
            b,
            xs,
            ys,
            (0..self.view.tasks.len()).map(|t| self.task_points(t)),
            |i| self.shown(i, hidden),
        )
    }

    /// The `(task, rollout)` keys of the shown points inside the brush, in point order (a
    /// notebook widget's `selection`).
    pub fn keys_in_brush(
        &self,
        xs: &[f64],
        ys: &[f64],
        b: &Brush,
        hidden: &[bool],
    ) -> Vec<(i64, i64)> {
        (0..self.points().min(xs.len()).min(ys.len()))
            .filter(|&i| self.shown(i, hidden) && b.contains(xs[i], ys[i]))
            .map(|i| {
                (
                    self.cols.point_task[i] as i64,
                    self.cols.point_rollout[i] as i64,
                )
            })
            .collect()
    }

    /// The binned mean of `ys` against `xs` (the plot's columns) for each agent (all points when
    /// no agent is known): the overlay's bins, per agent index (`None`: all).
    pub fn binned_rewards(&self, xs: &[f64], ys: &[f64]) -> Vec<AgentBins> {
        self.binned_rewards_of(xs, ys, None)
    }

    /// [`RunView::binned_rewards`] of the shown points only (a query's matches; `None`: every
    /// point), so the curves say what the plotted points say.
    pub fn binned_rewards_of(
        &self,
        xs: &[f64],
        ys: &[f64],
        shown: Option<&[bool]>,
    ) -> Vec<AgentBins> {
        let kept;
        let ys = match shown {
            None => ys,
            Some(keep) => {
                kept = only(ys, keep);
                &kept
            }
        };
        per_agent(
            xs,
            ys,
            Some(&self.cols.point_agent),
            self.view.agents.rows.len(),
        )
    }

    /// The reward histogram (the report's bars).
    pub fn reward_histogram(&self) -> Histogram {
        self.reward_histogram_of(None)
    }

    /// The reward histogram of the shown points only (`None`: every point).
    pub fn reward_histogram_of(&self, shown: Option<&[bool]>) -> Histogram {
        let rewards = self.metric_values(self.metric("reward"));
        match shown {
            None => plot::histogram(rewards),
            Some(keep) => plot::histogram(only(&rewards, keep)),
        }
    }
}

/// `values` with the points not kept as NaN (what the plots skip).
fn only(values: &[f64], keep: &[bool]) -> Vec<f64> {
    values
        .iter()
        .enumerate()
        .map(|(i, v)| {
            if keep.get(i).copied().unwrap_or(false) {
                *v
            } else {
                f64::NAN
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::inspect::model;
    use crate::output::profile_bytes;

    fn run() -> RunView {
        let inputs = br#"{"responses_create_params":{"input":"a"},"agent_ref":{"name":"x"},"_ng_task_index":0,"_ng_rollout_index":0}
{"responses_create_params":{"input":"a"},"agent_ref":{"name":"x"},"_ng_task_index":0,"_ng_rollout_index":1}
{"responses_create_params":{"input":"b"},"agent_ref":{"name":"x"},"_ng_task_index":1,"_ng_rollout_index":0}
"#;
        let rollouts = br#"{"_ng_task_index":0,"_ng_rollout_index":1,"reward":1.0,"response":{"usage":{"input_tokens":10,"output_tokens":30,"total_tokens":40}}}
{"_ng_task_index":1,"_ng_rollout_index":0,"reward":0.0,"response":{"usage":{"input_tokens":5,"output_tokens":7,"total_tokens":12}}}
{"_ng_task_index":0,"_ng_rollout_index":0,"reward":0.0,"response":{"usage":{"input_tokens":10,"output_tokens":10,"total_tokens":20}}}
"#;
        let p = profile_bytes(inputs, "i", rollouts, "r", Default::default()).unwrap();
        let (view, cols) = model::build(&p, "i", "r", &Default::default());
        RunView::new(view, cols)
    }

    #[test]
    fn the_query_s_points_alone_make_the_histogram() {
        let r = run();
        let rewards = r.metric_values(r.metric("reward"));
        let all = r.reward_histogram();
        let keep: Vec<bool> = rewards.iter().map(|v| *v == 0.0).collect();
        let some = r.reward_histogram_of(Some(&keep));
        assert_ne!(all, some);
        assert_eq!(some.bars.iter().map(|b| b.count).sum::<u64>(), 2);
    }

    #[test]
    fn the_query_s_points_alone_make_the_curves() {
        // 40 points of one agent: rewards 1 above x = 20, 0 below; the "query" keeps x < 20.
        let n = 40;
        let xs: Vec<f64> = (0..n).map(f64::from).collect();
        let ys: Vec<f64> = xs.iter().map(|&x| f64::from(u8::from(x >= 20.0))).collect();
        let agent = vec![0.0; n as usize];
        let all = per_agent(&xs, &ys, Some(&agent), 1);
        let keep: Vec<bool> = xs.iter().map(|&x| x < 20.0).collect();
        let kept = only(&ys, &keep);
        let some = per_agent(&xs, &kept, Some(&agent), 1);
        assert!(all[0].1.iter().any(|b| b.mean == 1.0));
        assert!(!some[0].1.is_empty() && some[0].1.iter().all(|b| b.mean == 0.0));
        // Nothing kept: no curve, no panic.
        let none = only(&ys, &vec![false; n as usize]);
        assert!(per_agent(&xs, &none, Some(&agent), 1)[0].1.is_empty());
        let r = run();
        let (xs, ys) = (
            r.metric_values(r.metric("output_tokens")),
            r.metric_values(r.metric("reward")),
        );
        assert_eq!(
            r.binned_rewards_of(&xs, &ys, Some(&[])),
            r.binned_rewards(&xs, &[f64::NAN; 3])
        );
    }

    #[test]
    fn a_query_s_figures_and_agent_lines_count_its_rollouts() {
        let r = run();
        let rewards = r.metric_values(r.metric("reward"));
        let keep: Vec<bool> = rewards.iter().map(|v| *v == 0.0).collect();
        let lines = r.agent_lines_of(&keep);
        assert_eq!(
            (lines[0].rollouts.as_str(), lines[0].mean_reward.as_str()),
            ("2", "0")
        );
        assert_eq!(
            lines[0].interval, "",
            "no interval across repeats for a part of them"
        );
        let cards = r.figures_of(&keep);
        let rollouts = cards.iter().find(|c| c.key == "rollouts").unwrap();
        assert_eq!(
            (rollouts.value.as_str(), rollouts.detail.as_str()),
            ("2", "the query's, of 3")
        );
        assert_eq!(cards.iter().find(|c| c.key == "tasks").unwrap().value, "2");
        assert!(r.has_rewards());
    }

    #[test]
    fn passes_say_their_rule_and_follow_the_threshold() {
        use crate::reward_group::RewardGroup;
        let r = run();
        assert!(r.rewards_binary());
        let (t0, t1) = (r.task_position(0).unwrap(), r.task_position(1).unwrap());
        let groups = r.groups_at(1.0);
        assert_eq!(groups[t0], RewardGroup::Mixed);
        assert_eq!(r.passes_text(t0, groups[t0], 1.0), "sometimes ≥ 1");
        assert_eq!(r.passes_text(t1, groups[t1], 1.0), "never ≥ 1");
        assert_eq!(r.groups_at(0.0)[t1], RewardGroup::AllSuccess);
    }

    #[test]
    fn lookups() {
        let r = run();
        let t0 = r.task_position(0).unwrap();
        let p = r.point_of(t0, 1).unwrap();
        assert_eq!(r.task_of_point(p), Some(t0));
        assert_eq!(r.value(p, r.metric("reward").unwrap()), 1.0);
        assert_eq!(r.task_points(t0).len(), 2);
        assert_eq!(r.point_of(t0, 9), None);
        assert_eq!(r.rollout_title(p), "task 0 · rollout 1 · x");
        let c = r.numbers_only(p);
        assert_eq!(c.reward.as_deref(), Some("1"));
        assert!(c
            .fields
            .iter()
            .any(|(k, v)| k == "output_tokens" && v == "30"));
        assert_eq!(r.task_of_point(99), None);
    }

    #[test]
    fn task_means_are_the_profiles() {
        let r = run();
        let t0 = r.task_position(0).unwrap();
        assert_eq!(r.task_mean(t0, r.metric("reward").unwrap()), 0.5);
        assert_eq!(r.task_mean(t0, r.metric("output_tokens").unwrap()), 20.0);
    }

    #[test]
    fn plots_use_the_model() {
        let r = run();
        assert_eq!(r.default_x(), r.metric("output_tokens"));
        let (x, y) = r.scatter_scales(r.default_x().unwrap());
        assert!(x.lo < 7.0 && x.hi > 30.0);
        assert_eq!(y.ticks, [0.0, 0.5, 1.0]);
        assert_eq!(r.reward_histogram().bars.len(), 2);
    }

    #[test]
    fn agents_brush_and_overlay() {
        let r = run();
        assert_eq!(r.agent_names(), ["x"]);
        assert!((0..r.points()).all(|i| r.agent_of(i) == Some(0)));
        assert!(!r.shown(0, &[true]) && r.shown(0, &[false]));
        assert_eq!(r.default_point_mode(), PointMode::Jitter);
        let x = r.metric("output_tokens").unwrap();
        let (xs, ys) = (
            r.metric_values(Some(x)),
            r.metric_values(r.metric("reward")),
        );
        // Rewards 1 at 30 tokens (task 0) only.
        let b = Brush::between(25.0, 35.0, 0.5, 1.5).unwrap();
        let t0 = r.task_position(0).unwrap();
        let t1 = r.task_position(1).unwrap();
        let inside = r.tasks_in_brush(&xs, &ys, &b, &[]);
        assert!(inside[t0] && !inside[t1]);
        assert_eq!(r.tasks_in_brush(&xs, &ys, &b, &[true]), [false, false]);
        let overlay = r.binned_rewards(&xs, &ys);
        assert_eq!(overlay.len(), 1);
        let (agent, bins, interval) = &overlay[0];
        assert_eq!(
            (*agent, *interval),
            (Some(0), crate::plot::binned::Interval::Wilson)
        );
        assert!(
            bins.is_empty(),
            "three points make no curve (binned::MIN_PER_BIN)"
        );
    }
}
