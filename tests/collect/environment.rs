//! `gymscope collect` against a v0.7.0-shaped stack (`StandIn::start_v07`: each agent fronted by
//! a `legacy_agent` environment server): every `/run` and `/aggregate_metrics` goes through the
//! server, every result names it, the metrics file has one entry per server.

use crate::common::collect_args;
use crate::common::collect_args_routed;
use crate::common::gym_standin::StandIn;
use crate::common::output_text as text;
use crate::common::read_jsonl as rows;
use crate::common::run_gymscope as gymscope;
use crate::common::write_in;
use crate::common::{assert_contains, assert_lacks};
use serde_json::Value;
use std::sync::atomic::Ordering;

fn tail_keys(row: &Value, n: usize) -> Vec<String> {
    let keys: Vec<String> = row.as_object().unwrap().keys().cloned().collect();
    keys[keys.len() - n..].to_vec()
}

#[test]
fn rollouts_and_metrics_go_through_each_agents_environment_server() {
    let gym = StandIn::start_v07(&["alpha", "beta"]);
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.jsonl");
    std::fs::write(
        &input,
        "{\"responses_create_params\":{\"input\":\"a\"},\"agent_ref\":{\"name\":\"alpha\"}}\n\
         {\"responses_create_params\":{\"input\":\"b\"},\"agent_ref\":{\"name\":\"beta\"}}\n\
         {\"responses_create_params\":{\"input\":\"c\"},\"agent_ref\":{\"name\":\"beta\"},\"fake_behavior\":\"http500\"}\n",
    )
    .unwrap();
    let out = dir.path().join("o").join("r.jsonl");
    let r = gymscope(&collect_args_routed(
        &input,
        &out,
        &gym.head(),
        &["+num_repeats=2", "--concurrency", "1"],
    ));
    assert_eq!(r.status.code(), Some(3), "{}", text(&r));
    let main = rows(&out);
    assert_eq!(main.len(), 4);
    for row in &main {
        let agent = row["agent_ref"]["name"].as_str().unwrap();
        assert_eq!(
            tail_keys(row, 2),
            ["_ng_environment_server", "_ng_result_type"]
        );
        assert_eq!(
            row["_ng_environment_server"],
            format!("{agent}_environment_server")
        );
        assert_eq!(row["_ng_result_type"], "legacy_agent");
    }
    // The failure row names the server the /run went to, and its URL is the server's.
    let side = rows(&dir.path().join("o").join("r_failures.jsonl"));
    assert_eq!(side.len(), 2);
    assert_eq!(side[0]["_ng_environment_server"], "beta_environment_server");
    assert_eq!(side[0]["_ng_result_type"], "legacy_agent");
    let message = side[0]["_ng_failure_message"].as_str().unwrap();
    assert_lacks(message, &format!(":{}/", gym.addr.port()));
    // Six /run and two /aggregate_metrics, all through an environment server.
    assert_eq!(gym.relayed.load(Ordering::Relaxed), 8);
    let metrics: Value = serde_json::from_slice(
        &std::fs::read(dir.path().join("o").join("r_aggregate_metrics.json")).unwrap(),
    )
    .unwrap();
    let entries = metrics.as_array().unwrap();
    let servers: Vec<(&str, &str)> = entries
        .iter()
        .map(|e| {
            (
                e["agent_ref"]["name"].as_str().unwrap(),
                e["_ng_environment_server"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        servers,
        [
            ("alpha", "alpha_environment_server"),
            ("beta", "beta_environment_server")
        ]
    );
    let keys: Vec<&String> = entries[0].as_object().unwrap().keys().collect();
    assert_eq!(
        keys,
        [
            "agent_ref",
            "_ng_environment_server",
            "agent_metrics",
            "key_metrics",
            "group_level_metrics",
            "repeat_level_metrics"
        ]
    );
    let stdout = String::from_utf8_lossy(&r.stdout);
    assert_contains(
        &stdout,
        "Per-task latency over 4 completed rollout(s): median ",
    );
    assert_contains(&stdout, "Task-time delivered: 0.0 task-hours");
}

#[test]
fn a_row_stamped_with_a_server_the_stack_lacks_stops_before_any_run() {
    let gym = StandIn::start_v07(&["alpha"]);
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.jsonl");
    std::fs::write(
        &input,
        "{\"responses_create_params\":{},\"agent_ref\":{\"name\":\"alpha\"}}\n\
         {\"responses_create_params\":{},\"agent_ref\":{\"name\":\"alpha\"},\"_ng_environment_server\":\"gone_env\"}\n",
    )
    .unwrap();
    let out = dir.path().join("r.jsonl");
    let r = gymscope(&collect_args_routed(&input, &out, &gym.head(), &[]));
    assert_eq!(r.status.code(), Some(1), "{}", text(&r));
    assert_contains(&text(&r), "r_materialized_inputs.jsonl' line 2: Environment servers are not present in the running config: ['gone_env'] (available: ['alpha_environment_server', 'taskset_environment_server'])");
    assert_eq!(gym.relayed.load(Ordering::Relaxed), 0);
    assert!(gym.runs.lock().unwrap().is_empty());
}

#[test]
fn taskset_rows_are_episodes_of_their_routed_server() {
    let gym = StandIn::start_v07(&["alpha"]);
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.jsonl");
    std::fs::write(
        &input,
        "{\"task_id\":{\"taskset\":\"ts\",\"id\":\"q1\"},\"task_input\":{\"reward\":0.5}}\n\
         {\"task_id\":{\"taskset\":\"ts\",\"id\":\"q2\"},\"task_input\":{\"fail\":true}}\n",
    )
    .unwrap();
    let out = dir.path().join("r.jsonl");
    let r = gymscope(&collect_args_routed(
        &input,
        &out,
        &gym.head(),
        &[
            "+environment_server_routes={ts: taskset_environment_server}",
            "+num_repeats=2",
            "--concurrency",
            "1",
        ],
    ));
    assert_eq!(r.status.code(), Some(3), "{}", text(&r));
    // Materialized as v0.7.0 writes taskset rows: no agent, the server after the task index.
    let mat = std::fs::read_to_string(dir.path().join("r_materialized_inputs.jsonl")).unwrap();
    assert_eq!(
        mat.lines().next().unwrap(),
        "{\"task_id\":{\"taskset\":\"ts\",\"id\":\"q1\"},\"task_input\":{\"reward\":0.5},\"_ng_task_index\":0,\"_ng_environment_server\":\"taskset_environment_server\",\"_ng_rollout_index\":0}"
    );
    let main = rows(&out);
    assert_eq!(main.len(), 2);
    for row in &main {
        assert_eq!(row["reward"], 0.5);
        assert_eq!(row["_ng_task_id"]["id"], "q1");
        assert!(row.get("agent_ref").is_none(), "{row}");
        assert_eq!(row["_ng_result_type"], "single_agent_turn");
        assert_eq!(row["_ng_environment_server"], "taskset_environment_server");
    }
    let side = rows(&dir.path().join("r_failures.jsonl"));
    assert_eq!(side.len(), 2);
    assert_eq!(side[0]["_ng_failure_class"], "environment_server_failed");
    assert_eq!(side[0]["_ng_failure_terminal"], false);
    assert_eq!(side[0]["_ng_failure_message"], "the task asked to fail");
    // The episode ids are v0.7.0's: "<task>-<rollout>", attempt 0.
    let runs = gym.runs.lock().unwrap().clone();
    let ids: Vec<String> = runs
        .iter()
        .map(|r| r.0.as_str().unwrap().to_string())
        .collect();
    assert_eq!(ids, ["0-0", "0-1", "1-0", "1-1"]);
}

#[test]
fn coverage_require_complete_and_retried_terminal_timeouts() {
    let gym = StandIn::start_v07(&["alpha"]);
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.jsonl");
    std::fs::write(
        &input,
        "{\"responses_create_params\":{\"input\":\"a\"}}\n\
         {\"responses_create_params\":{\"input\":\"b\"},\"fake_behavior\":\"terminal\"}\n\
         {\"responses_create_params\":{\"input\":\"c\"},\"fake_behavior\":\"http500\"}\n",
    )
    .unwrap();
    let out = dir.path().join("r.jsonl");
    let head = gym.head();
    let base = collect_args(
        &input,
        &out,
        "alpha",
        &head,
        &["--concurrency", "1", "--no-health-check"],
    );
    let mut args = base.clone();
    args.extend(["+route_failures_to_sidecar=true", "+require_complete=true"]);
    let r = gymscope(&args);
    assert_eq!(r.status.code(), Some(1), "{}", text(&r));
    let stdout = String::from_utf8_lossy(&r.stdout);
    assert!(stdout.contains("route_failures_to_sidecar is on: a failed agent /run becomes a sidecar row instead of ending the run, and its rollout leaves the score."), "{stdout}");
    let side = dir.path().join("r_failures.jsonl");
    assert!(
        stdout.contains(&format!(
            "\nRollouts missing from the score: 2 of 3 materialized (1 agent_run_error, 1 timeout_exceeded routed this run; see {})\nMetrics cover: 1 of 3 rollouts",
            side.display()
        )),
        "{stdout}"
    );
    assert!(
        text(&r).contains(&format!(
            "Error: EVAL FAILED: 1/3 samples completed. Partial artifacts retained at {}.",
            out.display()
        )),
        "{}",
        text(&r)
    );
    // On resume the terminal timeout is retried only with --retry-terminal-timeouts.
    let runs_of_task_1 = || gym.runs.lock().unwrap().iter().filter(|r| r.0 == 1).count();
    let mut resume = base.clone();
    resume.push("--resume");
    let r = gymscope(&resume);
    assert_eq!(r.status.code(), Some(3), "{}", text(&r));
    assert_eq!(runs_of_task_1(), 1);
    resume.push("+retry_terminal_timeouts=true");
    let r = gymscope(&resume);
    assert_eq!(r.status.code(), Some(3), "{}", text(&r));
    assert_eq!(runs_of_task_1(), 2);
}

#[test]
fn counted_zeros_join_the_score_only() {
    let gym = StandIn::start_v07(&["alpha"]);
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.jsonl");
    std::fs::write(
        &input,
        "{\"responses_create_params\":{\"input\":\"a\"},\"subset\":\"s1\"}\n\
         {\"responses_create_params\":{\"input\":\"b\"},\"subset\":\"s2\",\"fake_behavior\":\"http500\"}\n\
         {\"responses_create_params\":{\"input\":\"c\"},\"subset\":\"s3\",\"fake_behavior\":\"kill\"}\n\
         {\"responses_create_params\":{\"input\":\"d\"},\"subset\":\"s4\"}\n",
    )
    .unwrap();
    let out = dir.path().join("r.jsonl");
    let r = gymscope(&collect_args(
        &input,
        &out,
        "alpha",
        &gym.head(),
        &[
            "--no-health-check",
            "+count_failure_classes_as_zero=[agent_run_error]",
            "+count_missing_rollouts_as_zero=true",
        ],
    ));
    assert_eq!(r.status.code(), Some(3), "{}", text(&r));
    let stdout = String::from_utf8_lossy(&r.stdout);
    for line in [
        "Counting 1 failure row(s) as scored zeros: ['agent_run_error']",
        "Counting 1 materialized rollout(s) with no row as scored zeros",
        "Scored as zero because they left no row: 1 of 4 rollouts",
    ] {
        assert!(stdout.contains(line), "`{line}` not in {stdout}");
    }
    // Covered in full: no missing line.
    assert_lacks(&stdout, "Rollouts missing from the score");
    // The files are unchanged: two rows in the main file, one in the sidecar.
    assert_eq!(rows(&out).len(), 2);
    assert_eq!(rows(&dir.path().join("r_failures.jsonl")).len(), 1);
    // Scored over four: two successes (reward 1) and two zeros.
    let metrics: Value = serde_json::from_slice(
        &std::fs::read(dir.path().join("r_aggregate_metrics.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(metrics[0]["agent_metrics"]["mean/reward"], 0.5, "{metrics}");
}

#[test]
fn a_run_where_nothing_succeeded_ends_as_v07s_with_exit_1() {
    let gym = StandIn::start_v07(&["alpha"]);
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.jsonl");
    std::fs::write(
        &input,
        "{\"responses_create_params\":{},\"fake_behavior\":\"http500\"}\n\
         {\"responses_create_params\":{\"x\":1},\"fake_behavior\":\"transient\"}\n",
    )
    .unwrap();
    let out = dir.path().join("r.jsonl");
    let r = gymscope(&collect_args(
        &input,
        &out,
        "alpha",
        &gym.head(),
        &["--concurrency", "1"],
    ));
    assert_eq!(r.status.code(), Some(1), "{}", text(&r));
    let side = dir.path().join("r_failures.jsonl");
    assert!(
        text(&r).contains(&format!(
            "Error: None of the 2 dispatched rollouts produced a result {{'agent_run_error': 1, 'transient': 1}}. Inspect {}; the run has no score to report.",
            side.display()
        )),
        "{}",
        text(&r)
    );
    assert!(!dir.path().join("r_aggregate_metrics.json").exists());
}

#[test]
fn a_spent_dispatch_budget_starts_nothing_and_resume_runs_it() {
    let gym = StandIn::start_v07(&["alpha"]);
    let dir = tempfile::tempdir().unwrap();
    let input = write_in(
        dir.path(),
        "in.jsonl",
        "{\"responses_create_params\":{}}\n{\"responses_create_params\":{\"x\":1}}\n",
    );
    let out = dir.path().join("r.jsonl");
    let head = gym.head();
    let base = collect_args(&input, &out, "alpha", &head, &["--no-health-check"]);
    let mut args = base.clone();
    args.push("+dispatch_budget_s=0");
    let r = gymscope(&args);
    assert_eq!(r.status.code(), Some(2), "{}", text(&r));
    assert_contains(
        &text(&r),
        "dispatch_budget_s requires a finite positive num_samples_in_parallel",
    );
    args.push("+num_samples_in_parallel=2");
    let r = gymscope(&args);
    assert_eq!(r.status.code(), Some(1), "{}", text(&r));
    assert!(String::from_utf8_lossy(&r.stdout).contains("Dispatch budget: 0 min. New rollouts stop being dispatched once less time remains than this run's observed p75 task duration."), "{}", text(&r));
    assert!(text(&r).contains("None of the 2 dispatched rollouts produced a result {}. 2 of them were never started because dispatch_budget_s ran out; resume_from_cache dispatches them in the next run."), "{}", text(&r));
    assert!(gym.runs.lock().unwrap().is_empty());
    let mut resume = base.clone();
    resume.push("--resume");
    let r = gymscope(&resume);
    assert_eq!(r.status.code(), Some(0), "{}", text(&r));
    assert_eq!(rows(&out).len(), 2);
}

#[test]
fn resume_moves_invalid_judge_rows_reuses_deliverables_and_starts_the_longest_first() {
    let gym = StandIn::start_v07(&["alpha"]);
    let dir = tempfile::tempdir().unwrap();
    let deliverables = dir.path().join("deliverables");
    std::fs::create_dir(&deliverables).unwrap();
    std::fs::write(deliverables.join("report.md"), "done").unwrap();
    std::fs::write(deliverables.join("log.txt"), "not a deliverable").unwrap();
    let input = dir.path().join("in.jsonl");
    std::fs::write(
        &input,
        format!(
            "{{\"responses_create_params\":{{\"input\":\"a\"}},\"fake_behavior\":\"transient\"}}\n\
             {{\"responses_create_params\":{{\"input\":\"b\"}},\"fake_behavior\":\"transient\",\"elapsed_seconds\":90}}\n\
             {{\"responses_create_params\":{{\"input\":\"c\"}},\"fake_behavior\":\"transient\",\"elapsed_seconds\":30}}\n\
             {{\"responses_create_params\":{{\"input\":\"d\"}},\"invalid_judge_response\":true,\"deliverables_dir\":\"{}\"}}\n",
            deliverables.display()
        ),
    )
    .unwrap();
    let out = dir.path().join("r.jsonl");
    let head = gym.head();
    let base = collect_args(
        &input,
        &out,
        "alpha",
        &head,
        &["--concurrency", "1", "--no-health-check"],
    );
    let r = gymscope(&base);
    assert_eq!(r.status.code(), Some(3), "{}", text(&r));
    assert_eq!(rows(&out).len(), 1);
    gym.runs.lock().unwrap().clear();
    let mut resume = base.clone();
    resume.extend([
        "--resume",
        "+retry_invalid_judge_responses=true",
        "+dispatch_longest_first=true",
    ]);
    let r = gymscope(&resume);
    let stdout = String::from_utf8_lossy(&r.stdout);
    assert_contains(&stdout, "Dispatching longest-first: 2 row(s) with known timings (longest 2 min) ahead of 2 unseen row(s)");
    // Longest first (task 1: 90 s, task 2: 30 s), then the rest in file order.
    let order: Vec<i64> = gym
        .runs
        .lock()
        .unwrap()
        .iter()
        .map(|r| r.0.as_i64().unwrap())
        .collect();
    assert_eq!(order, [1, 2, 0, 3]);
    // The invalid-judge row moved to the sidecar, marked, and its retry re-judges the deliverable.
    let side = rows(&dir.path().join("r_failures.jsonl"));
    let moved: Vec<&Value> = side
        .iter()
        .filter(|r| r.get("_ng_migrated_invalid_judge_response").is_some())
        .collect();
    assert_eq!(moved.len(), 1);
    assert_eq!(moved[0]["_ng_failure_class"], "judge_invalid");
    assert_eq!(moved[0]["reuse_cached_deliverable"], true);
    let main = rows(&out);
    assert_eq!(main.len(), 1, "{main:?}");
    assert_eq!(main[0]["reuse_cached_deliverable"], true);
    assert_eq!(main[0]["_ng_attempt_index"], 1);
}
