//! Every signal on hand-made rollouts, the outcome metrics, the thresholds and the errors.

use super::*;
use serde_json::json;

fn row(task: i64, rollout: i64, reward: f64, response: serde_json::Value) -> String {
    json!({"responses_create_params": {"input": "x"}, "response": response, "reward": reward,
           "_ng_task_index": task, "_ng_rollout_index": rollout, "agent_ref": {"name": "a"}})
    .to_string()
}

fn msg(text: &str) -> serde_json::Value {
    json!({"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": text}]})
}

fn call(name: &str, args: &str, id: &str) -> serde_json::Value {
    json!({"type": "function_call", "name": name, "arguments": args, "call_id": id})
}

fn out(id: &str, output: &str) -> serde_json::Value {
    json!({"type": "function_call_output", "call_id": id, "output": output})
}

fn usage(i: u64, o: u64) -> serde_json::Value {
    json!({"input_tokens": i, "output_tokens": o, "total_tokens": i + o,
           "input_tokens_details": {"cached_tokens": 3}, "output_tokens_details": {"reasoning_tokens": 5}})
}

fn report(lines: &[String]) -> HealthReport {
    let mut b = HealthBuilder::new("r.jsonl", crate::reward_group::DEFAULT_THRESHOLD);
    let text = lines.join("\n");
    // Fed in small chunks: lines straddle chunk boundaries.
    for chunk in text.as_bytes().chunks(7) {
        b.push_rollouts(chunk).unwrap();
    }
    b.finish().unwrap()
}

fn one(response: serde_json::Value) -> AgentHealth {
    report(&[row(0, 0, 1.0, response)]).agents.remove(0)
}

#[test]
fn a_clean_rollout_has_no_flag() {
    let a = one(json!({"status": "completed", "output": [msg("42")], "usage": usage(10, 20)}));
    assert_eq!(
        (
            a.rollouts,
            a.truncated,
            a.empty_answer,
            a.ended_on_tool,
            a.loops
        ),
        (1, 0, 0, 0, 0)
    );
    assert_eq!(
        (a.tool_calls, a.empty_output, a.turns.max),
        (0, 0, Some(1.0))
    );
    assert_eq!(
        (
            a.tokens.input,
            a.tokens.output,
            a.tokens.reasoning,
            a.tokens.cached
        ),
        (10.0, 20.0, Some(5.0), Some(3.0))
    );
    assert_eq!(a.tokens.reasoning_share, Some(0.25));
}

#[test]
fn truncated_by_reason_and_not_ended_on_tool() {
    let a = one(
        json!({"status": "incomplete", "incomplete_details": {"reason": "max_output_tokens"},
                       "output": [call("f", "{}", "c1")]}),
    );
    assert_eq!(a.truncated, 1);
    assert_eq!(a.truncated_by_reason.get("max_output_tokens"), Some(&1));
    assert_eq!(
        a.ended_on_tool, 0,
        "an incomplete rollout is truncated, not out of steps"
    );
    assert_eq!(a.empty_answer, 1);
    let a = one(json!({"status": "incomplete", "output": [msg("partial")]}));
    assert_eq!(a.truncated_by_reason.get("unknown"), Some(&1));
}

#[test]
fn empty_or_missing_final_answer_and_empty_output() {
    assert_eq!(
        one(json!({"output": [msg("  \n\t\u{a0}")]})).empty_answer,
        1
    );
    assert_eq!(one(json!({"output": [msg(" \n\"")]})).empty_answer, 0);
    assert_eq!(
        one(json!({"output": [msg("ok"), msg("")]})).empty_answer,
        1,
        "the last message counts"
    );
    assert_eq!(
        one(json!({"output": [{"type": "reasoning", "summary": []}]})).empty_answer,
        1
    );
    let a = one(json!({"output": []}));
    assert_eq!(
        (a.empty_output, a.empty_answer, a.turns.max),
        (1, 1, Some(0.0))
    );
    let a = one(json!(null));
    assert_eq!((a.empty_output, a.empty_answer), (1, 1));
    assert_eq!(
        one(json!({"output": [{"type": "message", "role": "assistant", "content": "plain"}]}))
            .empty_answer,
        0
    );
}

