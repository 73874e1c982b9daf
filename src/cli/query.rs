//! `gymscope query`: the rollouts where an expression holds. The core parses and evaluates
//! (`gymscope::query`); this reads the run on every core (line batches to worker threads,
//! results taken back in file order), learns what the expression needs of the whole run first
//! (task aggregates, the inputs' agents, upstream's verdicts) and prints the matches.

use super::args::{QueryArgs, QueryFormat};
use crate::jsonl::{LineSplitter, SplitError};
use crate::native::parallel::{self, OrderedPool};
use crate::native::read::{for_each_chunk, for_each_line, ReadError};
use crate::native::{check_input, Input, UsageError};
use crate::profile::LineBatch;
use crate::query::{read_keyed_with, Field, Matched, Query, RunFacts, BUILT_IN};
use crate::record::RowKind;
use anyhow::{anyhow, Result};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// One matching line, as a worker hands it back.
struct Found {
    line: u64,
    /// The row as it is in the file (kept only for `--format jsonl`).
    bytes: Vec<u8>,
    matched: Matched,
}

/// What a worker makes of a batch: the matches and the batch's last line, or the first row that
/// could not be read.
type BatchResult = Result<(Vec<Found>, u64), (u64, String)>;

pub fn run(args: &QueryArgs) -> Result<ExitCode> {
    // Ctrl-C stops the reads between batches (a slow regex over a large file can take minutes);
    // the main read then says how far it got.
    let _handled = crate::native::signals::handled_elsewhere();
    let (rollouts, source) = positionals(args)?;
    let query = parse_query(&source)?;
    let extra: Vec<Field> = args
        .fields
        .iter()
        .map(|name| {
            Query::parse(name)
                .ok()
                .and_then(|q| match q.expr() {
                    crate::query::Expr::Truthy(f) => Some(f.clone()),
                    _ => None,
                })
                .ok_or_else(|| UsageError(format!("--fields: `{name}` is not a field name")))
        })
        .collect::<Result<_, _>>()?;
    let needs_tasks = query.needs_tasks() || extra.iter().any(is_task_field);
    check_input(
        Input {
            path: &rollouts,
            flag: "ROLLOUTS",
        },
        needs_tasks || args.strict,
    )?;
    if let Some(path) = &args.inputs {
        check_input(
            Input {
                path,
                flag: "--inputs",
            },
            false,
        )?;
    }
    let name = rollouts.display().to_string();
    let wants_verdicts = query
        .fields()
        .into_iter()
        .chain(&extra)
        .any(|f| *f == Field::Verdict);
    let (facts, present) = run_facts(
        &rollouts,
        args.inputs.as_deref(),
        FactsWanted {
            verdicts: wants_verdicts,
            tasks: needs_tasks,
            strict: args.strict,
        },
        args.pass_threshold,
        args.single_step,
        args.max_line_bytes,
    )?;
    if args.strict {
        strict_check(&query, &extra, &present, &facts)?;
    }
    let format = match args.format {
        Some(f) => f,
        None if crate::native::out::stdout_is_terminal() => QueryFormat::Table,
        None => QueryFormat::Keys,
    };
    if format == QueryFormat::Rows && !args.count {
        return super::query_rows::print_rows(&rollouts, &query, &facts, args);
    }
    let mut printer = Printer::new(format, args, &query);
    let keep_bytes = format == QueryFormat::Jsonl && !args.count;
    // The table's columns: output tokens, then --fields (values read only for a table).
    let mut wanted = Vec::new();
    if format == QueryFormat::Table && !args.count {
        wanted.push(Field::Usage(vec!["output_tokens".to_string()]));
        wanted.extend(extra);
    }
    let read = for_each_batch(
        &rollouts,
        &name,
        args.max_line_bytes,
        |batch| eval_batch(&query, &facts, &wanted, batch, keep_bytes),
        |found| {
            // What a batch found before the signal counts; then the read stops.
            printer.add(found, &name)?;
            match crate::native::signals::caught() {
                Some(sig) => Err(Halt::Interrupted(sig)),
                None => Ok(()),
            }
        },
    );
    match read {
        Ok(()) | Err(Halt::Limit) => {}
        Err(Halt::Error(e)) => return Err(e),
        Err(Halt::Interrupted(sig)) => {
            crate::note!(
                "Interrupted: read '{name}' up to line {}; {} matching rollout(s) so far.",
                printer.lines_done,
                printer.count
            );
            return Ok(ExitCode::from(
                128u8.saturating_add(u8::try_from(sig).unwrap_or(0)),
            ));
        }
    }
    printer.finish();
    Ok(ExitCode::SUCCESS)
}

