//! ATIF, the Agent Trajectory Interchange Format (Harbor's RFC 0001, v1.7), in and out.
//! - out: a Gym rollout's `ng_trajectory` to an ATIF file, byte for byte as NeMo Gym v0.7.0's
//!   `gym eval export --format atif` writes it: [`export_batch`] (the file and its manifest),
//!   [`export`] (one row), [`export_steps`] (its steps), [`export_turns`] (matched with their turns), read strictly by [`ng_record`] and
//!   [`gym_items`] through [`strict_model`] and [`strict_json`] ([`surrogates`]: lone surrogate
//!   escapes, refused by path as upstream does); [`iso_time`] (Python's timestamps).
//!
//! - in: [`trajectory`] (a file read, v1.0 to v1.7), [`to_gym`] (as a Gym rollout), [`run`]
//!   (many files as one run: keys, rewards), [`harbor`] (a Harbor job's trials: task and
//!   reward); [`validate`] (Harbor's schema checks, every error).
//!
//! docs/atif.md says what maps to what, and what is lost.

pub mod export;
pub mod export_batch;
pub mod export_steps;
pub mod export_turns;
pub mod gym_items;
pub mod harbor;
pub mod iso_time;
pub mod ng_record;
pub mod run;
pub mod strict_json;
pub mod strict_model;
pub mod surrogates;
pub mod to_gym;
pub mod trajectory;
pub mod validate;

/// What the folder around a file says of it.
#[derive(Clone, Debug, Default)]
pub struct Hint {
    /// `(task, rollout)` from Gym's manifest.
    pub manifest_key: Option<(u64, u64)>,
    /// Harbor's trial: its task's name and the verifier's reward.
    pub harbor_task: Option<String>,
    pub harbor_reward: Option<f64>,
}
