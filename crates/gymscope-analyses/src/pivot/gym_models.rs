//! `--gym-repo`: the rules upstream's validator adds by validating `responses_create_params`
//! with Gym's Pydantic model `NeMoGymResponseCreateParamsNonStreaming` (`extra="forbid"`), checked
//! here without Python (upstream `validate_pivot_dataset.py` @07d6b0d, its `--gym-repo` branch;
//! docs/pivots.md "`gymscope validate-pivot`"):
//! - no keys beyond the model's fields;
//! - `input` a string or a list of Responses input items of a known `type`, with the fields each
//!   common type requires (messages, function calls and outputs, reasoning);
//! - each tool of a known `type`; a `function` tool has `name`, `parameters` and `strict`
//!   (the chat-completions form `{"type":"function","function":{…}}` lacks them);
//! - `stream` absent, null or false;
//! - `metadata` a map of strings to strings;
//! - known scalar fields of their type, read as Pydantic's lax mode reads them (`"5"` is an int,
//!   `1.0` a bool: [`crate::gym::pydantic`]).
//!
//! `ExpectedAction` needs no check here: it never fails once the X checks passed.

use super::tree::Json;
use crate::gym::pydantic::{self, Scalar};

/// Pydantic's name for the model, as upstream's message starts.
pub const MODEL: &str = "NeMoGymResponseCreateParamsNonStreaming";

const FIELDS: [&str; 23] = [
    "background",
    "include",
    "input",
    "instructions",
    "max_output_tokens",
    "max_tool_calls",
    "metadata",
    "model",
    "parallel_tool_calls",
    "previous_response_id",
    "prompt",
    "reasoning",
    "service_tier",
    "store",
    "temperature",
    "text",
    "tool_choice",
    "tools",
    "top_logprobs",
    "top_p",
    "truncation",
    "user",
    "stream",
];

/// Input item types of `NeMoGymResponseInputItem` checked only for being objects.
const OTHER_ITEM_TYPES: [&str; 14] = [
    "mcp_call",
    "mcp_list_tools",
    "mcp_approval_request",
    "mcp_approval_response",
    "file_search_call",
    "web_search_call",
    "computer_call",
    "computer_call_output",
    "image_generation_call",
    "code_interpreter_call",
    "local_shell_call",
    "local_shell_call_output",
    "custom_tool_call",
    "custom_tool_call_output",
];

/// Tool types of the Responses `ToolParam` union other than `function`.
const OTHER_TOOL_TYPES: [&str; 10] = [
    "file_search",
    "computer_use_preview",
    "web_search",
    "web_search_preview",
    "web_search_preview_2025_03_11",
    "mcp",
    "code_interpreter",
    "image_generation",
    "local_shell",
    "custom",
];

/// One failed rule: where (dotted, from `responses_create_params`) and what.
#[derive(Debug, PartialEq)]
pub struct ModelError {
    pub loc: String,
    pub msg: String,
}

/// Every rule `params` (an object) breaks, in field order.
pub fn check(params: &Json) -> Vec<ModelError> {
    let mut errors = Vec::new();
    let mut err = |loc: String, msg: &str| {
        errors.push(ModelError {
            loc,
            msg: msg.into(),
        });
    };
    let Json::Obj(entries) = params else {
        err(String::new(), "Input should be a valid dictionary");
        return errors;
    };
    if params.get("input").is_none() {
        err("input".into(), "Field required");
    }
    for (key, value) in entries {
        let key: &str = key;
        let loc = key.to_string();
        let optional = matches!(value, Json::Null);
        match key {
            "input" => check_input(value, &mut err),
            "tools" => check_tools(value, &mut err),
            "metadata" if !optional => match value {
                Json::Obj(m) => {
                    for (k, v) in m {
                        if !matches!(v, Json::Str(_)) {
                            err(format!("metadata.{k}"), "Input should be a valid string");
                        }
                    }
                }
                _ => err(loc, "Input should be a valid dictionary"),
            },
            "stream" if !optional && pydantic::lax_bool(scalar(value)) != Some(false) => {
                err(loc, "Input should be False");
            }
            // `parallel_tool_calls` is a plain bool: null is not one.
            "background" | "store" | "parallel_tool_calls"
                if !(is_lax_bool(value) || (optional && key != "parallel_tool_calls")) =>
            {
                err(loc, "Input should be a valid boolean");
            }
            "instructions" | "previous_response_id" | "user" | "model"
                if !optional && !matches!(value, Json::Str(_)) =>
            {
                err(loc, "Input should be a valid string");
            }
            "max_output_tokens" | "max_tool_calls" | "top_logprobs"
                if !optional && pydantic::lax_int(scalar(value)).is_none() =>
            {
                err(loc, "Input should be a valid integer");
            }
            "temperature" | "top_p"
                if !optional && pydantic::lax_float(scalar(value)).is_none() =>
            {
                err(loc, "Input should be a valid number");
            }
            "service_tier"
                if !optional
                    && !one_of(value, &["auto", "default", "flex", "scale", "priority"]) =>
            {
                err(
                    loc,
                    "Input should be 'auto', 'default', 'flex', 'scale' or 'priority'",
                );
            }
            "truncation" if !optional && !one_of(value, &["auto", "disabled"]) => {
                err(loc, "Input should be 'auto' or 'disabled'");
            }
            "tool_choice"
                if !(one_of(value, &["none", "auto", "required"])
                    || matches!(value, Json::Obj(_))) =>
            {
                err(
                    loc,
                    "Input should be 'none', 'auto', 'required' or a tool choice object",
                );
            }
            "include" if !optional => match value {
                Json::Arr(items) if items.iter().all(|i| matches!(i, Json::Str(_))) => {}
                _ => err(loc, "Input should be a valid list of strings"),
            },
            "prompt" | "reasoning" | "text" if !optional && !matches!(value, Json::Obj(_)) => {
                err(loc, "Input should be a valid dictionary");
            }
            _ if !FIELDS.contains(&key) => err(loc, "Extra inputs are not permitted"),
            _ => {}
        }
    }
    errors
}

