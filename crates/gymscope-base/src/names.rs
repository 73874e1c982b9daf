//! Every file name gymscope derives from another, in one place, so the CLI and the web app name
//! their outputs identically. Names are derived from a file *name* (not a path) with Python's
//! `Path.stem` rule, as upstream's `pathlib` calls do; [`sibling`] places one next to a path.

use std::path::{Path, PathBuf};

/// Python's `Path.stem`: the name without its last extension; a leading dot is not an extension
/// (`.hidden` → `.hidden`, `a.b.jsonl` → `a.b`, `rollouts` → `rollouts`).
pub fn stem(name: &str) -> &str {
    let name = base_name(name);
    match name.rfind('.') {
        Some(0) | None => name,
        Some(dot) => &name[..dot],
    }
}

/// The last extension including its dot (`a.b.jsonl` → `.jsonl`), empty when there is none.
pub fn suffix(name: &str) -> &str {
    let name = base_name(name);
    &name[stem(name).len()..]
}

/// The last component of a `/`-separated name (browsers give bare names; the CLI may pass paths).
pub fn base_name(name: &str) -> &str {
    name.rsplit(['/', '\\']).next().unwrap_or(name)
}

/// The file name of `path` as text (lossy), for deriving names from CLI paths.
pub fn file_name_of(path: &Path) -> String {
    path.file_name()
        .unwrap_or_default()
        .to_string_lossy()
        .into_owned()
}

/// `dir/x.jsonl` and a derived name → `dir/<name>`.
pub fn sibling(path: &Path, name: impl AsRef<std::ffi::OsStr>) -> PathBuf {
    path.with_file_name(name)
}

/// Applies a name rule to a path's file name and places the result beside it.
pub fn beside(path: &Path, rule: impl Fn(&str) -> String) -> PathBuf {
    sibling(path, rule(&file_name_of(path)))
}

/// The temporary file an output is written to before it is renamed into place:
/// `x.jsonl` → `.x.jsonl.<pid>.tmp` (hidden, in the same directory so the rename is atomic).
pub fn temp(name: &str, pid: u32) -> String {
    format!(".{}.{pid}.tmp", base_name(name))
}

/// The file a torn last line is moved to on `--resume`: `x.jsonl` → `x.jsonl.torn`.
pub fn torn(name: &str) -> String {
    format!("{}.torn", base_name(name))
}

// ---- gym eval profile ----

/// `rollouts.jsonl` → `rollouts_reward_profiling.jsonl` (upstream's name).
pub fn reward_profiling(rollouts: &str) -> String {
    format!("{}_reward_profiling.jsonl", stem(rollouts))
}

/// `rollouts.jsonl` → `rollouts_agent_metrics.json` (upstream's name).
pub fn agent_metrics(rollouts: &str) -> String {
    format!("{}_agent_metrics.json", stem(rollouts))
}

/// `rollouts.jsonl` → `rollouts_repeat_level_metrics.json` (NeMo Gym v0.7.0's name).
pub fn repeat_level_metrics(rollouts: &str) -> String {
    format!("{}_repeat_level_metrics.json", stem(rollouts))
}

/// The run's base name behind a profile file: `x_reward_profiling.jsonl` → `x`.
pub fn run_stem_of_profile(profile: &str) -> &str {
    let s = stem(profile);
    s.strip_suffix("_reward_profiling").unwrap_or(s)
}

/// `x_reward_profiling.jsonl` → `x_agent_metrics.json`, the metrics written beside a profile.
pub fn agent_metrics_of_profile(profile: &str) -> String {
    format!("{}_agent_metrics.json", run_stem_of_profile(profile))
}

// ---- gym eval run ----

/// `rollouts.jsonl` → `rollouts_materialized_inputs.jsonl`.
pub fn materialized_inputs(rollouts: &str) -> String {
    format!("{}_materialized_inputs.jsonl", stem(rollouts))
}

