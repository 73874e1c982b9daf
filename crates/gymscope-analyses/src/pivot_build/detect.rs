//! Which layout a source file has, from its first non-blank line (docs/pivots.md "Pivot datasets":
//! `--source-format`), tried in this order.

use serde_json::Value;

#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SourceFormat {
    /// tau2 rollouts: `result.messages` plus `responses_create_params`.
    Conversational,
    /// NeMo Gym rollouts: `responses_create_params` plus `response.output`.
    Responses,
    /// Chat-completions trajectories: `messages`.
    Chat,
    /// A JSON array of candidates with `problem` and `expected_action`.
    Generic,
}

impl SourceFormat {
    pub fn as_str(self) -> &'static str {
        match self {
            SourceFormat::Conversational => "conversational",
            SourceFormat::Responses => "responses",
            SourceFormat::Chat => "chat",
            SourceFormat::Generic => "generic",
        }
    }

    pub fn parse(name: &str) -> Option<SourceFormat> {
        [
            Self::Conversational,
            Self::Responses,
            Self::Chat,
            Self::Generic,
        ]
        .into_iter()
        .find(|f| f.as_str() == name)
    }

    /// Where the reward of a source row is by default.
    pub fn default_reward_field(self) -> Option<&'static str> {
        match self {
            SourceFormat::Chat => Some("metadata.reward"),
            SourceFormat::Generic => None,
            _ => Some("reward"),
        }
    }
}

/// Detects the layout of one parsed line; `None` when it fits none.
pub fn detect(row: &Value) -> Option<SourceFormat> {
    if let Value::Array(elements) = row {
        let candidate =
            |e: &Value| e.get("problem").is_some() && e.get("expected_action").is_some();
        return (!elements.is_empty() && elements.iter().all(candidate))
            .then_some(SourceFormat::Generic);
    }
    let has_params = row
        .get("responses_create_params")
        .is_some_and(Value::is_object);
    let result_messages = row
        .get("result")
        .and_then(|r| r.get("messages"))
        .is_some_and(Value::is_array);
    if has_params && result_messages {
        return Some(SourceFormat::Conversational);
    }
    let output = row
        .get("response")
        .and_then(|r| r.get("output"))
        .is_some_and(Value::is_array);
    if has_params && output {
        return Some(SourceFormat::Responses);
    }
    row.get("messages")
        .is_some_and(Value::is_array)
        .then_some(SourceFormat::Chat)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn detection_order() {
        let tau2 = json!({"responses_create_params": {}, "response": {"output": []}, "result": {"messages": []}});
        assert_eq!(detect(&tau2), Some(SourceFormat::Conversational));
        let gym = json!({"responses_create_params": {}, "response": {"output": []}});
        assert_eq!(detect(&gym), Some(SourceFormat::Responses));
        assert_eq!(detect(&json!({"messages": []})), Some(SourceFormat::Chat));
        assert_eq!(
            detect(&json!([{"problem": [], "expected_action": {}}])),
            Some(SourceFormat::Generic)
        );
        assert_eq!(detect(&json!({"x": 1})), None);
        assert_eq!(detect(&json!([1])), None);
    }
}
