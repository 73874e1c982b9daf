//! `select-pivot`'s rules (docs/pivots.md, "gymscope select-pivot") on made-up profiles: PivotRL's illustration, the
//! tie-back by task index when the profile has no `pivot_id`, and a contradicting tie.

use crate::common::assert_contains;
use gymscope::pivot_build::select::{
    selected_row, Class, ProfileIndex, SelectOptions, Selector, Sort,
};
use serde_json::{json, Value};

fn pivot(id: &str) -> String {
    json!({"trajectory_id": 0, "responses_create_params": {"input": [], "tools": []}, "expected_action": {"type": "message", "content": id},
           "pivot_info": {"pivot_id": id}, "agent_ref": {"type": "responses_api_agents", "name": "a"}})
    .to_string()
}

fn profile_row(task: u64, id: Option<&str>, rewards: &[f64]) -> String {
    let mut sample = json!({"responses_create_params": {}});
    if let Some(id) = id {
        sample["pivot_info"] = json!({"pivot_id": id});
    }
    let infos: Vec<Value> = rewards.iter().map(|r| json!({"reward": r})).collect();
    json!({"_ng_task_index": task, "sample": sample, "rollout_infos": infos}).to_string()
}

fn select(
    pivots: &[String],
    profile: &[String],
    options: SelectOptions,
) -> Result<gymscope::pivot_build::select::Plan, String> {
    let mut index = ProfileIndex::new("prof.jsonl");
    for chunk in profile.join("\n").as_bytes().chunks(3) {
        index.push(chunk);
    }
    let index = index.finish().map_err(|e| e.message)?;
    let mut s = Selector::new("p.jsonl", index, options);
    s.push(pivots.join("\n").as_bytes());
    s.finish().map_err(|e| e.message)
}

