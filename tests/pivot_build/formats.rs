//! Each source layout on upstream's files, against rows worked out by hand from upstream's
//! converters.

use super::*;
use crate::common::strs;
use serde_json::json;

fn without_id(mut row: Value) -> Value {
    let id = row["pivot_info"]["pivot_id"].take();
    assert!(
        id.as_str()
            .is_some_and(|s| s.len() == 32 && s.bytes().all(|b| b.is_ascii_hexdigit())),
        "pivot_id {id}"
    );
    row
}

/// §h.1: `example_session_state_mgmt` line 1: a multi-call turn, a call pivot, a message pivot.
#[test]
fn responses_rollout_gives_the_hand_checked_rows() {
    let built = build_file(
        "example_session_state_mgmt.example_rollouts.jsonl",
        options(),
    );
    let rows = lines(&built.rows);
    let tools = json!([
        {"name": "increment_counter", "parameters": {"type": "object", "properties": {"count": {"type": "integer", "description": ""}}, "required": ["count"], "additionalProperties": false}, "strict": true, "type": "function", "description": ""},
        {"name": "get_counter_value", "parameters": {"type": "object", "properties": {}, "required": [], "additionalProperties": false}, "strict": true, "type": "function", "description": ""}]);
    let prefix = json!([
        {"content": "add 13 then add 14 then get the count", "role": "user", "type": "message"},
        {"arguments": "{\"count\":13}", "call_id": "call_dzh9BD1c6HQ9nWIRidgEO10O", "name": "increment_counter", "type": "function_call", "id": "fc_68c08ea2bd2081a0bd933e26713dc41001e82be386698c56", "status": "completed"},
        {"arguments": "{\"count\":14}", "call_id": "call_40zJ55JtKiRMlsDtKfzg8G1C", "name": "increment_counter", "type": "function_call", "id": "fc_68c08ea2c9c081a0876fedb97cbed62f01e82be386698c56", "status": "completed"},
        {"call_id": "call_dzh9BD1c6HQ9nWIRidgEO10O", "output": "{\"success\": true}", "type": "function_call_output"},
        {"call_id": "call_40zJ55JtKiRMlsDtKfzg8G1C", "output": "{\"success\": true}", "type": "function_call_output"}]);
    let first = json!({"trajectory_id": 0,
        "responses_create_params": {"input": prefix, "tools": tools, "parallel_tool_calls": true, "tool_choice": "auto"},
        "expected_action": {"type": "function_call", "name": "get_counter_value", "arguments": "{}"},
        "meta_info": {"turn": 1, "step": 2, "assistant_depth": 2, "depth": 2},
        "pivot_info": {"pivot_id": null, "source_format": "responses", "_ng_task_index": null, "_ng_rollout_index": null,
            "task_id": null, "uuid": null, "source_agent": null, "reward": 1.0, "source_group": "all_success",
            "source_group_size": 1, "source_group_success_rate": 1.0, "source_item_index": 5, "source_output_index": 4,
            "source_assistant_index": 1, "trajectory_num_assistant_actions": 3, "trajectory_num_items": 8,
            "pivot_call_id": "call_Zmvq2hzedv0EIN2sDytoFc1V", "pivot_has_reasoning": false, "pivot_has_content": false,
            "previous_steps_in_turn": 1, "previous_steps_in_turn_with_reasoning": 0},
        "agent_ref": {"type": "responses_api_agents", "name": AGENT}});
    assert_eq!(without_id(rows[0].clone()), first);
    // Key order is upstream's, not just the keys.
    let text = std::str::from_utf8(&built.rows)
        .unwrap()
        .lines()
        .next()
        .unwrap()
        .to_string();
    assert_eq!(
        serde_json::to_string(&rows[0]).unwrap(),
        text,
        "compact, in insertion order"
    );
    let keys: Vec<&String> = rows[0].as_object().unwrap().keys().collect();
    assert_eq!(
        keys,
        [
            "trajectory_id",
            "responses_create_params",
            "expected_action",
            "meta_info",
            "pivot_info",
            "agent_ref"
        ]
    );

    let mut second_prefix = prefix.as_array().unwrap().clone();
    second_prefix.push(json!({"arguments": "{}", "call_id": "call_Zmvq2hzedv0EIN2sDytoFc1V", "name": "get_counter_value", "type": "function_call", "id": "fc_68c08ea3bf3881a08c6645806662716901e82be386698c56", "status": "completed"}));
    second_prefix.push(json!({"call_id": "call_Zmvq2hzedv0EIN2sDytoFc1V", "output": "{\"count\": 42}", "type": "function_call_output"}));
    let second = &rows[1];
    assert_eq!(
        second["responses_create_params"]["input"],
        Value::Array(second_prefix)
    );
    assert_eq!(
        second["expected_action"],
        json!({"type": "message", "content": "You asked to add 13, then add 14, and finally get the count. The current count is 42."})
    );
    assert_eq!(
        second["meta_info"],
        json!({"turn": 1, "step": 3, "assistant_depth": 3, "depth": 3})
    );
    assert_eq!(second["pivot_info"]["source_item_index"], 7);
    assert_eq!(second["pivot_info"]["source_output_index"], 6);
    assert_eq!(second["pivot_info"]["source_assistant_index"], 2);
    assert_eq!(second["pivot_info"]["pivot_call_id"], Value::Null);
    assert_eq!(second["pivot_info"]["previous_steps_in_turn"], 2);

    let audit = lines(&built.audit);
    let calls = json!([
        {"arguments": "{\"count\":13}", "call_id": "call_dzh9BD1c6HQ9nWIRidgEO10O", "name": "increment_counter", "type": "function_call", "id": "fc_68c08ea2bd2081a0bd933e26713dc41001e82be386698c56", "status": "completed"},
        {"arguments": "{\"count\":14}", "call_id": "call_40zJ55JtKiRMlsDtKfzg8G1C", "name": "increment_counter", "type": "function_call", "id": "fc_68c08ea2c9c081a0876fedb97cbed62f01e82be386698c56", "status": "completed"}]);
    assert_eq!(
        audit[0],
        json!({"trajectory_id": 0, "uuid": null, "_ng_task_index": null, "_ng_rollout_index": null,
        "source_item_index": 1, "source_assistant_index": 0, "reason": "multi_tool_call", "detail": "2 function calls in one turn",
        "tool_call_count": 2, "tool_names": ["increment_counter", "increment_counter"], "tool_calls": calls, "metadata": null})
    );

    // The whole file: 15 decision points, 10 pivots, 5 multi-call skips.
    let m = &built.metrics;
    assert_eq!(
        (
            m.decision_points,
            m.pivot_rows_written,
            m.skipped_decision_points()
        ),
        (15, 10, 5)
    );
    let json = m.to_json(&Default::default());
    assert_eq!(
        json["turn_step_distribution"],
        json!({"(1, 2)": 5, "(1, 3)": 5})
    );
    assert_eq!(
        json["skipped_multi_tool_count_distribution"],
        json!({"2": 5})
    );
    assert_rows_valid(&built.rows, false);
}

