//! A profile made from bytes in memory and its three output files rendered in memory: the tests'
//! and benches' one way to profile a run they generate, and `compare`'s for an older aggregate
//! file's `rollout_infos` (`compare::gym_report::legacy`). The faces stream files instead
//! (`native::run_read`, the app's worker).

use crate::error::ProfileError;
use crate::profile::{Profile, ProfileBuilder, ProfileOptions};
use crate::render::{self, RenderError};

/// The three output files' contents, for callers that keep them in memory (the web app, tests).
pub struct RenderedProfile {
    pub reward_profiling: Vec<u8>,
    pub agent_metrics: Vec<u8>,
    pub repeat_level_metrics: Vec<u8>,
}

pub fn render_in_memory(
    profile: &Profile,
    inputs: &[u8],
    inputs_file: &str,
) -> Result<RenderedProfile, RenderError> {
    let mut reward_profiling = Vec::new();
    render::write_reward_profiling(profile, &mut { inputs }, inputs_file, &mut reward_profiling)?;
    let mut agent_metrics = Vec::new();
    render::write_agent_metrics(&mut agent_metrics, profile)?;
    let mut repeat_level_metrics = Vec::new();
    render::write_repeat_level_metrics(&mut repeat_level_metrics, profile)?;
    Ok(RenderedProfile {
        reward_profiling,
        agent_metrics,
        repeat_level_metrics,
    })
}

/// Profiles two files held in memory, feeding them in chunks as the streaming readers do.
pub fn profile_bytes(
    inputs: &[u8],
    inputs_file: &str,
    rollouts: &[u8],
    rollouts_file: &str,
    options: ProfileOptions,
) -> Result<Profile, ProfileError> {
    const CHUNK: usize = 1 << 20;
    let mut builder = ProfileBuilder::new(inputs_file, rollouts_file);
    for chunk in inputs.chunks(CHUNK) {
        builder.push_inputs(chunk)?;
    }
    for chunk in rollouts.chunks(CHUNK) {
        builder.push_rollouts(chunk)?;
    }
    builder.finish(options)
}
