//! `gymscope collect` end to end against the Rust stand-in for a Gym server stack: files and
//! routing, HTTP errors, resume, SIGTERM and kill -9 mid-run, shards and merge, secrets.
#![allow(unsafe_code)] // libc::kill sends the signal under test

use crate::common::assert_code;
use crate::common::assert_contains;
use crate::common::collect_args;
use crate::common::gym_standin;
use crate::common::run_gymscope as gymscope;

use gym_standin::{StandIn, SECRET};
use gymscope::profile::ProfileOptions;
use serde_json::Value;
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const AGENT: &str = "standin_agent";

use crate::common::output_text as text;

fn lines(p: &Path) -> Vec<Value> {
    let bytes = std::fs::read(p).unwrap_or_default();
    assert!(
        bytes.is_empty() || bytes.ends_with(b"\n"),
        "{}: torn last line",
        p.display()
    );
    bytes
        .split(|b| *b == b'\n')
        .filter(|l| !l.is_empty())
        .map(|l| serde_json::from_slice(l).unwrap_or_else(|e| panic!("{}: {e}", p.display())))
        .collect()
}

fn keys(rows: &[Value]) -> Vec<(i64, i64)> {
    let mut k: Vec<(i64, i64)> = rows
        .iter()
        .map(|r| {
            (
                r["_ng_task_index"].as_i64().unwrap(),
                r["_ng_rollout_index"].as_i64().unwrap(),
            )
        })
        .collect();
    k.sort_unstable();
    k
}

fn write_input(dir: &Path, behaviors: &[&str]) -> PathBuf {
    let p = dir.join("input.jsonl");
    let mut s = String::new();
    for (i, b) in behaviors.iter().enumerate() {
        s.push_str(&format!(
            "{{\"responses_create_params\":{{\"input\":[{{\"role\":\"user\",\"content\":\"task {i} é\"}}],\"temperature\":1.0}},\"fake_behavior\":\"{b}\",\"extra\":-0}}\n"
        ));
    }
    std::fs::write(&p, s).unwrap();
    p
}

fn assert_profiles(out: &Path, partial: bool) {
    let inputs = std::fs::read(gymscope::collect::paths::materialized(out)).unwrap();
    let rollouts = std::fs::read(out).unwrap();
    gymscope::output::profile_bytes(
        &inputs,
        "m",
        &rollouts,
        "r",
        ProfileOptions {
            allow_partial_rollouts: partial,
        },
    )
    .unwrap_or_else(|e| panic!("profile of {}: {e}", out.display()));
}

