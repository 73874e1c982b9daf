//! Hostile inputs and odd files (issue 10, "Resource limits and odd files"): every command that
//! reads JSONL stops at the line limit naming file and line; pipes are refused; outputs are never
//! one of the inputs; a run's two files are recognised by content; no temporary file is left on
//! any path, a signal during a write included; messages say what they found, once.
#![allow(unsafe_code)] // libc::mkfifo and libc::kill make the FIFOs and signals under test

use crate::common;
use crate::common::assert_contains;
use crate::common::gen_run;
use crate::common::run_gymscope as gymscope;
use crate::common::run_on;

use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};
use std::time::{Duration, Instant};

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// Temporary output files (`.NAME.PID.tmp`) anywhere under `dir`.
fn temps(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(temps(&p));
        } else if p.file_name().unwrap().to_string_lossy().ends_with(".tmp") {
            out.push(p);
        }
    }
    out
}

/// The blackjack example run copied into `dir` as `m.jsonl` / `r.jsonl`.
fn example_run(dir: &Path) -> (PathBuf, PathBuf) {
    let src = common::fixtures_dir().join("blackjack");
    let m = dir.join("m.jsonl");
    let r = dir.join("r.jsonl");
    std::fs::copy(src.join("example_rollouts_materialized_inputs.jsonl"), &m).unwrap();
    std::fs::copy(src.join("example_rollouts.jsonl"), &r).unwrap();
    (m, r)
}

