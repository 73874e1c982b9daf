//! What a name in an expression refers to in a rollout row (docs/query.md "gymscope query").

use crate::health::Flag;

#[derive(Clone, Debug, PartialEq)]
pub enum Field {
    /// `_ng_task_index`.
    Task,
    /// `_ng_rollout_index`.
    Rollout,
    /// `agent_ref.name`, from the rollout row or else its materialized input.
    Agent,
    Reward,
    /// The number of `function_call` items in `response.output`.
    ToolCalls,
    /// Any call's name.
    Tool,
    /// Upstream's verdict of the rollout (`rollout_verdicts.jsonl`).
    Verdict,
    /// A per-rollout health flag, by `gymscope health`'s rules.
    Health(Flag),
    TaskMeanReward,
    TaskPassRate,
    TaskGroup,
    /// `response.usage.…`.
    Usage(Vec<String>),
    /// A top-level field, and keys inside it (`a.b`: `row["a"]["b"]`).
    Path(Vec<String>),
    Scope(Scope),
}

/// Where a text match looks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    /// `output_text` parts of `message` items in `response.output`.
    Output,
    /// `summary[].text` of `reasoning` items.
    Reasoning,
    /// Each `function_call`'s `arguments`.
    Args,
    /// Each `function_call_output`'s `output`.
    ToolOutput,
    /// The text of `responses_create_params.input`.
    Prompt,
    /// Output, reasoning, args and tool output.
    Text,
}

impl Scope {
    pub fn includes(self, part: Scope) -> bool {
        self == part || (self == Scope::Text && part != Scope::Prompt)
    }
    pub fn as_str(self) -> &'static str {
        match self {
            Scope::Output => "output",
            Scope::Reasoning => "reasoning",
            Scope::Args => "args",
            Scope::ToolOutput => "tool_output",
            Scope::Prompt => "prompt",
            Scope::Text => "text",
        }
    }
}

/// The names with a meaning of their own, for messages and completion.
pub const BUILT_IN: [&str; 23] = [
    "task",
    "rollout",
    "agent",
    "reward",
    "tool_calls",
    "tool",
    "verdict",
    "health.truncated",
    "health.empty_answer",
    "health.ended_on_tool",
    "health.empty_output",
    "health.loop",
    "health.tool_error",
    "health.malformed_arguments",
    "health.dangling_call",
    "task.mean_reward",
    "task.pass_rate",
    "task.group",
    "output",
    "reasoning",
    "args",
    "tool_output",
    "prompt",
];

impl Field {
    /// What `name` refers to; a backticked name is always a top-level field.
    pub(super) fn parse(name: &str, quoted: bool) -> Result<Field, String> {
        if quoted {
            return Ok(Field::Path(vec![name.to_string()]));
        }
        let field = match name {
            "task" => Field::Task,
            "rollout" => Field::Rollout,
            "agent" => Field::Agent,
            "reward" => Field::Reward,
            "tool_calls" => Field::ToolCalls,
            "tool" => Field::Tool,
            "verdict" => Field::Verdict,
            "task.mean_reward" => Field::TaskMeanReward,
            "task.pass_rate" => Field::TaskPassRate,
            "task.group" => Field::TaskGroup,
            "output" => Field::Scope(Scope::Output),
            "reasoning" => Field::Scope(Scope::Reasoning),
            "args" => Field::Scope(Scope::Args),
            "tool_output" => Field::Scope(Scope::ToolOutput),
            "prompt" => Field::Scope(Scope::Prompt),
            "text" => Field::Scope(Scope::Text),
            _ => {
                if let Some(flag) = name.strip_prefix("health.") {
                    return Flag::ALL
                        .into_iter()
                        .find(|f| f.as_str() == flag)
                        .map(Field::Health)
                        .ok_or_else(|| {
                            let names: Vec<&str> = Flag::ALL.iter().map(|f| f.as_str()).collect();
                            format!("`{name}`: health flags are {}", names.join(", "))
                        });
                }
                if name.starts_with("task.") {
                    return Err(format!(
                        "`{name}`: task aggregates are task.mean_reward, task.pass_rate, task.group"
                    ));
                }
                let parts: Vec<String> = name.split('.').map(str::to_string).collect();
                match name.strip_prefix("usage.") {
                    Some(_) => Field::Usage(parts[1..].to_vec()),
                    None => Field::Path(parts),
                }
            }
        };
        Ok(field)
    }

    pub fn is_scope(&self) -> bool {
        matches!(self, Field::Scope(_))
    }
}
