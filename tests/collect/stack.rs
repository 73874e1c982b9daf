//! `gymscope collect` as a drop-in on a real Gym stack (issue 10): upstream's keys named or
//! implemented, `--no-serve`, `NEMO_GYM_EXTRA_ROOTS`, progress lines for small runs, and SIGTERM
//! while rollouts only retry a connection. Against the stand-in server (real HTTP on 127.0.0.1).
#![allow(unsafe_code)] // libc::kill sends the signal under test

use crate::common::assert_contains;
use crate::common::collect_args;
use crate::common::gym_standin;

use gym_standin::StandIn;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

const AGENT: &str = "standin_agent";

fn gymscope(args: &[&str], envs: &[(&str, &str)]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_gymscope"))
        .args(args)
        .envs(envs.iter().copied())
        .output()
        .expect("run gymscope")
}

use crate::common::output_text as text;

/// The stand-in stack, and a fresh folder holding an input of `n` rows.
fn stack_with_input(n: usize) -> (StandIn, tempfile::TempDir, PathBuf) {
    let gym = StandIn::start(&[AGENT]);
    let dir = tempfile::tempdir().unwrap();
    let input = write_input(dir.path(), n);
    (gym, dir, input)
}

fn write_input(dir: &Path, n: usize) -> PathBuf {
    let p = dir.join("input.jsonl");
    let mut s = String::new();
    for i in 0..n {
        s.push_str(&format!(
            "{{\"responses_create_params\":{{\"input\":[{{\"role\":\"user\",\"content\":\"task {i}\"}}]}},\"fake_behavior\":\"ok\"}}\n"
        ));
    }
    std::fs::write(&p, s).unwrap();
    p
}

