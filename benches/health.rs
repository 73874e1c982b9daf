//! Benchmark of rollout health on a generated realistic run (`tests/common/gen_run.rs`: 25,000
//! tasks × 4 repeats = 100,000 rollouts, about 4.5 KB of text each, three agents, shuffled).
//! Prints, in process: the profile alone, the profile and health in the same read (both fed the
//! same chunks: on one thread, and with health on a second thread as `gymscope report` does),
//! and health alone; then `gymscope health` end to end with its peak RSS. Target: ≥ 400 MB/s for
//! profile + health in the same read.
//!
//!   cargo bench --bench health                   (data generated once into target/bench-data/)
//!   BENCH_TASKS=5000 cargo bench --bench health  (a smaller run)
#![allow(clippy::unwrap_used)] // a test or benchmark stops at what must hold

use gymscope::health::HealthBuilder;
use gymscope::native::read::{for_each_chunk, ReadError};
use gymscope::profile::{ProfileBuilder, ProfileOptions};
use std::path::Path;
use std::process::Command;
use std::time::Instant;

#[path = "../tests/common/gen_run.rs"]
mod gen_run;

const REPEATS: usize = 4;
const TEXT_BYTES: usize = 3600;

/// Peak resident set of the largest child waited for so far, in MB.
fn children_peak_rss_mb() -> f64 {
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &raw mut usage) };
    usage.ru_maxrss as f64 / 1024.0
}

fn best_of(runs: usize, mut f: impl FnMut()) -> f64 {
    (0..runs)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_secs_f64()
        })
        .fold(f64::INFINITY, f64::min)
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let tasks: usize = std::env::var("BENCH_TASKS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(25_000);
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/bench-data");
    let (inputs, rollouts) =
        gen_run::generate(&dir, &format!("bench_{tasks}"), tasks, REPEATS, TEXT_BYTES);
    let in_mb = std::fs::metadata(&inputs).unwrap().len() as f64 / 1e6;
    let r_mb = std::fs::metadata(&rollouts).unwrap().len() as f64 / 1e6;
    println!(
        "data: {} rollouts, rollouts file {r_mb:.0} MB + inputs {in_mb:.0} MB",
        tasks * REPEATS
    );
    let (in_name, r_name) = ("inputs", "rollouts");
    let run = |with_profile: bool, with_health: bool| {
        let mut profile = with_profile.then(|| ProfileBuilder::new(in_name, r_name));
        let mut health = with_health.then(|| HealthBuilder::new(r_name, 1.0));
        for_each_chunk::<ReadError>(&inputs, in_name, |chunk| {
            if let Some(p) = profile.as_mut() {
                p.push_inputs(chunk).unwrap();
            }
            if let Some(h) = health.as_mut() {
                h.push_inputs(in_name, chunk).unwrap();
            }
            Ok(true)
        })
        .unwrap();
        for_each_chunk::<ReadError>(&rollouts, r_name, |chunk| {
            if let Some(p) = profile.as_mut() {
                p.push_rollouts(chunk).unwrap();
            }
            if let Some(h) = health.as_mut() {
                h.push_rollouts(chunk).unwrap();
            }
            Ok(true)
        })
        .unwrap();
        if let Some(p) = profile {
            std::hint::black_box(p.finish(ProfileOptions::default()).unwrap());
        }
        if let Some(h) = health {
            std::hint::black_box(h.finish().unwrap());
        }
    };
    let mb = in_mb + r_mb;
    let t = best_of(3, || run(true, false));
    println!(
        "profile alone:                 {t:.2} s, {:.0} MB/s",
        mb / t
    );
    let t = best_of(3, || run(true, true));
    println!(
        "profile + health, same read:   {t:.2} s, {:.0} MB/s",
        mb / t
    );
    // As `gymscope report` does it: the same chunks, health on a second thread.
    let threaded = || {
        std::thread::scope(|scope| {
            let (tx, rx) = std::sync::mpsc::sync_channel::<(bool, Vec<u8>)>(4);
            let worker = scope.spawn(move || {
                let mut h = HealthBuilder::new(r_name, 1.0);
                for (is_input, chunk) in rx {
                    if is_input {
                        h.push_inputs(in_name, &chunk).unwrap();
                    } else {
                        h.push_rollouts(&chunk).unwrap();
                    }
                }
                h.finish().unwrap()
            });
            let mut p = ProfileBuilder::new(in_name, r_name);
            for_each_chunk::<ReadError>(&inputs, in_name, |chunk| {
                tx.send((true, chunk.to_vec())).unwrap();
                p.push_inputs(chunk).unwrap();
                Ok(true)
            })
            .unwrap();
            for_each_chunk::<ReadError>(&rollouts, r_name, |chunk| {
                tx.send((false, chunk.to_vec())).unwrap();
                p.push_rollouts(chunk).unwrap();
                Ok(true)
            })
            .unwrap();
            drop(tx);
            std::hint::black_box(p.finish(ProfileOptions::default()).unwrap());
            std::hint::black_box(worker.join().unwrap());
        });
    };
    let t = best_of(3, threaded);
    println!(
        "profile + health, same read, health on a 2nd thread (as report): {t:.2} s, {:.0} MB/s",
        mb / t
    );
    let t = best_of(3, || run(false, true));
    println!(
        "health alone (inputs too):     {t:.2} s, {:.0} MB/s",
        mb / t
    );

    let t = best_of(3, || {
        let status = Command::new(env!("CARGO_BIN_EXE_gymscope"))
            .arg("health")
            .arg(&rollouts)
            .arg("--inputs")
            .arg(&inputs)
            .args(["--format", "json"])
            .stdout(std::process::Stdio::null())
            .status()
            .unwrap();
        assert!(status.success());
    });
    println!(
        "gymscope health --inputs: best {t:.2} s, {:.0} MB/s, peak RSS {:.1} MB",
        mb / t,
        children_peak_rss_mb()
    );
}
