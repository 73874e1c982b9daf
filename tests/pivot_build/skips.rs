//! Every skip reason build-pivot documents (docs/pivots.md, "gymscope build-pivot") on small synthetic rollouts, the self-check, and the negative
//! example files of upstream.

use super::*;
use gymscope::pivot_build::skips::Reason;
use serde_json::json;

fn tools() -> Value {
    json!([{"type": "function", "name": "f", "parameters": {"type": "object", "properties": {"q": {"type": "string"}}}, "strict": true},
           {"type": "function", "name": "g", "parameters": {"type": "object", "properties": {}}, "strict": true}])
}

fn user(text: &str) -> Value {
    json!({"role": "user", "content": text, "type": "message"})
}
fn call(name: &str, args: &str, id: &str) -> Value {
    json!({"type": "function_call", "name": name, "arguments": args, "call_id": id, "id": format!("fc_{id}"), "status": "completed"})
}
fn output(id: &str, text: &str) -> Value {
    json!({"type": "function_call_output", "call_id": id, "output": text})
}
fn say(text: &str) -> Value {
    json!({"type": "message", "role": "assistant", "id": "msg_x", "status": "completed", "content": [{"type": "output_text", "text": text, "annotations": []}]})
}

fn rollout(input: Value, out: Value, reward: f64, task: u64) -> String {
    json!({"responses_create_params": {"input": input, "tools": tools(), "parallel_tool_calls": false, "metadata": null, "temperature": null},
           "response": {"output": out, "incomplete_details": null}, "reward": reward, "_ng_task_index": task, "_ng_rollout_index": 0,
           "agent_ref": {"name": "src_agent"}})
    .to_string()
}

fn reasons(built: &Built) -> Vec<(String, Value)> {
    lines(&built.audit)
        .into_iter()
        .map(|a| {
            (
                a["reason"].as_str().unwrap().to_string(),
                a["detail"].clone(),
            )
        })
        .collect()
}

fn only_reason(line: String, o: BuildOptions) -> String {
    let built = build(format!("{line}\n").as_bytes(), o);
    let r = reasons(&built);
    assert_eq!(r.len(), 1, "{r:?}");
    assert_eq!(built.metrics.pivot_rows_written, 0);
    r[0].0.clone()
}

