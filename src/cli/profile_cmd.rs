//! `gymscope profile`: streams both files from disk through the core profile and writes the two
//! output files atomically.

use super::args::ProfileArgs;
use super::atomic::AtomicFile;
use crate::error::ProfileError;
use crate::output::output_file_names;
use crate::profile::{ProfileBuilder, ProfileOptions};
use crate::render::{self, SeekSource};
use anyhow::{bail, Context, Result};
use std::fs::File;
use std::io::Read;
use std::path::{Component, Path, PathBuf};

const CHUNK: usize = 4 << 20;

pub fn run(args: &ProfileArgs) -> Result<()> {
    for (path, flag) in [(&args.inputs, "--inputs"), (&args.rollouts, "--rollouts")] {
        if !path.exists() {
            bail!(
                "Input file not found: '{}' ({flag}). Check the path is spelled correctly.",
                path.display()
            );
        }
    }
    let inputs_name = args.inputs.display().to_string();
    let rollouts_name = args.rollouts.display().to_string();
    let mut builder = ProfileBuilder::new(&inputs_name, &rollouts_name);
    let mut buf = vec![0u8; CHUNK];
    feed(&args.inputs, &inputs_name, &mut buf, |chunk| {
        builder.push_inputs(chunk)
    })?;
    feed(&args.rollouts, &rollouts_name, &mut buf, |chunk| {
        builder.push_rollouts(chunk)
    })?;
    drop(buf);
    let profile = builder.finish(ProfileOptions {
        allow_partial_rollouts: args.allow_partial_rollouts,
    })?;
    for warning in &profile.warnings {
        eprintln!("Warning: {warning}");
    }

    let (profiling_name, metrics_name) = output_file_names(
        &args
            .rollouts
            .file_name()
            .unwrap_or_default()
            .to_string_lossy(),
    );
    let dir = match &args.out_dir {
        Some(dir) => {
            std::fs::create_dir_all(dir)
                .with_context(|| format!("creating --out-dir '{}'", dir.display()))?;
            dir.clone()
        }
        None => args
            .rollouts
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_default(),
    };
    let profiling_path = tidy(&dir.join(profiling_name));
    let metrics_path = tidy(&dir.join(metrics_name));

    let mut inputs =
        SeekSource(File::open(&args.inputs).with_context(|| format!("opening '{inputs_name}'"))?);
    let mut out = AtomicFile::create(&profiling_path)?;
    render::write_reward_profiling(&profile, &mut inputs, &inputs_name, &mut out)?;
    out.commit()?;
    let mut out = AtomicFile::create(&metrics_path)?;
    render::write_agent_metrics(&mut out, &profile)?;
    out.commit()?;

    print!(
        "{}",
        render::summary_text(
            &profile,
            &profiling_path.display().to_string(),
            &metrics_path.display().to_string()
        )
    );
    Ok(())
}

/// Streams a file in `buf`-sized chunks to `push` (any consumer whose errors can hold the
/// profile's read error).
pub(super) fn feed<E>(
    path: &Path,
    name: &str,
    buf: &mut [u8],
    mut push: impl FnMut(&[u8]) -> Result<(), E>,
) -> Result<()>
where
    E: From<ProfileError> + std::error::Error + Send + Sync + 'static,
{
    let mut file = File::open(path).map_err(|e| E::from(ProfileError::io(name, e)))?;
    loop {
        let n = match file.read(buf) {
            Ok(0) => return Ok(()),
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(E::from(ProfileError::io(name, e)).into()),
        };
        push(&buf[..n])?;
    }
}

/// Python's `Path` drops `.` components (`./r.jsonl` prints as `r.jsonl`); so do we.
fn tidy(path: &Path) -> PathBuf {
    path.components()
        .filter(|c| *c != Component::CurDir)
        .collect()
}
