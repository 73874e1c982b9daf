//! `gymscope aggregate` (native): NeMo Gym v0.7.0's `gym eval aggregate`
//! (`rollout_collection.py` `RolloutAggregationHelper`). The rollouts files matching
//! `--input-glob` are merged into `--output` (sorted by rollout key, each row as orjson writes
//! it), scored once per environment server (`head::aggregate_metrics`, shared with `collect` and
//! `collect --merge`), their sidecars say what the score misses, and the health reports follow.
//!
//! Rows are indexed by byte span (`merge::index`) and rewritten one at a time, so memory holds
//! keys, not rows (upstream holds every row).

use super::counted::{failure_row, routing_identity, zero_row, CarriedKeys};
use super::environment::Topology;
use super::head::{aggregate_metrics, fetch_config};
use super::http::Client;
use super::key::{parse_row, to_line, KeyPart};
use super::merge::{index, write_spans, LastLine, Span};
use super::zeros::Latest;
use super::{aggregate, discover, paths, CollectError, Row};
use crate::gym::keys::{FAILURE_CLASS, ROLLOUT_INDEX, TASK_INDEX};
use crate::native::files::{Cleared, FilePlan, Handles};
use crate::native::read::for_each_line;
use crate::native::{check_input, AtomicFile, Input, UsageError};
use anyhow::{Context, Result};
use serde_json::Value;
use std::collections::{HashMap, HashSet};
use std::io::Write;
use std::path::{Path, PathBuf};

/// What `gymscope aggregate` was asked to do.
pub struct AggregateOptions {
    /// A glob, or globs separated by commas.
    pub input_glob: String,
    pub output: PathBuf,
    /// Write the merged rollouts to `output` (upstream's `merge_shards`, default true).
    pub merge_shards: bool,
    pub head_server: String,
    pub max_line_bytes: u64,
    /// The health reports with these ignored check ids; `None`: `--no-health-check`.
    pub health_check: Option<Vec<String>>,
    /// v0.7.0's counted zeros.
    pub zeros: Zeros,
}

/// `count_failure_classes_as_zero` and `count_missing_rollouts_as_zero`: rows added to the
/// aggregate request only.
#[derive(Default)]
pub struct Zeros {
    pub classes: Vec<String>,
    pub missing: bool,
}

/// The files a glob list names, as v0.7.0's `_expand_input_glob`: patterns split on commas and
/// trimmed, each one's matches sorted, duplicates dropped, and a shard's own sidecar and
/// materialized inputs (which its glob also matches) left out.
pub fn expand_input_glob(input_glob: &str) -> Result<Vec<PathBuf>> {
    // Upstream's `-i` becomes a Hydra override, where a value with a comma must be quoted
    // (`-i "'a,b'"`): the quotes are Hydra's, not the pattern's.
    let input_glob = hydra_unquoted(input_glob);
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    for pattern in input_glob
        .split(',')
        .map(str::trim)
        .filter(|p| !p.is_empty())
    {
        // Python's glob without `recursive=True`: `**` is `*`, so a link loop is bounded.
        let matches = crate::native::files::glob_files(pattern, "--input-glob")?;
        for path in matches {
            let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned());
            if stem.is_some_and(|s| s.ends_with("_failures") || s.ends_with("_materialized_inputs"))
            {
                continue;
            }
            if seen.insert(path.clone()) {
                out.push(path);
            }
        }
    }
    Ok(out)
}

fn hydra_unquoted(s: &str) -> &str {
    let t = s.trim();
    for q in ['\'', '"'] {
        if t.len() >= 2 && t.starts_with(q) && t.ends_with(q) {
            return &t[1..t.len() - 1];
        }
    }
    s
}

