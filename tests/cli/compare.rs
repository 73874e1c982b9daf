//! `gymscope compare`: pairing by content across reordered, partly overlapping runs and
//! duplicate contents, hand-computed transitions and bootstrap interval, profile-file inputs,
//! exact zero deltas whatever the order, the CLI's JSON schema and errors. The report:
//! `tests/compare_report.rs`.

use crate::common;
use crate::common::assert_contains;
use crate::common::assert_success;
use crate::common::compare_runs;
use crate::common::write_in;

use common::run_gymscope;
use compare_runs::{
    by_content, profile_side, run, side, task, two_runs, two_runs_in, write_run, Task,
};
use gymscope::compare::{self, CompareOptions, PairBy};
use serde_json::{json, Value};

#[test]
fn pairs_by_content_across_reordered_and_partly_overlapping_runs() {
    let a = run(
        &[
            task(0, "p0", &[1.0, 1.0]),
            task(1, "p1", &[0.0, 0.0]),
            task(2, "p2", &[1.0, 0.0]),
            task(3, "p3", &[1.0, 1.0]),
            task(4, "p4", &[0.0, 1.0]),
        ],
        0.6,
        0,
    );
    // B: other task indices, other order, two tasks A lacks, two of A's missing.
    let b = run(
        &[
            task(0, "p3", &[0.0, 0.0]),
            task(1, "p1", &[1.0, 1.0]),
            task(2, "new", &[1.0, 1.0]),
            task(3, "p0", &[1.0, 1.0]),
            task(4, "other", &[0.0, 0.0]),
        ],
        1.0,
        3,
    );
    let c = compare::compare(&side(&a, "a.jsonl"), &side(&b, "b.jsonl"), by_content()).unwrap();
    assert_eq!(
        (c.overall.paired_tasks, c.only_a, c.only_b),
        (3, 2, 2),
        "counted, never dropped"
    );
    let pairs: Vec<(i64, i64, Option<f64>)> = c
        .tasks
        .iter()
        .map(|t| (t.task_a, t.task_b, t.delta))
        .collect();
    // Worst regression first.
    assert_eq!(
        pairs,
        vec![(3, 0, Some(-1.0)), (0, 3, Some(0.0)), (1, 1, Some(1.0))]
    );
    assert!(c.warnings.is_empty(), "{:?}", c.warnings);

    // By index the same files pair 0↔0, 1↔1 ... (5 tasks).
    let by_index = CompareOptions {
        pair_by: PairBy::Index,
        ..by_content()
    };
    let c = compare::compare(&side(&a, "a.jsonl"), &side(&b, "b.jsonl"), by_index).unwrap();
    assert_eq!((c.overall.paired_tasks, c.only_a, c.only_b), (5, 0, 0));
}

#[test]
fn duplicate_contents_pair_in_order_of_task_index() {
    let a = run(
        &[
            task(2, "same", &[1.0]),
            task(5, "same", &[0.0]),
            task(6, "x", &[0.0]),
        ],
        0.6,
        0,
    );
    let b = run(
        &[
            task(1, "same", &[0.5]),
            task(4, "same", &[0.25]),
            task(7, "same", &[1.0]),
            task(8, "x", &[0.0]),
        ],
        0.6,
        2,
    );
    let c = compare::compare(&side(&a, "a"), &side(&b, "b"), by_content()).unwrap();
    let mut pairs: Vec<(i64, i64)> = c.tasks.iter().map(|t| (t.task_a, t.task_b)).collect();
    pairs.sort_unstable();
    assert_eq!(pairs, vec![(2, 1), (5, 4), (6, 8)]);
    assert_eq!((c.only_a, c.only_b), (0, 1));
}

