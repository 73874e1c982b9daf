//! The pivot resource server's action comparison (`single_step_tool_use_with_argument_comparison`:
//! `response_utils.extract_action` and `ActionComparator`), so a dataset can be scored before
//! any server runs: `build-pivot` feeds every row its own demonstration (the self-check) and the
//! test stand-in agent scores its answers with it. Semantics of upstream
//! `resources_servers/single_step_tool_use_with_argument_comparison/` @07d6b0d (`app.py`,
//! `common/response_utils.py`, `common/verification_utils.py`).

use serde_json::Value;

mod arguments;
pub use arguments::compare_call;

/// `StepRewardCategory`: why a response got its reward (upstream's text).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Category {
    NoActionFound,
    NoExpectedToolCall,
    ExpectedChatMessageFound,
    NoExpectedChatMessage,
    UnexpectedTool,
    ArgumentsDecodeError,
    ArgumentValueTypeDifferent,
    ArgumentObjectKeysDifferent,
    ArgumentListLengthDifferent,
    ArgumentValueDifferent,
    ExpectedToolCall,
    FunctionCallBatchLengthDifferent,
    ExpectedToolCallBatch,
}

impl Category {
    pub fn text(self) -> &'static str {
        use Category::{
            ArgumentListLengthDifferent, ArgumentObjectKeysDifferent, ArgumentValueDifferent,
            ArgumentValueTypeDifferent, ArgumentsDecodeError, ExpectedChatMessageFound,
            ExpectedToolCall, ExpectedToolCallBatch, FunctionCallBatchLengthDifferent,
            NoActionFound, NoExpectedChatMessage, NoExpectedToolCall, UnexpectedTool,
        };
        match self {
            NoActionFound => "No tool call or chat message was found in the response",
            NoExpectedToolCall => "No tool call was found when one was expected",
            ExpectedChatMessageFound => "A chat message was found as expected",
            NoExpectedChatMessage => "A tool call was executed when a chat message was expected",
            UnexpectedTool => "The tool in a tool call is not the expected tool",
            ArgumentsDecodeError => "An error occurred when decoding the arguments string in a tool call as a JSON object",
            ArgumentValueTypeDifferent => "The type of an argument value in a tool call is different than the expected type",
            ArgumentObjectKeysDifferent => "The keys in an object in an argument value in a tool call are different than the keys in the expected object",
            ArgumentListLengthDifferent => "A list in an argument value in a tool call has a different length than the expected list",
            ArgumentValueDifferent => "An argument value in a tool call is different than the expected value",
            ExpectedToolCall => "A tool call that matches the expected tool call was found",
            FunctionCallBatchLengthDifferent => "The number of tool calls in a batch is different than expected",
            ExpectedToolCallBatch => "A tool-call batch that matches the expected tool calls was found",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RewardMode {
    BinaryStrict,
    Fractional,
    F1,
}

impl RewardMode {
    pub fn as_str(self) -> &'static str {
        match self {
            RewardMode::BinaryStrict => "binary_strict",
            RewardMode::Fractional => "fractional",
            RewardMode::F1 => "f1",
        }
    }
}

/// `ToolCallComparatorConfig`, with upstream's defaults.
#[derive(Clone, Debug, PartialEq)]
pub struct ComparatorConfig {
    pub word_count_similarity_threshold: f64,
    pub floating_point_comparison_threshold: f64,
    pub parallel_tool_call_rewarding: bool,
    pub allow_subset: bool,
    pub allow_superset: bool,
    pub parallel_tool_call_reward_mode: RewardMode,
}

impl ComparatorConfig {
    pub fn new(word_count_similarity_threshold: f64) -> Self {
        ComparatorConfig {
            word_count_similarity_threshold,
            floating_point_comparison_threshold: 1e-6,
            parallel_tool_call_rewarding: false,
            allow_subset: false,
            allow_superset: false,
            parallel_tool_call_reward_mode: RewardMode::BinaryStrict,
        }
    }
}

/// One call: name and arguments string, as in `FunctionCallAction`.
#[derive(Clone, Debug, PartialEq)]
pub struct Call {
    pub name: String,
    pub arguments: String,
}

/// `ExpectedAction`: what a row expects or what a response did.
#[derive(Clone, Debug, PartialEq)]
pub enum Action {
    Message(String),
    Calls(Vec<Call>),
}

impl Action {
    /// Reads a row's `expected_action` (`message`, `function_call` or `function_call_batch`).
    pub fn from_expected(value: &Value) -> Option<Action> {
        let call = |v: &Value| -> Option<Call> {
            Some(Call {
                name: v.get("name")?.as_str()?.to_string(),
                arguments: v.get("arguments")?.as_str()?.to_string(),
            })
        };
        match value.get("type")?.as_str()? {
            "message" => Some(Action::Message(value.get("content")?.as_str()?.to_string())),
            "function_call" => Some(Action::Calls(vec![call(value)?])),
            "function_call_batch" => {
                let calls = value.get("calls")?.as_array()?;
                let calls: Option<Vec<Call>> = calls.iter().map(call).collect();
                calls.filter(|c| !c.is_empty()).map(Action::Calls)
            }
            _ => None,
        }
    }

