//! A run's two files read once on every core: the profile, and rollout health when wanted, in
//! the same read. The calling thread reads and cuts lines into batches (`native::in_order`),
//! parsing threads read each batch for the profile and for health, and both builders record the
//! batches in file order, so results and first errors are those of a one-thread read.

use super::in_order::{read_in_order, ReadFile};
use super::parallel;
use crate::error::ProfileError;
use crate::health::{HealthBuilder, HealthError, HealthReport};
use crate::joint_read::pooled::{self as joint, Both};
use crate::profile::{parse_batch, ProfileBuilder};
use crate::read::batch::LineBatch;
use crate::record::RowKind;
use std::path::Path;

/// What [`read_run`] gives: the builder, ready to `finish`, and health's result when asked for.
pub type RunRead = (ProfileBuilder, Option<Result<HealthReport, HealthError>>);

/// Reads the materialized inputs, then the rollouts; `on_bytes` is told of each chunk read (for
/// a progress bar). The profile's errors come first; health stops at its own first error, which
/// is returned as its result. A stop asked for on this thread (`signals::caught`: the Python
/// module's Ctrl-C, `signals::stop_with`) ends the read at the next chunk (issue 57: an
/// interrupted `gymscope.profile()` read on to the end behind the raised `KeyboardInterrupt`).
/// The jobs are the app's pool's: the profile with health (`joint_read::pooled::Both`), or the
/// profile's builder alone.
pub fn read_run(
    inputs: &Path,
    rollouts: &Path,
    max_line_bytes: u64,
    health: Option<HealthBuilder>,
    mut on_bytes: impl FnMut(usize),
) -> Result<RunRead, ProfileError> {
    let inputs_name = inputs.display().to_string();
    let rollouts_name = rollouts.display().to_string();
    let mut builder = ProfileBuilder::new(&inputs_name, &rollouts_name)
        .with_max_line_bytes(max_line_bytes)
        .with_threads(parallel::workers());
    let files = [
        ReadFile {
            path: inputs,
            name: &inputs_name,
            kind: RowKind::Input,
        },
        ReadFile {
            path: rollouts,
            name: &rollouts_name,
            kind: RowKind::Rollout,
        },
    ];
    let on_chunk = |file: &ReadFile<'_>, bytes: usize| {
        if super::signals::caught().is_some() {
            let why = std::io::Error::new(std::io::ErrorKind::Interrupted, "interrupted");
            return Err(ProfileError::io(file.name, why));
        }
        on_bytes(bytes);
        Ok(())
    };
    let workers = parallel::workers();
    let Some(mut health) = health else {
        let parsers = (0..workers).map(|_| |batch: LineBatch| parse_batch(&batch));
        read_in_order(&files, max_line_bytes, &mut builder, parsers, on_chunk)?;
        return Ok((builder, None));
    };
    health.expect_inputs();
    let mut both = Both {
        builder,
        health: Ok(health),
        inputs_name: inputs_name.clone(),
    };
    let parsers = (0..workers).map(|_| |batch: LineBatch| joint::lines(&batch));
    read_in_order(&files, max_line_bytes, &mut both, parsers, on_chunk)?;
    let Both {
        builder, health, ..
    } = both;
    Ok((builder, Some(health.and_then(HealthBuilder::finish))))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profile::ProfileBuilder;
    use std::fmt::Write as _;

    /// The error a one-thread streaming read reports.
    fn streamed(inputs: &[u8], rollouts: &[u8], max: u64) -> String {
        let mut b = ProfileBuilder::new("i", "r").with_max_line_bytes(max);
        let read = b
            .push_inputs(inputs)
            .and_then(|()| b.push_rollouts(rollouts));
        read.and_then(|()| {
            b.finish(crate::profile::ProfileOptions::default())
                .map(drop)
        })
        .unwrap_err()
        .to_string()
    }

    #[test]
    fn an_error_before_a_line_over_the_limit_is_the_one_reported() {
        let dir = tempfile::tempdir().unwrap();
        let (mut inputs, mut rollouts) = (String::new(), String::new());
        for i in 0..3000 {
            let _ = writeln!(inputs, r#"{{"_ng_task_index":{i},"_ng_rollout_index":0}}"#);
            let pad = "y".repeat(if i == 2900 { 5000 } else { 10 });
            let line = if i == 2 {
                r#"{"bad":"#.to_string()
            } else {
                format!(r#"{{"_ng_task_index":{i},"_ng_rollout_index":0,"reward":1,"p":"{pad}"}}"#)
            };
            let _ = writeln!(rollouts, "{line}");
        }
        let (i, r) = (dir.path().join("i"), dir.path().join("r"));
        std::fs::write(&i, &inputs).unwrap();
        std::fs::write(&r, &rollouts).unwrap();
        let rename = |e: ProfileError| {
            e.to_string()
                .replace(&*i.display().to_string(), "i")
                .replace(&*r.display().to_string(), "r")
        };
        let expected = streamed(inputs.as_bytes(), rollouts.as_bytes(), 2000);
        assert!(expected.contains("line 3"), "{expected}");
        let read = read_run(&i, &r, 2000, None, |_| {}).map(drop);
        assert_eq!(rename(read.unwrap_err()), expected);
        // Without the earlier error, the line over the limit is reported.
        let fixed = rollouts.replacen(
            r#"{"bad":"#,
            r#"{"_ng_task_index":2,"_ng_rollout_index":0}"#,
            1,
        );
        std::fs::write(&r, &fixed).unwrap();
        let expected = streamed(inputs.as_bytes(), fixed.as_bytes(), 2000);
        assert!(expected.contains("line 2901"), "{expected}");
        let read = read_run(&i, &r, 2000, None, |_| {}).map(drop);
        assert_eq!(rename(read.unwrap_err()), expected);
    }
}