pub async fn run(opts: &AggregateOptions) -> Result<()> {
    // A bad address is the command line's mistake (exit 2), whatever the shards hold.
    let address = discover::parse_address(&opts.head_server).map_err(UsageError)?;
    let shards = expand_input_glob(&opts.input_glob)?;
    if shards.is_empty() {
        anyhow::bail!(
            "No shards matched input_glob={}",
            crate::gym::py::str_repr(hydra_unquoted(&opts.input_glob))
        );
    }
    let mut plan = FilePlan::new();
    for shard in &shards {
        // Rows are read again by offset (merge, coverage): a pipe cannot be.
        check_input(Input::new(shard, "--input-glob"), true)?;
        // Each shard's sidecar and materialized inputs are read too (the counted zeros).
        plan.input(shard, "--input-glob")
            .input(paths::failures(shard), "a shard's _failures.jsonl")
            .input(paths::materialized(shard), "a shard's materialized inputs");
    }
    if opts.merge_shards {
        plan.output(&opts.output, "--output");
    }
    plan.output(
        paths::aggregate_metrics(&opts.output),
        "the aggregate metrics",
    );
    if opts.health_check.is_some() {
        super::evidence::plan_reports(&mut plan, &opts.output);
    }
    let cleared = plan.clear()?;
    crate::say!("Aggregating {} shard(s):", shards.len());
    for s in &shards {
        crate::say!("  - {}", s.display());
    }
    let mut rows = index(&shards, LastLine::Accept, opts.max_line_bytes)?;
    crate::say!(
        "Loaded {} rollout record(s) from {} shard(s)",
        rows.len(),
        shards.len()
    );
    // Python's sort is stable: rows with one key keep their files' order.
    rows.sort_by(|a, b| a.key.cmp(&b.key));

    // The head server is asked before anything is written, and only when there is something to
    // score or to count (upstream's `servers_by_agent`): counted zeros alone are scored too.
    let client = Client::default();
    let counting = !opts.zeros.classes.is_empty() || opts.zeros.missing;
    let head = if rows.is_empty() && !counting {
        None
    } else {
        let config = fetch_config(&client, &address).await.with_context(|| {
            format!(
                "the head server at {} (pass --head-server); nothing was written",
                opts.head_server
            )
        })?;
        let topology = discover::topology(&config);
        Some((config, topology))
    };
    let topology = head.as_ref().map(|h| h.1.clone()).unwrap_or_default();
    let accounting = account(&shards, &rows, &topology, &opts.zeros, opts.max_line_bytes)?;

    if let Some(dir) = opts.output.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).with_context(|| format!("creating '{}'", dir.display()))?;
    }
    if opts.merge_shards {
        crate::say!("Merging shards into {}", opts.output.display());
        rewrite_spans(&cleared, &shards, &rows, &opts.output)?.commit()?;
    }
    let scored = rows.len() as u64 + accounting.counted.len() as u64;
    drop(rows);
    let counted_lines = aggregate::counted_zero_lines(
        &opts.zeros.classes,
        accounting.failures,
        opts.zeros.missing,
        accounting.imputed,
    );
    // v0.7.0 (`RolloutAggregationHelper.run_from_config`): the counted-failures line, each shard's
    // warnings as its materialized rows are read, then the imputed-zeros line.
    let split = usize::from(!opts.zeros.classes.is_empty());
    for line in counted_lines[..split]
        .iter()
        .chain(&accounting.warnings)
        .chain(&counted_lines[split..])
    {
        crate::say!("{line}");
    }
    let metrics = if let Some((config, topology)) = head.as_ref().filter(|_| scored > 0) {
        let sources: Vec<PathBuf> = if opts.merge_shards {
            vec![opts.output.clone()]
        } else {
            shards.clone()
        };
        aggregate_metrics(
            &client,
            config,
            topology,
            &sources,
            &accounting.counted,
            (&opts.output, &cleared),
            opts.max_line_bytes,
        )
        .await?
    } else {
        crate::note!("The shards hold no rollout rows: there is nothing to score.");
        None
    };
    crate::say!(
        "Finished rollout aggregation! View results at:\nMerged rollouts: {}\nAggregate metrics: {}{}",
        if opts.merge_shards {
            opts.output.display().to_string()
        } else {
            "<not merged>".into()
        },
        metrics.map_or("None".to_string(), |p| p.display().to_string()),
        {
            let mut c = aggregate::coverage_report(
                scored + accounting.dropped.iter().map(|(_, n)| n).sum::<u64>(),
                scored,
                &accounting.dropped,
                "the shards' _failures.jsonl sidecars",
            );
            c.push_str(&aggregate::imputed_line(
                accounting.imputed,
                scored + accounting.dropped.iter().map(|(_, n)| n).sum::<u64>(),
            ));
            c
        }
    );
    if let Some(ignored) = &opts.health_check {
        let checked = if opts.merge_shards {
            vec![opts.output.clone()]
        } else {
            shards.clone()
        };
        let out_dir = super::evidence::report_dir(&opts.output);
        match super::evidence::write_reports(
            &checked,
            &out_dir,
            ignored.clone(),
            opts.max_line_bytes,
            &cleared,
        ) {
            Ok(lines) => {
                // Upstream's two lines on stdout; gymscope's behaviour line on stderr.
                let (lines, behaviour) = lines.rsplit_once('\n').unwrap_or((&lines, ""));
                crate::say!("{lines}");
                if !behaviour.is_empty() {
                    crate::note!("{behaviour}");
                }
            }
            Err(e) => crate::note!(
                "Warning: rollout health checks failed after aggregation; aggregate artifacts are still available: {e:#}"
            ),
        }
    }
    Ok(())
}

