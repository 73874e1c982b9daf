//! `gymscope compare` on `*_aggregate_metrics.json` inputs (what `gym eval compare` reads),
//! hand-made: paired by `_ng_task_index` through `group_level_metrics` (said so), mixed with a
//! rollouts run, unpaired Welch without indices (said so), and their errors.

use crate::common::compare_runs;
use crate::common::write_in;

use crate::compare_multi::{json_of, output};
use compare_runs::{run, task, write_run};
use serde_json::{json, Value};
use std::path::Path;

/// An aggregate file of one agent: per task `(index, mean, min, max)`; `None` index leaves it out.
fn aggregate(dir: &Path, name: &str, tasks: &[(Option<i64>, f64, f64, f64)]) -> String {
    let groups: Vec<Value> = tasks
        .iter()
        .map(|&(i, mean, min, max)| {
            let mut g = json!({"mean/reward": mean, "min/reward": min, "max/reward": max,
                "mean/output_tokens": 100.0 + mean, "sample": {"question": "q"}});
            if let Some(i) = i {
                g["sample"]["_ng_task_index"] = json!(i);
            }
            g
        })
        .collect();
    let mean = tasks.iter().map(|t| t.1).sum::<f64>() / tasks.len() as f64;
    let doc = json!([{"agent_ref": {"name": "math"}, "agent_metrics": {"mean/reward": mean},
        "key_metrics": {"mean/reward": mean}, "group_level_metrics": groups}]);
    let path = dir.join(format!("{name}_aggregate_metrics.json"));
    std::fs::write(&path, serde_json::to_string_pretty(&doc).unwrap()).unwrap();
    path.to_string_lossy().into_owned()
}

#[test]
fn indexed_aggregates_pair_by_index_and_say_so() {
    let dir = tempfile::tempdir().unwrap();
    let base = aggregate(
        dir.path(),
        "base",
        &[
            (Some(0), 0.0, 0.0, 0.0),
            (Some(1), 0.5, 0.0, 1.0),
            (Some(2), 1.0, 1.0, 1.0),
            (Some(3), 1.0, 1.0, 1.0),
        ],
    );
    // Listed in another order; task 9 has no partner.
    let cand = aggregate(
        dir.path(),
        "cand",
        &[
            (Some(3), 1.0, 1.0, 1.0),
            (Some(9), 1.0, 1.0, 1.0),
            (Some(0), 1.0, 1.0, 1.0),
            (Some(1), 1.0, 1.0, 1.0),
            (Some(2), 0.5, 0.0, 1.0),
        ],
    );
    let doc = json_of(&["compare", &base, &cand, "--format", "json"]);
    assert_eq!(doc["pair_by"], "index");
    assert!(
        doc["warnings"][0]
            .as_str()
            .unwrap()
            .contains("_ng_task_index"),
        "{}",
        doc["warnings"]
    );
    assert_eq!(
        (&doc["paired_tasks"], &doc["only_b"]),
        (&json!(4), &json!(1))
    );
    // Deltas +1, +0.5, −0.5, 0: Σ 1. Of the 8 sign patterns of (1, 0.5, 0.5), |Σ| ≥ 1 for
    // ±(1 + 0.5 + 0.5), ±(1 + 0.5 − 0.5) twice: 6 of 8.
    let r = &doc["candidates"][0]["metrics"]["reward"];
    assert_eq!(
        (&r["delta"], &r["p"], &r["p_method"]),
        (&json!(0.25), &json!(0.75), &json!("exact"))
    );
    // Groups from min/max: all_failure → all_success, mixed → all_success pass; all_success →
    // mixed fails.
    let f = &doc["candidates"][0]["flips"];
    assert_eq!(
        (
            &f["flipped_to_pass"],
            &f["flipped_to_fail"],
            &f["identical"],
            &f["only_candidate"]
        ),
        (&json!(2), &json!(1), &json!(1), &json!(1))
    );
    // A task's min and max are not rollouts: no within-task variance is made of them.
    let power = &doc["candidates"][0]["power"];
    assert!(power["within_per_rollout"].is_null(), "{power}");
    assert!(power["minimum_detectable_effect"].as_f64().unwrap() > 0.0);
    // `mean/<field>` values are fields.
    assert_eq!(doc["candidates"][0]["metrics"]["output_tokens"]["tasks"], 4);

    let (code, text, _) = output(&["compare", &base, &cand]);
    assert_eq!(code, 0);
    assert!(text.contains("Paired 4 tasks by index"), "{text}");
    assert!(text.contains("not by content"), "{text}");
    assert!(text.contains("per-task means only"), "{text}");
    // No conversations to show.
    let report = dir.path().join("r.html");
    let (code, _, stderr) = output(&[
        "compare",
        &base,
        &cand,
        "--report",
        report.to_str().unwrap(),
    ]);
    assert_eq!(code, 2, "{stderr}");
    assert!(!report.exists());
}

