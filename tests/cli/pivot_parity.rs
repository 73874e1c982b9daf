//! `gymscope validate-pivot` against upstream's own verdicts: for every generated case
//! (tests/fixtures/pivot/cases, made by scripts/pivot-parity) the same exit code, the same check
//! and line as upstream's first error (its exact message, except the wording of JSON syntax
//! errors, which is Python's), and on success upstream's summary byte for byte. `--fail-fast` gives
//! upstream's single line exactly.

use crate::common;
use crate::common::assert_contains;
use crate::common::assert_success;
use crate::common::write_in;

use serde_json::Value;
use std::path::Path;
use std::process::Command;

fn run(dir: &Path, case: &str, extra: &[&str]) -> std::process::Output {
    let args: Vec<String> = std::fs::read_to_string(dir.join(format!("{case}.args")))
        .unwrap_or_default()
        .lines()
        .filter(|l| !l.is_empty())
        .map(String::from)
        .collect();
    Command::new(env!("CARGO_BIN_EXE_gymscope"))
        .current_dir(dir)
        .args(["validate-pivot", "--path", &format!("{case}.jsonl")])
        .args(&args)
        .args(extra)
        .output()
        .unwrap()
}

fn cases(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| {
            e.unwrap()
                .file_name()
                .to_str()?
                .strip_suffix(".expected.json")
                .map(String::from)
        })
        .collect();
    names.sort();
    names
}

fn check_case(dir: &Path, case: &str) {
    let want: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.join(format!("{case}.expected.json"))).unwrap(),
    )
    .unwrap();
    let want_exit = want["exit"].as_i64().unwrap() as i32;
    for fail_fast in [false, true] {
        let out = run(dir, case, if fail_fast { &["--fail-fast"] } else { &[] });
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(
            out.status.code(),
            Some(want_exit),
            "{case} (fail-fast {fail_fast}): {stderr}"
        );
        match want_exit {
            0 => assert_eq!(stdout, want["stdout"].as_str().unwrap(), "{case}: summary"),
            1 => {
                assert_eq!(stdout, "", "{case}: stdout must stay empty on failure");
                let first = stderr.lines().next().unwrap_or_default();
                let want_first = want["stderr_first_line"].as_str().unwrap();
                // Python's JSON error wording is not reproduced (ours names the column too): for
                // J and X6 the message must agree up to that wording.
                if let Some(at) = want_first
                    .find("invalid JSON: ")
                    .or_else(|| want_first.find("is not valid JSON: "))
                {
                    let prefix = &want_first[..at];
                    assert!(
                        first.starts_with(prefix),
                        "{case}: {first:?} vs upstream {want_first:?}"
                    );
                } else {
                    assert_eq!(first, want_first, "{case}");
                }
                if fail_fast {
                    assert_eq!(
                        stderr.lines().count(),
                        1,
                        "{case}: fail-fast prints upstream's line only: {stderr}"
                    );
                }
            }
            _ => {}
        }
    }
}

#[test]
fn generated_cases_match_upstream_verdicts() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/pivot/cases");
    let names = cases(&dir);
    assert!(names.len() >= 150, "only {} cases", names.len());
    for case in &names {
        check_case(&dir, case);
    }
}

#[test]
fn upstream_example_datasets_match_upstream_verdicts() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/pivot/upstream");
    let names = cases(&dir);
    assert_eq!(names.len(), 3);
    for case in &names {
        check_case(&dir, case);
    }
}

