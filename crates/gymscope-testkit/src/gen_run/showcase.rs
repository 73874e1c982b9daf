//! The app's and the CLI's embedded example (issue 44, item 14): a small run that looks like a
//! real multi-agent evaluation, so a newcomer sees what the pages are for — binned means, the
//! spread across repeats, per-agent lines, fractional rewards, a health flag or two. Three agents
//! as a multi-agent `gym eval run` routes them (one dataset each, concatenated), ten tasks each,
//! four repeats, interleaved in the materialized file as v0.7.0 writes it:
//!
//! - `math_with_judge_simple_agent`: word problems answered in `\boxed{}`, reward 1 when the
//!   extracted answer is right; wrong answers run longer (the model goes round in circles);
//! - `example_single_tool_call_simple_agent`: a `get_weather` tool call, then one sentence;
//!   fails when it folds the city's accents or answers without the tool;
//! - `code_gen_simple_agent`: a Python function, reward = the share of unit tests passed (so
//!   0.6, 0.8, …); some rollouts hit `max_output_tokens` and end incomplete.
//!
//! The prompts and answers are written by hand; rewards, token counts and completion order come
//! from a fixed seed. Deterministic: the same bytes every time (`assets/example-run/README.md`).

use super::{run_paths, shuffled, Rng};
use serde_json::{json, Value};
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

const REPEATS: usize = 4;
const MODEL: &str = "nvidia/NVIDIA-Nemotron-Nano-9B-v2";

/// (question, answer, a wrong answer the model gives, chance of a right answer, the solution).
const MATH: [(&str, i64, i64, f64, &str); 10] = [
    ("A train travels 180 km in 2.5 hours. What is its average speed in km/h?", 72, 75, 0.95,
     "Average speed is distance over time: 180 / 2.5 = 72."),
    ("What is the sum of the first 20 positive odd numbers?", 400, 399, 0.95,
     "The sum of the first n odd numbers is n^2, so 20^2 = 400."),
    ("A shirt costs $40 after a 20% discount. What was its original price in dollars?", 50, 48, 0.85,
     "40 is 80% of the original price, so the price was 40 / 0.8 = 50."),
    ("How many positive divisors does 360 have?", 24, 20, 0.6,
     "360 = 2^3 · 3^2 · 5, so it has (3+1)(2+1)(1+1) = 24 divisors."),
    ("The product of two consecutive positive integers is 506. What is the larger one?", 23, 22, 0.75,
     "n(n+1) = 506 and 22 · 23 = 506, so the larger one is 23."),
    ("A rectangle has perimeter 46 and area 120. How long is its diagonal?", 17, 13, 0.5,
     "a + b = 23 and ab = 120, so a^2 + b^2 = 23^2 - 240 = 289 and the diagonal is 17."),
    ("In how many ways can 5 people sit in a row if two of them refuse to sit next to each other?", 72, 48, 0.35,
     "All orders: 5! = 120. With the two together: 2 · 4! = 48. So 120 - 48 = 72."),
    ("What is the remainder when 7^100 is divided by 13?", 9, 3, 0.25,
     "7^12 ≡ 1 (mod 13) by Fermat, 100 = 8·12 + 4, and 7^4 = 2401 ≡ 9 (mod 13)."),
    ("How many trailing zeros does 125! have?", 31, 30, 0.4,
     "Count the factors of 5: 125/5 + 125/25 + 125/125 = 25 + 5 + 1 = 31."),
    ("How many integer pairs (x, y) satisfy x^2 + y^2 = 25?", 12, 8, 0.15,
     "(±5, 0), (0, ±5), and (±3, ±4), (±4, ±3): 4 + 8 = 12 pairs."),
];

/// (city, how the model misspells it, chance it uses the tool with the right name, °C, sky).
const WEATHER: [(&str, &str, f64, i64, &str); 10] = [
    (
        "San Francisco",
        "San Francisco",
        0.95,
        14,
        "fog in the morning",
    ),
    ("Tokyo", "Tokyo", 0.95, 9, "clear skies"),
    ("São Paulo", "Sao Paulo", 0.6, 27, "scattered thunderstorms"),
    ("Reykjavík", "Reykjavik", 0.5, -2, "light snow"),
    ("Cairo", "Cairo", 0.9, 22, "sunshine"),
    ("Mumbai", "Bombay", 0.9, 31, "humid haze"),
    ("Sydney", "Sydney", 0.85, 24, "a sea breeze"),
    ("Toronto", "Toronto", 0.95, 1, "overcast skies"),
    ("Nairobi", "Nairobi", 0.8, 19, "light rain"),
    ("Zürich", "Zurich", 0.55, 3, "low cloud"),
];

