//! Names and in-memory production of the profile's three output files, shared by the CLI and the
//! web app so both name and fill them identically.

use crate::error::ProfileError;
use crate::profile::{Profile, ProfileBuilder, ProfileOptions};
use crate::render::{self, RenderError};

/// Upstream's naming: `<stem>_reward_profiling.jsonl`, `<stem>_agent_metrics.json` and
/// `<stem>_repeat_level_metrics.json` (see [`crate::names`]).
pub fn output_file_names(rollouts_file_name: &str) -> [String; 3] {
    [
        crate::names::reward_profiling(rollouts_file_name),
        crate::names::agent_metrics(rollouts_file_name),
        crate::names::repeat_level_metrics(rollouts_file_name),
    ]
}

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