/// A rollout's identity across shards (v0.7.0 `_identity_key`): the group that scores it, then
/// its task and rollout as Python compares them.
type Identity = (Option<String>, KeyPart, KeyPart);

fn identity(row: &serde_json::Map<String, Value>, topology: &Topology) -> Identity {
    let part = |k: &str| KeyPart::of(row.get(k).unwrap_or(&Value::Null));
    (
        topology.metrics_group(row),
        part(TASK_INDEX),
        part(ROLLOUT_INDEX),
    )
}

/// What the shards' sidecars and materialized inputs say about the rollouts the merged rows
/// lack: the zeros to count (v0.7.0's `count_*` keys) and the rest, by class.
#[derive(Default)]
struct Accounting {
    /// Missing rollouts by failure class, first seen first ("unknown" without one).
    dropped: Vec<(String, u64)>,
    /// Rows added to the aggregate request: counted failures, then imputed zeros.
    counted: Vec<Row>,
    failures: usize,
    imputed: usize,
    /// The `[WARNING] …` lines of counting missing rollouts, printed where v0.7.0 prints them:
    /// after the merge and the counted-failures line, before the imputed-zeros line.
    warnings: Vec<String>,
}

/// Each shard's sidecar is read against that shard's own rows (separate runs number their tasks
/// from 0), the last attempt of a rollout standing, rollouts keyed by the server that scores them
/// (v0.7.0 `RolloutAggregationHelper.run_from_config`).
fn account(
    shards: &[PathBuf],
    rows: &[Span],
    topology: &Topology,
    zeros: &Zeros,
    max_line: u64,
) -> Result<Accounting> {
    let each = |path: &Path, f: &mut dyn FnMut(Row)| -> Result<()> {
        let name = path.display().to_string();
        for_each_line::<CollectError>(path, &name, max_line, |span, line, _| {
            if !line.iter().all(u8::is_ascii_whitespace) {
                f(parse_row(line).map_err(|e| CollectError::line(&name, span.line, e))?);
            }
            Ok(true)
        })?;
        Ok(())
    };
    let own = |file: usize| -> HashSet<(KeyPart, KeyPart)> {
        rows.iter()
            .filter(|s| s.file == file)
            .map(|s| (s.key.0.clone(), s.key.1.clone()))
            .collect()
    };
    let mut latest: Latest<Identity> = Latest::default();
    let mut recorded: Vec<HashSet<(KeyPart, KeyPart)>> = vec![HashSet::new(); shards.len()];
    for (file, shard) in shards.iter().enumerate() {
        let sidecar = paths::failures(shard);
        if !sidecar.exists() {
            continue;
        }
        let mut last: Latest<(KeyPart, KeyPart)> = Latest::default();
        each(&sidecar, &mut |row| last.put(rollout_key(&row), row))?;
        let mine = own(file);
        for (k, row) in last.rows {
            recorded[file].insert(k.clone());
            if mine.contains(&k) {
                continue;
            }
            latest.put(identity(&row, topology), row);
        }
    }
    let mut out = Accounting::default();
    let counting = !zeros.classes.is_empty() || zeros.missing;
    if latest.rows.is_empty() && !zeros.missing {
        return Ok(out);
    }
    // The merged rows' identities, and the keys each group's rows carry.
    let mut landed: HashSet<Identity> = HashSet::new();
    let mut carried = CarriedKeys::default();
    let mut files = Handles::new(shards);
    let mut buf = Vec::new();
    for s in rows {
        let row = read_span(&mut files, shards, s, &mut buf)?;
        landed.insert(identity(&row, topology));
        if counting {
            carried.add_in(topology.metrics_group(&row), &row);
        }
    }
    for (id, row) in &latest.rows {
        let class = row.get(FAILURE_CLASS).and_then(Value::as_str);
        if !landed.contains(id)
            && class.is_some_and(|c| zeros.classes.iter().any(|w| w == c))
            && routing_identity(row).is_some()
        {
            out.counted.push(failure_row(row));
        }
    }
    out.failures = out.counted.len();
    if zeros.missing {
        let mut accounted: HashSet<Identity> = landed.clone();
        accounted.extend(latest.rows.iter().map(|(id, _)| id.clone()));
        for (file, shard) in shards.iter().enumerate() {
            let materialized = paths::materialized(shard);
            if !materialized.exists() {
                out.warnings.push(format!(
                    "[WARNING] {} is missing; rollouts owed by that shard cannot be counted",
                    materialized.display()
                ));
                continue;
            }
            let mut scored = own(file);
            let mut unroutable = 0u64;
            each(&materialized, &mut |row| {
                let k = rollout_key(&row);
                if scored.contains(&k) || recorded[file].contains(&k) {
                    return;
                }
                let Some(zero) = zero_row(&row) else {
                    unroutable += 1;
                    return;
                };
                scored.insert(k);
                if accounted.insert(identity(&zero, topology)) {
                    out.counted.push(zero);
                }
            })?;
            if unroutable > 0 {
                out.warnings.push(format!("[WARNING] {unroutable} materialized rollout(s) name no agent or environment server and are not counted"));
            }
        }
        out.imputed = out.counted.len() - out.failures;
    }
    if !out.counted.is_empty() {
        let wanted: HashMap<Identity, usize> = out
            .counted
            .iter()
            .enumerate()
            .map(|(i, r)| (identity(r, topology), i))
            .collect();
        for shard in shards {
            let materialized = paths::materialized(shard);
            if !materialized.exists() {
                continue;
            }
            each(&materialized, &mut |source| {
                if let Some(i) = wanted.get(&identity(&source, topology)) {
                    carried.fill_in(
                        topology.metrics_group(&source),
                        &mut out.counted[*i],
                        &source,
                    );
                }
            })?;
        }
    }
    let counted_ids: HashSet<Identity> =
        out.counted.iter().map(|r| identity(r, topology)).collect();
    for (id, row) in &latest.rows {
        if landed.contains(id) || counted_ids.contains(id) {
            continue;
        }
        let class = match row.get(FAILURE_CLASS) {
            Some(Value::String(s)) if !s.is_empty() => s.clone(),
            Some(v) if crate::gym::py::truthy(v) => crate::gym::py::repr(v),
            _ => "unknown".to_string(),
        };
        match out.dropped.iter_mut().find(|(c, _)| *c == class) {
            Some((_, n)) => *n += 1,
            None => out.dropped.push((class, 1)),
        }
    }
    Ok(out)
}

fn rollout_key(row: &Row) -> (KeyPart, KeyPart) {
    let part = |k: &str| KeyPart::of(row.get(k).unwrap_or(&Value::Null));
    (part(TASK_INDEX), part(ROLLOUT_INDEX))
}

fn read_span(
    files: &mut Handles,
    names: &[PathBuf],
    s: &Span,
    buf: &mut Vec<u8>,
) -> Result<serde_json::Map<String, Value>> {
    buf.resize(s.len as usize, 0);
    files.read_exact_at(s.file, buf, s.offset)?;
    parse_row(buf)
        .map_err(|e| CollectError::line(&names[s.file].display().to_string(), s.line, e).into())
}

/// Writes the rows at `spans`, in order, each as orjson writes it (upstream re-serializes every
/// row), into a temporary file for `to`, committed by the caller.
fn rewrite_spans(
    cleared: &Cleared,
    sources: &[PathBuf],
    spans: &[Span],
    to: &Path,
) -> Result<AtomicFile> {
    write_spans(cleared, sources, spans, to, |s, line, out| {
        let row = parse_row(line)
            .map_err(|e| CollectError::line(&sources[s.file].display().to_string(), s.line, e))?;
        Ok(out.write_all(&to_line(&row))?)
    })
}