#[test]
fn transition_table_and_bootstrap_against_a_hand_computed_case() {
    // Deltas 0, +1, 0, 0: mean delta 1/4; resample means are k/4 with k ~ Binomial(4, 1/4), so
    // the 95% interval is [0, 3/4] (P(k <= 2) = 0.949 < 0.975 <= P(k <= 3) = 0.996).
    let a = run(
        &[
            task(0, "t0", &[1.0, 1.0]),
            task(1, "t1", &[0.0, 0.0]),
            task(2, "t2", &[1.0, 0.0]),
            task(3, "t3", &[0.0, 0.0]),
        ],
        0.6,
        0,
    );
    let b = run(
        &[
            task(0, "t0", &[1.0, 1.0]),
            task(1, "t1", &[1.0, 1.0]),
            task(2, "t2", &[0.0, 1.0]),
            task(3, "t3", &[0.0, 0.0]),
        ],
        0.6,
        5,
    );
    let c = compare::compare(&side(&a, "a"), &side(&b, "b"), by_content()).unwrap();
    let o = &c.overall;
    assert_eq!(o.mean_reward.a, Some(0.375));
    assert_eq!(o.mean_reward.b, Some(0.625));
    assert_eq!(o.mean_reward.delta, Some(0.25));
    assert_eq!(o.mean_reward.ci95, Some((0.0, 0.75)));
    assert_eq!((o.improved, o.regressed, o.unchanged), (1, 0, 3));
    // Rows: A's group (all_failure, mixed, all_success, no_reward), columns: B's.
    assert_eq!(
        o.transitions,
        [[1, 0, 1, 0], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 0]]
    );
    // Output tokens 100 and 110 per task on both sides.
    assert_eq!(
        (o.tokens.a, o.tokens.b, o.tokens.delta),
        (Some(105.0), Some(105.0), Some(0.0))
    );
    assert_eq!(c.fields, vec!["judge", "input_tokens", "total_tokens"]);
    assert_eq!(o.fields[0].delta, Some(0.0));
    // One agent: its numbers are the overall ones.
    assert_eq!(c.agents.len(), 1);
    assert_eq!(c.agents[0].0, "math");
    assert_eq!(c.agents[0].1.transitions, o.transitions);

    // A threshold of 0.5: partial rewards count as successes.
    let partial = run(&[task(0, "t", &[0.5, 0.5])], 0.6, 0);
    let half = CompareOptions {
        pass_threshold: 0.5,
        ..by_content()
    };
    let c = compare::compare(&side(&partial, "a"), &side(&partial, "b"), half).unwrap();
    assert_eq!(c.overall.transitions[2][2], 1);
}

#[test]
fn unchanged_rewards_give_delta_exactly_zero_whatever_the_order() {
    // Rewards whose float sum depends on the order they are added in.
    let rewards = [0.1, 0.7, 0.2, 1e-17, 0.3];
    let prompts: Vec<String> = (0..40).map(|i| format!("prompt {i}")).collect();
    let tasks_a: Vec<Task> = prompts
        .iter()
        .enumerate()
        .map(|(i, p)| task(i as i64, p, &rewards[..=(i % 5)]))
        .collect();
    // B: the same tasks under other task indices, rows listed in another order.
    let tasks_b: Vec<Task> = prompts
        .iter()
        .enumerate()
        .rev()
        .map(|(i, p)| task(100 + (i as i64 * 7) % 40, p, &rewards[..=(i % 5)]))
        .collect();
    let (a, b) = (run(&tasks_a, 0.6, 0), run(&tasks_b, 0.9, 11));
    let c = compare::compare(&side(&a, "a"), &side(&b, "b"), by_content()).unwrap();
    assert_eq!(c.overall.paired_tasks, 40);
    assert!(c.tasks.iter().all(|t| t.delta == Some(0.0)));
    assert_eq!(c.overall.unchanged, 40);
    assert_eq!(c.overall.mean_reward.delta, Some(0.0));
    assert_eq!(c.overall.mean_reward.ci95, Some((0.0, 0.0)));
    // From B's profiling file too.
    let c = compare::compare(&side(&a, "a"), &profile_side(&b, "b", 7), by_content()).unwrap();
    assert!(c.tasks.iter().all(|t| t.delta == Some(0.0)));
}

