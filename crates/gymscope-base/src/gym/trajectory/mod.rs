//! The trajectory record, `ng_trajectory`: upstream's `TrajectoryRecord` (schema version
//! "1.0", NeMo Gym v0.7.0 `nemo_gym/rollout_observability.py`), one type set for every reader.
//! Its values borrow from the row (`'a`), so reading one copies no conversation, answer or
//! response.
//!
//! Two ways to read it fill the same types: [`validate`] as upstream's `model_validate` does
//! (extra keys forbidden, Pydantic's lax coercions: [`super::pydantic`]), for the health checks
//! (v0.7.0 `nemo_gym/rollout_health.py` validates it so), and the ATIF export's strict reading
//! (`strict=True`), a layer over these types in the analyses (`atif::ng_record`). A row whose
//! trajectory fails [`validate`] is `record_unreadable`; the error name is upstream's
//! (`ValidationError`), the message ours. [`schema`] lists each model's fields; [`dump`] writes
//! a record's parts in their dumped form.

pub mod dump;
mod lax;
pub mod schema;

pub use lax::{call_ref, gap, invocation, tool_call, validate};
use serde_json::Value;

/// What an absent `Any` field reads as.
pub static NULL: Value = Value::Null;

/// A model server reference (`ModelServerRef`: `{type: "responses_api_models", name}`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ModelRef {
    pub kind: String,
    pub name: String,
}

/// A turn's or invocation's reference to a model call (`ModelCallRef`).
#[derive(Clone, Debug, PartialEq)]
pub struct CallRef {
    pub model_call_id: Option<String>,
    pub model_ref: Option<ModelRef>,
    pub response_id: Option<String>,
}

/// `AgentInvocation`: one agent's run inside the rollout, with its conversation.
#[derive(Clone, Debug, PartialEq)]
pub struct Invocation<'a> {
    pub invocation_id: String,
    pub parent_invocation_id: Option<String>,
    pub spawned_by_tool_call_id: Option<String>,
    pub status: String,
    pub duration_ms: Option<f64>,
    pub error_type: Option<String>,
    pub model_calls: Vec<CallRef>,
    /// Responses input items (each an object).
    pub conversation: &'a [Value],
}

/// `TrajectoryTurn`: one question and its answer, with the calls that made it.
#[derive(Clone, Debug, PartialEq)]
pub struct Turn<'a> {
    pub invocation_id: String,
    pub turn_no: i64,
    pub timestamp: f64,
    pub question: &'a Value,
    pub answer: &'a Value,
    pub reasoning_content: &'a Value,
    pub resolved: Option<bool>,
    pub step_count: i64,
    pub model_calls: Vec<CallRef>,
}

/// A model call's `token_stats`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TokenStats {
    pub prompt_tokens: Option<i64>,
    pub completion_tokens: Option<i64>,
    pub reasoning_tokens: Option<i64>,
    pub total_tokens: Option<i64>,
    pub cached_tokens: Option<i64>,
}

/// A model call's `response_metadata` (the fields of [`schema::CALL_META`]).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ResponseMeta {
    pub response_id: Option<String>,
    pub model_ref: Option<ModelRef>,
    pub model: Option<String>,
    pub dialect: Option<String>,
    pub status_code: Option<i64>,
    pub response_status: Option<String>,
    pub finish_reason: Option<String>,
    /// Where a response came from, and why when local (v0.7.0 added these four).
    pub upstream_attempted: Option<bool>,
    pub response_source: Option<String>,
    pub upstream_status_code: Option<i64>,
    pub local_response_reason: Option<String>,
    pub error_category: Option<String>,
    pub latency_ttft_ms: Option<f64>,
}

/// `TrajectoryModelCall`: one call to a model server.
#[derive(Clone, Debug, PartialEq)]
pub struct ModelCall<'a> {
    pub model_call_id: Option<String>,
    /// When the call started (seconds): orders a model's calls in time (v0.7.0's
    /// `rollout_ended_on_failed_model_call`).
    pub started_at: Option<f64>,
    pub completed_at: Option<f64>,
    pub duration_ms: Option<f64>,
    pub request: &'a Value,
    pub response: &'a Value,
    pub meta: ResponseMeta,
    pub tokens: TokenStats,
}

/// `TrajectoryToolCall` (or an agent's `ToolCallObservation`, which has no `output`).
#[derive(Clone, Debug, PartialEq)]
pub struct ToolCall<'a> {
    pub invocation_id: String,
    pub tool_call_id: String,
    pub sandbox_id: Option<String>,
    pub tool_name: Option<String>,
    pub started_at: Option<f64>,
    pub completed_at: Option<f64>,
    pub duration_ms: Option<f64>,
    pub timing_source: Option<String>,
    pub status: String,
    pub error_type: Option<String>,
    pub output: &'a Value,
}

/// `TrajectoryGap`: what the recorder could not observe.
#[derive(Clone, Debug, PartialEq)]
pub struct Gap {
    pub code: String,
    pub invocation_id: Option<String>,
    pub detail: Option<String>,
}

/// `TrajectoryRecord`, whole.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Record<'a> {
    pub schema_version: String,
    pub task_id: String,
    pub rollout_id: String,
    pub invocations: Vec<Invocation<'a>>,
    pub turns: Vec<Turn<'a>>,
    pub model_calls: Vec<ModelCall<'a>>,
    pub tool_calls: Vec<ToolCall<'a>>,
    pub gaps: Vec<Gap>,
}

impl Record<'_> {
    pub fn has_gap(&self, code: &str) -> bool {
        self.gaps.iter().any(|g| g.code == code)
    }
    pub fn has_any_gap(&self, codes: &[&str]) -> bool {
        self.gaps.iter().any(|g| codes.contains(&g.code.as_str()))
    }
}

/// The keys of a model call's `meta` in a trajectory, in its order.
pub use schema::CALL_META as CALL_META_KEYS;
