//! The first step of a fresh run (native): the input read, typed and materialized exactly as
//! upstream does, with upstream's messages; the previous run's files moved out of the way.

use super::environment::Topology;
use super::key::{to_line, KeyPart};
use super::materialize::{Materializer, NumRepeats, Options};
use super::options::CollectOptions;
use super::routing::{Routing, RoutingKeys};
use super::shard::{Shard, ShardFilter};
use super::{hydra, CollectError, Row};
use crate::gym::keys::{ROLLOUT_INDEX, TASK_INDEX};
use crate::gym::py;
use crate::native::files::Cleared;
use crate::native::read::for_each_line;
use crate::native::UsageError;
use anyhow::{bail, Context, Result};
use serde_json::Value;
use std::fs::File;
use std::io::Write;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

/// A Hydra-typed routing key (`--agent-map '{a: b}'`).
fn hydra_value(flag: &str, v: Option<&String>) -> Result<Option<Value>> {
    v.map(|s| hydra::parse(s).map_err(|e| UsageError(format!("{flag}: {e}")).into()))
        .transpose()
}

/// The routing keys, checked as v0.7.0's config model checks them (before anything else runs).
pub(super) fn routing(args: &CollectOptions) -> Result<Routing> {
    let agent_map = hydra_value("--agent-map", args.agent_map.as_ref())?;
    let fan_out = hydra_value("--fan-out", args.fan_out.as_ref())?;
    let routes = hydra_value(
        "--environment-server-routes",
        args.environment_server_routes.as_ref(),
    )?;
    Ok(Routing::new(&RoutingKeys {
        agent_name: args.agent.as_deref().filter(|a| !a.is_empty()),
        agent_map: agent_map.as_ref(),
        fan_out: fan_out.as_ref(),
        mode: args.environment_routing_mode.as_deref(),
        environment_server_name: args.environment_server_name.as_deref(),
        environment_server_routes: routes.as_ref(),
    })
    .map_err(UsageError)?)
}

/// Where `--interleave-repeats` stages the materialized rows before their final order.
pub(super) fn interleave_staging(materialized: &Path) -> std::path::PathBuf {
    let mut name = materialized.file_name().unwrap_or_default().to_os_string();
    name.push(".interleave");
    materialized.with_file_name(name)
}

/// The values a fresh run types before it starts (`--num-repeats`, the `responses_create_params`
/// overrides), checked before the head server is asked: a bad one is a usage error (exit 2), as
/// v0.7.0's config model refuses it before anything runs.
pub(super) fn check_values(args: &CollectOptions) -> Result<()> {
    overrides(args).map_err(|e| UsageError(format!("{e:#}")))?;
    num_repeats(args).map_err(|e| UsageError(format!("{e:#}")))?;
    Ok(())
}

fn num_repeats(args: &CollectOptions) -> Result<NumRepeats> {
    NumRepeats::from_value(&match &args.num_repeats {
        Some(s) => hydra::parse(s).map_err(|e| anyhow::anyhow!("--num-repeats: {e}"))?,
        None => Value::from(1),
    })
    .map_err(|e| anyhow::anyhow!("--num-repeats: {e}"))
}

