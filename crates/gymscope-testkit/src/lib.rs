//! What gymscope's test binaries and benches share: the repository's fixtures, JSON comparison
//! by the fixtures' rule, the built binary, headless Chromium, a static server, the stand-in
//! Gym servers and generated runs. A crate of its own so every helper is compiled once and none
//! is dead code in a binary that does not use it.
#![allow(clippy::unwrap_used)] // test support stops at what must hold, as the tests do

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Output;

pub mod bench;
pub mod browser;
pub mod compare_runs;
pub mod fixture_files;
pub mod gen_run;
pub mod gym_standin;
pub mod harbor_job;
pub mod static_server;

/// The workspace's root (this crate is `crates/gymscope-testkit`).
pub fn repo_root() -> &'static Path {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    here.parent()
        .and_then(Path::parent)
        .expect("crates/gymscope-testkit is two levels below the root")
}

pub fn fixtures_dir() -> PathBuf {
    repo_root().join("tests/fixtures/gym-examples")
}

/// The fixtures' comparison rule: numbers equal within a relative 1e-9 (an int and a float of
/// the same value are equal), everything else exactly; key order is free.
pub fn assert_json_eq(got: &Value, want: &Value, path: &str) {
    match (got, want) {
        (Value::Number(a), Value::Number(b)) => {
            let (a, b) = (a.as_f64().unwrap(), b.as_f64().unwrap());
            let tol = 1e-9 * a.abs().max(b.abs());
            assert!(
                a == b || (a - b).abs() <= tol,
                "{path}: got {a:?}, want {b:?}"
            );
        }
        (Value::Object(a), Value::Object(b)) => {
            let mut ka: Vec<_> = a.keys().collect();
            let mut kb: Vec<_> = b.keys().collect();
            ka.sort();
            kb.sort();
            assert_eq!(ka, kb, "{path}: keys differ");
            for (k, v) in b {
                assert_json_eq(&a[k], v, &format!("{path}.{k}"));
            }
        }
        (Value::Array(a), Value::Array(b)) => {
            assert_eq!(a.len(), b.len(), "{path}: lengths differ");
            for (i, (x, y)) in a.iter().zip(b).enumerate() {
                assert_json_eq(x, y, &format!("{path}[{i}]"));
            }
        }
        _ => assert_eq!(got, want, "{path}"),
    }
}

/// Compares two `*_reward_profiling.jsonl` texts row by row, keyed by `_ng_task_index`.
pub fn assert_profiles_eq(got: &str, want: &str, what: &str) {
    let rows = |text: &str| -> Vec<Value> {
        text.lines()
            .map(|l| {
                serde_json::from_str(l).unwrap_or_else(|e| panic!("{what}: bad line {l}: {e}"))
            })
            .collect()
    };
    let (got, want) = (rows(got), rows(want));
    let tasks = |rows: &[Value]| {
        rows.iter()
            .map(|r| r["_ng_task_index"].clone())
            .collect::<Vec<_>>()
    };
    assert_eq!(tasks(&got), tasks(&want), "{what}: task rows differ");
    for (g, w) in got.iter().zip(&want) {
        assert_json_eq(g, w, &format!("{what} task {}", w["_ng_task_index"]));
    }
}

/// The `gymscope` binary Cargo built beside the running test (`target/<profile>/gymscope`, the
/// test being `target/<profile>/deps/<name>-<hash>`): `CARGO_BIN_EXE_gymscope` is set only when
/// an integration test itself is compiled, not for a library it uses.
pub fn gymscope_bin() -> PathBuf {
    let exe = std::env::current_exe().expect("the test's own path");
    let profile_dir = exe
        .parent()
        .and_then(Path::parent)
        .expect("tests run from target/<profile>/deps");
    let bin = profile_dir.join(format!("gymscope{}", std::env::consts::EXE_SUFFIX));
    assert!(
        bin.exists(),
        "{} is missing: cargo builds it for tests",
        bin.display()
    );
    bin
}

/// The JSON values of a JSONL file, one a line.
pub fn read_jsonl(p: &Path) -> Vec<Value> {
    std::fs::read_to_string(p)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// A text file's content; the message names the file.
pub fn read_text(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// The exit code an oracle recorded: `<expected>/exit_code`.
pub fn expected_exit_code(expected: &Path) -> i32 {
    read_text(&expected.join("exit_code"))
        .trim()
        .parse()
        .unwrap()
}

/// The JSON array `array`'s strings (stops the test on anything else).
pub fn str_items(array: &Value) -> Vec<&str> {
    array
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect()
}

/// Each element's `key` of the JSON array `array`, as text (stops the test on anything else).
pub fn strs<'a>(array: &'a Value, key: &str) -> Vec<&'a str> {
    fields(array, key)
        .into_iter()
        .map(|v| v.as_str().unwrap())
        .collect()
}

/// Each element's `key` of the JSON array `array` (stops the test unless it is an array).
pub fn fields<'a>(array: &'a Value, key: &str) -> Vec<&'a Value> {
    array.as_array().unwrap().iter().map(|e| &e[key]).collect()
}

/// `contents` written to `name` in `dir`; the file's path.
pub fn write_in(dir: &Path, name: &str, contents: impl AsRef<[u8]>) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, contents).unwrap();
    path
}

/// Stops the test unless the command exited with `code`; the message is `what` and its stdout
/// then stderr.
#[track_caller]
pub fn assert_code(out: &Output, code: i32, what: &str) {
    assert_eq!(
        out.status.code(),
        Some(code),
        "{what}: {}",
        output_text(out)
    );
}

