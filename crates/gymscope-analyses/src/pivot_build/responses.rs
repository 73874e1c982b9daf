//! NeMo Gym rollouts (docs/pivots.md "Pivot datasets"): the request the source model saw at model call k is
//! `responses_create_params.input + response.output[..start of call k]`, so `T` is the input
//! followed by the output and every turn of the output is a decision point.

use super::skips::IndexKind;
use super::turns::Trajectory;
use serde_json::Value;

/// Builds `T` from a rollout row, or says which field is missing. The items and tools are
/// moved out of the row (the rest of it stays for provenance).
pub fn trajectory(row: &mut Value, input_turns: bool) -> Result<Trajectory, String> {
    if !row
        .get("responses_create_params")
        .is_some_and(Value::is_object)
    {
        return Err("field `responses_create_params` is missing or not an object".into());
    }
    let Some(Value::Array(output)) = row.pointer_mut("/response/output").map(Value::take) else {
        return Err("field `response.output` is missing or not a list".into());
    };
    let response_tools = row.pointer_mut("/response/tools").map(Value::take);
    let incomplete = row
        .pointer("/response/incomplete_details")
        .is_some_and(|d| !d.is_null());
    let params = row["responses_create_params"]
        .as_object_mut()
        .expect("checked above");
    let mut items = match params.get_mut("input").map(Value::take) {
        Some(Value::String(s)) => {
            vec![serde_json::json!({"role": "user", "content": s, "type": "message"})]
        }
        Some(Value::Array(a)) => a,
        None | Some(Value::Null) => Vec::new(),
        Some(_) => {
            return Err("field `responses_create_params.input` is not a string or a list".into())
        }
    };
    let k0 = items.len();
    items.extend(output);
    let mut t = Trajectory::new(items, IndexKind::Item);
    t.k0 = Some(k0);
    t.num_source = t.items.len();
    t.segment(k0, input_turns);
    t.tools = match params.get_mut("tools").map(Value::take) {
        Some(Value::Array(tools)) if !tools.is_empty() => tools,
        _ => match response_tools {
            Some(Value::Array(tools)) => tools,
            _ => Vec::new(),
        },
    };
    t.parallel_tool_calls = params
        .get("parallel_tool_calls")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    t.carried = carried(params);
    t.incomplete = incomplete;
    Ok(t)
}

/// The model-visible request fields a pivot keeps, when non-null (Gym's request model rejects
/// any other key).
pub fn carried(params: &serde_json::Map<String, Value>) -> Vec<(String, Value)> {
    ["instructions", "reasoning", "text"]
        .into_iter()
        .filter_map(|k| {
            params
                .get(k)
                .filter(|v| !v.is_null())
                .map(|v| (k.to_string(), v.clone()))
        })
        .collect()
}
