//! Cases from upstream's `responses_api_agents/claude_code_agent/tests/test_observability.py`
//! at `07d6b0d`.
#![allow(clippy::unwrap_used)]

use super::*;
use crate::collect::observations::validate;
use crate::collect::observe::{attach_evidence, CaptureRead};
use crate::gym::keys::OBSERVATIONS;
use serde_json::json;

fn mref() -> Value {
    json!({"type": "responses_api_models", "name": "policy"})
}

const SUMMARY: &str = "This session is being continued from a previous conversation that ran out of context. The summary below covers the earlier portion of the conversation.\n\nSummary:\nKeep this.\n\nRecent messages are preserved verbatim.";

fn bundle_value() -> Value {
    let before = json!({"model_ref": mref(), "response_id": "msg-before"});
    let after = json!({"model_ref": mref(), "response_id": "msg-after"});
    json!({"source": "claude_code", "records": [
        {"kind": "agent_invocation", "invocation_id": "root", "model_calls": [before, after]},
        {"kind": "context_compaction", "invocation_id": "root", "outcome": "completed", "summary": SUMMARY,
         "before_model_call": before, "after_model_call": after}],
        "gaps": [{"code": "compaction_model_call_reference_unavailable", "invocation_id": "root"}]})
}

/// One captured Messages exchange as the model server writes it.
fn captured(id: &str, response_id: &str, compact: bool) -> Value {
    json!({"model_call_id": id, "dialect": "messages", "status_code": 200, "model_ref": mref(),
        "request": {"messages": [{"role": "user", "content":
            if compact { "Your task is to create a detailed summary of this conversation." } else { "continue" }}]},
        "response": {"id": response_id, "content": [{"type": "text", "text":
            if compact { "<analysis>private</analysis><summary>Keep this.</summary>" } else { "ok" }}]}})
}

/// The exchanges as call records (`call_index` = position).
fn records(exchanges: &[Value]) -> Vec<Map<String, Value>> {
    exchanges
        .iter()
        .enumerate()
        .map(|(i, e)| {
            crate::collect::observe::call_record(e.as_object().unwrap(), i as u64).unwrap()
        })
        .collect()
}

fn associated(calls: &[Map<String, Value>]) -> Bundle {
    let mut b = validate(&bundle_value()).unwrap();
    let refs: Vec<&Map<String, Value>> = calls.iter().collect();
    associate(&mut b, &refs).unwrap();
    b
}

fn codes(b: &Bundle) -> Vec<&str> {
    b.gaps.iter().filter_map(|g| g["code"].as_str()).collect()
}

#[test]
fn a_unique_summary_call_joins_the_compaction_and_its_invocation() {
    let lines = [
        captured("call-before", "msg-before", false),
        captured("call-compact", "msg-compact", true),
        captured("call-after", "msg-after", false),
    ];
    let read = CaptureRead {
        found: true,
        lines: lines.iter().map(|l| l.to_string().into_bytes()).collect(),
        ..CaptureRead::default()
    };
    let row = json!({"_ng_task_index": 0, "_ng_rollout_index": 0})
        .as_object()
        .unwrap()
        .clone();
    let mut result = row.clone();
    result.insert(OBSERVATIONS.into(), bundle_value());
    attach_evidence(&row, &mut result, Some(&read));
    let obs = &result[OBSERVATIONS];
    let ids = |v: &Value| -> Vec<Value> {
        v.as_array()
            .unwrap()
            .iter()
            .map(|r| r["model_call_id"].clone())
            .collect()
    };
    assert_eq!(
        ids(&obs["records"][0]["model_calls"]),
        [
            json!("call-before"),
            json!("call-compact"),
            json!("call-after")
        ]
    );
    assert_eq!(
        ids(&obs["records"][1]["model_calls"]),
        [json!("call-compact")]
    );
    assert_eq!(obs["gaps"], json!([]));
}

#[test]
fn ambiguous_summary_calls_are_not_joined() {
    let b = associated(&records(&[
        captured("call-before", "msg-before", false),
        captured("call-1", "msg-1", true),
        captured("call-2", "msg-2", true),
        captured("call-after", "msg-after", false),
    ]));
    assert_eq!(b.records[1]["model_calls"], json!([]));
    assert_eq!(
        codes(&b),
        [
            "compaction_model_call_reference_unavailable",
            "compaction_model_call_match_ambiguous"
        ]
    );
    assert_eq!(b.gaps[1]["detail"], "candidate_count=2");
}

#[test]
fn inexact_summary_calls_are_not_joined() {
    for case in [
        "marker_in_history",
        "failed_call",
        "outside_boundaries",
        "other_summary",
    ] {
        let mut lines = vec![
            captured("call-before", "msg-before", false),
            captured("call-compact", "msg-compact", true),
            captured("call-after", "msg-after", false),
        ];
        match case {
            "marker_in_history" => lines[1]["request"]["messages"]
                .as_array_mut()
                .unwrap()
                .push(json!({"role": "user", "content": "continue"})),
            "failed_call" => lines[1]["status_code"] = json!(500),
            "outside_boundaries" => lines.swap(1, 2),
            _ => {
                lines[1]["response"]["content"][0]["text"] = json!("<summary>Keep that.</summary>");
            }
        }
        let b = associated(&records(&lines));
        assert_eq!(b.records[1]["model_calls"], json!([]), "{case}");
        assert_eq!(
            codes(&b),
            ["compaction_model_call_reference_unavailable"],
            "{case}"
        );
    }
}

#[test]
fn summaries_match_only_with_claude_codes_own_trailers() {
    let prefix = SUMMARY_PREFIX;
    assert_eq!(
        normalize("a <analysis>x\n\n\ny</analysis>b\n\n\n\n<summary>\n  s \n</summary>\n\n"),
        "a b\n\nSummary:\ns"
    );
    assert!(matches_summary(
        &format!("{prefix}Summary:\ns"),
        "<summary>s</summary>"
    ));
    let note = format!(
        "{prefix}Summary:\ns{TRANSCRIPT_NOTE}/tmp/t.jsonl{}{}",
        SUFFIXES[0], SUFFIXES[2]
    );
    assert!(matches_summary(&note, "<summary>s</summary>"));
    // An empty transcript path, trailers out of order, or anything else after: no match.
    assert!(!matches_summary(
        &format!("{prefix}Summary:\ns{TRANSCRIPT_NOTE}"),
        "<summary>s</summary>"
    ));
    assert!(!matches_summary(
        &format!("{prefix}Summary:\ns{}{}", SUFFIXES[2], SUFFIXES[0]),
        "<summary>s</summary>"
    ));
    assert!(!matches_summary(
        &format!("{prefix}Summary:\ns and more"),
        "<summary>s</summary>"
    ));
    assert!(!matches_summary("Summary:\ns", "<summary>s</summary>"));
    // Text blocks are joined; other content is JSON text (the marker still found in it).
    assert!(is_compaction_request(
        &json!({"messages": [{"role": "user", "content": [
        {"type": "text", "text": "Your task is to create a detailed "}, {"type": "text", "text": "summary of this conversation."}]}]})
    ));
    assert!(!is_compaction_request(
        &json!({"messages": [{"role": "assistant", "content": PROMPT_MARKERS[0]}]})
    ));
}
