//! `gymscope aggregate` (native): NeMo Gym v0.7.0's `gym eval aggregate`
//! (`rollout_collection.py` `RolloutAggregationHelper`). The rollouts files matching
//! `--input-glob` are merged into `--output` (sorted by rollout key, each row as orjson writes
//! it), scored once per environment server (`head::aggregate_metrics`, shared with `collect` and
//! `collect --merge`), their sidecars say what the score misses, and the health reports follow.
//!
//! Rows are indexed by byte span (`merge::index`) and rewritten one at a time, so memory holds
//! keys, not rows (upstream holds every row).

use super::environment::Topology;
use super::head::{aggregate_metrics, fetch_config};
use super::http::Client;
use super::key::{parse_row, to_line, KeyPart};
use super::merge::{index, LastLine, Span};
use super::{aggregate, discover, paths, CollectError};
use crate::gym::keys::{FAILURE_CLASS, ROLLOUT_INDEX, TASK_INDEX};
use crate::native::read::for_each_line;
use crate::native::{check_input, check_output, AtomicFile, Input, UsageError};
use anyhow::{Context, Result};
use serde_json::Value;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::fs::File;
use std::io::Write;
use std::os::unix::fs::FileExt;
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
}

/// The files a glob list names, as v0.7.0's `_expand_input_glob`: patterns split on commas and
/// trimmed, each one's matches sorted, duplicates dropped, and a shard's own sidecar and
/// materialized inputs (which its glob also matches) left out.
pub fn expand_input_glob(input_glob: &str) -> Result<Vec<PathBuf>> {
    // Upstream's `-i` becomes a Hydra override, where a value with a comma must be quoted
    // (`-i "'a,b'"`): the quotes are Hydra's, not the pattern's.
    let input_glob = hydra_unquoted(input_glob);
    let options = glob::MatchOptions {
        case_sensitive: true,
        require_literal_separator: true,
        // Python's glob: `*` does not match a leading dot.
        require_literal_leading_dot: true,
    };
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    for pattern in input_glob
        .split(',')
        .map(str::trim)
        .filter(|p| !p.is_empty())
    {
        let mut matches: Vec<PathBuf> = glob::glob_with(pattern, options)
            .map_err(|e| UsageError(format!("--input-glob: pattern `{pattern}`: {e}")))?
            .filter_map(Result::ok)
            .collect();
        matches.sort_by(|a, b| a.to_string_lossy().cmp(&b.to_string_lossy()));
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
    let shards = expand_input_glob(&opts.input_glob)?;
    if shards.is_empty() {
        anyhow::bail!(
            "No shards matched input_glob={}",
            crate::gym::py::str_repr(hydra_unquoted(&opts.input_glob))
        );
    }
    let inputs: Vec<Input> = shards
        .iter()
        .map(|p| Input {
            path: p,
            flag: "--input-glob",
        })
        .collect();
    for input in &inputs {
        check_input(*input, false)?;
    }
    let metrics_path = paths::aggregate_metrics(&opts.output);
    if opts.merge_shards {
        check_output(&opts.output, &inputs)?;
    }
    check_output(&metrics_path, &inputs)?;
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
    // score (upstream's `servers_by_agent`).
    let client = Client::default();
    let head = if rows.is_empty() {
        None
    } else {
        let address = discover::parse_address(&opts.head_server).map_err(anyhow::Error::msg)?;
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
    let dropped = dropped_failures(&shards, &rows, &topology, opts.max_line_bytes)?;

    if let Some(dir) = opts.output.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).with_context(|| format!("creating '{}'", dir.display()))?;
    }
    if opts.merge_shards {
        crate::say!("Merging shards into {}", opts.output.display());
        rewrite_spans(&shards, &rows, &opts.output)?.commit()?;
    }
    let scored = rows.len() as u64;
    drop(rows);
    let metrics = if let Some((config, topology)) = &head {
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
            &[],
            &opts.output,
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
        aggregate::coverage_report(
            scored + dropped.values().sum::<u64>(),
            scored,
            &dropped.into_iter().collect::<Vec<_>>(),
            "the shards' _failures.jsonl sidecars"
        )
    );
    if let Some(ignored) = &opts.health_check {
        let checked = if opts.merge_shards {
            vec![opts.output.clone()]
        } else {
            shards.clone()
        };
        let out_dir = super::evidence::report_dir(&opts.output);
        match super::evidence::write_reports(&checked, &out_dir, ignored.clone(), opts.max_line_bytes)
        {
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

/// Failure classes of the rollouts the score misses: each shard's sidecar read against that
/// shard's own rows (separate runs number their tasks from 0), the last attempt of a rollout
/// standing, those whose rollout no shard landed counted by class ("unknown" without one).
fn dropped_failures(
    shards: &[PathBuf],
    rows: &[Span],
    topology: &Topology,
    max_line: u64,
) -> Result<BTreeMap<String, u64>> {
    let mut latest: HashMap<Identity, String> = HashMap::new();
    let mut order: Vec<Identity> = Vec::new();
    for (file, shard) in shards.iter().enumerate() {
        let sidecar = paths::failures(shard);
        if !sidecar.exists() {
            continue;
        }
        let own: HashSet<&super::key::RolloutKey> = rows
            .iter()
            .filter(|s| s.file == file)
            .map(|s| &s.key)
            .collect();
        // Per shard, the last row of each (task, rollout) stands.
        let mut last: HashMap<(KeyPart, KeyPart), (Identity, String)> = HashMap::new();
        let mut shard_order = Vec::new();
        let name = sidecar.display().to_string();
        for_each_line::<CollectError>(&sidecar, &name, max_line, |span, line, _| {
            let row = parse_row(line).map_err(|e| CollectError::line(&name, span.line, e))?;
            let part = |k: &str| KeyPart::of(row.get(k).unwrap_or(&Value::Null));
            let key = (part(TASK_INDEX), part(ROLLOUT_INDEX));
            let class = match row.get(FAILURE_CLASS) {
                Some(Value::String(s)) if !s.is_empty() => s.clone(),
                Some(v) if crate::gym::py::truthy(v) => crate::gym::py::repr(v),
                _ => "unknown".to_string(),
            };
            if last
                .insert(key.clone(), (identity(&row, topology), class))
                .is_none()
            {
                shard_order.push(key);
            }
            Ok(true)
        })?;
        for key in shard_order {
            if own.contains(&super::key::RolloutKey(key.0.clone(), key.1.clone())) {
                continue;
            }
            let (id, class) = last.remove(&key).expect("recorded above");
            if latest.insert(id.clone(), class).is_none() {
                order.push(id);
            }
        }
    }
    if latest.is_empty() {
        return Ok(BTreeMap::new());
    }
    let mut landed: HashSet<Identity> = HashSet::new();
    let files: Vec<File> = shards
        .iter()
        .map(|p| File::open(p).with_context(|| format!("opening '{}'", p.display())))
        .collect::<Result<_>>()?;
    let mut buf = Vec::new();
    for s in rows {
        let row = read_span(&files, shards, s, &mut buf)?;
        landed.insert(identity(&row, topology));
    }
    let mut dropped = BTreeMap::new();
    for id in order {
        if !landed.contains(&id) {
            *dropped.entry(latest[&id].clone()).or_insert(0) += 1;
        }
    }
    Ok(dropped)
}

fn read_span(
    files: &[File],
    names: &[PathBuf],
    s: &Span,
    buf: &mut Vec<u8>,
) -> Result<serde_json::Map<String, Value>> {
    buf.resize(s.len as usize, 0);
    files[s.file]
        .read_exact_at(buf, s.offset)
        .with_context(|| format!("reading '{}'", names[s.file].display()))?;
    parse_row(buf)
        .map_err(|e| CollectError::line(&names[s.file].display().to_string(), s.line, e).into())
}

/// Writes the rows at `spans`, in order, each as orjson writes it (upstream re-serializes every
/// row), into a temporary file for `to`, committed by the caller.
fn rewrite_spans(sources: &[PathBuf], spans: &[Span], to: &Path) -> Result<AtomicFile> {
    let files: Vec<File> = sources
        .iter()
        .map(|p| File::open(p).with_context(|| format!("opening '{}'", p.display())))
        .collect::<Result<_>>()?;
    let mut out = AtomicFile::create(to)?;
    let mut buf = Vec::new();
    for s in spans {
        let row = read_span(&files, sources, s, &mut buf)?;
        out.write_all(&to_line(&row))
            .with_context(|| format!("writing '{}'", to.display()))?;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs_are_split_sorted_deduplicated_and_skip_sidecars() {
        let dir = tempfile::tempdir().unwrap();
        for name in [
            "r-b.jsonl",
            "r-a.jsonl",
            "r-a_failures.jsonl",
            "r-a_materialized_inputs.jsonl",
            ".r-hidden.jsonl",
        ] {
            std::fs::write(dir.path().join(name), "").unwrap();
        }
        let d = dir.path().display();
        let got = expand_input_glob(&format!("'{d}/r-*.jsonl , {d}/r-a.jsonl,,'")).unwrap();
        let names: Vec<String> = got
            .iter()
            .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, ["r-a.jsonl", "r-b.jsonl"]);
        assert!(expand_input_glob(&format!("{d}/nothing*"))
            .unwrap()
            .is_empty());
    }
}
