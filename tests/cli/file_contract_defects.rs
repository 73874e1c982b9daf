//! Issue 56's defects, each as a hostile user found it (round five): the file contract
//! (docs/files.md) broken by arguments, paths and file kinds rather than by file contents.
#![allow(unsafe_code)] // libc: mkfifo, setrlimit before exec, kill

use crate::common::assert_code;
use crate::common::{self, output_text, run_gymscope};
use crate::common::{assert_contains, assert_lacks};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

fn s(p: &Path) -> String {
    p.display().to_string()
}

/// The blackjack run copied into `dir` as `r.jsonl` and `r_materialized_inputs.jsonl`.
fn run_in(dir: &Path) -> (PathBuf, PathBuf) {
    let fx = common::fixtures_dir().join("blackjack");
    let (m, r) = (dir.join("r_materialized_inputs.jsonl"), dir.join("r.jsonl"));
    std::fs::copy(fx.join("example_rollouts_materialized_inputs.jsonl"), &m).unwrap();
    std::fs::copy(fx.join("example_rollouts.jsonl"), &r).unwrap();
    (m, r)
}

/// An ATIF folder (v0.7.0's export of a fixture) at `dir/atif`.
fn atif_in(dir: &Path) -> PathBuf {
    let rollouts =
        common::repo_root().join("tests/fixtures/atif-v07/tool_then_answer/rollouts.jsonl");
    let out = dir.join("atif");
    let o = run_gymscope(&[
        "export",
        "--rollouts",
        &s(&rollouts),
        "--output-dir",
        &s(&out),
        "--agent-version",
        "v1",
        "--session-id",
        "s",
    ]);
    assert!(o.status.success(), "{}", output_text(&o));
    out
}

/// Runs gymscope with an address-space cap (bytes) and a limit on open files, killed after
/// `secs`; `None` when it had to be killed.
fn bounded(args: &[String], address_space: u64, open_files: u64, secs: u64) -> Option<Output> {
    let mut cmd = Command::new(common::gymscope_bin());
    cmd.args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    // SAFETY: setrlimit is async-signal-safe.
    unsafe {
        cmd.pre_exec(move || {
            let cap = libc::rlimit {
                rlim_cur: address_space,
                rlim_max: address_space,
            };
            libc::setrlimit(libc::RLIMIT_AS, &raw const cap);
            let files = libc::rlimit {
                rlim_cur: open_files,
                rlim_max: open_files,
            };
            libc::setrlimit(libc::RLIMIT_NOFILE, &raw const files);
            Ok(())
        });
    }
    let mut child = cmd.spawn().unwrap();
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > Duration::from_secs(secs) {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    Some(child.wait_with_output().unwrap())
}

/// The run ended with `code`, saying `text`.
fn ends_with(out: &Output, code: i32, text: &str) {
    assert_eq!(out.status.code(), Some(code), "{}", output_text(out));
    assert!(output_text(out).contains(text), "{}", output_text(out));
}

fn strings(args: &[&str]) -> Vec<String> {
    args.iter().map(|a| (*a).to_string()).collect()
}

fn mkfifo(p: &Path) {
    let c = std::ffi::CString::new(p.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a valid C string.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
}

/// Item 1: Seconds too large for a clock were a panic (exit 101): now a usage error.
#[test]
fn huge_durations_are_refused_not_a_panic() {
    let dir = tempfile::tempdir().unwrap();
    let (m, _) = run_in(dir.path());
    let o = s(&dir.path().join("o.jsonl"));
    for flag in [
        vec!["--grace", "1e20"],
        vec!["--timeout", "1e20"],
        vec!["--dispatch-budget-s", "1e20", "--concurrency", "2"],
        vec!["+dispatch_budget_s=1e20", "+num_samples_in_parallel=2"],
    ] {
        let m = s(&m);
        let mut args = vec![
            "collect",
            "-i",
            &m,
            "-o",
            &o,
            "-a",
            "x",
            "--head-server",
            "127.0.0.1:9",
        ];
        args.extend(flag.iter().copied());
        let out = run_gymscope(&args);
        assert_code(&out, 2, &format!("{flag:?}"));
        assert_lacks(&output_text(&out), "panicked");
    }
}

/// Item 2: `**` is Python's glob without recursion (one level, like `*`), and a link loop cannot
/// list a shard many times.
#[test]
fn aggregate_globs_as_python_without_recursion() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::create_dir_all(d.join("runs/a/deep")).unwrap();
    let (_, r) = run_in(d);
    std::fs::copy(&r, d.join("runs/a/r.jsonl")).unwrap();
    std::fs::copy(&r, d.join("runs/a/deep/r.jsonl")).unwrap();
    std::os::unix::fs::symlink(d.join("runs"), d.join("runs/a/loop")).unwrap();
    let out = run_gymscope(&[
        "aggregate",
        "-i",
        &format!("{}/runs/**/r.jsonl", d.display()),
        "-o",
        &s(&d.join("out/agg.jsonl")),
        "--head-server",
        "127.0.0.1:9",
    ]);
    let text = output_text(&out);
    assert!(text.contains("Aggregating 1 shard(s):"), "{text}");
    assert!(
        text.contains("runs/a/r.jsonl") && !text.contains("deep"),
        "{text}"
    );
}

/// Item 3: An aggregate output onto a file the shards bring along (their sidecars and materialized
/// inputs) is refused before anything is written.
#[test]
fn aggregate_never_replaces_a_shards_sidecar() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (m, r) = run_in(d);
    let failures = d.join("r_failures.jsonl");
    std::fs::write(
        &failures,
        b"{\"_ng_task_index\": 0, \"_ng_rollout_index\": 9}\n",
    )
    .unwrap();
    for target in [&failures, &m] {
        let before = std::fs::read(target).unwrap();
        let out = run_gymscope(&[
            "aggregate",
            "-i",
            &s(&r),
            "-o",
            &s(target),
            "--head-server",
            "127.0.0.1:9",
        ]);
        ends_with(&out, 2, "refusing to write");
        assert_eq!(std::fs::read(target).unwrap(), before);
    }
}

