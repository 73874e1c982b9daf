//! Rollout health: what went wrong in a run, from what every Gym rollout already carries (docs/health.md
//! "Rollout health"). Target-independent: the CLI (`gymscope health`, the report's
//! Health section) and the app feed the same [`HealthBuilder`].
//!
//! - `row`: one rollout row read once, borrowed, as deep as the signals look; `fast` reads it by
//!   skimming (serde's `row` for what it leaves), `fast_values` the values the signals parse;
//! - `mode`: single-step runs (pivot rows, one-call agents) and how their one action is judged;
//! - `signals`: the per-rollout [`Signals`] (truncation, final answer, tools, loops, turns, tokens);
//! - `builder`: [`HealthBuilder`], the streaming accumulator (rollouts, materialized inputs,
//!   failures file), fed chunks or lines — alone, or beside a `ProfileBuilder` in the same read;
//! - `summary`: [`HealthReport`] (per-agent rates with their thresholds, outcome buckets, the
//!   cross-tab, consistently unhealthy tasks, worst rollouts), serialized as the JSON output;
//! - `upstream`: NeMo Gym's own verdict files (`quality_summary.json`, `rollout_verdicts.jsonl`);
//! - `checks`: upstream's check catalog and verdict rules, writing those two files;
//! - `text`: the terminal report.

mod aggregate;
mod builder;
pub mod checks;
mod fast;
#[cfg(test)]
mod fast_tests;
mod fast_values;
mod job;
pub mod mode;
mod row;
mod rules;
mod signals;
mod summary;
mod text;
pub mod upstream;

pub use builder::{
    read_failure, read_input, read_input_beside, read_rollout, read_rollout_batch,
    read_rollout_beside, row_signals, HealthBuilder, HealthError, InputRead, RolloutRead,
};
pub use job::RolloutLines;
pub use signals::{canonical_arguments, is_error_output, Mark, Signals, Tokens};
pub use summary::{
    agent_label, AgentHealth, Buckets, Dist, HealthReport, Level, Rate, RolloutCounts,
    TaskOutcomes, TokenUse, TrajectoryEvidence, UnhealthyTask, WorstRollout,
};
pub use text::{behaviour_line, mode_line, text};

/// A per-rollout flag.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
pub enum Flag {
    Truncated,
    EmptyAnswer,
    EndedOnTool,
    EmptyOutput,
    Loop,
    ToolError,
    MalformedArguments,
    DanglingCall,
}

impl Flag {
    pub const ALL: [Flag; 8] = [
        Flag::Truncated,
        Flag::EmptyAnswer,
        Flag::EndedOnTool,
        Flag::EmptyOutput,
        Flag::Loop,
        Flag::ToolError,
        Flag::MalformedArguments,
        Flag::DanglingCall,
    ];
    pub fn bit(self) -> u16 {
        1 << (self as u16)
    }
    /// The name in JSON and text output.
    pub fn as_str(self) -> &'static str {
        match self {
            Flag::Truncated => "truncated",
            Flag::EmptyAnswer => "empty_answer",
            Flag::EndedOnTool => "ended_on_tool",
            Flag::EmptyOutput => "empty_output",
            Flag::Loop => "loop",
            Flag::ToolError => "tool_error",
            Flag::MalformedArguments => "malformed_arguments",
            Flag::DanglingCall => "dangling_call",
        }
    }
    /// How much the flag says about a rollout going wrong, to rank the worst rollouts.
    fn weight(self) -> u32 {
        match self {
            Flag::Truncated => 4,
            Flag::EmptyAnswer | Flag::Loop => 3,
            Flag::EndedOnTool | Flag::MalformedArguments => 2,
            Flag::EmptyOutput | Flag::ToolError | Flag::DanglingCall => 1,
        }
    }
}

/// A rate's thresholds, shown beside it: `warn` when the rate is above `warn`, `bad` when above
/// `bad` (or equal to it when `bad_inclusive`). Defaults as docs/health.md "Rollout health",
/// "Thresholds" gives them, to be tuned on real runs.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct Threshold {
    pub rate: &'static str,
    /// What the rate is a share of: `rollouts`, `tool_calls` or `attempts`.
    pub of: &'static str,
    pub warn: f64,
    pub bad: f64,
    #[serde(skip)]
    pub bad_inclusive: bool,
}

const fn share(rate: &'static str, of: &'static str, warn: f64, bad: f64) -> Threshold {
    Threshold {
        rate,
        of,
        warn,
        bad,
        bad_inclusive: false,
    }
}

/// Each rate's one name, as the app, the report and the CLI's text say it (docs/app.md, "One
/// name per rate"); the JSON keeps the ids (`tool_error_calls`) as its keys.
pub fn rate_name(rate: &str) -> &str {
    match rate {
        "truncated" => "truncated",
        "empty_answer" => "no final answer",
        "ended_on_tool" => "ended on a tool",
        "loops" => "loops",
        "tool_error_calls" => "tool errors",
        "malformed_arguments" => "malformed arguments",
        "usage_missing" => "usage missing",
        "failures" => "failed rollouts",
        other => other,
    }
}

/// What a rate is a share of, in words: `rollouts`, `tool calls`, `attempts`.
pub fn unit_name(of: &str) -> String {
    of.replace('_', " ")
}

/// Truncated replies: a few hit the output budget on hard tasks; one in ten means the budget
/// (or the context) is too small for the task.
pub const TRUNCATED: Threshold = share("truncated", "rollouts", 0.02, 0.10);
/// No final answer: the verifier has nothing to grade, so every one is a lost sample.
pub const EMPTY_ANSWER: Threshold = share("empty_answer", "rollouts", 0.01, 0.05);
/// Ended on a tool call or output: the step budget ran out before the agent answered.
pub const ENDED_ON_TOOL: Threshold = share("ended_on_tool", "rollouts", 0.02, 0.10);
/// The same call with the same arguments again and again: the agent is not reading its results.
pub const LOOPS: Threshold = share("loops", "rollouts", 0.02, 0.10);
/// Tool answers that are errors: some exploration fails normally; one in five means the tools
/// or their use are broken.
pub const TOOL_ERROR_CALLS: Threshold = share("tool_error_calls", "tool_calls", 0.05, 0.20);
/// Arguments that are not JSON: the model does not follow the tool format (or the parser breaks).
pub const MALFORMED_ARGUMENTS: Threshold = share("malformed_arguments", "tool_calls", 0.01, 0.05);
/// Usage missing: token figures are partial when any is missing, absent when all are.
pub const USAGE_MISSING: Threshold = Threshold {
    rate: "usage_missing",
    of: "rollouts",
    warn: 0.0,
    bad: 1.0,
    bad_inclusive: true,
};
/// Rollouts in the failures file: any is worth a look; above one in twenty the run's numbers
/// are biased by what failed.
pub const FAILURES: Threshold = share("failures", "attempts", 0.0, 0.05);

/// Every threshold, in the order rates are shown.
pub const THRESHOLDS: [Threshold; 8] = [
    TRUNCATED,
    EMPTY_ANSWER,
    ENDED_ON_TOOL,
    LOOPS,
    TOOL_ERROR_CALLS,
    MALFORMED_ARGUMENTS,
    USAGE_MISSING,
    FAILURES,
];

/// How many worst rollouts and consistently unhealthy tasks are listed (all are counted).
pub const MAX_LISTED: usize = 20;

#[cfg(test)]
mod tests;