#[test]
fn row_level_skips() {
    let good = rollout(json!([user("hi")]), json!([say("hello")]), 1.0, 0);
    let failed = rollout(json!([user("hi")]), json!([say("hello")]), 0.0, 0);
    let other_task = rollout(json!([user("hi")]), json!([say("hello there")]), 1.0, 1);
    let data = format!("{good}\nnot json at all\n{{\"messages\": []}}\n\n{failed}\n{other_task}\n");
    let mut o = options();
    o.source_groups = vec![gymscope::reward_group::RewardGroup::AllSuccess];
    let built = build(data.as_bytes(), o);
    let audit = lines(&built.audit);
    let got: Vec<(&str, &Value)> = audit
        .iter()
        .map(|a| (a["reason"].as_str().unwrap(), &a["trajectory_id"]))
        .collect();
    // Task 0 is mixed (1.0 and 0.0) and only all_success groups may contribute.
    assert_eq!(
        got,
        [
            ("source_group_filtered", &json!(0)),
            ("invalid_source_row", &json!(1)),
            ("invalid_source_row", &json!(2)),
            ("below_min_reward", &json!(3))
        ]
    );
    assert!(
        audit[1]["detail"]
            .as_str()
            .unwrap()
            .starts_with("line 2: invalid JSON"),
        "{}",
        audit[1]["detail"]
    );
    assert!(audit[2]["detail"]
        .as_str()
        .unwrap()
        .contains("not in the responses layout"));
    assert_eq!(audit[0]["_ng_task_index"], 0);
    assert_eq!(audit[3]["detail"], "reward 0.0 < --min-reward 1");
    assert_eq!(built.metrics.pivot_rows_written, 1);
    assert_eq!(built.metrics.invalid_source_rows, 2);
    assert_eq!(
        built.metrics.source_rows_seen, 5,
        "blank lines are not rows"
    );
    let row = &lines(&built.rows)[0];
    assert_eq!(
        row["trajectory_id"], 4,
        "trajectory ids count non-blank lines"
    );
    assert_eq!(row["pivot_info"]["source_group"], "all_success");
    // The same data with the default groups keeps the mixed task 0's success too.
    let built = build(data.as_bytes(), options());
    let first = &lines(&built.rows)[0];
    assert_eq!(first["pivot_info"]["source_group"], "mixed");
    assert_eq!(first["pivot_info"]["source_group_size"], 2);
    assert_eq!(first["pivot_info"]["source_group_success_rate"], 0.5);
    let groups = built.metrics.to_json(&Default::default())["source_reward_groups"].clone();
    assert_eq!(
        groups,
        json!({"tasks": {"all_success": 1, "all_failure": 0, "mixed": 1}, "trajectories": {"all_success": 1, "all_failure": 0, "mixed": 2}})
    );

    let chat = json!({"messages": [{"role": "user", "content": "x"}, {"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "function": {"name": "g", "arguments": "{}"}}]}, {"role": "tool", "content": "ok"}, {"role": "assistant", "content": "done"}], "tools": tools()});
    assert_eq!(
        only_reason(chat.to_string(), options()),
        "missing_tool_call_id"
    );
}

#[test]
fn decision_point_skips_in_order() {
    let o = options;
    let case = |out: Value| rollout(json!([user("hi")]), out, 1.0, 0);
    let web = json!({"type": "web_search_call", "id": "ws_1", "status": "completed"});
    assert_eq!(
        only_reason(case(json!([web])), o()),
        "unsupported_action_type"
    );
    assert_eq!(
        only_reason(case(json!([call("f", "{\"q\": NaN}", "c1")])), o()),
        "malformed_arguments"
    );
    assert_eq!(
        only_reason(case(json!([call("nope", "{}", "c1")])), o()),
        "tool_not_in_tools"
    );
    let mut unchecked = o();
    unchecked.check_tool_names = false;
    let built = build(
        format!("{}\n", case(json!([call("nope", "{}", "c1")]))).as_bytes(),
        unchecked,
    );
    assert_eq!(built.metrics.pivot_rows_written, 1);
    assert_eq!(
        only_reason(case(json!([{"type": "reasoning", "summary": []}])), o()),
        "no_action"
    );
    assert_eq!(
        only_reason(case(json!([say("  \n")])), o()),
        "empty_message"
    );
    let mut incomplete = say("partial answer");
    incomplete["status"] = json!("incomplete");
    assert_eq!(
        only_reason(case(json!([incomplete])), o()),
        "incomplete_turn"
    );
    let system_only = rollout(
        json!([{"role": "system", "content": "sys", "type": "message"}]),
        json!([say("hello")]),
        1.0,
        0,
    );
    assert_eq!(only_reason(system_only, o()), "no_user_message");
    // gdpval-like: a call without its output before the next turn.
    let unmatched = case(json!([call("g", "{}", "c1"), say("done")]));
    let built = build(format!("{unmatched}\n").as_bytes(), o());
    assert_eq!(
        reasons(&built)
            .iter()
            .map(|r| r.0.as_str())
            .collect::<Vec<_>>(),
        ["unmatched_call_in_prefix"]
    );
    assert_eq!(
        built.metrics.pivot_rows_written, 1,
        "the call itself is a fine pivot"
    );
    // The same rollout twice: the second copy's pivots are duplicates.
    let twice = case(json!([
        call("g", "{}", "c1"),
        output("c1", "ok"),
        say("done")
    ]));
    let built = build(format!("{twice}\n{twice}\n").as_bytes(), o());
    assert_eq!(built.metrics.pivot_rows_written, 2);
    assert_eq!(
        reasons(&built)
            .iter()
            .map(|r| r.0.as_str())
            .collect::<Vec<_>>(),
        ["duplicate_pivot", "duplicate_pivot"]
    );
    let mut tool_only = o();
    tool_only.tool_calls_only = true;
    let built = build(format!("{twice}\n").as_bytes(), tool_only);
    assert_eq!(reasons(&built)[0].0, "message_pivot_disabled");
    assert_eq!(built.metrics.pivot_rows_written, 1);
}

#[test]
fn optional_filters() {
    let out = json!([
        call("g", "{}", "a"),
        output("a", "ok"),
        call("g", "{}", "b"),
        output("b", "ok"),
        call("g", "{}", "c"),
        output("c", "ok"),
        call("f", "{\"q\": \"x\"}", "d"),
        output("d", "Error: item not found"),
        say("done")
    ]);
    let line = format!("{}\n", rollout(json!([user("hi")]), out, 1.0, 0));
    let mut o = options();
    o.doom_loop_threshold = Some(3);
    o.skip_tool_errors = true;
    let built = build(line.as_bytes(), o);
    let r: Vec<String> = reasons(&built).into_iter().map(|r| r.0).collect();
    assert_eq!(r, ["doom_loop", "doom_loop", "tool_error"]);
    assert_eq!(built.metrics.pivot_rows_written, 2);
    // Off by default.
    assert_eq!(
        build(line.as_bytes(), options()).metrics.pivot_rows_written,
        5
    );
}

/// The self-check: a threshold above 0.5 makes every multi-word string argument fail, even the
/// demonstration; that is a build error naming the line, or a `selfcheck_failed` skip.
#[test]
fn selfcheck_failure_is_an_error_or_a_skip() {
    let out = json!([
        call("f", "{\"q\": \"two words\"}", "a"),
        output("a", "ok"),
        call("f", "{\"q\": \"one\"}", "b"),
        output("b", "ok"),
        say("done")
    ]);
    let line = format!("{}\n", rollout(json!([user("hi")]), out, 1.0, 0));
    let mut o = options();
    o.word_count_similarity_threshold = 0.6;
    let err = build_bytes("src.jsonl", line.as_bytes(), o.clone(), 1 << 20).unwrap_err();
    assert!(
        err.message.contains("'src.jsonl' line 1") && err.message.contains("does not score 1.0"),
        "{}",
        err.message
    );
    o.selfcheck_skip = true;
    let built = build(line.as_bytes(), o);
    assert_eq!(reasons(&built)[0].0, Reason::SelfcheckFailed.as_str());
    assert_eq!(
        (
            built.metrics.selfcheck_passed,
            built.metrics.selfcheck_failed
        ),
        (2, 1)
    );
    assert_eq!(built.metrics.pivot_rows_written, 2);
}

/// The verifier fed each row's own expected action scores 1.0, checked here independently of
/// the builder through the core comparator.
#[test]
fn every_row_scores_one_with_its_own_action() {
    use gymscope::verifier::{compare, Action, ComparatorConfig};
    let built = build_file("workplace_assistant.example_rollouts.jsonl", options());
    let config = ComparatorConfig::new(0.1);
    for row in lines(&built.rows) {
        let action = Action::from_expected(&row["expected_action"]).unwrap();
        let demo = Action::from_output(&action.to_output());
        assert_eq!(compare(&config, &action, demo.as_ref()).0, 1.0);
    }
}

#[test]
fn negative_examples_say_why() {
    let mut all = options();
    all.min_reward = -1e9;
    let expect = [
        ("ruler.example_rollouts.jsonl", Reason::NoAction),
        (
            "math_with_autograder.example_rollouts.jsonl",
            Reason::EmptyMessage,
        ),
        ("gdpval.example_rollouts.jsonl", Reason::ToolNotInTools),
        (
            "anyswe_agent.example_rollouts_hermes.jsonl",
            Reason::ToolNotInTools,
        ),
        (
            "legal_agent_bench.example_rollouts.jsonl",
            Reason::MultiToolCall,
        ),
        (
            "mini_swe_agent_2.example_rollouts.jsonl",
            Reason::MultiToolCall,
        ),
    ];
    for (name, reason) in expect {
        let built = build_file(name, all.clone());
        assert!(
            built.metrics.skip(reason) > 0,
            "{name}: {:?}",
            built.metrics.top_skips(5)
        );
        assert_rows_valid(&built.rows, false);
    }
    // Harness rollouts without tool schemas: the report says how many were lost that way.
    let built = build_file("gdpval.example_rollouts.jsonl", all.clone());
    assert!(built.metrics.pivots_lost_without_tools > 0);
    assert!(built
        .metrics
        .markdown(&Default::default())
        .contains("no tool schemas"));
    // anyswe rows have no prompt: without the tool check, `no_user_message` remains.
    let mut unchecked = all;
    unchecked.check_tool_names = false;
    let built = build_file("anyswe_agent.example_rollouts_hermes.jsonl", unchecked);
    assert!(built.metrics.skip(Reason::NoUserMessage) > 0);
    assert_rows_valid(&built.rows, false);
}

#[test]
fn limit_stops_after_n_rows() {
    let mut o = options();
    o.limit = Some(7);
    let built = build_file("finance_sec_search.example_rollouts.jsonl", o);
    assert_eq!(lines(&built.rows).len(), 7);
}

/// `--stamp-task-index` appends the row's position; `--group-by` groups by another field.
#[test]
fn stamp_task_index_and_group_by() {
    let a = rollout(json!([user("hi")]), json!([say("hello")]), 1.0, 0);
    let b = rollout(json!([user("hey")]), json!([say("hello there")]), 0.0, 1);
    let mut o = options();
    o.stamp_task_index = true;
    let built = build(format!("{a}\n{a}\n{b}\n").as_bytes(), o.clone());
    let rows = lines(&built.rows);
    assert_eq!(rows.len(), 1);
    let keys: Vec<&String> = rows[0].as_object().unwrap().keys().collect();
    assert_eq!(keys.last().unwrap().as_str(), "_ng_task_index");
    assert_eq!(rows[0]["_ng_task_index"], 0);
    assert_rows_valid(&built.rows, false);
    // Grouped by the agent name, all three rows are one mixed group.
    o.group_by = "agent_ref.name".into();
    let built = build(format!("{a}\n{b}\n").as_bytes(), o);
    let row = &lines(&built.rows)[0];
    assert_eq!(row["pivot_info"]["source_group"], "mixed");
    assert_eq!(row["pivot_info"]["source_group_size"], 2);
}
