//! Benchmark of the shapes the hostile-input campaigns found quadratic or memory-hungry. Prints
//! wall time and the child's own peak RSS for each, most at two sizes so growth shows:
//! - `own-field`: `profile` on N tasks, one rollout each, every task with its own numeric field
//!   (1 MB of input for 4,000 tasks): memory must follow the data, not tasks × fields;
//! - `wide-row`: `profile` on one rollout row with K numeric fields (2.4 MB at 128,000): linear;
//! - `endless-file`: `health`, `query` and `report --profile` on a 300 MB file without a newline
//!   under a 256 MiB limit: about the limit (before: 2x, and 3.4x for `report --profile`);
//! - `endless-line`: `/dev/zero` as the rollouts file with `--max-line-bytes 64 MiB`: fails with
//!   exit 1 holding no more than the limit;
//! - `dense-answer`: `report` of a run whose one answer is N MB of `<` (pulldown-cmark's
//!   events cost ~300 bytes a byte of such text): a 4 MB answer stays under 300 MB;
//! - `long-trajectory`: `build-pivot` on one rollout of K sequential tool calls (its rows grow
//!   with K²): memory follows the longest row, not the output;
//! - `wide-meta` / `wide-report` / `wide-compare`: `validate-pivot --stats` on one pivot with K
//!   `meta_info` keys, `report` and `compare` on one row with K numeric fields: linear;
//! - `many-tasks`: `report` and `compare` (the run with itself) on N one-rollout tasks;
//! - `unreadable`: `health-check` on N short non-JSON lines: memory bounded, files as upstream's.
//!
//!   cargo bench --bench hostile
//!   HOSTILE_SCALE=4 cargo bench --bench hostile   (every size × 4)
#![allow(clippy::unwrap_used)] // a test or benchmark stops at what must hold

use gymscope_testkit::bench;
use std::io::Write;
use std::path::{Path, PathBuf};

type Writer = std::io::BufWriter<std::fs::File>;

/// `<name>_materialized_inputs.jsonl` and `<name>.jsonl` in `dir`, created, each with its writer.
fn create_run(dir: &Path, name: &str) -> ((PathBuf, Writer), (PathBuf, Writer)) {
    let create = |p: PathBuf| {
        let w = std::io::BufWriter::new(std::fs::File::create(&p).unwrap());
        (p, w)
    };
    (
        create(dir.join(format!("{name}_materialized_inputs.jsonl"))),
        create(dir.join(format!("{name}.jsonl"))),
    )
}