fn one_of(v: &Json, choices: &[&str]) -> bool {
    v.as_str().is_some_and(|s| choices.contains(&s))
}

/// The value as Pydantic's lax coercions see it.
fn scalar<'a>(v: &'a Json) -> Scalar<'a> {
    match v {
        Json::Bool(b) => Scalar::Bool(*b),
        Json::Num(n) => Scalar::Num(*n),
        Json::Str(s) => Scalar::Str(s),
        _ => Scalar::Other,
    }
}

fn is_lax_bool(v: &Json) -> bool {
    pydantic::lax_bool(scalar(v)).is_some()
}

fn check_input(value: &Json, err: &mut impl FnMut(String, &str)) {
    let items = match value {
        Json::Str(_) => return,
        Json::Arr(items) => items,
        _ => {
            return err(
                "input".into(),
                "Input should be a valid string or a list of input items",
            )
        }
    };
    for (i, item) in items.iter().enumerate() {
        let loc = |field: &str| {
            if field.is_empty() {
                format!("input[{i}]")
            } else {
                format!("input[{i}].{field}")
            }
        };
        if !matches!(item, Json::Obj(_)) {
            err(
                loc(""),
                "Input should be a valid dictionary or instance of an input item",
            );
            continue;
        }
        let str_field = |name: &str| matches!(item.get(name), Some(Json::Str(_)));
        let ty = item.get("type").and_then(Json::as_str);
        match ty.unwrap_or("message") {
            "message" => {
                if !one_of(
                    item.get("role").unwrap_or(&Json::Null),
                    &["user", "assistant", "system", "developer"],
                ) {
                    err(
                        loc("role"),
                        "Input should be 'user', 'assistant', 'system' or 'developer'",
                    );
                }
                match item.get("content") {
                    Some(Json::Str(_)) => {}
                    Some(Json::Arr(parts)) => {
                        for (j, part) in parts.iter().enumerate() {
                            if part.get("type").and_then(Json::as_str).is_none() {
                                err(
                                    format!("input[{i}].content[{j}]"),
                                    "Input should be a content part with a `type`",
                                );
                            }
                        }
                    }
                    Some(_) => err(
                        loc("content"),
                        "Input should be a valid string or list of content parts",
                    ),
                    None => err(loc("content"), "Field required"),
                }
            }
            "function_call" => {
                for f in ["arguments", "call_id", "name"] {
                    if !str_field(f) {
                        err(loc(f), "Field required (a string)");
                    }
                }
            }
            "function_call_output" => {
                if !str_field("call_id") {
                    err(loc("call_id"), "Field required (a string)");
                }
                if !matches!(item.get("output"), Some(Json::Str(_) | Json::Arr(_))) {
                    err(loc("output"), "Input should be a valid string or list");
                }
            }
            "reasoning" => {
                if !str_field("id") {
                    err(loc("id"), "Field required (a string)");
                }
                match item.get("summary") {
                    Some(Json::Arr(parts)) => {
                        for (j, part) in parts.iter().enumerate() {
                            if !matches!(part.get("text"), Some(Json::Str(_))) {
                                err(
                                    format!("input[{i}].summary[{j}].text"),
                                    "Field required (a string)",
                                );
                            }
                        }
                    }
                    _ => err(loc("summary"), "Input should be a valid list"),
                }
            }
            t if OTHER_ITEM_TYPES.contains(&t) => {}
            _ => err(
                loc("type"),
                "Input tag does not match any Responses input item type",
            ),
        }
    }
}