    /// `extract_action`: function calls win over text; the first `output_text` of the first
    /// assistant message that has one otherwise; `None` when there is neither.
    pub fn from_output(output: &[Value]) -> Option<Action> {
        let mut calls = Vec::new();
        let mut text: Option<String> = None;
        for item in output {
            match item.get("type").and_then(Value::as_str) {
                Some("function_call") => calls.push(Call {
                    name: str_of(item, "name").to_string(),
                    arguments: str_of(item, "arguments").to_string(),
                }),
                Some("message") if text.is_none() && str_of(item, "role") == "assistant" => {
                    text = item
                        .get("content")
                        .and_then(Value::as_array)
                        .into_iter()
                        .flatten()
                        .find(|p| str_of(p, "type") == "output_text")
                        .map(|p| str_of(p, "text").to_string());
                }
                _ => {}
            }
        }
        if calls.is_empty() {
            text.map(Action::Message)
        } else {
            Some(Action::Calls(calls))
        }
    }

    /// The response output a model would return for this action (the demonstration).
    pub fn to_output(&self) -> Vec<Value> {
        match self {
            Action::Message(text) => vec![serde_json::json!({
                "id": "msg_demo", "type": "message", "role": "assistant", "status": "completed",
                "content": [{"type": "output_text", "text": text, "annotations": []}]})],
            Action::Calls(calls) => calls
                .iter()
                .enumerate()
                .map(|(i, c)| {
                    serde_json::json!({"type": "function_call", "name": c.name,
                        "arguments": c.arguments, "call_id": format!("call_demo_{i}"), "status": "completed"})
                })
                .collect(),
        }
    }
}

fn str_of<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or("")
}

/// Scores an action against the expected one: `ActionComparator.compare_action`, and
/// `verify`'s 0.0 / `NO_ACTION_FOUND` when the response had no action.
pub fn compare(
    config: &ComparatorConfig,
    expected: &Action,
    actual: Option<&Action>,
) -> (f64, Category) {
    let Some(actual) = actual else {
        return (0.0, Category::NoActionFound);
    };
    match (expected, actual) {
        (Action::Message(_), Action::Message(_)) => (1.0, Category::ExpectedChatMessageFound),
        (Action::Message(_), Action::Calls(_)) => (0.0, Category::NoExpectedChatMessage),
        (Action::Calls(_), Action::Message(_)) => (0.0, Category::NoExpectedToolCall),
        (Action::Calls(e), Action::Calls(a)) => compare_calls(config, e, a),
    }
}

