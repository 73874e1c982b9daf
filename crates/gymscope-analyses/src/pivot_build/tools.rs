//! Tool normalization for every format (docs/pivots.md "Pivot datasets"): chat-completions tools become
//! Responses function tools; nulls Gym's tool model would reject are dropped; a missing schema
//! is filled.

use serde_json::{Map, Value};

/// Normalizes a tool list; returns the tools and how many had their `parameters` filled.
pub fn normalize(tools: Vec<Value>) -> (Vec<Value>, u64) {
    let mut filled = 0;
    let tools = tools
        .into_iter()
        .map(|t| {
            let (tool, was_filled) = normalize_one(t);
            filled += u64::from(was_filled);
            tool
        })
        .collect();
    (tools, filled)
}

fn empty_schema() -> Value {
    serde_json::json!({"type": "object", "properties": {}})
}

fn normalize_one(tool: Value) -> (Value, bool) {
    let Value::Object(map) = &tool else {
        return (tool, false);
    };
    if map.get("type").and_then(Value::as_str) != Some("function") {
        return (tool, false); // web search, MCP, …: passed through
    }
    // Already clean (the common case): kept as it is, without a copy.
    let clean = map.contains_key("parameters")
        && map.contains_key("strict")
        && !map.get("parameters").is_some_and(Value::is_null)
        && map.iter().all(|(k, v)| !v.is_null() || k == "strict")
        && !map.contains_key("function");
    if clean {
        return (tool, false);
    }
    if let Some(Value::Object(function)) = map.get("function") {
        // Chat form → Responses form: type, name, description (when not null), parameters,
        // strict.
        let mut out = Map::new();
        out.insert("type".into(), "function".into());
        out.insert(
            "name".into(),
            function.get("name").cloned().unwrap_or(Value::Null),
        );
        if let Some(d) = function.get("description").filter(|d| !d.is_null()) {
            out.insert("description".into(), d.clone());
        }
        let (parameters, filled) = match function.get("parameters") {
            Some(p) if !p.is_null() => (p.clone(), false),
            _ => (empty_schema(), true),
        };
        out.insert("parameters".into(), parameters);
        let strict = function
            .get("strict")
            .and_then(Value::as_bool)
            .or_else(|| map.get("strict").and_then(Value::as_bool))
            .unwrap_or(true);
        out.insert("strict".into(), strict.into());
        return (Value::Object(out), filled);
    }
    let mut out = Map::with_capacity(map.len() + 1);
    let mut filled = false;
    for (k, v) in map {
        match (k.as_str(), v) {
            ("parameters", Value::Null) => {
                out.insert(k.clone(), empty_schema());
                filled = true;
            }
            ("strict", _) => {
                out.insert(k.clone(), v.clone()); // required by Gym's tool model, null allowed
            }
            (_, Value::Null) => {}
            _ => {
                out.insert(k.clone(), v.clone());
            }
        }
    }
    if !out.contains_key("parameters") {
        out.insert("parameters".into(), empty_schema());
        filled = true;
    }
    if !out.contains_key("strict") {
        out.insert("strict".into(), Value::Bool(true));
    }
    (Value::Object(out), filled)
}

/// The names the tool-name check accepts: non-empty string `name`s of the normalized tools.
pub fn names(tools: &[Value]) -> Vec<&str> {
    tools
        .iter()
        .filter_map(|t| t.get("name").and_then(Value::as_str))
        .filter(|n| !n.is_empty())
        .collect()
}

/// Appends the `--tools FILE` tools whose name is not present yet.
pub fn extend_with(tools: &mut Vec<Value>, extra: &[Value]) {
    for t in extra {
        let name = t.get("name").and_then(Value::as_str);
        let present = name.is_some_and(|n| names(tools).contains(&n));
        if !present {
            tools.push(t.clone());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn chat_form_becomes_responses_form() {
        let chat = json!({"type": "function", "function": {"name": "f", "description": "d",
            "parameters": {"type": "object"}, "strict": false}});
        let (tools, filled) = normalize(vec![chat]);
        assert_eq!(filled, 0);
        assert_eq!(
            serde_json::to_string(&tools[0]).unwrap(),
            r#"{"type":"function","name":"f","description":"d","parameters":{"type":"object"},"strict":false}"#
        );
        let bare =
            json!({"type": "function", "name": "g", "description": null, "parameters": null});
        let (tools, filled) = normalize(vec![bare]);
        assert_eq!(filled, 1);
        assert_eq!(
            tools[0],
            json!({"type": "function", "name": "g",
            "parameters": {"type": "object", "properties": {}}, "strict": true})
        );
        let web = json!({"type": "web_search"});
        assert_eq!(normalize(vec![web.clone()]).0, vec![web]);
    }
}
