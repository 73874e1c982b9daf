//! A query's reads of a run on every core, for the CLI's `query` and `report --query` and the
//! Python module's `rollouts()`: what the query knows of the run beyond a row (`run_facts`: the
//! inputs' agents, upstream's verdicts beside the rollouts, the task aggregates), the rollouts
//! in line batches evaluated on worker threads and handed back in file order
//! (`for_each_batch`), the matching keys (`matching_keys`) and the run as one row per rollout
//! (`rollout_rows`, the core's `query::rows`).

use crate::native::in_order::{read_in_order, ReadFile};
use crate::native::parallel;
use crate::native::read::{for_each_line, ReadError};
use crate::native::{check_input, Input, UsageError};
use crate::query::rows::{read_row, RolloutRow, RowColumns};
use crate::query::{read_keyed_with, Field, Matched, Query, RunFacts};
use crate::read::batch::LineBatch;
use crate::read::job::Job;
use crate::read::jsonl::LineTooLong;
use crate::record::RowKind;
use anyhow::{anyhow, Result};
use std::collections::BTreeSet;
use std::path::Path;

/// One matching line, as a worker hands it back.
pub struct Found {
    pub line: u64,
    /// The row as it is in the file (kept only for `--format jsonl`).
    pub bytes: Vec<u8>,
    pub matched: Matched,
}

/// What a worker makes of a batch: the matches and the batch's last line, or the first row that
/// could not be read.
pub type BatchResult = Result<(Vec<Found>, u64), (u64, String)>;

/// What a query needs read of the run before its matches: upstream's verdicts, the task
/// aggregates, the run's field names (`--strict`).
pub struct FactsWanted {
    pub verdicts: bool,
    pub tasks: bool,
    pub strict: bool,
}

/// What a query knows of the run beyond a row ([`RunFacts`]), and with `strict` the run's
/// top-level field names: the inputs' agents, the verdicts beside the rollouts, a first read
/// for the task aggregates, as `wanted` asks.
pub fn run_facts(
    rollouts: &Path,
    inputs: Option<&Path>,
    wanted: FactsWanted,
    pass_threshold: f64,
    single_step: bool,
    max_line: u64,
) -> Result<(RunFacts, BTreeSet<String>)> {
    let name = rollouts.display().to_string();
    let mut facts = RunFacts {
        pass_threshold,
        single_step,
        ..RunFacts::default()
    };
    if let Some(path) = inputs {
        read_inputs(path, max_line, &mut facts)?;
    }
    if wanted.verdicts {
        facts.verdicts = verdicts_beside(rollouts, max_line)?;
    }
    let mut present = BTreeSet::new();
    if wanted.tasks || wanted.strict {
        present = first_pass(rollouts, &name, max_line, &mut facts, wanted.strict)?;
    }
    Ok((facts, present))
}

/// The keys of the rollouts where `query` holds, in file order (`report --query`): the same
/// reads as `gymscope query` (the inputs' agents, upstream's verdicts, a first read for task
/// aggregates when asked), with its defaults.
pub fn matching_keys(
    rollouts: &Path,
    inputs: &Path,
    query: &Query,
    single_step: bool,
    max_line: u64,
) -> Result<Vec<(i64, i64)>> {
    let name = rollouts.display().to_string();
    let wanted = FactsWanted {
        verdicts: query.fields().iter().any(|f| **f == Field::Verdict),
        tasks: query.needs_tasks(),
        strict: false,
    };
    let threshold = crate::reward_group::DEFAULT_THRESHOLD;
    let (facts, _) = run_facts(
        rollouts,
        Some(inputs),
        wanted,
        threshold,
        single_step,
        max_line,
    )?;
    let mut keys = Vec::new();
    let read = for_each_batch(
        rollouts,
        &name,
        max_line,
        |batch| eval_batch(query, &facts, &[], batch, false),
        |result| {
            let found = result.map_err(|(line, e)| row_error(&name, line, &e))?;
            keys.extend(found.0.into_iter().map(|f| f.matched.key));
            Ok(())
        },
    );
    match read {
        Ok(()) | Err(Halt::Limit) => Ok(keys),
        Err(Halt::Error(e)) => Err(e),
        Err(Halt::Interrupted(sig)) => Err(anyhow!("interrupted by signal {sig}")),
    }
}

