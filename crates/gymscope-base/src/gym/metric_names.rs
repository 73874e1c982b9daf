//! NeMo Gym v0.7.0's grammar of metric names (`metrics_config.py`): which names are *primary*,
//! a point estimate that may be aggregated across repeats and compared, and which are
//! statistics of one, uncertainty estimates or metadata.

use super::keys::{ATTEMPT_INDEX, ROLLOUT_INDEX, TASK_INDEX};

/// `ACROSS_REPEATS_MARKER`: what marks a statistic across repeats (`mean_across_repeats/…`).
pub const ACROSS_REPEATS_MARKER: &str = "_across_repeats/";

/// Every statistic's prefix except `mean/` (`METRIC_EXCLUDED_PREFIXES`).
const EXCLUDED_PREFIXES: [&str; 11] = [
    "max/",
    "min/",
    "median/",
    "std/",
    "sem/",
    "se/",
    "p25/",
    "p75/",
    "ci_low_95/",
    "ci_high_95/",
    "histogram/",
];

/// `METRIC_EXCLUDED_SUFFIXES`, the pass@k companions (`PassMajorityStat`) included.
const EXCLUDED_SUFFIXES: [&str; 19] = [
    "/max",
    "/min",
    "/median",
    "/p5",
    "/p25",
    "/p75",
    "/p95",
    "/ci_low_95",
    "/ci_high_95",
    "/ci_lower",
    "/ci_upper",
    "_ci_lower",
    "_ci_upper",
    "_ci95_lower",
    "_ci95_upper",
    "/_ng_attempt_index",
    "/std_dev_across_runs",
    "/std_err_across_runs",
    "/avg_sample_std_dev",
];

/// `METRIC_EXCLUDED_NAMES`.
const EXCLUDED_NAMES: [&str; 7] = [
    TASK_INDEX,
    ROLLOUT_INDEX,
    ATTEMPT_INDEX,
    "sample_count",
    "missing_count",
    "num_repeats",
    "token_usage_version",
];

/// `is_primary_metric`: a point estimate suitable for repeat aggregation and comparison.
pub fn is_primary(name: &str) -> bool {
    !EXCLUDED_NAMES.contains(&name)
        && !EXCLUDED_PREFIXES.iter().any(|p| name.starts_with(p))
        && !EXCLUDED_SUFFIXES.iter().any(|s| name.ends_with(s))
        && !name.contains(ACROSS_REPEATS_MARKER)
}

#[cfg(test)]
mod tests {
    use super::is_primary;

    #[test]
    fn means_are_primary_and_their_companions_are_not() {
        for name in [
            "mean/reward",
            "mean/output_tokens",
            "pass@4",
            "mean/num_repeats",
        ] {
            assert!(is_primary(name), "{name}");
        }
        for name in [
            "median/reward",
            "sem/reward",
            "mean/x/max",
            "pass@4/std_err_across_runs",
            "mean_across_repeats/mean/reward",
            "sample_count",
            "mean/acc_ci95_upper",
            "histogram/reward",
        ] {
            assert!(!is_primary(name), "{name}");
        }
    }
}