/// The rollouts file a materialized-inputs file was written for:
/// `x_materialized_inputs.jsonl` → `x.jsonl` (`None` for other names).
pub fn rollouts_of_inputs(inputs: &str) -> Option<String> {
    let s = stem(inputs).strip_suffix("_materialized_inputs")?;
    Some(format!("{s}{}", suffix(inputs)))
}

/// `rollouts.jsonl` → `rollouts_failures.jsonl`.
pub fn failures(rollouts: &str) -> String {
    format!("{}_failures.jsonl", stem(rollouts))
}

/// `rollouts.jsonl` → `rollouts_aggregate_metrics.json`.
pub fn aggregate_metrics(rollouts: &str) -> String {
    format!("{}_aggregate_metrics.json", stem(rollouts))
}

/// `rollouts.jsonl` → `rollouts_progress`: the count of finished rollouts, a plain integer, that
/// NeMo Gym PR #2638 proposes for orchestrators (`progress_path_for`).
pub fn progress(rollouts: &str) -> String {
    format!("{}_progress", stem(rollouts))
}

/// Shard `i` of `n`: `rollouts.jsonl` → `rollouts-shard2-of-8.jsonl`.
pub fn shard(rollouts: &str, i: u32, n: u32) -> String {
    format!("{}-shard{i}-of-{n}{}", stem(rollouts), suffix(rollouts))
}

/// Recognises a name written by [`shard`] for this output name: returns `(i, n)`.
pub fn parse_shard(rollouts: &str, candidate: &str) -> Option<(u32, u32)> {
    let middle = candidate
        .strip_prefix(&format!("{}-shard", stem(rollouts)))?
        .strip_suffix(suffix(rollouts))?;
    let (i, n) = middle.split_once("-of-")?;
    let (i, n) = (i.parse().ok()?, n.parse().ok()?);
    (i < n).then_some((i, n))
}

/// `(i, n)` of any name [`shard`] wrote, whatever its output's name: `x-shard3-of-8.jsonl`.
pub fn shard_of(candidate: &str) -> Option<(u32, u32)> {
    let name = base_name(candidate);
    let at = name.rfind("-shard")?;
    parse_shard(&format!("{}{}", &name[..at], suffix(name)), name)
}

// ---- gymscope's own outputs ----

/// The report of a run: `rollouts.jsonl` → `rollouts_report.html`; of profile files:
/// `x_reward_profiling.jsonl` → `x_report.html`.
pub fn report(source: &str) -> String {
    format!("{}_report.html", run_stem_of_profile(source))
}

/// The health document of a run: `rollouts.jsonl` → `rollouts_gymscope_health.json` (never
/// upstream's fixed `quality_summary.json` / `rollout_verdicts.jsonl`).
pub fn health(rollouts: &str) -> String {
    format!("{}_gymscope_health.json", stem(rollouts))
}

/// The CLI report's default title: the run folder's name (`results/my_run/rollouts.jsonl` →
/// `my_run`: the stem is often just `rollouts`), else the run's base name.
pub fn run_title(path: &Path) -> String {
    path.parent()
        .and_then(Path::file_name)
        .map(|n| n.to_string_lossy().into_owned())
        .filter(|n| !n.is_empty())
        .unwrap_or_else(|| report_title(&file_name_of(path)).to_string())
}

/// The report's default title: the run's base name.
pub fn report_title(source: &str) -> &str {
    run_stem_of_profile(source)
}

/// The default comparison report name: `a.jsonl` and `b.jsonl` → `a_vs_b_compare.html`.
pub fn compare_report(a: &str, b: &str) -> String {
    format!(
        "{}_vs_{}_compare.html",
        run_stem_of_profile(a),
        run_stem_of_profile(b)
    )
}