fn own_field(dir: &Path, tasks: usize) -> (PathBuf, PathBuf) {
    let ((m, mut mi), (r, mut ro)) = create_run(dir, &format!("own_{tasks}"));
    for t in 0..tasks {
        writeln!(
            mi,
            r#"{{"_ng_task_index":{t},"_ng_rollout_index":0,"agent_ref":{{"name":"a"}}}}"#
        )
        .unwrap();
        writeln!(ro, r#"{{"_ng_task_index":{t},"_ng_rollout_index":0,"agent_ref":{{"name":"a"}},"reward":1.0,"f{t}":{t}}}"#).unwrap();
    }
    (m, r)
}

fn wide_row(dir: &Path, fields: usize) -> (PathBuf, PathBuf) {
    let m = dir.join(format!("wide_{fields}_materialized_inputs.jsonl"));
    let r = dir.join(format!("wide_{fields}.jsonl"));
    std::fs::write(
        &m,
        "{\"_ng_task_index\":0,\"_ng_rollout_index\":0,\"agent_ref\":{\"name\":\"a\"}}\n",
    )
    .unwrap();
    let mut row = String::from(
        "{\"_ng_task_index\":0,\"_ng_rollout_index\":0,\"agent_ref\":{\"name\":\"a\"},\"reward\":1.0",
    );
    for i in 0..fields {
        row.push_str(&format!(",\"x{i}\":{i}"));
    }
    row.push_str("}\n");
    std::fs::write(&r, row).unwrap();
    (m, r)
}

/// One task, one rollout whose answer is `mb` MB of `<`.
fn dense_answer(dir: &Path, mb: usize) -> (PathBuf, PathBuf) {
    let m = dir.join(format!("dense_{mb}_materialized_inputs.jsonl"));
    let r = dir.join(format!("dense_{mb}.jsonl"));
    let head = r#"{"_ng_task_index":0,"_ng_rollout_index":0,"agent_ref":{"name":"a"},"responses_create_params":{"input":[{"role":"user","content":"Answer."}]}"#;
    std::fs::write(&m, format!("{head}}}\n")).unwrap();
    let answer = "<".repeat(mb << 20);
    std::fs::write(
        &r,
        format!(
            r#"{head},"response":{{"output":[{{"type":"message","role":"assistant","content":[{{"type":"output_text","text":"{answer}"}}]}}],"usage":{{"input_tokens":5,"output_tokens":9}}}},"reward":0.0}}"#
        ) + "\n",
    )
    .unwrap();
    (m, r)
}

/// One successful rollout of `steps` sequential tool calls (~375 bytes a step).
fn long_trajectory(dir: &Path, steps: usize) -> PathBuf {
    let r = dir.join(format!("long_{steps}.jsonl"));
    let mut out = String::new();
    for s in 0..steps {
        out.push_str(&format!(
            r#"{{"type":"function_call","name":"python","call_id":"c{s}","arguments":"{{\"code\": \"print({s} * 7 + sum(range({s})))\"}}","id":"fc{s}","status":"completed"}},{{"type":"function_call_output","call_id":"c{s}","output":"{{\"stdout\": \"{s}\\n\", \"exit_code\": 0, \"took\": \"0.01s\"}}"}},"#
        ));
    }
    out.push_str(r#"{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Done."}]}"#);
    let tools = r#"[{"type":"function","name":"python","description":"Run Python.","parameters":{"type":"object","properties":{"code":{"type":"string"}},"required":["code"]}}]"#;
    std::fs::write(
        &r,
        format!(
            r#"{{"_ng_task_index":0,"_ng_rollout_index":0,"agent_ref":{{"name":"a"}},"responses_create_params":{{"input":[{{"role":"user","content":"Compute."}}],"tools":{tools}}},"response":{{"output":[{out}]}},"reward":1.0}}"#
        ) + "\n",
    )
    .unwrap();
    r
}

/// One pivot row with `keys` `meta_info` keys.
fn wide_meta(dir: &Path, keys: usize) -> PathBuf {
    let p = dir.join(format!("meta_{keys}.jsonl"));
    let meta: Vec<String> = (0..keys).map(|i| format!(r#""k{i}":{i}"#)).collect();
    std::fs::write(
        &p,
        format!(
            r#"{{"agent_ref":{{"type":"responses_api_agents","name":"a"}},"responses_create_params":{{"input":[{{"role":"user","content":"Go."}}],"tools":[{{"type":"function","name":"run","parameters":{{"type":"object","properties":{{}}}}}}]}},"expected_action":{{"type":"function_call","name":"run","arguments":"{{}}"}},"meta_info":{{{}}}}}"#,
            meta.join(",")
        ) + "\n",
    )
    .unwrap();
    p
}

/// N tasks of one rollout each, with a shared numeric field.
fn many_tasks(dir: &Path, tasks: usize) -> (PathBuf, PathBuf) {
    let ((m, mut mi), (r, mut ro)) = create_run(dir, &format!("many_{tasks}"));
    for t in 0..tasks {
        let input = format!(
            r#""responses_create_params":{{"input":[{{"role":"user","content":"Task {t}."}}]}}"#
        );
        writeln!(
            mi,
            r#"{{"_ng_task_index":{t},"_ng_rollout_index":0,"agent_ref":{{"name":"a"}},{input}}}"#
        )
        .unwrap();
        writeln!(ro, r#"{{"_ng_task_index":{t},"_ng_rollout_index":0,"agent_ref":{{"name":"a"}},{input},"response":{{"output":[],"usage":{{"input_tokens":{},"output_tokens":{}}}}},"reward":{}.0,"score":{}}}"#, 10 + t % 90, 5 + t % 300, t % 2, t % 7).unwrap();
    }
    (m, r)
}

/// A run folder whose rollouts file is `lines` short lines that are not JSON.
fn unreadable(dir: &Path, lines: usize) -> PathBuf {
    let run = dir.join(format!("unreadable_{lines}"));
    std::fs::create_dir_all(&run).unwrap();
    let mut w = std::io::BufWriter::new(std::fs::File::create(run.join("rollouts.jsonl")).unwrap());
    for i in 0..lines {
        writeln!(w, "<PLACEHOLDER ROW {i}> not json at all").unwrap();
    }
    run
}

/// Runs gymscope with `args`; returns (seconds, exit code, peak RSS in MB) of that child alone.
fn run(args: &[&str]) -> (f64, i32, f64) {
    bench::run_reaped(env!("CARGO_BIN_EXE_gymscope"), args)
}

/// `gymscope profile` of `inputs` and `rollouts` into `out`, with `extra` flags, as [`run`].
fn profile(inputs: &Path, rollouts: &str, out: &str, extra: &[&str]) -> (f64, i32, f64) {
    let mut args = vec![
        "profile",
        "--inputs",
        inputs.to_str().unwrap(),
        "--rollouts",
        rollouts,
        "--out-dir",
        out,
    ];
    args.extend(extra);
    run(&args)
}

fn main() {
    if bench::listing_only() {
        return;
    }
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/bench-data/hostile");
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join("out");
    let out_s = out.to_str().unwrap();
    let tasks = bench::env_usize("HOSTILE_TASKS", 4000);
    let (m, r) = own_field(&dir, tasks);
    let (secs, code, rss) = profile(&m, r.to_str().unwrap(), out_s, &[]);
    println!("own-field: {tasks} tasks each with its own field: {secs:.2} s, exit {code}, peak RSS {rss:.1} MB");
    let fields = bench::env_usize("HOSTILE_FIELDS", 128_000);
    let (m, r) = wide_row(&dir, fields);
    let (secs, code, rss) = profile(&m, r.to_str().unwrap(), out_s, &[]);
    println!("wide-row: one row with {fields} numeric fields: {secs:.2} s, exit {code}, peak RSS {rss:.1} MB");
    let (m, _) = own_field(&dir, 10);
    let (secs, code, rss) = profile(&m, "/dev/zero", out_s, &["--max-line-bytes", "67108864"]);
    println!("endless-line: /dev/zero with a 64 MiB limit: {secs:.2} s, exit {code}, peak RSS {rss:.1} MB");
    // A regular file of one 300 MB line under a 256 MiB limit, through the commands that read
    // once and `report --profile` (which keeps the file): each near the limit, not 2-3x it.
    let endless = dir.join("endless.jsonl");
    {
        let mut f = std::io::BufWriter::new(std::fs::File::create(&endless).unwrap());
        let block = vec![b'a'; 1 << 20];
        for _ in 0..300 {
            f.write_all(&block).unwrap();
        }
    }
    let e = endless.to_str().unwrap();
    let html = dir.join("endless.html");
    for args in [
        vec!["health", e],
        vec!["query", e, "--count", "reward > 0"],
        vec!["report", "--profile", e, "-o", html.to_str().unwrap()],
    ] {
        let mut args = args.clone();
        args.extend(["--max-line-bytes", "268435456"]);
        let (secs, code, rss) = run(&args);
        println!("endless-file: {} on 300 MB without a newline, 256 MiB limit: {secs:.2} s, exit {code}, peak RSS {rss:.1} MB", args[..2].join(" "));
    }
    let _ = std::fs::remove_file(&endless);

    let scale = bench::env_usize("HOSTILE_SCALE", 1);
    let s = |p: &Path| p.to_str().unwrap().to_string();
    let report = |label: &str, m: &Path, r: &Path| {
        let html = dir.join("out/report.html");
        let (secs, code, rss) = run(&[
            "report",
            "--inputs",
            &s(m),
            "--rollouts",
            &s(r),
            "-o",
            &s(&html),
        ]);
        let mb = std::fs::metadata(&html).map_or(0.0, |f| f.len() as f64 / 1e6);
        println!("{label}: report {secs:.2} s, exit {code}, peak RSS {rss:.1} MB, page {mb:.1} MB");
    };
    let compare = |label: &str, m: &Path, r: &Path| {
        let side = format!("{}:{}", s(m), s(r));
        let (secs, code, rss) = run(&["compare", &side, &side, "--format", "json"]);
        println!("{label}: compare {secs:.2} s, exit {code}, peak RSS {rss:.1} MB");
    };
    for mb in [1, 4].map(|n| n * scale) {
        let (m, r) = dense_answer(&dir, mb);
        report(
            &format!("dense-answer: one answer of {mb} MB of '<'"),
            &m,
            &r,
        );
    }
    for steps in [1000, 2000].map(|n| n * scale) {
        let r = long_trajectory(&dir, steps);
        let input_mb = bench::file_mb(&r);
        let pivots = dir.join("out/pivots/long.jsonl");
        let (secs, code, rss) = run(&[
            "build-pivot",
            "--input",
            &s(&r),
            "--output",
            &s(&pivots),
            "--agent-ref",
            "a",
        ]);
        let mb = std::fs::metadata(&pivots).map_or(0.0, |f| f.len() as f64 / 1e6);
        println!("long-trajectory: one rollout of {steps} tool calls ({input_mb:.2} MB): build-pivot {secs:.2} s, exit {code}, peak RSS {rss:.1} MB, output {mb:.0} MB");
    }
    for keys in [12_500, 100_000].map(|n| n * scale) {
        let p = wide_meta(&dir, keys);
        let (secs, code, rss) = run(&["validate-pivot", "--stats", "--path", &s(&p)]);
        println!("wide-meta: one pivot with {keys} meta_info keys: validate-pivot --stats {secs:.2} s, exit {code}, peak RSS {rss:.1} MB");
        let (m, r) = wide_row(&dir, keys);
        report(
            &format!("wide-report: one row with {keys} numeric fields"),
            &m,
            &r,
        );
        compare(
            &format!("wide-compare: one row with {keys} numeric fields"),
            &m,
            &r,
        );
    }
    for tasks in [100_000, 400_000].map(|n| n * scale) {
        let (m, r) = many_tasks(&dir, tasks);
        report(&format!("many-tasks: {tasks} one-rollout tasks"), &m, &r);
        compare(&format!("many-tasks: {tasks} one-rollout tasks"), &m, &r);
    }
    for lines in [50_000, 200_000].map(|n| n * scale) {
        let run_dir = unreadable(&dir, lines);
        let (secs, code, rss) = run(&["health-check", &s(&run_dir)]);
        let mb = std::fs::metadata(run_dir.join("rollout_verdicts.jsonl"))
            .map_or(0.0, |f| f.len() as f64 / 1e6);
        println!("unreadable: health-check on {lines} short non-JSON lines: {secs:.2} s, exit {code}, peak RSS {rss:.1} MB, verdicts {mb:.0} MB");
    }
}