/// Item 4: Merging more shards than `ulimit -n` allows open at once: files are opened a few at a time.
#[test]
fn a_merge_of_many_shards_stays_under_the_open_file_limit() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (m, r) = run_in(d);
    let (rows, inputs) = (
        std::fs::read_to_string(&r).unwrap(),
        std::fs::read_to_string(&m).unwrap(),
    );
    let n = 300;
    // Each shard one of the run's rows (and its materialized row), renumbered by task.
    let first_row: serde_json::Value = serde_json::from_str(rows.lines().next().unwrap()).unwrap();
    let first_input: serde_json::Value =
        serde_json::from_str(inputs.lines().next().unwrap()).unwrap();
    for i in 0..n {
        let shard = d.join(format!("s-shard{i}-of-{n}.jsonl"));
        let mut row = first_row.clone();
        row["_ng_task_index"] = i.into();
        let mut input = first_input.clone();
        input["_ng_task_index"] = i.into();
        std::fs::write(&shard, format!("{row}\n")).unwrap();
        std::fs::write(
            d.join(format!("s-shard{i}-of-{n}_materialized_inputs.jsonl")),
            format!("{input}\n"),
        )
        .unwrap();
    }
    let args = strings(&[
        "collect",
        "--merge",
        "-o",
        &s(&d.join("s.jsonl")),
        "--disable-aggregation",
    ]);
    let out = bounded(&args, 8 << 30, 128, 120).expect("finished");
    assert_eq!(out.status.code(), Some(0), "{}", output_text(&out));
    assert_eq!(
        std::fs::read_to_string(d.join("s.jsonl"))
            .unwrap()
            .lines()
            .count(),
        n
    );
}

