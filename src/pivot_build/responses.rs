//! NeMo Gym rollouts (spec §a.1): the request the source model saw at model call k is
//! `responses_create_params.input + response.output[..start of call k]`, so `T` is the input
//! followed by the output and every turn of the output is a decision point.

use super::skips::IndexKind;
use super::trajectory::Trajectory;
use serde_json::Value;

/// Builds `T` from a rollout row, or says which field is missing.
pub fn trajectory(row: &Value, input_turns: bool) -> Result<Trajectory, String> {
    let params = row
        .get("responses_create_params")
        .and_then(Value::as_object)
        .ok_or("field `responses_create_params` is missing or not an object")?;
    let output = row
        .get("response")
        .and_then(|r| r.get("output"))
        .and_then(Value::as_array)
        .ok_or("field `response.output` is missing or not a list")?;
    let mut items = match params.get("input") {
        Some(Value::String(s)) => {
            vec![serde_json::json!({"role": "user", "content": s, "type": "message"})]
        }
        Some(Value::Array(a)) => a.clone(),
        None | Some(Value::Null) => Vec::new(),
        Some(_) => {
            return Err("field `responses_create_params.input` is not a string or a list".into())
        }
    };
    let k0 = items.len();
    items.extend(output.iter().cloned());
    let mut t = Trajectory::new(items, IndexKind::Item);
    t.k0 = Some(k0);
    t.num_source = t.items.len();
    t.segment(k0, input_turns);
    let tools = match params.get("tools").and_then(Value::as_array) {
        Some(tools) if !tools.is_empty() => tools.clone(),
        _ => row
            .get("response")
            .and_then(|r| r.get("tools"))
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default(),
    };
    t.tools = tools;
    t.parallel_tool_calls = params
        .get("parallel_tool_calls")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    t.carried = carried(params);
    t.incomplete = row
        .get("response")
        .and_then(|r| r.get("incomplete_details"))
        .is_some_and(|d| !d.is_null());
    Ok(t)
}

/// The model-visible request fields a pivot keeps (spec §a.1 step 9), when non-null.
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