/// An expression that does not parse, as a usage error showing where.
pub fn parse_query(source: &str) -> Result<Query, UsageError> {
    Query::parse(source).map_err(|e| {
        let caret = " ".repeat(e.column.saturating_sub(1));
        UsageError(format!("the expression, {e}\n  {source}\n  {caret}^"))
    })
}

/// Why a read stopped before the end: enough matches, or an error.
pub enum Halt {
    Limit,
    Error(anyhow::Error),
    /// Ctrl-C or SIGTERM: the read stops between batches (the signal's number).
    Interrupted(i32),
}

impl Halt {
    /// Stops a read after Ctrl-C or SIGTERM, between batches.
    pub fn if_signalled() -> Result<(), Halt> {
        match crate::native::signals::caught() {
            Some(sig) => Err(Halt::Interrupted(sig)),
            None => Ok(()),
        }
    }
}

impl From<ReadError> for Halt {
    fn from(e: ReadError) -> Self {
        Halt::Error(e.into())
    }
}

/// Reads `path` in line batches on every core, `work` on each batch in a worker thread, `done`
/// with each result in file order. A line over the limit stops the read after the lines before
/// it are done (the first error in file order is the one reported).
pub fn for_each_batch<Out: Send>(
    path: &Path,
    name: &str,
    max_line: u64,
    work: impl Fn(&LineBatch) -> Out + Sync,
    done: impl FnMut(Out) -> Result<(), Halt>,
) -> Result<(), Halt> {
    let mut job = EachBatch {
        name,
        done,
        out: std::marker::PhantomData,
    };
    let work = &work;
    let parsers = (0..parallel::workers()).map(|_| move |batch: LineBatch| work(&batch));
    let file = ReadFile {
        path,
        name,
        kind: RowKind::Rollout,
    };
    read_in_order(&[file], max_line, &mut job, parsers, |_, _| {
        Ok::<_, Halt>(())
    })
}

/// A rollouts file read as a job whose parts are handed to `done` in file order.
struct EachBatch<'a, D, Out> {
    name: &'a str,
    done: D,
    out: std::marker::PhantomData<fn(Out)>,
}

impl<D: FnMut(Out) -> Result<(), Halt>, Out> Job for EachBatch<'_, D, Out> {
    type Part = Out;
    type Error = Halt;

    fn record(&mut self, part: Out, _before: u64) -> Result<(), Halt> {
        (self.done)(part)
    }

    fn too_long(&mut self, _: RowKind, t: LineTooLong) -> Result<(), Halt> {
        Err(Halt::from(ReadError::TooLong {
            file: self.name.to_string(),
            line: t.line,
            limit: t.limit,
        }))
    }

    fn read_failed(&mut self, _: RowKind, cause: String) -> Halt {
        Halt::Error(anyhow!("Could not read '{}': {cause}", self.name))
    }
}

pub fn eval_batch(
    query: &Query,
    facts: &RunFacts,
    extra: &[Field],
    batch: &LineBatch,
    keep_bytes: bool,
) -> BatchResult {
    let mut out = Vec::new();
    let mut keys = crate::record::KeyTable::default();
    let mut last = 0;
    for (span, line) in batch.lines() {
        // After Ctrl-C a batch stops where it is: its results so far, up to `last`.
        if crate::native::signals::caught().is_some() {
            break;
        }
        last = span.line;
        let found = query
            .match_line(line, &mut keys, facts, extra)
            .map_err(|e| (span.line, e))?;
        if let Some(matched) = found {
            out.push(Found {
                line: span.line,
                bytes: if keep_bytes {
                    line.to_vec()
                } else {
                    Vec::new()
                },
                matched,
            });
        }
    }
    Ok((out, last))
}

