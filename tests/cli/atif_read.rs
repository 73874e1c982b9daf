//! ATIF read as a run: the folders NeMo Gym v0.7.0's export wrote (`tests/fixtures/atif-v07/*/
//! expected/out`, upstream's own files) give the same query counts and pivots as the Gym rollouts
//! they came from; Harbor's job folders, plain folders and single files are read; hostile input
//! (escaping manifest paths, changed files, deep nesting, oversized files, wrong types) ends in
//! a named error and nothing outside the folder is read. And `validate-atif`.

use crate::common;
use crate::common::assert_contains;

use common::harbor_job::trajectory;
use common::*;
use serde_json::{json, Value};
use std::fs;
use std::path::{Path, PathBuf};

fn exported_cases() -> Vec<PathBuf> {
    let root = repo_root().join("tests/fixtures/atif-v07");
    crate::common::fixture_files::case_dirs(&root, "expected/out/manifest.jsonl")
}

fn s(p: &Path) -> String {
    p.display().to_string()
}

fn count(args: &[&str]) -> String {
    let out = run_gymscope(args);
    assert!(out.status.success(), "{args:?}: {}", output_text(&out));
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

#[test]
fn an_exported_folder_counts_as_the_rollouts_it_came_from() {
    let exprs = [
        "reward >= 1",
        "text ~ /cold/",
        "tool_calls > 0",
        "text ~ /San Francisco/",
        "agent == 'simple_agent'",
        "usage.output_tokens > 10",
    ];
    let mut compared = 0;
    for case in exported_cases() {
        let rollouts = case.join("rollouts.jsonl");
        let out = case.join("expected/out");
        for expr in exprs {
            let want = count(&["query", &s(&rollouts), "--count", expr]);
            let got = count(&[
                "query",
                &s(&out),
                "--count",
                expr,
                "--rewards",
                &s(&rollouts),
            ]);
            assert_eq!(got, want, "{}: {expr}", case.display());
            compared += 1;
        }
    }
    assert!(compared > 100, "{compared}");
}

#[test]
fn an_exported_folder_gives_the_pivots_of_the_rollouts_it_came_from() {
    // Not `multipart_user`: ATIF has no place for a source message's `status` (docs/atif.md).
    for name in [
        "tool_then_answer",
        "parallel_calls",
        "reasoning_summary",
        "arguments_rich",
        "unicode_text",
    ] {
        let case = repo_root().join("tests/fixtures/atif-v07").join(name);
        let tmp = tempfile::tempdir().unwrap();
        let (a, b) = (tmp.path().join("a.jsonl"), tmp.path().join("b.jsonl"));
        let rollouts = s(&case.join("rollouts.jsonl"));
        let from_gym = run_gymscope(&[
            "build-pivot",
            "--input",
            &rollouts,
            "--output",
            &s(&a),
            "--agent-ref",
            "x",
        ]);
        let from_atif = run_gymscope(&[
            "build-pivot",
            "--input",
            &s(&case.join("expected/out")),
            "--rewards",
            &rollouts,
            "--output",
            &s(&b),
            "--agent-ref",
            "x",
        ]);
        assert!(from_gym.status.success(), "{}", output_text(&from_gym));
        assert!(from_atif.status.success(), "{}", output_text(&from_atif));
        let rows = |p: &Path| -> Vec<Value> {
            fs::read_to_string(p)
                .unwrap()
                .lines()
                .map(|l| serde_json::from_str(l).unwrap())
                .collect()
        };
        let (want, got) = (rows(&a), rows(&b));
        assert!(!want.is_empty(), "{name}: no pivots");
        assert_eq!(got, want, "{name}");
        // Upstream's row contract (validate-pivot is its validator's drop-in).
        let valid = run_gymscope(&["validate-pivot", "--path", &s(&b)]);
        assert!(valid.status.success(), "{name}: {}", output_text(&valid));
    }
}

#[test]
fn without_rewards_the_run_says_so_and_profile_reads_it_with_them() {
    let case = repo_root().join("tests/fixtures/atif-v07/tool_then_answer");
    let out = run_gymscope(&[
        "query",
        &s(&case.join("expected/out")),
        "--count",
        "reward >= 1",
    ]);
    assert!(out.status.success(), "{}", output_text(&out));
    assert_contains(&output_text(&out), "3 of them have no reward");

    let tmp = tempfile::tempdir().unwrap();
    let copy = tmp.path().join("eval_atif");
    fs::create_dir(&copy).unwrap();
    for e in fs::read_dir(case.join("expected/out")).unwrap() {
        let p = e.unwrap().path();
        fs::copy(&p, copy.join(p.file_name().unwrap())).unwrap();
    }
    let profile = run_gymscope(&[
        "profile",
        "--rollouts",
        &s(&copy),
        "--rewards",
        &s(&case.join("rollouts.jsonl")),
    ]);
    assert!(profile.status.success(), "{}", output_text(&profile));
    let rows = fs::read_to_string(tmp.path().join("eval_atif_reward_profiling.jsonl")).unwrap();
    assert_eq!(rows.lines().count(), 2, "two tasks: {rows}");

    let stray = run_gymscope(&[
        "query",
        &s(&case.join("rollouts.jsonl")),
        "--count",
        "reward > 0",
        "--rewards",
        "x.jsonl",
    ]);
    assert_eq!(stray.status.code(), Some(2), "{}", output_text(&stray));
}

fn write_json(p: &Path, v: &Value) {
    fs::create_dir_all(p.parent().unwrap()).unwrap();
    fs::write(p, serde_json::to_vec_pretty(v).unwrap()).unwrap();
}

#[test]
fn harbor_job_folders_read_their_trials_rewards() {
    let tmp = tempfile::tempdir().unwrap();
    let job = common::harbor_job::write(tmp.path());
    let j = s(&job);
    assert_eq!(count(&["query", &j, "--count", "reward >= 1"]), "2");
    assert_eq!(count(&["query", &j, "--count", "text ~ /file.txt/"]), "3");
    assert_eq!(count(&["query", &j, "--count", "tool_calls == 1"]), "3");
    let out = run_gymscope(&["health", &j]);
    assert!(
        out.status.success() || out.status.code() == Some(1),
        "{}",
        output_text(&out)
    );
    assert_contains(&output_text(&out), "Harbor job, 3 trials");
}

#[test]
fn single_files_multimodal_subagents_and_zero_call_steps_are_read() {
    let tmp = tempfile::tempdir().unwrap();
    let f = tmp.path().join("one.json");
    write_json(
        &f,
        &trajectory(json!([
            {"step_id": 1, "source": "user", "message": [{"type": "text", "text": "what is in"},
                {"type": "image", "source": {"media_type": "image/png", "path": "img.png"}}]},
            {"step_id": 2, "source": "agent", "message": "", "llm_call_count": 0,
             "tool_calls": [{"tool_call_id": "t", "function_name": "delegate", "arguments": {}}],
             "observation": {"results": [{"source_call_id": "t", "subagent_trajectory_ref": [{"trajectory_path": "sub.json"}]}]}},
            {"step_id": 3, "source": "agent", "message": "a cat"}
        ])),
    );
    assert_eq!(count(&["query", &s(&f), "--count", "text ~ /cat/"]), "1");
    let v = run_gymscope(&["validate-atif", &s(&f), "--no-validate-images"]);
    assert!(v.status.success(), "{}", output_text(&v));
    let v = run_gymscope(&["validate-atif", &s(&f)]);
    assert_eq!(v.status.code(), Some(1));
    assert_contains(
        &output_text(&v),
        "referenced image file does not exist: img.png",
    );
}

fn refused(path: &Path, want: &str) {
    let out = run_gymscope(&["query", &s(path), "--count", "reward > 0"]);
    assert_eq!(out.status.code(), Some(1), "{want}: {}", output_text(&out));
    assert!(
        output_text(&out).contains(want),
        "want {want:?} in: {}",
        output_text(&out)
    );
}

#[test]
fn hostile_atif_ends_in_a_named_error_and_nothing_outside_is_read() {
    let case = repo_root().join("tests/fixtures/atif-v07/tool_then_answer/expected/out");
    let tmp = tempfile::tempdir().unwrap();
    let copy = |name: &str| -> PathBuf {
        let d = tmp.path().join(name);
        fs::create_dir(&d).unwrap();
        for e in fs::read_dir(&case).unwrap() {
            let p = e.unwrap().path();
            fs::copy(&p, d.join(p.file_name().unwrap())).unwrap();
        }
        d
    };
    // A file changed after the export.
    let changed = copy("changed");
    let mut text = fs::read_to_string(changed.join("0-0.json")).unwrap();
    text = text.replace("It is cold", "It is warm");
    fs::write(changed.join("0-0.json"), text).unwrap();
    refused(&changed, "not the manifest's expected_sha256");
    // Manifest paths that leave the folder, directly or through a link.
    let secret = tmp.path().join("secret.json");
    fs::write(&secret, "{}").unwrap();
    for (name, path) in [
        ("climb", "../secret.json"),
        ("absolute", secret.to_str().unwrap()),
    ] {
        let d = copy(name);
        let m = fs::read_to_string(d.join("manifest.jsonl"))
            .unwrap()
            .replacen("0-0.json", path, 1);
        fs::write(d.join("manifest.jsonl"), m).unwrap();
        refused(&d, "leaves the folder");
    }
    let linked = copy("linked");
    fs::remove_file(linked.join("0-0.json")).unwrap();
    std::os::unix::fs::symlink(&secret, linked.join("0-0.json")).unwrap();
    refused(&linked, "resolves outside the folder");
    // Wrong types, deep nesting, an oversized file, not JSON.
    let plain = tmp.path().join("plain");
    fs::create_dir(&plain).unwrap();
    write_json(
        &plain.join("a.json"),
        &json!({"schema_version": "ATIF-v1.7", "agent": {"name": 5},
        "steps": [{"step_id": 1, "source": "user", "message": "hi"}]}),
    );
    refused(&plain, "agent.name: expected a string");
    let deep = tmp.path().join("deep.json");
    let mut nested = json!("x");
    for _ in 0..100 {
        nested = json!([nested]);
    }
    write_json(
        &deep,
        &trajectory(json!([{"step_id": 1, "source": "user", "message": "hi",
        "extra": {"n": nested}}])),
    );
    refused(&deep, "nested deeper than 64 levels");
    let big = tmp.path().join("big");
    fs::create_dir(&big).unwrap();
    // An ATIF start, then 65 MiB.
    fs::write(
        big.join("huge.json"),
        b"{\"schema_version\": \"ATIF-v1.7\", \"notes\": \"",
    )
    .unwrap();
    let f = fs::OpenOptions::new()
        .write(true)
        .open(big.join("huge.json"))
        .unwrap();
    f.set_len(65 << 20).unwrap();
    refused(&big, "over the 64 MiB limit");
    let bad = tmp.path().join("bad.json");
    fs::write(&bad, "{\"schema_version\": \"ATIF-v1.7\", \"steps\": [").unwrap();
    refused(&bad, "not JSON");
    let v = run_gymscope(&["validate-atif", &s(&bad), &s(&deep)]);
    assert_eq!(v.status.code(), Some(1), "{}", output_text(&v));
    assert_contains(&output_text(&v), "invalid JSON");
    // Nothing is left in the temporary folder's place.
    let leftovers: Vec<_> = fs::read_dir(std::env::temp_dir())
        .unwrap()
        .filter_map(Result::ok)
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .starts_with(&format!("gymscope-atif-{}", std::process::id()))
        })
        .collect();
    assert!(leftovers.is_empty());
}

