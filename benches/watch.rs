//! `gymscope watch`'s costs (issue 62): a refresh reads what was appended, not the file, and
//! memory follows rollouts, not bytes.
//!
//!   1. CPU per refresh against the file's size: a run of about 10 MB and of about 1 GB, each then
//!      grown by the same 1,000 rows (about 6 MB); the refresh that reads them is timed (wall and
//!      CPU, median of 5). Equal figures at both sizes show the cost is the appended bytes'.
//!   2. `gymscope watch --once` (the release binary) on 64 shards totalling about 5 GB: wall time
//!      of the first read and the child's peak RSS.
//!
//!   cargo bench --bench watch                   (data generated once into target/bench-data/watch/)
//!   BENCH_WATCH_GB=1 cargo bench --bench watch  (a smaller part 2)
#![allow(unsafe_code)] // libc::getrusage reads CPU time and the child's peak RSS
#![allow(clippy::unwrap_used)] // a benchmark stops at what must hold

use gymscope::native::follow;
use gymscope::watch::{FileKind, Watch};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// The binary's allocator, so the in-process refresh costs what the CLI's does.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

const ROW_BYTES: usize = 6000;
const AGENTS: [&str; 3] = ["math_with_judge", "library_tool_agent", "cvdp_code_agent"];

fn rusage(who: i32) -> libc::rusage {
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: getrusage fills the struct it is given.
    unsafe { libc::getrusage(who, &raw mut u) };
    u
}

fn cpu_seconds() -> f64 {
    let u = rusage(libc::RUSAGE_SELF);
    let t = |v: libc::timeval| v.tv_sec as f64 + v.tv_usec as f64 / 1e6;
    t(u.ru_utime) + t(u.ru_stime)
}

fn input_line(task: usize, rollout: usize) -> String {
    format!(
        "{{\"responses_create_params\":{{\"input\":[{{\"role\":\"user\",\"content\":\"Task {task}\"}}]}},\"agent_ref\":{{\"name\":\"{}\"}},\"_ng_task_index\":{task},\"_ng_rollout_index\":{rollout}}}\n",
        AGENTS[task % 3]
    )
}

/// A rollout row of about [`ROW_BYTES`] shaped like an agent's: a tool call, its output, an answer.
fn rollout_line(task: usize, rollout: usize, filler: &str) -> String {
    let reward = f64::from(u8::from((task * 7 + rollout) % 3 != 0));
    format!(
        "{{\"responses_create_params\":{{\"input\":[{{\"role\":\"user\",\"content\":\"Task {task}\"}}]}},\"response\":{{\"output\":[{{\"type\":\"function_call\",\"name\":\"python\",\"arguments\":\"{{\\\"code\\\": \\\"print({task})\\\"}}\",\"call_id\":\"c{task}\"}},{{\"type\":\"function_call_output\",\"call_id\":\"c{task}\",\"output\":\"{task}\"}},{{\"type\":\"message\",\"role\":\"assistant\",\"content\":[{{\"type\":\"output_text\",\"text\":\"{filler} \\\\boxed{{{task}}}\"}}]}}],\"usage\":{{\"input_tokens\":812,\"output_tokens\":{},\"total_tokens\":{}}}}},\"reward\":{reward},\"agent_ref\":{{\"name\":\"{}\"}},\"_ng_task_index\":{task},\"_ng_rollout_index\":{rollout}}}\n",
        300 + task % 97,
        1112 + task % 97,
        AGENTS[task % 3]
    )
}

/// Writes a shard of `rows` rollouts (4 repeats a task) from task `first`; returns its rollouts path.
fn shard(dir: &Path, name: &str, first: usize, rows: usize, filler: &str) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    let rollouts = dir.join(format!("{name}.jsonl"));
    let inputs = dir.join(format!("{name}_materialized_inputs.jsonl"));
    if rollouts.exists() && inputs.exists() {
        return rollouts;
    }
    let (mut i, mut r) = (
        BufWriter::new(std::fs::File::create(&inputs).unwrap()),
        BufWriter::new(std::fs::File::create(&rollouts).unwrap()),
    );
    for n in 0..rows {
        let (task, rollout) = (first + n / 4, n % 4);
        i.write_all(input_line(task, rollout).as_bytes()).unwrap();
        r.write_all(rollout_line(task, rollout, filler).as_bytes())
            .unwrap();
    }
    r.flush().unwrap();
    i.flush().unwrap();
    rollouts
}

