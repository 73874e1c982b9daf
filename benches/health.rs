//! Benchmark of rollout health on a generated realistic run (`crates/gymscope-testkit/src/gen_run.rs`: 25,000
//! tasks × 4 repeats = 100,000 rollouts, about 4.5 KB of text each, three agents, shuffled).
//! Two shapes: `agentic` (rows like real agent rollouts: multi-step tool calls, escaped JSON
//! arguments) and `simple`. Prints, in process: the profile alone and the profile with health in
//! the same read, both as the CLI reads a run (`native::run_read`, every core), and health alone
//! on one thread; then `gymscope health` end to end with its peak RSS. Target: ≥ 400 MB/s for
//! profile + health in the same read.
//!
//!   cargo bench --bench health                   (data generated once into target/bench-data/)
//!   BENCH_TASKS=5000 cargo bench --bench health  (a smaller run)
#![allow(unsafe_code)] // libc::getrusage reads the CPU time measured
#![allow(clippy::unwrap_used)] // a test or benchmark stops at what must hold

use gymscope::health::HealthBuilder;
use gymscope::native::read::{for_each_chunk, ReadError};
use gymscope::native::run_read::read_run;
use gymscope::profile::ProfileOptions;
use gymscope_testkit::bench;
use std::path::Path;
use std::process::Command;
use std::time::Instant;

use gymscope_testkit::gen_run;

/// The binary's allocator and setting, so that the in-process reads cost what the CLI's do.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

const REPEATS: usize = 4;
const TEXT_BYTES: usize = 3600;

/// User + system CPU seconds of this process (`RUSAGE_SELF`) or of its waited-for children.
fn cpu_seconds(who: libc::c_int) -> f64 {
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(who, &raw mut usage) };
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    secs(usage.ru_utime) + secs(usage.ru_stime)
}

/// The fastest of `runs` runs: its wall seconds and the CPU seconds it took (every thread; the
/// machine may be shared, so CPU says what the work costs when wall time is stretched by load).
fn best_of(runs: usize, who: libc::c_int, mut f: impl FnMut()) -> (f64, f64) {
    (0..runs)
        .map(|_| {
            let (t, cpu) = (Instant::now(), cpu_seconds(who));
            f();
            (t.elapsed().as_secs_f64(), cpu_seconds(who) - cpu)
        })
        .fold((f64::INFINITY, 0.0), |best, run| {
            if run.0 < best.0 {
                run
            } else {
                best
            }
        })
}

/// The load average over the last minute (the machine may be shared).
fn load() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|l| l.split_whitespace().next().map(str::to_string))
        .unwrap_or_else(|| "?".into())
}

fn main() {
    if bench::listing_only() {
        return;
    }
    gymscope::native::allocator::configure();
    let tasks = bench::env_usize("BENCH_TASKS", 25_000);
    let dir = bench::data_dir();
    let shapes = std::env::var("BENCH_SHAPES").unwrap_or_else(|_| "agentic,simple".into());
    for shape in shapes.split(',') {
        let (inputs, rollouts) = match shape {
            "agentic" => {
                gen_run::generate_agentic(&dir, &format!("agentic_{tasks}"), tasks, REPEATS, 4500)
            }
            "simple" => {
                gen_run::generate(&dir, &format!("bench_{tasks}"), tasks, REPEATS, TEXT_BYTES)
            }
            other => panic!("BENCH_SHAPES: unknown shape {other} (agentic, simple)"),
        };
        bench(shape, &inputs, &rollouts);
    }
}

fn bench(shape: &str, inputs: &Path, rollouts: &Path) {
    let in_mb = bench::file_mb(inputs);
    let r_mb = bench::file_mb(rollouts);
    println!("data ({shape}): rollouts file {r_mb:.0} MB + inputs {in_mb:.0} MB");
    let mb = in_mb + r_mb;
    // As `gymscope profile` and `gymscope report` read a run: every core, one read.
    let read = |with_health: bool| {
        let health = with_health.then(|| HealthBuilder::new("rollouts", 1.0));
        let (builder, health) = read_run(inputs, rollouts, u64::MAX, health, |_| {}).unwrap();
        std::hint::black_box(builder.finish(ProfileOptions::default()).unwrap());
        if let Some(h) = health {
            std::hint::black_box(h.unwrap());
        }
    };
    let (t, cpu) = best_of(3, libc::RUSAGE_SELF, || read(false));
    println!(
        "  profile alone (every core):           {t:.2} s, {:.0} MB/s, CPU {cpu:.2} s, load {}",
        mb / t,
        load()
    );
    let (t, cpu) = best_of(3, libc::RUSAGE_SELF, || read(true));
    println!(
        "  profile + health, same read (report): {t:.2} s, {:.0} MB/s, CPU {cpu:.2} s, load {}",
        mb / t,
        load()
    );
    let (in_name, r_name) = ("inputs", "rollouts");
    let (t, cpu) = best_of(3, libc::RUSAGE_SELF, || {
        let mut h = HealthBuilder::new(r_name, 1.0);
        for_each_chunk::<ReadError>(inputs, in_name, |chunk| {
            h.push_inputs(in_name, chunk).unwrap();
            Ok(true)
        })
        .unwrap();
        for_each_chunk::<ReadError>(rollouts, r_name, |chunk| {
            h.push_rollouts(chunk).unwrap();
            Ok(true)
        })
        .unwrap();
        std::hint::black_box(h.finish().unwrap());
    });
    println!(
        "  health alone, one thread:             {t:.2} s, {:.0} MB/s, CPU {cpu:.2} s, load {}",
        mb / t,
        load()
    );
    let (t, cpu) = best_of(3, libc::RUSAGE_CHILDREN, || {
        bench::run_quiet(
            Command::new(env!("CARGO_BIN_EXE_gymscope"))
                .arg("health")
                .arg(rollouts)
                .arg("--inputs")
                .arg(inputs)
                .args(["--format", "json"]),
        );
    });
    println!(
        "  gymscope health --inputs: best {t:.2} s, {:.0} MB/s, CPU {cpu:.2} s, peak RSS {:.1} MB, load {}",
        mb / t,
        bench::children_peak_rss_mb(),
        load()
    );
}
