//! `collect --progress-file` (issue 62): the count of finished rollouts as a plain integer,
//! replaced atomically as rollouts finish, seeded by a resume; off by default; and `watch`
//! reading the same run while it grows.
#![allow(unsafe_code)] // libc::kill stops the run midway

use crate::common::assert_success;
use crate::common::collect_args;
use crate::common::gym_standin::StandIn;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const AGENT: &str = "standin_agent";

fn input(dir: &Path, n: usize) -> std::path::PathBuf {
    let p = dir.join("input.jsonl");
    let rows: String = (0..n)
        .map(|i| format!("{{\"responses_create_params\":{{\"input\":[{{\"role\":\"user\",\"content\":\"task {i}\"}}]}},\"fake_behavior\":\"sleep:0.05\"}}\n"))
        .collect();
    std::fs::write(&p, rows).unwrap();
    p
}

fn rows(p: &Path) -> usize {
    std::fs::read(p).map_or(0, |b| b.iter().filter(|c| **c == b'\n').count())
}

/// The published count, when the file is there; always a whole integer line.
fn published(p: &Path) -> Option<u64> {
    let text = std::fs::read_to_string(p).ok()?;
    assert!(text.ends_with('\n'), "{text:?}");
    Some(
        text.trim_end()
            .parse()
            .unwrap_or_else(|_| panic!("{text:?}")),
    )
}

#[test]
fn the_count_grows_with_the_rows_survives_a_resume_and_is_off_by_default() {
    let gym = StandIn::start(&[AGENT]);
    let dir = tempfile::tempdir().unwrap();
    let input = input(dir.path(), 60);
    let out = dir.path().join("run.jsonl");
    let progress = dir.path().join("run_progress");
    let head = gym.head();
    let flags = ["--concurrency", "2", "--no-progress"];
    let args = collect_args(&input, &out, AGENT, &head, &flags);
    let mut with_flag = args.clone();
    with_flag.push("--progress-file");
    let mut child = crate::common::spawn_gymscope(&with_flag, Stdio::null(), Stdio::piped());
    let (start, mut seen) = (Instant::now(), Vec::new());
    while rows(&out) < 20 {
        if let Some(status) = child.try_wait().unwrap() {
            let mut err = String::new();
            std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut err).unwrap();
            panic!("collect ended early ({status}): {err}");
        }
        assert!(start.elapsed() < Duration::from_secs(30), "no progress");
        if let Some(n) = published(&progress) {
            // Published after the rows are written: never ahead of the file.
            assert!(n as usize <= rows(&out), "{n} > {}", rows(&out));
            seen.push(n);
        }
        std::thread::sleep(Duration::from_millis(30));
    }
    // `watch` reads the growing run meanwhile.
    let w = Command::new(env!("CARGO_BIN_EXE_gymscope"))
        .args(["watch", "--once", "--format", "json", out.to_str().unwrap()])
        .output()
        .unwrap();
    assert_success(&w);
    let snap: serde_json::Value = serde_json::from_slice(&w.stdout).unwrap();
    assert_eq!(snap["totals"]["expected"], 60);
    assert!(snap["totals"]["done"].as_u64().unwrap() >= 20, "{snap}");
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let r = child.wait_with_output().unwrap();
    assert_eq!(
        r.status.code(),
        Some(130),
        "{}",
        String::from_utf8_lossy(&r.stderr)
    );
    assert!(seen.windows(2).all(|w| w[0] <= w[1]), "{seen:?}");
    let stopped_at = rows(&out) as u64;
    assert_eq!(
        published(&progress),
        Some(stopped_at),
        "the last count is the rows on disk"
    );

    // A resume starts from what is done, and ends at every rollout.
    let mut resume = with_flag.clone();
    resume.push("--resume");
    let r = Command::new(env!("CARGO_BIN_EXE_gymscope"))
        .args(&resume)
        .output()
        .unwrap();
    assert_success(&r);
    assert_eq!(published(&progress), Some(60));
    let leftovers: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
    let w = Command::new(env!("CARGO_BIN_EXE_gymscope"))
        .args(["watch", "--format", "json", out.to_str().unwrap()])
        .output()
        .unwrap();
    let last = String::from_utf8_lossy(&w.stdout)
        .lines()
        .last()
        .unwrap()
        .to_string();
    assert!(last.contains("\"complete\":true"), "{last}");

    // Without the flag nothing is published.
    let plain = dir.path().join("plain.jsonl");
    let mut plain_args = args.clone();
    plain_args[4] = plain.to_str().unwrap();
    let r = Command::new(env!("CARGO_BIN_EXE_gymscope"))
        .args(&plain_args)
        .output()
        .unwrap();
    assert_success(&r);
    assert!(!dir.path().join("plain_progress").exists());
}
