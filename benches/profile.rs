//! Benchmark of `gymscope profile` end to end on generated runs of 25,000 tasks × 4 repeats =
//! 100,000 rollouts, rows in shuffled order: `agentic` (rows like real agent rollouts: multi-step
//! tool calls with escaped JSON arguments, reasoning, three agents' verifier fields), `simple`
//! (the older one-message shape) and `dense` (structure-dense gymnasium rows: every
//! Responses-API default written out, many short strings and nulls, small tool-call turns; about
//! twice the quotes and values per KB of the others, so twice the reader's work per byte).
//! Prints each shape's density (quotes, backslashes per KB, JSON values a row), then wall time,
//! MB/s, CPU use and the peak RSS. Targets: ≥ 1,000 MB/s on every shape, < 250 MB.
//!
//!   cargo bench --bench profile            (data is generated once into target/bench-data/)
//!   BENCH_TASKS=2500 cargo bench --bench profile   (a smaller run)
//!   BENCH_SHAPES=dense cargo bench --bench profile (shapes: agentic, simple, dense)
#![allow(clippy::unwrap_used)] // a test or benchmark stops at what must hold

use gymscope_testkit::bench;
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

/// Structure-dense gymnasium rows (~4.7 KB a rollout, ~64 quotes per KB).
fn generate_dense(dir: &Path, tasks: usize) -> (PathBuf, PathBuf) {
    gen_run::generate_dense(dir, &format!("dense_{tasks}"), tasks, REPEATS)
}

/// How structure-dense a rollouts file is: quotes and backslashes per KB (all of them, escaped
/// or not), and the JSON values of its first 1,000 rows on average (all, and the scalars alone).
fn density(rollouts: &Path) -> String {
    use std::io::{BufRead, BufReader, Read};
    let (mut quotes, mut backslashes, mut total) = (0usize, 0usize, 0usize);
    let mut file = std::fs::File::open(rollouts).unwrap();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = file.read(&mut buf).unwrap();
        if n == 0 {
            break;
        }
        quotes += buf[..n].iter().filter(|&&b| b == b'"').count();
        backslashes += buf[..n].iter().filter(|&&b| b == b'\\').count();
        total += n;
    }
    /// A value's values, itself included: (all, scalars).
    fn values(v: &serde_json::Value) -> (usize, usize) {
        let inner = |items: &mut dyn Iterator<Item = &serde_json::Value>| {
            items
                .map(values)
                .fold((1, 0), |a, b| (a.0 + b.0, a.1 + b.1))
        };
        match v {
            serde_json::Value::Array(a) => inner(&mut a.iter()),
            serde_json::Value::Object(o) => inner(&mut o.values()),
            _ => (1, 1),
        }
    }
    let rows: Vec<(usize, usize)> = BufReader::new(std::fs::File::open(rollouts).unwrap())
        .lines()
        .take(1000)
        .map(|l| values(&serde_json::from_str(&l.unwrap()).unwrap()))
        .collect();
    let per_row = |f: fn(&(usize, usize)) -> usize| {
        rows.iter().map(f).sum::<usize>() as f64 / rows.len() as f64
    };
    let kb = total as f64 / 1e3;
    format!(
        "{:.0} quotes and {:.0} backslashes per KB, {:.0} JSON values a row ({:.0} scalars)",
        quotes as f64 / kb,
        backslashes as f64 / kb,
        per_row(|r| r.0),
        per_row(|r| r.1)
    )
}

/// The children's resource use so far: peak RSS in MB and CPU seconds (user + system).
fn children_usage() -> (f64, f64) {
    let (rss, user, sys) = bench::children_usage();
    (rss, user + sys)
}

/// Runs `gymscope profile` three times; prints each run and the best.
fn bench(shape: &str, inputs: &Path, rollouts: &Path, out_dir: &Path) {
    let size =
        std::fs::metadata(inputs).unwrap().len() + std::fs::metadata(rollouts).unwrap().len();
    let mut times = Vec::new();
    let (_, cpu_before) = children_usage();
    for run in 0..3 {
        let t = Instant::now();
        bench::run_quiet(bench::profile_args(
            &mut Command::new(env!("CARGO_BIN_EXE_gymscope")),
            inputs,
            rollouts,
            out_dir,
        ));
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
    if bench::listing_only() {
        return; // `cargo test --benches` asks for a list; nothing to list
    }
    let tasks = bench::env_usize("BENCH_TASKS", 25_000);
    let dir = bench::data_dir();
    let out_dir = dir.join("out");
    let shapes = std::env::var("BENCH_SHAPES").unwrap_or_else(|_| "agentic,simple".into());
    for shape in shapes.split(',') {
        let t0 = Instant::now();
        let (inputs, rollouts) = match shape {
            "simple" => generate_simple(&dir, tasks),
            "agentic" => generate_agentic(&dir, tasks),
            "dense" => generate_dense(&dir, tasks),
            other => panic!("BENCH_SHAPES: unknown shape {other} (agentic, simple, dense)"),
        };
        let mb = bench::file_mb;
        println!(
            "data ({shape}): {} rollouts, rollouts file {:.0} MB ({:.1} KB a line) + inputs {:.0} MB \
             (ready in {:.1} s); {}",
            tasks * REPEATS,
            mb(&rollouts),
            mb(&rollouts) * 1e3 / (tasks * REPEATS) as f64,
            mb(&inputs),
            t0.elapsed().as_secs_f64(),
            density(&rollouts)
        );
        bench(shape, &inputs, &rollouts, &out_dir);
    }
}