/// The agents of the materialized inputs, for rows without `agent_ref`.
fn read_inputs(path: &Path, max_line: u64, facts: &mut RunFacts) -> Result<()> {
    let name = path.display().to_string();
    let mut keys = crate::record::KeyTable::default();
    for_each_line::<anyhow::Error>(path, &name, max_line, |span, line, _| {
        facts
            .add_input_line(line, &mut keys)
            .map_err(|e| anyhow!("'{name}' line {}: {e}", span.line))?;
        Ok(true)
    })?;
    facts.label_inputs();
    Ok(())
}

/// Upstream's `rollout_verdicts.jsonl` beside the rollouts, when there.
fn verdicts_beside(
    rollouts: &Path,
    max_line: u64,
) -> Result<Option<std::collections::HashMap<(i64, i64), String>>> {
    let path = crate::names::sibling(rollouts, crate::health::upstream::ROLLOUT_VERDICTS);
    if !path.is_file() {
        return Ok(None);
    }
    let name = path.display().to_string();
    let mut reader = crate::health::upstream::RolloutVerdicts::new(&name);
    let mut out = std::collections::HashMap::new();
    for_each_line::<anyhow::Error>(&path, &name, max_line, |span, line, _| {
        if let Some(v) = reader.line(span.line, line)? {
            if let Some(key) = v.key() {
                out.insert(key, v.verdict);
            }
        }
        Ok(true)
    })?;
    Ok(Some(out))
}

/// The task aggregates (and, for `--strict`, the run's top-level field names), in one read.
fn first_pass(
    path: &Path,
    name: &str,
    max_line: u64,
    facts: &mut RunFacts,
    strict: bool,
) -> Result<BTreeSet<String>> {
    type Keyed = Vec<((i64, i64), Option<f64>, Vec<String>)>;
    let mut present = BTreeSet::new();
    let read = for_each_batch(
        path,
        name,
        max_line,
        |batch| -> Result<Keyed, (u64, String)> {
            let mut out = Vec::new();
            let mut keys = crate::record::KeyTable::default();
            for (span, line) in batch.lines() {
                if let Some(row) = read_keyed_with(line, &mut keys).map_err(|e| (span.line, e))? {
                    let reward = row
                        .reward
                        .as_ref()
                        .and_then(crate::reward_group::reward_value);
                    let keys = if strict {
                        crate::query::top_level_keys(line)
                    } else {
                        Vec::new()
                    };
                    out.push((row.key, reward, keys));
                }
            }
            Ok(out)
        },
        |result| {
            let rows = result.map_err(|(line, e)| row_error(name, line, &e))?;
            for (key, reward, keys) in rows {
                facts.add_rollout(key.0, reward);
                present.extend(keys);
            }
            Halt::if_signalled()
        },
    );
    match read {
        Ok(()) | Err(Halt::Limit) => Ok(present),
        Err(Halt::Error(e)) => Err(e),
        Err(Halt::Interrupted(sig)) => Err(anyhow!("interrupted by signal {sig}")),
    }
}

pub fn row_error(name: &str, line: u64, message: &str) -> Halt {
    Halt::Error(anyhow!("'{name}' line {line}: {message}"))
}

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
            max_line_bytes: crate::read::jsonl::DEFAULT_MAX_LINE_BYTES,
        }
    }
}

/// Every rollout's row, or with `query` every match's, in file order, as columns. Errors name
/// the file and line (and the expression's column for a query that does not parse).
pub fn rollout_rows(rollouts: &Path, query: Option<&str>, o: &RowOptions) -> Result<RowColumns> {
    let query = query.map(parse_query).transpose()?;
    let fields = query.as_ref().map(Query::fields).unwrap_or_default();
    check_input(Input::new(rollouts, "rollouts"), false)?;
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

/// Reads the rows on every core, handing them to `each` in file order.
pub fn for_each_row(
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
