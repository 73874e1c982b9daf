//! An ATIF trajectory as a Gym rollout, so every command and page that reads a Gym run reads
//! it: the system and user steps before the agent's first become
//! `responses_create_params.input`, the agent's steps become `response.output` in the
//! Responses items Gym's agents write (reasoning, `function_call`, `function_call_output`,
//! `message`, each with Gym's fields in Gym's order), the token totals `response.usage`, and the
//! row gets its key, agent and reward.
//!
//! A trajectory Gym exported keeps its provenance under `extra.nemo_gym` (NeMo Gym v0.7.0
//! `nemo_gym/atif_export.py`): the items' ids, and the model call with the request's tools and
//! the response's own copy of each function call. Where it is there, it is used, so such a
//! trajectory reads back as the rollout it came from (arguments byte for byte, tools, ids).
//! docs/atif.md lists what maps to what and what is lost.

use super::trajectory::{Content, Part, Step, Trajectory};
use crate::gym::keys;
use serde_json::{json, Map, Value};

/// Where a rollout sits in the run and what it earned.
#[derive(Clone, Debug, PartialEq)]
pub struct Placement {
    pub task: u64,
    pub rollout: u64,
    /// `None`: no reward source covers this trajectory (the row has no `reward`).
    pub reward: Option<f64>,
}

fn input_content(c: &Content) -> Value {
    match c {
        Content::Text(t) => Value::String(t.clone()),
        Content::Parts(parts) => Value::Array(
            parts
                .iter()
                .map(|p| match p {
                    Part::Text(t) => json!({"type": "input_text", "text": t}),
                    Part::Image { path, .. } => {
                        json!({"type": "input_image", "image_url": path, "detail": "auto"})
                    }
                })
                .collect(),
        ),
    }
}

/// `extra.nemo_gym` of a step, a call or an observation (Gym's provenance).
fn gym_extra(extra: Option<&Value>) -> Option<&Map<String, Value>> {
    extra?.get("nemo_gym")?.as_object()
}

fn source_item_id(extra: Option<&Value>) -> Option<Value> {
    gym_extra(extra)?
        .get("source_item_id")
        .filter(|v| v.is_string())
        .cloned()
}

/// The model call Gym recorded for a step.
fn model_call(step: &Step) -> Option<&Map<String, Value>> {
    gym_extra(step.extra.as_ref())?
        .get("model_call")?
        .as_object()
}

/// The arguments string the model wrote for `call_id` (from the recorded response), else the
/// object as Python's `json.dumps` writes it (what Gym's agents send).
fn arguments_text(step: &Step, call_id: &str, arguments: &Value) -> String {
    let recorded = model_call(step)
        .and_then(|c| c.get("response")?.get("output")?.as_array())
        .and_then(|items| {
            items.iter().find_map(|i| {
                (i.get("type")? == "function_call" && i.get("call_id")? == call_id)
                    .then(|| i.get("arguments")?.as_str().map(str::to_string))
                    .flatten()
            })
        });
    recorded.unwrap_or_else(|| crate::gym::py::json_dumps(arguments))
}

fn push(m: &mut Map<String, Value>, k: &str, v: Option<Value>) {
    if let Some(v) = v {
        m.insert(k.into(), v);
    }
}

fn agent_items(s: &Step, n: usize, output: &mut Vec<Value>) {
    let source_items = gym_extra(s.extra.as_ref()).and_then(|g| g.get("source_items"));
    if let Some(r) = &s.reasoning {
        let id = source_items
            .and_then(|i| i.get("reasoning_ids")?.get(0).cloned())
            .unwrap_or_else(|| format!("rs_{n}").into());
        output.push(json!({"id": id, "summary": [{"text": r, "type": "summary_text"}], "type": "reasoning"}));
    }
    for call in &s.tool_calls {
        let mut item = Map::new();
        item.insert(
            "arguments".into(),
            arguments_text(s, &call.id, &call.arguments).into(),
        );
        item.insert("call_id".into(), call.id.clone().into());
        item.insert("name".into(), call.name.clone().into());
        item.insert("type".into(), "function_call".into());
        push(&mut item, "id", source_item_id(call.extra.as_ref()));
        item.insert("status".into(), "completed".into());
        output.push(Value::Object(item));
    }
    for (j, o) in s.observations.iter().enumerate() {
        let mut item = Map::new();
        let call_id = o
            .source_call_id
            .clone()
            .unwrap_or_else(|| format!("obs_{n}_{j}"));
        item.insert("call_id".into(), call_id.into());
        item.insert(
            "output".into(),
            o.content
                .as_ref()
                .map_or(Value::String(String::new()), input_content),
        );
        item.insert("type".into(), "function_call_output".into());
        push(&mut item, "id", source_item_id(o.extra.as_ref()));
        output.push(Value::Object(item));
    }
    let text = s.message.text();
    if !text.is_empty() {
        let id = source_items
            .and_then(|i| i.get("message_id").cloned())
            .unwrap_or_else(|| format!("msg_{n}").into());
        output.push(json!({"id": id,
            "content": [{"annotations": [], "text": text, "type": "output_text"}],
            "role": "assistant", "status": "completed", "type": "message"}));
    }
}