fn refresh(w: &mut Watch, rollouts: &Path, buf: &mut Vec<u8>) {
    let inputs = gymscope::names::beside(rollouts, gymscope::names::materialized_inputs);
    follow::refresh(w, 0, FileKind::Inputs, &inputs, buf).unwrap();
    follow::refresh(w, 0, FileKind::Rollouts, rollouts, buf).unwrap();
}

fn per_refresh(dir: &Path, rows: usize, filler: &str) {
    let name = format!("grow{rows}");
    let base = shard(dir, &name, 0, rows, filler);
    // A working copy that grows (the generated one stays for the next run).
    let rollouts = dir.join(format!("{name}-work.jsonl"));
    std::fs::copy(&base, &rollouts).unwrap();
    std::fs::copy(
        gymscope::names::beside(&base, gymscope::names::materialized_inputs),
        gymscope::names::beside(&rollouts, gymscope::names::materialized_inputs),
    )
    .unwrap();
    let size = std::fs::metadata(&rollouts).unwrap().len();
    let mut w = Watch::default();
    w.add_shard(rollouts.display().to_string(), String::new(), String::new());
    let mut buf = Vec::new();
    refresh(&mut w, &rollouts, &mut buf);
    let (mut walls, mut cpus, mut appended) = (Vec::new(), Vec::new(), 0);
    for round in 0..5 {
        let block: String = (0..1000)
            .map(|n| rollout_line(1_000_000 + round * 1000 + n, 0, filler))
            .collect();
        appended = block.len();
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(&rollouts)
            .unwrap();
        f.write_all(block.as_bytes()).unwrap();
        drop(f);
        let (t, c) = (Instant::now(), cpu_seconds());
        refresh(&mut w, &rollouts, &mut buf);
        walls.push(t.elapsed().as_secs_f64());
        cpus.push(cpu_seconds() - c);
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let snap = w.snapshot(follow::now());
    println!(
        "refresh after {:>8.1} MB: +{:.1} MB (1,000 rows) read in {:>6.1} ms wall, {:>6.1} ms CPU (median of 5); rows counted {}",
        size as f64 / 1e6,
        appended as f64 / 1e6,
        median(&mut walls) * 1e3,
        median(&mut cpus) * 1e3,
        snap.totals.done
    );
    std::fs::remove_file(&rollouts).unwrap();
    std::fs::remove_file(gymscope::names::beside(
        &rollouts,
        gymscope::names::materialized_inputs,
    ))
    .unwrap();
}

fn many_shards(dir: &Path, gb: f64, filler: &str) {
    let shards = 64;
    let rows_per = ((gb * 1e9) / (ROW_BYTES as f64) / shards as f64) as usize / 4 * 4;
    let mut total = 0;
    for s in 0..shards {
        let p = shard(
            dir,
            &format!("run-shard{s}-of-{shards}"),
            s * rows_per,
            rows_per,
            filler,
        );
        total += std::fs::metadata(&p).unwrap().len();
    }
    let start = Instant::now();
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_gymscope"))
        .args(["watch", "--once", "--format", "json"])
        .arg(dir.join("run-shard*.jsonl"))
        .output()
        .unwrap();
    let wall = start.elapsed().as_secs_f64();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let snap: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let peak = rusage(libc::RUSAGE_CHILDREN).ru_maxrss as f64 / 1024.0;
    println!(
        "watch --once on {shards} shards, {:.2} GB, {} rollouts: {:.1} s ({:.0} MB/s), peak RSS {:.0} MB ({:.0} bytes a rollout)",
        total as f64 / 1e9,
        snap["totals"]["done"],
        wall,
        total as f64 / 1e6 / wall,
        peak,
        peak * 1024.0 * 1024.0 / snap["totals"]["done"].as_f64().unwrap()
    );
}

fn main() {
    let dir = std::env::var_os("BENCH_DATA").map_or_else(
        || PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/bench-data/watch"),
        PathBuf::from,
    );
    let gb: f64 = std::env::var("BENCH_WATCH_GB")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(5.0);
    let filler = "lorem ipsum dolor sit amet ".repeat(ROW_BYTES / 27 - 30);
    println!("rows of about {} bytes", rollout_line(0, 0, &filler).len());
    per_refresh(&dir, 1_600, &filler);
    per_refresh(&dir, 160_000, &filler);
    many_shards(&dir.join("shards"), gb, &filler);
}
