//! A generated run (materialized inputs + rollouts, shuffled completion order) for the report's
//! size test and benchmark: realistic fields (usage, verifier numbers, three agents), text of a
//! chosen length. Deterministic: the same arguments give the same bytes.
#![allow(dead_code)]

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

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
    "integral",
    "proof",
    "<think>",
    "\\frac{a}{b}",
    "\"quoted\"",
    "naïve",
    "λ",
    "→",
    "😀",
];

fn text(rng: &mut Rng, bytes: usize) -> String {
    let mut s = String::with_capacity(bytes + 16);
    while s.len() < bytes {
        s.push_str(WORDS[rng.below(WORDS.len())]);
        s.push(if rng.below(12) == 0 { '\n' } else { ' ' });
    }
    serde_json::to_string(&s).unwrap()
}

/// Writes `<name>_materialized_inputs.jsonl` and `<name>.jsonl` in `dir` (kept if present).
pub fn generate(
    dir: &Path,
    name: &str,
    tasks: usize,
    repeats: usize,
    text_bytes: usize,
) -> (PathBuf, PathBuf) {
    generate_variant(dir, name, tasks, repeats, text_bytes, 0)
}

/// Another run of the same tasks (variant 0 is [`generate`]'s run): the same prompts under other
/// task indices (rotated by a third), another temperature, other rewards, tokens and order.
pub fn generate_variant(
    dir: &Path,
    name: &str,
    tasks: usize,
    repeats: usize,
    text_bytes: usize,
    variant: u64,
) -> (PathBuf, PathBuf) {
    let inputs = dir.join(format!("{name}_materialized_inputs.jsonl"));
    let rollouts = dir.join(format!("{name}.jsonl"));
    if inputs.exists() && rollouts.exists() {
        return (inputs, rollouts);
    }
    std::fs::create_dir_all(dir).unwrap();
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let base: Vec<String> = (0..tasks).map(|_| text(&mut rng, text_bytes / 3)).collect();
    // Task t holds the prompt of the base run's task `source[t]` (and its agent).
    let shift = if variant == 0 { 0 } else { tasks / 3 + 1 };
    let source: Vec<usize> = (0..tasks).map(|t| (t + shift) % tasks.max(1)).collect();
    let prompts: Vec<&String> = source.iter().map(|&p| &base[p]).collect();
    rng.0 ^= variant.wrapping_mul(0xA24B_AED4_963E_E407);
    let temperature = if variant == 0 { "1.0" } else { "0.6" };
    let mut w = BufWriter::new(File::create(&inputs).unwrap());
    for (t, prompt) in prompts.iter().enumerate() {
        for r in 0..repeats {
            writeln!(
                w,
                r#"{{"responses_create_params":{{"input":[{{"role":"system","content":"You are a careful solver."}},{{"role":"user","content":{prompt}}}],"temperature":{temperature}}},"agent_ref":{{"type":"responses_api_agents","name":"math_agent_{}"}},"_ng_task_index":{t},"_ng_rollout_index":{r}}}"#,
                source[t] % 3
            )
            .unwrap();
        }
    }
    w.flush().unwrap();
    let mut order: Vec<usize> = (0..tasks * repeats).collect();
    for i in (1..order.len()).rev() {
        order.swap(i, rng.below(i + 1));
    }
    let mut w = BufWriter::new(File::create(&rollouts).unwrap());
    for k in order {
        let (t, r) = (k / repeats, k % repeats);
        let (input_tokens, output_tokens) = (200 + rng.below(800), 50 + rng.below(4000));
        let reward = if rng.below(3) == 0 { 0.0 } else { 1.0 };
        writeln!(
            w,
            r#"{{"responses_create_params":{{"input":[{{"role":"user","content":{}}}]}},"response":{{"id":"resp_{k}","output":[{{"type":"reasoning","id":"rs_{k}","summary":[{{"type":"summary_text","text":{}}}]}},{{"type":"message","id":"msg_{k}","role":"assistant","status":"completed","content":[{{"type":"output_text","annotations":[],"text":{}}}]}}],"usage":{{"input_tokens":{input_tokens},"input_tokens_details":{{"cached_tokens":0}},"output_tokens":{output_tokens},"output_tokens_details":{{"reasoning_tokens":{}}},"total_tokens":{}}}}},"reward":{reward:?},"extracted_answer_correct":{},"judge_score":{},"_ng_task_index":{t},"_ng_rollout_index":{r},"agent_ref":{{"type":"responses_api_agents","name":"math_agent_{}"}}}}"#,
            prompts[t],
            text(&mut rng, text_bytes / 3),
            text(&mut rng, text_bytes / 2),
            output_tokens / 2,
            input_tokens + output_tokens,
            reward == 1.0,
            rng.unit(),
            source[t] % 3
        )
        .unwrap();
    }
    w.flush().unwrap();
    (inputs, rollouts)
}

