//! Reading: a run's files as lines, on one thread, on every core, or in the app's pool of
//! workers that share no memory. Nothing here knows what a row means; each analysis parses the
//! lines it is handed.
//!
//! - [`chunks`]: the streaming loop, a reader's bytes in chunks (`for_each_chunk`);
//! - [`jsonl`]: chunks split into lines with their numbers and byte spans (`LineSplitter`,
//!   `LineSpan`), a line over the limit refused (`LineTooLong`);
//! - [`batch`]: complete lines of one file gathered into a [`batch::LineBatch`] to hand to
//!   another thread;
//! - [`ranges`]: a file cut into byte ranges (`plan`, `ByteRange`) that readers read alone
//!   (`RangeCutter`: each range owns the lines that start inside it);
//! - [`in_order`]: a range's results sent as bytes (`Part`) and handed to a job's `Job` in
//!   file order (`InOrder`), as one reader of the whole files would.

pub mod batch;
pub mod chunks;
pub mod in_order;
pub mod job;
pub mod jsonl;
pub mod ranges;

/// Which parts of a row to read.
#[derive(Clone, Copy, PartialEq, Eq, Debug, serde::Serialize, serde::Deserialize)]
pub enum RowKind {
    /// Materialized inputs: the rollout key and `agent_ref.name`.
    Input,
    /// Rollouts: also every numeric field, `response.usage` and `reward`.
    Rollout,
}
