//! The skimming readers (`fast`, `fast_values`) against serde's: whatever they take, they read as
//! serde does; what they are unsure of, they leave; and the common shapes take the fast path.

use super::fast::{self, Reader};
use super::row::Row;
use super::{fast_values, signals};
use serde_json::{json, Value};

/// serde's reading of a row (the reference).
fn serde_row(line: &str) -> Option<Row<'_>> {
    serde_json::from_str(line).ok()
}

/// The skimming reader, when it takes `line`, reads what serde reads; whether it took it.
fn same_row(line: &str) -> bool {
    let Some(fast) = fast::read_row(line) else {
        return false;
    };
    assert_eq!(Some(&fast), serde_row(line).as_ref(), "{line}");
    let by = |reader| signals::signals(fast.response.as_ref(), reader);
    assert_eq!(by(Reader::Skim), by(Reader::Serde), "{line}");
    true
}

fn item(v: &Value) -> String {
    json!({"_ng_task_index": 0, "_ng_rollout_index": 0, "reward": 1,
           "response": {"status": "completed", "output": [v]}})
    .to_string()
}

#[test]
fn takes_real_shapes_and_reads_them_as_serde_does() {
    let lines = [
        // Names and ids with escapes and Unicode, an escaped argument text, a tool error.
        r#"{"responses_create_params":{"input":[{"role":"user","content":"q \"x\" \u00e9 😀"}]},"response":{"id":"r","status":"incomplete","incomplete_details":{"reason":"max_output_tokens"},"output":[{"type":"reasoning","summary":[{"text":"t","type":"summary_text"}]},{"arguments":"{\"code\": \"print(\\\"é\\\")\\n\", \"b\": [1, -2, 3.50, {\"z\": null, \"a\": true}]}","call_id":"c\"1","name":"py\u0074hon","type":"function_call","status":"completed"},{"call_id":"c\"1","output":"{\"stdout\": \"\", \"exit_code\": 2}","type":"function_call_output"},{"content":[{"type":"output_text","text":"  \n "},{"type":"refusal","text":"no"}],"role":"assistant","type":"message"}],"usage":{"input_tokens":10,"input_tokens_details":{"cached_tokens":4},"output_tokens":5.0,"output_tokens_details":{"reasoning_tokens":2},"total_tokens":15}},"reward":true,"_ng_task_index":3,"_ng_rollout_index":1,"agent_ref":{"type":"x","name":"a\tb"}}"#,
        r#" { "_ng_task_index" : 1 , "_ng_rollout_index" : 2 , "response" : null , "reward" : null } "#,
        r#"{"_ng_task_index":1,"_ng_rollout_index":2,"response":{"output":null,"usage":null,"status":null}}"#,
        r#"{"_ng_task_index":1.5,"_ng_rollout_index":"0","agent_ref":null,"reward":{"v":1},"response":{"output":[]}}"#,
        r#"{"_ng_task_index":1,"_ng_rollout_index":0,"ng_trajectory":{"gaps":[{"code":"g"}]},"response":{"output":[{"type":"message","role":"assistant","content":"  "},{"type":"message","role":"assistant","content":null},{"type":"function_call","arguments":{"b":1,"a":2},"name":null}]}}"#,
        r"{}",
    ];
    for line in lines {
        assert!(same_row(line), "fast path refused {line}");
    }
    let items = [
        json!({"type": "function_call", "name": "f", "arguments": "{\"a\": 1, \"a\": 2}", "call_id": "c"}),
        json!({"type": "function_call", "name": "f", "arguments": "{not json", "call_id": "c"}),
        json!({"type": "function_call", "name": "f", "arguments": "", "call_id": "c"}),
        json!({"type": "function_call", "name": "f", "arguments": "{\"k\": \"\\u00e9\\/\", \"n\": 1e2, \"m\": -0, \"big\": 123456789012345678901}"}),
        json!({"type": "function_call", "name": "f", "arguments": "{\n  \"pretty\": [1,\n 2]\n}\n"}),
        json!({"type": "function_call", "name": "f", "arguments": "{\"raw\": \"a\tb\"}"}),
        json!({"type": "function_call", "name": "f", "arguments": "{\"\\u0061\": 1, \"a\": 2}"}),
        json!({"type": "function_call", "name": "f", "arguments": "[1, \"x\", {\"b\": {}, \"a\": []}] "}),
        json!({"type": "function_call", "name": "f", "arguments": "{\"a\": 1} trailing"}),
        json!({"type": "function_call", "name": "f", "arguments": "\"\\ud800\""}),
        json!({"type": "function_call_output", "call_id": "c", "output": "Traceback (most recent call last)"}),
        json!({"type": "function_call_output", "call_id": "c", "output": "  {\"error\": \"\", \"status\": \"FAILED\"}"}),
        json!({"type": "function_call_output", "call_id": "c", "output": "{\"error\": null, \"error\": {\"x\": 1}}"}),
        json!({"type": "function_call_output", "call_id": "c", "output": "{\"detail\": null, \"exit_code\": 0.0}"}),
        json!({"type": "function_call_output", "call_id": "c", "output": "{\"exit_code\": 1, \"exit_code\": 0}"}),
        json!({"type": "function_call_output", "call_id": "c", "output": "{\"a\": 1} not json"}),
        json!({"type": "function_call_output", "call_id": "c", "output": "{\n \"error\": \"boom\"\n}"}),
        json!({"type": "function_call_output", "call_id": "c", "output": {"status": "Error"}}),
        json!({"type": "function_call_output", "call_id": "c", "output": [{"type": "text", "text": "Error: x"}]}),
        json!({"type": "function_call_output", "call_id": "c", "output": "Exit code 3\nboom"}),
        json!({"type": "function_call_output", "call_id": "c", "output": 7}),
        json!({"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "\u{a0}\u{2003}"}]}),
        json!({"type": "message", "role": "assistant", "content": [{"text": "x"}, {"type": "output_text"}]}),
        json!({"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": 5}]}),
        json!({"type": "message", "role": "assistant", "content": []}),
        json!({"type": "message", "role": "assistant", "content": ["x"]}),
        json!({"type": "message", "role": "assistant", "content": {"text": "x"}}),
    ];
    for v in &items {
        assert!(same_row(&item(v)), "fast path refused {v}");
    }
}

