//! Benchmark of `gymscope validate-pivot` on a generated ~500 MB pivot file (rows like upstream's
//! examples: a long system prompt, prior turns and tool calls, 14 tools with JSON schemas).
//! Prints wall time, MB/s and peak RSS. Target: at least 300 MB/s.
//!
//!   cargo bench --bench pivot              (data generated once into target/bench-data/)
//!   BENCH_PIVOT_MB=50 cargo bench --bench pivot
#![allow(unsafe_code)] // libc::getrusage reads the peak RSS measured
#![allow(clippy::unwrap_used)] // a test or benchmark stops at what must hold

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;
use std::process::Command;
use std::time::Instant;

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

const WORDS: &[&str] = &[
    "ticket", "order", "refund", "seat", "policy", "customer", "verify", "event", "the", "and",
    "agent", "must", "before", "après", "über", "→", "request", "confirm", "user", "id",
];

fn words(rng: &mut Rng, bytes: usize) -> String {
    let mut s = String::with_capacity(bytes + 16);
    while s.len() < bytes {
        s.push_str(WORDS[rng.below(WORDS.len())]);
        s.push(if rng.below(15) == 0 { '\n' } else { ' ' });
    }
    serde_json::to_string(&s).unwrap()
}

fn tools(rng: &mut Rng) -> String {
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

fn generate(path: &Path, megabytes: usize) {
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
        let action = if row % 3 == 0 {
            format!(r#"{{"type":"message","content":{}}}"#, words(&mut rng, 200))
        } else {
            format!(
                r#"{{"type":"function_call","name":"tool_{}","arguments":"{{\"order_id\": \"O{row}\", \"quantity\": 2}}"}}"#,
                row % 14
            )
        };
        let line = format!(
            r#"{{"responses_create_params":{{"input":[{{"type":"message","role":"system","content":{system}}},{{"type":"message","role":"user","content":{}}},{{"type":"function_call","name":"tool_1","arguments":"{{\"order_id\": \"O1\"}}","call_id":"c{row}","id":"fc_{row}","status":"completed"}},{{"type":"function_call_output","call_id":"c{row}","output":{}}},{{"type":"message","role":"user","content":{}}}],"tools":{tools},"parallel_tool_calls":false,"tool_choice":"auto"}},"expected_action":{action},"agent_ref":{{"type":"responses_api_agents","name":"pivot_agent"}},"trajectory_id":"t{}","meta_info":{{"turn":{},"step":{},"assistant_depth":{},"depth":{}}}}}"#,
            words(&mut rng, 400),
            words(&mut rng, 800),
            words(&mut rng, 300),
            row / 5,
            row % 5,
            row % 7,
            row % 4,
            row % 9
        );
        w.write_all(line.as_bytes()).unwrap();
        w.write_all(b"\n").unwrap();
        written += line.len() + 1;
        row += 1;
    }
    w.flush().unwrap();
}

fn children_peak_rss_mb() -> f64 {
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &raw mut usage) };
    usage.ru_maxrss as f64 / 1024.0
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let mb: usize = std::env::var("BENCH_PIVOT_MB")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(500);
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("target/bench-data/pivot_{mb}mb.jsonl"));
    let t0 = Instant::now();
    generate(&path, mb);
    let size = std::fs::metadata(&path).unwrap().len() as f64 / 1e6;
    println!(
        "data: {size:.0} MB pivot file (ready in {:.1} s)",
        t0.elapsed().as_secs_f64()
    );
    for (label, extra) in [
        ("validate-pivot", vec![]),
        ("validate-pivot --stats", vec!["--stats"]),
    ] {
        let mut best = f64::MAX;
        for _ in 0..3 {
            let t = Instant::now();
            let out = Command::new(env!("CARGO_BIN_EXE_gymscope"))
                .args(["validate-pivot", "--path"])
                .arg(&path)
                .args(&extra)
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
            best = best.min(t.elapsed().as_secs_f64());
        }
        println!("{label}: best {best:.2} s, {:.0} MB/s", size / best);
    }
    println!("peak RSS: {:.1} MB", children_peak_rss_mb());
}