#[test]
fn ended_on_a_tool_call_or_output() {
    assert_eq!(
        one(json!({"status": "completed", "output": [call("f", "{}", "c")]})).ended_on_tool,
        1
    );
    assert_eq!(
        one(json!({"output": [call("f", "{}", "c"), out("c", "fine")]})).ended_on_tool,
        1
    );
    assert_eq!(
        one(json!({"output": [call("f", "{}", "c"), out("c", "fine"), msg("done")]})).ended_on_tool,
        0
    );
}

#[test]
fn tool_calls_malformed_arguments_errors_and_dangling_calls() {
    let a = one(json!({"output": [
        call("f", "{\"a\": 1}", "c1"), out("c1", "Traceback (most recent call last)"),
        call("g", "{not json", "c2"), out("c2", "{\"error\": \"Expecting property name\"}"),
        call("h", "{}", "c3"), out("c3", "{\"exit_code\": 0, \"stdout\": \"ok\"}"),
        call("k", "{}", "c4"), out("c4", "{\"exit_code\": 2}"),
        call("m", "{}", "c5"), out("c5", "{\"status\": \"failed\"}"),
        call("n", "{}", "c6"), out("c6", "{\"detail\": \"Not Found\"}"),
        call("p", "{}", "c7"), out("c7", "Internal Server Error"),
        call("q", "{}", "c8"), out("c8", "{\"error\": \"\"}"),
        call("r", "{}", "c9"),
        call("u", "{}", "c10"), out("c10", "Exit code 1\nTraceback"),
        call("v", "{}", "c11"), out("c11", "Exit code 0\nok"),
        msg("done")]}));
    assert_eq!(a.tool_calls, 11);
    assert_eq!(a.malformed_arguments, 1);
    assert_eq!(
        a.tool_error_calls, 7,
        "traceback, error, exit_code 2, failed, detail, 500 text, Exit code 1"
    );
    assert_eq!(
        (
            a.dangling_calls,
            a.rollouts_with_dangling_calls,
            a.rollouts_with_tool_errors
        ),
        (1, 1, 1)
    );
    assert_eq!(
        a.turns.max,
        Some(11.0),
        "ten tool outputs split eleven model runs"
    );
    assert_eq!(a.loops, 0);
}

#[test]
fn loops_three_times_or_twice_in_a_row_with_canonical_arguments() {
    // Same arguments in another key order and spacing: one signature, twice in a row.
    let a = one(
        json!({"output": [call("s", "{\"q\": 1, \"p\": [2]}", "a"), call("s", "{\"p\":[2],\"q\":1}", "b"), msg("x")]}),
    );
    assert_eq!(a.loops, 1);
    // Three times apart.
    let a = one(
        json!({"output": [call("s", "{}", "a"), call("t", "{}", "b"), call("s", "{}", "c"),
                                  call("t", "{\"x\":1}", "d"), call("s", "{}", "e"), msg("x")]}),
    );
    assert_eq!(a.loops, 1);
    // Twice, not in a row: no loop; different arguments: no loop.
    let a = one(
        json!({"output": [call("s", "{}", "a"), call("t", "{}", "b"), call("s", "{}", "c"), msg("x")]}),
    );
    assert_eq!(a.loops, 0);
    let a = one(
        json!({"output": [call("s", "{\"a\":1}", "a"), call("s", "{\"a\":2}", "b"), msg("x")]}),
    );
    assert_eq!(a.loops, 0);
    // Unparsable arguments compare as raw text.
    let a = one(json!({"output": [call("s", "{bad", "a"), call("s", "{bad", "b"), msg("x")]}));
    assert_eq!((a.loops, a.malformed_arguments), (1, 2));
}