#[test]
fn an_aggregate_pairs_with_a_rollouts_run_by_index() {
    let dir = tempfile::tempdir().unwrap();
    let rollouts = write_run(
        dir.path(),
        "run",
        &run(
            &[task(0, "a", &[1.0, 1.0]), task(1, "b", &[0.0, 1.0])],
            0.5,
            0,
        ),
    )
    .1;
    let agg = aggregate(
        dir.path(),
        "agg",
        &[(Some(0), 0.0, 0.0, 0.0), (Some(1), 0.5, 0.0, 1.0)],
    );
    let doc = json_of(&["compare", &rollouts, &agg, "--format", "json"]);
    assert_eq!(doc["paired_tasks"], 2);
    assert_eq!(doc["mean_reward"]["delta"], -0.5);
    assert_eq!(doc["transitions"]["all_success"]["all_failure"], 1);
    assert_eq!(doc["transitions"]["mixed"]["mixed"], 1);
}

#[test]
fn without_indices_the_comparison_is_welch_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let base = aggregate(
        dir.path(),
        "base",
        &[
            (None, 1.0, 1.0, 1.0),
            (None, 2.0, 2.0, 2.0),
            (None, 3.0, 3.0, 3.0),
        ],
    );
    let cand = aggregate(
        dir.path(),
        "cand",
        &[
            (None, 2.0, 2.0, 2.0),
            (None, 4.0, 4.0, 4.0),
            (None, 6.0, 6.0, 6.0),
        ],
    );
    let doc = json_of(&["compare", &base, &cand, "--format", "json"]);
    assert_eq!(doc["pair_by"], "none");
    assert!(doc["note"].as_str().unwrap().contains("Welch"));
    let m = &doc["candidates"][0]["mean_reward"];
    // Means 2 and 4, variances 1 and 4 (n 3 each): df = (5/3)² / ((1/3)²/2 + (4/3)²/2).
    assert_eq!(
        (&m["a"], &m["b"], &m["delta"]),
        (&json!(2.0), &json!(4.0), &json!(2.0))
    );
    assert!((m["df"].as_f64().unwrap() - 2.941_176).abs() < 1e-5, "{m}");
    assert_eq!(m["p_method"], "welch");
    assert_eq!(m["verdict"], "no detectable difference");
    // Markdown escapes the label's underscores (GitHub shows them as written).
    for (format, label) in [
        ("text", "cand_aggregate_metrics.json"),
        ("md", "cand\\_aggregate\\_metrics.json"),
    ] {
        let (code, out, _) = output(&["compare", &base, &cand, "--format", format]);
        assert_eq!(code, 0);
        assert!(out.contains("not paired") && out.contains("Welch"), "{out}");
        assert!(out.contains(label), "{out}");
    }
}

#[test]
fn a_malformed_aggregate_names_its_file_and_entry() {
    let dir = tempfile::tempdir().unwrap();
    let good = aggregate(dir.path(), "good", &[(Some(0), 1.0, 1.0, 1.0)]);
    let bad = write_in(
        dir.path(),
        "bad_aggregate_metrics.json",
        r#"[{"agent_ref": {"name": "m"}, "mean/reward": 1, "group_level_metrics": [{"mean/reward": "x"}]}]"#,
    );
    let (code, _, stderr) = output(&["compare", &good, bad.to_str().unwrap()]);
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.contains("bad_aggregate_metrics.json")
            && stderr.contains("[0].group_level_metrics[0]")
            && stderr.contains("mean/reward"),
        "{stderr}"
    );
}