/// Rows whose every string a page could trip on carries a payload: prompts, outputs, agent
/// names, field names (a numeric field so it becomes a column and a plot axis).
pub fn hostile_run() -> (String, String) {
    let payloads = [
        "</script><script>window.__pwned=1</script>",
        "<img src=x onerror=\"window.__pwned=2\">",
        "javascript:window.__pwned=3",
    ];
    let (mut inputs, mut rollouts) = (String::new(), String::new());
    for (t, payload) in payloads.iter().enumerate() {
        let p = serde_json::to_string(payload).unwrap();
        for r in 0..2 {
            inputs.push_str(&format!(
                r#"{{"responses_create_params":{{"input":[{{"role":"user","content":{p}}}]}},"agent_ref":{{"name":{p}}},"_ng_task_index":{t},"_ng_rollout_index":{r}}}"#
            ));
            inputs.push('\n');
            rollouts.push_str(&format!(
                r#"{{"responses_create_params":{{"input":[{{"role":"user","content":{p}}}]}},"response":{{"output":[{{"type":"message","role":{p},"content":[{{"type":"output_text","text":{p}}}]}},{{"type":"function_call","name":{p},"arguments":{p},"call_id":{p}}}],"usage":{{"input_tokens":{},"output_tokens":{}}}}},"reward":{}.0,{p}:{},"note":{p},"_ng_task_index":{t},"_ng_rollout_index":{r}}}"#,
                10 + t,
                20 + r * 7 + t,
                r,
                t + r
            ));
            rollouts.push('\n');
        }
    }
    (inputs, rollouts)
}

/// A run whose rollouts sit on a grid in the reward × output_tokens plot, each at least 3 px from
/// the next, so a test can point at one: for rollout number `i = 4·task + rollout`,
/// `output_tokens = 100 + 10·(i mod 160)` and `reward = (i div 160) / 30`.
pub fn distinct_run(tasks: usize, repeats: usize) -> (String, String) {
    let (mut inputs, mut rollouts) = (String::new(), String::new());
    for t in 0..tasks {
        for r in 0..repeats {
            inputs.push_str(&format!(
                r#"{{"responses_create_params":{{"input":[{{"role":"user","content":"What is {t} + {r}?"}}]}},"agent_ref":{{"name":"agent_{}"}},"_ng_task_index":{t},"_ng_rollout_index":{r}}}"#,
                t % 2
            ));
            inputs.push('\n');
            rollouts.push_str(&format!(
                r#"{{"responses_create_params":{{"input":[{{"role":"user","content":"What is {t} + {r}?"}}]}},"response":{{"output":[{{"type":"message","role":"assistant","content":[{{"type":"output_text","text":"It is {}."}}]}}],"usage":{{"input_tokens":{},"output_tokens":{},"total_tokens":{}}}}},"reward":{},"_ng_task_index":{t},"_ng_rollout_index":{r}}}"#,
                t + r,
                20 + t,
                100 + 10 * ((t * repeats + r) % 160),
                120 + t + 10 * ((t * repeats + r) % 160),
                ((t * repeats + r) / 160) as f64 / 30.0,
            ));
            rollouts.push('\n');
        }
    }
    (inputs, rollouts)
}