/// Item 5: A blank or whitespace-only line in a shard is skipped, as v0.7.0's aggregate skips it.
#[test]
fn aggregate_skips_blank_lines_in_shards() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (_, r) = run_in(d);
    let text = std::fs::read_to_string(&r).unwrap();
    let (first, rest) = text.split_once('\n').unwrap();
    std::fs::write(&r, format!("{first}\n   \n\n{rest}")).unwrap();
    let out = run_gymscope(&[
        "aggregate",
        "-i",
        &s(&r),
        "-o",
        &s(&d.join("o/agg.jsonl")),
        "--head-server",
        "127.0.0.1:9",
    ]);
    let text = output_text(&out);
    // It gets as far as the head server (absent here), past the blank lines.
    assert!(text.contains("Loaded 5 rollout record(s)"), "{text}");
}

/// 6 and item 4. Whole documents are read with a cap, and an endless line stops at the limit:
/// no command grows without bound or aborts under an address-space cap.
#[test]
fn whole_documents_and_endless_lines_are_bounded() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (m, r) = run_in(d);
    let atif = atif_in(d);
    let prof = run_gymscope(&["profile", "--inputs", &s(&m), "--rollouts", &s(&r)]);
    assert!(prof.status.success());
    let profile = s(&d.join("r_reward_profiling.jsonl"));
    // A sparse file of 1.1 GiB without a newline: past the default line limit (1 GiB).
    let endless = d.join("endless_reward_profiling.jsonl");
    std::fs::File::create(&endless)
        .unwrap()
        .set_len((1 << 30) + (100 << 20))
        .unwrap();
    let cases: Vec<Vec<String>> = vec![
        strings(&[
            "compare",
            "--baseline",
            &s(&r),
            "--candidates",
            &s(&r),
            "--baseline-agg-metrics",
            "/dev/zero",
            "-o",
            &s(&d.join("c1")),
        ]),
        strings(&[
            "compare",
            "--baseline",
            &s(&r),
            "--candidates",
            &s(&r),
            "--candidates-agg-metrics",
            "/dev/zero",
            "-o",
            &s(&d.join("c2")),
        ]),
        strings(&[
            "report",
            "--profile",
            &profile,
            "--agent-metrics",
            "/dev/zero",
            "-o",
            &s(&d.join("x.html")),
        ]),
        strings(&[
            "query",
            &s(&atif),
            "--count",
            "reward >= 0",
            "--rewards",
            "/dev/zero",
        ]),
        strings(&["validate-atif", "/dev/zero"]),
        strings(&[
            "report",
            "--profile",
            &s(&endless),
            "-o",
            &s(&d.join("y.html")),
        ]),
    ];
    for args in cases {
        let out = bounded(&args, 3_500 << 20, 1024, 120).expect("finished in time");
        let text = output_text(&out);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {text}");
        assert!(
            text.contains("/dev/zero") || text.contains("endless"),
            "{args:?}: {text}"
        );
    }
}

/// Item 7: A FIFO named like ATIF (`*.json`) is not opened to sniff it: refused by name, no hang.
#[test]
fn a_fifo_named_json_never_hangs_a_command() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (m, r) = run_in(d);
    let fifo = d.join("run.json");
    mkfifo(&fifo);
    let f = s(&fifo);
    let atif = atif_in(d);
    let cases: Vec<Vec<String>> = vec![
        strings(&["query", &f, "reward > 0"]),
        strings(&["profile", "--inputs", &s(&m), "--rollouts", &f]),
        strings(&["health", &f]),
        strings(&["compare", &f, &s(&r)]),
        strings(&[
            "build-pivot",
            "--input",
            &f,
            "--output",
            &s(&d.join("p.jsonl")),
            "--agent-ref",
            "a",
        ]),
        strings(&["validate-atif", &f]),
        strings(&[
            "query",
            &s(&atif),
            "--count",
            "reward >= 0",
            "--rewards",
            &f,
        ]),
        strings(&[
            "export",
            "--rollouts",
            &f,
            "--output-dir",
            &s(&d.join("e")),
            "--agent-version",
            "v",
            "--session-id",
            "s",
        ]),
    ];
    // At once: each waits the few seconds a read-once FIFO is given for its writer.
    std::thread::scope(|scope| {
        for args in &cases {
            scope.spawn(move || {
                let out =
                    bounded(args, 8 << 30, 1024, 30).unwrap_or_else(|| panic!("{args:?} hung"));
                let text = output_text(&out);
                assert!(matches!(out.status.code(), Some(1 | 2)), "{args:?}: {text}");
                assert!(text.contains("run.json"), "{args:?}: {text}");
            });
        }
    });
}

