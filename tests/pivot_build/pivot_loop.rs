//! The PivotRL loop end to end through the real commands: `build-pivot` → `collect
//! --num-repeats 8` against a stand-in pivot agent on 127.0.0.1 that answers deterministically and
//! scores with the core's action comparison → `profile` → `select-pivot`.

use crate::common::assert_contains;
use crate::common::collect_args_routed;
use crate::common::gym_standin;
use crate::common::read_jsonl as jsonl;
use crate::common::run_gymscope as gymscope;
use crate::common::run_on;
use crate::{build_pivot, select_pivot};

use gym_standin::{Responder, StandIn};
use gymscope::verifier::{compare, Action, ComparatorConfig};
use serde_json::{json, Map, Value};
use std::path::Path;
use std::process::{Command, Output};
use std::sync::Arc;

const AGENT: &str = "loop_pivot_single_step_tool_use_with_argument_comparison_agent";

fn text(o: &Output) -> String {
    format!(
        "{}\n{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// The stand-in policy, from the pivot's content: a third of the pivots always right, a third
/// always wrong, the rest right on the first `k` of their 8 rollouts (k in 1..=7).
fn plan(pivot_id: &str) -> (u32, u64) {
    let v = u32::from_str_radix(&pivot_id[..2], 16).unwrap();
    (v % 3, 1 + u64::from(v / 3) % 7)
}

fn expected_pass_rate(pivot_id: &str) -> f64 {
    match plan(pivot_id) {
        (0, _) => 1.0,
        (1, _) => 0.0,
        (_, k) => k as f64 / 8.0,
    }
}

/// Answers like `tool_simulation_agent` + the pivot resources server: one model call, scored.
fn pivot_agent() -> Responder {
    Arc::new(|row: &Map<String, Value>| {
        let expected = &row["expected_action"];
        let id = row["pivot_info"]["pivot_id"].as_str().unwrap();
        let rollout = row["_ng_rollout_index"].as_u64().unwrap();
        let right = match plan(id) {
            (0, _) => true,
            (1, _) => false,
            (_, k) => rollout < k,
        };
        let wrong_call = json!({"type": "function_call", "name": "wrong_tool", "arguments": "{}", "call_id": "call_w", "status": "completed"});
        let output = if right {
            Action::from_expected(expected).unwrap().to_output()
        } else {
            vec![wrong_call]
        };
        let actual = Action::from_output(&output);
        let (reward, category) = compare(
            &ComparatorConfig::new(0.1),
            &Action::from_expected(expected).unwrap(),
            actual.as_ref(),
        );
        json!({"responses_create_params": row["responses_create_params"],
               "response": {"id": "resp_pivot", "object": "response", "status": "completed", "output": output,
                            "usage": {"input_tokens": 100, "output_tokens": 10, "total_tokens": 110}},
               "reward": reward, "expected_action": expected, "category": category.text()})
    })
}

#[test]
fn build_collect_profile_select() {
    let dir = tempfile::tempdir().unwrap();
    let source = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/pivot-build/upstream/example_multi_step.example_rollouts.jsonl");
    let pivots = dir.path().join("pivots.jsonl");
    let p = pivots.to_str().unwrap();
    let r = build_pivot(&source, &pivots, AGENT, &[]);
    assert!(r.status.success(), "{}", text(&r));
    let r = gymscope(&["validate-pivot", "--path", p, "--agent-ref", AGENT]);
    assert!(r.status.success(), "{}", text(&r));
    let rows = jsonl(&pivots);
    assert!(rows.len() >= 20);

    let gym = StandIn::start_responding(&[AGENT], pivot_agent());
    let rollouts = dir.path().join("prof/rollouts.jsonl");
    let head = gym.head();
    let repeats = ["--num-repeats", "8", "--temperature", "1.0"];
    let flags = [&repeats[..], &["--concurrency", "16", "--no-progress"]].concat();
    let r = gymscope(&collect_args_routed(&pivots, &rollouts, &head, &flags));
    assert!(r.status.success(), "{}", text(&r));
    assert_eq!(jsonl(&rollouts).len(), rows.len() * 8);
    let inputs = dir.path().join("prof/rollouts_materialized_inputs.jsonl");

    // The pivot rollouts are one call each by design: judged on that call, never as episodes
    // that lack a final answer (issue 25, item 1).
    let said = text(&r);
    let behaviour = said.lines().find(|l| l.starts_with("Behaviour:")).unwrap();
    assert!(
        behaviour.contains("single-step run: ") && behaviour.contains("0.0 % without an action"),
        "{}",
        behaviour
    );
    let r = gymscope(&[
        "health",
        "--inputs",
        inputs.to_str().unwrap(),
        rollouts.to_str().unwrap(),
        "--fail-on",
        "bad",
    ]);
    let said = text(&r);
    assert!(
        r.status.success(),
        "no BAD rate on a single-step run: {said}"
    );
    assert_contains(&said, "mode: single-step (rows carry expected_action");
    assert_contains(
        &said,
        "Consistently unhealthy tasks (every repeat flagged, at least 2): 0",
    );
    let r = run_on("profile", &inputs, &rollouts, &[]);
    assert!(r.status.success(), "{}", text(&r));
    let profile = dir.path().join("prof/rollouts_reward_profiling.jsonl");

    // The profile row's task index is the pivot's line and its sample carries the pivot_id.
    for prow in jsonl(&profile) {
        let t = prow["_ng_task_index"].as_u64().unwrap() as usize;
        assert_eq!(
            prow["sample"]["pivot_info"]["pivot_id"],
            rows[t]["pivot_info"]["pivot_id"]
        );
    }

    let selected = dir.path().join("selected.jsonl");
    let r = select_pivot(&pivots, &profile, &selected, &[]);
    assert!(r.status.success(), "{}", text(&r));
    assert!(
        String::from_utf8_lossy(&r.stdout).contains("| kept |"),
        "{}",
        text(&r)
    );
    // All or nothing: a failure on the last file of the set (its `.selection.json` cannot be
    // written) leaves the previous run's files as they were, and no new `.val.jsonl` beside.
    let before = std::fs::read(&selected).unwrap();
    let selection = dir.path().join("selected.selection.json");
    let kept_selection = std::fs::read(&selection).unwrap();
    std::fs::remove_file(&selection).unwrap();
    std::fs::create_dir(&selection).unwrap();
    let r = select_pivot(&pivots, &profile, &selected, &["--val-fraction", "0.5"]);
    assert_eq!(r.status.code(), Some(1), "{}", text(&r));
    assert_eq!(std::fs::read(&selected).unwrap(), before);
    assert!(!dir.path().join("selected.val.jsonl").exists());
    std::fs::remove_dir(&selection).unwrap();
    std::fs::write(&selection, kept_selection).unwrap();
    let ids = |rows: &[Value]| {
        rows.iter()
            .map(|r| r["pivot_info"]["pivot_id"].as_str().unwrap().to_string())
            .collect::<Vec<_>>()
    };
    let want: Vec<String> = ids(&rows)
        .into_iter()
        .filter(|id| plan(id).0 == 2)
        .collect();
    assert!(
        !want.is_empty(),
        "the stand-in policy gives some mixed pivots"
    );
    let got = jsonl(&selected);
    assert_eq!(ids(&got), want, "exactly the mixed pivots, in file order");
    for row in &got {
        let id = row["pivot_info"]["pivot_id"].as_str().unwrap();
        let info = &row["profile_info"];
        assert_eq!(info["num_rollouts"], 8);
        assert_eq!(info["group"], "mixed");
        assert_eq!(
            info["reward_mean"].as_f64().unwrap(),
            expected_pass_rate(id)
        );
        // The original row, with profile_info after pivot_info.
        let original = rows
            .iter()
            .find(|r| r["pivot_info"]["pivot_id"] == id)
            .unwrap();
        let mut stripped = row.clone();
        stripped
            .as_object_mut()
            .unwrap()
            .shift_remove("profile_info");
        assert_eq!(&stripped, original);
        let keys: Vec<&String> = row.as_object().unwrap().keys().collect();
        let at = keys.iter().position(|k| *k == "pivot_info").unwrap();
        assert_eq!(keys[at + 1], "profile_info");
    }
    let counts: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.path().join("selected.selection.json")).unwrap(),
    )
    .unwrap();
    let class = |c: u32| ids(&rows).iter().filter(|id| plan(id).0 == c).count();
    assert_eq!(counts["pivots"], rows.len());
    assert_eq!(counts["profiled"], rows.len());
    assert_eq!(counts["all_success"], class(0));
    assert_eq!(counts["all_failure"], class(1));
    assert_eq!(counts["mixed"], class(2));
    assert_eq!(counts["kept"], want.len());
    assert_eq!(counts["rollouts_per_pivot"], json!({"8": rows.len()}));
    let keys: Vec<&String> = counts.as_object().unwrap().keys().collect();
    assert_eq!(
        keys,
        [
            "pivots",
            "profiled",
            "unprofiled",
            "insufficient_rollouts",
            "all_success",
            "all_failure",
            "mixed",
            "dropped_above_difficulty_threshold",
            "dropped_easiest",
            "dropped_max_mean",
            "dropped_duplicate_prefix",
            "kept",
            "validation",
            "rollouts_per_pivot",
            "per_depth",
            "per_tool",
            "mean_reward_deciles",
            "reward_variance_deciles"
        ]
    );
    let tools: u64 = counts["per_tool"]
        .as_object()
        .unwrap()
        .values()
        .map(|t| t["kept"].as_u64().unwrap())
        .sum();
    assert_eq!(
        tools,
        want.len() as u64,
        "every kept pivot under its expected tool"
    );
    assert_eq!(counts["mean_reward_deciles"].as_array().unwrap().len(), 11);

    // Train-ready: the selection's Gym config serves the selected file as it is.
    let config = std::fs::read_to_string(dir.path().join("selected.gym.yaml")).unwrap();
    let fpaths: Vec<&str> = config
        .lines()
        .filter_map(|l| l.trim().strip_prefix("jsonl_fpath: "))
        .collect();
    assert_eq!(fpaths.len(), 1, "{config}");
    let served = std::path::Path::new(fpaths[0]);
    assert!(served.is_absolute(), "as absolute as the build's: {config}");
    assert_eq!(
        std::fs::read(served).unwrap(),
        std::fs::read(&selected).unwrap()
    );
    let built = std::fs::read_to_string(p.replace(".jsonl", ".gym.yaml")).unwrap();
    assert_eq!(
        config
            .lines()
            .filter(|l| !l.contains("jsonl_fpath"))
            .collect::<Vec<_>>(),
        built
            .lines()
            .filter(|l| !l.contains("jsonl_fpath"))
            .collect::<Vec<_>>(),
        "the build's config, pointed at the selection"
    );
    let r = gymscope(&["validate-pivot", "--path", fpaths[0]]);
    assert!(r.status.success(), "{}", text(&r));

    // λ_diff, a split by source trajectory, and the dedupe.
    let split = dir.path().join("split.jsonl");
    let r = select_pivot(
        &pivots,
        &profile,
        &split,
        &[
            "--keep",
            "mixed,all_success,all_failure",
            "--max-mean",
            "0.99",
            "--val-fraction",
            "0.3",
            "--seed",
            "4",
            "--dedupe-prefix",
        ],
    );
    assert!(r.status.success(), "{}", text(&r));
    let train = jsonl(&split);
    let val = jsonl(&dir.path().join("split.val.jsonl"));
    let kept_ids: Vec<String> = ids(&train).into_iter().chain(ids(&val)).collect();
    let mut want_sorted = want.clone();
    want_sorted.sort();
    let mut got_sorted = kept_ids.clone();
    got_sorted.sort();
    assert_eq!(
        got_sorted, want_sorted,
        "--max-mean 0.99 keeps exactly the mixed ones: variance > 0, mean < 0.99"
    );
    let trajectory = |r: &Value| r["trajectory_id"].to_string();
    let val_trajectories: Vec<String> = val.iter().map(trajectory).collect();
    assert!(
        train
            .iter()
            .all(|r| !val_trajectories.contains(&trajectory(r))),
        "no trajectory in both"
    );
    let config = std::fs::read_to_string(dir.path().join("split.gym.yaml")).unwrap();
    assert!(
        config.contains("- name: validation") && config.contains("split.val.jsonl"),
        "{config}"
    );

    // Capped: the easiest are dropped first (ties by file order).
    let capped = dir.path().join("capped.jsonl");
    let r = select_pivot(
        &pivots,
        &profile,
        &capped,
        &["--max-pivots", "2", "--sort", "difficulty"],
    );
    assert!(r.status.success(), "{}", text(&r));
    let mut hardest: Vec<(f64, usize, String)> = want
        .iter()
        .enumerate()
        .map(|(i, id)| (expected_pass_rate(id), i, id.clone()))
        .collect();
    hardest.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    let expect: Vec<String> = hardest.iter().take(2).map(|h| h.2.clone()).collect();
    assert_eq!(ids(&jsonl(&capped)), expect);

    // A higher success threshold than any reward: every profiled pivot is all_failure.
    let r = select_pivot(&pivots, &profile, &capped, &["--success-threshold", "2"]);
    // Nothing kept: exit 1 saying why, and the earlier selection is left as it was.
    assert_eq!(r.status.code(), Some(1), "{}", text(&r));
    assert_contains(&text(&r), &format!("{} all_failure", rows.len()));
    assert_eq!(ids(&jsonl(&capped)), expect);
    // --min-rollouts above 8: nothing is sufficiently profiled.
    let r = select_pivot(&pivots, &profile, &capped, &["--min-rollouts", "9"]);
    assert_eq!(r.status.code(), Some(1), "{}", text(&r));
    assert_contains(&text(&r), "every profiled pivot has 8 rollouts; --min-rollouts is 9: collect with --num-repeats 9 or lower it");
    assert_eq!(ids(&jsonl(&capped)), expect);
}

