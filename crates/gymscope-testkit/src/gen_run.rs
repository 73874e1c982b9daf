//! A generated run (materialized inputs + rollouts, shuffled completion order) for the report's
//! size test and benchmark: realistic fields (usage, verifier numbers, three agents), text of a
//! chosen length. Deterministic: the same arguments give the same bytes.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

mod dense;
mod showcase;
pub use dense::generate_dense;
pub use showcase::generate_showcase;

/// A xorshift generator: the same seed, the same numbers.
pub struct Rng(pub u64);
impl Rng {
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
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

/// A run's two file paths in `dir` (the directory made).
fn run_paths(dir: &Path, name: &str) -> (PathBuf, PathBuf) {
    std::fs::create_dir_all(dir).unwrap();
    (
        dir.join(format!("{name}_materialized_inputs.jsonl")),
        dir.join(format!("{name}.jsonl")),
    )
}

/// `0..n` in a random order: rollouts finish out of order.
fn shuffled(rng: &mut Rng, n: usize) -> Vec<usize> {
    let mut order: Vec<usize> = (0..n).collect();
    for i in (1..order.len()).rev() {
        order.swap(i, rng.below(i + 1));
    }
    order
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
    let (inputs, rollouts) = run_paths(dir, name);
    if inputs.exists() && rollouts.exists() {
        return (inputs, rollouts);
    }
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
    let order = shuffled(&mut rng, tasks * repeats);
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

/// The verifier fields each agent of [`generate_agentic`] writes, as real resource servers do: a
/// math judge, a tool-using library agent and a code agent with container results.
const AGENTS: [&str; 3] = ["math_with_judge", "library_tool_agent", "cvdp_code_agent"];

/// A run shaped like real NeMo Gym agent rollouts: multi-step `response.output` (reasoning,
/// `function_call` with JSON arguments full of escapes, `function_call_output`, a final
/// `message`), Unicode text, three agents with their own verifier fields, full `usage`, and
/// rows in shuffled completion order. `rollout_bytes` is the rough size of one rollout line.
/// Deterministic: the same arguments give the same bytes. Writes `<name>_materialized_inputs.jsonl`
/// and `<name>.jsonl` in `dir` (kept if present).
pub fn generate_agentic(
    dir: &Path,
    name: &str,
    tasks: usize,
    repeats: usize,
    rollout_bytes: usize,
) -> (PathBuf, PathBuf) {
    let (inputs, rollouts) = run_paths(dir, name);
    if inputs.exists() && rollouts.exists() {
        return (inputs, rollouts);
    }
    let mut rng = Rng(0x2545_F491_4F6C_DD1D);
    let tools = r#"[{"type":"function","name":"python","description":"Run Python code and return stdout.","parameters":{"type":"object","properties":{"code":{"type":"string"}},"required":["code"]},"strict":true},{"type":"function","name":"search_docs","description":"Search the library documentation.","parameters":{"type":"object","properties":{"query":{"type":"string"},"top_k":{"type":"integer"}},"required":["query"]},"strict":true}]"#;
    let prompts: Vec<String> = (0..tasks)
        .map(|_| text(&mut rng, rollout_bytes / 8))
        .collect();
    let params = |t: usize| {
        format!(
            r#"{{"background":null,"include":null,"input":[{{"content":"You are a careful agent. Use the tools when they help.","role":"system","type":"message"}},{{"content":{},"role":"user","type":"message"}}],"instructions":null,"max_output_tokens":16384,"metadata":null,"model":null,"parallel_tool_calls":true,"temperature":1.0,"tool_choice":"auto","tools":{tools},"top_p":1.0}}"#,
            prompts[t]
        )
    };
    let mut w = BufWriter::new(File::create(&inputs).unwrap());
    for t in 0..tasks {
        for r in 0..repeats {
            writeln!(
                w,
                r#"{{"responses_create_params":{},"expected_answer":"\\(\\frac{{{t}}}{{7}}\\)","agent_ref":{{"type":"responses_api_agents","name":"{}"}},"_ng_task_index":{t},"_ng_rollout_index":{r}}}"#,
                params(t),
                AGENTS[t % 3]
            )
            .unwrap();
        }
    }
    w.flush().unwrap();
    let order = shuffled(&mut rng, tasks * repeats);
    let mut w = BufWriter::new(File::create(&rollouts).unwrap());
    for k in order {
        let (t, r) = (k / repeats, k % repeats);
        let agent = t % 3;
        let steps = 1 + rng.below(4);
        // What the prompt and the fixed parts leave of the line for the output items.
        let per_step = rollout_bytes.saturating_sub(rollout_bytes / 8 + 1400) / (steps + 1);
        let mut output = String::new();
        for s in 0..steps {
            let code = text(&mut rng, per_step / 2);
            // JSON arguments inside a JSON string: every quote and newline escaped twice.
            let arguments = serde_json::to_string(&format!(r#"{{"code": {code}}}"#)).unwrap();
            let result = serde_json::to_string(&format!(
                r#"{{"stdout": {}, "exit_code": {}}}"#,
                text(&mut rng, per_step / 4),
                rng.below(2)
            ))
            .unwrap();
            output.push_str(&format!(
                r#"{{"id":"rs_{k}_{s}","summary":[{{"text":{},"type":"summary_text"}}],"type":"reasoning","encrypted_content":null}},{{"arguments":{arguments},"call_id":"call_{k}_{s}","name":"python","type":"function_call","id":"fc_{k}_{s}","status":"completed"}},{{"call_id":"call_{k}_{s}","output":{result},"type":"function_call_output","id":null,"status":"completed"}},"#,
                text(&mut rng, per_step / 4)
            ));
        }
        output.push_str(&format!(
            r#"{{"id":"msg_{k}","content":[{{"annotations":[],"text":{},"type":"output_text","logprobs":null}}],"role":"assistant","status":"completed","type":"message"}}"#,
            text(&mut rng, per_step)
        ));
        let (input_tokens, output_tokens) = (300 + rng.below(6000), 40 + rng.below(8000));
        let reasoning_tokens = output_tokens / 3;
        let reward = match agent {
            0 => (rng.below(3) != 0) as u8 as f64,
            1 => (rng.below(4) == 0) as u8 as f64,
            _ => [0.0, 0.25, 0.5, 1.0][rng.below(4)],
        };
        let verifier = match agent {
            0 => format!(
                r#""expected_answer":"\\(\\frac{{{t}}}{{7}}\\)","extracted_answer":"{t}/7","judge_score":{:.4},"extracted_answer_correct":{}"#,
                rng.unit(),
                reward == 1.0
            ),
            1 => format!(
                r#""turns_used":{steps},"finished_naturally":{},"library_reward":{reward:?},"judge_evaluations":null"#,
                rng.below(5) != 0
            ),
            _ => format!(
                r#""category":"cid00{}","difficulty":"medium","container_exit_code":{},"execution_time":{:.3},"parse_failed":false,"container_stderr":"""#,
                t % 9,
                rng.below(2),
                1.0 + 30.0 * rng.unit()
            ),
        };
        writeln!(
            w,
            r#"{{"responses_create_params":{},"response":{{"id":"resp_{k}","created_at":1764547200.0,"error":null,"incomplete_details":null,"instructions":null,"metadata":null,"model":"nvidia/nemotron-3-nano","object":"response","output":[{output}],"parallel_tool_calls":true,"temperature":1.0,"tool_choice":"auto","tools":[],"top_p":1.0,"status":"completed","usage":{{"input_tokens":{input_tokens},"input_tokens_details":{{"cached_tokens":{}}},"output_tokens":{output_tokens},"output_tokens_details":{{"reasoning_tokens":{reasoning_tokens}}},"total_tokens":{}}}}},"reward":{reward:?},{verifier},"_ng_task_index":{t},"_ng_rollout_index":{r},"agent_ref":{{"type":"responses_api_agents","name":"{}"}}}}"#,
            params(t),
            input_tokens / 2,
            input_tokens + output_tokens,
            AGENTS[agent]
        )
        .unwrap();
    }
    w.flush().unwrap();
    (inputs, rollouts)
}

/// A large run in few bytes (the app's plots at a million rollouts): no text, four agents with
/// their own reward rates, binary rewards, usage tokens and one verifier number; about 260 bytes
/// a rollout line and 150 an input line. Deterministic; kept if present.
pub fn generate_compact(
    dir: &Path,
    name: &str,
    tasks: usize,
    repeats: usize,
) -> (PathBuf, PathBuf) {
    let (inputs, rollouts) = run_paths(dir, name);
    if inputs.exists() && rollouts.exists() {
        return (inputs, rollouts);
    }
    let agents = ["math_agent", "code_agent", "search_agent", "tool_agent"];
    let mut rng = Rng(0x5851_F42D_4C95_7F2D);
    let mut w = BufWriter::new(File::create(&inputs).unwrap());
    for t in 0..tasks {
        for r in 0..repeats {
            writeln!(
                w,
                r#"{{"responses_create_params":{{"input":[{{"role":"user","content":"task {t}"}}]}},"agent_ref":{{"name":"{}"}},"_ng_task_index":{t},"_ng_rollout_index":{r}}}"#,
                agents[t % agents.len()]
            )
            .unwrap();
        }
    }
    w.flush().unwrap();
    let order = shuffled(&mut rng, tasks * repeats);
    let mut w = BufWriter::new(File::create(&rollouts).unwrap());
    for k in order {
        let (t, r) = (k / repeats, k % repeats);
        let agent = t % agents.len();
        let (input_tokens, output_tokens) = (100 + rng.below(2000), 20 + rng.below(8000));
        // Longer answers succeed less often, differently per agent: a curve for the overlay.
        let p = (0.9 - 0.15 * agent as f64) * (1.0 - output_tokens as f64 / 12_000.0);
        let reward = if rng.unit() < p { 1.0 } else { 0.0 };
        writeln!(
            w,
            r#"{{"response":{{"output":[],"usage":{{"input_tokens":{input_tokens},"output_tokens":{output_tokens},"total_tokens":{}}}}},"reward":{reward:?},"judge_score":{:.3},"_ng_task_index":{t},"_ng_rollout_index":{r},"agent_ref":{{"name":"{}"}}}}"#,
            input_tokens + output_tokens,
            rng.unit(),
            agents[agent]
        )
        .unwrap();
    }
    w.flush().unwrap();
    (inputs, rollouts)
}