#[test]
fn upstream_keys_are_taken_named_or_implemented() {
    let (gym, dir, input) = stack_with_input(2);
    let out = dir.path().join("r.jsonl");
    let port = gym.addr.port().to_string();
    let head_port = format!("+head_server.port={port}");
    let input_arg = format!("+input_jsonl_fpath={}", input.display());
    let output_arg = format!("+output_jsonl_fpath={}", out.display());
    let base = [
        "collect",
        "--no-serve",
        input_arg.as_str(),
        output_arg.as_str(),
        "+agent_name=standin_agent",
        "++head_server.host=127.0.0.1",
        head_port.as_str(),
        "+num_repeats=2",
        "+num_repeats_add_seed=true",
    ];
    let r = gymscope(&base, &[]);
    assert!(r.status.success(), "{}", text(&r));
    let mat = std::fs::read_to_string(dir.path().join("r_materialized_inputs.jsonl")).unwrap();
    let seeds: Vec<String> = mat
        .lines()
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            v["responses_create_params"]["metadata"]["extra_body"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    assert_eq!(
        seeds,
        [
            "{\"seed\": 0}",
            "{\"seed\": 1}",
            "{\"seed\": 0}",
            "{\"seed\": 1}"
        ]
    );

    let mut unknown = base.to_vec();
    unknown.push("+no_such_option=3");
    let r = gymscope(&unknown, &[]);
    assert_eq!(r.status.code(), Some(2));
    assert_contains(&text(&r), "unknown key `+no_such_option`");
    assert!(!text(&r).contains("shard"), "{}", text(&r));
    let mut unsupported = base.to_vec();
    unsupported.push("+prompt_config=prompt.yaml");
    let r = gymscope(&unsupported, &[]);
    assert_eq!(r.status.code(), Some(2));
    assert_contains(&text(&r), "not supported by gymscope: prompt_config");
}

#[test]
fn relative_inputs_are_found_under_nemo_gym_extra_roots() {
    let gym = StandIn::start(&[AGENT]);
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("root");
    std::fs::create_dir_all(root.join("data")).unwrap();
    let input = write_input(&root.join("data"), 1);
    assert!(input.ends_with("data/input.jsonl"));
    let out = dir.path().join("r.jsonl");
    let head = gym.head();
    let args = collect_args(Path::new("data/input.jsonl"), &out, AGENT, &head, &[]);
    let missing = dir.path().join("nothing-here");
    let roots = format!("{}:{}", missing.display(), root.display());
    let r = gymscope(&args, &[("NEMO_GYM_EXTRA_ROOTS", &roots)]);
    assert!(r.status.success(), "{}", text(&r));
    let r = gymscope(
        &args,
        &[("NEMO_GYM_EXTRA_ROOTS", &missing.display().to_string())],
    );
    assert_eq!(r.status.code(), Some(1));
    let t = text(&r);
    assert_contains(&t, &format!("'{}/data/input.jsonl'", missing.display()));
    assert!(t.contains("'data/input.jsonl'"), "{t}");
}

#[test]
fn small_runs_print_each_percentage_once() {
    let (gym, dir, input) = stack_with_input(3);
    let out = dir.path().join("r.jsonl");
    let r = gymscope(
        &collect_args(&input, &out, AGENT, &gym.head(), &["--concurrency", "1"]),
        &[],
    );
    assert!(r.status.success(), "{}", text(&r));
    let t = text(&r);
    let lines: Vec<&str> = t
        .lines()
        .filter(|l| l.starts_with("Finished ") && l.contains(" rollouts ("))
        .collect();
    assert_eq!(lines.len(), 3, "{t}");
    for (line, pct) in lines.iter().zip(["(33%)", "(66%)", "(100%)"]) {
        assert!(line.contains(pct), "{line}");
    }
}

#[test]
fn sigterm_stops_rollouts_that_only_retry_a_connection_at_once() {
    let gym = StandIn::start_with(&[AGENT], &["dead_agent"]);
    let dir = tempfile::tempdir().unwrap();
    let input = write_input(dir.path(), 3);
    let out = dir.path().join("r.jsonl");
    let head = gym.head();
    let mut child = crate::common::spawn_gymscope(
        collect_args(&input, &out, "dead_agent", &head, &["--grace", "30"]),
        Stdio::null(),
        Stdio::piped(),
    );
    // Let the rollouts reach their backoff (the first retry is printed after 0 s).
    std::thread::sleep(Duration::from_millis(1500));
    let sent = Instant::now();
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let status = child.wait().unwrap();
    assert!(
        sent.elapsed() < Duration::from_secs(5),
        "took {:?} (grace is 30 s)",
        sent.elapsed()
    );
    assert_eq!(status.code(), Some(130));
    let mut err = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err).unwrap();
    assert_contains(&err, "Connection error to agent `dead_agent`");
    assert!(err.contains("Stopped by SIGTERM"), "{err}");
}

#[test]
fn a_fresh_run_never_replaces_its_input() {
    let (gym, dir, input) = stack_with_input(2);
    let before = std::fs::read(&input).unwrap();
    // -o the input itself, and an input named like the materialized file of -o.
    let named = dir.path().join("r_materialized_inputs.jsonl");
    std::fs::copy(&input, &named).unwrap();
    for (i, o) in [
        (input.clone(), input.clone()),
        (named.clone(), dir.path().join("r.jsonl")),
    ] {
        let r = gymscope(&collect_args(&i, &o, AGENT, &gym.head(), &[]), &[]);
        assert_eq!(r.status.code(), Some(2), "{}", text(&r));
        assert!(text(&r).contains("refusing to write"), "{}", text(&r));
        assert_eq!(std::fs::read(&i).unwrap(), before);
    }
}