#[test]
fn leaves_errors_and_rare_shapes_to_serde() {
    let refused = [
        r#"{"response":{"output":[]},"response":null}"#,
        r#"{"response":{"status":"a","status":"b"}}"#,
        r#"{"response":{"output":[{"type":"a","type":"b"}]}}"#,
        r#"{"response":{"output":[["message","assistant"]]}}"#,
        r#"{"response":{"output":{"0":{}}}}"#,
        r#"{"response":{"status":1}}"#,
        r#"{"response":[]}"#,
        r#"{"\u0072esponse":{}}"#,
        "{\"a\":\t1}",
        r#"{"a":1,}"#,
        r#"{"a":1} x"#,
        r"[1]",
        r#"{"agent_ref":{"name":"a","name":"b"}}"#,
        r#"{"reward":1,"reward":2}"#,
        r#"{"a":"\ud800"}"#,
    ];
    for line in refused {
        assert!(fast::read_row(line).is_none(), "{line}");
    }
}

/// `fast_values` against the `Value` readings in `signals`, value by value.
#[test]
fn values_read_by_skimming_match_the_value_readings() {
    let texts = [
        r#"{"b": {"d": 1, "c": [ {"f":1,"e":2} ]}, "a": null}"#,
        r#"{"code": "print(\"é\")\n", "x": -12, "y": 3.0, "z": 1e-7, "w": 12345678901234567890}"#,
        r#"{"s": "\u00e9\/\u0041\n\u001f\u007f", "é": 1, "a b": 2, "B": 3}"#,
        r#"  [true, false, null, "", {}] "#,
        r#""just a string""#,
        "{\"a\": -0}",
        "{\"a\": 1, \"a\": 2}",
        "{\"a\": 1,}",
        "{\"a\" 1}",
        "",
        "{\"deep\": [[[[[[[[[[1]]]]]]]]]]}",
    ];
    for text in texts {
        let by_value = serde_json::from_str::<Value>(text)
            .ok()
            .map(|v| crate::json::sorted_string(&v));
        if let Some(fast) = fast_values::sorted_text(text) {
            assert_eq!(Some(fast), by_value, "{text}");
        }
    }
    assert!(fast_values::sorted_text(texts[0]).is_some());
    assert!(fast_values::sorted_text(texts[2]).is_some());
    let objects = [
        r#"{"stdout": "x", "exit_code": 0}"#,
        r#"{"stdout": "x", "exit_code": 3}"#,
        r#"{"error": "  "}"#,
        r#"{"error": [], "status": "ok"}"#,
        r#"{"error": false, "detail": null}"#,
        r#"{"detail": "x"}"#,
        r#"{"status": "Failed"}"#,
        r#"{"exit_code": "1"}"#,
        r#"{"exit_code": 1, "exit_code": 0} "#,
        r"{}",
    ];
    for text in objects {
        let v: Value = serde_json::from_str(text).unwrap();
        assert_eq!(
            fast_values::error_object(text),
            Some(super::rules::is_error_object(&v)),
            "{text}"
        );
    }
}

#[test]
fn key_rows_read_as_serde_does() {
    let taken = [
        r#"{"_ng_task_index":1,"_ng_rollout_index":2,"agent_ref":{"name":"a\"b"},"responses_create_params":{"input":"\u00e9"}}"#,
        r#"{"_ng_task_index":1.5,"_ng_rollout_index":null,"agent_ref":null,"_ng_failure_class":{"a":[1]}}"#,
        r#"{"_ng_failure_class":"judge_failed","x":1,"x":2}"#,
    ];
    for line in taken {
        let fast = fast::read_key_row(line).unwrap();
        let serde: super::row::KeyRow = serde_json::from_str(line).unwrap();
        assert_eq!(fast, serde, "{line}");
    }
    let refused = [
        r#"{"_ng_task_index":1,"_ng_task_index":2}"#,
        r#"{"\u0061gent_ref":{}}"#,
        "{\"a\":\t1}",
        r"[1, 2]",
    ];
    for line in refused {
        assert!(fast::read_key_row(line).is_none(), "{line}");
    }
}
