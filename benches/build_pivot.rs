//! Benchmark of `gymscope build-pivot` on a generated ~500 MB NeMo Gym rollouts file of
//! realistic multi-step rows (a 6 KB system prompt, 14 tools with JSON schemas, six
//! reasoning + call + output steps and a final message; four rollouts per task, one of them
//! failed). Every pivot repeats its prefix, so the output is several times the input: prints
//! input and output MB/s and peak RSS. Target: at least 300 MB/s of output.
//!
//!   cargo bench --bench build_pivot          (data generated once into target/bench-data/)
//!   BENCH_BUILD_PIVOT_MB=50 cargo bench --bench build_pivot
#![allow(clippy::unwrap_used)] // a test or benchmark stops at what must hold

use gymscope_testkit::bench::{self, words};
use std::path::Path;
use std::process::Command;
use std::time::Instant;

/// Upstream's ~19 null request fields, as collected rollouts carry them.
const NULLS: &str = r#""background":null,"include":null,"instructions":null,"max_output_tokens":null,"max_tool_calls":null,"metadata":null,"model":null,"previous_response_id":null,"prompt":null,"reasoning":null,"service_tier":null,"store":null,"temperature":null,"text":null,"top_logprobs":null,"top_p":null,"truncation":null,"user":null,"stream":null"#;

fn generate(path: &Path, megabytes: usize) {
    bench::write_lines_once(path, megabytes, |rng, tools, system, row| {
        let (task, rollout) = (row / 4, row % 4);
        let mut output = Vec::new();
        for step in 0..6 {
            let id = format!("call_{row}_{step}");
            output.push(format!(
                r#"{{"id":"rs_{row}_{step}","summary":[{{"text":{},"type":"summary_text"}}],"type":"reasoning","encrypted_content":null}}"#,
                words(rng, 300)
            ));
            output.push(format!(
                r#"{{"arguments":"{{\"order_id\":\"O{row}\",\"quantity\":{step}}}","call_id":"{id}","name":"tool_{}","type":"function_call","id":"fc_{row}_{step}","status":"completed"}}"#,
                (row + step) % 14
            ));
            output.push(format!(r#"{{"call_id":"{id}","output":{},"type":"function_call_output","id":null,"status":null}}"#, words(rng, 800)));
        }
        output.push(format!(
            r#"{{"id":"msg_{row}","content":[{{"annotations":[],"text":{},"type":"output_text","logprobs":[]}}],"role":"assistant","status":"completed","type":"message"}}"#,
            words(rng, 400)
        ));
        let reward = if rollout == (task % 4) { 0.0 } else { 1.0 };
        format!(
            r#"{{"responses_create_params":{{"input":[{{"role":"system","content":{system},"type":"message"}},{{"role":"user","content":{},"type":"message"}}],"tools":{tools},"parallel_tool_calls":true,"tool_choice":"auto",{NULLS}}},"response":{{"id":"resp_{row}","output":[{}],"incomplete_details":null,"usage":{{"input_tokens":9000,"output_tokens":900,"total_tokens":9900}}}},"reward":{reward:?},"_ng_task_index":{task},"_ng_rollout_index":{rollout},"agent_ref":{{"type":"responses_api_agents","name":"bench_agent"}}}}"#,
            words(rng, 400),
            output.join(",")
        )
    });
}

fn main() {
    if bench::listing_only() {
        return;
    }
    let mb = bench::env_usize("BENCH_BUILD_PIVOT_MB", 500);
    let dir = bench::data_dir();
    let input = dir.join(format!("rollouts_{mb}mb.jsonl"));
    let in_mb = bench::generated(&input, "rollouts file", |p| generate(p, mb));
    let out = dir.join("build_pivot_out/pivots.jsonl");
    std::fs::create_dir_all(out.parent().unwrap()).unwrap();
    let t = Instant::now();
    let run = Command::new(env!("CARGO_BIN_EXE_gymscope"))
        .args(["build-pivot", "--agent-ref", "bench_pivot_agent", "--input"])
        .arg(&input)
        .arg("--output")
        .arg(&out)
        .output()
        .unwrap();
    let secs = t.elapsed().as_secs_f64();
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let out_mb = bench::file_mb(&out);
    print!(
        "{}",
        String::from_utf8_lossy(&run.stdout)
            .lines()
            .next()
            .unwrap_or_default()
    );
    println!();
    println!(
        "build-pivot: {secs:.2} s; input {in_mb:.0} MB read twice, {:.0} MB/s; output {out_mb:.0} MB, {:.0} MB/s",
        in_mb / secs,
        out_mb / secs
    );
    let (rss, user, sys) = bench::children_usage();
    // On a shared machine the wall time includes waiting for a core and for fsync; the CPU
    // figures say what the work itself costs.
    println!(
        "CPU: {user:.2} s user + {sys:.2} s system (writing the output): {:.0} MB/s of output per CPU second",
        out_mb / (user + sys)
    );
    println!("peak RSS: {rss:.1} MB");
    // The output is several GB: do not leave it behind.
    std::fs::remove_dir_all(out.parent().unwrap()).unwrap();
}
