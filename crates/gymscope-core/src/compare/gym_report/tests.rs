//! The report's parts on small hand-made runs; the whole against v0.7.0's own reports is in
//! `tests/cli/compare_gym.rs`.
#![allow(clippy::unwrap_used)]

use super::diff::welch_interval;
use super::markdown::python_g;
use super::*;
use serde_json::json;

fn run(role: &'static str, entries: Value) -> RunFile {
    RunFile {
        role,
        index: 0,
        rollouts_path: format!("/r/{role}/rollouts.jsonl"),
        aggregate_path: format!("/r/{role}/rollouts_aggregate_metrics.json"),
        entries: read_entries(entries.to_string().as_bytes(), "f").unwrap(),
    }
}

fn entry(name: &str, rewards: &[&[f64]]) -> Value {
    let groups: Vec<Value> = rewards
        .iter()
        .enumerate()
        .map(|(t, rs)| {
            let mean = rs.iter().sum::<f64>() / rs.len() as f64;
            json!({"_ng_task_index": t, "mean/reward": mean,
                   "min/reward": rs.iter().copied().fold(f64::INFINITY, f64::min),
                   "max/reward": rs.iter().copied().fold(f64::NEG_INFINITY, f64::max),
                   "expected_num_rollouts": rs.len(),
                   "rollout_infos": rs.iter().enumerate().map(|(i, r)| json!({"_ng_rollout_index": i, "reward": r})).collect::<Vec<_>>()})
        })
        .collect();
    json!({"agent_ref": {"name": name}, "agent_metrics": {"mean/reward": 0.5, "max/reward": 1.0},
           "key_metrics": {"mean/reward": 0.5}, "group_level_metrics": groups})
}

#[test]
fn entries_are_refused_as_upstream_refuses_them() {
    for (doc, want) in [
        ("{", "is not valid JSON"),
        ("{}", "expected a JSON list"),
        ("[]", "contains no agent entries"),
        ("[1]", "entry 0 is not an object"),
        (r#"[{"agent_ref": {}}]"#, "entry 0 has no `agent_ref.name`"),
        (
            r#"[{"agent_ref": {"name": "a"}}, {"agent_ref": {"name": "a"}}]"#,
            "two entries for agent 'a'",
        ),
    ] {
        let e = read_entries(doc.as_bytes(), "x.json").unwrap_err();
        assert!(e.contains(want) && e.contains("'x.json'"), "{doc}: {e}");
    }
}

#[test]
fn common_agents_are_compared_and_the_rest_skipped() {
    let b = run(
        "baseline",
        json!([entry("b", &[&[1.0]]), entry("a", &[&[1.0]])]),
    );
    let c = run(
        "candidate",
        json!([entry("a", &[&[0.0]]), entry("z", &[&[1.0]])]),
    );
    let (picks, warnings, skipped) =
        select_agents(&b, std::slice::from_ref(&c), &Selection::default()).unwrap();
    assert_eq!(picks, vec![("a".to_string(), vec!["a".to_string()])]);
    assert_eq!(
        skipped,
        json!({"baseline": ["b"], "candidate[0]": ["z"]})
            .as_object()
            .unwrap()
            .clone()
    );
    assert_eq!(
        warnings[0],
        "Agent(s) b are present only in baseline and were not compared."
    );
    // A per-side name beats --agent; an unknown one is named with what is there.
    let s = Selection {
        agent: Some("a".into()),
        baseline_agent: Some("b".into()),
        candidate_agents: None,
    };
    let (picks, _, _) = select_agents(&b, std::slice::from_ref(&c), &s).unwrap();
    assert_eq!(picks, vec![("b".to_string(), vec!["a".to_string()])]);
    let s = Selection {
        agent: Some("q".into()),
        ..Selection::default()
    };
    let e = select_agents(&b, &[c], &s).unwrap_err();
    assert_eq!(
        e,
        "Agent 'q' is not in '/r/baseline/rollouts_aggregate_metrics.json'. Available: a, b."
    );
}

#[test]
fn binary_flips_put_regressions_first_and_count_ties() {
    // Task 0 pass→fail, 1 fail→pass, 2 tied (0.5), 3 unchanged.
    let b = run(
        "baseline",
        json!([entry(
            "a",
            &[&[1.0, 1.0], &[0.0, 0.0], &[1.0, 0.0], &[1.0, 1.0]]
        )]),
    );
    let c = run(
        "candidate",
        json!([entry(
            "a",
            &[&[0.0, 0.0], &[1.0, 1.0], &[1.0, 1.0], &[1.0, 1.0]]
        )]),
    );
    let r = build(
        b,
        vec![c],
        &Selection::default(),
        "T".into(),
        "gym eval compare".into(),
    )
    .unwrap();
    let flips = &r.comparisons[0]["flips"][0];
    assert_eq!(flips["mode"], "binary");
    assert_eq!(
        (
            flips["pass_to_fail_count"].as_i64(),
            flips["fail_to_pass_count"].as_i64(),
            flips["tied_count"].as_i64(),
            flips["unchanged_count"].as_i64(),
            flips["net"].as_i64()
        ),
        (Some(1), Some(1), Some(1), Some(1), Some(0))
    );
    assert_eq!(flips["flips"][0]["direction"], "pass_to_fail");
    assert_eq!(flips["flips"][0]["baseline_rewards"], json!([1.0, 1.0]));
    // One metric row (max/reward is not primary), no CIs → the note says so.
    let metrics = r.comparisons[0]["metrics"].as_array().unwrap();
    assert_eq!(metrics.len(), 1);
    assert_eq!(metrics[0]["candidates"][0]["delta"], 0.0);
    assert!(r.comparisons[0]["notes"][0]
        .as_str()
        .unwrap()
        .starts_with("Neither run recorded"));
    let md = render_markdown(&r, None);
    assert!(
        md.contains(
            "**4 common tasks · 1 pass→fail · 1 fail→pass · net +0 · 1 unchanged · 1 tied**"
        ),
        "{md}"
    );
    assert!(
        md.contains("| 0 | pass→fail | 1.0000 | 0.0000 | -1.0000 | 1, 1 | 0, 0 |"),
        "{md}"
    );
}

#[test]
fn welch_interval_matches_scipy() {
    // scipy 1.16: ttest_ind([3, 4, 5.5], [1, 2], equal_var=False).confidence_interval(0.95)
    let (lo, hi) = welch_interval(&[3.0, 4.0, 5.5], &[1.0, 2.0]);
    let (lo, hi) = (lo.unwrap(), hi.unwrap());
    assert!((lo - -0.14100005024592166).abs() < 1e-9, "{lo}");
    assert!((hi - 5.474333383579255).abs() < 1e-9, "{hi}");
    let (lo, hi) = welch_interval(&[1.0, 1.0], &[0.0, 0.5]);
    assert!((lo.unwrap() - -2.4265511840436735).abs() < 1e-9);
    assert!((hi.unwrap() - 3.9265511840436735).abs() < 1e-9);
    // No spread on either side: the difference itself, as scipy gives it.
    assert_eq!(
        welch_interval(&[1.0, 1.0], &[0.0, 0.0]),
        (Some(1.0), Some(1.0))
    );
}

#[test]
fn g_format_is_pythons() {
    for (x, want) in [
        (1.0, "1"),
        (0.5, "0.5"),
        (1.0 / 3.0, "0.333333"),
        (1e-5, "1e-05"),
        (123456.0, "123456"),
        (1234567.0, "1.23457e+06"),
        (0.0001, "0.0001"),
        (-2.5, "-2.5"),
    ] {
        assert_eq!(python_g(x), want);
    }
}
