//! Health's skimming reader gives exactly the report serde's reader gives: on every JSONL file
//! under tests/fixtures (example runs, generated runs, pivot cases — errors included), on a
//! generated agentic run, and on a run of hand-made edge rows; fed in chunks, and through
//! `native::run_read` (every core, beside the profile), as `report` reads.

use crate::common::assert_contains;
use crate::common::assert_success;
use crate::common::fixture_files;
use crate::common::gen_run;

use gymscope::health::{HealthBuilder, HealthError, HealthReport, Signals};
use gymscope::native::run_read::read_run;
use serde_json::json;
use std::path::Path;

type Outcome = (
    Result<HealthReport, HealthError>,
    Vec<((i64, i64), u64, Option<String>, Signals)>,
);

/// Health of `rollouts` (with its materialized inputs when given), in small chunks so that lines
/// straddle them.
fn health(rollouts: &Path, inputs: Option<&Path>, failures: Option<&Path>, serde: bool) -> Outcome {
    let mut b = HealthBuilder::new("rollouts", 1.0);
    if serde {
        b = b.serde_reader();
    }
    let mut fed = Ok(());
    if let Some(inputs) = inputs {
        for chunk in std::fs::read(inputs).unwrap().chunks(4096) {
            fed = fed.and_then(|()| b.push_inputs("inputs", chunk));
        }
    }
    if let Some(failures) = failures {
        for chunk in std::fs::read(failures).unwrap().chunks(4096) {
            fed = fed.and_then(|()| b.push_failures("failures", chunk));
        }
    }
    for chunk in std::fs::read(rollouts).unwrap().chunks(4096) {
        fed = fed.and_then(|()| b.push_rollouts(chunk));
    }
    if let Err(e) = fed {
        return (Err(e), Vec::new());
    }
    if let Err(e) = b.end_rollouts() {
        return (Err(e), Vec::new());
    }
    let signals = b
        .rollout_signals()
        .map(|(key, line, agent, s)| (key, line, agent.map(str::to_string), s.clone()))
        .collect();
    (b.finish(), signals)
}

fn assert_same(rollouts: &Path, inputs: Option<&Path>) -> bool {
    assert_same_with(rollouts, inputs, None)
}

fn assert_same_with(rollouts: &Path, inputs: Option<&Path>, failures: Option<&Path>) -> bool {
    let skim = health(rollouts, inputs, failures, false);
    let serde = health(rollouts, inputs, failures, true);
    assert_eq!(skim, serde, "{}", rollouts.display());
    skim.0.is_ok()
}

#[test]
fn every_fixture_file_gives_the_serde_report() {
    let files = fixture_files::every_jsonl();
    let mut read = 0;
    for rollouts in &files {
        let name = rollouts.file_name().unwrap().to_str().unwrap();
        if name.ends_with("_materialized_inputs.jsonl") {
            continue;
        }
        let inputs = rollouts.with_file_name(name.replace(".jsonl", "_materialized_inputs.jsonl"));
        let inputs = inputs.exists().then_some(inputs);
        read += usize::from(assert_same(rollouts, inputs.as_deref()));
    }
    // Every example and generated run is read (the pivot cases are mostly not rollouts).
    assert!(read >= 26, "only {read} fixture files were readable runs");
}

#[test]
fn a_generated_agentic_run_gives_the_serde_report_alone_and_beside_the_profile() {
    let dir = tempfile::tempdir().unwrap();
    let (inputs, rollouts) = gen_run::generate_agentic(dir.path(), "agentic", 60, 4, 4500);
    assert!(assert_same(&rollouts, Some(&inputs)));
    let serde = health(&rollouts, Some(&inputs), None, true).0;
    let health = Some(HealthBuilder::new("rollouts", 1.0));
    let (_, same_read) = read_run(&inputs, &rollouts, u64::MAX, health, |_| {}).unwrap();
    assert_eq!(same_read.unwrap().unwrap(), serde.unwrap());
}

