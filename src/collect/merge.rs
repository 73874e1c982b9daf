//! `gymscope collect --merge` (native): joins the shards' materialized inputs, rollouts and
//! failures into the files of `--output`, sorted by rollout key, and aggregates once. Rows are
//! indexed by byte span and copied by offset, so memory holds keys, not rows.
//!
//! Every check runs before anything is written (the shards, their rows, the head server), and
//! the three outputs are renamed into place only once all of them are complete. A merge with
//! rollouts or shards missing ends as an unfinished collection does (exit 3).

use super::command::Ending;
use super::head::{aggregate_metrics, fetch_config};
use super::http::Client;
use super::key::{parse_row, KeyPart, RolloutKey};
use super::{discover, files, paths, CollectError, Row};
use crate::gym::keys::{ROLLOUT_INDEX, TASK_INDEX};
use crate::names;
use crate::native::files::{Cleared, FilePlan, Handles};
use crate::native::read::for_each_line;
use crate::native::{check_input, AtomicFile, Input, UsageError};
use anyhow::{bail, Context, Result};
use std::collections::HashMap;
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

/// What `--merge` was asked to do.
pub struct MergeOptions {
    pub output: PathBuf,
    /// The shards' rollouts files; empty: every `<output stem>-shardI-of-N` beside `output`.
    pub shards: Vec<PathBuf>,
    pub disable_aggregation: bool,
    pub head_server: String,
    pub max_line_bytes: u64,
    /// Upstream's end-of-run health reports, with these ignored check ids; `None`:
    /// `--no-health-check`.
    pub health_check: Option<Vec<String>>,
    /// Merge what there is when some of the `-of-N` shards are missing (an unfinished merge).
    pub allow_missing_shards: bool,
}

pub(super) struct Span {
    pub(super) key: RolloutKey,
    pub(super) file: usize,
    pub(super) line: u64,
    pub(super) offset: u64,
    pub(super) len: u32,
}

/// Merges the shards; [`Ending::Unfinished`] (exit 3) when rollouts or shards are missing.
pub async fn run(opts: &MergeOptions) -> Result<Ending> {
    let address = if opts.disable_aggregation {
        None
    } else {
        Some(discover::parse_address(&opts.head_server).map_err(UsageError)?)
    };
    let shards = if opts.shards.is_empty() {
        find_shards(&opts.output)?
    } else {
        opts.shards.clone()
    };
    let absent = absent_shards(&shards, &opts.output)?;
    if !absent.is_empty() && !opts.allow_missing_shards {
        bail!(
            "missing shard files: {} (run them, or merge without them with --allow-missing-shards)",
            absent.join(", ")
        );
    }
    let mats: Vec<PathBuf> = shards.iter().map(|s| paths::materialized(s)).collect();
    let materialized = paths::materialized(&opts.output);
    let failures = paths::failures(&opts.output);
    let cleared = check_files(opts, &shards, &mats, [&materialized, &failures])?;
    crate::say!("Merging {} shard(s):", shards.len());
    for s in &shards {
        crate::say!("  - {}", s.display());
    }
    let mut inputs = index(&mats, LastLine::RefuseMaterialized, opts.max_line_bytes)?;
    let mut known: HashMap<&RolloutKey, &Span> = HashMap::new();
    for s in &inputs {
        if let Some(other) = known.insert(&s.key, s) {
            bail!(
                "{}: these shards are not slices of one run",
                in_both(&mats, other, s)
            );
        }
    }
    let mut rollouts = index(&shards, LastLine::RefuseShard, opts.max_line_bytes)?;
    let mut seen: HashMap<&RolloutKey, &Span> = HashMap::new();
    for s in &rollouts {
        if !known.contains_key(&s.key) {
            bail!(
                "'{}' line {}: rollout {} is in no shard's materialized inputs",
                shards[s.file].display(),
                s.line,
                s.key
            );
        }
        if let Some(other) = seen.insert(&s.key, s) {
            bail!("{}", in_both(&shards, other, s));
        }
    }
    let missing = inputs.len() - rollouts.len();
    drop((known, seen));
    // The head server is asked before anything is written: a merge that cannot aggregate
    // writes nothing.
    let head = if opts.disable_aggregation {
        None
    } else {
        let client = Client::default();
        let head = address.context("an address when aggregating")?;
        let config = fetch_config(&client, &head).await.with_context(|| {
            format!(
                "the head server at {} (pass --head-server, or --disable-aggregation to merge without aggregate metrics); nothing was written",
                opts.head_server
            )
        })?;
        Some((client, config))
    };

    if let Some(dir) = opts.output.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).with_context(|| format!("creating '{}'", dir.display()))?;
    }
    inputs.sort_by(|a, b| a.key.cmp(&b.key));
    rollouts.sort_by(|a, b| a.key.cmp(&b.key));
    // All three are written in full before any is renamed into place.
    let mat_out = copy_spans(&cleared, &mats, &inputs, &materialized)?;
    let main_out = copy_spans(&cleared, &shards, &rollouts, &opts.output)?;
    let mut fail_out = cleared.create(&failures)?;
    for s in &shards {
        let f = paths::failures(s);
        if f.exists() {
            let mut from = File::open(&f).map_err(|e| files::io_err(&f, e))?;
            std::io::copy(&mut from, &mut fail_out)
                .with_context(|| format!("copying '{}'", f.display()))?;
        }
    }
    mat_out.commit()?;
    main_out.commit()?;
    fail_out.commit()?;
    crate::say!(
        "Merged {} materialized rows and {} rollouts into {}",
        inputs.len(),
        rollouts.len(),
        opts.output.display()
    );
    if missing > 0 {
        crate::say!(
            "{missing} materialized rows have no rollout (unfinished, failed or terminal): `--resume` their shards first, or profile with --allow-partial-rollouts."
        );
    }
    if !absent.is_empty() {
        crate::say!(
            "{} shard(s) missing, merged without them: {}",
            absent.len(),
            absent.join(", ")
        );
    }
    let metrics = if let Some((client, config)) = head {
        crate::say!("Computing aggregate metrics");
        aggregate_metrics(
            &client,
            &config,
            &discover::topology(&config),
            std::slice::from_ref(&opts.output),
            &[],
            (&opts.output, &cleared),
            opts.max_line_bytes,
        )
        .await?
    } else {
        None
    };
    crate::say!(
        "Finished rollout aggregation! View results at:\nFully materialized inputs: {}\nMerged rollouts: {}\nFailures: {}\nAggregate metrics: {}",
        materialized.display(),
        opts.output.display(),
        failures.display(),
        metrics.map_or("None".to_string(), |p| p.display().to_string())
    );
    if let (Some(ignored), false) = (&opts.health_check, opts.disable_aggregation) {
        super::evidence::print_reports(&opts.output, ignored, opts.max_line_bytes, &cleared);
    }
    Ok(if missing > 0 || !absent.is_empty() {
        Ending::Unfinished
    } else {
        Ending::Success
    })
}

