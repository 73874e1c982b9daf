//! The fields of each model in a rollout's `ng_trajectory`, in upstream's order: NeMo Gym
//! v0.7.0's `nemo_gym/rollout_observability.py` (Pydantic models that forbid extra fields). The
//! one list of each, for both strict readers of the record: the collection's checks
//! (`gym::trajectory`) and the ATIF export's (`atif::ng_record`).

/// `RolloutTrajectory`.
pub const RECORD: [&str; 8] = [
    "schema_version",
    "task_id",
    "rollout_id",
    "invocations",
    "turns",
    "model_calls",
    "tool_calls",
    "gaps",
];

/// `AgentInvocation`.
pub const INVOCATION: [&str; 9] = [
    "kind",
    "invocation_id",
    "parent_invocation_id",
    "spawned_by_tool_call_id",
    "status",
    "duration_ms",
    "error_type",
    "model_calls",
    "conversation",
];

/// `AgentInvocation.status`'s values.
pub const INVOCATION_STATUS: [&str; 4] = ["completed", "failed", "incomplete", "unknown"];

/// `TrajectoryTurn`.
pub const TURN: [&str; 11] = [
    "invocation_id",
    "task_id",
    "rollout_id",
    "turn_no",
    "timestamp",
    "question",
    "answer",
    "reasoning_content",
    "resolved",
    "step_count",
    "model_calls",
];

/// `ModelCallRef`.
pub const CALL_REF: [&str; 3] = ["model_call_id", "model_ref", "response_id"];

/// `TrajectoryModelCall`.
pub const MODEL_CALL: [&str; 8] = [
    "model_call_id",
    "started_at",
    "completed_at",
    "duration_ms",
    "request",
    "response",
    "response_metadata",
    "token_stats",
];

/// `TrajectoryResponseMetadata` (v0.7.0 `rollout_observability.py:47-61`).
pub const CALL_META: [&str; 13] = [
    "response_id",
    "model_ref",
    "model",
    "dialect",
    "status_code",
    "response_status",
    "finish_reason",
    "upstream_attempted",
    "response_source",
    "upstream_status_code",
    "local_response_reason",
    "error_category",
    "latency_ttft_ms",
];

/// `TrajectoryTokenStats`.
pub const TOKEN_STATS: [&str; 5] = [
    "prompt_tokens",
    "completion_tokens",
    "reasoning_tokens",
    "total_tokens",
    "cached_tokens",
];

/// `TrajectoryToolCall`; an agent's `ToolCallObservation` is the same but its last, `output`.
pub const TOOL_CALL: [&str; 12] = [
    "kind",
    "invocation_id",
    "tool_call_id",
    "sandbox_id",
    "tool_name",
    "started_at",
    "completed_at",
    "duration_ms",
    "timing_source",
    "status",
    "error_type",
    "output",
];

/// A tool call's `status` literal (default "unknown").
pub const TOOL_STATUS: [&str; 6] = [
    "completed",
    "failed",
    "timeout",
    "cancelled",
    "incomplete",
    "unknown",
];

/// A tool call's `timing_source` literal.
pub const TIMING_SOURCE: [&str; 3] = ["executor", "artifact", "harness"];

/// `TrajectoryGap`.
pub const GAP: [&str; 3] = ["code", "invocation_id", "detail"];