/// (function, what it must do, tests, the model's skill, its code).
const CODE: [(&str, &str, u32, f64, &str); 10] = [
    ("is_palindrome(s)", "returns True when s reads the same backwards, ignoring case and non-letters", 5, 0.95,
     "def is_palindrome(s):\n    t = [c.lower() for c in s if c.isalnum()]\n    return t == t[::-1]"),
    ("fizzbuzz(n)", "returns the FizzBuzz strings for 1..n", 5, 0.95,
     "def fizzbuzz(n):\n    return ['FizzBuzz' if i % 15 == 0 else 'Fizz' if i % 3 == 0\n            else 'Buzz' if i % 5 == 0 else str(i) for i in range(1, n + 1)]"),
    ("flatten(nested)", "flattens arbitrarily nested lists", 5, 0.8,
     "def flatten(nested):\n    out = []\n    for x in nested:\n        out.extend(flatten(x) if isinstance(x, list) else [x])\n    return out"),
    ("merge_intervals(intervals)", "merges overlapping [start, end] intervals", 8, 0.7,
     "def merge_intervals(intervals):\n    out = []\n    for s, e in sorted(intervals):\n        if out and s <= out[-1][1]:\n            out[-1][1] = max(out[-1][1], e)\n        else:\n            out.append([s, e])\n    return out"),
    ("roman_to_int(s)", "converts a Roman numeral to an integer", 5, 0.75,
     "def roman_to_int(s):\n    v = {'I': 1, 'V': 5, 'X': 10, 'L': 50, 'C': 100, 'D': 500, 'M': 1000}\n    return sum(-v[a] if v[a] < v[b] else v[a] for a, b in zip(s, s[1:] + 'I'))"),
    ("top_k_frequent(nums, k)", "returns the k most frequent numbers, most frequent first", 5, 0.6,
     "from collections import Counter\n\ndef top_k_frequent(nums, k):\n    return [x for x, _ in Counter(nums).most_common(k)]"),
    ("parse_duration(text)", "turns '1h30m15s' into seconds", 8, 0.45,
     "import re\n\ndef parse_duration(text):\n    units = {'h': 3600, 'm': 60, 's': 1}\n    return sum(int(n) * units[u] for n, u in re.findall(r'(\\d+)([hms])', text))"),
    ("rotate_matrix(m)", "rotates a square matrix 90° clockwise in place", 5, 0.5,
     "def rotate_matrix(m):\n    m[:] = [list(row) for row in zip(*m[::-1])]"),
    ("lcs_length(a, b)", "returns the length of the longest common subsequence", 8, 0.35,
     "def lcs_length(a, b):\n    prev = [0] * (len(b) + 1)\n    for x in a:\n        cur = [0]\n        for j, y in enumerate(b):\n            cur.append(prev[j] + 1 if x == y else max(prev[j + 1], cur[j]))\n        prev = cur\n    return prev[-1]"),
    ("LRUCache(capacity)", "a cache with get and put that evicts the least recently used key", 8, 0.25,
     "from collections import OrderedDict\n\nclass LRUCache:\n    def __init__(self, capacity):\n        self.cap, self.d = capacity, OrderedDict()\n    def get(self, key):\n        if key not in self.d:\n            return -1\n        self.d.move_to_end(key)\n        return self.d[key]\n    def put(self, key, value):\n        self.d[key] = value\n        self.d.move_to_end(key)\n        if len(self.d) > self.cap:\n            self.d.popitem(last=False)"),
];

const AGENTS: [&str; 3] = [
    "math_with_judge_simple_agent",
    "example_single_tool_call_simple_agent",
    "code_gen_simple_agent",
];
const MAX_OUTPUT_TOKENS: u64 = 4096;

fn weather_tools() -> Value {
    json!([{"type": "function", "name": "get_weather", "description": "Current weather for a city.",
        "parameters": {"type": "object", "properties": {"city": {"type": "string", "description": "The city's name."}},
        "required": ["city"], "additionalProperties": false}, "strict": true}])
}

