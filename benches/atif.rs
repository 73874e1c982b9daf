//! Benchmark of ATIF: `export --format atif` of N rollouts shaped as v0.7.0's simple_agent writes
//! them (the `tool_then_answer` fixture's first row, re-keyed), then the exported folder read
//! back as a run (`query --count` with `--rewards`) and checked (`validate-atif`). Prints wall
//! time, rollouts per second and the child's own peak RSS for each.
//!
//!   cargo bench --bench atif
//!   ATIF_ROLLOUTS=20000 cargo bench --bench atif
//!
//! For comparison, NeMo Gym v0.7.0's `gym eval export` on 5,000 live-stack rows (75 MB) took
//! 33 s and 270 MB where gymscope took 3.5 s and 16 MB (docs/atif.md).
#![allow(clippy::unwrap_used)] // a benchmark stops at what must hold

use gymscope_testkit::bench;
use serde_json::Value;
use std::io::Write;
use std::path::Path;

/// Runs gymscope with `args`; returns (seconds, exit code, peak RSS in MB) of that child alone.
/// Runs the CLI; a figure of a failed run would measure nothing, so the bench stops there.
fn run(args: &[&str]) -> (f64, i32, f64) {
    let ran = bench::run_reaped(env!("CARGO_BIN_EXE_gymscope"), args);
    assert_eq!(ran.1, 0, "gymscope {} failed", args.join(" "));
    ran
}

fn main() {
    if bench::listing_only() {
        return;
    }
    let n = bench::env_usize("ATIF_ROLLOUTS", 5000);
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = root.join("target/bench-data/atif");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let fixture = root.join("tests/fixtures/atif-v07/tool_then_answer/rollouts.jsonl");
    let first = std::fs::read_to_string(fixture).unwrap();
    let row: Value = serde_json::from_str(first.lines().next().unwrap()).unwrap();
    let rollouts = dir.join("rollouts.jsonl");
    let mut out = std::io::BufWriter::new(std::fs::File::create(&rollouts).unwrap());
    for i in 0..n {
        let mut r = row.clone();
        r["_ng_task_index"] = Value::from(i / 4);
        r["_ng_rollout_index"] = Value::from(i % 4);
        serde_json::to_writer(&mut out, &r).unwrap();
        out.write_all(b"\n").unwrap();
    }
    drop(out);
    let mb = bench::file_mb(&rollouts);
    let (r, o) = (rollouts.to_str().unwrap(), dir.join("out"));
    let o = o.to_str().unwrap();
    let (secs, code, rss) = run(&[
        "export",
        "--rollouts",
        r,
        "--output-dir",
        o,
        "--session-id",
        "s",
        "--agent-version",
        "1",
    ]);
    println!("export: {n} rollouts ({mb:.1} MB): {secs:.2} s ({:.0} rollouts/s), exit {code}, peak RSS {rss:.1} MB", n as f64 / secs);
    let (secs, code, rss) = run(&["query", o, "--count", "text ~ /cold/", "--rewards", r]);
    println!("query on the folder: {secs:.2} s ({:.0} trajectories/s), exit {code}, peak RSS {rss:.1} MB", n as f64 / secs);
    let (secs, code, rss) = run(&["validate-atif", o]);
    println!("validate-atif on the folder: {secs:.2} s ({:.0} files/s), exit {code}, peak RSS {rss:.1} MB", n as f64 / secs);
}
