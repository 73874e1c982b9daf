//! Planning a selection from decisions already made: the rules that only choose among the
//! pivots (kept classes, `--difficulty-threshold`, `--max-mean`, `--dedupe-prefix`,
//! `--max-pivots`, `--sort`, the split) run over indices into [`Decisions`], so the page can
//! re-plan on every move of its λ_diff slider and `select-pivot` plans once, with the same code.

use super::{Decision, Plan, SelectOptions, SelectionCounts, Sort};

/// Every pivot of a file with its decision, and the counts that do not depend on the plan.
#[derive(Debug)]
pub struct Decisions {
    decisions: Vec<Decision>,
    /// The options the file was read with: a pivot's class follows `min_rollouts` and
    /// `success_threshold`, its prefix hash exists only with `dedupe_prefix`.
    read: SelectOptions,
    /// Classes, profiled pivots, rollouts per pivot, pivots per depth and tool, the deciles.
    base: SelectionCounts,
}

/// A plan as indices into the decisions.
struct Chosen {
    kept: Vec<usize>,
    validation: Vec<usize>,
    counts: SelectionCounts,
}

impl Decisions {
    pub(super) fn new(decisions: Vec<Decision>, read: SelectOptions) -> Decisions {
        let mut base = SelectionCounts {
            pivots: decisions.len() as u64,
            ..Default::default()
        };
        for d in &decisions {
            *base.classes.entry(d.class).or_default() += 1;
            if let Some(info) = &d.profile_info {
                base.profiled += 1;
                *base
                    .rollouts_per_pivot
                    .entry(info["num_rollouts"].as_u64().unwrap_or(0))
                    .or_default() += 1;
            }
        }
        base.breakdown = breakdown(&decisions);
        Decisions {
            decisions,
            read,
            base,
        }
    }

    pub fn decisions(&self) -> &[Decision] {
        &self.decisions
    }

    /// Whether `options` can be planned from this reading: the classes and prefix hashes were
    /// made with the options the file was read with; others need the pivots read again.
    pub fn fits(&self, options: &SelectOptions) -> bool {
        options.min_rollouts == self.read.min_rollouts
            && options.success_threshold.to_bits() == self.read.success_threshold.to_bits()
            && (!options.dedupe_prefix || self.read.dedupe_prefix)
    }

    /// The profiled pivots' on-policy mean reward and reward variance (what the deciles are of).
    pub fn profiled_means_and_variances(&self) -> (Vec<f64>, Vec<f64>) {
        self.decisions
            .iter()
            .filter(|d| d.profile_info.is_some())
            .map(|d| (d.pass_rate, d.variance))
            .unzip()
    }

    /// The counts `options` would give, nothing copied: what the page shows per slider move.
    pub fn counts(&self, options: &SelectOptions) -> SelectionCounts {
        self.choose(options).counts
    }

    /// The plan for `options`, the decisions copied (the page keeps them for the next move).
    pub fn plan(&self, options: &SelectOptions) -> Plan {
        let c = self.choose(options);
        let take = |ix: &[usize]| ix.iter().map(|&i| self.decisions[i].clone()).collect();
        Plan {
            selected: take(&c.kept),
            validation: take(&c.validation),
            counts: c.counts,
        }
    }

    /// The plan for `options`, the decisions moved (`select-pivot` plans once).
    pub fn into_plan(self, options: &SelectOptions) -> Plan {
        let c = self.choose(options);
        let mut all: Vec<Option<Decision>> = self.decisions.into_iter().map(Some).collect();
        let mut take = |ix: &[usize]| ix.iter().filter_map(|&i| all[i].take()).collect();
        let selected = take(&c.kept);
        let validation = take(&c.validation);
        Plan {
            selected,
            validation,
            counts: c.counts,
        }
    }

