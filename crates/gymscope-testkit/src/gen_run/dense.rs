//! The structure-dense shape (issue 28): rows as NeMo Gym's gymnasium environments write them
//! (`blackjack`, `grl_sokoban`, `example_multi_turn_gymnasium` in `tests/fixtures/gym-examples`),
//! where most of a line is JSON structure, not text: every Responses-API default written out
//! (mostly `null`), many small turns in `response.output` (short `function_call` /
//! `function_call_output` items with small JSON arguments), short strings. The reader's cost
//! follows the structure (a key or short string costs a scan however few its bytes), so this is
//! the shape that shows what a byte of such rows costs. Only the final message is prose.
//!
//! Aimed at (and measured by `cargo bench --bench profile`, which prints it): ~4.7 KB a rollout
//! line, ~95 scalar JSON values a row (~120 with the objects and arrays), ~64 quotes and ~10
//! backslashes per KB.

use super::{run_paths, shuffled, Rng};
use std::fmt::Write as _;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

/// The three gymnasium agents (one per task, by task index).
const AGENTS: [&str; 3] = [
    "blackjack_gymnasium_agent",
    "grl_sokoban_gymnasium_agent",
    "grl_tetris_gymnasium_agent",
];

/// The system prompt of each agent (plain prose, as the fixtures' are).
const SYSTEMS: [&str; 3] = [
    "You are playing Blackjack against the dealer. After seeing your hand and the dealer's up card, call the step tool with the action hit or stand. Think briefly about the odds of going over 21 before you act, and keep playing until the hand ends.",
    "You are a Sokoban-solving assistant. You will receive a board observation after reset and after every move. Symbols: #=wall, _=floor, O=target, X=box, P=player. Call the step tool with exactly one move each turn: Up, Down, Left or Right.",
    "You are playing Tetris on a narrow board. After each observation, call the step tool with one action: left, right, rotate or drop. Clear as many lines as you can and avoid stacking pieces to the top of the board.",
];

const ACTIONS: [&[&str]; 3] = [
    &["hit", "stand"],
    &["Up", "Down", "Left", "Right"],
    &["left", "right", "rotate", "drop"],
];

/// The Responses-API request defaults as Gym writes them: every unset parameter as `null`.
fn create_params(agent: usize, observation: &str) -> String {
    format!(
        r#"{{"background":null,"include":null,"input":[{{"content":"{}","role":"system","type":"message"}},{{"content":{observation},"role":"user","type":"message"}}],"instructions":null,"max_output_tokens":1024,"max_tool_calls":null,"metadata":null,"model":null,"parallel_tool_calls":true,"previous_response_id":null,"prompt":null,"reasoning":null,"service_tier":null,"store":null,"temperature":0.7,"text":null,"tool_choice":"auto","tools":[],"top_logprobs":null,"top_p":null,"truncation":null,"user":null,"stream":null}}"#,
        SYSTEMS[agent]
    )
}

/// A small board or hand as the environment prints it: short lines joined by escaped newlines.
fn observation(rng: &mut Rng, agent: usize) -> String {
    let mut s = String::new();
    match agent {
        0 => {
            let _ = write!(
                s,
                "Your hand: [{}, {}] = {}\nDealer shows: {}\nCards left in the shoe: {}\nHands played: {}\nChips: {}\nRespond with hit or stand, and remember that the dealer stands on 17.",
                2 + rng.below(9),
                2 + rng.below(9),
                4 + rng.below(17),
                ["A", "K", "7", "10"][rng.below(4)],
                100 + rng.below(200),
                rng.below(50),
                rng.below(1000)
            );
        }
        1 => {
            s.push_str("Sokoban board:\n#########\n");
            for _ in 0..7 {
                s.push('#');
                for _ in 0..7 {
                    s.push(['_', '_', 'X', 'O', 'P'][rng.below(5)]);
                }
                s.push_str("#\n");
            }
            s.push_str("#########\nLegend: #=wall, _=floor, O=target, X=box, P=player.\nRespond with exactly one move.");
        }
        _ => {
            s.push_str("Board:\n");
            for _ in 0..10 {
                for _ in 0..10 {
                    s.push(['.', '.', '#'][rng.below(3)]);
                }
                s.push('\n');
            }
            let _ = write!(
                s,
                "Next piece: {}\nLines cleared: {}\nRespond with one action.",
                ["I", "O", "T", "L"][rng.below(4)],
                rng.below(20)
            );
        }
    }
    serde_json::to_string(&s).unwrap()
}

