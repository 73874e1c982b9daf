//! Benchmark of `gymscope profile` end to end on a generated realistic run: 25,000 tasks × 4
//! repeats = 100,000 rollouts, about 4.5 KB of text each (~550 MB), rows in shuffled order.
//! Prints wall time, MB/s and the process's peak RSS. Targets: ≥ 400 MB/s, < 250 MB.
//!
//!   cargo bench --bench profile            (data is generated once into target/bench-data/)
//!   BENCH_TASKS=2500 cargo bench --bench profile   (a smaller run)

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

const REPEATS: usize = 4;
const WORDS: &[&str] = &[
    "the",
    "model",
    "tool",
    "answer",
    "reason",
    "step",
    "value",
    "function",
    "result",
    "check",
    "because",
    "therefore",
    "compute",
    "integral",
    "proof",
    "lemma",
    "observe",
    "hence",
    "verify",
    "output",
    "token",
    "agent",
    "environment",
    "reward",
    "policy",
    "search",
    "file",
    "python",
    "return",
    "assert",
    "matrix",
    "vector",
    "probability",
    "<think>",
    "\\frac{a}{b}",
    "\"quoted\"",
    "naïve",
    "λ",
    "→",
    "∑",
    "😀",
];

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
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

fn text(rng: &mut Rng, bytes: usize) -> String {
    let mut s = String::with_capacity(bytes + 16);
    while s.len() < bytes {
        s.push_str(WORDS[rng.below(WORDS.len())]);
        s.push(if rng.below(12) == 0 { '\n' } else { ' ' });
    }
    serde_json::to_string(&s).unwrap()
}

fn generate(dir: &Path, tasks: usize) -> (PathBuf, PathBuf) {
    let inputs = dir.join(format!("bench_{tasks}_materialized_inputs.jsonl"));
    let rollouts = dir.join(format!("bench_{tasks}.jsonl"));
    if inputs.exists() && rollouts.exists() {
        return (inputs, rollouts);
    }
    std::fs::create_dir_all(dir).unwrap();
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let prompts: Vec<String> = (0..tasks).map(|_| text(&mut rng, 700)).collect();
    let mut w = BufWriter::new(File::create(&inputs).unwrap());
    for (t, prompt) in prompts.iter().enumerate() {
        for r in 0..REPEATS {
            writeln!(
                w,
                r#"{{"responses_create_params":{{"input":[{{"role":"system","content":"You are a careful solver."}},{{"role":"user","content":{prompt}}}],"temperature":1.0}},"agent_ref":{{"type":"responses_api_agents","name":"math_agent_{}"}},"_ng_task_index":{t},"_ng_rollout_index":{r}}}"#,
                t % 3
            )
            .unwrap();
        }
    }
    w.flush().unwrap();
    // Completion order: a random permutation of all rollout keys.
    let mut order: Vec<usize> = (0..tasks * REPEATS).collect();
    for i in (1..order.len()).rev() {
        order.swap(i, rng.below(i + 1));
    }
    let mut w = BufWriter::new(File::create(&rollouts).unwrap());
    for k in order {
        let (t, r) = (k / REPEATS, k % REPEATS);
        let (input_tokens, output_tokens) = (200 + rng.below(800), 50 + rng.below(4000));
        let reward = if rng.below(3) == 0 { 0.0 } else { 1.0 };
        writeln!(
            w,
            r#"{{"responses_create_params":{{"input":[{{"role":"user","content":{}}}]}},"response":{{"id":"resp_{k}","created_at":1767225600.0,"model":"policy","object":"response","output":[{{"type":"reasoning","id":"rs_{k}","summary":[{{"type":"summary_text","text":{}}}]}},{{"type":"message","id":"msg_{k}","role":"assistant","status":"completed","content":[{{"type":"output_text","annotations":[],"text":{}}}]}}],"usage":{{"input_tokens":{input_tokens},"input_tokens_details":{{"cached_tokens":0}},"output_tokens":{output_tokens},"output_tokens_details":{{"reasoning_tokens":{}}},"total_tokens":{}}}}},"reward":{reward:?},"extracted_answer_correct":{},"judge_score":{},"_ng_task_index":{t},"_ng_rollout_index":{r},"agent_ref":{{"type":"responses_api_agents","name":"math_agent_{}"}}}}"#,
            prompts[t],
            text(&mut rng, 1500),
            text(&mut rng, 2200),
            output_tokens / 2,
            input_tokens + output_tokens,
            reward == 1.0,
            rng.unit(),
            t % 3
        )
        .unwrap();
    }
    w.flush().unwrap();
    (inputs, rollouts)
}

/// Peak resident set of the largest child waited for so far, in MB.
fn children_peak_rss_mb() -> f64 {
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut usage) };
    usage.ru_maxrss as f64 / 1024.0
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return; // `cargo test --benches` asks for a list; nothing to list
    }
    let tasks: usize = std::env::var("BENCH_TASKS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(25_000);
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/bench-data");
    let t0 = Instant::now();
    let (inputs, rollouts) = generate(&dir, tasks);
    let size =
        std::fs::metadata(&inputs).unwrap().len() + std::fs::metadata(&rollouts).unwrap().len();
    let rollouts_size = std::fs::metadata(&rollouts).unwrap().len();
    println!(
        "data: {} rollouts, rollouts file {:.0} MB + inputs {:.0} MB (ready in {:.1} s)",
        tasks * REPEATS,
        rollouts_size as f64 / 1e6,
        (size - rollouts_size) as f64 / 1e6,
        t0.elapsed().as_secs_f64()
    );
    let out_dir = dir.join("out");
    let mut times = Vec::new();
    for run in 0..3 {
        let t = Instant::now();
        let status = Command::new(env!("CARGO_BIN_EXE_gymscope"))
            .args(["profile", "--inputs"])
            .arg(&inputs)
            .arg("--rollouts")
            .arg(&rollouts)
            .arg("--out-dir")
            .arg(&out_dir)
            .stdout(std::process::Stdio::null())
            .status()
            .unwrap();
        assert!(status.success());
        let secs = t.elapsed().as_secs_f64();
        println!(
            "run {run}: {secs:.2} s, {:.0} MB/s",
            size as f64 / 1e6 / secs
        );
        times.push(secs);
    }
    times.sort_by(f64::total_cmp);
    let best = times[0];
    println!(
        "gymscope profile: best {best:.2} s, median {:.2} s, {:.0} MB/s (best, {:.0} MB read), peak RSS {:.1} MB",
        times[1],
        size as f64 / 1e6 / best,
        size as f64 / 1e6,
        children_peak_rss_mb()
    );
}
