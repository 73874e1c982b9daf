//! NeMo Gym's verdict files (`quality_summary.json`, `rollout_verdicts.jsonl`) read in the
//! worker beside a run, when the page has them.

use super::super::protocol::UpstreamFiles;
use super::io::{feed, read_all};
use crate::health::upstream::Upstream;
use crate::health::HealthError;
use crate::inspect::upstream::{VerdictIndex, VerdictReader};
use crate::read::chunks::Flow;
use web_sys::File;

/// NeMo Gym's verdict files, when the page has them: their counts and each rollout's verdict.
pub fn read_upstream(
    files: &UpstreamFiles,
) -> Result<Option<(Upstream, Option<VerdictIndex>)>, HealthError> {
    let fail = |file: &File, message: String| HealthError {
        file: file.name(),
        line: 0,
        message,
        too_long: false,
    };
    let mut found = Upstream::default();
    if let Some(f) = &files.quality_summary {
        let bytes = read_all(f).map_err(|e| fail(f, e))?;
        found.quality_summary = Some(crate::health::upstream::quality_summary(&f.name(), &bytes)?);
    }
    let mut index = None;
    if let Some(f) = &files.rollout_verdicts {
        let mut reader = VerdictReader::new(&f.name());
        let mut failed = None;
        feed::<String>(f, |chunk, _| match reader.push(chunk) {
            Ok(()) => Ok(Flow::Continue),
            Err(e) => {
                failed = Some(e);
                Ok(Flow::Stop)
            }
        })
        .map_err(|e| fail(f, e))?;
        if let Some(e) = failed {
            return Err(e);
        }
        let (verdicts, i) = reader.finish()?;
        found.rollout_verdicts = Some(verdicts);
        index = Some(i);
    }
    Ok(
        (found.quality_summary.is_some() || found.rollout_verdicts.is_some())
            .then_some((found, index)),
    )
}
