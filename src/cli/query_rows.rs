//! The run as one row per rollout (the core's `query::rows`), read on every core: `gymscope
//! query --format rows` prints the matches' rows as JSON lines, and the Python module's
//! `gymscope.rollouts()` gathers them as columns ([`rollout_rows`]). One read, one row reader.

use super::args::QueryArgs;
use super::query::{for_each_batch, row_error, run_facts, FactsWanted, Halt};
use crate::native::{check_input, Input};
use crate::query::rows::{read_row, RolloutRow, RowColumns};
use crate::query::{Field, Query, RunFacts};
use anyhow::{anyhow, Result};
use std::collections::BTreeSet;
use std::path::Path;
use std::process::ExitCode;

/// How a run is read for its rows beyond the file itself (the query's defaults).
#[derive(Clone, Debug)]
pub struct RowOptions<'a> {
    /// The run's materialized inputs: the agent of a row without `agent_ref`.
    pub inputs: Option<&'a Path>,
    pub pass_threshold: f64,
    pub single_step: bool,
    pub max_line_bytes: u64,
}

impl Default for RowOptions<'_> {
    fn default() -> Self {
        RowOptions {
            inputs: None,
            pass_threshold: crate::reward_group::DEFAULT_THRESHOLD,
            single_step: false,
            max_line_bytes: crate::jsonl::DEFAULT_MAX_LINE_BYTES,
        }
    }
}

/// Every rollout's row, or with `query` every match's, in file order, as columns. Errors name
/// the file and line (and the expression's column for a query that does not parse).
pub fn rollout_rows(rollouts: &Path, query: Option<&str>, o: &RowOptions) -> Result<RowColumns> {
    let query = query.map(super::query::parse_query).transpose()?;
    let fields = query.as_ref().map(Query::fields).unwrap_or_default();
    check_input(
        Input {
            path: rollouts,
            flag: "rollouts",
        },
        false,
    )?;
    if let Some(path) = o.inputs {
        check_input(
            Input {
                path,
                flag: "inputs",
            },
            false,
        )?;
    }
    let wanted = FactsWanted {
        verdicts: fields.iter().any(|f| **f == Field::Verdict),
        tasks: query.as_ref().is_some_and(Query::needs_tasks),
        strict: false,
    };
    let (facts, _) = run_facts(
        rollouts,
        o.inputs,
        wanted,
        o.pass_threshold,
        o.single_step,
        o.max_line_bytes,
    )?;
    let mut columns = RowColumns::default();
    let read = for_each_row(rollouts, query.as_ref(), &facts, o.max_line_bytes, |row| {
        columns.push(row);
        Ok(())
    });
    match read {
        Ok(()) | Err(Halt::Limit) => Ok(columns),
        Err(Halt::Error(e)) => Err(e),
        Err(Halt::Interrupted(sig)) => Err(anyhow!("interrupted by signal {sig}")),
    }
}

/// The top-level field names the run's rows have (the read of `query --strict`), for the Python
/// module's check of a query's fields (`rollouts(…, strict=True)` and its warning).
pub fn field_names(rollouts: &Path, max_line_bytes: u64) -> Result<BTreeSet<String>> {
    let wanted = FactsWanted {
        verdicts: false,
        tasks: false,
        strict: true,
    };
    let threshold = crate::reward_group::DEFAULT_THRESHOLD;
    Ok(run_facts(rollouts, None, wanted, threshold, false, max_line_bytes)?.1)
}

/// `query --format rows`: each match's row as a JSON line, up to `--limit`.
pub(super) fn print_rows(
    rollouts: &Path,
    query: &Query,
    facts: &RunFacts,
    args: &QueryArgs,
) -> Result<ExitCode> {
    let mut count = 0u64;
    let mut line = Vec::new();
    let read = for_each_row(rollouts, Some(query), facts, args.max_line_bytes, |row| {
        if args.limit.is_some_and(|l| count >= l) || crate::native::out::stdout_gone() {
            return Err(Halt::Limit);
        }
        count += 1;
        line.clear();
        row.write_json(&mut line);
        crate::native::out::stdout_bytes(&line);
        match crate::native::signals::caught() {
            Some(sig) => Err(Halt::Interrupted(sig)),
            None => Ok(()),
        }
    });
    match read {
        Ok(()) | Err(Halt::Limit) => {}
        Err(Halt::Error(e)) => return Err(e),
        Err(Halt::Interrupted(sig)) => {
            crate::note!("Interrupted: {count} matching rollout(s) so far.");
            return Ok(ExitCode::from(
                128u8.saturating_add(u8::try_from(sig).unwrap_or(0)),
            ));
        }
    }
    if count == 0 && !crate::native::out::stdout_gone() {
        crate::note!("No rollout matches `{}`.", query.source);
    }
    Ok(ExitCode::SUCCESS)
}

/// Reads the rows on every core, handing them to `each` in file order.
fn for_each_row(
    rollouts: &Path,
    query: Option<&Query>,
    facts: &RunFacts,
    max_line: u64,
    mut each: impl FnMut(RolloutRow) -> Result<(), Halt>,
) -> Result<(), Halt> {
    let name = rollouts.display().to_string();
    for_each_batch(
        rollouts,
        &name,
        max_line,
        |batch| -> Result<Vec<RolloutRow>, (u64, String)> {
            let mut keys = crate::record::KeyTable::default();
            let mut rows = Vec::new();
            for (span, line) in batch.lines() {
                if let Some(row) = read_row(line, span.line, &mut keys, facts, query)
                    .map_err(|e| (span.line, e))?
                {
                    rows.push(row);
                }
            }
            Ok(rows)
        },
        |result| {
            let rows = result.map_err(|(line, e)| row_error(&name, line, &e))?;
            rows.into_iter().try_for_each(&mut each)
        },
    )
}
