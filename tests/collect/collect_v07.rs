//! `gymscope collect`'s materialization and routing against v0.7.0's `gym eval run --no-serve`,
//! replayed from `tests/fixtures/collect-v07` (recorded on a live v0.7.0 stack by
//! `scripts/parity-v07/collect_cases.sh`, and issue 58's cases by `collect_shapes.sh`). The
//! stand-in stack has the recorded stack's agents, resources servers and environment servers (a
//! case's `stack.json` when it has one); the same flags give the same materialized file byte for
//! byte, the same routing lines in the same order, the same error or warning words and the same
//! exit status (3 where v0.7.0 exits 0 with failures, as docs/collect.md says), and, where
//! recorded, the same `summary.json`: rows written, failure fields, 🚨 lines, aggregate labels.

#![allow(unsafe_code)] // the SIGINT case: SIG_IGN before exec, kill(2) of the child

use crate::common::output_text as text;
use serde_json::{json, Value};
use std::path::Path;
use std::process::Command;

/// Lines of upstream's stdout about materialization and routing (not progress or metrics).
const ROUTING_LINES: [&str; 8] = [
    "Clearing output fpath",
    "Limiting the number of rows",
    "Adding unique `seed`",
    "Routing rows via agent_map",
    "Overriding responses_create_params",
    "Repeating rows",
    "Per-agent num_repeats",
    "Interleaving repeats",
];

fn routing_lines(stdout: &str) -> Vec<&str> {
    stdout
        .lines()
        .filter(|l| ROUTING_LINES.iter().any(|p| l.starts_with(p)))
        .collect()
}

#[test]
fn collect_replays_v07s_recorded_routing_cases() {
    let cases = crate::aggregate_v07::replay_recorded("collect-v07", |case, name, gym| {
        let expected = case.join("expected");
        let read = |f: &str| std::fs::read_to_string(expected.join(f)).unwrap_or_default();
        let args: Vec<String> = std::fs::read_to_string(case.join("args"))
            .unwrap()
            .lines()
            .filter(|l| !l.is_empty())
            .map(String::from)
            .collect();
        let dir = tempfile::tempdir().unwrap();
        std::fs::copy(case.join("input.jsonl"), dir.path().join("input.jsonl")).unwrap();
        let mut command = Command::new(env!("CARGO_BIN_EXE_gymscope"));
        command
            .args(["collect", "-i", "input.jsonl", "-o", "r.jsonl"])
            .args(&args)
            .args([
                "--head-server",
                &gym.head(),
                "--no-health-check",
                "--no-progress",
            ])
            .current_dir(dir.path());
        let r = match std::fs::read_to_string(case.join("signal")) {
            Ok(_) => run_with_sigint_ignored(command, &dir.path().join("r.jsonl")),
            Err(_) => command.output().unwrap(),
        };
        let summary = summary(dir.path(), &String::from_utf8_lossy(&r.stdout));
        // A run with failures in the sidecar exits 3 in gymscope, 0 in v0.7.0 (docs/collect.md).
        let want_code: i32 = read("exit_code").trim().parse().unwrap();
        let failed = summary["failures"]
            .as_array()
            .is_some_and(|f| !f.is_empty());
        let want_code = if want_code == 0 && failed {
            3
        } else {
            want_code
        };
        assert_eq!(r.status.code(), Some(want_code), "{name}: {}", text(&r));
        if let Ok(want) = std::fs::read(expected.join("summary.json")) {
            let want: Value = serde_json::from_slice(&want).unwrap();
            assert_eq!(
                summary, want,
                "{name}: rows, failures, alerts or aggregate entries"
            );
        }
        let stderr = String::from_utf8_lossy(&r.stderr);
        for words in read("error").lines().chain(read("warnings").lines()) {
            assert!(stderr.contains(words), "{name}: `{words}` not in {stderr}");
        }
        let want = std::fs::read(expected.join("r_materialized_inputs.jsonl")).ok();
        let got = std::fs::read(dir.path().join("r_materialized_inputs.jsonl")).ok();
        match (&want, &got) {
            (Some(w), Some(g)) => assert!(w == g, "{name}: the materialized file differs"),
            // v0.7.0 stops before writing it; gymscope writes it whole or not at all.
            (None, _) if want_code == 2 => assert!(got.is_none(), "{name}"),
            (None, _) => {}
            (Some(_), None) => panic!("{name}: no materialized file"),
        }
        let stdout = String::from_utf8_lossy(&r.stdout);
        assert_eq!(
            routing_lines(&stdout),
            routing_lines(&read("stdout")),
            "{name}: routing lines"
        );
    });
    assert!(cases >= 19, "{cases} cases");
}