#[test]
fn missing_or_zero_usage_is_unknown_not_zero() {
    let h = report(&[
        row(0, 0, 1.0, json!({"output": [msg("a")], "usage": null})),
        row(
            0,
            1,
            1.0,
            json!({"output": [msg("a")], "usage": {"input_tokens": 0, "output_tokens": 0, "total_tokens": 0}}),
        ),
        row(0, 2, 1.0, json!({"output": [msg("a")]})),
        row(
            0,
            3,
            1.0,
            json!({"output": [msg("a")], "usage": {"input_tokens": 7, "output_tokens": 9}}),
        ),
    ]);
    let t = &h.agents[0].tokens;
    assert_eq!(
        (t.known, t.missing, t.input, t.output, t.total),
        (1, 3, 7.0, 9.0, 16.0)
    );
    assert_eq!((t.reasoning, t.cached), (None, None));
    let r = h.agents[0]
        .rates
        .iter()
        .find(|r| r.rate == "usage_missing")
        .unwrap();
    assert_eq!((r.count, r.of, r.level), (3, 4, Level::Warn));
}

#[test]
fn outcome_buckets_pass_at_k_consistency_coverage_and_retry_value() {
    let ok = json!({"output": [msg("a")]});
    let lines = [
        row(0, 0, 1.0, ok.clone()),
        row(0, 1, 1.0, ok.clone()),
        row(1, 0, 0.0, ok.clone()),
        row(1, 1, 1.0, ok.clone()),
        row(2, 0, 0.0, ok.clone()),
        row(2, 1, 0.5, ok.clone()),
        row(2, 1, 0.5, ok.clone()), // duplicate key
    ];
    let mut b = HealthBuilder::new("r.jsonl", 1.0);
    let inputs: String = (0..4)
        .flat_map(|t| (0..2).map(move |r| format!("{{\"_ng_task_index\":{t},\"_ng_rollout_index\":{r},\"agent_ref\":{{\"name\":\"a\"}}}}\n")))
        .collect();
    b.push_inputs("in.jsonl", inputs.as_bytes()).unwrap();
    b.push_failures(
        "f.jsonl",
        b"{\"_ng_task_index\":3,\"_ng_rollout_index\":0,\"_ng_failure_class\":\"judge_failed\"}\n",
    )
    .unwrap();
    b.push_rollouts(lines.join("\n").as_bytes()).unwrap();
    let h = b.finish().unwrap();
    let t = &h.tasks;
    assert_eq!(
        (t.tasks, t.never_pass, t.sometimes_pass, t.always_pass),
        (3, 1, 1, 1)
    );
    assert_eq!((t.missing, t.partial), (Some(1), Some(0)));
    // pass@1 = (1 + 1/2 + 0) / 3; pass@k = 2/3; consistency = 1/3.
    assert!((t.pass_at_1.unwrap() - 0.5).abs() < 1e-12);
    assert!((t.pass_at_k.unwrap() - 2.0 / 3.0).abs() < 1e-12);
    assert!((t.consistency.unwrap() - 1.0 / 3.0).abs() < 1e-12);
    assert!((t.retry_value.unwrap() - 1.0 / 6.0).abs() < 1e-12);
    assert_eq!(t.coverage, Some(6.0 / 8.0));
    assert_eq!(
        (
            h.rollouts.duplicates,
            h.rollouts.failures,
            h.rollouts.missing
        ),
        (1, Some(1), Some(1))
    );
    assert_eq!(
        h.rollouts
            .failures_by_class
            .as_ref()
            .unwrap()
            .get("judge_failed"),
        Some(&1)
    );
    // 1 failure of 8 attempts: above 5 %.
    assert_eq!(h.rates[0].level, Level::Bad);
    // A threshold of 0.5 makes task 2 always-pass.
    let mut b = HealthBuilder::new("r.jsonl", 0.5);
    b.push_rollouts(lines.join("\n").as_bytes()).unwrap();
    let t = b.finish().unwrap().tasks;
    assert_eq!((t.never_pass, t.sometimes_pass, t.always_pass), (0, 2, 1));
}