/// The shards of `I/N` names that are not among `shards` (shard files carry their `-of-N`):
/// empty when every one is there, or when the names do not say which run they slice.
/// "rollout K is in both 'a' line 1 and 'b' line 2": one rollout at two spans of `files`.
fn in_both(files: &[PathBuf], first: &Span, again: &Span) -> String {
    format!(
        "rollout {} is in both '{}' line {} and '{}' line {}",
        again.key,
        files[first.file].display(),
        first.line,
        files[again.file].display(),
        again.line
    )
}

fn absent_shards(shards: &[PathBuf], output: &Path) -> Result<Vec<String>> {
    let slices: Option<Vec<(u32, u32)>> = shards
        .iter()
        .map(|s| names::shard_of(&s.to_string_lossy()))
        .collect();
    let Some(slices) = slices else {
        return Ok(Vec::new());
    };
    let Some(&(_, n)) = slices.first() else {
        return Ok(Vec::new());
    };
    if slices.iter().any(|&(_, m)| m != n) {
        bail!("the shard files are slices of different shard counts; name the shards of one run");
    }
    Ok((0..n)
        .filter(|i| !slices.iter().any(|&(j, _)| j == *i))
        .map(|i| paths::shard_output(output, i, n).display().to_string())
        .collect())
}

/// Before reading: every shard file is a regular file, and no output (the merged files, the
/// aggregate metrics, the health reports) is a shard's file (by identity: `-o ./shard0…`, links
/// and `..` are all caught). Usage errors, exit 2.
fn check_files(
    opts: &MergeOptions,
    shards: &[PathBuf],
    mats: &[PathBuf],
    others: [&Path; 2],
) -> Result<Cleared> {
    if opts.output.is_dir() {
        return Err(UsageError(format!(
            "--output '{}' is a directory; give the merged rollouts file's name",
            opts.output.display()
        ))
        .into());
    }
    let side: Vec<PathBuf> = shards.iter().map(|s| paths::failures(s)).collect();
    let mut plan = FilePlan::new();
    for (s, m) in shards.iter().zip(mats) {
        check_input(Input::new(s, "shard"), true)?;
        check_input(Input::new(m, "shard's materialized inputs"), true)?;
    }
    for p in shards.iter().chain(mats).chain(&side) {
        plan.input(p, "a shard's file");
    }
    plan.output(&opts.output, "--output");
    for out in others {
        plan.output(out, "a merged file");
    }
    plan.output(
        paths::aggregate_metrics(&opts.output),
        "the aggregate metrics",
    );
    super::evidence::plan_reports(&mut plan, &opts.output);
    Ok(plan.clear()?)
}

