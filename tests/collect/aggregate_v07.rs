//! `gymscope aggregate` against v0.7.0's `gym eval aggregate`, replayed from
//! `tests/fixtures/aggregate-v07` (recorded on a live v0.7.0 stack by
//! `scripts/parity-v07/aggregate_cases.sh`, and on stacks of two agents by
//! `aggregate_shapes.sh`: fan-out shards, 22 shards, sidecars or none, counted zeros beside masked
//! rows, two servers in front of one agent). The stand-in stack has the recorded stack's agents
//! and environment servers (a case's `stack.json` when it has one), but scores with its own
//! arithmetic: the merged rollouts, the health reports, the printed lines (the key-metrics block
//! aside; its labels in any order), the entries' keys per server and the exit status must be
//! v0.7.0's; the metric values are the servers' (on the live stack gymscope's were v0.7.0's, byte
//! for byte, see docs/parity.md).

use crate::common::gym_standin::StandIn;
use crate::common::output_text as text;
use serde_json::Value;
use std::path::Path;
use std::process::Command;

const AGENT: &str = "example_single_tool_call_simple_agent";

/// The files of a case's folder (git keeps no empty folder: a case without shards has none).
fn files_in(dir: &Path) -> Vec<std::fs::DirEntry> {
    match std::fs::read_dir(dir) {
        Ok(entries) => entries.map(Result::unwrap).collect(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(e) => panic!("{}: {e}", dir.display()),
    }
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in files_in(from) {
        std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
    }
}

/// Stdout without the servers' numbers (each `Key metrics for X:` block's JSON), and the
/// `Key metrics for X:` lines apart, sorted: v0.7.0 prints the entries in the order its
/// concurrent requests complete, which changes from run to run (seen on the live stack).
fn without_key_metrics(stdout: &str) -> (String, Vec<String>) {
    let mut out = Vec::new();
    let mut labels = Vec::new();
    let mut skipping = false;
    for line in stdout.lines() {
        if skipping {
            skipping = line != "}";
            continue;
        }
        skipping = line.starts_with("Key metrics for ");
        if skipping {
            labels.push(line.to_string());
        } else {
            out.push(line);
        }
    }
    labels.sort();
    (out.join("\n"), labels)
}

/// Upstream's stdout split at its `Error: …` line: the lines before it, and the message (rich
/// wraps it at 80 columns; the pieces joined again).
fn split_error(stdout: &str) -> (String, Option<String>) {
    match stdout.find("Error: ") {
        Some(i) if i == 0 || stdout[..i].ends_with('\n') => (
            stdout[..i].to_string(),
            Some(stdout[i + 7..].trim_end().replace('\n', "")),
        ),
        _ => (stdout.to_string(), None),
    }
}

/// Entries by environment server (their order is completion order upstream, see above).
fn entry_shape(v: &Value) -> Vec<(String, Vec<String>)> {
    let mut shape: Vec<_> = v
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                format!(
                    "{} @ {}",
                    e["agent_ref"]["name"], e["_ng_environment_server"]
                ),
                e.as_object().unwrap().keys().cloned().collect(),
            )
        })
        .collect();
    shape.sort();
    shape
}

/// Calls `check(case, name, gym)` for every case recorded under `tests/fixtures/<fixtures>`, on
/// the single-agent v0.7.0 stack or, for a case recorded on a stack of another shape, on the
/// stack its `stack.json` names (aggregate_shapes.sh, collect_shapes.sh); returns the count.
pub(crate) fn replay_recorded(
    fixtures: &str,
    mut check: impl FnMut(&Path, &str, &StandIn),
) -> usize {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(fixtures);
    let single = StandIn::start_v07(&[AGENT]);
    let mut cases = 0;
    for case in std::fs::read_dir(&root).unwrap() {
        let case = case.unwrap().path();
        let name = case.file_name().unwrap().to_string_lossy().into_owned();
        let shaped = std::fs::read(case.join("stack.json"))
            .ok()
            .map(|s| StandIn::start_shaped(&serde_json::from_slice(&s).unwrap()));
        check(&case, &name, shaped.as_ref().unwrap_or(&single));
        cases += 1;
    }
    cases
}