#[test]
fn cross_tab_unhealthy_tasks_worst_rollouts_and_bad_rates() {
    let trunc = json!({"status": "incomplete", "incomplete_details": {"reason": "max_output_tokens"}, "output": [msg("")]});
    let ok = json!({"output": [msg("a")]});
    let mut lines = vec![row(0, 0, 0.0, trunc.clone()), row(0, 1, 0.0, trunc)];
    for r in 0..8 {
        lines.push(row(1, r, 1.0, ok.clone()));
    }
    let h = report(&lines);
    let a = &h.agents[0];
    assert_eq!(
        a.cross_tab["truncated"],
        Buckets {
            never_pass: 2,
            ..Buckets::default()
        }
    );
    assert_eq!(a.cross_tab["loop"], Buckets::default());
    assert_eq!(h.consistently_unhealthy_tasks, 1);
    assert_eq!(h.consistently_unhealthy[0].task, 0);
    assert_eq!(h.consistently_unhealthy[0].flags["truncated"], 2);
    assert_eq!(h.worst.len(), 2);
    assert_eq!(
        h.worst[0].reason,
        "truncated (max_output_tokens); no final answer"
    );
    assert_eq!(h.worst[0].line, 1);
    // 2 of 10 truncated = 20 % > 10 %: bad; empty answers too.
    let bad = h.findings(Level::Bad);
    assert!(
        bad.iter().any(|b| b.starts_with("a: truncated 20.0 %")),
        "{bad:?}"
    );
    assert!(
        bad.iter()
            .any(|b| b.starts_with("a: no final answer 20.0 %")),
        "{bad:?}"
    );
}

#[test]
fn bad_rows_name_file_line_and_field() {
    let err = |line: &str| {
        let mut b = HealthBuilder::new("r.jsonl", 1.0);
        let ok = row(0, 0, 1.0, json!({"output": [msg("a")]}));
        b.push_rollouts(format!("{ok}\n\n{line}\n").as_bytes())
            .unwrap_err()
            .to_string()
    };
    assert_eq!(
        err("{\"_ng_rollout_index\": 0}"),
        "'r.jsonl' line 3: field `_ng_task_index` is missing"
    );
    assert_eq!(
        err("{\"_ng_task_index\": \"1\", \"_ng_rollout_index\": 0}"),
        "'r.jsonl' line 3: field `_ng_task_index` is not an integer"
    );
    assert!(
        err("{\"_ng_task_index\": 1,").starts_with("'r.jsonl' line 3: column "),
        "{}",
        err("{")
    );
    assert_eq!(err("[1]"), "'r.jsonl' line 3: the row is not a JSON object");
    assert_eq!(
        err("{\"response\": {\"output\": 3}}"),
        "'r.jsonl' line 3: field `response.output` is not a list"
    );
    assert_eq!(
        err("{\"response\": {\"output\": [{\"type\": 1}]}}"),
        "'r.jsonl' line 3: field `response.output[0].type` is not a string"
    );
    assert_eq!(
        err("{\"agent_ref\": \"x\"}"),
        "'r.jsonl' line 3: field `agent_ref` is not an object"
    );
    let mut b = HealthBuilder::new("r.jsonl", 1.0).with_max_line_bytes(10);
    let e = b.push_rollouts(b"{\"_ng_task_index\": 1}\n").unwrap_err();
    assert_eq!(
        e.to_string(),
        "'r.jsonl' line 1 is longer than 10 bytes (the limit; raise it with --max-line-bytes)"
    );
}