#[test]
fn fix_turns_upstream_examples_into_valid_pivot_files() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/pivot/upstream");
    let tmp = tempfile::tempdir().unwrap();
    let fixed = tmp.path().join("example.fixed.jsonl");
    let agent = "single_step_tool_use_with_argument_comparison_agent";
    let out = Command::new(env!("CARGO_BIN_EXE_gymscope"))
        .args(["validate-pivot", "--path"])
        .arg(dir.join("example.jsonl"))
        .args(["--agent-ref", agent, "--fix"])
        .arg(&fixed)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "the original is invalid");
    assert_contains(&String::from_utf8_lossy(&out.stderr), "5 rows written");
    let out = Command::new(env!("CARGO_BIN_EXE_gymscope"))
        .args(["validate-pivot", "--agent-ref", agent, "--path"])
        .arg(&fixed)
        .output()
        .unwrap();
    assert_success(&out);
    // Upstream's validator printed exactly this for the same normalized rows (case v20).
    let want = "rows: 5\nagent_ref:\n  single_step_tool_use_with_argument_comparison_agent: 5\nexpected_tool:\n  authenticate_user: 1\n  check_seat_availability: 1\n  transfer_to_human_agents: 1\nexpected_action_split:\n  function_call: 3 (60.00%)\n  message: 2 (40.00%)\navg_input_items: 11.00\navg_tools: 14.00\n";
    assert_eq!(String::from_utf8_lossy(&out.stdout), want);

    // The parallel example needs --allow-batch as well; swe_pivot rows lack `tools`: unfixable.
    let out = Command::new(env!("CARGO_BIN_EXE_gymscope"))
        .args(["validate-pivot", "--path"])
        .arg(dir.join("swe_pivot_example.jsonl"))
        .args(["--agent-ref", "a", "--fix"])
        .arg(tmp.path().join("swe.fixed.jsonl"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("could not be fixed")
            && stderr.contains("responses_create_params.tools must be a list"),
        "{stderr}"
    );
}

/// Inputs where Python's `json` or argparse differ from strict JSON and clap
/// (tests/fixtures/pivot/quirks): gymscope's verdict is upstream's, except in the cases listed
/// here, which it rejects on purpose with a clear error (docs/pivots.md: "Where validate-pivot differs").
#[test]
fn quirks_differ_from_upstream_only_where_documented() {
    const REJECTED_ON_PURPOSE: [&str; 9] = [
        "q01_nan_in_provenance",         // NaN is not JSON
        "q02_infinity_in_rcp",           // Infinity is not JSON
        "q03_nan_arguments",             // arguments "NaN" is not JSON either
        "q07_lone_surrogate_provenance", // a lone surrogate is not Unicode text
        "q08b_surrogateescape_agent_name",
        "q18_bigint_4300_digits", // integers beyond 64 bits
        "q19_float_overflow",     // 1e400
        "q37_lone_surrogate_arguments",
        "q38_nan_in_arguments_object",
    ];
    const OUR_EXTENSION: &str = "q34_cli_unknown_flag"; // --max-errors is a gymscope flag
                                                        // Python 3.11 raises RecursionError at 5,000 levels; 3.13 reads it, and so does gymscope
                                                        // (up to 10,000 levels).
    const ACCEPTED_ON_PURPOSE: &str = "q10_nesting_5000";
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/pivot/quirks");
    let names = cases(&dir);
    assert!(names.len() >= 40);
    for case in &names {
        let want: Value = serde_json::from_str(
            &std::fs::read_to_string(dir.join(format!("{case}.expected.json"))).unwrap(),
        )
        .unwrap();
        let out = run(&dir, case, &[]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!stderr.contains("panicked"), "{case}: {stderr}");
        if REJECTED_ON_PURPOSE.contains(&case.as_str()) {
            assert_eq!(out.status.code(), Some(1), "{case}");
            assert!(
                stderr.starts_with("validation failed: line 3: "),
                "{case}: {stderr}"
            );
        } else if case == ACCEPTED_ON_PURPOSE {
            assert_eq!(out.status.code(), Some(0), "{case}: {stderr}");
        } else if case != OUR_EXTENSION {
            assert_eq!(
                out.status.code(),
                want["exit"].as_i64().map(|c| c as i32),
                "{case}: {stderr}"
            );
            if let Some(line) = want["line"].as_u64() {
                assert!(
                    stderr.starts_with(&format!("validation failed: line {line}: ")),
                    "{case}: {stderr}"
                );
            }
        }
    }
}

