//! A small Harbor job folder, as Harbor writes one: a trial per sub-folder (`TASK__ID`) with
//! `agent/trajectory.json` (ATIF v1.7) and `result.json` (task name, verifier reward), and the
//! job's own `result.json` at the top. Three trials of two tasks; two pass.

use serde_json::{json, Value};
use std::path::{Path, PathBuf};

/// The trials: (folder, task, reward).
pub const TRIALS: [(&str, &str, f64); 3] = [
    ("fix-bug__a1", "fix-bug", 1.0),
    ("fix-bug__b2", "fix-bug", 0.0),
    ("hello__c3", "hello", 1.0),
];

fn write_json(p: &Path, v: &Value) {
    std::fs::create_dir_all(p.parent().expect("a parent")).expect("the folder is made");
    std::fs::write(p, serde_json::to_vec_pretty(v).expect("JSON")).expect("the file is written");
}

/// An ATIF v1.7 trajectory of `steps` by Harbor's agent.
pub fn trajectory(steps: Value) -> Value {
    json!({"schema_version": "ATIF-v1.7", "agent": {"name": "harbor-agent", "version": "1"}, "steps": steps})
}

/// Writes the job at `parent/2026-12-04__10-00-00` and returns its path.
pub fn write(parent: &Path) -> PathBuf {
    let job = parent.join("2026-12-04__10-00-00");
    for (trial, task, reward) in TRIALS {
        let steps = json!([
            {"step_id": 1, "source": "user", "message": format!("do {task}")},
            {"step_id": 2, "source": "agent", "message": "", "tool_calls": [
                {"tool_call_id": "c1", "function_name": "bash", "arguments": {"cmd": "ls"}}],
             "observation": {"results": [{"source_call_id": "c1", "content": "file.txt"}]},
             "metrics": {"prompt_tokens": 10, "completion_tokens": 5}},
            {"step_id": 3, "source": "agent", "message": "done"}
        ]);
        write_json(
            &job.join(trial).join("agent/trajectory.json"),
            &trajectory(steps),
        );
        write_json(
            &job.join(trial).join("result.json"),
            &json!({"trial_name": trial, "task_name": task,
            "verifier_result": {"rewards": {"reward": reward}}}),
        );
        std::fs::write(job.join(trial).join("trial.log"), "a log line\n")
            .expect("the log is written");
    }
    write_json(&job.join("result.json"), &json!({"id": "job"}));
    job
}
