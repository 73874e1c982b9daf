//! The keys of a row that upstream reads or writes, spelled as upstream spells them
//! (`nemo_gym/rollout_collection.py` @07d6b0d).

/// A task's index in the input, kept on every rollout of it.
pub const TASK_INDEX: &str = "_ng_task_index";
/// The rollout's number within its task (`--num-repeats`).
pub const ROLLOUT_INDEX: &str = "_ng_rollout_index";
/// A retried rollout's attempt (above 0 from the first retry).
pub const ATTEMPT_INDEX: &str = "_ng_attempt_index";
/// A rollout id the input row gives (`<task>-<rollout>` when it gives none).
pub const ROLLOUT_ID: &str = "_ng_rollout_id";
pub const AGENT_REF: &str = "agent_ref";
/// The environment server a row ran through (NeMo Gym v0.7.0 `global_config.py`
/// `ENVIRONMENT_SERVER_STAMP_KEY_NAME`): what labels a rollout's run when present.
pub const ENVIRONMENT_SERVER: &str = "_ng_environment_server";
/// A verify response's flag that its reward is not a measurement (v0.7.0 `reward_profile.py`
/// `MASK_SAMPLE_FIELD`): the rollout leaves the quality metrics when it is truthy.
pub const MASK_SAMPLE: &str = "mask_sample";
/// The stage of a multi-stage driver's row (v0.7.0): several rows share a (task, rollout).
pub const STAGE_INDEX: &str = "stage_index";
pub const SKILLS_REF: &str = "skills_ref";
/// The config instance that declared a row's dataset; routes it when it names no agent (v0.7.0).
pub const TASK_SOURCE: &str = "task_source";
pub const RESPONSES_CREATE_PARAMS: &str = "responses_create_params";
/// A failure row's class (`transient`, `timeout_exceeded`, …): the row goes to the failures file.
pub const FAILURE_CLASS: &str = "_ng_failure_class";
/// A failure that a resume does not retry.
pub const FAILURE_TERMINAL: &str = "_ng_failure_terminal";
/// A result that is written nowhere.
pub const NO_PERSIST: &str = "_ng_no_persist";

/// The model calls captured for a rollout (`{rollout_id, metrics, calls, gaps?}`).
pub const CAPTURE: &str = "ng_model_call_capture";
/// The rollout's trajectory record (`TrajectoryRecord`).
pub const TRAJECTORY: &str = "ng_trajectory";
/// What a harness agent (Hermes, Claude Code, …) returns instead of a trajectory.
pub const OBSERVATIONS: &str = "ng_agent_observations";
/// Per-rollout performance figures (upstream v0.6).
pub const PERF: &str = "ng_perf";
