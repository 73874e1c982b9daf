//! Benchmark of `gymscope profile` on the shapes the hostile-input campaign found quadratic
//! (issue 10, items 1–3). Prints wall time and the child's own peak RSS for each:
//! - `own-field`: N tasks, one rollout each, every task with its own numeric field (1 MB of
//!   input for 4,000 tasks): memory must follow the data, not tasks × fields;
//! - `wide-row`: one rollout row with K numeric fields (2.4 MB at 128,000): time must be linear;
//! - `endless-line`: `/dev/zero` as the rollouts file with `--max-line-bytes 64 MiB`: fails with
//!   exit 1 holding no more than the limit.
//!
//!   cargo bench --bench hostile
//!   HOSTILE_TASKS=8000 HOSTILE_FIELDS=256000 cargo bench --bench hostile
#![allow(unsafe_code)] // libc::getrusage reads the peak RSS measured
#![allow(clippy::unwrap_used)] // a test or benchmark stops at what must hold

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

fn env_or(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn own_field(dir: &Path, tasks: usize) -> (PathBuf, PathBuf) {
    let m = dir.join(format!("own_{tasks}_materialized_inputs.jsonl"));
    let r = dir.join(format!("own_{tasks}.jsonl"));
    let mut mi = std::io::BufWriter::new(std::fs::File::create(&m).unwrap());
    let mut ro = std::io::BufWriter::new(std::fs::File::create(&r).unwrap());
    for t in 0..tasks {
        writeln!(
            mi,
            r#"{{"_ng_task_index":{t},"_ng_rollout_index":0,"agent_ref":{{"name":"a"}}}}"#
        )
        .unwrap();
        writeln!(ro, r#"{{"_ng_task_index":{t},"_ng_rollout_index":0,"agent_ref":{{"name":"a"}},"reward":1.0,"f{t}":{t}}}"#).unwrap();
    }
    (m, r)
}

fn wide_row(dir: &Path, fields: usize) -> (PathBuf, PathBuf) {
    let m = dir.join(format!("wide_{fields}_materialized_inputs.jsonl"));
    let r = dir.join(format!("wide_{fields}.jsonl"));
    std::fs::write(
        &m,
        "{\"_ng_task_index\":0,\"_ng_rollout_index\":0,\"agent_ref\":{\"name\":\"a\"}}\n",
    )
    .unwrap();
    let mut row = String::from(
        "{\"_ng_task_index\":0,\"_ng_rollout_index\":0,\"agent_ref\":{\"name\":\"a\"},\"reward\":1.0",
    );
    for i in 0..fields {
        row.push_str(&format!(",\"x{i}\":{i}"));
    }
    row.push_str("}\n");
    std::fs::write(&r, row).unwrap();
    (m, r)
}

/// Runs gymscope with `args`; returns (seconds, exit code, peak RSS in MB) of that child alone.
fn run(args: &[&str]) -> (f64, i32, f64) {
    let t = Instant::now();
    // Waited for with wait4 below, which also gives this child's own peak RSS.
    #[allow(clippy::zombie_processes)]
    let child = Command::new(env!("CARGO_BIN_EXE_gymscope"))
        .args(args)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut status = 0;
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::wait4(child.id() as i32, &raw mut status, 0, &raw mut usage) };
    let code = if libc::WIFEXITED(status) {
        libc::WEXITSTATUS(status)
    } else {
        128 + libc::WTERMSIG(status)
    };
    (
        t.elapsed().as_secs_f64(),
        code,
        usage.ru_maxrss as f64 / 1024.0,
    )
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/bench-data/hostile");
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join("out");
    let out_s = out.to_str().unwrap();
    let tasks = env_or("HOSTILE_TASKS", 4000);
    let (m, r) = own_field(&dir, tasks);
    let (secs, code, rss) = run(&[
        "profile",
        "--inputs",
        m.to_str().unwrap(),
        "--rollouts",
        r.to_str().unwrap(),
        "--out-dir",
        out_s,
    ]);
    println!("own-field: {tasks} tasks each with its own field: {secs:.2} s, exit {code}, peak RSS {rss:.1} MB");
    let fields = env_or("HOSTILE_FIELDS", 128_000);
    let (m, r) = wide_row(&dir, fields);
    let (secs, code, rss) = run(&[
        "profile",
        "--inputs",
        m.to_str().unwrap(),
        "--rollouts",
        r.to_str().unwrap(),
        "--out-dir",
        out_s,
    ]);
    println!("wide-row: one row with {fields} numeric fields: {secs:.2} s, exit {code}, peak RSS {rss:.1} MB");
    let (m, _) = own_field(&dir, 10);
    let (secs, code, rss) = run(&[
        "profile",
        "--inputs",
        m.to_str().unwrap(),
        "--rollouts",
        "/dev/zero",
        "--out-dir",
        out_s,
        "--max-line-bytes",
        "67108864",
    ]);
    println!("endless-line: /dev/zero with a 64 MiB limit: {secs:.2} s, exit {code}, peak RSS {rss:.1} MB");
}
