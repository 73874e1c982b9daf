//! Generic candidate groups (as upstream's
//! `.agents/skills/nemo-gym-pivot-datasets/scripts/reference/generic_pivot_dataset_reference.py`
//! @07d6b0d reads them): each line is a JSON array of already-extracted
//! candidates `{problem, expected_action, tools, rewards, reward_mean, reward_std, reward_var}`;
//! `problem` is the chat prefix and `expected_action` the chat assistant message to imitate.

use super::chat::{self, Msg};
use super::skips::Reason;
use super::turns::Trajectory;
use serde_json::{Map, Value};

/// One candidate: its trajectory (the target is the only decision point) and the source model's
/// sampled rewards at this pivot (`source_model_info`).
pub struct Candidate {
    pub trajectory: Trajectory,
    pub source_model_info: Value,
}

pub fn candidates(
    line: &Value,
    trajectory_id: u64,
    nameless: &mut u64,
) -> Result<Vec<Candidate>, (Reason, String)> {
    let invalid = |s: String| (Reason::InvalidSourceRow, s);
    let elements = line
        .as_array()
        .ok_or_else(|| invalid("the line is not a JSON array of candidates".into()))?;
    let mut out = Vec::with_capacity(elements.len());
    for (i, c) in elements.iter().enumerate() {
        let problem = c.get("problem").and_then(Value::as_array).ok_or_else(|| {
            invalid(format!(
                "candidate {i}: field `problem` is missing or not a list"
            ))
        })?;
        let target = c
            .get("expected_action")
            .filter(|t| t.is_object())
            .ok_or_else(|| {
                invalid(format!(
                    "candidate {i}: field `expected_action` is missing or not an object"
                ))
            })?;
        let mut msgs: Vec<Msg> = problem.iter().map(chat::parse_message).collect();
        let given = msgs.iter().filter(|m| m.role == "assistant").count();
        let mut target = chat::parse_message(target);
        target.role = "assistant".into();
        msgs.push(target);
        let mut t = chat::to_trajectory(&msgs, trajectory_id, given, 0, nameless)?;
        t.tools = c
            .get("tools")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        let mut info = Map::new();
        for k in ["rewards", "reward_mean", "reward_std", "reward_var"] {
            info.insert(k.into(), c.get(k).cloned().unwrap_or(Value::Null));
        }
        out.push(Candidate {
            trajectory: t,
            source_model_info: Value::Object(info),
        });
    }
    Ok(out)
}