#[test]
fn a_profile_file_gives_the_same_comparison_as_its_run() {
    let a = run(
        &[
            task(0, "p0", &[1.0, 0.0, 1.0]),
            task(1, "p1", &[0.0, 0.0, 0.0]),
            task(2, "p2", &[0.3, 0.9, 1.0]),
        ],
        0.6,
        0,
    );
    let b = run(
        &[
            task(0, "p2", &[1.0, 1.0, 0.0]),
            task(1, "p0", &[0.0, 0.0, 1.0]),
            task(2, "p1", &[1.0, 0.0, 0.0]),
        ],
        0.6,
        4,
    );
    let from_runs = compare::compare(&side(&a, "a"), &side(&b, "b"), by_content()).unwrap();
    for chunk in [1, 13, 1 << 20] {
        let from_files = compare::compare(
            &profile_side(&a, "a", chunk),
            &profile_side(&b, "b", chunk),
            by_content(),
        )
        .unwrap();
        assert_eq!(
            compare::to_json(&from_files),
            compare::to_json(&from_runs),
            "chunk {chunk}"
        );
    }
}

#[test]
fn upstream_profile_files_pair_with_their_runs() {
    let mut checked = 0;
    for entry in std::fs::read_dir(common::fixtures_dir()).unwrap() {
        let dir = entry.unwrap().path();
        let Some(rollouts) = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .find(|p| p.to_string_lossy().ends_with("rollouts.jsonl"))
        else {
            continue;
        };
        let stem = rollouts.file_stem().unwrap().to_string_lossy().to_string();
        let profile = dir.join(format!("expected/{stem}_reward_profiling.jsonl"));
        if !profile.exists() {
            continue; // an example upstream fails on (its expected error is tested elsewhere)
        }
        let doc = json_of(&[
            "compare",
            rollouts.to_str().unwrap(),
            profile.to_str().unwrap(),
            "--format",
            "json",
            "--allow-partial-rollouts",
        ]);
        let n = doc["a"]["tasks"].as_u64().unwrap();
        assert_eq!(doc["paired_tasks"], n, "{}", dir.display());
        assert_eq!((&doc["only_a"], &doc["only_b"]), (&json!(0), &json!(0)));
        let unchanged = doc["unchanged"].as_u64().unwrap();
        assert_eq!(unchanged + doc["without_reward"].as_u64().unwrap(), n);
        if unchanged > 0 {
            assert_eq!(doc["mean_reward"]["delta"], 0.0, "{}", dir.display());
        }
        checked += 1;
    }
    assert!(checked >= 10, "{checked} examples");
}

