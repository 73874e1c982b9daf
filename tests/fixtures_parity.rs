//! `gymscope profile` on every real NeMo Gym example against what upstream wrote for it.

mod common;

use common::*;
use std::fs;

#[test]
fn every_fixture_matches_upstream_outputs_and_summary() {
    let mut checked = 0;
    for entry in fs::read_dir(fixtures_dir()).unwrap() {
        let dir = entry.unwrap().path();
        let expected = dir.join("expected");
        if expected.join("error.txt").exists() {
            continue; // upstream crashed on it: see `polymath_without_index_keys_names_file_and_line`
        }
        let name = dir.file_name().unwrap().to_string_lossy().to_string();
        let rollouts_name = fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
            .find(|n| n.ends_with("rollouts.jsonl"))
            .unwrap();
        let stem = rollouts_name.trim_end_matches(".jsonl");
        let tmp = tempfile::tempdir().unwrap();
        let inputs = tmp.path().join(format!("{stem}_materialized_inputs.jsonl"));
        let rollouts = tmp.path().join(&rollouts_name);
        fs::copy(dir.join(format!("{stem}_materialized_inputs.jsonl")), &inputs).unwrap();
        fs::copy(dir.join(&rollouts_name), &rollouts).unwrap();

        let out = run_gymscope(&["profile", "--inputs", inputs.to_str().unwrap(), "--rollouts", rollouts.to_str().unwrap()]);
        assert!(out.status.success(), "{name}: {}", String::from_utf8_lossy(&out.stderr));
        let stdout = String::from_utf8(out.stdout).unwrap().replace(tmp.path().to_str().unwrap(), "<dir>");
        assert_eq!(stdout, fs::read_to_string(expected.join("stdout.txt")).unwrap(), "{name}: summary");

        let got = fs::read_to_string(tmp.path().join(format!("{stem}_reward_profiling.jsonl"))).unwrap();
        let want = fs::read_to_string(expected.join(format!("{stem}_reward_profiling.jsonl"))).unwrap();
        assert_profiles_eq(&got, &want, &name);
        // We follow upstream's key order and float formatting too, so the bytes agree.
        assert_eq!(got, want, "{name}: reward profiling bytes");

        let got = fs::read_to_string(tmp.path().join(format!("{stem}_agent_metrics.json"))).unwrap();
        let want = fs::read_to_string(expected.join(format!("{stem}_agent_metrics.json"))).unwrap();
        assert_json_eq(&serde_json::from_str(&got).unwrap(), &serde_json::from_str(&want).unwrap(), &name);
        assert_eq!(got, want, "{name}: agent metrics bytes");
        checked += 1;
    }
    assert_eq!(checked, 16, "every fixture with expected outputs was checked");
}

#[test]
fn polymath_without_index_keys_names_file_and_line() {
    let dir = fixtures_dir().join("polymath");
    let out = run_gymscope(&[
        "profile",
        "--inputs",
        dir.join("example_rollouts_materialized_inputs.jsonl").to_str().unwrap(),
        "--rollouts",
        dir.join("example_rollouts.jsonl").to_str().unwrap(),
        "--out-dir",
        tempfile::tempdir().unwrap().path().to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(stderr.contains("polymath/example_rollouts.jsonl' line 1: field `_ng_task_index` is missing"), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}
