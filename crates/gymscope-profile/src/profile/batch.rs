//! The profile read in three steps so the middle one can run on other threads:
//!
//! ```text
//! a reading driver cuts (kind, chunk) -> LineBatch   (in order: line numbers, spans, the limit)
//! parse_batch(LineBatch) -> ParsedBatch              (anywhere, any order: the costly part)
//! ProfileBuilder::record(ParsedBatch)                (in order: keys, duplicates, errors)
//! ```
//!
//! The builder is a `read::job::Job` (`pooled`), so every driver runs it.
//!
//! Recording batches in the order they were cut gives exactly the result of `push_inputs` /
//! `push_rollouts`: the same rows, the same first error. Each batch interns field names in its own
//! table; `record` maps them into the builder's.

use super::scan::{malformed, parse_line};
use super::ProfileBuilder;
use crate::error::ProfileError;
use crate::read::batch::LineBatch;
use crate::read::jsonl::{LineSpan, LineTooLong};
use crate::record::{KeyId, KeyTable, Row, RowError, RowKind};

/// A batch's rows (or why a line could not be read), with the field names their ids stand for.
#[derive(serde::Serialize, serde::Deserialize)]
pub struct ParsedBatch {
    kind: RowKind,
    keys: KeyTable,
    rows: Vec<(LineSpan, Result<Row, RowError>)>,
}

/// Reads every line of `batch`. Lines after a malformed one are still read (another thread may be
/// ahead); `record` stops at the first error, as the streaming read does.
pub fn parse_batch(batch: &LineBatch) -> ParsedBatch {
    parse_batch_with(batch, |span, line, keys| {
        parse_line(span, line, batch.kind(), keys)
    })
}

/// [`parse_batch`] with another reader of each line, which must read rows exactly as
/// [`parse_line`] does (`crate::joint_read` reads rollout lines for health in the same walk).
pub fn parse_batch_with(
    batch: &LineBatch,
    mut read: impl FnMut(LineSpan, &[u8], &mut KeyTable) -> Result<Row, RowError>,
) -> ParsedBatch {
    let mut keys = KeyTable::default();
    let rows = batch
        .lines()
        .map(|(span, line)| (span, read(span, line, &mut keys)))
        .collect();
    ParsedBatch {
        kind: batch.kind(),
        keys,
        rows,
    }
}

impl ParsedBatch {
    /// Numbers the lines of a batch cut from a range (`read::ranges`) in their file: `before` is how
    /// many lines the file's earlier ranges held.
    pub fn renumber(&mut self, before: u64) {
        for (span, _) in &mut self.rows {
            span.line += before;
        }
    }
}

impl ProfileBuilder {
    /// The error of a line over the limit in the file of `kind` (its number in the file).
    pub fn line_too_long(&self, kind: RowKind, t: LineTooLong) -> ProfileError {
        ProfileError::LineTooLong {
            file: self.file_of(kind).to_string(),
            line: t.line,
            limit: t.limit,
        }
    }

