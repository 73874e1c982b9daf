//! `build-pivot` on upstream's example files with hand-checked rows worked out from upstream's
//! converters, every skip reason, determinism, the self-check, and
//! every written row through the real validator.
#![allow(clippy::unwrap_used)] // a test stops at what must hold

use gymscope_testkit as common;

mod cli;
mod formats;
mod parallel;
mod pivot_loop;
mod select;
mod skips;

use gymscope::pivot::{validate_bytes, PivotOptions};
use gymscope::pivot_build::{build_bytes, BuildOptions, Built};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Output;

pub const AGENT: &str = "session_state_pivot_single_step_tool_use_with_argument_comparison_agent";

pub fn upstream(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/pivot-build/upstream")
        .join(name)
}

/// `gymscope build-pivot --input SRC --output OUT --agent-ref AGENT`, then `extra`.
pub fn build_pivot(src: &Path, out: &Path, agent: &str, extra: &[&str]) -> Output {
    let mut args = vec!["build-pivot", "--input", src.to_str().unwrap()];
    args.extend(["--output", out.to_str().unwrap(), "--agent-ref", agent]);
    common::run_gymscope(&[&args[..], extra].concat())
}

/// `gymscope select-pivot --pivots PIVOTS --profile PROFILE --output OUT`, then `extra`.
pub fn select_pivot(pivots: &Path, profile: &Path, out: &Path, extra: &[&str]) -> Output {
    let mut args = vec!["select-pivot", "--pivots", pivots.to_str().unwrap()];
    args.extend(["--profile", profile.to_str().unwrap()]);
    args.extend(["--output", out.to_str().unwrap()]);
    common::run_gymscope(&[&args[..], extra].concat())
}

/// `gymscope validate-pivot --path PATH`, then `extra`.
pub fn validate_pivot(path: &Path, extra: &[&str]) -> Output {
    let args = ["validate-pivot", "--path", path.to_str().unwrap()];
    common::run_gymscope(&[&args[..], extra].concat())
}

pub fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/pivot-build")
        .join(name)
}

/// A chat row: `expected_output.messages` with `input.tools` of upstream's
/// round-trip test file.
pub fn chat_round_trip() -> Vec<u8> {
    let doc: Value = serde_json::from_slice(
        &std::fs::read(upstream("vllm_model.round_trip_test_data.json")).unwrap(),
    )
    .unwrap();
    let row = serde_json::json!({"messages": doc["expected_output"]["messages"], "tools": doc["input"]["tools"]});
    let mut line = serde_json::to_vec(&row).unwrap();
    line.push(b'\n');
    line
}

pub fn build(data: &[u8], options: BuildOptions) -> Built {
    build_bytes("src.jsonl", data, options, 1 << 20).expect("build succeeds")
}

pub fn build_file(name: &str, options: BuildOptions) -> Built {
    build(&std::fs::read(upstream(name)).unwrap(), options)
}

pub fn lines(bytes: &[u8]) -> Vec<Value> {
    std::str::from_utf8(bytes)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("bad output line {l}: {e}")))
        .collect()
}

/// Every row passes the core validator with `--agent-ref` (and `--allow-batch` when asked), its
/// `responses_create_params` has only keys Gym's request model knows, and its `pivot_id` is the
/// hash of its own content.
pub fn assert_rows_valid(rows: &[u8], allow_batch: bool) {
    if rows.is_empty() {
        return; // nothing written (the CLI then writes no pivot file)
    }
    let options = PivotOptions {
        agent_ref: Some(AGENT.into()),
        allow_batch,
        ..PivotOptions::default()
    };
    let (report, _) = validate_bytes("pivots.jsonl", rows, options);
    assert!(report.is_valid(), "validator rejects: {:?}", report.first);
    const KNOWN: [&str; 7] = [
        "input",
        "tools",
        "parallel_tool_calls",
        "tool_choice",
        "instructions",
        "reasoning",
        "text",
    ];
    for row in lines(rows) {
        let params = row["responses_create_params"].as_object().unwrap();
        for k in params.keys() {
            assert!(
                KNOWN.contains(&k.as_str()),
                "unknown key {k} in responses_create_params"
            );
        }
        for v in params.values() {
            assert!(!v.is_null(), "null in responses_create_params");
        }
        let content = serde_json::json!({"expected_action": row["expected_action"], "responses_create_params": row["responses_create_params"]});
        let mut canon = Vec::new();
        gymscope::json::write_sorted(&content, &mut canon);
        let id = gymscope::pivot_build::turns::hex32(&canon);
        assert_eq!(
            row["pivot_info"]["pivot_id"],
            Value::String(id),
            "pivot_id is not the hash of the row's content"
        );
    }
}

pub fn options() -> BuildOptions {
    BuildOptions::new(AGENT)
}