/// Item 8: `report` reads ATIF like every command that reads a run, without --inputs.
#[test]
fn report_reads_an_atif_run() {
    let dir = tempfile::tempdir().unwrap();
    let atif = atif_in(dir.path());
    let html = dir.path().join("r.html");
    let out = run_gymscope(&["report", "--rollouts", &s(&atif), "-o", &s(&html)]);
    assert!(out.status.success(), "{}", output_text(&out));
    assert!(std::fs::read_to_string(&html).unwrap().contains("<html"));
    // Without ATIF, --rollouts alone is a usage error that says what is missing.
    let (_, r) = run_in(dir.path());
    let out = run_gymscope(&["report", "--rollouts", &s(&r)]);
    ends_with(&out, 2, "needs --inputs");
}

/// Item 9: No output replaces a file of an ATIF run or the --rewards file; a refused build-pivot
/// leaves none of its side files in the export folder.
#[test]
fn outputs_never_replace_atif_files_or_rewards() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let atif = atif_in(d);
    let (_, r) = run_in(d);
    let trajectory = atif.join("0-0.json");
    let manifest = atif.join("manifest.jsonl");
    let listing = |p: &Path| {
        let mut v: Vec<_> = std::fs::read_dir(p)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        v.sort();
        v
    };
    let before = listing(&atif);
    let bytes = std::fs::read(&trajectory).unwrap();
    let cases: Vec<Vec<String>> = vec![
        strings(&["compare", &s(&atif), &s(&atif), "--report", &s(&trajectory)]),
        strings(&[
            "build-pivot",
            "--input",
            &s(&atif),
            "--output",
            &s(&trajectory),
            "--agent-ref",
            "a",
        ]),
        strings(&[
            "build-pivot",
            "--input",
            &s(&atif),
            "--output",
            &s(&manifest),
            "--agent-ref",
            "a",
        ]),
        strings(&[
            "build-pivot",
            "--input",
            &s(&atif),
            "--output",
            &s(&r),
            "--agent-ref",
            "a",
            "--rewards",
            &s(&r),
        ]),
    ];
    let r_bytes = std::fs::read(&r).unwrap();
    for args in cases {
        let out = bounded(&args, 8 << 30, 1024, 60).expect("finished");
        assert_code(&out, 2, &format!("{args:?}"));
        assert_eq!(std::fs::read(&trajectory).unwrap(), bytes);
        assert_eq!(std::fs::read(&r).unwrap(), r_bytes);
        assert_eq!(
            listing(&atif),
            before,
            "{args:?} left files in the export folder"
        );
    }
}

/// Item 10: A Harbor trial without its trajectory or result is named, not dropped without a word.
#[test]
fn incomplete_harbor_trials_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let job = common::harbor_job::write(dir.path());
    let trials: Vec<PathBuf> = std::fs::read_dir(&job)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    let crashed = &trials[0];
    std::fs::remove_file(crashed.join("agent/trajectory.json")).unwrap();
    let out = run_gymscope(&["query", &s(&job), "--count", "reward >= 0"]);
    let text = output_text(&out);
    let name = crashed.file_name().unwrap().to_string_lossy().into_owned();
    assert!(text.contains(&name) && text.contains("left out"), "{text}");
}

/// Item 11: One --rewards file for several ATIF runs would give them all the same rewards.
#[test]
fn one_rewards_file_for_two_atif_runs_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let a = atif_in(dir.path());
    let b = dir.path().join("b");
    std::fs::create_dir(&b).unwrap();
    let b = atif_in(&b);
    let (_, r) = run_in(dir.path());
    let out = run_gymscope(&["compare", &s(&a), &s(&b), "--rewards", &s(&r)]);
    ends_with(&out, 2, "--rewards");
}