    fn choose(&self, o: &SelectOptions) -> Chosen {
        let all = &self.decisions;
        let mut counts = self.base.clone();
        let mut kept: Vec<usize> = (0..all.len())
            .filter(|&i| o.keep.contains(&all[i].class))
            .collect();
        if let Some(t) = o.difficulty_threshold.filter(|t| *t > 0.0) {
            let before = kept.len();
            // NaN (unprofiled, kept for inspection) is not above the threshold.
            kept.retain(|&i| all[i].pass_rate.partial_cmp(&t) != Some(std::cmp::Ordering::Greater));
            counts.dropped_above_difficulty_threshold = (before - kept.len()) as u64;
        }
        if let Some(x) = o.max_mean {
            // PivotRL's rule: informative (reward variance > 0) and hard (mean below λ_diff).
            let before = kept.len();
            kept.retain(|&i| all[i].variance > 0.0 && all[i].pass_rate < x);
            counts.dropped_max_mean = (before - kept.len()) as u64;
        }
        if o.dedupe_prefix {
            let before = kept.len();
            let mut seen = std::collections::HashSet::new();
            kept.retain(|&i| all[i].prefix.is_none_or(|p| seen.insert(p)));
            counts.dropped_duplicate_prefix = (before - kept.len()) as u64;
        }
        if let Some(max) = o.max_pivots {
            if kept.len() as u64 > max {
                // Keep the hardest: lowest pass rate first, ties by file order; then back to file order.
                let mut order: Vec<usize> = (0..kept.len()).collect();
                order.sort_by(|&a, &b| {
                    rate(&all[kept[a]])
                        .total_cmp(&rate(&all[kept[b]]))
                        .then(a.cmp(&b))
                });
                let mut keep = vec![false; kept.len()];
                order
                    .iter()
                    .take(max as usize)
                    .for_each(|&i| keep[i] = true);
                counts.dropped_easiest = (kept.len() as u64) - max;
                let mut i = 0;
                kept.retain(|_| {
                    i += 1;
                    keep[i - 1]
                });
            }
        }
        match o.sort {
            Sort::None => {}
            Sort::Difficulty => kept.sort_by(|&a, &b| rate(&all[a]).total_cmp(&rate(&all[b]))),
            Sort::Variance => kept.sort_by(|&a, &b| var(&all[b]).total_cmp(&var(&all[a]))),
        }
        let mut validation = Vec::new();
        if let Some(f) = o.val_fraction.filter(|f| *f > 0.0) {
            (kept, validation) = split_by_trajectory(all, kept, f, o.seed);
        }
        counts.kept = kept.len() as u64;
        counts.validation = validation.len() as u64;
        for &i in &kept {
            let d = &all[i];
            counts.breakdown.per_depth.entry(d.depth).or_default().kept += 1;
            counts
                .breakdown
                .per_tool
                .entry(d.tool.clone())
                .or_default()
                .kept += 1;
        }
        Chosen {
            kept,
            validation,
            counts,
        }
    }
}

/// The kept pivots split into train and validation: whole source trajectories (a pivot without
/// `trajectory_id` is its own group) in the seeded order of `seeded::split`.
fn split_by_trajectory(
    all: &[Decision],
    kept: Vec<usize>,
    fraction: f64,
    seed: u64,
) -> (Vec<usize>, Vec<usize>) {
    use crate::seeded::{groups, split};
    let names: Vec<String> = kept
        .iter()
        .map(|&i| {
            all[i]
                .trajectory
                .clone()
                .unwrap_or_else(|| format!("line {}", all[i].span.line))
        })
        .collect();
    let (group_of, group_keys) = groups(seed, names.iter().map(String::as_str));
    let item_keys = vec![0; kept.len()];
    let val = split(&item_keys, Some((&group_of, &group_keys)), fraction);
    let (v, t): (Vec<_>, Vec<_>) = kept.into_iter().zip(val).partition(|(_, v)| *v);
    (
        t.into_iter().map(|(i, _)| i).collect(),
        v.into_iter().map(|(i, _)| i).collect(),
    )
}

/// Per depth and tool, every pivot read (the plan counts the kept ones); the deciles over
/// every profiled pivot.
fn breakdown(all: &[Decision]) -> super::Breakdown {
    let mut b = super::Breakdown::default();
    for d in all {
        b.per_depth.entry(d.depth).or_default().pivots += 1;
        b.per_tool.entry(d.tool.clone()).or_default().pivots += 1;
    }
    let profiled = || all.iter().filter(|d| d.profile_info.is_some());
    b.mean_deciles = super::deciles(profiled().map(|d| d.pass_rate));
    b.variance_deciles = super::deciles(profiled().map(|d| d.variance));
    b
}

/// Unprofiled pivots (kept only for inspection) sort last.
fn rate(d: &Decision) -> f64 {
    if d.pass_rate.is_nan() {
        f64::INFINITY
    } else {
        d.pass_rate
    }
}

