//! `validate-pivot --gym-repo DIR` (issue 10): upstream's import failure when DIR is not a Gym
//! checkout; otherwise Gym's Pydantic rules for `responses_create_params`, checked by gymscope.

use crate::common::assert_contains;
use crate::common::write_in;
use std::path::Path;
use std::process::{Command, Output};

fn validate(path: &Path, gym_repo: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_gymscope"))
        .args(["validate-pivot", "--path"])
        .arg(path)
        .arg("--gym-repo")
        .arg(gym_repo)
        .output()
        .unwrap()
}

fn fixture(rel: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/pivot")
        .join(rel)
}

#[test]
fn not_a_gym_checkout_fails_as_upstream_does() {
    let dir = tempfile::tempdir().unwrap();
    let out = validate(&fixture("cases/v01_mixed_summary.jsonl"), dir.path());
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        format!(
            "validation failed: failed to import Gym validators from {}: No module named 'nemo_gym'\n",
            dir.path().display()
        )
    );
}

#[test]
fn with_a_checkout_rows_are_checked_against_gyms_model() {
    let gym = tempfile::tempdir().unwrap();
    std::fs::create_dir(gym.path().join("nemo_gym")).unwrap();
    std::fs::write(gym.path().join("nemo_gym/openai_utils.py"), b"# stand-in\n").unwrap();

    // A valid row in the Responses form stays valid, with the same summary.
    let first = std::fs::read_to_string(fixture("cases/v01_mixed_summary.jsonl")).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let good = write_in(
        dir.path(),
        "good.jsonl",
        format!("{}\n", first.lines().next().unwrap()),
    );
    let out = validate(&good, gym.path());
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let plain = Command::new(env!("CARGO_BIN_EXE_gymscope"))
        .args(["validate-pivot", "--path"])
        .arg(&good)
        .output()
        .unwrap();
    assert_eq!(out.stdout, plain.stdout);

    // Rows that pass the structural checks but not Gym's model (v01's line 2 has chat-completions
    // tools, which Gym's model refuses too).
    let row: serde_json::Value = serde_json::from_str(first.lines().next().unwrap()).unwrap();
    let bad = dir.path().join("bad.jsonl");
    let mut lines = Vec::new();
    for (key, value) in [
        ("frobnicate", serde_json::json!(1)),
        ("stream", serde_json::json!(true)),
        ("metadata", serde_json::json!({"k": 1})),
        (
            "tools",
            serde_json::json!([{"type": "function", "function": {"name": "Search"}}]),
        ),
    ] {
        let mut r = row.clone();
        r["responses_create_params"][key] = value;
        lines.push(r.to_string());
    }
    std::fs::write(&bad, lines.join("\n") + "\n").unwrap();
    let out = validate(&bad, gym.path());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.starts_with("validation failed: line 1: Gym model validation failed: 1 validation error for NeMoGymResponseCreateParamsNonStreaming: frobnicate: Extra inputs are not permitted"),
        "{stderr}"
    );
    for want in [
        "stream: Input should be False",
        "metadata.k: Input should be a valid string",
        "tools[0].name: Field required",
    ] {
        assert!(stderr.contains(want), "{want}: {stderr}");
    }
    assert_contains(
        &stderr,
        "[G] responses_create_params passes Gym's model (--gym-repo): 4",
    );
}