#[test]
fn an_exported_folder_gets_the_health_flags_of_the_rollouts_it_came_from() {
    // The ATIF run knows its inputs (coverage); the bare rollouts file does not: those aside. So is
    // the summary of `ng_trajectory` evidence, which ATIF does not carry (docs/atif.md).
    fn strip(v: &mut Value) {
        match v {
            Value::Object(m) => {
                for k in [
                    "rollouts_file",
                    "expected",
                    "missing",
                    "partial",
                    "coverage",
                    "trajectory",
                ] {
                    m.remove(k);
                }
                m.values_mut().for_each(strip);
            }
            Value::Array(a) => a.iter_mut().for_each(strip),
            _ => {}
        }
    }
    // Not `stamp_only`: ATIF's `agent.name` holds the environment server's stamp there, which
    // the row read back carries as its agent (the Gym row has none).
    for case in exported_cases()
        .into_iter()
        .filter(|c| !c.ends_with("stamp_only"))
    {
        let rollouts = s(&case.join("rollouts.jsonl"));
        let health = |args: &[&str]| -> Value {
            let out = run_gymscope(args);
            let mut v: Value = serde_json::from_slice(&out.stdout)
                .unwrap_or_else(|e| panic!("{args:?}: {e}: {}", output_text(&out)));
            strip(&mut v);
            v
        };
        let want = health(&["health", &rollouts, "--format", "json"]);
        let got = health(&[
            "health",
            &s(&case.join("expected/out")),
            "--rewards",
            &rollouts,
            "--format",
            "json",
        ]);
        assert_eq!(got, want, "{}", case.display());
    }
}