/// The create parameters: the prompt, and the tools (the agent's definitions, else the tools
/// of the request Gym recorded, with the tool choice its response echoes).
fn create_params(t: &Trajectory, input: Vec<Value>) -> Value {
    let mut create = Map::new();
    create.insert("input".into(), Value::Array(input));
    let call = t
        .steps
        .iter()
        .find(|s| s.source == "agent")
        .and_then(model_call);
    let tools = t
        .tool_definitions
        .clone()
        .or_else(|| call?.get("request")?.get("tools").cloned());
    push(&mut create, "tools", tools);
    if let Some(response) = call.and_then(|c| c.get("response")) {
        for key in ["parallel_tool_calls", "tool_choice"] {
            push(
                &mut create,
                key,
                response.get(key).filter(|v| !v.is_null()).cloned(),
            );
        }
    }
    Value::Object(create)
}

/// The rollout row and its materialized-inputs row.
pub fn to_gym(t: &Trajectory, place: &Placement) -> (Value, Value) {
    let first_agent = t
        .steps
        .iter()
        .position(|s| s.source == "agent")
        .unwrap_or(t.steps.len());
    let input: Vec<Value> = t.steps[..first_agent]
        .iter()
        .map(|s| json!({"content": input_content(&s.message), "role": s.source, "type": "message"}))
        .collect();
    let mut output = Vec::new();
    for (i, s) in t.steps[first_agent..].iter().enumerate() {
        if s.source == "agent" {
            agent_items(s, first_agent + i + 1, &mut output);
        } else {
            output.push(
                json!({"content": input_content(&s.message), "role": s.source, "type": "message"}),
            );
        }
    }
    let create = create_params(t, input);
    let (prompt, completion) = t.tokens();
    let mut usage = Map::new();
    push(&mut usage, "input_tokens", prompt.map(Value::from));
    push(&mut usage, "output_tokens", completion.map(Value::from));
    if let (Some(p), Some(c)) = (prompt, completion) {
        usage.insert("total_tokens".into(), p.saturating_add(c).into());
    }
    let model = t
        .model_name
        .clone()
        .or_else(|| t.steps.iter().find_map(|s| s.model_name.clone()));
    let mut response = Map::new();
    push(&mut response, "model", model.map(Value::from));
    response.insert("output".into(), Value::Array(output));
    response.insert("usage".into(), Value::Object(usage));
    let agent_ref = json!({"name": t.agent_name});
    let mut row = Map::new();
    row.insert(keys::RESPONSES_CREATE_PARAMS.into(), create.clone());
    row.insert("response".into(), Value::Object(response));
    push(&mut row, "reward", place.reward.map(|r| json!(r)));
    row.insert(keys::TASK_INDEX.into(), place.task.into());
    row.insert(keys::ROLLOUT_INDEX.into(), place.rollout.into());
    row.insert(keys::AGENT_REF.into(), agent_ref.clone());
    push(
        &mut row,
        "atif_trajectory_id",
        t.trajectory_id.clone().map(Value::from),
    );
    let mut inputs = Map::new();
    inputs.insert(keys::RESPONSES_CREATE_PARAMS.into(), create);
    inputs.insert(keys::AGENT_REF.into(), agent_ref);
    inputs.insert(keys::TASK_INDEX.into(), place.task.into());
    inputs.insert(keys::ROLLOUT_INDEX.into(), place.rollout.into());
    (Value::Object(row), Value::Object(inputs))
}