#[test]
fn the_spec_illustration() {
    let pivots: Vec<String> = ["p0", "p1", "p2", "p3", "p4"]
        .iter()
        .map(|p| pivot(p))
        .collect();
    let profile = vec![
        profile_row(0, Some("p0"), &[1.0; 8]),
        profile_row(1, Some("p1"), &[0.0; 8]),
        profile_row(2, Some("p2"), &[1.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0]),
        profile_row(3, Some("p3"), &[1.0, 1.0, 1.0, 0.0, 1.0, 1.0, 1.0, 1.0]),
    ];
    let plan = select(&pivots, &profile, SelectOptions::default()).unwrap();
    let lines: Vec<u64> = plan.selected.iter().map(|d| d.span.line).collect();
    assert_eq!(lines, [3, 4]);
    let c = &plan.counts;
    assert_eq!(
        (
            c.class(Class::AllSuccess),
            c.class(Class::AllFailure),
            c.class(Class::Mixed),
            c.class(Class::Unprofiled)
        ),
        (1, 1, 2, 1)
    );
    assert_eq!((c.pivots, c.profiled, c.kept), (5, 4, 2));
    let info = plan.selected[0].profile_info.clone().unwrap();
    assert_eq!(info["reward_mean"], 0.25);
    assert_eq!(info["group"], "mixed");

    let with = |options| select(&pivots, &profile, options).unwrap();
    let capped = with(SelectOptions {
        max_pivots: Some(1),
        ..Default::default()
    });
    assert_eq!(
        capped
            .selected
            .iter()
            .map(|d| d.span.line)
            .collect::<Vec<_>>(),
        [3],
        "pivot 3 (pass 0.875) is the easier one"
    );
    assert_eq!(capped.counts.dropped_easiest, 1);
    let thr = with(SelectOptions {
        difficulty_threshold: Some(0.5),
        ..Default::default()
    });
    assert_eq!(thr.counts.dropped_above_difficulty_threshold, 1);
    let var = with(SelectOptions {
        sort: Sort::Variance,
        ..Default::default()
    });
    assert_eq!(
        var.selected.iter().map(|d| d.span.line).collect::<Vec<_>>(),
        [3, 4],
        "0.25 has the larger variance"
    );
    let few = with(SelectOptions {
        min_rollouts: 9,
        keep: vec![Class::InsufficientRollouts],
        ..Default::default()
    });
    assert_eq!(few.counts.kept, 4);
    // Fractional rewards: the threshold decides.
    let frac = vec![profile_row(0, Some("p0"), &[0.5; 8])];
    let plan = select(
        &pivots[..1],
        &frac,
        SelectOptions {
            success_threshold: 0.5,
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(plan.counts.class(Class::AllSuccess), 1);
}

#[test]
fn ties_by_task_index_without_ids_and_refuses_contradictions() {
    let pivots: Vec<String> = ["a", "b"].iter().map(|p| pivot(p)).collect();
    // An older profile without pivot ids: the task index is the pivot's position.
    let profile = vec![
        profile_row(1, None, &[1.0, 0.0]),
        profile_row(0, None, &[1.0, 1.0]),
    ];
    let plan = select(
        &pivots,
        &profile,
        SelectOptions {
            min_rollouts: 2,
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(plan.selected.len(), 1);
    assert_eq!(plan.selected[0].span.line, 2);
    // A stamped task index that contradicts the profile row found by pivot_id.
    let mut stamped: Value = serde_json::from_str(&pivot("a")).unwrap();
    stamped["_ng_task_index"] = json!(5);
    let profile = vec![profile_row(0, Some("a"), &[1.0, 0.0])];
    let err = select(&[stamped.to_string()], &profile, SelectOptions::default()).unwrap_err();
    assert!(
        err.contains("'p.jsonl' line 1") && err.contains("_ng_task_index 0"),
        "{err}"
    );
    let err = select(
        &pivots,
        &["{\"x\": 1}".to_string()],
        SelectOptions::default(),
    )
    .unwrap_err();
    assert_contains(
        &err,
        "'prof.jsonl' line 1: field `rollout_infos` is missing",
    );
}

#[test]
fn selected_rows_keep_their_bytes_and_gain_profile_info() {
    let line = pivot("x");
    let out = selected_row(line.as_bytes(), Some(&json!({"group": "mixed"}))).unwrap();
    let text = String::from_utf8(out).unwrap();
    assert!(
        text.contains(
            r#""pivot_info":{"pivot_id":"x"},"profile_info":{"group":"mixed"},"agent_ref""#
        ),
        "{text}"
    );
    assert_eq!(
        text.replace(r#","profile_info":{"group":"mixed"}"#, ""),
        format!("{line}\n")
    );
}

/// A pivot row of a given source trajectory, prefix and expected message.
fn pivot_of(id: &str, trajectory: u64, prefix: &str, action: &str, depth: u64) -> String {
    json!({"trajectory_id": trajectory, "responses_create_params": {"input": [{"role": "user", "content": prefix}], "tools": []},
           "expected_action": {"type": "function_call", "name": action, "arguments": "{}"}, "meta_info": {"depth": depth},
           "pivot_info": {"pivot_id": id}})
    .to_string()
}

#[test]
fn lambda_diff_dedupe_split_and_breakdown() {
    let pivots = vec![
        pivot_of("a", 0, "same", "f", 1),
        pivot_of("b", 0, "same", "f", 2), // same prefix and action as a: a duplicate
        pivot_of("c", 1, "other", "g", 1),
        pivot_of("d", 2, "third", "g", 2),
        pivot_of("e", 3, "fourth", "f", 1),
    ];
    let profile = vec![
        profile_row(0, Some("a"), &[1.0, 0.0, 0.0, 0.0]), // mean 0.25, var > 0
        profile_row(1, Some("b"), &[1.0, 0.0, 0.0, 0.0]),
        profile_row(2, Some("c"), &[1.0, 1.0, 1.0, 0.0]), // mean 0.75
        profile_row(3, Some("d"), &[1.0, 1.0, 1.0, 1.0]), // no variance
        profile_row(4, Some("e"), &[0.5, 0.5, 0.5, 0.5]), // no variance
    ];
    let every = vec![Class::Mixed, Class::AllSuccess, Class::AllFailure];
    let opts = |f: &dyn Fn(&mut SelectOptions)| {
        let mut o = SelectOptions {
            min_rollouts: 4,
            keep: every.clone(),
            ..Default::default()
        };
        f(&mut o);
        o
    };
    let ids = |plan: &gymscope::pivot_build::select::Plan| {
        plan.selected
            .iter()
            .map(|d| d.span.line)
            .collect::<Vec<_>>()
    };
    // λ_diff = 0.5: variance > 0 and mean strictly below 0.5.
    let plan = select(&pivots, &profile, opts(&|o| o.max_mean = Some(0.5))).unwrap();
    assert_eq!(ids(&plan), [1, 2]);
    assert_eq!(plan.counts.dropped_max_mean, 3);
    let plan = select(&pivots, &profile, opts(&|o| o.max_mean = Some(0.75))).unwrap();
    assert_eq!(ids(&plan), [1, 2], "0.75 is not below 0.75");
    // The dedupe keeps the first of two equal prefixes with the same action.
    let plan = select(&pivots, &profile, opts(&|o| o.dedupe_prefix = true)).unwrap();
    assert_eq!(ids(&plan), [1, 3, 4, 5]);
    assert_eq!(plan.counts.dropped_duplicate_prefix, 1);
    let b = &plan.counts.breakdown;
    assert_eq!(b.per_tool["f"].pivots, 3);
    assert_eq!(b.per_tool["f"].kept, 2);
    assert_eq!(b.per_depth[&Some(2)].pivots, 2);
    assert_eq!(b.per_depth[&Some(2)].kept, 1);
    assert_eq!(b.mean_deciles[0], 0.25);
    assert_eq!(b.mean_deciles[10], 1.0);
    // A split by trajectory: a and b (trajectory 0) always land together.
    for seed in 0..20 {
        let plan = select(
            &pivots,
            &profile,
            opts(&|o| {
                o.val_fraction = Some(0.4);
                o.seed = seed;
            }),
        )
        .unwrap();
        assert_eq!(plan.selected.len() + plan.validation.len(), 5);
        let val: Vec<u64> = plan.validation.iter().map(|d| d.span.line).collect();
        assert_eq!(
            val.contains(&1),
            val.contains(&2),
            "seed {seed}: trajectory 0 split: {val:?}"
        );
        assert_eq!(
            val.len(),
            2,
            "round(0.4 × 5) = 2 is reachable with whole trajectories"
        );
    }
}