#[test]
fn trajectory_evidence_and_upstream_files() {
    let mut v: serde_json::Value =
        serde_json::from_str(&row(0, 0, 1.0, json!({"output": [msg("a")]}))).unwrap();
    v["ng_trajectory"] = json!({"schema_version": "1.0", "turns": [{}, {}], "gaps": [{"code": "resolution_unavailable"}],
                                "tool_calls": [{"status": "failed"}, {"status": "completed"}]});
    let h = report(&[v.to_string()]);
    let t = h.trajectory.unwrap();
    assert_eq!((t.rows, t.turns, t.unreadable), (1, 2, 0));
    assert_eq!(t.gaps["resolution_unavailable"], 1);
    assert_eq!(t.tool_calls_by_status["failed"], 1);

    let q = upstream::quality_summary("q.json", br#"{"run": {"ignored_checks": [], "verdicts": {"healthy": 1, "unhealthy": 2, "unobserved": 3},
        "issues": {"model_call_failed": 2, "some_future_check": 0}}, "tasks": {"0": {"flags": ["task_consistently_unhealthy"]}}}"#).unwrap();
    assert_eq!(q.verdicts["unobserved"], 3);
    assert_eq!(q.issues["some_future_check"], 0);
    assert_eq!(q.task_flags["task_consistently_unhealthy"], 1);
    assert!(upstream::quality_summary("q.json", b"[")
        .unwrap_err()
        .to_string()
        .starts_with("'q.json' line 1: column "));
    let mut r = upstream::RolloutVerdicts::new("v.jsonl");
    r.line(1, br#"{"_ng_task_index": 0, "_ng_rollout_index": 1, "rollout_id": "0-1", "verdict": "unhealthy", "findings": [{"check": "x_new", "detail": "d"}], "unobserved": []}"#).unwrap();
    r.line(2, br#"{"_ng_task_index": 1, "_ng_rollout_index": 0, "rollout_id": "1-0", "verdict": "unobserved", "findings": [], "unobserved": ["agent_turn_hollow"]}"#).unwrap();
    assert_eq!(
        (
            r.rollouts,
            r.findings["x_new"],
            r.unobserved["agent_turn_hollow"]
        ),
        (2, 1, 1)
    );
    assert_eq!(r.unhealthy[0].checks, ["x_new"]);
    assert_eq!(
        r.line(3, b"{}").unwrap_err().to_string(),
        "'v.jsonl' line 3: field `verdict` is missing or not a string"
    );
}

#[test]
fn canonical_arguments_sort_keys_at_every_depth() {
    let raw = serde_json::value::RawValue::from_string("\"{\\\"b\\\": {\\\"d\\\": 1, \\\"c\\\": [ {\\\"f\\\":1,\\\"e\\\":2} ]}, \\\"a\\\": null}\"".into()).unwrap();
    assert_eq!(
        canonical_arguments(Some(&raw)),
        (
            r#"{"a":null,"b":{"c":[{"e":2,"f":1}],"d":1}}"#.to_string(),
            true
        )
    );
    let raw = serde_json::value::RawValue::from_string("\"\"".into()).unwrap();
    assert_eq!(
        canonical_arguments(Some(&raw)),
        (String::new(), false),
        "empty arguments do not parse"
    );
}

#[test]
fn per_rollout_signals_for_a_flags_column_and_one_row() {
    let loop_row = row(
        3,
        1,
        0.0,
        json!({"output": [call("s", "{}", "a"), call("s", "{}", "b")]}),
    );
    let mut b = HealthBuilder::new("r.jsonl", 1.0);
    b.push_rollouts(
        format!(
            "{}\n{loop_row}\n",
            row(0, 0, 1.0, json!({"output": [msg("a")]}))
        )
        .as_bytes(),
    )
    .unwrap();
    let all: Vec<_> = b
        .rollout_signals()
        .map(|(k, line, agent, s)| (k, line, agent, s.flags))
        .collect();
    assert_eq!(all[0], ((0, 0), 1, Some("a"), 0));
    assert_eq!(all[1].0, (3, 1));
    let s = row_signals(loop_row.as_bytes(), false).unwrap();
    assert!(s.has(Flag::Loop) && s.has(Flag::EndedOnTool) && s.has(Flag::DanglingCall));
    assert_eq!(s.loop_call, Some(("s".to_string(), 2)));
    assert_eq!(
        row_signals(b"[]", false).unwrap_err(),
        "the row is not a JSON object"
    );
}

#[test]
fn the_offending_items_are_marked() {
    let marked = |s: &Signals, f: Flag| s.marked(f).collect::<Vec<u32>>();
    // A loop (three times, arguments in another key order), an error output, a malformed call
    // and a dangling one; items 0..=7.
    let r = row(
        0,
        0,
        0.0,
        json!({"output": [
            call("search", r#"{"q":"x","n":1}"#, "a"), out("a", "Error: no such file"),
            call("search", r#"{"n":1,"q":"x"}"#, "b"), out("b", "ok"),
            call("read", "{not json", "c"), out("c", "fine"),
            call("search", r#"{"q":"x","n":1}"#, "d"),
            msg("done"),
        ]}),
    );
    let s = row_signals(r.as_bytes(), false).unwrap();
    assert_eq!(
        marked(&s, Flag::Loop),
        [0, 2, 6],
        "every call of the repeated signature"
    );
    assert_eq!(marked(&s, Flag::ToolError), [1], "the error output");
    assert_eq!(marked(&s, Flag::MalformedArguments), [4]);
    assert_eq!(
        marked(&s, Flag::DanglingCall),
        [6],
        "the call without output"
    );
    assert!(marked(&s, Flag::EmptyAnswer).is_empty() && !s.has(Flag::EmptyAnswer));

    // A truncated reply: its last item is the cut-off one; a blank final answer is marked.
    let t = row(
        0,
        0,
        0.0,
        json!({"status": "incomplete", "incomplete_details": {"reason": "max_output_tokens"},
               "output": [msg("thinking"), msg("  ")]}),
    );
    let s = row_signals(t.as_bytes(), false).unwrap();
    assert_eq!(marked(&s, Flag::Truncated), [1]);
    assert_eq!(marked(&s, Flag::EmptyAnswer), [1]);
    assert!(marked(&s, Flag::EndedOnTool).is_empty());

    // Ended on a tool: the last item.
    let e = row(
        0,
        0,
        0.0,
        json!({"output": [msg("a"), call("f", "{}", "z"), out("z", "1")]}),
    );
    let s = row_signals(e.as_bytes(), false).unwrap();
    assert_eq!(marked(&s, Flag::EndedOnTool), [2]);
    assert!(!s.has(Flag::Loop) && s.marked(Flag::Loop).next().is_none());

    // A healthy rollout marks nothing.
    let ok = row(
        0,
        0,
        1.0,
        json!({"status": "completed", "output": [msg("42")]}),
    );
    assert!(row_signals(ok.as_bytes(), false).unwrap().marks.is_empty());
}

/// A repeated key is read as Python's `json` reads it (and `gymscope profile`): the last value,
/// so a row that repeats `reward` or `response` is judged, not refused as "unexpected shape".
#[test]
fn a_repeated_key_takes_its_last_value() {
    let clean = row(
        0,
        0,
        1.0,
        json!({"status": "completed", "output": [msg("42")]}),
    );
    let twice = clean.replacen(
        "\"reward\":1.0",
        "\"reward\":1.0,\"reward\":0.0,\"response\":{\"status\":\"completed\",\"output\":[]}",
        1,
    );
    assert_ne!(twice, clean, "the row was rewritten");
    let h = report(std::slice::from_ref(&twice));
    let a = &h.agents[0];
    // The last `response` has no answer; the last reward is 0.
    assert_eq!((a.rollouts, a.empty_answer), (1, 1));
    assert_eq!(
        (a.outcomes.never_pass, a.outcomes.always_pass),
        (1, 0),
        "{a:?}"
    );
    assert!(row_signals(twice.as_bytes(), false)
        .unwrap()
        .has(Flag::EmptyAnswer));
    // A row whose shape is wrong is still refused, naming the field.
    let bad = clean.replacen("\"output\":[", "\"output\":[1,", 1);
    let e = read_rollout(bad.as_bytes()).unwrap_err();
    assert!(e.contains("response.output[0]"), "{e}");
}

#[test]
fn a_multi_stage_runs_stages_are_not_duplicates() {
    // v0.7.0's multi-stage drivers write one row per `stage_index` of a rollout.
    let staged = |stage: i64| {
        json!({"response": {"output": [msg("ok")]}, "reward": 1.0, "stage_index": stage,
               "_ng_task_index": 0, "_ng_rollout_index": 0, "agent_ref": {"name": "a"}})
        .to_string()
    };
    let lines = [staged(0), staged(1), staged(1)].join("\n");
    let mut b = HealthBuilder::new("r.jsonl", 1.0);
    b.push_rollouts(lines.as_bytes()).unwrap();
    let h = b.finish().unwrap();
    assert_eq!((h.rollouts.total, h.rollouts.duplicates), (3, 1));
}
