//! Where a user meets the tool first: missing output folders, outputs that are devices, and
//! outputs that are files a command reads beside its inputs.

use crate::common::assert_contains;
use crate::common::write_in;
use crate::common::{fixtures_dir, repo_root, run_gymscope};
use std::path::{Path, PathBuf};
use std::process::Output;

use crate::common::output_text as text;

fn run(args: &[&str]) -> Output {
    run_gymscope(args)
}

fn blackjack() -> (PathBuf, PathBuf) {
    let dir = fixtures_dir().join("blackjack");
    (
        dir.join("example_rollouts_materialized_inputs.jsonl"),
        dir.join("example_rollouts.jsonl"),
    )
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn every_command_creates_its_output_folder() {
    let dir = tempfile::tempdir().unwrap();
    let (inputs, rollouts) = blackjack();
    let report = dir.path().join("a/report.html");
    let r = run(&[
        "report",
        "--inputs",
        s(&inputs),
        "--rollouts",
        s(&rollouts),
        "-o",
        s(&report),
    ]);
    assert!(r.status.success() && report.is_file(), "{}", text(&r));

    let pivots_in = repo_root().join("tests/fixtures/pivot/upstream/example.jsonl");
    let fixed = dir.path().join("b/fixed.jsonl");
    let r = run(&[
        "validate-pivot",
        "--path",
        s(&pivots_in),
        "--fix",
        s(&fixed),
    ]);
    assert!(fixed.is_file(), "{}", text(&r));

    let source = repo_root()
        .join("tests/fixtures/pivot-build/upstream/example_multi_step.example_rollouts.jsonl");
    let pivots = dir.path().join("c/pivots.jsonl");
    let r = run(&[
        "build-pivot",
        "--input",
        s(&source),
        "--output",
        s(&pivots),
        "--agent-ref",
        "pivot_agent",
    ]);
    assert!(r.status.success() && pivots.is_file(), "{}", text(&r));
}

#[test]
fn a_device_output_is_written_in_place() {
    let (inputs, rollouts) = blackjack();
    let r = run(&[
        "report",
        "--inputs",
        s(&inputs),
        "--rollouts",
        s(&rollouts),
        "-o",
        "/dev/null",
    ]);
    assert!(r.status.success(), "{}", text(&r));
    assert!(!std::fs::metadata("/dev/null").unwrap().is_file());
    if Path::new("/dev/full").exists() {
        let r = run(&[
            "report",
            "--inputs",
            s(&inputs),
            "--rollouts",
            s(&rollouts),
            "-o",
            "/dev/full",
        ]);
        assert_eq!(r.status.code(), Some(1), "{}", text(&r));
        assert!(text(&r).contains("No space left on device"), "{}", text(&r));
    }
}

#[test]
fn report_never_writes_over_the_files_it_reads_beside_the_rollouts() {
    let dir = tempfile::tempdir().unwrap();
    let (inputs, rollouts) = blackjack();
    let run_rollouts = dir.path().join("r.jsonl");
    let run_inputs = dir.path().join("r_materialized_inputs.jsonl");
    std::fs::copy(&rollouts, &run_rollouts).unwrap();
    std::fs::copy(&inputs, &run_inputs).unwrap();
    for name in [
        "r_failures.jsonl",
        "quality_summary.json",
        "rollout_verdicts.jsonl",
    ] {
        let beside = dir.path().join(name);
        let before = if name.ends_with(".json") { "{}\n" } else { "" };
        std::fs::write(&beside, before).unwrap();
        let r = run(&[
            "report",
            "--inputs",
            s(&run_inputs),
            "--rollouts",
            s(&run_rollouts),
            "-o",
            s(&beside),
        ]);
        assert_eq!(r.status.code(), Some(2), "{name}: {}", text(&r));
        assert!(
            text(&r).contains("refusing to write"),
            "{name}: {}",
            text(&r)
        );
        assert_eq!(std::fs::read_to_string(&beside).unwrap(), before, "{name}");
        std::fs::remove_file(&beside).unwrap();
    }
}

/// Every command (but `collect`, which needs servers: `tests/collect`) with its arguments, in a
/// fresh folder of its own so each run writes new files.
fn every_command(dir: &Path) -> Vec<(&'static str, Vec<String>)> {
    let (inputs, rollouts) = blackjack();
    let run_dir = dir.join("run");
    std::fs::create_dir_all(&run_dir).unwrap();
    std::fs::copy(&rollouts, run_dir.join("rollouts.jsonl")).unwrap();
    std::fs::copy(&inputs, run_dir.join("rollouts_materialized_inputs.jsonl")).unwrap();
    let ex = repo_root().join("assets/example-compare");
    let pivots = repo_root().join("tests/fixtures/pivot/upstream/example.jsonl");
    let source = repo_root()
        .join("tests/fixtures/pivot-build/upstream/example_multi_step.example_rollouts.jsonl");
    let out = |name: &str| dir.join(name).display().to_string();
    let p = |path: &Path| path.display().to_string();
    // select-pivot's inputs: two pivots, their profile (one mixed, one solved) and the config.
    let pivot = |id: &str| {
        serde_json::json!({"trajectory_id": 0, "responses_create_params": {"input": [], "tools": []},
            "expected_action": {"type": "message", "content": id}, "pivot_info": {"pivot_id": id},
            "agent_ref": {"type": "responses_api_agents", "name": "a"}})
        .to_string()
    };
    let profile_row = |task: u64, id: &str, rewards: [f64; 8]| {
        let infos: Vec<serde_json::Value> = rewards
            .iter()
            .map(|r| serde_json::json!({"reward": r}))
            .collect();
        serde_json::json!({"_ng_task_index": task, "sample": {"pivot_info": {"pivot_id": id}},
            "rollout_infos": infos})
        .to_string()
    };
    let select_pivots = dir.join("sp.jsonl");
    std::fs::write(
        &select_pivots,
        format!("{}\n{}\n", pivot("p0"), pivot("p1")),
    )
    .unwrap();
    let select_profile = dir.join("sp_profile.jsonl");
    std::fs::write(
        &select_profile,
        format!(
            "{}\n{}\n",
            profile_row(0, "p0", [1.0, 0.0, 1.0, 0.0, 1.0, 0.0, 1.0, 0.0]),
            profile_row(1, "p1", [1.0; 8])
        ),
    )
    .unwrap();
    std::fs::write(
        dir.join("sp.gym.yaml"),
        "a:\n  datasets:\n  - name: train\n    jsonl_fpath: sp.jsonl\n",
    )
    .unwrap();
    let task_profile =
        fixtures_dir().join("blackjack/expected/example_rollouts_reward_profiling.jsonl");
    vec![
        (
            "select-tasks",
            vec![
                "--profile".into(),
                p(&task_profile),
                "-o".into(),
                out("tasks/curated.jsonl"),
            ],
        ),
        (
            "select-pivot",
            vec![
                "--pivots".into(),
                p(&select_pivots),
                "--profile".into(),
                p(&select_profile),
                "--output".into(),
                out("sp.selected.jsonl"),
            ],
        ),
        (
            "profile",
            vec![
                "--inputs".into(),
                p(&inputs),
                "--rollouts".into(),
                p(&rollouts),
                "--out-dir".into(),
                out("prof"),
            ],
        ),
        (
            "report",
            vec![
                "--inputs".into(),
                p(&inputs),
                "--rollouts".into(),
                p(&rollouts),
                "-o".into(),
                out("r.html"),
            ],
        ),
        ("health", vec![p(&rollouts)]),
        ("query", vec![p(&rollouts), "reward > -5".into()]),
        ("health-check", vec![p(&run_dir)]),
        (
            "compare",
            vec![p(&ex.join("base.jsonl")), p(&ex.join("step200.jsonl"))],
        ),
        ("validate-pivot", vec!["--path".into(), p(&pivots)]),
        (
            "build-pivot",
            vec![
                "--input".into(),
                p(&source),
                "--output".into(),
                out("pivots.jsonl"),
                "--agent-ref".into(),
                "a".into(),
            ],
        ),
    ]
}

fn gymscope_with(
    command: &str,
    args: &[String],
    stdout: std::process::Stdio,
    stderr: std::process::Stdio,
) -> std::process::Child {
    std::process::Command::new(crate::common::gymscope_bin())
        .arg(command)
        .args(args)
        .stdout(stdout)
        .stderr(stderr)
        .spawn()
        .unwrap()
}

/// A pipe whose reader is already gone: the first write to it fails with EPIPE.
#[allow(clippy::incompatible_msrv)] // the tests run on the build machine's toolchain (1.95)
pub(crate) fn closed_pipe() -> std::process::Stdio {
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    writer.into()
}

#[test]
fn every_command_ends_quietly_on_a_closed_pipe_and_says_when_stdout_is_full() {
    use std::process::Stdio;
    let dir = tempfile::tempdir().unwrap();
    for (round, closed) in ["stdout", "both", "full"].iter().enumerate() {
        let sub = dir.path().join(round.to_string());
        for (command, args) in every_command(&sub) {
            // The exit code the command has with its output read.
            let normal = gymscope_with(command, &args, Stdio::piped(), Stdio::null())
                .wait_with_output()
                .unwrap();
            let (prints, normal) = (!normal.stdout.is_empty(), normal.status.code());
            // (validate-pivot's upstream example has invalid rows on purpose: exit 1.)
            let want = i32::from(command == "validate-pivot");
            assert_eq!(
                normal,
                Some(want),
                "{command} {args:?} with its output read"
            );
            let (stdout, stderr) = match *closed {
                "stdout" => (closed_pipe(), Stdio::piped()),
                "both" => (closed_pipe(), closed_pipe()),
                _ => (
                    std::fs::File::options()
                        .write(true)
                        .open("/dev/full")
                        .unwrap()
                        .into(),
                    Stdio::piped(),
                ),
            };
            let out = gymscope_with(command, &args, stdout, stderr)
                .wait_with_output()
                .unwrap();
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(!err.contains("panicked"), "{command} ({closed}): {err}");
            if *closed == "full" && prints {
                assert_eq!(out.status.code(), Some(1), "{command} > /dev/full: {err}");
                assert!(err.contains("No space left on device"), "{command}: {err}");
            } else {
                assert_eq!(
                    out.status.code(),
                    normal,
                    "{command} ({closed} closed): {err}"
                );
                assert!(!err.contains("Broken pipe"), "{command} ({closed}): {err}");
            }
        }
    }
}

#[test]
fn validate_pivot_writes_no_fixed_copy_when_it_stopped_at_a_long_line() {
    let dir = tempfile::tempdir().unwrap();
    // A valid pivot row, so the long line is the first finding.
    let rows = std::fs::read_to_string(
        repo_root().join("tests/fixtures/pivot/cases/v08_pct_thirds.jsonl"),
    )
    .unwrap();
    let first = rows.lines().next().unwrap();
    let limit = (first.len() + 100).to_string();
    let long = format!("{{\"pad\":\"{}\"}}", "x".repeat(first.len() + 200));
    let path = write_in(dir.path(), "p.jsonl", format!("{first}\n{long}\n{first}\n"));
    let fixed = dir.path().join("fixed.jsonl");
    let r = run(&[
        "validate-pivot",
        "--path",
        s(&path),
        "--fix",
        s(&fixed),
        "--max-line-bytes",
        &limit,
    ]);
    assert_eq!(r.status.code(), Some(1), "{}", text(&r));
    assert!(text(&r).contains("no fixed copy written"), "{}", text(&r));
    let named = format!("'{}' line 2 is longer than {limit} bytes", path.display());
    assert!(text(&r).contains(&named), "{}", text(&r));
    assert!(!fixed.exists());
    assert!(
        std::fs::read_dir(dir.path()).unwrap().count() == 1,
        "a temp file is left"
    );
}

#[test]
fn model_controlled_names_reach_the_terminal_escaped() {
    let dir = tempfile::tempdir().unwrap();
    let (inputs, rollouts) = blackjack();
    // Every row's agent renamed to one that clears the screen and writes the clipboard.
    let evil = "evil\u{1b}[2J\u{1b}]52;c;aGk=\u{7}\u{9b}1m";
    let rename = |from: &Path, to: &Path| {
        let text: String = std::fs::read_to_string(from)
            .unwrap()
            .lines()
            .map(|l| {
                let mut row: serde_json::Value = serde_json::from_str(l).unwrap();
                row["agent_ref"]["name"] = evil.into();
                format!("{row}\n")
            })
            .collect();
        std::fs::write(to, text).unwrap();
    };
    let (m, r) = (
        dir.path().join("r_materialized_inputs.jsonl"),
        dir.path().join("r.jsonl"),
    );
    rename(&inputs, &m);
    rename(&rollouts, &r);
    for args in [
        vec!["health", s(&r)],
        vec!["compare", s(&r), s(&r)],
        vec![
            "profile",
            "--inputs",
            s(&m),
            "--rollouts",
            s(&r),
            "--out-dir",
            s(dir.path()),
        ],
    ] {
        let out = run(&args);
        let all = [out.stdout.as_slice(), out.stderr.as_slice()].concat();
        assert!(
            !all.iter().any(|&b| b == 0x1b || b == 0x07)
                && !all.windows(2).any(|w| w == [0xc2, 0x9b]),
            "{args:?}: raw control characters in {}",
            String::from_utf8_lossy(&all)
        );
        // The profile's summary names no agent; health and compare do.
        if args[0] != "profile" {
            assert!(
                text(&out).contains("evil\\u001b[2J"),
                "{args:?}: {}",
                text(&out)
            );
        }
    }
}

#[test]
fn non_finite_thresholds_and_a_zero_line_limit_are_usage_errors() {
    let r = blackjack().1.display().to_string();
    let cases: Vec<Vec<&str>> = vec![
        vec!["health", &r, "--pass-threshold", "nan"],
        vec!["compare", &r, &r, "--pass-threshold", "NaN"],
        vec![
            "select-pivot",
            "--pivots",
            &r,
            "--profile",
            &r,
            "--output",
            "o.jsonl",
            "--success-threshold",
            "inf",
        ],
        vec![
            "select-pivot",
            "--pivots",
            &r,
            "--profile",
            &r,
            "--output",
            "o.jsonl",
            "--difficulty-threshold",
            "nan",
        ],
        vec![
            "build-pivot",
            "--input",
            &r,
            "--output",
            "o.jsonl",
            "--agent-ref",
            "a",
            "--min-reward",
            "nan",
        ],
        vec!["health", &r, "--max-line-bytes", "0"],
        vec!["query", &r, "reward > 0", "--limit", "0"],
    ];
    for args in cases {
        let out = run(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", text(&out));
        let t = text(&out);
        assert!(
            t.contains("finite") || t.contains("at least 1 byte") || t.contains("at least 1 match"),
            "{args:?}: {t}"
        );
    }
}

#[test]
fn an_empty_file_in_compare_is_said_to_be_empty() {
    let dir = tempfile::tempdir().unwrap();
    let empty = write_in(dir.path(), "e.jsonl", "");
    let out = run(&["compare", s(&empty), s(&empty)]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(text(&out).contains("(it is empty)"), "{}", text(&out));
}

#[test]
fn select_pivot_stops_at_the_first_bad_line_of_a_file_that_never_ends() {
    let pivots = repo_root().join("tests/fixtures/pivot/upstream/example.jsonl");
    let dir = tempfile::tempdir().unwrap();
    let config = write_in(
        dir.path(),
        "p.gym.yaml",
        "a:\n  datasets:\n  - name: train\n    jsonl_fpath: p.jsonl\n",
    );
    let mut child = std::process::Command::new(crate::common::gymscope_bin())
        .args([
            "select-pivot",
            "--pivots",
            s(&pivots),
            "--profile",
            "/dev/urandom",
            "--config",
            s(&config),
        ])
        .args(["--output", "/nonexistent-dir-never-written/o.jsonl"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let t0 = std::time::Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if t0.elapsed() > std::time::Duration::from_secs(20) {
            let _ = child.kill();
            panic!("select-pivot --profile /dev/urandom is still reading after 20 s");
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    assert_eq!(status.code(), Some(1));
}

#[test]
fn build_pivot_says_a_first_line_that_is_not_json_is_not_json() {
    let dir = tempfile::tempdir().unwrap();
    let input = write_in(dir.path(), "in.jsonl", "<PLACEHOLDER ROW>\n");
    let out = dir.path().join("p.jsonl");
    let r = run(&[
        "build-pivot",
        "--input",
        s(&input),
        "--output",
        s(&out),
        "--agent-ref",
        "a",
    ]);
    assert_eq!(r.status.code(), Some(1), "{}", text(&r));
    let want = format!(
        "'{}' line 1, column 1: not JSON (expected value)",
        input.display()
    );
    assert!(text(&r).contains(&want), "{}", text(&r));
    assert!(!out.exists());
}

#[test]
fn build_pivot_refuses_to_write_over_its_tools_or_one_output_over_another() {
    let dir = tempfile::tempdir().unwrap();
    let source = repo_root()
        .join("tests/fixtures/pivot-build/upstream/example_multi_step.example_rollouts.jsonl");
    let tools = write_in(dir.path(), "p.metrics.json", "[]\n");
    let out = dir.path().join("p.jsonl");
    let base = ["build-pivot", "--input", s(&source), "--agent-ref", "a"];
    // The metrics file of `--output p.jsonl` is the `--tools` file.
    let r = run(&[&base[..], &["--tools", s(&tools), "--output", s(&out)]].concat());
    assert_eq!(r.status.code(), Some(2), "{}", text(&r));
    assert!(text(&r).contains("--tools"), "{}", text(&r));
    assert_eq!(std::fs::read_to_string(&tools).unwrap(), "[]\n");
    // `--config-out` equal to `--output`.
    let r = run(&[&base[..], &["--output", s(&out), "--config-out", s(&out)]].concat());
    assert_eq!(r.status.code(), Some(2), "{}", text(&r));
    assert_contains(&text(&r), "is both --output and --config-out");
    assert!(!out.exists());
}

/// Runs gymscope with `args`, killed (and the test failed) when it still runs after 20 s.
fn run_bounded(args: &[&str]) -> Output {
    let child = crate::common::spawn_gymscope(
        args,
        std::process::Stdio::piped(),
        std::process::Stdio::piped(),
    );
    let id = child.id();
    let (done, finished) = std::sync::mpsc::channel::<()>();
    let watchdog = std::thread::spawn(move || {
        let timeout = std::time::Duration::from_secs(20);
        let late = matches!(
            finished.recv_timeout(timeout),
            Err(std::sync::mpsc::RecvTimeoutError::Timeout)
        );
        if late {
            // Not reaped yet (`wait_with_output` is still waiting), so the pid is the child's.
            let _ = std::process::Command::new("kill")
                .args(["-9", &id.to_string()])
                .status();
        }
        late
    });
    let out = child.wait_with_output().unwrap();
    let _ = done.send(());
    assert!(
        !watchdog.join().unwrap(),
        "gymscope {args:?} still ran after 20 s"
    );
    out
}

#[test]
fn validate_pivot_stops_at_the_first_line_that_is_not_utf8() {
    // A device that never ends: the first line of random bytes that is not UTF-8 stops it.
    let r = run_bounded(&["validate-pivot", "--path", "/dev/urandom"]);
    assert_eq!(r.status.code(), Some(1), "{}", text(&r));
    assert!(text(&r).contains("reading stopped here"), "{}", text(&r));
    // In a file: the errors before the line are reported, the rows after it are not read, and
    // `--fix` writes no copy of a file it did not read to the end.
    let dir = tempfile::tempdir().unwrap();
    let path = write_in(
        dir.path(),
        "p.jsonl",
        b"{\"a\": 1}\n\xff\xfe bad\n{\"b\": 2}\n",
    );
    let fixed = dir.path().join("p.fixed.jsonl");
    let r = run(&["validate-pivot", "--path", s(&path), "--fix", s(&fixed)]);
    assert_eq!(r.status.code(), Some(1), "{}", text(&r));
    let t = text(&r);
    assert!(t.contains(":2:1") && t.contains("invalid UTF-8"), "{t}");
    assert!(t.contains(":1:1") && !t.contains(":3:1"), "{t}");
    assert!(!fixed.exists());
}

#[test]
fn build_pivot_names_line_and_column_of_bad_tools_and_bounds_their_read() {
    let dir = tempfile::tempdir().unwrap();
    let source = repo_root()
        .join("tests/fixtures/pivot-build/upstream/example_multi_step.example_rollouts.jsonl");
    let tools = write_in(
        dir.path(),
        "tools.json",
        b"[\n  {\"type\": \"function\", \"name\": \"a\xff\"}\n]\n",
    );
    let out = dir.path().join("p.jsonl");
    let base = ["build-pivot", "--input", s(&source), "--agent-ref", "a"];
    let r = run(&[&base[..], &["--tools", s(&tools), "--output", s(&out)]].concat());
    assert_eq!(r.status.code(), Some(1), "{}", text(&r));
    assert!(text(&r).contains("line 2 column"), "{}", text(&r));
    assert!(text(&r).contains("tools.json"), "{}", text(&r));
    // A device as --tools is read up to a bound, never forever.
    let r = run_bounded(&[&base[..], &["--tools", "/dev/zero", "--output", s(&out)]].concat());
    assert_eq!(r.status.code(), Some(1), "{}", text(&r));
    assert!(text(&r).contains("over the 64 MiB limit"), "{}", text(&r));
    assert!(!out.exists());
}

#[test]
fn health_reads_a_repeated_key_as_profile_does() {
    let dir = tempfile::tempdir().unwrap();
    let rollouts = dir.path().join("r.jsonl");
    std::fs::write(
        &rollouts,
        concat!(
            r#"{"_ng_task_index":0,"_ng_rollout_index":0,"agent_ref":{"name":"a"},"reward":1.0,"reward":0.0,"#,
            r#""response":{"output":[{"type":"message","role":"assistant","content":[{"type":"output_text","text":"4"}]}]}}"#,
            "\n"
        ),
    )
    .unwrap();
    let r = run(&["health", s(&rollouts), "--format", "json"]);
    assert_eq!(r.status.code(), Some(0), "{}", text(&r));
    let v: serde_json::Value = serde_json::from_slice(&r.stdout).unwrap();
    // The last reward (0.0): the task never passes.
    let outcomes = &v["agents"][0]["outcomes"];
    assert_eq!(outcomes["never_pass"], 1, "{v}");
}

/// build-pivot writes every output in full before it renames any (the dataset first): when one
/// of them cannot be written, the previous run's dataset and metrics stay as they were, side by
/// side, and no temporary file is left.
#[test]
fn build_pivot_leaves_the_previous_outputs_together_when_one_cannot_be_written() {
    let dir = tempfile::tempdir().unwrap();
    let source = repo_root()
        .join("tests/fixtures/pivot-build/upstream/example_multi_step.example_rollouts.jsonl");
    let (out, metrics) = (
        dir.path().join("p.jsonl"),
        dir.path().join("p.metrics.json"),
    );
    std::fs::write(&out, "OLD\n").unwrap();
    std::fs::write(&metrics, "OLD\n").unwrap();
    // The config's folder is a file: that output cannot be made.
    std::fs::write(dir.path().join("file"), "x").unwrap();
    let config = dir.path().join("file/c.yaml");
    let r = run(&[
        "build-pivot",
        "--input",
        s(&source),
        "--output",
        s(&out),
        "--agent-ref",
        "a",
        "--config-out",
        s(&config),
    ]);
    assert_eq!(r.status.code(), Some(1), "{}", text(&r));
    assert!(text(&r).contains("c.yaml"), "{}", text(&r));
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "OLD\n");
    assert_eq!(std::fs::read_to_string(&metrics).unwrap(), "OLD\n");
    let mut names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["file", "p.jsonl", "p.metrics.json"]);
}

/// `--help` and `--version` printed with clap's own writer exited 0 on `> /dev/full` (every
/// other command exits 1 there); now they say so, and stay quiet on a closed pipe.
#[test]
fn help_and_version_say_when_stdout_is_full() {
    use std::process::{Command, Stdio};
    for args in [
        &["--help"][..],
        &["--version"],
        &["profile", "--help"],
        &["help", "profile"],
    ] {
        let run = |stdout: Stdio| {
            Command::new(crate::common::gymscope_bin())
                .args(args)
                .stdout(stdout)
                .stderr(Stdio::piped())
                .output()
                .unwrap()
        };
        let read = run(Stdio::piped());
        assert_eq!(read.status.code(), Some(0), "{args:?}");
        assert!(!read.stdout.is_empty(), "{args:?}");
        let closed = run(closed_pipe());
        assert_eq!(closed.status.code(), Some(0), "{args:?} on a closed pipe");
        assert!(
            closed.stderr.is_empty(),
            "{args:?}: {}",
            String::from_utf8_lossy(&closed.stderr)
        );
        if Path::new("/dev/full").exists() {
            let full = std::fs::File::options()
                .write(true)
                .open("/dev/full")
                .unwrap();
            let out = run(full.into());
            assert_eq!(out.status.code(), Some(1), "{args:?} > /dev/full");
            assert!(
                String::from_utf8_lossy(&out.stderr)
                    .contains("could not write standard output: No space left"),
                "{args:?}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
    }
}

/// Bad flag values are usage errors (exit 2), as clap's own are; they exited 1.
#[test]
fn bad_flag_values_are_usage_errors() {
    let dir = tempfile::tempdir().unwrap();
    let p = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    std::fs::write(p("x.jsonl"), "{}\n").unwrap();
    let select = |flag: &str, value: &str| {
        let args = [
            "select-pivot",
            "--pivots",
            &p("x.jsonl"),
            "--profile",
            &p("x.jsonl"),
        ];
        let mut argv: Vec<String> = args.iter().map(std::string::ToString::to_string).collect();
        argv.extend(["--output".into(), p("o.jsonl"), flag.into(), value.into()]);
        argv
    };
    let build = |agent: &str, groups: &str| -> Vec<String> {
        let args = [
            "build-pivot",
            "--input",
            &p("x.jsonl"),
            "--output",
            &p("o.jsonl"),
        ];
        let mut argv: Vec<String> = args.iter().map(std::string::ToString::to_string).collect();
        argv.extend([
            "--agent-ref".into(),
            agent.into(),
            "--source-groups".into(),
            groups.into(),
        ]);
        argv
    };
    for (argv, said) in [
        (select("--keep", "bogus"), "--keep: 'bogus' is not one of"),
        (
            select("--difficulty-threshold", "0"),
            "--difficulty-threshold must be greater than 0",
        ),
        (
            build("a", "bogus"),
            "--source-groups: 'bogus' is not one of",
        ),
        (build("", "mixed"), "--agent-ref must not be empty"),
    ] {
        let out = run(&argv.iter().map(String::as_str).collect::<Vec<_>>());
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{argv:?}: {err}");
        assert!(err.contains(said), "{argv:?}: {err}");
    }
    assert!(!Path::new(&p("o.jsonl")).exists());
}

/// A `--config` given as a pipe (`<(cat config.yaml)`) is read like any input, not said to be
/// missing (it exists; it is not a regular file).
#[test]
fn select_pivot_reads_its_config_from_a_pipe() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("config.yaml");
    assert!(std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    let writer = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::write(&fifo, b"x: 1\n"))
    };
    let r = blackjack().1.display().to_string();
    let out_file = dir.path().join("o.jsonl");
    let out = run_bounded(&[
        "select-pivot",
        "--pivots",
        &r,
        "--profile",
        &r,
        "--output",
        out_file.to_str().unwrap(),
        "--config",
        fifo.to_str().unwrap(),
    ]);
    writer.join().unwrap().unwrap();
    assert!(!text(&out).contains("does not exist"), "{}", text(&out));
    assert!(!out.status.success());
    assert!(!out_file.exists());
}