    /// Records a parsed batch; batches must come in the order they were cut.
    pub fn record(&mut self, parsed: ParsedBatch) -> Result<(), ProfileError> {
        let remap: Vec<KeyId> = (0..parsed.keys.len())
            .map(|id| self.state.keys.intern(parsed.keys.name(id as KeyId)))
            .collect();
        let file = self.file_of(parsed.kind).to_string();
        for (span, row) in parsed.rows {
            let mut row = row.map_err(|e| malformed(&file, span, e))?;
            for (key, _) in row.top.iter_mut().chain(row.usage.iter_mut()) {
                *key = remap[*key as usize];
            }
            match parsed.kind {
                RowKind::Input => self.state.record_input(&file, span, row),
                RowKind::Rollout => self.state.record_rollout(&file, span, row),
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profile::ProfileOptions;
    use crate::read::batch::BATCH_BYTES;

    /// A run whose rollouts carry fields in differing orders and a few field names only some have.
    fn run(rows: usize) -> (String, String) {
        let (mut inputs, mut rollouts) = (String::new(), String::new());
        for i in 0..rows {
            let (t, r) = (i / 3, i % 3);
            inputs.push_str(&format!(
                "{{\"agent_ref\":{{\"name\":\"a{}\"}},\"_ng_task_index\":{t},\"_ng_rollout_index\":{r},\"p\":\"{}\"}}\n",
                t % 2,
                "x".repeat(i % 700)
            ));
            let extra = if i % 5 == 0 {
                format!(",\"f{}\":{i}", i % 7)
            } else {
                String::new()
            };
            rollouts.push_str(&format!(
                "{{\"_ng_rollout_index\":{r},\"reward\":{}.0,\"response\":{{\"usage\":{{\"output_tokens\":{}}}}}{extra},\"_ng_task_index\":{t}}}\n",
                i % 2,
                i * 3 % 101
            ));
        }
        (inputs, rollouts)
    }

    fn streamed(inputs: &str, rollouts: &str, chunk: usize) -> Result<String, String> {
        let mut b = ProfileBuilder::new("i.jsonl", "r.jsonl");
        for c in inputs.as_bytes().chunks(chunk) {
            b.push_inputs(c).map_err(|e| e.to_string())?;
        }
        for c in rollouts.as_bytes().chunks(chunk) {
            b.push_rollouts(c).map_err(|e| e.to_string())?;
        }
        render(b)
    }

    /// Batches parsed out of order (last first), recorded in order.
    fn batched(inputs: &str, rollouts: &str, chunk: usize) -> Result<String, String> {
        use crate::read::batch::{cut, flush_last};
        use crate::read::jsonl::LineSplitter;
        let mut b = ProfileBuilder::new("i.jsonl", "r.jsonl");
        let mut batches = Vec::new();
        for (kind, data) in [(RowKind::Input, inputs), (RowKind::Rollout, rollouts)] {
            let (mut splitter, mut pending) = (LineSplitter::new(), None);
            for c in data.as_bytes().chunks(chunk) {
                cut(&mut splitter, &mut pending, kind, c, &mut |x| {
                    batches.push(x);
                })
                .map_err(|t| b.line_too_long(kind, t).to_string())?;
            }
            flush_last(&mut splitter, &mut pending, kind, &mut |x| batches.push(x));
        }
        assert!(batches.len() > 2, "the run spans several batches");
        let mut parsed: Vec<ParsedBatch> = batches.iter().rev().map(parse_batch).collect();
        parsed.reverse();
        for p in parsed {
            b.record(p).map_err(|e| e.to_string())?;
        }
        render(b)
    }

    fn render(b: ProfileBuilder) -> Result<String, String> {
        let p = b
            .finish(ProfileOptions {
                allow_partial_rollouts: false,
            })
            .map_err(|e| e.to_string())?;
        let mut out = Vec::new();
        crate::render::write_agent_metrics(&mut out, &p).map_err(|e| e.to_string())?;
        for t in &p.tasks {
            out.extend(format!("{} {:?}\n", t.task, t.rollouts).bytes());
        }
        String::from_utf8(out).map_err(|e| e.to_string())
    }

    #[test]
    fn batched_reading_gives_the_streamed_result() {
        let (inputs, rollouts) = run(24_000);
        for chunk in [4096, 1 << 20] {
            let streamed = streamed(&inputs, &rollouts, chunk).unwrap();
            assert_eq!(batched(&inputs, &rollouts, chunk).unwrap(), streamed);
        }
    }

    #[test]
    fn the_first_error_in_file_order_wins() {
        // Rollouts over two batches.
        let (inputs, mut rollouts) = run(60_000);
        assert!(rollouts.len() > BATCH_BYTES);
        // Two malformed lines far apart: the earlier one is reported, whichever is parsed first.
        let lines: Vec<&str> = rollouts.lines().collect();
        let mut edited: Vec<String> = lines.iter().map(|l| (*l).to_string()).collect();
        edited[700] = "{\"a\":".into();
        edited[58_500] = "[1]".into();
        rollouts = edited.join("\n") + "\n";
        let first = streamed(&inputs, &rollouts, 65_536).unwrap_err();
        assert!(first.contains("line 701"), "{first}");
        assert_eq!(batched(&inputs, &rollouts, 65_536).unwrap_err(), first);
        // A last line without its newline is read too.
        let cut = &rollouts[..rollouts.len() - 1];
        assert_eq!(
            batched(&inputs, cut, 65_536).unwrap_err(),
            streamed(&inputs, cut, 65_536).unwrap_err()
        );
    }
}