/// §h.2: the chat form of a Gym trajectory: one message pivot and one multi-call skip.
#[test]
fn chat_messages_give_the_hand_checked_row() {
    let built = build(&chat_round_trip(), options());
    let rows = lines(&built.rows);
    assert_eq!(rows.len(), 1);
    let row = &rows[0];
    let input = row["responses_create_params"]["input"].as_array().unwrap();
    assert_eq!(
        input[0],
        json!({"role": "system", "content": "system", "type": "message"})
    );
    assert_eq!(
        input[1],
        json!({"role": "user", "content": "hello!", "type": "message"})
    );
    let msg_id = input[2]["id"].as_str().unwrap();
    assert!(msg_id.starts_with("msg_") && msg_id.len() == 36);
    assert!(input[2]["content"][0]["text"]
        .as_str()
        .unwrap()
        .starts_with("<think>Okay, let's see."));
    assert_eq!(
        input[3],
        json!({"arguments": "{\"synonym\": \"Blazing\"}", "call_id": "chatcmpl-tool-a9eb4e1dd723435a870372a826b83117", "name": "get_synonym_value", "type": "function_call", "id": "chatcmpl-tool-a9eb4e1dd723435a870372a826b83117", "status": "completed"})
    );
    assert_eq!(
        input[6],
        json!({"type": "function_call_output", "call_id": "chatcmpl-tool-a9eb4e1dd723435a870372a826b83117", "output": "{\"synonym_value\": 711}"})
    );
    assert_eq!(input.len(), 9);
    assert_eq!(row["responses_create_params"]["parallel_tool_calls"], false);
    assert_eq!(row["responses_create_params"]["tool_choice"], "auto");
    assert_eq!(
        row["responses_create_params"]["tools"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
    assert_eq!(row["expected_action"]["type"], "message");
    assert!(row["expected_action"]["content"]
        .as_str()
        .unwrap()
        .starts_with("<think>Okay, let's break this down."));
    assert_eq!(
        row["meta_info"],
        json!({"turn": 1, "step": 2, "assistant_depth": 2, "depth": 2})
    );
    let info = &row["pivot_info"];
    assert_eq!(info["source_format"], "chat");
    assert_eq!(info["source_message_index"], 6);
    assert_eq!(info["source_assistant_index"], 1);
    assert_eq!(info["trajectory_num_assistant_actions"], 2);
    assert_eq!(info["trajectory_num_messages"], 7);
    assert_eq!(
        (
            info["pivot_has_reasoning"].clone(),
            info["pivot_has_content"].clone()
        ),
        (json!(false), json!(false))
    );
    let audit = lines(&built.audit);
    assert_eq!(audit.len(), 1);
    assert_eq!(audit[0]["source_message_index"], 2);
    assert_eq!(audit[0]["reason"], "multi_tool_call");
    assert_eq!(
        audit[0]["tool_names"],
        json!([
            "get_synonym_value",
            "get_synonym_value",
            "extract_synonym_values"
        ])
    );
    assert_eq!(audit[0]["detail"], "3 function calls in one turn");
    assert_rows_valid(&built.rows, false);
    // Generated ids are deterministic: a second build gives the same bytes.
    assert_eq!(build(&chat_round_trip(), options()).rows, built.rows);
}

/// §h.3: tau2 rollouts in the conversational layout: 25 pivots (20 calls, 5 messages).
#[test]
fn tau2_conversational_layout() {
    let built = build_file("tau2.example_rollouts.jsonl", options());
    let rows = lines(&built.rows);
    assert_eq!(rows.len(), 25);
    let calls = rows
        .iter()
        .filter(|r| r["expected_action"]["type"] == "function_call")
        .count();
    assert_eq!(calls, 20);
    assert_eq!(built.metrics.trajectories_with_pivots, 5);
    let first = &rows[0];
    let input = first["responses_create_params"]["input"]
        .as_array()
        .unwrap();
    assert_eq!(input.len(), 3);
    assert_eq!(input[0]["role"], "system");
    assert!(input[0]["content"]
        .as_str()
        .unwrap()
        .starts_with("<instructions>\nYou are a customer service agent"));
    assert_eq!(
        input[1]["content"][0]["text"],
        "Hi! How can I help you today?"
    );
    assert!(input[1]["id"].as_str().unwrap().starts_with("msg_"));
    assert!(input[2]["content"]
        .as_str()
        .unwrap()
        .starts_with("I need help urgently"));
    assert_eq!(
        first["expected_action"],
        json!({"type": "function_call", "name": "find_user_id_by_name_zip", "arguments": "{\"first_name\": \"Chen\", \"last_name\": \"Smith\", \"zip\": \"32278\"}"})
    );
    assert_eq!(
        first["meta_info"],
        json!({"turn": 1, "step": 1, "assistant_depth": 2, "depth": 2})
    );
    assert_eq!(
        first["responses_create_params"]["tools"]
            .as_array()
            .unwrap()
            .len(),
        16
    );
    assert_eq!(
        first["responses_create_params"]["parallel_tool_calls"],
        true
    );
    assert!(
        first["responses_create_params"].get("model").is_none(),
        "model is never copied"
    );
    let info = &first["pivot_info"];
    assert_eq!(info["source_format"], "conversational");
    assert_eq!(
        (
            info["_ng_task_index"].clone(),
            info["_ng_rollout_index"].clone()
        ),
        (json!(192), json!(3))
    );
    assert_eq!(info["task_id"], "50");
    assert_eq!(info["source_agent"], "tau2_benchmark_agent");
    assert_eq!(info["source_message_index"], 1);
    // The fourth pivot is the transfer call; its text is not in the action but is in the fifth's prefix.
    assert_eq!(
        rows[3]["expected_action"]["name"],
        "transfer_to_human_agents"
    );
    assert_eq!(rows[3]["pivot_info"]["pivot_has_content"], true);
    let fifth = rows[4]["responses_create_params"]["input"]
        .as_array()
        .unwrap();
    let text_before_call = fifth
        .iter()
        .rposition(|i| i["role"] == "assistant" && i["type"] == "message")
        .unwrap();
    assert_eq!(
        fifth[text_before_call + 1]["name"],
        "transfer_to_human_agents"
    );
    assert_eq!(
        rows[4]["expected_action"]["content"],
        "YOU ARE BEING TRANSFERRED TO A HUMAN AGENT. PLEASE HOLD ON."
    );
    assert_rows_valid(&built.rows, false);
}

/// Conversational simulation rollouts (`F R O R A`): reasoning after the call stays in its turn.
#[test]
fn reasoning_after_a_call_stays_in_its_turn() {
    let data = std::fs::read(upstream(
        "conversational_tool_use_simulation.example_rollouts.jsonl",
    ))
    .unwrap();
    let first_line = data.split(|b| *b == b'\n').next().unwrap();
    let mut o = options();
    o.min_reward = 0.0;
    let built = build(&[first_line, b"\n"].concat(), o);
    let rows = lines(&built.rows);
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[0]["expected_action"]["type"], "function_call");
    assert_eq!(rows[0]["pivot_info"]["pivot_has_reasoning"], true);
    let roles: Vec<&str> = strs(&rows[0]["responses_create_params"]["input"], "role");
    assert_eq!(roles, ["system", "user"]);
    let second: Vec<&str> = strs(&rows[1]["responses_create_params"]["input"], "type");
    assert_eq!(
        second,
        [
            "message",
            "message",
            "function_call",
            "reasoning",
            "function_call_output"
        ]
    );
    let reasoning = &rows[1]["responses_create_params"]["input"][3];
    assert!(
        reasoning.get("encrypted_content").is_none(),
        "null encrypted_content removed"
    );
    assert_eq!(rows[1]["expected_action"]["type"], "message");
    assert_rows_valid(&built.rows, false);
}

/// xlam line 3: reasoning + whitespace text + two calls is one multi-call turn; google_search: string input.
#[test]
fn xlam_multi_call_and_string_input() {
    let built = build_file("xlam_fc.example_rollouts.jsonl", options());
    let audit = lines(&built.audit);
    let multi: Vec<&Value> = audit
        .iter()
        .filter(|a| a["reason"] == "multi_tool_call")
        .collect();
    assert!(
        multi
            .iter()
            .any(|a| a["trajectory_id"] == 2 && a["tool_call_count"] == 2),
        "{multi:?}"
    );
    assert_rows_valid(&built.rows, false);

    let built = build_file("google_search.example_rollouts.jsonl", options());
    let rows = lines(&built.rows);
    assert!(!rows.is_empty());
    for r in &rows {
        let first = &r["responses_create_params"]["input"][0];
        assert_eq!(
            (first["role"].as_str(), first["type"].as_str()),
            (Some("user"), Some("message"))
        );
        assert!(first["content"].is_string());
    }
    assert_rows_valid(&built.rows, false);
}

/// Generic candidate groups: each candidate is one pivot carrying `source_model_info`.
#[test]
fn generic_candidate_groups() {
    let data = std::fs::read(fixture("generic.jsonl")).unwrap();
    let built = build(&data, options());
    let rows = lines(&built.rows);
    assert_eq!(rows.len(), 3);
    assert_eq!(rows[0]["trajectory_id"], 0);
    assert_eq!(rows[1]["trajectory_id"], 0);
    assert_eq!(rows[2]["trajectory_id"], 1);
    assert_eq!(
        rows[0]["expected_action"],
        json!({"type": "function_call", "name": "get_weather", "arguments": "{\"city\": \"Paris\", \"unit\": \"celsius\"}"})
    );
    assert_eq!(
        rows[0]["responses_create_params"]["input"],
        json!([
        {"role": "system", "content": "You are a weather assistant.", "type": "message"},
        {"role": "user", "content": "What is the weather in Paris?", "type": "message"}])
    );
    assert_eq!(
        rows[0]["responses_create_params"]["tools"],
        json!([{"type": "function", "name": "get_weather",
        "description": "Current weather of a city.", "parameters": {"type": "object", "properties": {"city": {"type": "string"},
        "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}}, "required": ["city"]}, "strict": true}])
    );
    assert_eq!(
        rows[0]["pivot_info"]["source_model_info"],
        json!({"rewards": [1, 0, 1, 1], "reward_mean": 0.75, "reward_std": 0.4330127018922193, "reward_var": 0.1875})
    );
    assert_eq!(
        rows[1]["expected_action"],
        json!({"type": "message", "content": "It is 18 °C and clear in Paris."})
    );
    assert_eq!(
        rows[1]["meta_info"],
        json!({"turn": 1, "step": 2, "assistant_depth": 2, "depth": 2})
    );
    assert_eq!(rows[1]["pivot_info"]["source_message_index"], 4);
    // A tool without `parameters` gets an empty object schema, counted.
    assert_eq!(
        rows[2]["responses_create_params"]["tools"][0]["parameters"],
        json!({"type": "object", "properties": {}})
    );
    assert_eq!(built.metrics.tools_parameters_filled, 1);
    assert_rows_valid(&built.rows, false);
}

/// Every positive example file converts, and every row passes the validator.
#[test]
fn every_positive_example_converts_to_valid_rows() {
    for (name, min_pivots) in [
        ("example_multi_step.example_rollouts.jsonl", 20),
        ("workplace_assistant.example_rollouts.jsonl", 10),
        ("math_advanced_calculations.example_rollouts.jsonl", 10),
        ("finance_sec_search.example_rollouts.jsonl", 30),
        ("finance_agent_v2.example_rollouts.jsonl", 1),
        ("newton_bench.example_rollouts.jsonl", 5),
        (
            "conversational_tool_use_simulation.example_rollouts.jsonl",
            5,
        ),
    ] {
        let built = build_file(name, options());
        assert!(
            built.metrics.pivot_rows_written >= min_pivots,
            "{name}: {} pivots",
            built.metrics.pivot_rows_written
        );
        assert_eq!(
            built.metrics.selfcheck_passed, built.metrics.pivot_rows_written,
            "{name}"
        );
        assert_rows_valid(&built.rows, false);
    }
}

/// `--multi-call batch`: the multi-call turns become `function_call_batch` rows, which pass the
/// validator only with `--allow-batch` and score 1.0 under the parallel comparator.
#[test]
fn batch_mode_writes_function_call_batches() {
    let mut o = options();
    o.multi_call_batch = true;
    let built = build_file("example_session_state_mgmt.example_rollouts.jsonl", o);
    let rows = lines(&built.rows);
    assert_eq!(rows.len(), 15);
    let batch = &rows[0]["expected_action"];
    assert_eq!(batch["type"], "function_call_batch");
    assert_eq!(
        batch["calls"][1],
        json!({"type": "function_call", "name": "increment_counter", "arguments": "{\"count\":14}"})
    );
    assert_rows_valid(&built.rows, true);
    let (report, _) = validate_bytes(
        "p",
        &built.rows,
        PivotOptions {
            agent_ref: Some(AGENT.into()),
            ..PivotOptions::default()
        },
    );
    assert!(
        !report.is_valid(),
        "upstream's validator rejects batch rows"
    );
}

/// Byte-identical output whatever the chunk size, and across runs.
#[test]
fn output_is_deterministic_at_every_chunk_size() {
    let data = std::fs::read(upstream("tau2.example_rollouts.jsonl")).unwrap();
    let reference = build_bytes("src", &data, options(), 1 << 20).unwrap();
    for chunk in [1, 7, 4096, 65_537] {
        let again = build_bytes("src", &data, options(), chunk).unwrap();
        assert_eq!(again.rows, reference.rows, "chunk {chunk}");
        assert_eq!(again.audit, reference.audit, "chunk {chunk}");
        assert_eq!(
            again.metrics.json_text(&Default::default()),
            reference.metrics.json_text(&Default::default())
        );
    }
}

/// `--reasoning drop` removes earlier reasoning items from the prefix, nothing else.
#[test]
fn reasoning_drop_removes_prefix_reasoning() {
    let data = std::fs::read(upstream(
        "conversational_tool_use_simulation.example_rollouts.jsonl",
    ))
    .unwrap();
    let first_line = [data.split(|b| *b == b'\n').next().unwrap(), b"\n"].concat();
    let mut o = options();
    o.min_reward = 0.0;
    o.drop_reasoning = true;
    let rows = lines(&build(&first_line, o).rows);
    let types: Vec<&str> = strs(&rows[1]["responses_create_params"]["input"], "type");
    assert_eq!(
        types,
        [
            "message",
            "message",
            "function_call",
            "function_call_output"
        ]
    );
    assert_rows_valid(&lines_bytes(&rows), false);
}

/// tau2 rows read as plain Responses rollouts: only the tail in `output` gives pivots, unless
/// `--include-input-turns` also uses the turns inside `input` after its first user message.
#[test]
fn include_input_turns_on_split_trajectories() {
    let mut o = options();
    o.source_format = Some(gymscope::pivot_build::SourceFormat::Responses);
    let plain = build_file("tau2.example_rollouts.jsonl", o.clone())
        .metrics
        .pivot_rows_written;
    o.include_input_turns = true;
    let built = build_file("tau2.example_rollouts.jsonl", o);
    assert!(
        built.metrics.pivot_rows_written > plain,
        "{} vs {plain}",
        built.metrics.pivot_rows_written
    );
    for row in lines(&built.rows) {
        let input = row["responses_create_params"]["input"].as_array().unwrap();
        assert!(
            input.iter().any(|i| i["role"] == "user"),
            "the greeting before the first user message is never a pivot"
        );
    }
    assert_rows_valid(&built.rows, false);
}

fn lines_bytes(rows: &[Value]) -> Vec<u8> {
    rows.iter()
        .flat_map(|r| [serde_json::to_vec(r).unwrap(), b"\n".to_vec()].concat())
        .collect()
}
