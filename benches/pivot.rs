//! Benchmark of `gymscope validate-pivot` on a generated ~500 MB pivot file (rows like upstream's
//! examples: a long system prompt, prior turns and tool calls, 14 tools with JSON schemas).
//! Prints wall time, MB/s and peak RSS. Target: at least 300 MB/s.
//!
//!   cargo bench --bench pivot              (data generated once into target/bench-data/)
//!   BENCH_PIVOT_MB=50 cargo bench --bench pivot
#![allow(clippy::unwrap_used)] // a test or benchmark stops at what must hold

use gymscope_testkit::bench::{self, words};
use std::path::Path;
use std::process::Command;

fn generate(path: &Path, megabytes: usize) {
    bench::write_lines_once(path, megabytes, |rng, tools, system, row| {
        let action = if row % 3 == 0 {
            format!(r#"{{"type":"message","content":{}}}"#, words(rng, 200))
        } else {
            format!(
                r#"{{"type":"function_call","name":"tool_{}","arguments":"{{\"order_id\": \"O{row}\", \"quantity\": 2}}"}}"#,
                row % 14
            )
        };
        format!(
            r#"{{"responses_create_params":{{"input":[{{"type":"message","role":"system","content":{system}}},{{"type":"message","role":"user","content":{}}},{{"type":"function_call","name":"tool_1","arguments":"{{\"order_id\": \"O1\"}}","call_id":"c{row}","id":"fc_{row}","status":"completed"}},{{"type":"function_call_output","call_id":"c{row}","output":{}}},{{"type":"message","role":"user","content":{}}}],"tools":{tools},"parallel_tool_calls":false,"tool_choice":"auto"}},"expected_action":{action},"agent_ref":{{"type":"responses_api_agents","name":"pivot_agent"}},"trajectory_id":"t{}","meta_info":{{"turn":{},"step":{},"assistant_depth":{},"depth":{}}}}}"#,
            words(rng, 400),
            words(rng, 800),
            words(rng, 300),
            row / 5,
            row % 5,
            row % 7,
            row % 4,
            row % 9
        )
    });
}

fn main() {
    if bench::listing_only() {
        return;
    }
    let mb = bench::env_usize("BENCH_PIVOT_MB", 500);
    let path = bench::data_dir().join(format!("pivot_{mb}mb.jsonl"));
    let size = bench::generated(&path, "pivot file", |p| generate(p, mb));
    for (label, extra) in [
        ("validate-pivot", vec![]),
        ("validate-pivot --stats", vec!["--stats"]),
    ] {
        let mut best = f64::MAX;
        for _ in 0..3 {
            let secs = bench::time_ok(
                Command::new(env!("CARGO_BIN_EXE_gymscope"))
                    .args(["validate-pivot", "--path"])
                    .arg(&path)
                    .args(&extra),
            );
            best = best.min(secs);
        }
        println!("{label}: best {best:.2} s, {:.0} MB/s", size / best);
    }
    println!("peak RSS: {:.1} MB", bench::children_peak_rss_mb());
}
