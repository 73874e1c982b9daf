//! Benchmark of `gymscope profile` end to end on two generated runs of 25,000 tasks × 4 repeats =
//! 100,000 rollouts, rows in shuffled order: `agentic` (rows like real agent rollouts: multi-step
//! tool calls with escaped JSON arguments, reasoning, three agents' verifier fields) and `simple`
//! (the older one-message shape). Prints wall time, MB/s, CPU use and the peak RSS.
//! Targets: ≥ 1,000 MB/s on the agentic shape, < 250 MB.
//!
//!   cargo bench --bench profile            (data is generated once into target/bench-data/)
//!   BENCH_TASKS=2500 cargo bench --bench profile   (a smaller run)
//!   BENCH_SHAPES=agentic cargo bench --bench profile
#![allow(unsafe_code)] // libc::getrusage reads the peak RSS measured
#![allow(clippy::unwrap_used)] // a test or benchmark stops at what must hold

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use gymscope_testkit::gen_run;

const REPEATS: usize = 4;
/// Text per rollout: prompt, reasoning and answer (about 4.5 KB with the JSON around it).
const TEXT_BYTES: usize = 3600;

/// The old shape: one reasoning item and one message per rollout (~4.5 KB).
fn generate_simple(dir: &Path, tasks: usize) -> (PathBuf, PathBuf) {
    gen_run::generate(dir, &format!("bench_{tasks}"), tasks, REPEATS, TEXT_BYTES)
}

/// Rows like real agent rollouts: multi-step tool calls with escaped JSON arguments, reasoning,
/// Unicode, three agents with their own verifier fields (~5 KB a rollout).
fn generate_agentic(dir: &Path, tasks: usize) -> (PathBuf, PathBuf) {
    gen_run::generate_agentic(dir, &format!("agentic_{tasks}"), tasks, REPEATS, 4500)
}

/// The children's resource use so far: peak RSS in MB and CPU seconds (user + system).
fn children_usage() -> (f64, f64) {
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &raw mut usage) };
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    (
        usage.ru_maxrss as f64 / 1024.0,
        secs(usage.ru_utime) + secs(usage.ru_stime),
    )
}

/// Runs `gymscope profile` three times; prints each run and the best.
fn bench(shape: &str, inputs: &Path, rollouts: &Path, out_dir: &Path) {
    let size =
        std::fs::metadata(inputs).unwrap().len() + std::fs::metadata(rollouts).unwrap().len();
    let mut times = Vec::new();
    let (_, cpu_before) = children_usage();
    for run in 0..3 {
        let t = Instant::now();
        let status = Command::new(env!("CARGO_BIN_EXE_gymscope"))
            .args(["profile", "--inputs"])
            .arg(inputs)
            .arg("--rollouts")
            .arg(rollouts)
            .arg("--out-dir")
            .arg(out_dir)
            .stdout(std::process::Stdio::null())
            .status()
            .unwrap();
        assert!(status.success());
        let secs = t.elapsed().as_secs_f64();
        println!(
            "  {shape} run {run}: {secs:.2} s, {:.0} MB/s",
            size as f64 / 1e6 / secs
        );
        times.push(secs);
    }
    let (peak, cpu_after) = children_usage();
    let wall: f64 = times.iter().sum();
    times.sort_by(f64::total_cmp);
    let best = times[0];
    println!(
        "{shape}: gymscope profile best {best:.2} s, median {:.2} s, {:.0} MB/s (best, {:.0} MB read), \
         CPU {:.0}% of one core, peak RSS {peak:.1} MB (largest child so far)",
        times[1],
        size as f64 / 1e6 / best,
        size as f64 / 1e6,
        100.0 * (cpu_after - cpu_before) / wall,
    );
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
    let out_dir = dir.join("out");
    let shapes = std::env::var("BENCH_SHAPES").unwrap_or_else(|_| "agentic,simple".into());
    for shape in shapes.split(',') {
        let t0 = Instant::now();
        let (inputs, rollouts) = match shape {
            "simple" => generate_simple(&dir, tasks),
            "agentic" => generate_agentic(&dir, tasks),
            other => panic!("BENCH_SHAPES: unknown shape {other} (agentic, simple)"),
        };
        let mb = |p: &Path| std::fs::metadata(p).unwrap().len() as f64 / 1e6;
        println!(
            "data ({shape}): {} rollouts, rollouts file {:.0} MB + inputs {:.0} MB (ready in {:.1} s)",
            tasks * REPEATS,
            mb(&rollouts),
            mb(&inputs),
            t0.elapsed().as_secs_f64()
        );
        bench(shape, &inputs, &rollouts, &out_dir);
    }
}