pub(super) fn materialize(
    args: &CollectOptions,
    routing: Routing,
    topology: &Topology,
    input: &Path,
    shard: Option<Shard>,
    path: &Path,
    cleared: &Cleared,
) -> Result<()> {
    let limit = args.limit.filter(|n| *n > 0);
    let opts = Options {
        add_seed: args.num_repeats_add_seed,
        routing,
        topology: topology.clone(),
        overrides: overrides(args)?,
        num_repeats: num_repeats(args)?,
    };
    if let Some(n) = limit {
        crate::say!("Limiting the number of rows to {n}");
    }
    if opts.add_seed {
        crate::say!("Adding unique `seed` values to each input via metadata.extra_body (only honored by vLLM model servers)");
    }
    if let Some(map) = opts.routing.agent_map_repr() {
        crate::say!("Routing rows via agent_map {map}");
    }
    if !opts.overrides.is_empty() {
        crate::say!(
            "Overriding responses_create_params fields with {}",
            py::repr(&Value::Object(opts.overrides.clone()))
        );
    }
    match &opts.num_repeats {
        NumRepeats::Fixed(n) => {
            crate::say!("Repeating rows {n} times (in a pattern of abc to aabbcc)!");
        }
        NumRepeats::PerKey { .. } => crate::say!(
            "Per-agent num_repeats: {}",
            py::repr(
                &hydra::parse(args.num_repeats.as_deref().unwrap_or("{}")).unwrap_or(Value::Null)
            )
        ),
    }
    if let Some(s) = shard {
        crate::say!(
            "Shard {} of {}: running every {}th task starting with task number {}",
            s.index,
            s.count,
            s.count,
            s.index
        );
    }
    let input_name = input.display().to_string();
    let mut m = Materializer::new(&opts, &input_name);
    let mut filter = shard.map(ShardFilter::new);
    let mut kept = 0u64;
    // Interleaved repeats (abcabc) are the rows stably sorted by rollout index: they are staged
    // in a temporary file and copied in that order, so memory holds 20 bytes a row.
    let mut rounds: Option<Vec<(u64, u64, u32)>> = args.interleave_repeats.then(Vec::new);
    let target = if rounds.is_some() {
        interleave_staging(path)
    } else {
        path.to_path_buf()
    };
    let mut out = cleared.create(&target)?;
    let mut offset = 0u64;
    let mut index = 0u64;
    for_each_line::<CollectError>(
        input,
        &input_name,
        args.max_line_bytes,
        |_, line, newline| {
            if limit.is_some_and(|n| index >= n) {
                return Ok(false);
            }
            let limit_index = if limit.is_some() { index } else { 0 };
            index += 1;
            m.push_line(line, newline, limit_index, &mut |row: &Row| {
                if let Some(f) = filter.as_mut() {
                    if !f.keep(&KeyPart::of(&row[TASK_INDEX])) {
                        return Ok(());
                    }
                }
                kept += 1;
                let bytes = to_line(row);
                if let Some(r) = rounds.as_mut() {
                    let round = row.get(ROLLOUT_INDEX).and_then(Value::as_u64).unwrap_or(0);
                    r.push((round, offset, bytes.len() as u32));
                    offset += bytes.len() as u64;
                }
                out.write_all(&bytes)?;
                Ok(())
            })?;
            Ok(true)
        },
    )?;
    let summary = m.finish()?;
    for warning in summary.warnings {
        crate::note!("Warning: {warning}");
    }
    match rounds {
        None => out.commit()?,
        Some(mut rounds) => {
            crate::say!("Interleaving repeats (in a pattern of aabbcc to abcabc)");
            out.flush()?;
            let staged = out
                .temp_path()
                .context("--interleave-repeats needs the materialized file to be a regular file")?;
            let staged = File::open(staged)
                .with_context(|| format!("reading back '{}'", staged.display()))?;
            rounds.sort_by_key(|r| r.0);
            cleared.write_file(path, |w| -> Result<()> {
                let mut buf = Vec::new();
                for (_, at, len) in &rounds {
                    buf.resize(*len as usize, 0);
                    staged.read_exact_at(&mut buf, *at)?;
                    w.write_all(&buf)?;
                }
                Ok(())
            })?;
            drop(out); // the staging file, never committed, removes itself
        }
    }
    crate::say!("Materialized {kept} rows into {}", path.display());
    Ok(())
}

/// `responses_create_params` overrides in upstream's order: the three flags, then the others.
fn overrides(args: &CollectOptions) -> Result<Row> {
    let mut out = Row::new();
    for (key, value) in [
        ("temperature", &args.temperature),
        ("top_p", &args.top_p),
        ("max_output_tokens", &args.max_output_tokens),
    ] {
        if let Some(v) = value {
            out.insert(
                key.into(),
                hydra::parse(v).map_err(|e| anyhow::anyhow!("--{}: {e}", key.replace('_', "-")))?,
            );
        }
    }
    for kv in &args.responses_create_params {
        let (key, value) = kv
            .split_once('=')
            .with_context(|| format!("--responses-create-params expects KEY=VALUE, got `{kv}`"))?;
        let value = hydra::parse(value)
            .map_err(|e| anyhow::anyhow!("--responses-create-params {key}: {e}"))?;
        if key.is_empty() {
            let Value::Object(map) = value else {
                bail!("responses_create_params must be a dict, got `{kv}`");
            };
            out.extend(map);
        } else {
            hydra::set_dotted(&mut out, key, value);
        }
    }
    Ok(out)
}

pub(super) fn remove_if_exists(path: &Path) -> Result<()> {
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            Err(e).with_context(|| format!("removing '{}'", path.display()))
        }
        _ => Ok(()),
    }
}

/// A fresh run keeps an old failures sidecar as `<name>.prev` instead of counting its rows as
/// attempts of the new run's rollouts (upstream leaves it in place).
pub(super) fn set_aside_old_failures(failures: &Path) -> Result<()> {
    if std::fs::metadata(failures).is_ok_and(|m| m.len() > 0) {
        let mut prev = failures.as_os_str().to_owned();
        prev.push(".prev");
        std::fs::rename(failures, &prev)
            .with_context(|| format!("moving '{}' aside", failures.display()))?;
        crate::say!(
            "Moved the previous run's failures to {}",
            PathBuf::from(prev).display()
        );
    } else {
        remove_if_exists(failures)?;
    }
    Ok(())
}