/// What a query needs read of the run before its matches: upstream's verdicts, the task
/// aggregates, the run's field names (`--strict`).
pub(super) struct FactsWanted {
    pub verdicts: bool,
    pub tasks: bool,
    pub strict: bool,
}

/// What a query knows of the run beyond a row ([`RunFacts`]), and with `strict` the run's
/// top-level field names: the inputs' agents, the verdicts beside the rollouts, a first read
/// for the task aggregates, as `wanted` asks.
pub(super) fn run_facts(
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
pub(super) fn matching_keys(
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
pub(super) fn parse_query(source: &str) -> Result<Query, UsageError> {
    Query::parse(source).map_err(|e| {
        let caret = " ".repeat(e.column.saturating_sub(1));
        UsageError(format!("the expression, {e}\n  {source}\n  {caret}^"))
    })
}

fn is_task_field(f: &Field) -> bool {
    matches!(
        f,
        Field::TaskMeanReward | Field::TaskPassRate | Field::TaskGroup
    )
}

/// `ROLLOUTS EXPR`, or `EXPR` with `--rollouts`.
fn positionals(args: &QueryArgs) -> Result<(PathBuf, String), UsageError> {
    match (&args.rollouts, args.positional.as_slice()) {
        (Some(r), [expr]) => Ok((r.clone(), expr.clone())),
        (None, [rollouts, expr]) => Ok((PathBuf::from(rollouts), expr.clone())),
        (Some(_), _) => Err(UsageError(
            "with --rollouts, give only the expression: `gymscope query --rollouts R 'EXPR'`".into(),
        )),
        (None, _) => Err(UsageError(
            "give the rollouts file and the expression: `gymscope query ROLLOUTS 'EXPR'` (or --rollouts R 'EXPR')".into(),
        )),
    }
}

/// Why a read stopped before the end: enough matches, or an error.
pub(super) enum Halt {
    Limit,
    Error(anyhow::Error),
    /// Ctrl-C or SIGTERM: the read stops between batches (the signal's number).
    Interrupted(i32),
}

impl From<ReadError> for Halt {
    fn from(e: ReadError) -> Self {
        Halt::Error(e.into())
    }
}

/// Reads `path` in line batches on every core, `work` on each batch in a worker thread, `done`
/// with each result in file order. A line over the limit stops the read after the lines before
/// it are done (the first error in file order is the one reported).
pub(super) fn for_each_batch<Out: Send>(
    path: &Path,
    name: &str,
    max_line: u64,
    work: impl Fn(&LineBatch) -> Out + Sync,
    mut done: impl FnMut(Out) -> Result<(), Halt>,
) -> Result<(), Halt> {
    std::thread::scope(|scope| {
        let work = &work;
        let workers = (0..parallel::workers()).map(|_| move |batch: LineBatch| work(&batch));
        let mut pool = OrderedPool::start(scope, workers);
        let mut splitter = LineSplitter::with_max_line_bytes(max_line);
        let mut batch = LineBatch::new(RowKind::Rollout);
        let mut full = Vec::new();
        let mut too_long = None;
        let cut = |span, line: &[u8], batch: &mut LineBatch, full: &mut Vec<LineBatch>| {
            batch.push(span, line);
            if batch.is_full() {
                full.push(std::mem::replace(batch, LineBatch::new(RowKind::Rollout)));
            }
            Ok::<_, std::convert::Infallible>(())
        };
        for_each_chunk::<Halt>(path, name, |chunk| {
            let pushed = splitter.push(chunk, |span, line| cut(span, line, &mut batch, &mut full));
            for b in full.drain(..) {
                pool.send(b, &mut done)?;
            }
            if let Err(SplitError::TooLong(t)) = pushed {
                too_long = Some(t);
                return Ok(false);
            }
            Ok(true)
        })?;
        if too_long.is_none() {
            let Ok(()) = splitter.finish(|span, line| cut(span, line, &mut batch, &mut full));
        }
        full.push(batch);
        for b in full.drain(..).filter(|b| !b.is_empty()) {
            pool.send(b, &mut done)?;
        }
        pool.finish(&mut done)?;
        match too_long {
            Some(t) => Err(ReadError::TooLong {
                file: name.to_string(),
                line: t.line,
                limit: t.limit,
            }
            .into()),
            None => Ok(()),
        }
    })
}

fn eval_batch(
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
            match crate::native::signals::caught() {
                Some(sig) => Err(Halt::Interrupted(sig)),
                None => Ok(()),
            }
        },
    );
    match read {
        Ok(()) | Err(Halt::Limit) => Ok(present),
        Err(Halt::Error(e)) => Err(e),
        Err(Halt::Interrupted(sig)) => Err(anyhow!("interrupted by signal {sig}")),
    }
}