fn compare_calls(config: &ComparatorConfig, expected: &[Call], actual: &[Call]) -> (f64, Category) {
    let (e, a) = (expected.len(), actual.len());
    if e == 1 && a == 1 {
        return compare_call(config, &expected[0], &actual[0]);
    }
    let admissible = a == e
        || !config.parallel_tool_call_rewarding
        || if a < e {
            config.allow_subset
        } else {
            config.allow_superset
        };
    if !admissible {
        return (0.0, Category::FunctionCallBatchLengthDifferent);
    }
    let mut candidates = Vec::with_capacity(e);
    let mut failures = Vec::with_capacity(e);
    for exp in expected {
        let mut matching = Vec::new();
        let mut failure = Category::UnexpectedTool;
        for (i, act) in actual.iter().enumerate() {
            let (reward, category) = compare_call(config, exp, act);
            if reward == 1.0 {
                matching.push(i);
            } else if failure == Category::UnexpectedTool {
                failure = category;
            }
        }
        candidates.push(matching);
        failures.push(failure);
    }
    let matching = maximum_matching(&candidates);
    let matched = matching.len();
    let reward = if config.parallel_tool_call_rewarding {
        let required = if config.allow_subset { e.min(a) } else { e };
        match config.parallel_tool_call_reward_mode {
            RewardMode::F1 if e + a > 0 => 2.0 * matched as f64 / (e + a) as f64,
            RewardMode::F1 => 0.0,
            RewardMode::Fractional if required > 0 => matched as f64 / required as f64,
            RewardMode::Fractional => 0.0,
            RewardMode::BinaryStrict => f64::from(u8::from(matched == required)),
        }
    } else if matched == e {
        1.0
    } else {
        0.0
    };
    if reward == 1.0 {
        let category = if e == 1 {
            Category::ExpectedToolCall
        } else {
            Category::ExpectedToolCallBatch
        };
        return (reward, category);
    }
    let matched_expected: Vec<usize> = matching.iter().map(|&(_, exp)| exp).collect();
    let unmatched = (0..e).find(|i| !matched_expected.contains(i));
    let category = match unmatched {
        Some(first) if matched != a => failures[first],
        _ => Category::FunctionCallBatchLengthDifferent,
    };
    (reward, category)
}