/// Every `<output stem>-shardI-of-N<suffix>` beside `output`; all N of them must be there.
fn find_shards(output: &Path) -> Result<Vec<PathBuf>> {
    let dir = output
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let mut found: Vec<(u32, u32, PathBuf)> = Vec::new();
    for entry in std::fs::read_dir(dir).with_context(|| format!("listing '{}'", dir.display()))? {
        let entry = entry.with_context(|| format!("listing '{}'", dir.display()))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if let Some((i, n)) = paths::parse_shard_name(output, &name) {
            found.push((n, i, output.with_file_name(name)));
        }
    }
    found.sort();
    let Some(&(n, _, _)) = found.first() else {
        bail!(
            "no shard files like '{}' found",
            paths::shard_output(output, 0, 2).display()
        );
    };
    if found.iter().any(|f| f.0 != n) {
        bail!(
            "shard files of different shard counts are next to '{}'; name the shards to merge",
            output.display()
        );
    }
    // Which of the N are absent is `absent_shards`'s to say.
    Ok(found.into_iter().map(|f| f.2).collect())
}

/// The row's key, which must be two integers as `gymscope profile` requires (not `null`, a
/// float, a string or an object), or what is wrong with it.
fn integer_key(row: &Row) -> Result<RolloutKey, String> {
    let part = |name: &str| match row.get(name) {
        None => Err(format!("field `{name}` is missing")),
        Some(v @ serde_json::Value::Number(n)) if n.is_i64() || n.is_u64() => Ok(KeyPart::of(v)),
        Some(v) => Err(format!(
            "field `{name}` must be an integer, found {}",
            crate::json::describe(v)
        )),
    };
    Ok(RolloutKey(part(TASK_INDEX)?, part(ROLLOUT_INDEX)?))
}

/// How `index` treats a last line without its newline.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum LastLine {
    /// A shard still running or interrupted (`--merge`): refused, as materialized inputs.
    RefuseShard,
    RefuseMaterialized,
    /// Read as any other line (`aggregate`, as upstream reads files line by line).
    Accept,
}

/// Key, line and byte span of every row.
pub(super) fn index(paths: &[PathBuf], last: LastLine, max_line: u64) -> Result<Vec<Span>> {
    let mut out = Vec::new();
    let materialized = last == LastLine::RefuseMaterialized;
    for (file, path) in paths.iter().enumerate() {
        let name = path.display().to_string();
        for_each_line::<CollectError>(path, &name, max_line, |span, line, newline| {
            // v0.7.0's `gym eval aggregate` skips blank and whitespace-only lines.
            if last == LastLine::Accept && line.iter().all(u8::is_ascii_whitespace) {
                return Ok(true);
            }
            if !newline && last != LastLine::Accept {
                return Err(CollectError::line(
                    &name,
                    span.line,
                    if materialized {
                        "incomplete last line"
                    } else {
                        "incomplete last line: is this shard still running? `--resume` it first"
                    },
                ));
            }
            let row = parse_row(line).map_err(|e| CollectError::line(&name, span.line, e))?;
            let key = integer_key(&row).map_err(|e| CollectError::line(&name, span.line, e))?;
            out.push(Span {
                key,
                file,
                line: span.line,
                offset: span.offset,
                len: span.len,
            });
            Ok(true)
        })?;
    }
    Ok(out)
}

/// Writes the rows at `spans`, in order, into a temporary file for `to` (committed by the caller).
fn copy_spans(
    cleared: &Cleared,
    sources: &[PathBuf],
    spans: &[Span],
    to: &Path,
) -> Result<AtomicFile> {
    write_spans(cleared, sources, spans, to, |_, line, out| {
        out.write_all(line)?;
        Ok(out.write_all(b"\n")?)
    })
}

/// Writes what `each` makes of the line at each of `spans`, in order, into a temporary file for
/// `to` (committed by the caller); the shards are read a few open files at a time.
pub(super) fn write_spans(
    cleared: &Cleared,
    sources: &[PathBuf],
    spans: &[Span],
    to: &Path,
    mut each: impl FnMut(&Span, &[u8], &mut AtomicFile) -> Result<()>,
) -> Result<AtomicFile> {
    let mut files = Handles::new(sources);
    let mut out = cleared.create(to)?;
    let mut buf = Vec::new();
    for s in spans {
        buf.resize(s.len as usize, 0);
        files.read_exact_at(s.file, &mut buf, s.offset)?;
        each(s, &buf, &mut out).with_context(|| format!("writing '{}'", to.display()))?;
    }
    Ok(out)
}