pub(super) fn row_error(name: &str, line: u64, message: &str) -> Halt {
    Halt::Error(anyhow!("'{name}' line {line}: {message}"))
}

/// `--strict`: every top-level field the expression names is in some row of the run.
fn strict_check(
    query: &Query,
    extra: &[Field],
    present: &BTreeSet<String>,
    facts: &RunFacts,
) -> Result<(), UsageError> {
    for f in query.fields().into_iter().chain(extra) {
        let unknown = match f {
            Field::Path(path) => (!present.contains(&path[0])).then(|| path.join(".")),
            Field::Verdict if facts.verdicts.is_none() => {
                Some("verdict (no rollout_verdicts.jsonl beside the rollouts)".to_string())
            }
            _ => None,
        };
        if let Some(name) = unknown {
            let has: Vec<&str> = present.iter().map(String::as_str).collect();
            return Err(UsageError(format!(
                "--strict: the run has no field `{name}`; its rows have: {}; and the language has: {}",
                has.join(", "),
                BUILT_IN.join(", ")
            )));
        }
    }
    Ok(())
}

/// Prints matches as they come, in the chosen format, up to `--limit`.
struct Printer<'a> {
    format: QueryFormat,
    count_only: bool,
    limit: Option<u64>,
    fields: &'a [String],
    query: &'a Query,
    count: u64,
    /// The last line read (for the message after an interrupt).
    lines_done: u64,
    per_agent: BTreeMap<String, u64>,
    keys: Vec<(i64, i64)>,
    color: bool,
}

impl<'a> Printer<'a> {
    fn new(format: QueryFormat, args: &'a QueryArgs, query: &'a Query) -> Self {
        let p = Printer {
            format,
            count_only: args.count,
            limit: args.limit,
            fields: &args.fields,
            query,
            count: 0,
            lines_done: 0,
            per_agent: BTreeMap::new(),
            keys: Vec::new(),
            color: crate::native::out::stdout_is_terminal(),
        };
        if format == QueryFormat::Table && !p.count_only {
            let mut head = format!(
                "{:>6} {:>7}  {:<24} {:>8} {:>9} {:>7}",
                "task", "rollout", "agent", "reward", "out tok", "line"
            );
            for f in p.fields {
                head.push_str(&format!(" {f:>10}"));
            }
            head.push_str("  match");
            crate::say!("{head}");
        }
        p
    }

