//! Moving through transcripts (docs/app.md, "the rollout panel"): the previous and next
//! rollout in the order the task table shows (its filters, sort, brush and the query), and a
//! task's other repeats.

use super::run::RunView;

/// Where a rollout stands in the shown order, and its neighbours.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Place {
    /// 0-based position among the shown rollouts, and how many are shown.
    pub at: usize,
    pub of: usize,
    pub previous: Option<usize>,
    pub next: Option<usize>,
}

impl RunView {
    /// The shown rollouts in order: each task of `tasks` (the table's order, indices into
    /// `view.tasks`) gives its points that `matched` keeps (every one without a query).
    pub fn shown_points(&self, tasks: &[u32], matched: Option<&[bool]>) -> Vec<usize> {
        let keep = |p: usize| matched.is_none_or(|m| m.get(p).copied().unwrap_or(false));
        tasks
            .iter()
            .flat_map(|&t| self.task_points(t as usize))
            .filter(|&p| keep(p))
            .collect()
    }

    /// Point `point`'s place among `shown` (from [`RunView::shown_points`]); `None` when it is
    /// not shown (filtered out since it was opened).
    pub fn place(shown: &[usize], point: usize) -> Option<Place> {
        let at = shown.iter().position(|&p| p == point)?;
        Some(Place {
            at,
            of: shown.len(),
            previous: at.checked_sub(1).map(|i| shown[i]),
            next: shown.get(at + 1).copied(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn neighbours_follow_the_shown_order() {
        let shown = [4, 5, 0, 2];
        assert_eq!(
            RunView::place(&shown, 0),
            Some(Place {
                at: 2,
                of: 4,
                previous: Some(5),
                next: Some(2)
            })
        );
        let first = RunView::place(&shown, 4).unwrap();
        assert_eq!((first.previous, first.next), (None, Some(5)));
        assert_eq!(RunView::place(&shown, 9), None);
    }
}