fn check_tools(value: &Json, err: &mut impl FnMut(String, &str)) {
    let Json::Arr(tools) = value else {
        return err("tools".into(), "Input should be a valid list");
    };
    for (i, tool) in tools.iter().enumerate() {
        let loc = |field: &str| format!("tools[{i}].{field}");
        if !matches!(tool, Json::Obj(_)) {
            err(format!("tools[{i}]"), "Input should be a valid dictionary");
            continue;
        }
        match tool.get("type").and_then(Json::as_str) {
            Some("function") => {
                if !matches!(tool.get("name"), Some(Json::Str(_))) {
                    err(loc("name"), "Field required (a string)");
                }
                match tool.get("parameters") {
                    Some(Json::Obj(_) | Json::Null) => {}
                    Some(_) => err(loc("parameters"), "Input should be a valid dictionary"),
                    None => err(loc("parameters"), "Field required"),
                }
                match tool.get("strict") {
                    Some(v) if is_lax_bool(v) || matches!(v, Json::Null) => {}
                    Some(_) => err(loc("strict"), "Input should be a valid boolean"),
                    None => err(loc("strict"), "Field required"),
                }
            }
            Some(t) if OTHER_TOOL_TYPES.contains(&t) => {}
            _ => err(
                loc("type"),
                "Input tag does not match any Responses tool type",
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pivot::tree::{parse, Interest};

    fn errors(params: &str) -> Vec<(String, String)> {
        let row = parse(params, &Interest::all()).unwrap();
        check(&row).into_iter().map(|e| (e.loc, e.msg)).collect()
    }

    #[test]
    fn a_good_row_passes() {
        let ok = r#"{"input":[{"role":"user","content":"hi"},{"type":"function_call","name":"f","arguments":"{}","call_id":"c"},{"type":"function_call_output","call_id":"c","output":"x"},{"id":"rs_1","type":"reasoning","summary":[{"type":"summary_text","text":"t"}]},{"id":"m","type":"message","role":"assistant","status":"completed","content":[{"type":"output_text","text":"a","annotations":[]}]}],"tools":[{"type":"function","name":"f","strict":true,"parameters":{"type":"object"}}],"tool_choice":"auto","parallel_tool_calls":false,"metadata":{"k":"v"},"temperature":"0.5","max_output_tokens":64}"#;
        assert_eq!(errors(ok), Vec::<(String, String)>::new());
    }

    #[test]
    fn each_rule_names_its_place() {
        let got = errors(
            r#"{"input":[{"type":"bogus"},{"role":"robot","content":"x"}],"tools":[{"type":"function","function":{"name":"f"}}],"stream":true,"metadata":{"k":1},"frobnicate":1,"max_output_tokens":1.5}"#,
        );
        let locs: Vec<&str> = got.iter().map(|(l, _)| l.as_str()).collect();
        assert_eq!(
            locs,
            [
                "input[0].type",
                "input[1].role",
                "tools[0].name",
                "tools[0].parameters",
                "tools[0].strict",
                "stream",
                "metadata.k",
                "frobnicate",
                "max_output_tokens"
            ]
        );
        assert_eq!(got[7].1, "Extra inputs are not permitted");
        assert_eq!(
            errors(r#"{"tools":[]}"#),
            [("input".to_string(), "Field required".to_string())]
        );
    }

    #[test]
    fn scalars_are_read_as_pydantic_coerces_them() {
        // pydantic-core's lax mode: 1.0 is a bool, a bool is an int and a float, 3.0 an int.
        let lax = r#"{"input":"q","store":1.0,"background":"no","parallel_tool_calls":0.0,"stream":0.0,"max_output_tokens":true,"max_tool_calls":3.0,"temperature":false,"top_p":"0.5"}"#;
        assert_eq!(errors(lax), Vec::<(String, String)>::new());
        let got = errors(
            r#"{"input":"q","store":2.0,"stream":1.0,"max_output_tokens":1e19,"max_tool_calls":1.5}"#,
        );
        let locs: Vec<&str> = got.iter().map(|(l, _)| l.as_str()).collect();
        assert_eq!(
            locs,
            ["store", "stream", "max_output_tokens", "max_tool_calls"]
        );
    }
}