/// `--stats`: rejected rows by reason, action types, tools, depth, reward groups, provenance.
#[test]
fn stats_report_conversion_metrics() {
    let tmp = tempfile::tempdir().unwrap();
    let row = |depth: i64, action: &str, rewards: &str| {
        format!(
            r#"{{"responses_create_params":{{"input":[{{"role":"user","content":"q"}}],"tools":[{{"type":"function","name":"lookup"}}]}},"expected_action":{action},"agent_ref":{{"type":"responses_api_agents","name":"a"}},"uuid":"u{depth}","meta_info":{{"depth":{depth}}},"source_model_info":{{"rewards":{rewards}}}}}"#
        )
    };
    let call = r#"{"type":"function_call","name":"lookup","arguments":"{}"}"#;
    let message = r#"{"type":"message","content":"done"}"#;
    let lines = [
        row(1, call, "[0, 1]"),
        row(2, call, "[1, 1]"),
        row(2, message, "[0, 0]"),
        row(
            3,
            r#"{"type":"function_call","name":"missing_tool","arguments":"{}"}"#,
            "[0, 1]",
        ),
    ];
    let path = write_in(tmp.path(), "p.jsonl", lines.join("\n") + "\n");
    let out = common::run_gymscope(&[
        "validate-pivot",
        "--path",
        path.to_str().unwrap(),
        "--stats",
    ]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    for want in [
        "T1 expected tools appear in responses_create_params.tools: 1 / 4 (25.00%)",
        "function_call: 2 / 3 (66.67%)",
        "message: 1 / 3 (33.33%)",
        "lookup: 2 / 3 (66.67%)",
        "meta_info.depth:",
        "  2: 2 / 4 (50.00%)",
        "mixed: 2 / 4 (50.00%)",
        "all-1: 1 / 4 (25.00%)",
        "all-0: 1 / 4 (25.00%)",
        "uuid: 4 / 4 (100.00%)",
    ] {
        assert!(stderr.contains(want), "missing {want:?} in:\n{stderr}");
    }
}

/// Nesting as deep as Python 3.13 reads (10,000 levels) is accepted without risking the stack;
/// deeper is refused on its line, with the column.
#[test]
fn deep_nesting_to_ten_thousand_levels() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/pivot/quirks");
    let base = std::fs::read_to_string(dir.join("q09_nesting_300.jsonl")).unwrap();
    let args = std::fs::read_to_string(dir.join("q09_nesting_300.args")).unwrap_or_default();
    let tmp = tempfile::tempdir().unwrap();
    // The 300-level array sits inside the row's own objects: 10,000 levels in all.
    let outer = gymscope::pivot::depth::measure(base.lines().nth(2).unwrap().as_bytes()).0 - 300;
    for (levels, ok) in [(10_000 - outer, true), (10_001 - outer, false)] {
        let deep = format!("{}{}", "[".repeat(levels), "]".repeat(levels));
        let text = base.replacen(&format!("{}{}", "[".repeat(300), "]".repeat(300)), &deep, 1);
        assert_ne!(text, base, "the 300-level array is in the fixture");
        let path = tmp.path().join(format!("deep{levels}.jsonl"));
        std::fs::write(&path, text).unwrap();
        let out = Command::new(env!("CARGO_BIN_EXE_gymscope"))
            .arg("validate-pivot")
            .arg("--path")
            .arg(&path)
            .args(args.split_whitespace())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        if ok {
            assert_eq!(out.status.code(), Some(0), "{levels}: {stderr}");
        } else {
            assert_eq!(out.status.code(), Some(1), "{levels}: {stderr}");
            assert!(
                stderr.starts_with(
                    "validation failed: line 3: invalid JSON: nesting deeper than 10000 levels"
                ),
                "{stderr}"
            );
            assert!(stderr.contains(":3:"), "line and column: {stderr}");
        }
    }
}
