//! The per-task latency lines v0.7.0 prints after a run (`rollout_collection.py`
//! `DispatchLatencyTracker.summary`): percentiles of the durations of `/run` calls that answered
//! with a result, so a run that looks fast in rollouts/s but makes every task slow shows it.

/// `q`-quantile by linear interpolation between the sorted durations (upstream's rule).
pub fn quantile(sorted: &[f64], q: f64) -> f64 {
    let pos = (sorted.len() - 1) as f64 * q;
    let low = pos as usize;
    let high = (low + 1).min(sorted.len() - 1);
    sorted[low] * (1.0 - (pos - low as f64)) + sorted[high] * (pos - low as f64)
}

/// The summary lines for these durations in seconds (non-positive ones are not recorded, as
/// upstream's tracker ignores them).
pub fn summary(durations: &[f64]) -> String {
    let mut d: Vec<f64> = durations.iter().copied().filter(|s| *s > 0.0).collect();
    if d.is_empty() {
        return "No completed rollouts to report latency for.".into();
    }
    d.sort_by(f64::total_cmp);
    // Upstream's running sum adds in sorted order.
    let total: f64 = d.iter().sum();
    format!(
        "Per-task latency over {} completed rollout(s): median {:.1} min, p90 {:.1} min, p99 {:.1} min, max {:.1} min\nTask-time delivered: {:.1} task-hours",
        d.len(),
        quantile(&d, 0.5) / 60.0,
        quantile(&d, 0.9) / 60.0,
        quantile(&d, 0.99) / 60.0,
        d[d.len() - 1] / 60.0,
        total / 3600.0
    )
}

/// The headroom a rollout needs before it is worth starting under `dispatch_budget_s` (v0.7.0
/// `DispatchLatencyTracker.drain_margin`): `drain_margin_s` when given, else the p75 of the
/// finished rollouts' durations (sorted) once five have finished.
pub fn drain_margin(configured: Option<f64>, sorted: &[f64]) -> Option<f64> {
    configured.or_else(|| (sorted.len() >= 5).then(|| quantile(sorted, 0.75)))
}

/// The line v0.7.0 prints when a budget is set.
pub fn budget_line(budget_s: f64, margin_s: Option<f64>) -> String {
    format!(
        "Dispatch budget: {:.0} min. New rollouts stop being {}",
        budget_s / 60.0,
        match margin_s {
            Some(m) => format!("dispatched with under {:.0} min left.", m / 60.0),
            None => "dispatched once less time remains than this run's observed p75 task duration."
                .into(),
        }
    )
}

/// The line after the latency summary when rows were drained.
pub fn drained_line(drained: u64) -> Option<String> {
    (drained > 0).then(|| {
        format!(
            "Drained (not dispatched, no time left in the budget): {drained}. These wrote no row and will be re-dispatched on resume."
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn budget_lines_and_margin() {
        assert_eq!(
            budget_line(5400.0, None),
            "Dispatch budget: 90 min. New rollouts stop being dispatched once less time remains than this run's observed p75 task duration."
        );
        assert_eq!(
            budget_line(90.0, Some(150.0)),
            "Dispatch budget: 2 min. New rollouts stop being dispatched with under 2 min left."
        );
        assert_eq!(drain_margin(None, &[1.0, 2.0, 3.0, 4.0]), None);
        assert_eq!(drain_margin(None, &[1.0, 2.0, 3.0, 4.0, 5.0]), Some(4.0));
        assert_eq!(drain_margin(Some(9.0), &[]), Some(9.0));
        assert_eq!(drained_line(0), None);
    }

    #[test]
    fn percentiles_interpolate_as_upstream() {
        assert_eq!(summary(&[]), "No completed rollouts to report latency for.");
        // 60, 120, 180, 240 s: median 150 s = 2.5 min, p90 at 2.7 → 222 s = 3.7 min.
        assert_eq!(
            summary(&[240.0, 60.0, 180.0, 120.0, 0.0]),
            "Per-task latency over 4 completed rollout(s): median 2.5 min, p90 3.7 min, p99 4.0 min, max 4.0 min\nTask-time delivered: 0.2 task-hours"
        );
    }
}