#[test]
fn a_line_over_the_limit_fails_naming_file_and_line_in_every_command() {
    let dir = tempfile::tempdir().unwrap();
    let (m, r) = example_run(dir.path());
    let limit = "300"; // blackjack rows are longer than this
    let want = "line 1 is longer than 300 bytes";

    let o = run_on("profile", &m, &r, &["--max-line-bytes", limit]);
    assert_eq!(o.status.code(), Some(1));
    assert_contains(&stderr(&o), &format!("'{}' {want}", s(&m)));

    let o = gymscope(&[
        "report",
        "--inputs",
        s(&m),
        "--rollouts",
        s(&r),
        "--max-line-bytes",
        limit,
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains(want), "{}", stderr(&o));

    let o = gymscope(&["validate-pivot", "--path", s(&r), "--max-line-bytes", limit]);
    assert_eq!(o.status.code(), Some(1));
    assert_contains(
        &stderr(&o),
        &format!("validation failed: '{}' {want}", s(&r)),
    );

    // `report --profile` reads the profiling file whole: the limit applies there too.
    let out = dir.path().join("out");
    let o = run_on("profile", &m, &r, &["--out-dir", s(&out)]);
    assert!(o.status.success(), "{}", stderr(&o));
    let profiling = out.join("r_reward_profiling.jsonl");
    let o = gymscope(&[
        "report",
        "--profile",
        s(&profiling),
        "--max-line-bytes",
        limit,
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert_contains(&stderr(&o), &format!("'{}' {want}", s(&profiling)));

    // A device that never ends a line: bounded by the limit, not by memory.
    let o = gymscope(&[
        "profile",
        "--inputs",
        "/dev/zero",
        "--rollouts",
        s(&r),
        "--max-line-bytes",
        "1000000",
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert_contains(
        &stderr(&o),
        "'/dev/zero' line 1 is longer than 1000000 bytes",
    );
    assert!(temps(dir.path()).is_empty());
}

#[test]
fn collect_merge_applies_the_limit_to_shards() {
    let dir = tempfile::tempdir().unwrap();
    let shard = dir.path().join("r-shard0-of-1.jsonl");
    std::fs::write(
        dir.path().join("r-shard0-of-1_materialized_inputs.jsonl"),
        b"{\"x\":\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\",\"_ng_task_index\":0,\"_ng_rollout_index\":0}\n",
    )
    .unwrap();
    std::fs::write(&shard, b"{\"_ng_task_index\":0,\"_ng_rollout_index\":0}\n").unwrap();
    let out = dir.path().join("r.jsonl");
    let o = gymscope(&[
        "collect",
        "--merge",
        "-o",
        s(&out),
        "--disable-aggregation",
        "--max-line-bytes",
        "50",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o)
            .contains("r-shard0-of-1_materialized_inputs.jsonl' line 1: longer than 50 bytes"),
        "{}",
        stderr(&o)
    );
    assert!(!out.exists());
    assert!(temps(dir.path()).is_empty());
}

/// A named pipe `name` made in `dir`.
fn fifo_in(dir: &Path, name: &str) -> PathBuf {
    let fifo = dir.join(name);
    let c = std::ffi::CString::new(s(&fifo)).unwrap();
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    fifo
}

#[test]
fn pipes_as_inputs_are_refused_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let (m, r) = example_run(dir.path());
    let fifo = fifo_in(dir.path(), "fifo.jsonl");
    let out = dir.path().join("out.jsonl").display().to_string();
    let start = Instant::now();
    for args in [
        vec!["profile", "--inputs", s(&fifo), "--rollouts", s(&r)],
        vec!["profile", "--inputs", s(&m), "--rollouts", s(&fifo)],
        vec!["report", "--inputs", s(&m), "--rollouts", s(&fifo)],
        vec!["compare", s(&fifo), s(&r)],
        vec![
            "build-pivot",
            "--input",
            s(&fifo),
            "--output",
            &out,
            "--agent-ref",
            "a",
        ],
        vec![
            "select-pivot",
            "--pivots",
            s(&fifo),
            "--profile",
            s(&r),
            "--output",
            &out,
        ],
    ] {
        let o = gymscope(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        let e = stderr(&o);
        assert!(
            e.contains(s(&fifo)) && e.contains("is a pipe") && e.contains("twice"),
            "{e}"
        );
    }
    assert!(start.elapsed() < Duration::from_secs(20), "no hang");
}

/// A named pipe nobody writes to, given where a command reads once (#42 item 6): refused by name
/// after the wait for a writer (exit 2), at every such entry point; with a writer it is read.
#[test]
fn a_pipe_without_a_writer_is_refused_after_a_short_wait() {
    let dir = tempfile::tempdir().unwrap();
    let (_, r) = example_run(dir.path());
    let fifo = fifo_in(dir.path(), "nowriter.jsonl");
    let out = dir.path().join("o.jsonl").display().to_string();
    let html = dir.path().join("o.html").display().to_string();
    let f = s(&fifo);
    for args in [
        vec!["health", f],
        vec!["query", f, "reward > 0"],
        vec!["query", s(&r), "reward > 0", "--inputs", f],
        vec!["validate-pivot", "--path", f],
        vec!["report", "--profile", f, "-o", &html],
        vec![
            "select-pivot",
            "--pivots",
            s(&r),
            "--profile",
            f,
            "--output",
            &out,
        ],
        vec![
            "build-pivot",
            "--input",
            s(&r),
            "--output",
            &out,
            "--agent-ref",
            "a",
            "--tools",
            f,
        ],
        vec![
            "health-check",
            s(dir.path()),
            "--rollouts-file",
            "nowriter.jsonl",
        ],
    ] {
        let start = Instant::now();
        let o = gymscope(&args);
        assert!(
            start.elapsed() < Duration::from_secs(15),
            "{args:?}: waited too long"
        );
        let e = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {e}");
        assert!(
            e.contains("named pipe") && e.contains("no writer"),
            "{args:?}: {e}"
        );
    }
    // With a writer, the pipe is read as the file it carries.
    let writer = {
        let (fifo, r) = (fifo.clone(), r.clone());
        std::thread::spawn(move || std::fs::write(&fifo, std::fs::read(&r).unwrap()))
    };
    let o = gymscope(&["query", s(&fifo), "--count", "reward >= 0"]);
    writer.join().unwrap().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
}

#[test]
fn no_command_writes_over_one_of_its_inputs() {
    let dir = tempfile::tempdir().unwrap();
    let (m, r) = example_run(dir.path());
    let before = std::fs::read(&r).unwrap();

    // report -o the rollouts file (also through a symlink and a `..` path).
    let link = dir.path().join("link.jsonl");
    std::os::unix::fs::symlink(&r, &link).unwrap();
    std::fs::create_dir(dir.path().join("sub")).unwrap();
    let dotted = dir.path().join("sub/../r.jsonl");
    for o in [&r, &link, &dotted] {
        let out = gymscope(&["report", "--inputs", s(&m), "--rollouts", s(&r), "-o", s(o)]);
        assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
        assert_contains(&stderr(&out), "refusing to write");
    }

    // validate-pivot --fix onto --path.
    let out = gymscope(&["validate-pivot", "--path", s(&r), "--fix", s(&link)]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));

    // profile: an input named like the output it would write.
    let named = dir.path().join("r_reward_profiling.jsonl");
    std::fs::rename(&m, &named).unwrap();
    let out = run_on("profile", &named, &r, &[]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("(--inputs)"), "{}", stderr(&out));
    std::fs::rename(&named, &m).unwrap();

    assert_eq!(std::fs::read(&r).unwrap(), before);
    assert!(temps(dir.path()).is_empty());
}

#[test]
fn merge_checks_everything_before_writing() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let mat = |i: u32| d.join(format!("r-shard{i}-of-2_materialized_inputs.jsonl"));
    let shard = |i: u32| d.join(format!("r-shard{i}-of-2.jsonl"));
    std::fs::write(mat(0), b"{\"_ng_task_index\":0,\"_ng_rollout_index\":0}\n").unwrap();
    std::fs::write(mat(1), b"{\"_ng_task_index\":1,\"_ng_rollout_index\":0}\n").unwrap();
    std::fs::write(
        shard(0),
        b"{\"_ng_task_index\":0,\"_ng_rollout_index\":0,\"reward\":1}\n",
    )
    .unwrap();
    std::fs::write(
        shard(1),
        b"{\"_ng_task_index\":1,\"_ng_rollout_index\":0,\"reward\":0}\n",
    )
    .unwrap();
    let merge = |out: &Path| {
        gymscope(&[
            "collect",
            "--merge",
            "-o",
            s(out),
            "--disable-aggregation",
            s(&shard(0)),
            s(&shard(1)),
        ])
    };

    // -o a directory: refused before the materialized file is written.
    let as_dir = d.join("outdir");
    std::fs::create_dir(&as_dir).unwrap();
    let o = merge(&as_dir);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(!d.join("outdir_materialized_inputs.jsonl").exists());

    // -o shard 0 spelled another way: refused by identity, shard 0 untouched.
    let before = std::fs::read(shard(0)).unwrap();
    let o = merge(
        &d.join("./sub/../r-shard0-of-2.jsonl")
            .components()
            .collect::<PathBuf>(),
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    std::fs::create_dir(d.join("sub")).unwrap();
    let o = merge(&d.join("sub/../r-shard0-of-2.jsonl"));
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert_eq!(std::fs::read(shard(0)).unwrap(), before);

    // Keys `profile` rejects are rejected here, naming file and line.
    for (bad, found) in [
        ("null", "null"),
        ("{\"a\":1}", "an object"),
        ("\"0\"", "a string"),
    ] {
        std::fs::write(
            shard(1),
            format!("{{\"_ng_task_index\":1,\"_ng_rollout_index\":{bad}}}\n"),
        )
        .unwrap();
        let out = d.join("m.jsonl");
        let o = merge(&out);
        assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
        let e = stderr(&o);
        assert_contains(&e, &format!("r-shard1-of-2.jsonl' line 1: field `_ng_rollout_index` must be an integer, found {found}"));
        assert!(!out.exists() && !d.join("m_materialized_inputs.jsonl").exists());
    }

    // Bad JSON: one line number (the file's), the column, and "invalid UTF-8" as `profile` says.
    std::fs::write(shard(1), b"{\"_ng_task_index\":1,\n").unwrap();
    let e = stderr(&merge(&d.join("m.jsonl")));
    assert_contains(&e, "r-shard1-of-2.jsonl' line 1: Malformed JSON at column");
    assert!(!e.contains("at line 1 column"), "{e}");
    std::fs::write(shard(1), b"{\"_ng_task_index\":1,\"x\":\"\xff\"}\n").unwrap();
    let e = stderr(&merge(&d.join("m.jsonl")));
    assert!(e.contains("invalid UTF-8"), "{e}");
    assert!(temps(d).is_empty());
}

#[test]
fn swapped_or_identical_run_files_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let (m, r) = example_run(dir.path());
    let o = run_on("profile", &r, &m, &[]);
    assert_eq!(o.status.code(), Some(2));
    let e = stderr(&o);
    assert!(
        e.contains("looks like rollouts")
            && e.contains("looks like materialized inputs")
            && e.contains("swapped"),
        "{e}"
    );
    let o = gymscope(&["report", "--inputs", s(&r), "--rollouts", s(&r)]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("are the same file"), "{}", stderr(&o));
}

#[test]
fn messages_say_what_they_found_once() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // A directory as an input: the cause once, exit 2.
    let (m, _) = example_run(d);
    let o = gymscope(&["profile", "--inputs", s(&m), "--rollouts", s(d)]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(stderr(&o).matches("directory").count(), 1, "{}", stderr(&o));

    // Index values that are not integers: say what they are.
    let inputs = d.join("i.jsonl");
    std::fs::write(&inputs, b"{\"_ng_task_index\":0,\"_ng_rollout_index\":0}\n").unwrap();
    for (value, found) in [
        ("\"0\"", "a string"),
        ("null", "null"),
        ("[0]", "an array"),
        ("1.5", "a float"),
        (
            "123456789012345678901234",
            "an integer out of the 64-bit range",
        ),
    ] {
        let rollouts = d.join("o.jsonl");
        std::fs::write(
            &rollouts,
            format!("{{\"_ng_task_index\":{value},\"_ng_rollout_index\":0,\"reward\":1}}\n"),
        )
        .unwrap();
        let o = run_on("profile", &inputs, &rollouts, &[]);
        assert_eq!(o.status.code(), Some(1));
        assert!(
            stderr(&o).contains(&format!(
                "field `_ng_task_index` must be an integer, found {found}"
            )),
            "{value}: {}",
            stderr(&o)
        );
    }

    // A value that is not a boolean is refused, as Hydra refuses it.
    let o = gymscope(&[
        "profile",
        "+materialized_inputs_jsonl_fpath=a",
        "+rollouts_jsonl_fpath=b",
        "++allow_partial_rollouts=maybe",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("not a boolean"), "{}", stderr(&o));

    // `report --profile` says "invalid UTF-8" as `profile` does.
    let p = d.join("x_reward_profiling.jsonl");
    std::fs::write(&p, b"{\"_ng_task_index\":0,\"mean/reward\":\"\xff\"}\n").unwrap();
    let o = gymscope(&["report", "--profile", s(&p)]);
    assert_eq!(o.status.code(), Some(1));
    assert_contains(&stderr(&o), "line 1, column 36: invalid UTF-8");
}

#[test]
fn a_signal_during_a_write_leaves_no_temporary_file() {
    let dir = tempfile::tempdir().unwrap();
    // Big enough that writing the profile takes a while in a debug build.
    let (m, r) = gen_run::generate(dir.path(), "run", 20_000, 4, 600);
    let out = dir.path().join("out");
    std::fs::create_dir(&out).unwrap();
    let mut child = crate::common::spawn_gymscope(
        crate::common::on_args("profile", &m, &r, &["--out-dir", s(&out)]),
        Stdio::null(),
        Stdio::null(),
    );
    let signalled = common::signal_when(&mut child, libc::SIGTERM, || !temps(&out).is_empty());
    let status = child.wait().unwrap();
    assert!(signalled, "the write was not caught in progress");
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(status.signal(), Some(libc::SIGTERM), "ended by the signal");
    assert!(temps(&out).is_empty(), "left {:?}", temps(&out));
}

/// Statistics are computed only for the columns a group has (memory bounded by the data); a
/// column one rollout of a large group has is computed from that value alone, exactly as the
/// full NaN-padded column would give (-0.0 keeps the full path: numpy's sum makes it +0.0).
#[test]
fn sparse_columns_give_the_dense_statistics() {
    let mut inputs = String::new();
    let mut rollouts = String::new();
    for r in 0..20 {
        inputs.push_str(&format!(
            "{{\"_ng_task_index\":0,\"_ng_rollout_index\":{r},\"agent_ref\":{{\"name\":\"a\"}}}}\n"
        ));
        let extra = match r {
            7 => ",\"x\":0.1",
            11 => ",\"y\":-0.0",
            _ => "",
        };
        rollouts.push_str(&format!(
            "{{\"_ng_task_index\":0,\"_ng_rollout_index\":{r},\"reward\":{}{extra}}}\n",
            r % 2
        ));
    }
    let p = gymscope::output::profile_bytes(
        inputs.as_bytes(),
        "in.jsonl",
        rollouts.as_bytes(),
        "out.jsonl",
        Default::default(),
    )
    .unwrap();
    let col = |name: &str| {
        (0..p.columns.len())
            .find(|&c| p.column_name(c) == name)
            .unwrap()
    };
    let task = &p.tasks[0].columns;
    let x = task[col("x")];
    assert_eq!((x.mean, x.median, x.std), (Some(0.1), Some(0.1), None));
    let y = task[col("y")];
    assert_eq!(y.mean.map(f64::is_sign_positive), Some(true), "{y:?}");
    assert_eq!(task[col("reward")].mean, Some(0.5));
    // Agent rows too.
    assert_eq!(p.agents[0].columns[col("x")].mean, Some(0.1));
    let rendered = gymscope::output::render_in_memory(&p, inputs.as_bytes(), "in.jsonl").unwrap();
    let row = String::from_utf8(rendered.reward_profiling).unwrap();
    assert!(
        row.contains("\"mean/x\":0.1") && !row.contains("\"std/x\""),
        "{row}"
    );
}

/// Ctrl-C during a long query (a slow regex over a large file) stops it between lines and says
/// how far it got and what it found so far (#42), with the shell's exit status for SIGINT.
#[test]
fn an_interrupted_query_says_how_far_it_got() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("slow.jsonl");
    let mut text = String::new();
    for i in 0..20_000 {
        let answer = "a".repeat(900);
        text.push_str(&format!(
            r#"{{"_ng_task_index":{i},"_ng_rollout_index":0,"reward":1.0,"response":{{"output":[{{"type":"message","role":"assistant","content":[{{"type":"output_text","text":"{answer} b"}}]}}]}}}}"#
        ));
        text.push('\n');
    }
    std::fs::write(&path, text).unwrap();
    let child = crate::common::spawn_gymscope(
        ["query", s(&path), "--count", r"output ~ /(?i)\w{60}c/"],
        Stdio::piped(),
        Stdio::piped(),
    );
    // The signal once the read is under way (its first line to stderr would be too late to
    // wait for: the count goes to stdout at the end).
    std::thread::sleep(Duration::from_secs(3));
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let start = Instant::now();
    let out = child.wait_with_output().unwrap();
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(
        out.status.signal(),
        None,
        "ended by the signal itself: {}",
        stderr(&out)
    );
    assert!(
        start.elapsed() < Duration::from_secs(20),
        "stopped soon after the signal"
    );
    let e = stderr(&out);
    assert_eq!(out.status.code(), Some(130), "{e}");
    assert!(
        e.contains("Interrupted: read") && e.contains("up to line") && e.contains("so far"),
        "{e}"
    );
    assert!(out.stdout.is_empty(), "no partial count on stdout");
}