/// The request a task sends, and the dataset's own fields beside it.
fn task(t: usize) -> (Value, Vec<(&'static str, Value)>) {
    let (agent, i) = (t / 10, t % 10);
    let message = |role: &str, text: String| json!({"role": role, "content": text});
    match agent {
        0 => (
            json!({"input": [
                message("system", "Solve the problem. Put your final answer in \\boxed{}.".into()),
                message("user", MATH[i].0.into())],
                "temperature": 1.0, "max_output_tokens": MAX_OUTPUT_TOKENS}),
            vec![("expected_answer", json!(MATH[i].1.to_string()))],
        ),
        1 => (
            json!({"input": [message("user", format!("What's the weather like in {} right now? Answer in one sentence.", WEATHER[i].0))],
                "tools": weather_tools(), "tool_choice": "auto", "parallel_tool_calls": false,
                "temperature": 1.0, "max_output_tokens": MAX_OUTPUT_TOKENS}),
            vec![("expected_city", json!(WEATHER[i].0))],
        ),
        _ => (
            json!({"input": [
                message("system", "You are an expert Python programmer. Answer with one ```python block.".into()),
                message("user", format!("Write `{}`: it {}.", CODE[i].0, CODE[i].1))],
                "temperature": 1.0, "max_output_tokens": MAX_OUTPUT_TOKENS}),
            vec![("num_tests", json!(CODE[i].2))],
        ),
    }
}

fn text_message(id: String, text: String) -> Value {
    json!({"id": id, "content": [{"annotations": [], "text": text, "type": "output_text", "logprobs": null}],
        "role": "assistant", "status": "completed", "type": "message"})
}

fn reasoning(id: String, text: &str) -> Value {
    json!({"id": id, "summary": [{"text": text, "type": "summary_text"}], "type": "reasoning", "encrypted_content": null})
}

/// One rollout: the output items, the usage, the reward and the verifier's fields.
struct Outcome {
    output: Vec<Value>,
    input_tokens: u64,
    output_tokens: u64,
    truncated: bool,
    reward: f64,
    fields: Vec<(&'static str, Value)>,
}

fn between(rng: &mut Rng, lo: u64, hi: u64) -> u64 {
    lo + rng.below((hi - lo) as usize) as u64
}

fn math(rng: &mut Rng, k: usize, i: usize) -> Outcome {
    let (_, answer, wrong, p, solution) = MATH[i];
    let right = rng.unit() < p;
    let (said, thought, output_tokens) = if right {
        (
            answer,
            solution.to_string(),
            between(rng, 250, 700) + ((1.0 - p) * 1200.0) as u64,
        )
    } else {
        (
            wrong,
            format!("I first tried: {solution} That does not match my other count, so I recomputed and kept {wrong}."),
            between(rng, 1300, 3800),
        )
    };
    Outcome {
        output: vec![
            reasoning(format!("rs_{k}"), &thought),
            text_message(
                format!("msg_{k}"),
                format!("The answer is \\boxed{{{said}}}."),
            ),
        ],
        input_tokens: between(rng, 90, 140),
        output_tokens,
        truncated: false,
        reward: if right { 1.0 } else { 0.0 },
        fields: vec![
            ("expected_answer", json!(answer.to_string())),
            ("extracted_answer", json!(said.to_string())),
            ("library_reward", json!(if right { 1.0 } else { 0.0 })),
            ("judge_evaluations", Value::Null),
        ],
    }
}

fn weather(rng: &mut Rng, k: usize, i: usize) -> Outcome {
    let (city, folded, p, celsius, sky) = WEATHER[i];
    let roll = rng.unit();
    let (mut output, right) = (Vec::new(), roll < p);
    if roll < p + (1.0 - p) * 0.7 {
        // The tool is called, with the right name or the folded one.
        let asked = if right { city } else { folded };
        let call = format!("call_{k}");
        let result = if asked == city {
            json!({"city": city, "temperature_c": celsius, "conditions": sky}).to_string()
        } else {
            json!({"error": format!("unknown city: {asked}")}).to_string()
        };
        output.push(json!({"arguments": json!({"city": asked}).to_string(), "call_id": call,
            "name": "get_weather", "type": "function_call", "id": format!("fc_{k}"), "status": "completed"}));
        output.push(json!({"call_id": call, "output": result, "type": "function_call_output", "id": null, "status": "completed"}));
        output.push(text_message(
            format!("msg_{k}"),
            if asked == city {
                format!("It is {celsius} °C in {city} with {sky}.")
            } else {
                format!("I could not get the weather for {asked}; it is probably mild there.")
            },
        ));
    } else {
        output.push(text_message(
            format!("msg_{k}"),
            format!("{city} is usually pleasant at this time of year, around 20 °C."),
        ));
    }
    let turns = if output.len() > 1 { 2 } else { 1 };
    Outcome {
        output,
        input_tokens: between(rng, 180, 240) * turns,
        output_tokens: between(rng, 40, 160) * turns,
        truncated: false,
        reward: if right { 1.0 } else { 0.0 },
        fields: vec![("expected_city", json!(city))],
    }
}

fn code(rng: &mut Rng, k: usize, i: usize) -> Outcome {
    let (name, _, tests, skill, source) = CODE[i];
    // Hard tasks sometimes run out of room before any code.
    if rng.unit() < (1.0 - skill) * 0.25 {
        return Outcome {
            output: vec![reasoning(
                format!("rs_{k}"),
                &format!("Let me think about the edge cases of {name} before writing it: empty input, one element, duplicates, very large input, and"),
            )],
            input_tokens: between(rng, 150, 210),
            output_tokens: MAX_OUTPUT_TOKENS,
            truncated: true,
            reward: 0.0,
            fields: vec![("num_tests", json!(tests)), ("num_passed", json!(0))],
        };
    }
    let passed = (0..tests).filter(|_| rng.unit() < skill).count() as u32;
    Outcome {
        output: vec![
            reasoning(
                format!("rs_{k}"),
                &format!("Plan for {name}, then the edge cases."),
            ),
            text_message(format!("msg_{k}"), format!("```python\n{source}\n```")),
        ],
        input_tokens: between(rng, 150, 210),
        output_tokens: between(rng, 300, 900) + ((1.0 - skill) * 2500.0) as u64,
        truncated: false,
        reward: f64::from(passed) / f64::from(tests),
        fields: vec![("num_tests", json!(tests)), ("num_passed", json!(passed))],
    }
}

fn object(pairs: Vec<(&str, Value)>) -> Value {
    Value::Object(pairs.into_iter().map(|(k, v)| (k.to_string(), v)).collect())
}

/// Writes `<name>_materialized_inputs.jsonl` and `<name>.jsonl` in `dir` (replaced if present).
pub fn generate_showcase(dir: &Path, name: &str) -> (PathBuf, PathBuf) {
    let (inputs, rollouts) = run_paths(dir, name);
    let tasks = AGENTS.len() * 10;
    let agent_ref = |t: usize| json!({"type": "responses_api_agents", "name": AGENTS[t / 10]});
    let mut w = BufWriter::new(File::create(&inputs).unwrap());
    for r in 0..REPEATS {
        for t in 0..tasks {
            let (params, fields) = task(t);
            let mut row = vec![("responses_create_params", params)];
            row.extend(fields);
            row.extend([
                ("agent_ref", agent_ref(t)),
                ("_ng_task_index", json!(t)),
                ("_ng_rollout_index", json!(r)),
            ]);
            writeln!(w, "{}", object(row)).unwrap();
        }
    }
    w.flush().unwrap();
    let mut rng = Rng(0x5EED_0044_C0FF_EE11);
    let mut w = BufWriter::new(File::create(&rollouts).unwrap());
    for k in shuffled(&mut rng, tasks * REPEATS) {
        let (t, r) = (k % tasks, k / tasks);
        let o = match t / 10 {
            0 => math(&mut rng, k, t % 10),
            1 => weather(&mut rng, k, t % 10),
            _ => code(&mut rng, k, t % 10),
        };
        let reasoning_tokens = if t / 10 == 1 {
            0
        } else {
            o.output_tokens * 2 / 3
        };
        let response = json!({
            "id": format!("resp_{k}"), "created_at": 1_764_547_200 + k as u64 * 7, "error": null,
            "incomplete_details": if o.truncated { json!({"reason": "max_output_tokens"}) } else { Value::Null },
            "instructions": null, "metadata": null, "model": MODEL, "object": "response",
            "output": o.output, "parallel_tool_calls": t / 10 != 1, "temperature": 1.0,
            "tool_choice": "auto", "tools": [], "top_p": 1.0,
            "status": if o.truncated { "incomplete" } else { "completed" },
            "usage": {"input_tokens": o.input_tokens, "input_tokens_details": {"cached_tokens": 0},
                "output_tokens": o.output_tokens, "output_tokens_details": {"reasoning_tokens": reasoning_tokens},
                "total_tokens": o.input_tokens + o.output_tokens}});
        let mut row = vec![
            ("responses_create_params", task(t).0),
            ("response", response),
            ("reward", json!(o.reward)),
        ];
        row.extend(o.fields);
        row.extend([
            ("_ng_task_index", json!(t)),
            ("_ng_rollout_index", json!(r)),
            ("agent_ref", agent_ref(t)),
        ]);
        writeln!(w, "{}", object(row)).unwrap();
    }
    w.flush().unwrap();
    (inputs, rollouts)
}
