//! A run's two files read once on every core: the profile, and rollout health when wanted, in
//! the same read. The calling thread reads and cuts lines into batches (`profile::batch`),
//! parsing threads read each batch for the profile and for health, and both builders record the
//! batches in file order, so results and first errors are those of a one-thread read.

use super::in_order::{read_in_order, InOrderJob};
use super::parallel;
use crate::error::ProfileError;
use crate::health::{HealthBuilder, HealthError, HealthReport};
use crate::joint_read::{self, HealthLines};
use crate::profile::{parse_batch, ParsedBatch, ProfileBuilder};
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
pub fn read_run(
    inputs: &Path,
    rollouts: &Path,
    max_line_bytes: u64,
    mut health: Option<HealthBuilder>,
    on_bytes: impl FnMut(usize),
) -> Result<RunRead, ProfileError> {
    let inputs_name = inputs.display().to_string();
    let rollouts_name = rollouts.display().to_string();
    let mut builder = ProfileBuilder::new(&inputs_name, &rollouts_name)
        .with_max_line_bytes(max_line_bytes)
        .with_threads(parallel::workers());
    let with_health = health.is_some();
    if let Some(h) = &mut health {
        h.expect_inputs();
    }
    let mut health_failed = None;
    let mut job = RunJob {
        profile: &mut builder,
        health: health.as_mut(),
        health_failed: &mut health_failed,
        names: [&inputs_name, &rollouts_name],
        on_bytes,
    };
    // Parsing threads read each batch for the profile, and for health when wanted.
    let parsers = (0..parallel::workers()).map(|_| {
        move |batch: LineBatch| {
            if with_health {
                let (parsed, lines) = joint_read::parse_batch(&batch);
                (parsed, Some(lines))
            } else {
                (parse_batch(&batch), None)
            }
        }
    });
    let files = [(inputs, &*inputs_name), (rollouts, &*rollouts_name)];
    read_in_order(&files, &mut job, parsers)?;
    let health = health.map(|h| match health_failed {
        Some(e) => Err(e),
        None => h.finish(),
    });
    Ok((builder, health))
}

/// The files in the order they are read.
const KINDS: [RowKind; 2] = [RowKind::Input, RowKind::Rollout];

/// The read as a job: the profile builder cuts, and parsed batches are recorded by the profile
/// and by health when wanted (until its first error, which is kept).
struct RunJob<'a, F> {
    profile: &'a mut ProfileBuilder,
    health: Option<&'a mut HealthBuilder>,
    health_failed: &'a mut Option<HealthError>,
    names: [&'a str; 2],
    on_bytes: F,
}

impl<F: FnMut(usize)> InOrderJob for RunJob<'_, F> {
    type Batch = LineBatch;
    type Parsed = (ParsedBatch, Option<HealthLines>);
    type Error = ProfileError;

    fn start_chunk(&mut self, file: usize) -> Result<(), ProfileError> {
        if super::signals::caught().is_some() {
            let why = std::io::Error::new(std::io::ErrorKind::Interrupted, "interrupted");
            return Err(ProfileError::io(self.names[file], why));
        }
        Ok(())
    }

    fn cut(
        &mut self,
        file: usize,
        chunk: &[u8],
        out: &mut Vec<LineBatch>,
    ) -> Result<bool, ProfileError> {
        self.profile.cut(KINDS[file], chunk, |b| out.push(b))?;
        Ok(true)
    }

    fn cut_end(&mut self, file: usize, out: &mut Vec<LineBatch>) {
        self.profile.cut_end(KINDS[file], |b| out.push(b));
    }

    fn record(
        &mut self,
        (parsed, lines): (ParsedBatch, Option<HealthLines>),
    ) -> Result<(), ProfileError> {
        self.profile.record(parsed)?;
        if let (Some(h), Some(lines), None) = (&mut self.health, lines, &*self.health_failed) {
            *self.health_failed = joint_read::record_health(h, self.names[0], lines).err();
        }
        Ok(())
    }

    fn chunk_done(&mut self, bytes: usize) {
        (self.on_bytes)(bytes);
    }
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