/// Runs `command` started with SIGINT ignored (a background job of a script) and sends it SIGINT
/// once `out` has a row, as collect_shapes.sh did to v0.7.0.
fn run_with_sigint_ignored(mut command: Command, out: &Path) -> std::process::Output {
    use std::os::unix::process::CommandExt;
    use std::process::Stdio;
    command.stdout(Stdio::piped()).stderr(Stdio::piped());
    // SAFETY: between fork and exec only `signal`, which is async-signal-safe.
    unsafe {
        command.pre_exec(|| {
            libc::signal(libc::SIGINT, libc::SIG_IGN);
            Ok(())
        });
    }
    let child = command.spawn().unwrap();
    let start = std::time::Instant::now();
    while std::fs::metadata(out).map_or(true, |m| m.len() == 0) {
        assert!(start.elapsed().as_secs() < 60, "no row written");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    // SAFETY: a plain kill(2) of our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    child.wait_with_output().unwrap()
}

/// `http://127.0.0.1:PORT` written `http://HOST` (the servers' ports differ between stacks).
fn host(s: &str) -> String {
    let mut out = String::new();
    let mut rest = s;
    while let Some(i) = rest.find("http://") {
        out.push_str(&rest[..i]);
        out.push_str("http://HOST");
        let after = &rest[i + 7..];
        let end = after
            .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == ':'))
            .unwrap_or(after.len());
        rest = &after[end..];
    }
    out.push_str(rest);
    out
}

/// What collect_shapes.sh's `summary` keeps of a run, made comparable across stacks: rollout rows
/// written, the sidecar's `_ng_failure_*` fields, the 🚨 lines and the aggregate entries' labels
/// and servers (sorted: v0.7.0 writes them in completion order), a server's URL as `http://HOST`.
fn summary(dir: &Path, stdout: &str) -> Value {
    let rows = |f: &str| -> Vec<Value> {
        std::fs::read_to_string(dir.join(f))
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    };
    let mut failures: Vec<Value> = rows("r_failures.jsonl")
        .iter()
        .map(|r| {
            let fields = r.as_object().unwrap().iter();
            let kept = fields.filter(|(k, _)| k.starts_with("_ng_failure_"));
            let hosted =
                kept.map(|(k, v)| (k.clone(), v.as_str().map_or(v.clone(), |s| json!(host(s)))));
            Value::Object(hosted.collect())
        })
        .collect();
    failures.sort_by_key(ToString::to_string);
    let alerts = stdout.lines().filter(|l| l.starts_with('\u{1f6a8}'));
    let mut alerts: Vec<String> = alerts.map(host).collect();
    alerts.sort();
    let entries = std::fs::read(dir.join("r_aggregate_metrics.json"))
        .ok()
        .map(|s| serde_json::from_slice::<Value>(&s).unwrap());
    let mut aggregate: Vec<Value> = entries
        .iter()
        .flat_map(|v| v.as_array().cloned().unwrap_or_default())
        .map(|e| json!([e["agent_ref"]["name"], e["_ng_environment_server"]]))
        .collect();
    let pair = |e: &Value| {
        (
            e[0].as_str().map(String::from),
            e[1].as_str().map(String::from),
        )
    };
    aggregate.sort_by_key(pair);
    let rows = rows("r.jsonl").len();
    json!({"rows": rows, "failures": failures, "alerts": alerts, "aggregate": aggregate})
}
