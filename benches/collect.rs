//! Benchmark of `gymscope collect` against the in-process Rust stand-in with zero think time:
//! rollouts per second and the collector's peak RSS at concurrency 1, 64 and 1024, for 100,000
//! rows and for a tenth of that (memory must stay flat as rows grow), on a stack older than
//! NeMo Gym v0.7.0 (rows go to the agent) and on a v0.7.0-shaped one (rows go through each
//! agent's environment server and are stamped; the stand-in's relay is in-process, so this
//! measures the collector's own cost of routing). Aggregation is measured separately since its
//! request necessarily holds every stripped row.
//!
//!   cargo bench --bench collect
//!   BENCH_ROWS=20000 cargo bench --bench collect     (a smaller run)
//!   GYMSCOPE_BIN=old/gymscope cargo bench --bench collect   (another build, for before/after)
#![allow(clippy::unwrap_used)] // a test or benchmark stops at what must hold

use gymscope_testkit::{bench, collect_args, gym_standin};

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

fn write_input(path: &Path, rows: usize) {
    let mut s = String::with_capacity(rows * 200);
    for i in 0..rows {
        s.push_str(&format!(
            "{{\"responses_create_params\":{{\"input\":[{{\"role\":\"user\",\"content\":\"What is {i} + {i}? Think step by step.\"}}],\"max_output_tokens\":1024}},\"question_id\":{i}}}\n"
        ));
    }
    std::fs::write(path, s).unwrap();
}

/// Runs gymscope and returns (seconds, peak RSS in MB) of that child alone. The peak is the
/// child's own `VmHWM`, polled until it exits: rusage's maxrss would also count this process's
/// memory at fork time.
fn run(args: &[&str]) -> (f64, f64) {
    let start = Instant::now();
    let bin =
        std::env::var("GYMSCOPE_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_gymscope").into());
    let mut child = Command::new(bin)
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let status_file = format!("/proc/{}/status", child.id());
    let mut peak_kb = 0u64;
    let status = loop {
        if let Ok(s) = std::fs::read_to_string(&status_file) {
            if let Some(kb) = s
                .lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches(" kB").trim().parse().ok())
            {
                peak_kb = peak_kb.max(kb);
            }
        }
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        std::thread::sleep(std::time::Duration::from_millis(2));
    };
    assert!(status.success(), "gymscope failed: {args:?}");
    (start.elapsed().as_secs_f64(), peak_kb as f64 / 1024.0)
}

/// `gymscope collect` of `input` into `out` for `bench_agent` with `--concurrency` and then
/// the rest of `concurrency_and_flags`, as [`run`].
fn collect(input: &Path, out: &Path, head: &str, concurrency_and_flags: &[&str]) -> (f64, f64) {
    let mut args = collect_args(input, out, "bench_agent", head, &["--concurrency"]);
    args.extend(concurrency_and_flags);
    args.push("--no-progress");
    run(&args)
}

fn main() {
    let rows = bench::env_usize("BENCH_ROWS", 100_000);
    for (stack, gym) in [
        (
            "pre-v0.7 stack",
            gym_standin::StandIn::start(&["bench_agent"]),
        ),
        (
            "v0.7 stack    ",
            gym_standin::StandIn::start_v07(&["bench_agent"]),
        ),
    ] {
        bench_stack(stack, &gym, rows);
    }
}

fn bench_stack(stack: &str, gym: &gym_standin::StandIn, rows: usize) {
    let dir = tempfile::tempdir().unwrap();
    let head = gym.head();
    for n in [rows / 10, rows] {
        let input = dir.path().join(format!("input{n}.jsonl"));
        write_input(&input, n);
        for conc in ["1", "64", "1024"] {
            let out = dir.path().join(format!("r{n}_{conc}.jsonl"));
            let (secs, rss) = collect(&input, &out, &head, &[conc, "--disable-aggregation"]);
            gym.runs.lock().unwrap().clear();
            println!(
                "gymscope collect, {stack}: {n:>7} rows, concurrency {conc:>4}: {secs:6.2} s, {:8.0} rollouts/s, peak RSS {rss:6.1} MB",
                n as f64 / secs
            );
        }
        let out = dir.path().join(format!("r{n}_agg.jsonl"));
        let (secs, rss) = collect(&input, &out, &head, &["64"]);
        println!(
            "gymscope collect, {stack}: {n:>7} rows, concurrency   64 with aggregation: {secs:6.2} s, peak RSS {rss:6.1} MB"
        );
    }
}
