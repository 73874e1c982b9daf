//! Benchmark of `gymscope profile` end to end on a generated realistic run: 25,000 tasks × 4
//! repeats = 100,000 rollouts, about 4.5 KB of text each (~650 MB with inputs), rows in shuffled order.
//! Prints wall time, MB/s and the process's peak RSS. Targets: ≥ 400 MB/s, < 250 MB.
//!
//!   cargo bench --bench profile            (data is generated once into target/bench-data/)
//!   BENCH_TASKS=2500 cargo bench --bench profile   (a smaller run)
#![allow(clippy::unwrap_used)] // a test or benchmark stops at what must hold

use std::path::Path;
use std::process::Command;
use std::time::Instant;

#[path = "../tests/common/gen_run.rs"]
mod gen_run;

const REPEATS: usize = 4;
/// Text per rollout: prompt, reasoning and answer (about 4.5 KB with the JSON around it).
const TEXT_BYTES: usize = 3600;

fn generate(dir: &Path, tasks: usize) -> (std::path::PathBuf, std::path::PathBuf) {
    gen_run::generate(dir, &format!("bench_{tasks}"), tasks, REPEATS, TEXT_BYTES)
}

/// Peak resident set of the largest child waited for so far, in MB.
fn children_peak_rss_mb() -> f64 {
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &raw mut usage) };
    usage.ru_maxrss as f64 / 1024.0
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return; // `cargo test --benches` asks for a list; nothing to list
    }
    let tasks: usize = std::env::var("BENCH_TASKS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(25_000);
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/bench-data");
    let t0 = Instant::now();
    let (inputs, rollouts) = generate(&dir, tasks);
    let size =
        std::fs::metadata(&inputs).unwrap().len() + std::fs::metadata(&rollouts).unwrap().len();
    let rollouts_size = std::fs::metadata(&rollouts).unwrap().len();
    println!(
        "data: {} rollouts, rollouts file {:.0} MB + inputs {:.0} MB (ready in {:.1} s)",
        tasks * REPEATS,
        rollouts_size as f64 / 1e6,
        (size - rollouts_size) as f64 / 1e6,
        t0.elapsed().as_secs_f64()
    );
    let out_dir = dir.join("out");
    let mut times = Vec::new();
    for run in 0..3 {
        let t = Instant::now();
        let status = Command::new(env!("CARGO_BIN_EXE_gymscope"))
            .args(["profile", "--inputs"])
            .arg(&inputs)
            .arg("--rollouts")
            .arg(&rollouts)
            .arg("--out-dir")
            .arg(&out_dir)
            .stdout(std::process::Stdio::null())
            .status()
            .unwrap();
        assert!(status.success());
        let secs = t.elapsed().as_secs_f64();
        println!(
            "run {run}: {secs:.2} s, {:.0} MB/s",
            size as f64 / 1e6 / secs
        );
        times.push(secs);
    }
    times.sort_by(f64::total_cmp);
    let best = times[0];
    println!(
        "gymscope profile: best {best:.2} s, median {:.2} s, {:.0} MB/s (best, {:.0} MB read), peak RSS {:.1} MB",
        times[1],
        size as f64 / 1e6 / best,
        size as f64 / 1e6,
        children_peak_rss_mb()
    );
}