/// One turn: the model's tool call with its small JSON arguments (escaped inside a string), and
/// the environment's answer: the next observation, as gymnasium environments give it.
fn turn(out: &mut String, rng: &mut Rng, agent: usize, k: usize, s: usize) {
    let actions = ACTIONS[agent];
    let action = actions[rng.below(actions.len())];
    let arguments = serde_json::to_string(&format!(r#"{{"action": "{action}"}}"#)).unwrap();
    let result = observation(rng, agent);
    let _ = write!(
        out,
        r#"{{"arguments":{arguments},"call_id":"call_{k}_{s}","name":"step","type":"function_call","id":"fc_{k}_{s}","status":"completed"}},{{"call_id":"call_{k}_{s}","output":{result},"type":"function_call_output","id":null,"status":"completed"}},"#
    );
}

/// Plain prose of about `bytes` bytes, a paragraph break every ~120 (no quotes: the density is in
/// the structure), as a JSON string.
fn prose(rng: &mut Rng, bytes: usize, action: &str) -> String {
    const WORDS: [&str; 12] = [
        "the", "board", "move", "next", "position", "because", "safe", "value", "dealer", "box",
        "line", "clear",
    ];
    let mut s = String::with_capacity(bytes + 16);
    while s.len() < bytes {
        s.push_str(WORDS[rng.below(WORDS.len())]);

        s.push(match rng.below(20) {
            0 => '\n',
            1 | 2 => '.',
            _ => ' ',
        });
    }
    let _ = write!(s, " <action>{action}</action>");
    serde_json::to_string(&s).unwrap()
}

/// The response's own defaults around its output, as Gym's responses server writes them.
fn response(k: usize, output: &str, usage: &str) -> String {
    format!(
        r#"{{"id":"resp_{k:032x}","created_at":1778816760.0,"error":null,"incomplete_details":null,"instructions":null,"metadata":null,"model":"Qwen/Qwen3-4B-Instruct-2507","object":"response","output":[{output}],"parallel_tool_calls":true,"temperature":0.7,"tool_choice":"auto","tools":[],"top_p":null,"background":null,"conversation":null,"max_output_tokens":1024,"max_tool_calls":null,"previous_response_id":null,"prompt":null,"prompt_cache_key":null,"reasoning":null,"safety_identifier":null,"service_tier":null,"status":"completed","text":null,"top_logprobs":null,"truncation":null,"usage":{usage},"user":null}}"#
    )
}

/// Writes `<name>_materialized_inputs.jsonl` and `<name>.jsonl` in `dir` (kept if present):
/// `tasks × repeats` rollouts of three gymnasium agents, each of 1–3 tool-call turns and a final
/// message of ~1.7 KB of prose, in shuffled completion order. Deterministic: the same arguments give the same
/// bytes.
pub fn generate_dense(dir: &Path, name: &str, tasks: usize, repeats: usize) -> (PathBuf, PathBuf) {
    let (inputs, rollouts) = run_paths(dir, name);
    if inputs.exists() && rollouts.exists() {
        return (inputs, rollouts);
    }
    let mut rng = Rng(0x6A09_E667_F3BC_C909);
    let observations: Vec<String> = (0..tasks).map(|t| observation(&mut rng, t % 3)).collect();
    let mut w = BufWriter::new(File::create(&inputs).unwrap());
    for (t, obs) in observations.iter().enumerate() {
        for r in 0..repeats {
            writeln!(
                w,
                r#"{{"level_id":{},"seed":{},"responses_create_params":{},"agent_ref":{{"type":"responses_api_agents","name":"{}"}},"_ng_task_index":{t},"_ng_rollout_index":{r}}}"#,
                t % 50,
                t * 7919 % 100_000,
                create_params(t % 3, obs),
                AGENTS[t % 3]
            )
            .unwrap();
        }
    }
    w.flush().unwrap();
    let order = shuffled(&mut rng, tasks * repeats);
    let mut w = BufWriter::new(File::create(&rollouts).unwrap());
    let mut output = String::new();
    for k in order {
        let (t, r) = (k / repeats, k % repeats);
        let agent = t % 3;
        let steps = 1 + rng.below(3);
        output.clear();
        for s in 0..steps {
            turn(&mut output, &mut rng, agent, k, s);
        }
        let _ = write!(
            output,
            r#"{{"id":"msg_{k:032x}","content":[{{"annotations":[],"text":{},"type":"output_text","logprobs":null}}],"role":"assistant","status":"completed","type":"message"}}"#,
            prose(&mut rng, 1700, ACTIONS[agent][0])
        );
        let (input_tokens, output_tokens) = (150 + rng.below(900), 8 + rng.below(120));
        let usage = format!(
            r#"{{"input_tokens":{input_tokens},"input_tokens_details":{{"cached_tokens":{}}},"output_tokens":{output_tokens},"output_tokens_details":{{"reasoning_tokens":0}},"total_tokens":{}}}"#,
            input_tokens / 4,
            input_tokens + output_tokens
        );
        let reward = [-1.0, 0.0, 1.0][rng.below(3)];
        writeln!(
            w,
            r#"{{"responses_create_params":{},"response":{},"reward":{reward:?},"terminated":{},"truncated":{},"info":{{}},"steps_taken":{steps},"invalid_actions":{},"episode_return":{:.3},"_ng_task_index":{t},"_ng_rollout_index":{r},"agent_ref":{{"type":"responses_api_agents","name":"{}"}}}}"#,
            create_params(agent, &observations[t]),
            response(k, &output, &usage),
            rng.below(4) != 0,
            rng.below(8) == 0,
            rng.below(3),
            reward * rng.unit(),
            AGENTS[agent]
        )
        .unwrap();
    }
    w.flush().unwrap();
    (inputs, rollouts)
}