/// The pivot agent a build from `source` suggests, in the shape of every shipped pivot config
/// (`<dataset>_single_step_tool_use_with_argument_comparison_agent`, docs/pivots.md): the
/// dataset is the file's stem without its `rollouts` part (`finance_v2.example_rollouts.jsonl`
/// → `finance_v2_…`), lower case, anything but letters, digits and `_` made `_`.
pub fn pivot_agent_ref(source: &str) -> String {
    let stem = stem(source);
    let stem = stem.strip_suffix(".jsonl").unwrap_or(stem);
    let dataset = [".example_rollouts", "_rollouts", ".rollouts", "rollouts"]
        .iter()
        .find_map(|s| stem.strip_suffix(s))
        .unwrap_or(stem);
    let dataset: String = dataset
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '_'
            }
        })
        .collect();
    let dataset = if dataset.is_empty() {
        "pivot"
    } else {
        &dataset
    };
    format!("{dataset}_single_step_tool_use_with_argument_comparison_agent")
}

/// `validate-pivot --fix` in the app: `pivots.jsonl` → `pivots.fixed.jsonl`.
pub fn fixed_pivots(pivots: &str) -> String {
    let s = stem(pivots);
    match suffix(pivots) {
        "" => format!("{s}.fixed.jsonl"),
        ext => format!("{s}.fixed{ext}"),
    }
}

// ---- build-pivot / select-pivot ----

/// `build-pivot`'s audit of skipped rows and turns: `pivots.jsonl` → `pivots.skipped.jsonl`.
pub fn pivot_skipped(pivots: &str) -> String {
    format!("{}.skipped.jsonl", stem(pivots))
}

/// `build-pivot`'s conversion metrics: `pivots.jsonl` → `pivots.metrics.json`.
pub fn pivot_metrics(pivots: &str) -> String {
    format!("{}.metrics.json", stem(pivots))
}

/// `build-pivot`'s markdown report: `pivots.jsonl` → `pivots.info.md`.
pub fn pivot_info(pivots: &str) -> String {
    format!("{}.info.md", stem(pivots))
}

/// `build-pivot`'s Gym config: `pivots.jsonl` → `pivots.gym.yaml`.
pub fn pivot_gym_config(pivots: &str) -> String {
    format!("{}.gym.yaml", stem(pivots))
}

/// The app's pivot dataset built from a source: `rollouts.jsonl` → `rollouts_pivots.jsonl`.
pub fn built_pivots(source: &str) -> String {
    format!("{}_pivots.jsonl", stem(source))
}

/// The app's selection from a pivot file: `p.jsonl` → `p.selected.jsonl`.
pub fn selected_pivots(pivots: &str) -> String {
    format!("{}.selected.jsonl", stem(pivots))
}

/// `select-pivot`'s counts: `selected.jsonl` → `selected.selection.json`.
pub fn pivot_selection(selected: &str) -> String {
    format!("{}.selection.json", stem(selected))
}

/// `select-tasks --val-fraction`'s validation tasks: `curated.jsonl` → `curated.val.jsonl`.
pub fn validation_split(selected: &str) -> String {
    format!("{}.val.jsonl", stem(selected))
}

#[cfg(test)]
mod tests {

    #[test]
    fn a_report_is_titled_by_its_run_folder() {
        assert_eq!(
            run_title(Path::new("results/my_run/rollouts.jsonl")),
            "my_run"
        );
        assert_eq!(run_title(Path::new("rollouts.jsonl")), "rollouts");
        assert_eq!(run_title(Path::new("./eval.jsonl")), "eval");
        assert_eq!(
            run_title(Path::new("r/b_reward_profiling.jsonl")),
            "r",
            "a profile file too"
        );
    }

    #[test]
    fn a_shard_name_tells_its_slice_whatever_the_output() {
        assert_eq!(shard_of("out/rollouts-shard3-of-8.jsonl"), Some((3, 8)));
        assert_eq!(shard_of("a-shard-x-shard0-of-2"), Some((0, 2)));
        assert_eq!(shard_of(&shard("r.v2.jsonl", 1, 4)), Some((1, 4)));
        assert_eq!(shard_of("rollouts-shard8-of-8.jsonl"), None);
        assert_eq!(shard_of("rollouts.jsonl"), None);
    }
    use super::*;

