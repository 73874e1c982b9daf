//! Scale-out as docs/collect.md prints it: shards as separate processes, then the merge line
//! exactly as written; and the merge's guards: the head server asked before anything is
//! written, exit 3 when rollouts or shards are missing, `--shard` refused as a usage error.

use crate::common::assert_contains;
use crate::common::gym_standin::StandIn;
use crate::common::{repo_root, run_gymscope};
use std::path::Path;
use std::process::{Command, Output};

const AGENT: &str = "standin_agent";

use crate::common::output_text as text;

/// Ten tasks naming the stand-in's agent, as `tasks.jsonl` in `dir`.
fn write_tasks(dir: &Path) {
    let rows: String = (0..10)
        .map(|i| {
            format!(
                "{{\"responses_create_params\":{{\"input\":[{{\"role\":\"user\",\"content\":\"task {i}\"}}]}},\"agent_ref\":{{\"name\":\"{AGENT}\"}},\"fake_behavior\":\"ok\"}}\n"
            )
        })
        .collect();
    std::fs::write(dir.join("tasks.jsonl"), rows).unwrap();
}

/// The `gymscope collect` command lines of the scale-out paragraph (docs/collect.md), joined across `\`.
fn readme_scale_out_lines() -> Vec<String> {
    let readme = std::fs::read_to_string(repo_root().join("docs/collect.md")).unwrap();
    let start = readme
        .find("**Scale-out.**")
        .expect("the scale-out paragraph");
    let end = start + readme[start..].find("\n**").unwrap();
    let joined = readme[start..end].replace("\\\n", " ");
    joined
        .lines()
        .map(str::trim)
        .filter(|l| l.starts_with("gymscope collect"))
        .map(str::to_string)
        .collect()
}

/// Runs a documented line in `dir`: `HEAD:11000` is the stand-in, `$SLURM_ARRAY_TASK_ID` is `task`.
fn run_line(line: &str, dir: &Path, head: &str, task: u32) -> Output {
    let line = line
        .replace("HEAD:11000", head)
        .replace("$SLURM_ARRAY_TASK_ID", &task.to_string());
    let mut words = line.split_whitespace();
    assert_eq!(words.next(), Some("gymscope"));
    Command::new(crate::common::gymscope_bin())
        .args(words)
        .current_dir(dir)
        .output()
        .unwrap()
}

#[test]
fn the_readme_recipe_runs_as_written() {
    let gym = StandIn::start(&[AGENT]);
    let dir = tempfile::tempdir().unwrap();
    write_tasks(dir.path());
    let lines = readme_scale_out_lines();
    let [shard_line, merge_line] = lines.as_slice() else {
        panic!(
            "docs/collect.md's scale-out paragraph: want a shard line and a merge line, got {lines:?}"
        )
    };
    assert_contains(shard_line, "--shard $SLURM_ARRAY_TASK_ID/8");
    for task in 0..8 {
        let r = run_line(shard_line, dir.path(), &gym.head(), task);
        assert!(r.status.success(), "shard {task}: {}", text(&r));
    }
    let r = run_line(merge_line, dir.path(), &gym.head(), 0);
    assert!(r.status.success(), "{}", text(&r));
    let merged = std::fs::read_to_string(dir.path().join("results/rollouts.jsonl")).unwrap();
    assert_eq!(merged.lines().count(), 10);
    assert!(dir
        .path()
        .join("results/rollouts_aggregate_metrics.json")
        .exists());
}

/// 8 shards of the ten tasks in `dir/results`, collected without aggregation.
fn collect_shards(gym: &StandIn, dir: &Path) {
    write_tasks(dir);
    for i in 0..8 {
        let shard = format!("{i}/8");
        let r = run_gymscope(&[
            "collect",
            "-i",
            dir.join("tasks.jsonl").to_str().unwrap(),
            "-o",
            dir.join("results/rollouts.jsonl").to_str().unwrap(),
            "--shard",
            &shard,
            "--head-server",
            &gym.head(),
            "--disable-aggregation",
        ]);
        assert!(r.status.success(), "{}", text(&r));
    }
}

fn merge(dir: &Path, extra: &[&str]) -> Output {
    let out = dir.join("results/rollouts.jsonl");
    let mut args = vec!["collect", "--merge", "-o", out.to_str().unwrap()];
    args.extend_from_slice(extra);
    run_gymscope(&args)
}

#[test]
fn a_merge_that_cannot_reach_the_head_server_writes_nothing() {
    let gym = StandIn::start(&[AGENT]);
    let dir = tempfile::tempdir().unwrap();
    collect_shards(&gym, dir.path());
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let nobody = closed.local_addr().unwrap().to_string();
    drop(closed);
    let r = merge(dir.path(), &["--head-server", &nobody]);
    assert_eq!(r.status.code(), Some(1), "{}", text(&r));
    assert!(text(&r).contains("nothing was written"), "{}", text(&r));
    for name in [
        "rollouts.jsonl",
        "rollouts_materialized_inputs.jsonl",
        "rollouts_failures.jsonl",
    ] {
        assert!(!dir.path().join("results").join(name).exists(), "{name}");
    }
}

#[test]
fn missing_rollouts_and_missing_shards_end_the_merge_with_3() {
    let gym = StandIn::start(&[AGENT]);
    let dir = tempfile::tempdir().unwrap();
    collect_shards(&gym, dir.path());
    let results = dir.path().join("results");
    let shard = |i: u32| results.join(format!("rollouts-shard{i}-of-8.jsonl"));
    // A shard that has not finished: one of its rollouts is not written yet.
    let text1 = std::fs::read_to_string(shard(1)).unwrap();
    let first = text1.lines().next().unwrap().len() + 1;
    std::fs::write(shard(1), &text1[first..]).unwrap();
    let r = merge(dir.path(), &["--disable-aggregation"]);
    assert_eq!(r.status.code(), Some(3), "{}", text(&r));
    assert!(text(&r).contains("have no rollout"), "{}", text(&r));

    // Seven of eight named: refused, naming the absent one; allowed, merged and exit 3.
    let seven: Vec<String> = (0..8)
        .filter(|&i| i != 5)
        .map(|i| shard(i).display().to_string())
        .collect();
    let mut args: Vec<&str> = vec!["--disable-aggregation"];
    args.extend(seven.iter().map(String::as_str));
    let r = merge(dir.path(), &args);
    assert_eq!(r.status.code(), Some(1), "{}", text(&r));
    assert_contains(&text(&r), "rollouts-shard5-of-8.jsonl");
    assert!(text(&r).contains("--allow-missing-shards"), "{}", text(&r));
    args.push("--allow-missing-shards");
    let r = merge(dir.path(), &args);
    assert_eq!(r.status.code(), Some(3), "{}", text(&r));
    assert_contains(&text(&r), "rollouts-shard5-of-8.jsonl");
    assert!(results.join("rollouts.jsonl").exists());
}

#[test]
fn a_malformed_shard_is_a_usage_error() {
    for bad in ["8/8", "0/0", "a/b", "3"] {
        let r = run_gymscope(&["collect", "-i", "x.jsonl", "-o", "r.jsonl", "--shard", bad]);
        assert_eq!(r.status.code(), Some(2), "--shard {bad}: {}", text(&r));
        assert!(text(&r).contains("I/N"), "--shard {bad}: {}", text(&r));
    }
    let r = run_gymscope(&["collect", "--merge", "-o", "r.jsonl", "--shard", "0/8"]);
    assert_eq!(r.status.code(), Some(2), "{}", text(&r));
}