/// Item 12: What validate-atif accepts, the readers read: `schema_version` late in the file, a stray
/// `config.json` beside the trajectories, trajectories in nested folders.
#[test]
fn the_readers_accept_what_validate_atif_accepts() {
    let dir = tempfile::tempdir().unwrap();
    let atif = atif_in(dir.path());
    let folder = dir.path().join("plain");
    std::fs::create_dir_all(folder.join("nested/deeper")).unwrap();
    let text = std::fs::read_to_string(atif.join("0-0.json")).unwrap();
    let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
    // `schema_version` last, after 8 KB of notes.
    let schema = v.as_object_mut().unwrap().remove("schema_version").unwrap();
    v["notes"] = "x".repeat(8192).into();
    v["schema_version"] = schema;
    std::fs::write(folder.join("nested/deeper/late.json"), v.to_string()).unwrap();
    std::fs::write(
        folder.join("config.json"),
        b"{\"job\": \"not a trajectory\"}",
    )
    .unwrap();
    let checked = run_gymscope(&["validate-atif", &s(&folder)]);
    assert!(checked.status.success(), "{}", output_text(&checked));
    let out = run_gymscope(&["query", &s(&folder), "--count", "rollout >= 0"]);
    assert!(out.status.success(), "{}", output_text(&out));
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "1");
    // Token counts as Harbor's schema takes them: `3.0`, and a negative count (read as unknown).
    for (name, count) in [
        ("float", serde_json::json!(3.0)),
        ("negative", serde_json::json!(-3)),
    ] {
        let mut t = v.clone();
        for step in t["steps"].as_array_mut().unwrap() {
            if step["source"] == "agent" {
                step["metrics"] =
                    serde_json::json!({"prompt_tokens": count, "completion_tokens": 5});
            }
        }
        let file = dir.path().join(format!("{name}.json"));
        std::fs::write(&file, t.to_string()).unwrap();
        let checked = run_gymscope(&["validate-atif", &s(&file)]);
        assert!(
            checked.status.success(),
            "{name}: {}",
            output_text(&checked)
        );
        let read = run_gymscope(&["query", &s(&file), "--count", "rollout >= 0"]);
        assert!(read.status.success(), "{name}: {}", output_text(&read));
    }
    let late = s(&folder.join("nested/deeper/late.json"));
    let late = run_gymscope(&["query", &late, "--count", "rollout >= 0"]);
    assert!(late.status.success(), "{}", output_text(&late));
}

/// Item 13: A signal during an ATIF read leaves nothing in $TMPDIR; a missing $TMPDIR is not made.
#[test]
fn an_atif_read_leaves_nothing_in_tmpdir() {
    let dir = tempfile::tempdir().unwrap();
    let atif = atif_in(dir.path());
    // A larger folder, so the signal comes while it is read: the same trajectory 300 times.
    let big = dir.path().join("big");
    std::fs::create_dir(&big).unwrap();
    let one = std::fs::read_to_string(atif.join("0-0.json")).unwrap();
    for i in 0..300 {
        let mut v: serde_json::Value = serde_json::from_str(&one).unwrap();
        v["session_id"] = format!("s{i}").into();
        v["notes"] = "n".repeat(20_000).into();
        std::fs::write(big.join(format!("t{i}.json")), v.to_string()).unwrap();
    }
    for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
        let tmp = dir.path().join(format!("tmp{sig}"));
        std::fs::create_dir(&tmp).unwrap();
        let mut child = Command::new(common::gymscope_bin())
            .args(["query", &s(&big), "--count", "rollout >= 0"])
            .env("TMPDIR", &tmp)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        // Once the conversion folder exists, the signal.
        let start = Instant::now();
        while std::fs::read_dir(&tmp).unwrap().next().is_none()
            && start.elapsed() < Duration::from_secs(20)
        {
            std::thread::sleep(Duration::from_millis(2));
        }
        // SAFETY: our child.
        unsafe { libc::kill(child.id() as i32, sig) };
        let _ = child.wait();
        let left: Vec<_> = std::fs::read_dir(&tmp).unwrap().collect();
        assert!(left.is_empty(), "signal {sig} left {left:?}");
    }
    let missing = dir.path().join("no/such/tmp");
    let out = Command::new(common::gymscope_bin())
        .args(["query", &s(&atif), "--count", "rollout >= 0"])
        .env("TMPDIR", &missing)
        .output()
        .unwrap();
    ends_with(&out, 1, "TMPDIR");
    assert!(!dir.path().join("no").exists());
}