    #[test]
    fn a_pivot_agent_is_named_after_the_dataset() {
        let agent = |s| {
            pivot_agent_ref(s).replace("_single_step_tool_use_with_argument_comparison_agent", " …")
        };
        assert_eq!(
            agent("finance_agent_v2.example_rollouts.jsonl"),
            "finance_agent_v2 …"
        );
        assert_eq!(agent("example_rollouts.jsonl"), "example …");
        assert_eq!(agent("rollouts.jsonl"), "pivot …");
        assert_eq!(agent("My Run-3.jsonl"), "my_run_3 …");
        assert_eq!(agent("dir/workplace_rollouts.jsonl"), "workplace …");
    }

    #[test]
    fn stem_follows_python_path_stem() {
        assert_eq!(stem("rollouts.jsonl"), "rollouts");
        assert_eq!(stem("a.b.jsonl"), "a.b");
        assert_eq!(stem("rollouts"), "rollouts");
        assert_eq!(stem(".hidden"), ".hidden");
        assert_eq!(stem(".hidden.jsonl"), ".hidden");
        assert_eq!(stem("dir.d/run"), "run");
        assert_eq!(suffix("a.b.jsonl"), ".jsonl");
        assert_eq!(suffix(".hidden"), "");
    }

    #[test]
    fn profile_names() {
        assert_eq!(
            reward_profiling("rollouts.jsonl"),
            "rollouts_reward_profiling.jsonl"
        );
        assert_eq!(agent_metrics("a.b.jsonl"), "a.b_agent_metrics.json");
        assert_eq!(
            reward_profiling(".hidden"),
            ".hidden_reward_profiling.jsonl"
        );
        assert_eq!(
            agent_metrics_of_profile("x_reward_profiling.jsonl"),
            "x_agent_metrics.json"
        );
    }

    #[test]
    fn report_and_fixed_names() {
        assert_eq!(report("rollouts.jsonl"), "rollouts_report.html");
        assert_eq!(report("x_reward_profiling.jsonl"), "x_report.html");
        assert_eq!(report("a.b.jsonl"), "a.b_report.html");
        assert_eq!(report_title("a.b.jsonl"), "a.b");
        assert_eq!(fixed_pivots("p.jsonl"), "p.fixed.jsonl");
        assert_eq!(fixed_pivots("dir/p"), "p.fixed.jsonl");
        assert_eq!(fixed_pivots(".hidden"), ".hidden.fixed.jsonl");
    }

    #[test]
    fn pivot_build_names() {
        assert_eq!(pivot_skipped("dir/p.jsonl"), "p.skipped.jsonl");
        assert_eq!(pivot_metrics("p.jsonl"), "p.metrics.json");
        assert_eq!(pivot_info("a.b.jsonl"), "a.b.info.md");
        assert_eq!(pivot_gym_config("p"), "p.gym.yaml");
        assert_eq!(pivot_selection("s.jsonl"), "s.selection.json");
        assert_eq!(built_pivots("dir/r.jsonl"), "r_pivots.jsonl");
        assert_eq!(selected_pivots("p.jsonl"), "p.selected.jsonl");
    }

    #[test]
    fn shard_names_round_trip() {
        assert_eq!(shard("rollouts.jsonl", 2, 8), "rollouts-shard2-of-8.jsonl");
        assert_eq!(
            parse_shard("rollouts.jsonl", "rollouts-shard2-of-8.jsonl"),
            Some((2, 8))
        );
        assert_eq!(
            parse_shard("rollouts.jsonl", "rollouts-shard8-of-8.jsonl"),
            None
        );
        assert_eq!(
            materialized_inputs("out.jsonl"),
            "out_materialized_inputs.jsonl"
        );
        assert_eq!(
            rollouts_of_inputs("dir/out_materialized_inputs.jsonl").as_deref(),
            Some("out.jsonl")
        );
        assert_eq!(rollouts_of_inputs("out.jsonl"), None);
        assert_eq!(
            compare_report("a.jsonl", "b_reward_profiling.jsonl"),
            "a_vs_b_compare.html"
        );
    }
}