#[test]
fn aggregate_replays_v07s_recorded_cases() {
    let cases = replay_recorded("aggregate-v07", |case, name, gym| {
        let args: Vec<String> = std::fs::read_to_string(case.join("args"))
            .unwrap()
            .lines()
            .map(String::from)
            .collect();
        let expected = case.join("expected");
        let dir = tempfile::tempdir().unwrap();
        copy_dir(&case.join("shards"), dir.path());
        let r = Command::new(env!("CARGO_BIN_EXE_gymscope"))
            .arg("aggregate")
            .args(&args)
            .args(["--head-server", &gym.head()])
            .current_dir(dir.path())
            .output()
            .unwrap();
        let want_code = crate::common::expected_exit_code(&expected);
        assert_eq!(r.status.code(), Some(want_code), "{name}: {}", text(&r));
        let want_out = std::fs::read_to_string(expected.join("stdout")).unwrap();
        let got_out = String::from_utf8_lossy(&r.stdout);
        // An error: upstream prints `Error: …` on stdout (or raises: the exception's line is kept
        // in `error`); gymscope prints it on stderr, with the same words.
        let (want_out, printed) = split_error(&want_out);
        let raised = std::fs::read_to_string(expected.join("error")).ok();
        if let Some(words) = printed.or(raised) {
            let stderr = String::from_utf8_lossy(&r.stderr);
            assert!(
                stderr.contains(words.trim()),
                "{name}: {words} not in {stderr}"
            );
        } else {
            assert_eq!(want_code, 0, "{name}: an exit without an error recorded");
        }
        assert_eq!(
            without_key_metrics(&got_out),
            without_key_metrics(&want_out),
            "{name}: stdout"
        );
        // Every file v0.7.0 wrote, where gymscope writes it; only those.
        let out_arg = args.iter().position(|a| a == "-o").map(|i| &args[i + 1]);
        let out_dir = out_arg
            .and_then(|o| Path::new(o).parent())
            .map_or(dir.path().to_path_buf(), |p| dir.path().join(p));
        for f in std::fs::read_dir(&expected).unwrap() {
            let f = f.unwrap().file_name().to_string_lossy().into_owned();
            if f == "stdout" || f == "exit_code" || f == "error" {
                continue;
            }
            let got = std::fs::read(out_dir.join(&f))
                .unwrap_or_else(|e| panic!("{name}: {f} not written: {e}"));
            let want = std::fs::read(expected.join(&f)).unwrap();
            if f.ends_with("_aggregate_metrics.json") {
                let (g, w): (Value, Value) = (
                    serde_json::from_slice(&got).unwrap(),
                    serde_json::from_slice(&want).unwrap(),
                );
                assert_eq!(entry_shape(&g), entry_shape(&w), "{name}: {f}");
            } else {
                assert!(got == want, "{name}: {f} differs from v0.7.0's");
            }
        }
        if want_code == 0 && !args.iter().any(|a| a == "+merge_shards=false") {
            assert!(out_dir
                .join(out_arg.unwrap().rsplit('/').next().unwrap())
                .exists());
        }
        // Nothing else is left behind (no temporary file, no stray output).
        let mut allowed: Vec<String> = files_in(&case.join("shards"))
            .into_iter()
            .chain(files_in(&expected))
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        allowed.extend(["stdout".into(), "exit_code".into()]);
        for d in [dir.path().to_path_buf(), out_dir.clone()] {
            for e in std::fs::read_dir(&d).unwrap() {
                let e = e.unwrap();
                let f = e.file_name().to_string_lossy().into_owned();
                assert!(
                    e.path().is_dir() || allowed.contains(&f),
                    "{name}: unexpected file {f}"
                );
            }
        }
    });
    assert!(cases >= 13, "{cases} cases");
}

#[test]
fn a_pipe_among_the_shards_is_refused_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("r-shard0.jsonl");
    assert!(Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    let r = Command::new(env!("CARGO_BIN_EXE_gymscope"))
        .args(["aggregate", "-i", "r-shard*.jsonl", "-o", "out/r.jsonl"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert_eq!(r.status.code(), Some(2), "{}", text(&r));
    assert!(text(&r).contains("is a pipe"), "{}", text(&r));
    assert!(!dir.path().join("out").exists());
}