    fn add(&mut self, result: BatchResult, name: &str) -> Result<(), Halt> {
        let (found, last) = result.map_err(|(line, e)| row_error(name, line, &e))?;
        self.lines_done = self.lines_done.max(last);
        for f in found {
            if self.limit.is_some_and(|l| self.count >= l) || crate::native::out::stdout_gone() {
                return Err(Halt::Limit);
            }
            self.count += 1;
            let m = &f.matched;
            let agent = crate::health::agent_label(m.agent.as_deref()).to_string();
            *self.per_agent.entry(agent.clone()).or_insert(0) += 1;
            if self.count_only {
                continue;
            }
            match self.format {
                QueryFormat::Keys => crate::say!("{} {}", m.key.0, m.key.1),
                QueryFormat::Jsonl => {
                    let mut row = f.bytes;
                    row.push(b'\n');
                    crate::native::out::stdout_bytes(&row);
                }
                QueryFormat::Json => self.keys.push(m.key),
                // Printed by `query_rows` (here only with --count, which prints the count).
                QueryFormat::Rows => {}
                QueryFormat::Table => {
                    crate::native::out::stdout_styled_line(&self.table_row(&f, &agent));
                }
            }
        }
        if self.limit.is_some_and(|l| self.count >= l) {
            return Err(Halt::Limit);
        }
        Ok(())
    }

    fn table_row(&self, f: &Found, agent: &str) -> String {
        let m = &f.matched;
        let value = |v: &Option<serde_json::Value>| match v {
            None => "-".to_string(),
            Some(serde_json::Value::String(s)) => s.clone(),
            Some(v) => v.to_string(),
        };
        let tokens = m.fields.first().map_or("-".to_string(), value);
        let mut row = format!(
            "{:>6} {:>7}  {:<24} {:>8} {:>9} {:>7}",
            m.key.0,
            m.key.1,
            agent,
            value(&m.reward),
            tokens,
            f.line
        );
        for v in m.fields.iter().skip(1) {
            row.push_str(&format!(" {:>10}", value(v)));
        }
        // The row's text is the run's: made safe here, piece by piece, so that the highlight
        // itself (ours) is the only escape printed raw.
        let safe = crate::native::out::terminal_safe_str;
        let mut row = safe(&row).into_owned();
        if let Some(hit) = &m.hit {
            let (before, matched, after) = hit.context(30);
            let matched = if self.color {
                format!("\u{1b}[1;7m{}\u{1b}[0m", safe(&matched))
            } else {
                format!("[{}]", safe(&matched))
            };
            row.push_str(&format!(
                "  {}: {}{matched}{}",
                hit.scope,
                safe(&before),
                safe(&after)
            ));
        }
        row
    }

    fn finish(self) {
        // Nobody reads the rest (a closed pipe), or it cannot be written (a full disk: the
        // command's error says so): no summary that would read as "nothing matched".
        if crate::native::out::stdout_gone() {
            return;
        }
        if self.count_only {
            crate::say!("{}", self.count);
            return;
        }
        match self.format {
            QueryFormat::Json => {
                let doc = serde_json::json!({
                    "expression": self.query.source,
                    "count": self.count,
                    "keys": self.keys,
                    "agents": self.per_agent,
                });
                crate::say!("{doc}");
            }
            _ if self.count == 0 => crate::note!(
                "No rollout matches `{}`{}.",
                self.query.source,
                if self
                    .query
                    .fields()
                    .iter()
                    .any(|f| matches!(f, Field::Path(_)))
                {
                    " (a field the rows do not have is missing, and a comparison with it is false: --strict says which)"
                } else {
                    ""
                }
            ),
            QueryFormat::Table => crate::note!(
                "{} matching rollouts{}",
                self.count,
                match self.limit {
                    Some(l) if self.count >= l => format!(" (stopped at --limit {l})"),
                    _ => String::new(),
                }
            ),
            _ => {}
        }
    }
}