fn var(d: &Decision) -> f64 {
    if d.variance.is_nan() {
        f64::NEG_INFINITY
    } else {
        d.variance
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Class, ProfileIndex, SelectOptions, Selector, Sort};
    use super::Decisions;
    use serde_json::json;

    /// Twelve pivots over four trajectories and three tools, with on-policy means 0, 1/8, …,
    /// and a duplicate prefix; the profile ties them by `pivot_id`.
    fn files() -> (String, String) {
        let (mut pivots, mut profile) = (String::new(), String::new());
        for i in 0..12_u64 {
            let id = format!("p{i}");
            let tool = ["search", "open", "answer"][(i % 3) as usize];
            let input = if i == 7 { 5 } else { i }; // pivot 7 repeats pivot 5's prefix and action
            let expected = if i == 7 { "open" } else { tool };
            let row = json!({"trajectory_id": i / 3, "responses_create_params": {"input": [{"role": "user", "content": input.to_string()}]},
                "expected_action": {"type": "function_call", "name": expected}, "meta_info": {"depth": i % 2},
                "pivot_info": {"pivot_id": id}});
            pivots.push_str(&format!("{row}\n"));
            let successes = i % 9;
            let rewards: Vec<f64> = (0..8).map(|r| f64::from(u8::from(r < successes))).collect();
            let infos: Vec<_> = rewards.iter().map(|r| json!({"reward": r})).collect();
            let p = json!({"_ng_task_index": i, "rollout_infos": infos, "sample": {"pivot_info": {"pivot_id": id}}});
            profile.push_str(&format!("{p}\n"));
        }
        (pivots, profile)
    }

    fn selector(options: SelectOptions) -> Selector {
        let (pivots, profile) = files();
        let mut index = ProfileIndex::new("prof.jsonl");
        assert!(index.push(profile.as_bytes()));
        let mut s = Selector::new("p.jsonl", index.finish().unwrap(), options);
        assert!(s.push(pivots.as_bytes()));
        s
    }

    fn options(max_mean: Option<f64>) -> SelectOptions {
        SelectOptions {
            keep: vec![Class::Mixed, Class::AllFailure, Class::AllSuccess],
            max_mean,
            dedupe_prefix: true,
            ..SelectOptions::default()
        }
    }

    fn lines(plan: &super::Plan) -> Vec<u64> {
        plan.selected.iter().map(|d| d.span.line).collect()
    }

    /// One reading planned for every option is what a reading per option gives: the page's
    /// slider and `select-pivot` agree by construction.
    #[test]
    fn one_reading_plans_as_a_fresh_selection_for_every_option() {
        let read: Decisions = selector(options(None)).decisions().unwrap();
        let mut variants = Vec::new();
        for m in [
            None,
            Some(0.0),
            Some(0.25),
            Some(0.5),
            Some(0.875),
            Some(1.0),
        ] {
            variants.push(options(m));
            variants.push(SelectOptions {
                dedupe_prefix: false,
                ..options(m)
            });
            variants.push(SelectOptions {
                max_pivots: Some(3),
                sort: Sort::Variance,
                ..options(m)
            });
            variants.push(SelectOptions {
                val_fraction: Some(0.25),
                seed: 7,
                ..options(m)
            });
            variants.push(SelectOptions {
                difficulty_threshold: Some(0.5),
                keep: vec![Class::Mixed],
                ..options(m)
            });
        }
        for o in variants {
            assert!(read.fits(&o));
            let fresh = selector(o.clone()).finish().unwrap();
            let planned = read.plan(&o);
            assert_eq!(lines(&planned), lines(&fresh), "{o:?}");
            let val =
                |p: &super::Plan| p.validation.iter().map(|d| d.span.line).collect::<Vec<_>>();
            assert_eq!(val(&planned), val(&fresh), "{o:?}");
            assert_eq!(planned.counts, fresh.counts, "{o:?}");
            assert_eq!(read.counts(&o), fresh.counts, "{o:?}");
            let infos = |p: &super::Plan| {
                p.selected
                    .iter()
                    .map(|d| d.profile_info.clone())
                    .collect::<Vec<_>>()
            };
            assert_eq!(infos(&planned), infos(&fresh));
        }
    }

    #[test]
    fn lambda_diff_keeps_varied_pivots_strictly_below_it() {
        let read = selector(options(None)).decisions().unwrap();
        // Means are (i % 9) / 8: pivot 0 and 9 have no variance, pivot 8 is all success.
        let kept = |m| lines(&read.plan(&options(Some(m))));
        assert_eq!(kept(0.25), [2, 11]); // means 1/8 (pivots 1, 10)
        assert_eq!(kept(0.375), [2, 3, 11, 12]); // and 2/8 (pivots 2, 11)
        let all = read.counts(&options(Some(1.0)));
        assert_eq!(all.kept, 9); // 12 minus the two all-failure, one all-success; pivot 7 differs from 5 in mean
        assert_eq!(all.dropped_max_mean, 3);
        let c = read.counts(&options(Some(0.25)));
        assert_eq!((c.kept, c.dropped_max_mean), (2, 10));
        assert_eq!(c.breakdown.per_tool["open"].kept, 2); // pivots 1 and 10
        assert_eq!(c.breakdown.per_depth[&Some(1)].kept, 1);
        assert_eq!(c.breakdown.per_depth[&Some(1)].pivots, 6);
        let (means, variances) = read.profiled_means_and_variances();
        assert_eq!(means.len(), 12);
        assert_eq!(means[3], 3.0 / 8.0);
        assert_eq!(variances[0], 0.0);
    }

    #[test]
    fn a_reading_fits_only_the_options_its_classes_and_prefixes_were_made_with() {
        let read = selector(SelectOptions::default()).decisions().unwrap();
        assert!(read.fits(&SelectOptions {
            max_mean: Some(0.5),
            ..SelectOptions::default()
        }));
        assert!(!read.fits(&SelectOptions {
            min_rollouts: 4,
            ..SelectOptions::default()
        }));
        assert!(!read.fits(&SelectOptions {
            success_threshold: 0.5,
            ..SelectOptions::default()
        }));
        assert!(!read.fits(&SelectOptions {
            dedupe_prefix: true,
            ..SelectOptions::default()
        }));
        assert_eq!(read.decisions().len(), 12);
    }
}
