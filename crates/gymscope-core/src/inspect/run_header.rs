//! The run's header (docs/app.md, "the run header"): per agent, its model and sampling
//! parameters and its agent config, read from the first rows of the inputs
//! (`responses_create_params`, `agent_ref`) and of the rollouts (`response.model`) — what a
//! researcher asks first of a run, at the top of it. Text from the files, shown as text.

use serde_json::Value;

/// One agent's configuration as the header shows it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct AgentConfig {
    pub agent: String,
    /// `(name, value)`: the model first, then the sampling parameters, the tools, the
    /// agent_ref's other keys; values as people read them.
    pub params: Vec<(String, String)>,
}

/// Parameters left out: the prompt and what is too long for a header line.
const SKIPPED: [&str; 4] = ["input", "instructions", "metadata", "tools"];

fn shown(key: &str, v: &Value) -> Option<String> {
    match v {
        Value::Null => None,
        Value::String(s) => Some(s.clone()),
        Value::Number(_) | Value::Bool(_) => Some(super::numbers::for_people(key, &v.to_string())),
        Value::Object(o) if !o.is_empty() => Some(
            o.iter()
                .filter_map(|(k, v)| Some(format!("{k} {}", shown(k, v)?)))
                .collect::<Vec<_>>()
                .join(", "),
        ),
        _ => None,
    }
}

/// Every complete JSON line of `head` (a file's first bytes), parsed.
fn rows(head: &[u8]) -> impl Iterator<Item = Value> + '_ {
    let complete = head
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(&head[..0], |end| &head[..end]);
    complete
        .split(|&b| b == b'\n')
        .filter_map(|line| serde_json::from_slice(line).ok())
}

fn agent_of(row: &Value) -> String {
    row.pointer("/agent_ref/name")
        .and_then(Value::as_str)
        .unwrap_or("(no agent_ref)")
        .to_string()
}

/// The agents' configs (parameters in the files' order) from the first bytes of the inputs and rollouts files, in the order the
/// agents first appear; the first row of each agent speaks for it.
pub fn from_heads(inputs: &[u8], rollouts: &[u8]) -> Vec<AgentConfig> {
    let mut models: Vec<(String, String)> = Vec::new();
    for row in rows(rollouts) {
        let agent = agent_of(&row);
        if let Some(m) = row.pointer("/response/model").and_then(Value::as_str) {
            if !models.iter().any(|(a, _)| *a == agent) {
                models.push((agent, m.to_string()));
            }
        }
    }
    let mut out: Vec<AgentConfig> = Vec::new();
    for row in rows(inputs) {
        let agent = agent_of(&row);
        if out.iter().any(|c| c.agent == agent) {
            continue;
        }
        let mut params = Vec::new();
        let rcp = row.get("responses_create_params");
        let model = rcp
            .and_then(|p| p.get("model"))
            .and_then(Value::as_str)
            .map(str::to_string)
            .or_else(|| {
                models
                    .iter()
                    .find(|(a, _)| *a == agent)
                    .map(|(_, m)| m.clone())
            });
        if let Some(m) = model {
            params.push(("model".to_string(), m));
        }
        if let Some(Value::Object(p)) = rcp {
            for (k, v) in p {
                if k == "model" || SKIPPED.contains(&k.as_str()) {
                    continue;
                }
                if let Some(text) = shown(k, v) {
                    params.push((k.clone(), text));
                }
            }
            if let Some(Value::Array(tools)) = p
                .get("tools")
                .filter(|t| t.as_array().is_some_and(|t| !t.is_empty()))
            {
                let names: Vec<&str> = tools
                    .iter()
                    .filter_map(|t| t.get("name").and_then(Value::as_str))
                    .collect();
                params.push(("tools".to_string(), names.join(", ")));
            }
        }
        if let Some(Value::Object(r)) = row.get("agent_ref") {
            for (k, v) in r.iter().filter(|(k, _)| *k != "name") {
                if let Some(text) = shown(k, v) {
                    params.push((format!("agent_ref.{k}"), text));
                }
            }
        }
        out.push(AgentConfig { agent, params });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_agent_s_first_row_speaks_for_it() {
        let inputs = br#"{"responses_create_params":{"input":[],"temperature":1.0,"max_output_tokens":16384,"top_p":null,"tools":[{"name":"python"},{"name":"search"}]},"agent_ref":{"type":"responses_api_agents","name":"a"}}
{"responses_create_params":{"input":[],"temperature":0.5},"agent_ref":{"name":"a"}}
{"responses_create_params":{"model":"m2","reasoning":{"effort":"high"}},"agent_ref":{"name":"b"}}
{"responses_create_params":{"cut off"#;
        let rollouts = br#"{"agent_ref":{"name":"a"},"response":{"model":"nvidia/nano"}}
"#;
        let got = from_heads(inputs, rollouts);
        assert_eq!(got.len(), 2);
        assert_eq!(
            got[0].params,
            [
                ("model", "nvidia/nano"),
                ("temperature", "1"),
                ("max_output_tokens", "16,384"),
                ("tools", "python, search"),
                ("agent_ref.type", "responses_api_agents"),
            ]
            .map(|(k, v)| (k.to_string(), v.to_string()))
        );
        assert_eq!(got[1].params[0], ("model".into(), "m2".into()));
        assert_eq!(got[1].params[1], ("reasoning".into(), "effort high".into()));
    }
}
