//! Made-up runs for the `compare` tests: tasks with chosen prompts and rewards, written as a
//! run's two files, reduced to `RunTasks` from the run or from its profiling file.

use gymscope_core::compare::{CompareOptions, ProfilingFileReader, RunTasks};
use gymscope_core::output::{profile_bytes, render_in_memory};
use gymscope_core::profile::ProfileOptions;
use serde_json::{json, Value};
use std::path::Path;

/// A task of a made-up run: its index, prompt, agent and each rollout's (reward, output tokens).
pub struct Task<'a> {
    pub index: i64,
    pub prompt: &'a str,
    pub agent: &'a str,
    pub rollouts: Vec<(Value, i64)>,
}

pub fn task<'a>(index: i64, prompt: &'a str, rewards: &[f64]) -> Task<'a> {
    Task {
        index,
        prompt,
        agent: "math",
        rollouts: rewards
            .iter()
            .enumerate()
            .map(|(i, &r)| (json!(r), 100 + 10 * i as i64))
            .collect(),
    }
}

/// The two files of a run. `temperature` differs between runs of the same tasks and must not
/// matter; rollout rows are written in a scrambled order (`scramble` > 0), as collection does.
/// Tasks numbered 0, 1, … in order, each its prompt and its rollouts' rewards ([`task`]).
pub fn numbered<'a>(rows: &[(&'a str, &[f64])]) -> Vec<Task<'a>> {
    let mut tasks = Vec::new();
    for (i, (prompt, rewards)) in rows.iter().enumerate() {
        tasks.push(task(i as i64, prompt, rewards));
    }
    tasks
}

pub fn run(tasks: &[Task], temperature: f64, scramble: usize) -> (String, String) {
    let (mut inputs, mut rows) = (String::new(), Vec::new());
    for t in tasks {
        for (r, (reward, tokens)) in t.rollouts.iter().enumerate() {
            let params = json!({"input": [{"role": "user", "content": t.prompt}], "temperature": temperature});
            let input = json!({"responses_create_params": params, "agent_ref": {"name": t.agent},
                "_ng_task_index": t.index, "_ng_rollout_index": r});
            inputs.push_str(&input.to_string());
            inputs.push('\n');
            let row = json!({"responses_create_params": params,
                "response": {"output": [{"type": "message", "role": "assistant",
                    "content": [{"type": "output_text", "text": format!("answer to {}", t.prompt)}]}],
                    "usage": {"input_tokens": 10, "output_tokens": tokens, "total_tokens": 10 + tokens}},
                "reward": reward, "judge": 0.5, "_ng_task_index": t.index, "_ng_rollout_index": r,
                "agent_ref": {"name": t.agent}});
            rows.push(row.to_string());
        }
    }
    if scramble > 0 {
        let n = rows.len();
        let mut order: Vec<usize> = (0..n).collect();
        order.sort_by_key(|&i| (i * scramble + 7) % n.max(1) * n + i);
        rows = order.into_iter().map(|i| rows[i].clone()).collect();
    }
    (inputs, rows.join("\n") + "\n")
}

pub fn side(files: &(String, String), name: &str) -> RunTasks {
    let (inputs, rollouts) = files;
    let p = profile_bytes(
        inputs.as_bytes(),
        "in.jsonl",
        rollouts.as_bytes(),
        name,
        ProfileOptions::default(),
    )
    .unwrap();
    RunTasks::from_profile(&p, &mut inputs.as_bytes(), "in.jsonl", name).unwrap()
}

/// The side read back from the run's `*_reward_profiling.jsonl`, fed in small chunks.
pub fn profile_side(files: &(String, String), name: &str, chunk: usize) -> RunTasks {
    let (inputs, rollouts) = files;
    let p = profile_bytes(
        inputs.as_bytes(),
        "in.jsonl",
        rollouts.as_bytes(),
        "r.jsonl",
        ProfileOptions::default(),
    )
    .unwrap();
    let file = render_in_memory(&p, inputs.as_bytes(), "in.jsonl")
        .unwrap()
        .reward_profiling;
    let mut reader = ProfilingFileReader::new(name, name);
    for c in file.chunks(chunk) {
        reader.push(c).unwrap();
    }
    reader.finish().unwrap()
}

pub fn by_content() -> CompareOptions {
    CompareOptions::default()
}

/// Writes a run as `dir/<name>.jsonl` + `dir/<name>_materialized_inputs.jsonl`.
pub fn write_run(dir: &Path, name: &str, files: &(String, String)) -> (String, String) {
    let inputs = dir.join(format!("{name}_materialized_inputs.jsonl"));
    let rollouts = dir.join(format!("{name}.jsonl"));
    std::fs::write(&inputs, &files.0).unwrap();
    std::fs::write(&rollouts, &files.1).unwrap();
    (
        inputs.to_string_lossy().into_owned(),
        rollouts.to_string_lossy().into_owned(),
    )
}

/// [`two_runs`] written to `dir` as `a` and `b` ([`write_run`]): their files' paths.
pub fn two_runs_in(dir: &Path) -> ((String, String), (String, String)) {
    let (a, b) = two_runs();
    (write_run(dir, "a", &a), write_run(dir, "b", &b))
}

pub fn two_runs() -> ((String, String), (String, String)) {
    let a = run(
        &[
            task(0, "p0", &[1.0, 1.0]),
            task(1, "p1", &[1.0, 0.0]),
            task(2, "p2", &[0.0, 0.0]),
            task(3, "p3", &[1.0, 1.0]),
            task(4, "only in a", &[1.0, 1.0]),
        ],
        0.6,
        0,
    );
    let b = run(
        &[
            task(0, "p2", &[1.0, 0.0]),
            task(1, "p1", &[1.0, 0.0]),
            task(2, "p0", &[0.0, 0.0]),
            task(3, "p3", &[1.0, 0.0]),
        ],
        0.7,
        3,
    );
    (a, b)
}