/// On a terminal (a pty from `script`): the bar's rate has one decimal, and the bar is cleared
/// before the summary, which starts on its own line.
#[test]
fn on_a_terminal_the_bar_is_cleared_before_the_summary() {
    if Command::new("script").arg("--version").output().is_err() {
        eprintln!("no `script` (util-linux) here: skipped");
        return;
    }
    let gym = StandIn::start(&[AGENT]);
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("input.jsonl");
    let mut s = String::new();
    for i in 0..8 {
        s.push_str(&format!(
            "{{\"responses_create_params\":{{\"input\":[{{\"role\":\"user\",\"content\":\"task {i}\"}}]}},\"fake_behavior\":\"sleep:0.3\"}}\n"
        ));
    }
    std::fs::write(&p, s).unwrap();
    let out = dir.path().join("r.jsonl");
    let log = dir.path().join("tty.log");
    let cmd = format!(
        "{} collect -i {} -o {} -a {AGENT} --head-server {} --concurrency 2",
        env!("CARGO_BIN_EXE_gymscope"),
        p.display(),
        out.display(),
        gym.head()
    );
    let r = Command::new("script")
        .args(["-qfec", &cmd])
        .arg(&log)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(r.status.success(), "{}", text(&r));
    let tty = String::from_utf8_lossy(&std::fs::read(&log).unwrap()).into_owned();
    assert!(
        tty.contains("Collecting rollouts"),
        "the bar was drawn: {tty}"
    );
    let rate = tty
        .split("/s")
        .filter_map(|before| before.rsplit(' ').next())
        .filter(|n| n.parse::<f64>().is_ok() && n.contains('.'))
        .map(|n| n.split('.').nth(1).unwrap().len())
        .collect::<Vec<_>>();
    assert!(
        !rate.is_empty() && rate.iter().all(|d| *d == 1),
        "rate decimals {rate:?}: {tty}"
    );
    // The bar's last drawing is cleared before the summary is printed.
    let at = tty.find("Collected 8 rollouts").expect("summary");
    let before = &tty[..at];
    let last_bar = before
        .rfind("Collecting rollouts")
        .expect("a bar before the summary");
    assert!(
        before[last_bar..].contains("\u{1b}[2K"),
        "summary glued to the bar: {:?}",
        &before[last_bar..]
    );
}

/// `gymscope profile` on a terminal shows a byte progress bar for big files (the size is lowered
/// for the test), cleared before the summary; through a pipe it never draws one.
#[test]
fn profile_shows_a_progress_bar_on_a_terminal_only() {
    let dir = tempfile::tempdir().unwrap();
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/gym-examples/ether0");
    let (inputs, rollouts) = (
        fixture.join("example_rollouts_materialized_inputs.jsonl"),
        fixture.join("example_rollouts.jsonl"),
    );
    let cmd = format!(
        "{} profile --inputs {} --rollouts {} --out-dir {}",
        env!("CARGO_BIN_EXE_gymscope"),
        inputs.display(),
        rollouts.display(),
        dir.path().display()
    );
    let log = dir.path().join("tty.log");
    let r = Command::new("script")
        .args(["-qfec", &cmd])
        .arg(&log)
        .env("GYMSCOPE_PROGRESS_MIN_BYTES", "1")
        .stdin(Stdio::null())
        .output()
        .expect("script (util-linux) runs the command on a pty");
    assert!(r.status.success(), "{}", text(&r));
    let tty = String::from_utf8_lossy(&std::fs::read(&log).unwrap()).into_owned();
    let bar = tty
        .find("Reading")
        .unwrap_or_else(|| panic!("no bar drawn: {tty:?}"));
    let summary = tty.find("Profiling outputs:").expect("summary");
    assert!(bar < summary, "{tty:?}");
    assert!(
        tty[bar..summary].contains("\u{1b}[2K"),
        "the bar is cleared before the summary: {tty:?}"
    );
    // Through a pipe: no bar, however big the files.
    let piped = Command::new(env!("CARGO_BIN_EXE_gymscope"))
        .args(["profile", "--inputs"])
        .arg(&inputs)
        .arg("--rollouts")
        .arg(&rollouts)
        .arg("--out-dir")
        .arg(dir.path())
        .env("GYMSCOPE_PROGRESS_MIN_BYTES", "1")
        .output()
        .unwrap();
    assert!(piped.status.success());
    assert!(!String::from_utf8_lossy(&piped.stderr).contains("Reading"));
}
