//! `gymscope query`: the rollouts where an expression holds. The core parses and evaluates
//! (`gymscope::query`); this reads the run on every core (line batches to worker threads,
//! results taken back in file order), learns what the expression needs of the whole run first
//! (task aggregates, the inputs' agents, upstream's verdicts) and prints the matches.

use super::args::{QueryArgs, QueryFormat};
use crate::native::query_read::{
    for_each_batch, for_each_row, parse_query, row_error, run_facts, BatchResult, FactsWanted,
    Found, Halt,
};
use crate::native::{check_input, Input, UsageError};
use crate::query::{Field, Query, RunFacts, BUILT_IN};
use anyhow::Result;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

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
        Input::new(&rollouts, "ROLLOUTS"),
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
        return print_rows(&rollouts, &query, &facts, args);
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
        |batch| crate::native::query_read::eval_batch(&query, &facts, &wanted, batch, keep_bytes),
        |found| {
            // What a batch found before the signal counts; then the read stops.
            printer.add(found, &name)?;
            Halt::if_signalled()
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
            return Ok(crate::native::signals::exit_code(sig));
        }
    }
    printer.finish();
    Ok(ExitCode::SUCCESS)
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
                // Printed by `print_rows` (here only with --count, which prints the count).
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

/// `query --format rows`: each match's row as a JSON line, up to `--limit`.
fn print_rows(
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
        Halt::if_signalled()
    });
    match read {
        Ok(()) | Err(Halt::Limit) => {}
        Err(Halt::Error(e)) => return Err(e),
        Err(Halt::Interrupted(sig)) => {
            crate::note!("Interrupted: {count} matching rollout(s) so far.");
            return Ok(crate::native::signals::exit_code(sig));
        }
    }
    if count == 0 && !crate::native::out::stdout_gone() {
        crate::note!("No rollout matches `{}`.", query.source);
    }
    Ok(ExitCode::SUCCESS)
}