#[test]
fn fresh_run_routes_each_class_then_resume_retries_the_right_ones() {
    let gym = StandIn::start(&[AGENT]);
    let dir = tempfile::tempdir().unwrap();
    let input = write_input(
        dir.path(),
        &["ok", "ok", "transient", "terminal", "kill", "sleep:0.2"],
    );
    let out = dir.path().join("sub/rollouts.jsonl");
    let o = out.to_str().unwrap();
    let args = [
        "collect",
        "-i",
        input.to_str().unwrap(),
        "-o",
        o,
        "-a",
        AGENT,
        "--num-repeats",
        "2",
        "--temperature",
        "0.5",
        "--head-server",
        &gym.head(),
        "--concurrency",
        "4",
    ];
    let r = gymscope(&args);
    // Rollouts remain in the failures sidecar: exit 3, with the counts (issue 10).
    assert_eq!(r.status.code(), Some(3), "{}", text(&r));
    assert_contains(
        &text(&r),
        "6 of 12 rollouts did not succeed (4 with failures recorded in '",
    );
    assert_contains(
        &text(&r),
        "`--resume` would retry 4 of them (2 are terminal or out of attempts).",
    );

    let mat =
        std::fs::read_to_string(dir.path().join("sub/rollouts_materialized_inputs.jsonl")).unwrap();
    assert_eq!(mat.lines().count(), 12);
    assert_eq!(
        mat.lines().next().unwrap(),
        "{\"responses_create_params\":{\"input\":[{\"role\":\"user\",\"content\":\"task 0 é\"}],\"temperature\":0.5},\"fake_behavior\":\"ok\",\"extra\":0,\"agent_ref\":{\"name\":\"standin_agent\"},\"_ng_task_index\":0,\"_ng_rollout_index\":0}"
    );
    let main = lines(&out);
    assert_eq!(
        keys(&main),
        [(0, 0), (0, 1), (1, 0), (1, 1), (5, 0), (5, 1)]
    );
    let line0 = std::fs::read_to_string(&out).unwrap();
    // The stand-in echoes the row, so the merged keys keep the echoed positions.
    assert!(
        line0.lines().all(|l| l
            .contains("\"agent_ref\":{\"name\":\"standin_agent\"},\"_ng_task_index\"")
            && l.ends_with("\"reward\":1.0}")),
        "{line0}"
    );
    let side = lines(&dir.path().join("sub/rollouts_failures.jsonl"));
    assert_eq!(keys(&side), [(2, 0), (2, 1), (3, 0), (3, 1)]);
    let metrics: Value = serde_json::from_slice(
        &std::fs::read(dir.path().join("sub/rollouts_aggregate_metrics.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(metrics[0]["agent_ref"]["name"], AGENT);
    assert_eq!(metrics[0]["agent_metrics"]["mean/reward"], 1.0);
    assert_eq!(
        metrics[0]["group_level_metrics"].as_array().unwrap().len(),
        3
    );
    assert!(text(&r).contains("Key metrics for standin_agent"));
    assert_profiles(&out, true);

    gym.runs.lock().unwrap().clear();
    let mut resume = args.to_vec();
    resume.push("--resume");
    let r = gymscope(&resume);
    assert_code(&r, 3, "terminal ones remain");
    let t = text(&r);
    assert!(t.contains("- 12 original input rows\n- 6 rows already done (in main jsonl)\n- 4 prior failure attempts (4 unique tasks) in sidecar\n- 2 sidecar-terminal"), "{t}");
    let mut runs: Vec<String> = gym
        .runs
        .lock()
        .unwrap()
        .iter()
        .map(|(t, r, a)| format!("{t},{r},{a:?}"))
        .collect();
    runs.sort();
    assert_eq!(
        runs,
        [
            "2,0,Some(Number(1))",
            "2,1,Some(Number(1))",
            "4,0,None",
            "4,1,None"
        ]
    );
    assert_eq!(lines(&out).len(), 6);
    let side = lines(&dir.path().join("sub/rollouts_failures.jsonl"));
    assert_eq!(side.len(), 6);
    assert_eq!(side[5]["_ng_attempt_index"], 1);

    // NEMO_GYM_MAX_ROLLOUT_ATTEMPTS=2: the transient keys have 2 attempts now; only kill rows run.
    gym.runs.lock().unwrap().clear();
    let r = Command::new(env!("CARGO_BIN_EXE_gymscope"))
        .args(&resume)
        .env("NEMO_GYM_MAX_ROLLOUT_ATTEMPTS", "2")
        .output()
        .unwrap();
    assert!(text(&r).contains("- 2 hit max_attempts=2"), "{}", text(&r));
    assert_eq!(gym.runs.lock().unwrap().len(), 2);
}

#[test]
fn http_errors_are_recorded_or_abort_with_fail_fast() {
    let gym = StandIn::start(&[AGENT]);
    let dir = tempfile::tempdir().unwrap();
    let input = write_input(dir.path(), &["ok", "http500", "ok"]);
    let out = dir.path().join("r.jsonl");
    let head = gym.head();
    let base = collect_args(&input, &out, AGENT, &head, &["--concurrency", "1"]);
    let r = gymscope(&base);
    assert_eq!(r.status.code(), Some(3), "{}", text(&r));
    assert_contains(&text(&r), "1 of 3 rollouts did not succeed");
    assert_eq!(keys(&lines(&out)), [(0, 0), (2, 0)]);
    let side = lines(&dir.path().join("r_failures.jsonl"));
    assert_eq!(side.len(), 1);
    // v0.7.0's failure row: the rollout ran (a server's own 500), what aiohttp would say, the
    // body; then the row's keys.
    assert_eq!(side[0]["_ng_failure_class"], "agent_run_error");
    assert_eq!(side[0]["_ng_failure_type"], "ClientResponseError");
    assert_eq!(side[0]["_ng_failure_http_status"], 500);
    assert_eq!(
        side[0]["_ng_failure_message"],
        format!(
            "500, message='Internal Server Error', url='http://{}/run'",
            gym.addr
        )
    );
    assert!(side[0]["_ng_failure_response_body"]
        .as_str()
        .unwrap()
        .contains("model call failed"));
    let first: Vec<&String> = side[0].as_object().unwrap().keys().take(6).collect();
    assert_eq!(
        first,
        [
            "_ng_failure_class",
            "_ng_failure_type",
            "_ng_failure_message",
            "_ng_failure_http_status",
            "_ng_failure_response_body",
            "_ng_task_index"
        ]
    );
    assert!(
        text(&r).contains(&format!(
            "[rollout_collection] /run failed status=500 row={{\"_ng_rollout_index\": 0, \"_ng_task_index\": 1, \"agent_name\": \"{AGENT}\"}}"
        )),
        "{}",
        text(&r)
    );
    assert_contains(&text(&r), "rollout dropped from the score: row=");

    let mut ff = base.clone();
    ff.push("--fail-fast");
    let r = gymscope(&ff);
    assert_eq!(r.status.code(), Some(1), "{}", text(&r));
    assert!(text(&r).contains("HTTP 500"), "{}", text(&r));
    assert!(text(&r).contains("--resume"), "{}", text(&r));
    assert!(!dir.path().join("r_aggregate_metrics.json").exists() || lines(&out).len() <= 2);
}

/// Issue 58: the failure message carries the reason phrase the server sent (v0.7.0's aiohttp
/// `ClientResponseError`), not the one hyper knows for the status.
#[test]
fn a_failure_message_has_the_servers_reason_phrase() {
    let gym = StandIn::start(&[AGENT]);
    let dir = tempfile::tempdir().unwrap();
    let input = write_input(dir.path(), &["ok", "http422"]);
    let out = dir.path().join("r.jsonl");
    let r = gymscope(&collect_args(&input, &out, AGENT, &gym.head(), &[]));
    assert_eq!(r.status.code(), Some(3), "{}", text(&r));
    let side = lines(&dir.path().join("r_failures.jsonl"));
    assert_eq!(
        side[0]["_ng_failure_message"],
        format!(
            "422, message='Unprocessable Content', url='http://{}/run'",
            gym.addr
        )
    );
    assert!(text(&r).contains("Unprocessable Content"), "{}", text(&r));
}

#[test]
fn unreachable_agent_times_out_per_rollout_and_head_errors_are_clear() {
    // The head's config points the agent at a port nobody listens on: connection errors are
    // retried with backoff until --timeout records the rollout as a failure.
    let gym = StandIn::start(&[AGENT]);
    let dir = tempfile::tempdir().unwrap();
    let input = write_input(dir.path(), &["ok"]);
    let out = dir.path().join("r.jsonl");
    let head = gym.head();
    let r = gymscope(&collect_args(&input, &out, "no_such_agent", &head, &[]));
    assert!(!r.status.success());
    // v0.7.0's words, before any `/run`.
    assert!(text(&r).contains("Rows reference agents not present in the running config: 'no_such_agent'. Include the agent's config in the run, or re-route with +agent_map/+agent_name."), "{}", text(&r));
    assert!(gym.runs.lock().unwrap().is_empty());
    drop(gym);
    let r = gymscope(&collect_args(&input, &out, AGENT, "127.0.0.1:9", &[]));
    assert_contains(
        &text(&r),
        "Could not connect to the head server at http://127.0.0.1:9",
    );
}

#[test]
fn secrets_in_the_head_config_appear_in_no_output() {
    let gym = StandIn::start(&[AGENT, "other_agent"]);
    let dir = tempfile::tempdir().unwrap();
    let input = write_input(dir.path(), &["ok", "transient", "http500"]);
    let out = dir.path().join("r.jsonl");
    let mut all = String::new();
    for agent in [AGENT, "missing_agent"] {
        let r = gymscope(&collect_args(&input, &out, agent, &gym.head(), &[]));
        all.push_str(&text(&r));
    }
    for e in std::fs::read_dir(dir.path()).unwrap() {
        all.push_str(&String::from_utf8_lossy(
            &std::fs::read(e.unwrap().path()).unwrap(),
        ));
    }
    assert!(all.contains("Key metrics"), "{all}");
    assert!(!all.contains(SECRET), "the API key leaked");
}

fn wait_for_lines(p: &Path, n: usize, limit: Duration) {
    let start = Instant::now();
    while std::fs::read(p).map_or(0, |b| b.iter().filter(|c| **c == b'\n').count()) < n {
        assert!(start.elapsed() < limit, "no progress in {}", p.display());
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn sigterm_stops_cleanly_and_resume_finishes() {
    let gym = StandIn::start(&[AGENT]);
    let dir = tempfile::tempdir().unwrap();
    let input = write_input(dir.path(), &["sleep:0.1"; 40]);
    let out = dir.path().join("r.jsonl");
    let head = gym.head();
    let args = collect_args(&input, &out, AGENT, &head, &["--concurrency", "4"]);
    let child = crate::common::spawn_gymscope(&args, Stdio::piped(), Stdio::piped());
    wait_for_lines(&out, 4, Duration::from_secs(20));
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let r = child.wait_with_output().unwrap();
    assert_eq!(r.status.code(), Some(130), "{}", text(&r));
    let t = text(&r);
    assert!(
        t.contains("Stopped by SIGTERM") && t.contains(" --resume"),
        "{t}"
    );
    let done = lines(&out).len();
    assert!((4..40).contains(&done), "{done}");
    let mut resume = args.clone();
    resume.push("--resume");
    let r = gymscope(&resume);
    assert!(r.status.success(), "{}", text(&r));
    let k = keys(&lines(&out));
    assert_eq!(
        k,
        (0..40).map(|t| (t, 0)).collect::<Vec<_>>(),
        "every key exactly once"
    );
    assert_profiles(&out, false);
}

/// Issue 58: started with SIGINT ignored (a background job of a non-interactive script), the run
/// is not stopped by SIGINT, as v0.7.0's Python keeps an inherited ignore.
#[test]
fn an_inherited_ignored_sigint_stays_ignored() {
    use std::os::unix::process::CommandExt;
    let gym = StandIn::start(&[AGENT]);
    let dir = tempfile::tempdir().unwrap();
    let input = write_input(dir.path(), &["sleep:0.1"; 40]);
    let out = dir.path().join("r.jsonl");
    let mut command = Command::new(env!("CARGO_BIN_EXE_gymscope"));
    command
        .args(["collect", "-i", input.to_str().unwrap(), "-o"])
        .arg(&out)
        .args([
            "-a",
            AGENT,
            "--head-server",
            &gym.head(),
            "--concurrency",
            "4",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    // SAFETY: between fork and exec only `signal`, which is async-signal-safe.
    unsafe {
        command.pre_exec(|| {
            libc::signal(libc::SIGINT, libc::SIG_IGN);
            Ok(())
        });
    }
    let child = command.spawn().unwrap();
    wait_for_lines(&out, 4, Duration::from_secs(20));
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let r = child.wait_with_output().unwrap();
    assert!(r.status.success(), "{}", text(&r));
    assert!(!text(&r).contains("Ctrl-C"), "{}", text(&r));
    assert_eq!(lines(&out).len(), 40);
}

#[test]
fn kill_9_mid_run_then_resume_keeps_every_key_once() {
    let gym = StandIn::start(&[AGENT]);
    let dir = tempfile::tempdir().unwrap();
    let input = write_input(dir.path(), &["sleep:0.02"; 300]);
    let out = dir.path().join("r.jsonl");
    let head = gym.head();
    let args = collect_args(
        &input,
        &out,
        AGENT,
        &head,
        &["--concurrency", "16", "--num-repeats", "2"],
    );
    let mut child = crate::common::spawn_gymscope(&args, Stdio::null(), Stdio::null());
    wait_for_lines(&out, 50, Duration::from_secs(20));
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    let before = lines(&out).len();
    assert!(before < 600);
    // A crash can also tear the last line (power loss, a full disk): simulate one.
    std::fs::OpenOptions::new()
        .append(true)
        .open(&out)
        .and_then(|mut f| std::io::Write::write_all(&mut f, b"{\"responses_create_params\":{\"inp"))
        .unwrap();
    let mut resume = args.clone();
    resume.push("--resume");
    let r = gymscope(&resume);
    assert!(r.status.success(), "{}", text(&r));
    assert_contains(&text(&r), "Dropped a truncated final line (32 bytes) from");
    assert!(std::fs::read(dir.path().join("r.jsonl.torn"))
        .unwrap()
        .starts_with(b"{\"responses_create_params\""));
    let k = keys(&lines(&out));
    let unique: HashSet<_> = k.iter().collect();
    assert_eq!(k.len(), 600);
    assert_eq!(unique.len(), 600);
    assert_profiles(&out, false);
}

#[test]
fn shards_cover_the_run_once_and_merge_aggregates() {
    let gym = StandIn::start(&[AGENT]);
    let dir = tempfile::tempdir().unwrap();
    let input = write_input(dir.path(), &["ok"; 10]);
    let out = dir.path().join("r.jsonl");
    for i in 0..3 {
        let shard = format!("{i}/3");
        let r = gymscope(&collect_args(
            &input,
            &out,
            AGENT,
            &gym.head(),
            &[
                "--num-repeats",
                "2",
                "--shard",
                &shard,
                "--disable-aggregation",
            ],
        ));
        assert!(r.status.success(), "{}", text(&r));
        let s = dir.path().join(format!("r-shard{i}-of-3.jsonl"));
        assert_profiles(&s, false);
        assert!(!dir
            .path()
            .join(format!("r-shard{i}-of-3_aggregate_metrics.json"))
            .exists());
    }
    let r = gymscope(&[
        "collect",
        "--merge",
        "-o",
        out.to_str().unwrap(),
        "--head-server",
        &gym.head(),
    ]);
    assert!(r.status.success(), "{}", text(&r));
    let k = keys(&lines(&out));
    assert_eq!(
        k,
        (0..10).flat_map(|t| [(t, 0), (t, 1)]).collect::<Vec<_>>()
    );
    assert_eq!(
        lines(&gymscope::collect::paths::materialized(&out)).len(),
        20
    );
    assert_profiles(&out, false);
    let metrics: Value = serde_json::from_slice(
        &std::fs::read(dir.path().join("r_aggregate_metrics.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(
        metrics[0]["group_level_metrics"].as_array().unwrap().len(),
        10
    );
}

#[test]
fn legacy_hydra_spellings_work() {
    let gym = StandIn::start(&[AGENT]);
    let dir = tempfile::tempdir().unwrap();
    let input = write_input(dir.path(), &["ok", "ok"]);
    let out = dir.path().join("r.jsonl");
    let (i, o, h) = (
        format!("+input_jsonl_fpath={}", input.display()),
        format!("+output_jsonl_fpath={}", out.display()),
        format!(
            "+head_server={{host: 127.0.0.1, port: {}}}",
            gym.addr.port()
        ),
    );
    let r = gymscope(&[
        "collect",
        &i,
        &o,
        &format!("+agent_name={AGENT}"),
        "+limit=1",
        "+num_repeats=3",
        "++responses_create_params.max_output_tokens=64",
        &h,
        "+disable_aggregation=true",
    ]);
    assert!(r.status.success(), "{}", text(&r));
    let rows = lines(&out);
    assert_eq!(keys(&rows), [(0, 0), (0, 1), (0, 2)]);
    assert_eq!(rows[0]["responses_create_params"]["max_output_tokens"], 64);
    // v0.7.0's start line; a fresh run leaves no earlier run's aggregate metrics behind, even
    // when it writes none itself.
    assert!(
        text(&r).contains(&format!(
            "Routing rows via agent_map {{'_default': '{AGENT}'}}"
        )),
        "{}",
        text(&r)
    );
    let stale = gymscope::collect::paths::aggregate_metrics(&out);
    std::fs::write(&stale, "[]").unwrap();
    let r = gymscope(&[
        "collect",
        &i,
        &o,
        &format!("+agent_name={AGENT}"),
        "+limit=1",
        &h,
        "+disable_aggregation=true",
    ]);
    assert!(r.status.success(), "{}", text(&r));
    assert!(!stale.exists(), "the old aggregate metrics are still there");
}

#[test]
fn timeout_records_a_failure_that_resume_retries() {
    let gym = StandIn::start(&[AGENT]);
    let dir = tempfile::tempdir().unwrap();
    let input = write_input(dir.path(), &["ok", "sleep:3"]);
    let out = dir.path().join("r.jsonl");
    let head = gym.head();
    let args = collect_args(&input, &out, AGENT, &head, &["--timeout", "0.3"]);
    let started = Instant::now();
    let r = gymscope(&args);
    assert_eq!(r.status.code(), Some(3), "{}", text(&r));
    assert!(started.elapsed() < Duration::from_secs(3));
    let side = lines(&dir.path().join("r_failures.jsonl"));
    // No answer: nothing says the rollout ran (v0.7.0's class for it).
    assert_eq!(side[0]["_ng_failure_class"], "agent_request_failed");
    assert_eq!(side[0]["_ng_failure_type"], "TimeoutError");
    assert!(side[0]["_ng_failure_http_status"].is_null());
    let mut resume = args.clone();
    resume.push("--resume");
    gym.runs.lock().unwrap().clear();
    gymscope(&resume);
    assert_eq!(gym.runs.lock().unwrap()[0].2, Some(Value::from(1)));
}
