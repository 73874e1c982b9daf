//! `gymscope collect --merge`: joins the shards' materialized inputs, rollouts and failures into
//! the files of `--output`, sorted by rollout key, and aggregates once. Rows are indexed by byte
//! span and copied by offset, so memory holds keys, not rows.

use super::args::CollectArgs;
use super::collect_cmd::{aggregate_metrics, fetch_config};
use crate::collect::files::{self, for_each_line};
use crate::collect::http::Client;
use crate::collect::key::{parse_row, RolloutKey};
use crate::collect::{discover, paths, CollectError};
use anyhow::{bail, Context, Result};
use std::collections::HashMap;
use std::fs::File;
use std::io::Write;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

struct Span {
    key: RolloutKey,
    file: usize,
    offset: u64,
    len: u32,
}

pub(super) async fn run(args: &CollectArgs) -> Result<ExitCode> {
    let shards = if args.shards.is_empty() {
        find_shards(&args.output)?
    } else {
        args.shards.clone()
    };
    if shards.iter().any(|s| s == &args.output) {
        bail!(
            "--output '{}' is one of the shards; merge into another file",
            args.output.display()
        );
    }
    println!("Merging {} shard(s):", shards.len());
    for s in &shards {
        println!("  - {}", s.display());
    }
    let mats: Vec<PathBuf> = shards.iter().map(|s| paths::materialized(s)).collect();
    let mut inputs = index(&mats, true)?;
    let mut known: HashMap<&RolloutKey, usize> = HashMap::new();
    for s in &inputs {
        if let Some(other) = known.insert(&s.key, s.file) {
            bail!(
                "rollout {} is in both '{}' and '{}': these shards are not slices of one run",
                s.key,
                mats[other].display(),
                mats[s.file].display()
            );
        }
    }
    let mut rollouts = index(&shards, false)?;
    let mut seen: HashMap<&RolloutKey, usize> = HashMap::new();
    for s in &rollouts {
        if !known.contains_key(&s.key) {
            bail!(
                "'{}' has rollout {} that no shard's materialized inputs contain",
                shards[s.file].display(),
                s.key
            );
        }
        if let Some(other) = seen.insert(&s.key, s.file) {
            bail!(
                "rollout {} is in both '{}' and '{}'",
                s.key,
                shards[other].display(),
                shards[s.file].display()
            );
        }
    }
    let missing = inputs.len() - rollouts.len();
    drop((known, seen));

    if let Some(dir) = args.output.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).with_context(|| format!("creating '{}'", dir.display()))?;
    }
    inputs.sort_by(|a, b| a.key.cmp(&b.key));
    rollouts.sort_by(|a, b| a.key.cmp(&b.key));
    let materialized = paths::materialized(&args.output);
    copy_spans(&mats, &inputs, &materialized)?;
    copy_spans(&shards, &rollouts, &args.output)?;
    let failures = paths::failures(&args.output);
    files::write_atomically(&failures, |w| {
        for s in &shards {
            let f = paths::failures(s);
            if f.exists() {
                std::io::copy(&mut File::open(&f).map_err(|e| files::io_err(&f, e))?, w)?;
            }
        }
        Ok(())
    })?;
    println!(
        "Merged {} materialized rows and {} rollouts into {}",
        inputs.len(),
        rollouts.len(),
        args.output.display()
    );
    if missing > 0 {
        println!(
            "{missing} materialized rows have no rollout (unfinished, failed or terminal): `--resume` their shards first, or profile with --allow-partial-rollouts."
        );
    }
    let metrics = if args.disable_aggregation {
        None
    } else {
        println!("Computing aggregate metrics");
        let client = Client::default();
        let head = discover::parse_address(&args.head_server).map_err(anyhow::Error::msg)?;
        let config = fetch_config(&client, &head).await?;
        aggregate_metrics(&client, &config, &args.output).await?
    };
    println!(
        "Finished rollout aggregation! View results at:\nFully materialized inputs: {}\nMerged rollouts: {}\nFailures: {}\nAggregate metrics: {}",
        materialized.display(),
        args.output.display(),
        failures.display(),
        metrics.map_or("None".to_string(), |p| p.display().to_string())
    );
    Ok(ExitCode::SUCCESS)
}

/// Every `<output stem>-shardI-of-N<suffix>` beside `output`; all N of them must be there.
fn find_shards(output: &Path) -> Result<Vec<PathBuf>> {
    let dir = output
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let mut found: Vec<(u32, u32, PathBuf)> = Vec::new();
    for entry in std::fs::read_dir(dir).with_context(|| format!("listing '{}'", dir.display()))? {
        let entry = entry?;
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
    let have: Vec<u32> = found.iter().map(|f| f.1).collect();
    let absent: Vec<String> = (0..n)
        .filter(|i| !have.contains(i))
        .map(|i| paths::shard_output(output, i, n).display().to_string())
        .collect();
    if !absent.is_empty() {
        bail!("missing shard files: {}", absent.join(", "));
    }
    Ok(found.into_iter().map(|f| f.2).collect())
}

/// Key and byte span of every row. A line without its newline means a shard is still running
/// or was interrupted.
fn index(paths: &[PathBuf], materialized: bool) -> Result<Vec<Span>> {
    let mut out = Vec::new();
    for (file, path) in paths.iter().enumerate() {
        if !path.exists() {
            bail!("'{}' does not exist", path.display());
        }
        let name = path.display().to_string();
        for_each_line(path, |span, line, newline| {
            if !newline {
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
            let key = RolloutKey::of(&row).ok_or_else(|| {
                CollectError::line(
                    &name,
                    span.line,
                    "row has no `_ng_task_index` / `_ng_rollout_index`",
                )
            })?;
            out.push(Span {
                key,
                file,
                offset: span.offset,
                len: span.len,
            });
            Ok(true)
        })?;
    }
    Ok(out)
}

fn copy_spans(sources: &[PathBuf], spans: &[Span], to: &Path) -> Result<()> {
    let files: Vec<File> = sources
        .iter()
        .map(|p| File::open(p).with_context(|| format!("opening '{}'", p.display())))
        .collect::<Result<_>>()?;
    let mut buf = Vec::new();
    files::write_atomically(to, |w| {
        for s in spans {
            buf.resize(s.len as usize, 0);
            files[s.file]
                .read_exact_at(&mut buf, s.offset)
                .map_err(|e| files::io_err(&sources[s.file], e))?;
            w.write_all(&buf)?;
            w.write_all(b"\n")?;
        }
        Ok(())
    })?;
    Ok(())
}
