//! What the benches share: `--list` (cargo's listing, answered with nothing), sizes from the
//! environment, the data folder, the gymscope binary timed, and the CPU time and peak RSS of
//! the finished children.
#![allow(unsafe_code)] // libc::getrusage and libc::wait4 read the CPU time and peak RSS measured

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

pub use crate::gen_run::Rng;

/// `cargo bench -- --list` (and `cargo test --benches`) asks a bench for its list: there is none.
pub fn listing_only() -> bool {
    std::env::args().any(|a| a == "--list")
}

/// The workspace's root, or `None` when cargo only asks for the list (see [`listing_only`]).
pub fn root() -> Option<&'static Path> {
    (!listing_only()).then(crate::repo_root)
}

/// Runs `command` to its end with its stdout discarded; stops the bench unless it succeeded.
pub fn run_quiet(command: &mut Command) {
    let status = command
        .stdout(std::process::Stdio::null())
        .status()
        .unwrap();
    assert!(status.success());
}

/// Adds `profile --inputs <inputs> --rollouts <rollouts> --out-dir <out_dir>` to `command`.
pub fn profile_args<'a>(
    command: &'a mut Command,
    inputs: &Path,
    rollouts: &Path,
    out_dir: &Path,
) -> &'a mut Command {
    command.args(["profile", "--inputs"]).arg(inputs);
    command.arg("--rollouts").arg(rollouts);
    command.arg("--out-dir").arg(out_dir)
}

/// Makes `path` with `generate` (once: a generator skips a file already there) and prints
/// `data: <MB> MB <what> (ready in <s> s)`; the file's size in MB.
pub fn generated(path: &Path, what: &str, generate: impl FnOnce(&Path)) -> f64 {
    let t0 = Instant::now();
    generate(path);
    let mb = file_mb(path);
    println!(
        "data: {mb:.0} MB {what} (ready in {:.1} s)",
        t0.elapsed().as_secs_f64()
    );
    mb
}

/// A whole number from the environment variable `name`, or `default` when unset or not a number.
pub fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// `target/bench-data` of the workspace, where the benches generate their data once.
pub fn data_dir() -> PathBuf {
    crate::repo_root().join("target/bench-data")
}

/// A file's size in MB (10^6 bytes).
pub fn file_mb(p: &Path) -> f64 {
    std::fs::metadata(p).unwrap().len() as f64 / 1e6
}

/// Peak RSS (MB) and user / system CPU seconds of this process (`libc::RUSAGE_SELF`) or of its
/// finished children (`libc::RUSAGE_CHILDREN`).
pub fn usage(who: libc::c_int) -> (f64, f64, f64) {
    // SAFETY: getrusage fills the zeroed struct it is given.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(who, &raw mut usage) };
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    (
        usage.ru_maxrss as f64 / 1024.0,
        secs(usage.ru_utime),
        secs(usage.ru_stime),
    )
}

/// Peak RSS (MB) and user / system CPU seconds of the finished children.
pub fn children_usage() -> (f64, f64, f64) {
    usage(libc::RUSAGE_CHILDREN)
}

/// The largest peak RSS (MB) of any finished child so far.
pub fn children_peak_rss_mb() -> f64 {
    children_usage().0
}

/// Runs `exe` with `args`, its output discarded; returns (seconds, exit code, peak RSS in MB) of
/// that child alone.
pub fn run_reaped(exe: &str, args: &[&str]) -> (f64, i32, f64) {
    let t = Instant::now();
    // Waited for with wait4 below, which also gives this child's own peak RSS.
    #[allow(clippy::zombie_processes)]
    let child = Command::new(exe)
        .args(args)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut status = 0;
    // SAFETY: wait4 fills the status and the zeroed struct it is given, for our own child.
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

/// Runs `command` to its end, stops the bench with its stderr when it fails; returns its wall
/// time in seconds.
pub fn time_ok(command: &mut Command) -> f64 {
    let t = Instant::now();
    let out = command.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    t.elapsed().as_secs_f64()
}

/// The pivot benches' words (`pivot`, `build_pivot`): ticket-desk prose with accents and arrows.
const WORDS: &[&str] = &[
    "ticket", "order", "refund", "seat", "policy", "customer", "verify", "event", "the", "and",
    "agent", "must", "before", "après", "über", "→", "request", "confirm", "user", "id",
];

/// About `bytes` bytes of those words (a newline now and then) as a JSON string literal.
pub fn words(rng: &mut Rng, bytes: usize) -> String {
    let mut s = String::with_capacity(bytes + 16);
    while s.len() < bytes {
        s.push_str(WORDS[rng.below(WORDS.len())]);
        s.push(if rng.below(15) == 0 { '\n' } else { ' ' });
    }
    serde_json::to_string(&s).unwrap()
}

/// Writes `path` once (kept when it exists) with lines of `line(rng, tools, system, row)` for
/// rows 0, 1, ... until it holds `megabytes` MB; `tools` are [`tools`] and `system` a 6 KB
/// system prompt, both drawn first from the pivot benches' seed.
pub fn write_lines_once(
    path: &Path,
    megabytes: usize,
    mut line: impl FnMut(&mut Rng, &str, &str, usize) -> String,
) {
    if path.exists() {
        return;
    }
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let mut rng = Rng(0x5DEE_CE66_D1CE_4E5B);
    let mut w = BufWriter::new(File::create(path).unwrap());
    let (mut written, mut row) = (0usize, 0usize);
    let tools = tools(&mut rng);
    let system = words(&mut rng, 6000);
    while written < megabytes * 1_000_000 {
        let line = line(&mut rng, &tools, &system, row);
        w.write_all(line.as_bytes()).unwrap();
        w.write_all(b"\n").unwrap();
        written += line.len() + 1;
        row += 1;
    }
    w.flush().unwrap();
}

/// 14 tools with JSON schemas (`tool_0` .. `tool_13`) as a JSON array.
pub fn tools(rng: &mut Rng) -> String {
    let items: Vec<String> = (0..14)
        .map(|i| {
            format!(
                r#"{{"type":"function","name":"tool_{i}","description":{},"parameters":{{"type":"object","properties":{{"order_id":{{"type":"string","description":"The order id"}},"quantity":{{"type":"integer"}},"reason":{{"type":"string","enum":["a","b","c"]}}}},"required":["order_id"],"additionalProperties":false}},"strict":true}}"#,
                words(rng, 150)
            )
        })
        .collect();
    format!("[{}]", items.join(","))
}
