//! `gymscope export --format atif` against what NeMo Gym v0.7.0's `gym eval export` wrote for
//! the same rollouts (`tests/fixtures/atif-v07/`, recorded by `scripts/parity-v07/atif_cases.py`):
//! the output folder byte for byte (every trajectory file and the manifest), the exit status,
//! and for a refused file the same reasons on the same lines. Upstream prints its error through
//! a console that wraps at 80 columns and gymscope adds its own detail after a reason
//! (`(gymscope: ...)`), so reasons are compared with whitespace folded and that detail cut.

use crate::common;
use crate::common::assert_contains;

use common::*;
use std::fs;
use std::path::Path;

/// The reasons as words: the gymscope detail cut from each line, whitespace folded.
fn reasons(text: &str) -> String {
    let cut: Vec<&str> = text
        .lines()
        .map(|l| l.split(" (gymscope:").next().unwrap_or(l))
        .collect();
    cut.join(" ")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

fn files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut all: Vec<_> = fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let p = e.unwrap().path();
            (
                p.file_name().unwrap().to_string_lossy().to_string(),
                fs::read(&p).unwrap(),
            )
        })
        .collect();
    all.sort();
    all
}

#[test]
fn every_recorded_export_gives_v07s_files_or_reasons() {
    let root = std::env::var_os("GYMSCOPE_ATIF_V07")
        .map_or_else(|| repo_root().join("tests/fixtures/atif-v07"), Into::into);
    let cases = crate::common::fixture_files::case_dirs(&root, "rollouts.jsonl");
    let (mut ok, mut refused) = (0, 0);
    let mut failures = Vec::new();
    for case in &cases {
        let name = case.file_name().unwrap().to_string_lossy().to_string();
        let tmp = tempfile::tempdir().unwrap();
        let rollouts = tmp.path().join("rollouts.jsonl");
        fs::copy(case.join("rollouts.jsonl"), &rollouts).unwrap();
        let out_dir = tmp.path().join("out");
        let extra: Vec<String> = read_text(&case.join("args"))
            .lines()
            .map(str::to_string)
            .collect();
        let mut args = vec!["export", "--format", "atif", "--rollouts"];
        let (r, o) = (
            rollouts.display().to_string(),
            out_dir.display().to_string(),
        );
        args.extend([r.as_str(), "--output-dir", o.as_str()]);
        args.extend(extra.iter().map(String::as_str));
        let out = run_gymscope(&args);
        let expected = case.join("expected");
        let want_code = expected_exit_code(&expected);
        let mut problems = Vec::new();
        if out.status.code() != Some(want_code) {
            problems.push(format!(
                "exit {:?}, want {want_code}: {}",
                out.status.code(),
                output_text(&out)
            ));
        }
        let at = tmp.path().display().to_string();
        if want_code == 0 {
            ok += 1;
            let stdout = String::from_utf8_lossy(&out.stdout).replace(&at, "<dir>");
            if stdout != read_text(&expected.join("stdout")) {
                problems.push(format!("stdout:\n{stdout}"));
            }
            if out_dir.is_dir() && files(&out_dir) != files(&expected.join("out")) {
                problems.push("the output folder differs from upstream's".into());
            }
        } else if want_code == 2 {
            // A usage error, on stderr in both: argparse's `prog: error: <reason>`.
            let stderr = read_text(&expected.join("stderr"));
            let want = stderr.lines().last().unwrap_or("");
            let want = want.rsplit(": error: ").next().unwrap_or(want);
            let got = String::from_utf8_lossy(&out.stderr);
            if !got.contains(want) {
                problems.push(format!("stderr lacks {want:?}: {got}"));
            }
            if out_dir.exists() {
                problems.push("a refused export left its output folder".into());
            }
        } else {
            refused += 1;
            let want = reasons(&read_text(&expected.join("stdout")));
            let got = reasons(&String::from_utf8_lossy(&out.stderr).replace(&at, "<dir>"));
            if got != want {
                problems.push(format!("reasons:\n got: {got}\nwant: {want}"));
            }
            if out_dir.exists() {
                problems.push("a refused export left its output folder".into());
            }
        }
        let left: Vec<_> = fs::read_dir(tmp.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
            .filter(|n| n != "rollouts.jsonl" && n != "out")
            .collect();
        if !left.is_empty() {
            problems.push(format!("left behind: {left:?}"));
        }
        if !problems.is_empty() {
            failures.push(format!("{name}: {}", problems.join("\n")));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    assert!(
        ok >= 20 && refused >= 25,
        "{ok} exported and {refused} refused cases: fixtures missing?"
    );
}

#[test]
fn an_existing_output_folder_is_refused_and_left_as_it_was() {
    let case = repo_root().join("tests/fixtures/atif-v07/tool_then_answer");
    let tmp = tempfile::tempdir().unwrap();
    let out_dir = tmp.path().join("out");
    fs::create_dir(&out_dir).unwrap();
    fs::write(out_dir.join("keep.txt"), "mine").unwrap();
    let r = case.join("rollouts.jsonl").display().to_string();
    let o = out_dir.display().to_string();
    let out = run_gymscope(&[
        "export",
        "--format",
        "atif",
        "--rollouts",
        &r,
        "--output-dir",
        &o,
        "--agent-version",
        "v1",
        "--session-id",
        "s",
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", output_text(&out));
    assert_contains(&output_text(&out), "Output path already exists");
    assert_eq!(
        fs::read_to_string(out_dir.join("keep.txt")).unwrap(),
        "mine"
    );
    assert_eq!(fs::read_dir(&out_dir).unwrap().count(), 1);
    assert_eq!(
        fs::read_dir(tmp.path()).unwrap().count(),
        1,
        "a staging folder was left"
    );
}

#[test]
fn the_output_folders_parent_is_created_and_both_identities_are_required() {
    let case = repo_root().join("tests/fixtures/atif-v07/tool_then_answer");
    let tmp = tempfile::tempdir().unwrap();
    let rollouts = tmp.path().join("my_eval.jsonl");
    fs::copy(case.join("rollouts.jsonl"), &rollouts).unwrap();
    let out_dir = tmp.path().join("a/b/out");
    let (r, o) = (
        rollouts.display().to_string(),
        out_dir.display().to_string(),
    );
    // v0.7.0 requires both (exit 2, in its words), and names each blank one.
    let missing = run_gymscope(&["export", "--rollouts", &r, "--output-dir", &o]);
    assert_eq!(missing.status.code(), Some(2), "{}", output_text(&missing));
    assert!(output_text(&missing).contains(
        "missing required configuration: session_id, agent_version. Provide each via its flag (see --help) or as a +session_id=<value> override."
    ));
    let one = run_gymscope(&[
        "export",
        "--rollouts",
        &r,
        "--output-dir",
        &o,
        "--session-id",
        "s",
    ]);
    assert!(output_text(&one).contains("missing required configuration: agent_version."));
    assert!(!out_dir.exists() && !tmp.path().join("a").exists());
    let out = run_gymscope(&[
        "export",
        "--rollouts",
        &r,
        "--output-dir",
        &o,
        "--agent-version",
        "v1",
        "--session-id",
        "my_eval",
    ]);
    assert!(out.status.success(), "{}", output_text(&out));
    let first: serde_json::Value =
        serde_json::from_slice(&fs::read(out_dir.join("0-0.json")).unwrap()).unwrap();
    assert_eq!(first["session_id"], "my_eval");
    assert_eq!(first["trajectory_id"], "my_eval:0:0");
    assert_eq!(first["agent"]["version"], "v1");
    let blank = run_gymscope(&[
        "export",
        "--rollouts",
        &r,
        "--output-dir",
        &format!("{o}2"),
        "--session-id",
        " ",
        "--agent-version",
        "v1",
    ]);
    assert_eq!(blank.status.code(), Some(2), "{}", output_text(&blank));
    assert_contains(
        &output_text(&blank),
        "invalid configuration: session_id (Value error, must contain a non-whitespace character).",
    );
}

/// A refused file leaves the disk as it was: no staging folder and none of the output's missing
/// parent folders (made for an export that did not happen).
#[test]
fn a_refused_export_leaves_no_folder_it_made() {
    let case = repo_root().join("tests/fixtures/atif-v07/bad_lines");
    let tmp = tempfile::tempdir().unwrap();
    fs::create_dir(tmp.path().join("a")).unwrap();
    let r = case.join("rollouts.jsonl").display().to_string();
    let o = tmp.path().join("a/b/c/out").display().to_string();
    let out = run_gymscope(&[
        "export",
        "--rollouts",
        &r,
        "--output-dir",
        &o,
        "--agent-version",
        "v1",
        "--session-id",
        "s",
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", output_text(&out));
    assert!(output_text(&out).contains("rejected 8 row(s)"));
    let left: Vec<_> = fs::read_dir(tmp.path().join("a")).unwrap().collect();
    assert!(left.is_empty(), "left {left:?}");
}

/// Ctrl-C, SIGTERM or a closed terminal (SIGHUP) during a long export: the command stops between
/// rows, removes its staging folder and the folders it made, and exits as a shell expects.
#[test]
fn a_signal_during_an_export_leaves_nothing() {
    use std::os::unix::process::ExitStatusExt;
    use std::process::{Command, Stdio};
    let case = repo_root().join("tests/fixtures/atif-v07/tool_then_answer");
    let line = read_text(&case.join("rollouts.jsonl"))
        .lines()
        .next()
        .unwrap()
        .to_string();
    let tmp = tempfile::tempdir().unwrap();
    let rollouts = tmp.path().join("big.jsonl");
    let mut text = String::new();
    for t in 0..40_000 {
        let row = line.replace("\"_ng_task_index\": 0", &format!("\"_ng_task_index\": {t}"));
        assert!(t == 0 || row != line, "the task index was not replaced");
        text.push_str(&row);
        text.push('\n');
    }
    fs::write(&rollouts, text).unwrap();
    for sig in [libc::SIGHUP, libc::SIGINT] {
        let made = tmp.path().join(format!("made{sig}"));
        let out_dir = made.join("out");
        let mut child = Command::new(gymscope_bin())
            .args([
                "export",
                "--agent-version",
                "v1",
                "--session-id",
                "s",
                "--rollouts",
            ])
            .arg(&rollouts)
            .arg("--output-dir")
            .arg(&out_dir)
            .args(["--agent-version", "1"])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let signalled = crate::common::signal_when(&mut child, sig, || {
            fs::read_dir(&made)
                .into_iter()
                .flatten()
                .flatten()
                .any(|e| fs::read_dir(e.path()).is_ok_and(|mut d| d.next().is_some()))
        });
        let out = child.wait_with_output().unwrap();
        assert!(
            signalled,
            "signal {sig}: the export was not caught in progress"
        );
        assert_eq!(out.status.signal(), None, "signal {sig}: ended by it");
        assert_eq!(out.status.code(), Some(128 + sig), "{}", output_text(&out));
        assert!(output_text(&out).contains("Interrupted"));
        assert!(!made.exists(), "signal {sig}: left {made:?}");
    }
}