/// Hand-made rows at the edges of what the skimming readers take: escapes in names, ids and
/// arguments, Unicode, malformed and non-canonical arguments, loops, missing or null usage,
/// repeated keys, tool errors in every form, blank answers, `ng_trajectory`.
#[test]
fn edge_rows_give_the_serde_report() {
    let call = |name: &str, args: &str, id: &str| json!({"type": "function_call", "name": name, "arguments": args, "call_id": id});
    let out = |id: &str, output: serde_json::Value| json!({"type": "function_call_output", "call_id": id, "output": output});
    let answer = |content: serde_json::Value| json!({"type": "message", "role": "assistant", "content": content});
    let outputs = [
        json!([
            call("py\"thon", "{\"b\": 1, \"a\": \"\\u00e9\"}", "c\\1"),
            out("c\\1", json!("{\"exit_code\": 0}")),
            call("py\"thon", "{\"a\":\"é\",\"b\":1}", "c2"),
            call("py\"thon", "{\"a\": \"\\u00e9\", \"b\": 1.0}", "c3"),
            call("py\"thon", "{ \"b\" : 1 , \"a\" : \"é\" }", "c4"),
            answer(json!([{"type": "output_text", "text": "ok"}]))
        ]),
        json!([
            call("f", "{not json", "a"),
            call("f", "{not json", "b"),
            out("a", json!("Traceback: x")),
            answer(json!(" \n"))
        ]),
        json!([
            call("f", "{\"a\": 1, \"a\": 2}", "a"),
            call("f", "{\"a\": 2}", "b"),
            out("b", json!({"status": "error"}))
        ]),
        json!([
            call("λ", "{\n  \"q\": [1, 2]\n}", "a"),
            call("λ", "{\"q\":[1,2]}", "b"),
            out("a", json!("{\n \"error\": \"boom\"\n}")),
            out("b", json!([{"type": "text", "text": "Exit code 2"}])),
            answer(json!([{"type": "output_text", "text": "\u{a0}"}]))
        ]),
        json!([
            call("g", "", "a"),
            out("a", json!("{\"error\": null, \"detail\": \"x\"} tail")),
            json!({"type": "reasoning", "summary": []})
        ]),
        json!([]),
    ];
    let mut lines: Vec<String> = Vec::new();
    for (task, output) in outputs.iter().enumerate() {
        for rollout in 0..3_i64 {
            let mut row = json!({
                "responses_create_params": {"input": [{"role": "user", "content": "q \"é\" 😀"}]},
                "_ng_task_index": task, "_ng_rollout_index": rollout,
                "agent_ref": {"name": format!("agent \"{}\"", task % 2)},
                "reward": rollout % 2,
                "response": {"status": if rollout == 2 { "incomplete" } else { "completed" },
                             "incomplete_details": if rollout == 2 { json!({"reason": "max_output_tokens"}) } else { json!(null) },
                             "output": output,
                             "usage": if rollout == 1 { json!(null) } else { json!({"input_tokens": 10, "output_tokens": 0, "total_tokens": 10,
                                      "input_tokens_details": {"cached_tokens": 3}, "output_tokens_details": {"reasoning_tokens": 1}}) }},
            });
            if task == 3 {
                row["ng_trajectory"] = json!({"gaps": [{"code": "missing_call"}], "tool_calls": [{"status": "ok"}], "turns": [1, 2]});
            }
            lines.push(row.to_string());
        }
    }
    // A repeated unknown key (read by both), a repeated field (its last value, as Python's
    // `json` and `profile` read it), a raw tab, an escaped key (left to serde), each a duplicate
    // rollout; then rows both readers refuse: a wrong type.
    let base = lines[0].clone();
    lines.push(base.replacen("\"reward\":", "\"x\":1,\"x\":[2],\"reward\":", 1));
    lines.push(base.replacen("\"reward\":", "\"reward\":2,\"reward\":", 1));
    lines.push(base.replacen("\"response\":{", "\"response\":{\"output\":[],", 1));
    lines.push(base.replacen(
        "{\"responses_create_params\"",
        "{ \"x\":\t1, \"responses_create_params\"",
        1,
    ));
    lines.push(base.replacen("\"_ng_task_index\"", "\"\\u005fng_task_index\"", 1));
    assert!(lines[lines.len() - 2].contains('\t'));
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, lines: &[String]| {
        let path = dir.path().join(name);
        std::fs::write(&path, lines.join("\n")).unwrap();
        path
    };
    let failures = [
        r#"{"_ng_task_index":9,"_ng_rollout_index":0,"_ng_failure_class":"judge_failed","agent_ref":{"name":"a\"b"}}"#,
        r#"{"_ng_task_index":9,"_ng_rollout_index":1,"_ng_failure_class":null}"#,
        r#"{"_ng_task_index":9,"_ng_rollout_index":2,"_ng_failure_class":{"k":[1]}}"#,
        r#"{"\u005fng_task_index":9,"_ng_rollout_index":3}"#,
    ]
    .map(str::to_string);
    let inputs: Vec<String> = (0..8)
        .flat_map(|t| (0..3).map(move |r| json!({"_ng_task_index": t, "_ng_rollout_index": r, "agent_ref": {"name": format!("agent \"{}\"", t % 2)}, "x": "é\\u00e9"}).to_string()))
        .collect();
    let (edge, inputs, failures) = (
        write("edge.jsonl", &lines),
        write("edge_materialized_inputs.jsonl", &inputs),
        write("failures.jsonl", &failures),
    );
    assert!(assert_same_with(&edge, Some(&inputs), Some(&failures)));
    let bad_failures = write(
        "bad_failures.jsonl",
        &[r#"{"_ng_task_index":1,"_ng_task_index":2,"_ng_rollout_index":0}"#.to_string()],
    );
    assert!(!assert_same_with(&edge, Some(&inputs), Some(&bad_failures)));
    for bad in [
        base.replacen("\"_ng_task_index\":0", "\"_ng_task_index\":\"0\"", 1),
        base.replacen("\"status\":\"completed\"", "\"status\":7", 1),
    ] {
        let mut with_bad = lines.clone();
        with_bad.insert(4, bad);
        assert!(!assert_same(&write("bad.jsonl", &with_bad), None));
    }
}

/// `gymscope health` reads the rollouts on every core: its JSON equals the one-thread streaming
/// read's on a run of many batches, and an error before a line over the limit is the one named.
#[test]
fn the_cli_on_every_core_gives_the_one_thread_report() {
    let dir = tempfile::tempdir().unwrap();
    let (inputs, rollouts) = gen_run::generate_agentic(dir.path(), "many", 500, 4, 4500);
    assert!(
        std::fs::metadata(&rollouts).unwrap().len() > 4 << 20,
        "several batches"
    );
    let cli = |args: &[&std::ffi::OsStr]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_gymscope"))
            .arg("health")
            .args(args)
            .output()
            .unwrap()
    };
    let out = cli(&[
        "--format".as_ref(),
        "json".as_ref(),
        "--inputs".as_ref(),
        inputs.as_os_str(),
        rollouts.as_os_str(),
    ]);
    assert_success(&out);
    let name = rollouts.display().to_string();
    let mut b = HealthBuilder::new(&name, 1.0);
    let in_name = inputs.display().to_string();
    b.push_inputs(&in_name, &std::fs::read(&inputs).unwrap())
        .unwrap();
    b.push_rollouts(&std::fs::read(&rollouts).unwrap()).unwrap();
    let streamed = serde_json::to_string_pretty(&b.finish().unwrap()).unwrap() + "\n";
    assert_eq!(String::from_utf8(out.stdout).unwrap(), streamed);

    // A broken line early, a line over the limit late (after several batches).
    let text = std::fs::read_to_string(&rollouts).unwrap();
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    lines[5] = "{\"a\":".into();
    lines[1900] = format!("{{\"pad\":\"{}\"}}", "x".repeat(70_000));
    std::fs::write(&rollouts, lines.join("\n")).unwrap();
    let limit = [
        "--max-line-bytes".as_ref(),
        "65536".as_ref(),
        rollouts.as_os_str(),
    ];
    let out = cli(&limit);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("line 6:"), "{stderr}");
    lines[5] = lines[4].clone();
    std::fs::write(&rollouts, lines.join("\n")).unwrap();
    let out = cli(&limit);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_contains(&stderr, "line 1901 is longer than 65536");
}