/// Kuhn's augmenting paths, most constrained expected call first (upstream's order), as
/// `(actual, expected)` pairs.
fn maximum_matching(candidates: &[Vec<usize>]) -> Vec<(usize, usize)> {
    fn augment(
        exp: usize,
        candidates: &[Vec<usize>],
        owner: &mut Vec<Option<usize>>,
        seen: &mut Vec<bool>,
    ) -> bool {
        for &act in &candidates[exp] {
            if seen[act] {
                continue;
            }
            seen[act] = true;
            let free = match owner[act] {
                None => true,
                Some(other) => augment(other, candidates, owner, seen),
            };
            if free {
                owner[act] = Some(exp);
                return true;
            }
        }
        false
    }
    let actual_len = candidates.iter().flatten().max().map_or(0, |m| m + 1);
    let mut owner = vec![None; actual_len];
    let mut order: Vec<usize> = (0..candidates.len()).collect();
    order.sort_by_key(|&i| candidates[i].len());
    for exp in order {
        let mut seen = vec![false; actual_len];
        augment(exp, candidates, &mut owner, &mut seen);
    }
    owner
        .iter()
        .enumerate()
        .filter_map(|(act, exp)| exp.map(|e| (act, e)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn call(name: &str, args: &str) -> Call {
        Call {
            name: name.into(),
            arguments: args.into(),
        }
    }

    fn score(thr: f64, exp: &str, act: &str) -> (f64, Category) {
        compare_call(
            &ComparatorConfig::new(thr),
            &call("f", exp),
            &call("f", act),
        )
    }

    #[test]
    fn argument_rules_follow_upstream() {
        use Category::*;
        assert_eq!(score(0.1, r#"{"a":1}"#, r#"{"a":1}"#).1, ExpectedToolCall);
        assert_eq!(
            score(0.1, r#"{"a":1}"#, r#"{"a":1.0}"#).1,
            ArgumentValueTypeDifferent
        );
        assert_eq!(
            score(0.1, r#"{"a":1.0}"#, r#"{"a":1}"#).1,
            ArgumentValueTypeDifferent
        );
        assert_eq!(
            score(0.1, r#"{"a":1}"#, r#"{"a":true}"#).1,
            ExpectedToolCall
        );
        assert_eq!(
            score(0.1, r#"{"a":true}"#, r#"{"a":1}"#).1,
            ArgumentValueTypeDifferent
        );
        assert_eq!(
            score(0.1, r#"{"a":1.0}"#, r#"{"a":1.0000001}"#).1,
            ExpectedToolCall
        );
        assert_eq!(
            score(0.1, r#"{"a":1.0}"#, r#"{"a":1.00001}"#).1,
            ArgumentValueDifferent
        );
        assert_eq!(
            score(0.1, r#"{"a":1}"#, r#"{"a":1,"b":2}"#).1,
            ArgumentObjectKeysDifferent
        );
        assert_eq!(score(0.1, r"[1,2]", r"[1]").1, ArgumentListLengthDifferent);
        assert_eq!(score(0.1, r#"{"a":1}"#, "{oops").1, ArgumentsDecodeError);
        assert_eq!(
            score(0.1, r#""Paris""#, r#""paris""#).1,
            ArgumentValueDifferent
        );
        assert_eq!(
            score(0.1, r#""New York""#, r#""new york""#).1,
            ExpectedToolCall
        );
        assert_eq!(
            score(0.3, r#""a b c d""#, r#""a b x y""#).1,
            ArgumentValueDifferent
        );
        assert_eq!(
            score(0.25, r#""a b c d""#, r#""a b x y""#).1,
            ExpectedToolCall
        );
        // Identical multi-word strings score exactly 0.5: a threshold above that rejects them.
        assert_eq!(score(0.5, r#""a b""#, r#""a b""#).1, ExpectedToolCall);
        assert_eq!(
            score(0.51, r#""a b""#, r#""a b""#).1,
            ArgumentValueDifferent
        );
        assert_eq!(score(0.1, "42", "42").1, ExpectedToolCall);
        assert_eq!(score(0.1, "null", "null").1, ExpectedToolCall);
    }

    #[test]
    fn actions_and_batches() {
        let cfg = ComparatorConfig::new(0.1);
        let out = [
            json!({"type": "reasoning"}),
            json!({"type": "message", "role": "assistant",
            "content": [{"type": "output_text", "text": "hi"}]}),
        ];
        let msg = Action::from_output(&out);
        assert_eq!(msg, Some(Action::Message("hi".into())));
        let expect_msg = Action::Message("anything".into());
        assert_eq!(
            compare(&cfg, &expect_msg, msg.as_ref()),
            (1.0, Category::ExpectedChatMessageFound)
        );
        assert_eq!(
            compare(&cfg, &expect_msg, None),
            (0.0, Category::NoActionFound)
        );
        assert_eq!(Action::from_output(&[json!({"type": "reasoning"})]), None);

        let exp = Action::Calls(vec![call("f", "{}")]);
        // Default config: extra calls are free.
        let two = Action::Calls(vec![call("g", "{}"), call("f", "{}")]);
        assert_eq!(
            compare(&cfg, &exp, Some(&two)),
            (1.0, Category::ExpectedToolCall)
        );
        let mut strict = cfg.clone();
        strict.parallel_tool_call_rewarding = true;
        assert_eq!(
            compare(&strict, &exp, Some(&two)).1,
            Category::FunctionCallBatchLengthDifferent
        );
        strict.allow_superset = true;
        strict.parallel_tool_call_reward_mode = RewardMode::F1;
        let (r, _) = compare(&strict, &exp, Some(&two));
        assert!((r - 2.0 / 3.0).abs() < 1e-12);
        // Matching needs augmenting paths: greedy would strand the second expected call.
        let batch = Action::Calls(vec![call("f", r#""a b""#), call("f", r#""a b c""#)]);
        let act = Action::Calls(vec![call("f", r#""a b c""#), call("f", r#""a b""#)]);
        assert_eq!(
            compare(&cfg, &batch, Some(&act)),
            (1.0, Category::ExpectedToolCallBatch)
        );
        let demo = Action::from_output(&batch.to_output());
        assert_eq!(demo.as_ref(), Some(&batch));
    }
}
