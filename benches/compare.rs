//! Benchmark of `gymscope compare` on two generated runs of the same 25,000 tasks × 4 repeats
//! (100,000 rollouts each, ~4.5 KB of text per rollout; B holds the tasks under other indices,
//! with another temperature and other rewards, so pairing is by content). Prints, per command,
//! the best of three wall times and the peak RSS of that process: profiling A and B (the
//! target: comparing takes no more than about that), comparing the runs (JSON, and with the
//! report), comparing their two `*_reward_profiling.jsonl` files, and A against B and A again
//! (two candidates judged).
//!
//!   cargo bench --bench compare             (data generated once into target/bench-data/)
//!   BENCH_TASKS=2500 cargo bench --bench compare
#![allow(unsafe_code)] // libc::getrusage reads the peak RSS measured
#![allow(clippy::unwrap_used)] // a test or benchmark stops at what must hold

use gymscope_testkit::bench;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use gymscope_testkit::gen_run;

const REPEATS: usize = 4;
const TEXT_BYTES: usize = 3600;

/// Runs the command, returning its wall time, its CPU time (user + system: less sensitive to
/// other work on a shared machine) and its own peak RSS in MB.
fn measure(args: &[&OsStr]) -> (f64, f64, f64) {
    let t = Instant::now();
    // Reaped by `wait4` below, which also gives this child's own peak RSS.
    #[allow(clippy::zombie_processes)]
    let child = Command::new(env!("CARGO_BIN_EXE_gymscope"))
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut status = 0;
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let pid = unsafe { libc::wait4(child.id() as i32, &raw mut status, 0, &raw mut usage) };
    let secs = t.elapsed().as_secs_f64();
    assert_eq!(pid, child.id() as i32);
    assert!(
        libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        "{args:?} failed"
    );
    let cpu = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    (
        secs,
        cpu(usage.ru_utime) + cpu(usage.ru_stime),
        usage.ru_maxrss as f64 / 1024.0,
    )
}

/// Best of three runs (wall time, and the least CPU time), with the largest peak RSS seen.
fn best(label: &str, args: &[&OsStr]) -> (f64, f64) {
    let mut times = Vec::new();
    let (mut cpu, mut rss) = (f64::INFINITY, 0.0f64);
    for _ in 0..3 {
        let (t, c, r) = measure(args);
        times.push(t);
        cpu = cpu.min(c);
        rss = rss.max(r);
    }
    times.sort_by(f64::total_cmp);
    println!(
        "{label}: best {:.2} s, median {:.2} s, CPU {cpu:.2} s, peak RSS {rss:.1} MB",
        times[0], times[1]
    );
    (times[0], cpu)
}

fn profile_args<'a>(inputs: &'a Path, rollouts: &'a Path, out: &'a Path) -> [&'a OsStr; 7] {
    [
        OsStr::new("profile"),
        OsStr::new("--inputs"),
        inputs.as_os_str(),
        OsStr::new("--rollouts"),
        rollouts.as_os_str(),
        OsStr::new("--out-dir"),
        out.as_os_str(),
    ]
}

fn main() {
    if bench::listing_only() {
        return; // `cargo test --benches` asks for a list; nothing to list
    }
    let tasks = bench::env_usize("BENCH_TASKS", 25_000);
    let dir = bench::data_dir();
    let size = bench::file_mb;
    let t0 = Instant::now();
    let gen = |name: &str, variant| -> (PathBuf, PathBuf) {
        let name = format!("{name}_{tasks}");
        gen_run::generate_variant(&dir, &name, tasks, REPEATS, TEXT_BYTES, variant)
    };
    let (ia, ra) = gen("compare_a", 0);
    let (ib, rb) = gen("compare_b", 1);
    println!(
        "data: 2 × {} rollouts, {:.0} MB + {:.0} MB with inputs (ready in {:.1} s)",
        tasks * REPEATS,
        size(&ia) + size(&ra),
        size(&ib) + size(&rb),
        t0.elapsed().as_secs_f64()
    );
    let out = dir.join("compare-out");
    std::fs::create_dir_all(&out).unwrap();
    let os = OsStr::new;
    let pa = best("profile A", &profile_args(&ia, &ra, &out));
    let pb = best("profile B", &profile_args(&ib, &rb, &out));
    let both = (pa.0 + pb.0, pa.1 + pb.1);
    println!("profiling both: {:.2} s, CPU {:.2} s", both.0, both.1);
    let cmp = best(
        "compare A B --format json",
        &[
            os("compare"),
            ra.as_os_str(),
            rb.as_os_str(),
            os("--format"),
            os("json"),
        ],
    );
    let report = out.join("compare.html");
    let with_report = best(
        "compare A B --report (20 tasks' conversations)",
        &[
            os("compare"),
            ra.as_os_str(),
            rb.as_os_str(),
            os("--report"),
            report.as_os_str(),
        ],
    );
    println!("report: {:.1} MB", size(&report));
    let stem = |r: &PathBuf| r.file_stem().unwrap().to_string_lossy().to_string();
    let (fa, fb) = (
        out.join(format!("{}_reward_profiling.jsonl", stem(&ra))),
        out.join(format!("{}_reward_profiling.jsonl", stem(&rb))),
    );
    best(
        "compare of the two profiling files",
        &[os("compare"), fa.as_os_str(), fb.as_os_str()],
    );
    // Several candidates: each paired and judged (permutation test per metric, Holm).
    best(
        "compare of three profiling files (A against B and A)",
        &[
            os("compare"),
            fa.as_os_str(),
            fb.as_os_str(),
            fa.as_os_str(),
        ],
    );
    println!(
        "compare / profiling both: wall {:.2} (json), {:.2} (with report); CPU {:.2}, {:.2}",
        cmp.0 / both.0,
        with_report.0 / both.0,
        cmp.1 / both.1,
        with_report.1 / both.1
    );
}
