//! Rollout health as a reading [`Job`]: each batch of the rollouts file read on any thread
//! (`read_rollout_batch`), the reads recorded in file order by the builder, so every driver
//! (`read::job`) gives the one-thread read's report and first error. The materialized inputs and
//! the failures file stay pushed on one thread (`push_inputs`, `push_failures`): small, and read
//! before and after.

use super::builder::{HealthBuilder, HealthError, RolloutRead};
use crate::read::job::Job;
use crate::read::jsonl::LineTooLong;
use crate::record::RowKind;

/// A batch of rollout lines read: each line's number in its batch's numbering, and its read.
pub type RolloutLines = Vec<(u64, Result<Option<RolloutRead>, String>)>;

/// The builder records the rollouts' batches in file order (after
/// [`HealthBuilder::start_rollouts`], which ends the inputs).
impl Job for HealthBuilder {
    type Part = RolloutLines;
    type Error = HealthError;

    fn record(&mut self, lines: RolloutLines, before: u64) -> Result<(), HealthError> {
        for (n, read) in lines {
            self.record_rollout(n + before, read)?;
        }
        Ok(())
    }

    fn too_long(&mut self, _: RowKind, t: LineTooLong) -> Result<(), HealthError> {
        Err(self.rollout_too_long(t))
    }

    fn read_failed(&mut self, _: RowKind, cause: String) -> HealthError {
        HealthError {
            file: self.rollouts_name().to_string(),
            line: 0,
            message: format!("could not be read: {cause}"),
            too_long: false,
        }
    }
}