fn json_of(args: &[&str]) -> Value {
    let out = run_gymscope(args);
    assert_success(&out);
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn cli_json_schema() {
    let dir = tempfile::tempdir().unwrap();
    let ((_, ra), (ib, rb)) = two_runs_in(dir.path());
    let doc = json_of(&["compare", &ra, &format!("{ib}:{rb}"), "--format", "json"]);
    assert_eq!(doc["a"], json!({"name": "a.jsonl", "tasks": 5}));
    assert_eq!(doc["b"], json!({"name": "b.jsonl", "tasks": 4}));
    assert_eq!(
        (&doc["paired_tasks"], &doc["only_a"], &doc["only_b"]),
        (&json!(4), &json!(1), &json!(0))
    );
    let m = &doc["mean_reward"];
    assert_eq!((&m["a"], &m["b"]), (&json!(0.625), &json!(0.375)));
    assert_eq!(m["delta"], json!(-0.25));
    let ci = m["ci95"].as_array().unwrap();
    assert_eq!(ci.len(), 2);
    assert!(ci[0].as_f64().unwrap() <= -0.25 && -0.25 <= ci[1].as_f64().unwrap());
    // Every group in both directions, zeros included.
    let groups = ["all_failure", "mixed", "all_success", "no_reward"];
    for from in groups {
        for to in groups {
            assert!(doc["transitions"][from][to].is_u64(), "{from} → {to}");
        }
    }
    assert_eq!(doc["transitions"]["all_success"]["all_failure"], 1);
    assert_eq!(doc["transitions"]["all_success"]["mixed"], 1);
    assert_eq!(doc["transitions"]["mixed"]["mixed"], 1);
    assert_eq!(doc["transitions"]["all_failure"]["mixed"], 1);
    assert_eq!(
        (&doc["improved"], &doc["regressed"], &doc["unchanged"]),
        (&json!(1), &json!(2), &json!(1))
    );
    assert_eq!(doc["agents"]["math"]["paired_tasks"], 4);
    assert!(doc["agents"]["math"]["mean_reward"]["ci95"].is_array());
    let tasks = doc["tasks"].as_array().unwrap();
    let keys = [
        "task_a", "task_b", "mean_a", "mean_b", "delta", "group_a", "group_b", "tokens_a",
        "tokens_b",
    ];
    for t in tasks {
        for k in keys {
            assert!(t.get(k).is_some(), "{k} in {t}");
        }
    }
    // Worst regression first, ties by task_a.
    let order: Vec<(i64, f64)> = tasks
        .iter()
        .map(|t| (t["task_a"].as_i64().unwrap(), t["delta"].as_f64().unwrap()))
        .collect();
    assert_eq!(order, vec![(0, -1.0), (3, -0.5), (1, 0.0), (2, 0.5)]);
    assert_eq!(tasks[0]["group_a"], "all_success");
    assert_eq!(tasks[0]["group_b"], "all_failure");
    assert_eq!(tasks[0]["task_b"], 2);
    assert_eq!(tasks[0]["tokens_a"], 105.0);

    // The same seed gives the same document; the profile file of B gives the same numbers.
    let again = json_of(&["compare", &ra, &format!("{ib}:{rb}"), "--format", "json"]);
    assert_eq!(doc, again);
    let out = run_gymscope(&["profile", "--inputs", &ib, "--rollouts", &rb]);
    assert!(out.status.success());
    let profile = dir.path().join("b_reward_profiling.jsonl");
    let from_file = json_of(&[
        "compare",
        &ra,
        profile.to_str().unwrap(),
        "--format",
        "json",
    ]);
    assert_eq!(from_file["tasks"], doc["tasks"]);
    assert_eq!(from_file["mean_reward"], doc["mean_reward"]);

    // Text: headline, transition table, regressions.
    let out = run_gymscope(&["compare", &ra, &rb]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert_contains(
        &text,
        "Paired 4 tasks by content (1 only in A, 0 only in B)",
    );
    assert_contains(&text, "Mean reward: A 0.625 → B 0.375 (Δ -0.25, 95% CI");
    assert!(text.contains("all_success"), "{text}");
    assert!(text.contains("Largest regressions:"), "{text}");
}

#[test]
fn errors_name_file_line_and_column() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = two_runs();
    let (_, ra) = write_run(dir.path(), "a", &a);
    let mut bad = b.clone();
    let mut lines: Vec<&str> = bad.1.lines().collect();
    lines[2] = r#"{"reward": 1.0, "_ng_task_index": 0, oops}"#;
    bad.1 = lines.join("\n") + "\n";
    let (_, rb) = write_run(dir.path(), "bad", &bad);
    let err = |args: &[&str]| {
        let out = run_gymscope(args);
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        String::from_utf8(out.stderr).unwrap()
    };
    let e = err(&["compare", &ra, &rb]);
    assert!(e.contains("bad.jsonl' at line 3, column"), "{e}");

    let profile = write_in(dir.path(), "p_reward_profiling.jsonl", "{\"_ng_task_index\":0,\"mean/reward\":1.0,\"sample\":{},\"rollout_infos\":[]}\n{\"_ng_task_index\":1,\"mean/reward\":tru}\n");
    let e = err(&["compare", &ra, profile.to_str().unwrap()]);
    assert_contains(&e, "p_reward_profiling.jsonl' at line 2, column 3");
    std::fs::write(
        &profile,
        "{\"_ng_task_index\":0,\"mean/reward\":1.0,\"rollout_infos\":[]}\n",
    )
    .unwrap();
    let e = err(&["compare", &ra, profile.to_str().unwrap()]);
    assert!(e.contains("line 1: field `sample` is missing"), "{e}");

    // No task in common: said so, with the way out.
    let other = run(&[task(0, "unrelated", &[1.0])], 0.6, 0);
    let (_, ro) = write_run(dir.path(), "other", &other);
    let e = err(&["compare", &ra, &ro]);
    assert_contains(&e, "no task of 'a.jsonl' is in 'other.jsonl'");
    assert!(e.contains("--pair-by index"), "{e}");

    // A rollouts file without its inputs beside it; a file that is neither.
    let lonely = write_in(dir.path(), "lonely.jsonl", &a.1);
    let e = err(&["compare", &ra, lonely.to_str().unwrap()]);
    assert!(e.contains("INPUTS:ROLLOUTS"), "{e}");
    let e = err(&["compare", &ra, "missing.jsonl"]);
    assert_contains(&e, "Input file not found: 'missing.jsonl' (B)");

    // The report never replaces an input: refused as a usage error (exit 2) before writing.
    let before = std::fs::read(&ra).unwrap();
    let out = run_gymscope(&["compare", &ra, &ra, "--report", &ra]);
    assert_eq!(out.status.code(), Some(2));
    let e = String::from_utf8(out.stderr).unwrap();
    assert!(e.contains("it is the input"), "{e}");
    assert_eq!(std::fs::read(&ra).unwrap(), before);
}

#[test]
fn few_pairs_by_content_suggest_pairing_by_index() {
    let a = run(
        &[
            task(0, "a", &[1.0]),
            task(1, "b", &[1.0]),
            task(2, "c", &[1.0]),
        ],
        0.6,
        0,
    );
    let b = run(
        &[
            task(0, "a", &[1.0]),
            task(1, "B", &[1.0]),
            task(2, "C", &[1.0]),
        ],
        0.6,
        0,
    );
    let c = compare::compare(&side(&a, "a"), &side(&b, "b"), by_content()).unwrap();
    assert_eq!(c.overall.paired_tasks, 1);
    assert!(
        c.warnings.iter().any(|w| w.contains("--pair-by index")),
        "{:?}",
        c.warnings
    );
}

#[test]
fn tasks_without_a_numeric_reward_are_counted_and_listed_last() {
    let no_reward = |index| Task {
        index,
        prompt: "judged later",
        agent: "math",
        rollouts: vec![(json!(null), 5), (json!("pass"), 7)],
    };
    let a = run(&[task(0, "p", &[1.0]), no_reward(1)], 0.6, 0);
    let b = run(
        &[task(0, "p", &[0.0]), task(1, "judged later", &[1.0, 1.0])],
        0.6,
        0,
    );
    let c = compare::compare(&side(&a, "a"), &side(&b, "b"), by_content()).unwrap();
    let o = &c.overall;
    assert_eq!(
        (
            o.paired_tasks,
            o.regressed,
            o.without_reward,
            o.mean_reward.tasks
        ),
        (2, 1, 1, 1)
    );
    assert_eq!(o.transitions[3][2], 1, "no_reward → all_success");
    let doc = compare::to_json(&c);
    let last = &doc["tasks"][1];
    assert_eq!((&last["task_a"], &last["delta"]), (&json!(1), &Value::Null));
    assert_eq!(last["group_a"], "no_reward");
    assert_eq!(doc["mean_reward"]["delta"], json!(-1.0));
}

#[test]
fn cli_seed_and_threshold() {
    let dir = tempfile::tempdir().unwrap();
    // 30 tasks with varied deltas, so resamples differ between seeds.
    let prompts: Vec<String> = (0..30).map(|i| format!("q{i}")).collect();
    // B's rewards carry a per-task offset, so the deltas are all distinct.
    let rewards = |i: usize, shift: usize| -> Vec<f64> {
        (0..4)
            .map(|r| (((i * 7 + r * 3 + shift) % 5) as f64) / 4.0 + (shift * i) as f64 * 1e-3)
            .collect()
    };
    let ta: Vec<Task> = prompts
        .iter()
        .enumerate()
        .map(|(i, p)| task(i as i64, p, &rewards(i, 0)))
        .collect();
    let tb: Vec<Task> = prompts
        .iter()
        .enumerate()
        .map(|(i, p)| task(i as i64, p, &rewards(i, i % 3)))
        .collect();
    let (_, ra) = write_run(dir.path(), "a", &run(&ta, 0.6, 0));
    let (_, rb) = write_run(dir.path(), "b", &run(&tb, 0.6, 0));
    let doc = |extra: &[&str]| {
        let mut args = vec!["compare", ra.as_str(), rb.as_str(), "--format", "json"];
        args.extend_from_slice(extra);
        json_of(&args)
    };
    let (d0, d1) = (doc(&[]), doc(&["--seed", "1"]));
    assert_eq!(d0["bootstrap"]["seed"], 0);
    assert_ne!(d0["mean_reward"]["ci95"], d1["mean_reward"]["ci95"]);
    assert_eq!(
        d0["tasks"], d1["tasks"],
        "only the interval depends on the seed"
    );
    assert_eq!(d0, doc(&["--seed", "0"]));
    // With success at 0.5, rewards of 0.5 and 0.75 count: fewer all_failure tasks.
    let half = doc(&["--pass-threshold", "0.5"]);
    let failures = |d: &Value| {
        d["transitions"]["all_failure"]["all_failure"]
            .as_u64()
            .unwrap()
    };
    assert!(failures(&half) < failures(&d0) || failures(&d0) == 0);
    assert_eq!(half["pass_threshold"], 0.5);
    assert_ne!(half["transitions"], d0["transitions"]);
}

/// An error inside a `*_reward_profiling.jsonl` was said twice ("X: X"), and an empty file in
/// `INPUTS:ROLLOUTS` read "'e.jsonl' like not recognized".
#[test]
fn errors_are_said_once_and_in_words() {
    let dir = tempfile::tempdir().unwrap();
    let p = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    let broken = "{\"_ng_task_index\":0,\"mean/reward\":1.0}\n";
    std::fs::write(p("a_reward_profiling.jsonl"), broken).unwrap();
    std::fs::write(p("b_reward_profiling.jsonl"), broken).unwrap();
    std::fs::write(p("e.jsonl"), "").unwrap();
    std::fs::write(p("u.jsonl"), "x\n").unwrap();
    let out = crate::common::run_gymscope(&[
        "compare",
        &p("a_reward_profiling.jsonl"),
        &p("b_reward_profiling.jsonl"),
    ]);
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert_eq!(err.matches("field `sample` is missing").count(), 1, "{err}");
    let out = crate::common::run_gymscope(&[
        "compare",
        &format!("{}:{}", p("u.jsonl"), p("e.jsonl")),
        &p("a_reward_profiling.jsonl"),
    ]);
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        err.contains("u.jsonl' is none of the files gymscope reads and '")
            && err.contains("e.jsonl' is empty"),
        "{err}"
    );
    assert!(!err.contains(" like not "), "{err}");
}
