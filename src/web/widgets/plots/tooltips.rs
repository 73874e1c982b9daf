//! The scatters' hover text: which point it is and its values.

use crate::inspect::run::RunView;
use crate::table::short_number;

/// A rollout point: its key, agent, reward and the x field's value.
pub fn rollout(r: &RunView, p: usize, x_metric: usize) -> String {
    let reward = r.metric("reward");
    let agent = r
        .agent_of(p)
        .and_then(|a| r.view.agents.rows.get(a))
        .map(|row| format!(" · {}", row.key))
        .unwrap_or_default();
    format!(
        "task {} · rollout {}{agent} — reward {}, {} {}",
        r.cols.point_task[p],
        r.cols.point_rollout[p],
        reward.map_or("–".into(), |m| short_number(r.value(p, m))),
        r.view.metrics[x_metric],
        short_number(r.value(p, x_metric))
    )
}

/// A task point: its index, agents, rollouts and mean reward.
pub fn task(r: &RunView, t: usize) -> String {
    let meta = &r.view.tasks[t];
    let mean = r
        .metric("reward")
        .map_or("–".into(), |m| short_number(r.task_mean(t, m)));
    let agents = if meta.agents.is_empty() {
        String::new()
    } else {
        format!(" · {}", meta.agents.join(", "))
    };
    format!(
        "task {}{agents} — {} rollouts, mean reward {mean}",
        meta.task, meta.num_rollouts
    )
}