/// The documented pivot loop (docs/pivots.md, "Pivot datasets"), as its `sh` block is written, run line by
/// line in a fresh folder: the Gym run it starts from is upstream's multi-step example at
/// `results/rollouts.jsonl`, `gym env start` is the stand-in pivot agent, and `collect` is told
/// where that stand-in listens (`gym env start` serves the head server `collect` finds itself).
#[test]
fn the_readme_pivot_loop_runs_as_written() {
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/pivots.md"))
            .unwrap();
    let section = &readme[readme.find("# Pivot datasets").expect("the section")..];
    let block = &section[section.find("```sh\n").expect("its sh block") + 6..];
    let block = &block[..block.find("```").unwrap()];
    let lines: Vec<String> = block
        .replace("\\\n", " ")
        .lines()
        .map(|l| l.split(" # ").next().unwrap().trim().to_string())
        .filter(|l| !l.is_empty())
        .collect();
    assert!(
        lines.iter().any(|l| l.starts_with("gym env start"))
            && lines
                .last()
                .is_some_and(|l| l.starts_with("gymscope select-pivot")),
        "{lines:?}"
    );
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("results")).unwrap();
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/pivot-build/upstream/example_multi_step.example_rollouts.jsonl"),
        dir.path().join("results/rollouts.jsonl"),
    )
    .unwrap();
    let mut gym = None;
    for line in &lines {
        let words: Vec<&str> = line.split_whitespace().collect();
        if line.starts_with("gym env start") {
            let build = lines.iter().find(|l| l.contains("build-pivot")).unwrap();
            let agent = build
                .split_whitespace()
                .skip_while(|w| *w != "--agent-ref")
                .nth(1)
                .expect("build-pivot's --agent-ref");
            gym = Some(StandIn::start_responding(&[agent], pivot_agent()));
            continue;
        }
        assert_eq!(words[0], "gymscope", "{line}");
        let mut args: Vec<String> = words[1..].iter().map(ToString::to_string).collect();
        if words[1] == "collect" {
            let head = gym.as_ref().expect("gym env start comes first").head();
            args.extend(["--head-server".into(), head, "--no-progress".into()]);
        }
        let r = Command::new(env!("CARGO_BIN_EXE_gymscope"))
            .args(&args)
            .current_dir(dir.path())
            .output()
            .unwrap();
        assert!(r.status.success(), "{line}\n{}", text(&r));
    }
    // The selection is the mixed pivots: some kept, fewer than built.
    let (built, kept) = (
        jsonl(&dir.path().join("pivots/tasks.jsonl")).len(),
        jsonl(&dir.path().join("pivots/tasks.selected.jsonl")).len(),
    );
    assert!(0 < kept && kept < built, "kept {kept} of {built}");
}
