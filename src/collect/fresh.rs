//! The first step of a fresh run (native): the input read, typed and materialized exactly as
//! upstream does, with upstream's messages; the previous run's files moved out of the way.

use super::key::{to_line, KeyPart};
use super::materialize::{Materializer, NumRepeats, Options};
use super::options::CollectOptions;
use super::shard::{Shard, ShardFilter};
use super::{hydra, CollectError, Row};
use crate::gym::keys::TASK_INDEX;
use crate::gym::py;
use crate::native::atomic::write_file;
use crate::native::read::for_each_line;
use anyhow::{bail, Context, Result};
use serde_json::Value;
use std::io::Write;
use std::path::{Path, PathBuf};

pub(super) fn materialize(
    args: &CollectOptions,
    input: &Path,
    shard: Option<Shard>,
    path: &Path,
) -> Result<()> {
    let limit = args.limit.filter(|n| *n > 0);
    let opts = Options {
        add_seed: args.num_repeats_add_seed,
        agent_name: args.agent.clone().filter(|a| !a.is_empty()),
        overrides: overrides(args)?,
        num_repeats: NumRepeats::from_value(&match &args.num_repeats {
            Some(s) => hydra::parse(s).map_err(|e| anyhow::anyhow!("--num-repeats: {e}"))?,
            None => Value::from(1),
        })
        .map_err(anyhow::Error::msg)?,
    };
    if let Some(n) = limit {
        crate::say!("Limiting the number of rows to {n}");
    }
    if let Some(a) = &opts.agent_name {
        crate::say!(
            "Routing rows via agent_map {{'_default': {}}}",
            py::str_repr(a)
        );
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
        NumRepeats::PerAgent { .. } => crate::say!(
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
    write_file(path, |w| -> Result<(), CollectError> {
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
                    w.write_all(&to_line(row))?;
                    Ok(())
                })?;
                Ok(true)
            },
        )?;
        let summary = std::mem::replace(&mut m, Materializer::new(&opts, &input_name)).finish()?;
        for warning in summary.warnings {
            crate::note!("Warning: {warning}");
        }
        Ok(())
    })?;
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