/// Stops the test unless the command exited with `code` and its stderr holds `needle`; the
/// message is its stderr.
#[track_caller]
pub fn assert_exit(out: &std::process::Output, code: i32, needle: &str) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(code), "{err}");
    assert!(err.contains(needle), "{err}");
}

/// Stops the test unless `text` holds `needle`; the message is the whole text.
#[track_caller]
pub fn assert_contains(text: &str, needle: &str) {
    assert!(text.contains(needle), "{text}");
}

/// Stops the test if `text` holds `needle`; the message is the whole text.
#[track_caller]
pub fn assert_lacks(text: &str, needle: &str) {
    assert!(!text.contains(needle), "{text}");
}

/// Stops the test unless the command succeeded; the message is its stderr.
#[track_caller]
pub fn assert_success(out: &std::process::Output) {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Sends `signal` to `child` once `ready()` holds, polling every 2 ms for up to two minutes;
/// false when the child ended first (or the time ran out).
#[allow(unsafe_code)] // the signal under test
pub fn signal_when(
    child: &mut std::process::Child,
    signal: libc::c_int,
    mut ready: impl FnMut() -> bool,
) -> bool {
    let start = std::time::Instant::now();
    while start.elapsed() < std::time::Duration::from_secs(120) {
        if child.try_wait().unwrap().is_some() {
            return false;
        }
        if ready() {
            // SAFETY: kill(2) on our own child's pid.
            unsafe { libc::kill(child.id() as i32, signal) };
            return true;
        }
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
    false
}

/// A finished command's stdout then stderr, for assertions and their messages.
pub fn output_text(o: &std::process::Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

pub fn run_gymscope(args: &[&str]) -> std::process::Output {
    std::process::Command::new(gymscope_bin())
        .args(args)
        .output()
        .expect("run gymscope")
}

/// Starts `gymscope <args>` with its stdout and stderr as given (`Stdio::null()`, `piped()`).
pub fn spawn_gymscope<S: AsRef<std::ffi::OsStr>>(
    args: impl IntoIterator<Item = S>,
    stdout: std::process::Stdio,
    stderr: std::process::Stdio,
) -> std::process::Child {
    let mut command = std::process::Command::new(gymscope_bin());
    command.args(args).stdout(stdout).stderr(stderr);
    command.spawn().expect("start gymscope")
}

/// `gymscope <command> --inputs <inputs> --rollouts <rollouts>` and then `extra`.
pub fn run_on(command: &str, inputs: &Path, rollouts: &Path, extra: &[&str]) -> Output {
    run_gymscope(&on_args(command, inputs, rollouts, extra))
}

/// `query --inputs <inputs> <rollouts> <expr>`: the arguments of `gymscope query` on a run.
pub fn query_args<'a>(inputs: &'a Path, rollouts: &'a Path, expr: &'a str) -> Vec<&'a str> {
    let inputs = inputs.to_str().expect("a UTF-8 path");
    vec![
        "query",
        "--inputs",
        inputs,
        rollouts.to_str().expect("a UTF-8 path"),
        expr,
    ]
}

/// The arguments of [`run_on`]: `<command> --inputs <inputs> --rollouts <rollouts>`, `extra`.
pub fn on_args<'a>(
    command: &'a str,
    inputs: &'a Path,
    rollouts: &'a Path,
    extra: &[&'a str],
) -> Vec<&'a str> {
    let mut args = vec![command, "--inputs", inputs.to_str().expect("a UTF-8 path")];
    args.extend(["--rollouts", rollouts.to_str().expect("a UTF-8 path")]);
    args.extend(extra);
    args
}

/// `collect -i <input> -o <out> -a <agent> --head-server <head>` and then `extra`.
pub fn collect_args<'a>(
    input: &'a Path,
    out: &'a Path,
    agent: &'a str,
    head: &'a str,
    extra: &[&'a str],
) -> Vec<&'a str> {
    let mut args = collect_io(input, out);
    args.extend(["-a", agent, "--head-server", head]);
    args.extend(extra);
    args
}

/// [`collect_args`] without `-a`: the rows name their agents.
pub fn collect_args_routed<'a>(
    input: &'a Path,
    out: &'a Path,
    head: &'a str,
    extra: &[&'a str],
) -> Vec<&'a str> {
    let mut args = collect_io(input, out);
    args.extend(["--head-server", head]);
    args.extend(extra);
    args
}

fn collect_io<'a>(input: &'a Path, out: &'a Path) -> Vec<&'a str> {
    vec![
        "collect",
        "-i",
        input.to_str().expect("a UTF-8 path"),
        "-o",
        out.to_str().expect("a UTF-8 path"),
    ]
}

/// [`run_gymscope`] in `dir` (so paths in its files are the bare names a browser uses).
pub fn run_gymscope_in(dir: &Path, args: &[&str]) -> std::process::Output {
    std::process::Command::new(gymscope_bin())
        .current_dir(dir)
        .args(args)
        .output()
        .expect("run gymscope")
}

/// `gymscope report` of a run into `out`, with `extra` flags (`--query`, `--date`); stops the
/// test when it fails.
pub fn write_report(inputs: &Path, rollouts: &Path, out: &Path, extra: &[&str]) -> Output {
    let out = ["-o", out.to_str().expect("a UTF-8 path")];
    let run = run_on("report", inputs, rollouts, &[&out[..], extra].concat());
    assert!(run.status.success(), "{}", output_text(&run));
    run
}