/// Item 14: Bad values on the command line are usage errors (exit 2), before anything runs.
#[test]
fn bad_values_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let (m, r) = run_in(dir.path());
    let o = s(&dir.path().join("o.jsonl"));
    let base = ["collect", "-i", &s(&m), "-o", &o, "-a", "x"];
    let m_s = s(&m);
    let base: Vec<&str> = base
        .iter()
        .map(|a| {
            if a.ends_with("inputs.jsonl") {
                m_s.as_str()
            } else {
                a
            }
        })
        .collect();
    for extra in [
        vec!["--head-server", "nonsense"],
        vec!["--head-server", "127.0.0.1:99999"],
        vec!["--head-server", "127.0.0.1:9", "--num-repeats", "0"],
        vec![
            "--head-server",
            "127.0.0.1:9",
            "+responses_create_params=[1]",
        ],
    ] {
        let args: Vec<&str> = base.iter().copied().chain(extra.iter().copied()).collect();
        let out = run_gymscope(&args);
        assert_code(&out, 2, &format!("{extra:?}"));
    }
    let out = run_gymscope(&["compare", "--baseline", &s(&r), "--candidates", ""]);
    assert_eq!(out.status.code(), Some(2), "{}", output_text(&out));
}

/// 15 is in tests/collect (a head server whose /aggregate_metrics answers a bad shape).
/// Item 16: Hydra's dict grammar: an entry without a key, or an empty value, is refused as Hydra
/// refuses it (it used to route nothing, or to an agent named "").
#[test]
fn hydra_dicts_are_parsed_as_hydra_parses_them() {
    let dir = tempfile::tempdir().unwrap();
    let (m, _) = run_in(dir.path());
    for map in ["{: x}", "{_default: }"] {
        let out = run_gymscope(&[
            "collect",
            "-i",
            &s(&m),
            "-o",
            &s(&dir.path().join("o.jsonl")),
            "--agent-map",
            map,
            "--head-server",
            "127.0.0.1:9",
        ]);
        assert_eq!(out.status.code(), Some(2), "{map}: {}", output_text(&out));
        assert_contains(&output_text(&out), "--agent-map");
    }
}

/// Item 17: export names the real problem: a folder as --rollouts, an output folder that exists once
/// its `..` is resolved.
#[test]
fn export_names_the_real_problem() {
    let dir = tempfile::tempdir().unwrap();
    let rollouts =
        common::repo_root().join("tests/fixtures/atif-v07/tool_then_answer/rollouts.jsonl");
    let out = Command::new(common::gymscope_bin())
        .args([
            "export",
            "--rollouts",
            ".",
            "--output-dir",
            "x",
            "--agent-version",
            "v",
            "--session-id",
            "s",
        ])
        .current_dir(dir.path())
        .output()
        .unwrap();
    ends_with(&out, 2, "is a directory");
    let out = Command::new(common::gymscope_bin())
        .args([
            "export",
            "--rollouts",
            &s(&rollouts),
            "--output-dir",
            "new/..",
            "--agent-version",
            "v",
            "--session-id",
            "s",
        ])
        .current_dir(dir.path())
        .output()
        .unwrap();
    ends_with(&out, 1, "Output path already exists");
    assert!(!dir.path().join("new").exists());
}
