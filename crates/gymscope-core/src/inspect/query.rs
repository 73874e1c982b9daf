//! Which tasks the table shows, in which order: filters (reward group, agent, search by task
//! index or prompt text) and a sort on any column.

use super::model::{InspectView, RewardGroup};

#[derive(Clone, Debug, Default, PartialEq)]
pub struct TaskQuery {
    /// Column of the task table to sort by; `None` keeps task order.
    pub sort: Option<usize>,
    pub descending: bool,
    pub group: Option<RewardGroup>,
    pub agent: Option<String>,
    /// A task index (exact), or text to find in the prompt snippet (case-insensitive).
    pub search: String,
    /// Only the tasks marked here (by index in `view.tasks`): those with a rollout in the brush.
    pub within: Option<std::sync::Arc<Vec<bool>>>,
    /// Only the tasks with a rollout the query bar's expression matches (`run_query::task_mask`).
    pub matched: Option<std::sync::Arc<Vec<bool>>>,
    /// Each task's group at a pass threshold the user set (`RunView::groups_at`); `None`: the
    /// groups of the default threshold, `TaskMeta::group`.
    pub groups: Option<std::sync::Arc<Vec<RewardGroup>>>,
    /// Each task's prompt snippet, read after the view (`model::SnippetTap`); `None`: the
    /// view's own, `TaskMeta::snippet`.
    pub snippets: Option<std::sync::Arc<Vec<String>>>,
}

/// Indices into `view.tasks` of the tasks to show, in order. `stats` is tasks × headers.
pub fn select(view: &InspectView, stats: &[f64], q: &TaskQuery) -> Vec<u32> {
    let width = view.task_headers.len();
    let search = q.search.trim();
    let search_index: Option<i64> = search.parse().ok();
    let needle = search.to_lowercase();
    let mut rows: Vec<u32> = view
        .tasks
        .iter()
        .enumerate()
        .filter(|(i, t)| {
            let group = q.groups.as_ref().and_then(|g| g.get(*i)).copied();
            q.group.is_none_or(|g| group.unwrap_or(t.group) == g)
        })
        .filter(|(_, t)| q.agent.as_ref().is_none_or(|a| t.agents.contains(a)))
        .filter(|(i, _)| {
            q.within
                .as_ref()
                .is_none_or(|w| w.get(*i).copied().unwrap_or(false))
        })
        .filter(|(i, _)| {
            q.matched
                .as_ref()
                .is_none_or(|w| w.get(*i).copied().unwrap_or(false))
        })
        .filter(|(i, t)| match (search.is_empty(), search_index) {
            (true, _) => true,
            (false, Some(index)) => t.task == index,
            (false, None) => {
                let read = q.snippets.as_ref().and_then(|s| s.get(*i));
                let snippet = read.unwrap_or(&t.snippet);
                snippet.to_lowercase().contains(&needle)
            }
        })
        .map(|(i, _)| i as u32)
        .collect();
    if let Some(col) = q.sort.filter(|&c| c < width) {
        let key = |i: &u32| {
            stats
                .get(*i as usize * width + col)
                .copied()
                .unwrap_or(f64::NAN)
        };
        // Missing values sort last either way; ties keep task order.
        rows.sort_by(|a, b| {
            let (x, y) = (key(a), key(b));
            match (x.is_nan(), y.is_nan()) {
                (true, true) => std::cmp::Ordering::Equal,
                (true, false) => std::cmp::Ordering::Greater,
                (false, true) => std::cmp::Ordering::Less,
                _ if q.descending => y.total_cmp(&x),
                _ => x.total_cmp(&y),
            }
        });
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::inspect::model::{TaskMeta, Totals};
    use crate::table::Table;

    fn view() -> InspectView {
        let task = |task, group, agent: &str, snippet: &str| TaskMeta {
            task,
            agents: vec![agent.into()],
            group,
            snippet: snippet.into(),
            first_point: 0,
            num_rollouts: 1,
        };
        InspectView {
            inputs_name: String::new(),
            rollouts_name: String::new(),
            summary: [String::new(), String::new()],
            warnings: vec![],
            totals: Totals {
                tasks: 3,
                rollouts: 3,
                expected_rollouts: 3,
                agents: 2,
                mean_reward: None,
                mean_output_tokens: None,
                mean_total_tokens: None,
            },
            agents: Table {
                headers: vec![],
                rows: vec![],
            },
            repeats: None,
            repeat_notes: vec![],
            figures: vec![],
            agent_lines: vec![],
            metrics: vec!["reward".into()],
            task_headers: vec!["mean/reward".into()],
            tasks: vec![
                task(0, RewardGroup::AllFailure, "a", "Solve the integral"),
                task(1, RewardGroup::Mixed, "b", "Find the bug"),
                task(2, RewardGroup::AllSuccess, "a", "Integral of x"),
            ],
            health: crate::inspect::health_view::HealthState::NotComputed,
        }
    }

    #[test]
    fn filters_and_sorts() {
        let v = view();
        let stats = [0.0, f64::NAN, 1.0];
        assert_eq!(select(&v, &stats, &TaskQuery::default()), [0, 1, 2]);
        let by_mean_desc = TaskQuery {
            sort: Some(0),
            descending: true,
            ..Default::default()
        };
        assert_eq!(select(&v, &stats, &by_mean_desc), [2, 0, 1]);
        let by_mean = TaskQuery {
            sort: Some(0),
            ..Default::default()
        };
        assert_eq!(select(&v, &stats, &by_mean), [0, 2, 1]);
        assert_eq!(
            select(
                &v,
                &stats,
                &TaskQuery {
                    group: Some(RewardGroup::Mixed),
                    ..Default::default()
                }
            ),
            [1]
        );
        assert_eq!(
            select(
                &v,
                &stats,
                &TaskQuery {
                    agent: Some("a".into()),
                    ..Default::default()
                }
            ),
            [0, 2]
        );
        assert_eq!(
            select(
                &v,
                &stats,
                &TaskQuery {
                    search: "integral".into(),
                    ..Default::default()
                }
            ),
            [0, 2]
        );
        assert_eq!(
            select(
                &v,
                &stats,
                &TaskQuery {
                    search: "2".into(),
                    ..Default::default()
                }
            ),
            [2]
        );
        // Snippets read after the view are searched instead of the view's own.
        let read = TaskQuery {
            search: "later".into(),
            snippets: Some(std::sync::Arc::new(vec![
                String::new(),
                "read later".into(),
            ])),
            ..Default::default()
        };
        assert_eq!(select(&v, &stats, &read), [1]);
        let only = TaskQuery {
            matched: Some(std::sync::Arc::new(vec![true, false, true])),
            search: "integral".into(),
            ..Default::default()
        };
        assert_eq!(select(&v, &stats, &only), [0, 2]);
        let only = TaskQuery {
            matched: Some(std::sync::Arc::new(vec![false, true])),
            ..Default::default()
        };
        assert_eq!(
            select(&v, &stats, &only),
            [1],
            "a short mask keeps nothing more"
        );
        let brushed = TaskQuery {
            within: Some(std::sync::Arc::new(vec![true, false, true])),
            sort: Some(0),
            descending: true,
            ..Default::default()
        };
        assert_eq!(select(&v, &stats, &brushed), [2, 0]);
        // The query bar's tasks narrow with the brush, not instead of it.
        let queried = TaskQuery {
            matched: Some(std::sync::Arc::new(vec![true, true, false])),
            ..brushed
        };
        assert_eq!(select(&v, &stats, &queried), [0]);
    }
}
