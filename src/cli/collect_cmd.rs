//! `gymscope collect`: fresh run or resume, materialization, discovery, the run, aggregation and
//! the messages upstream prints around them.

use super::args::CollectArgs;
use crate::collect::discover;
use crate::collect::head::{aggregate_metrics, fetch_config};
use crate::collect::history;
use crate::collect::http::{self, Client};
use crate::collect::key::{parse_row, to_line, KeyPart, RolloutKey};
use crate::collect::materialize::{Materializer, NumRepeats, Options};
use crate::collect::merge::{self, MergeOptions};
use crate::collect::resume::{self, History};
use crate::collect::run::{self, Report};
use crate::collect::shard::{Shard, ShardFilter};
use crate::collect::{aggregate, hydra, paths, CollectError, Row, TASK_INDEX};
use crate::native::atomic::write_file;
use crate::native::read::for_each_line;
use crate::native::{check_output, Input};
use anyhow::{bail, Context, Result};
use serde_json::Value;
use std::collections::{BTreeSet, HashMap};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

pub fn run(args: &CollectArgs) -> Result<ExitCode> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    if args.merge {
        let opts = MergeOptions {
            output: args.output.clone(),
            shards: args.shards.clone(),
            disable_aggregation: args.disable_aggregation,
            head_server: args.head_server.clone(),
            max_line_bytes: args.max_line_bytes,
        };
        rt.block_on(merge::run(&opts))?;
        return Ok(ExitCode::SUCCESS);
    }
    if let Some(extra) = args.shards.first() {
        return Err(crate::native::UsageError(format!(
            "unexpected argument '{}' (shard files are only taken with --merge)",
            extra.display()
        ))
        .into());
    }
    rt.block_on(collect(args))
}

async fn collect(args: &CollectArgs) -> Result<ExitCode> {
    let shard = match &args.shard {
        Some(s) => Some(s.parse::<Shard>().map_err(anyhow::Error::msg)?),
        None => None,
    };
    let output = match shard {
        Some(s) => paths::shard_output(&args.output, s.index, s.count),
        None => args.output.clone(),
    };
    let materialized = paths::materialized(&output);
    let failures = paths::failures(&output);
    let client = Client::default();
    let config = fetch_config(
        &client,
        &discover::parse_address(&args.head_server).map_err(anyhow::Error::msg)?,
    )
    .await?;
    if let Some(dir) = output.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).with_context(|| format!("creating '{}'", dir.display()))?;
    }

    let resuming = args.resume && materialized.exists() && output.exists();
    let mut history = History::default();
    if resuming {
        history::read(&output, &failures, args.max_line_bytes, &mut history)?;
    } else {
        if args.resume {
            if !output.exists() {
                println!(
                    "Skipping resume_from_cache because output_fpath {} doesn't exist!",
                    output.display()
                );
            }
            if !materialized.exists() {
                println!(
                    "Skipping resume_from_cache because materialized_jsonl_fpath {} doesn't exist!",
                    materialized.display()
                );
            }
        } else {
            println!("Clearing output fpath since `resume_from_cache=False`!");
        }
        let input = args
            .input
            .as_ref()
            .context("--input is required for a fresh collection (the tasks JSONL)")?;
        let input = crate::collect::files::resolve_input(
            input,
            std::env::var("NEMO_GYM_EXTRA_ROOTS").ok().as_deref(),
        )?;
        // A fresh run replaces all three files: none may be the input (by identity).
        for out in [&output, &materialized, &failures] {
            check_output(
                out,
                &[Input {
                    path: &input,
                    flag: "--input",
                }],
            )?;
        }
        materialize(args, &input, shard, &materialized)?;
        remove_if_exists(&output)?;
        set_aside_old_failures(&failures)?;
    }

    let (max_attempts, warning) = resume::max_attempts(
        std::env::var("NEMO_GYM_MAX_ROLLOUT_ATTEMPTS")
            .ok()
            .as_deref(),
    );
    if let Some(w) = warning {
        println!("{w}");
    }
    let mut plan = history.plan(max_attempts);
    let mut agents = BTreeSet::new();
    let mat_name = materialized.display().to_string();
    for_each_line::<CollectError>(
        &materialized,
        &mat_name,
        args.max_line_bytes,
        |span, line, _| {
            let row = parse_row(line).map_err(|e| CollectError::line(&mat_name, span.line, e))?;
            let key = RolloutKey::of(&row).ok_or_else(|| {
                CollectError::line(
                    &mat_name,
                    span.line,
                    "row has no `_ng_task_index` / `_ng_rollout_index`",
                )
            })?;
            if plan.count(&key).is_some() {
                agents.insert(aggregate::agent_of(&row).unwrap_or_default().to_string());
            }
            Ok(true)
        },
    )?;
    if resuming {
        println!("{}", plan.counts.report());
        plan.check_done_rows_known(&output.display().to_string(), &mat_name)?;
    }
    let mut addresses = HashMap::new();
    for agent in &agents {
        let a = discover::agent_address(&config, agent).map_err(anyhow::Error::msg)?;
        addresses.insert(
            agent.clone(),
            http::uri(&a.host, a.port, "/run").map_err(anyhow::Error::msg)?,
        );
    }
    if let Some(n) = args.concurrency.filter(|n| *n > 0) {
        println!("Querying with {n} concurrent requests");
    }
    let total = plan.counts.to_run;
    let report = if total > 0 {
        run::run(
            run::Config {
                materialized: materialized.clone(),
                output: output.clone(),
                failures: failures.clone(),
                agents: addresses,
                concurrency: args.concurrency.filter(|n| *n > 0).unwrap_or(1024),
                timeout: args
                    .timeout
                    .filter(|t| *t > 0.0)
                    .map(Duration::from_secs_f64),
                grace: Duration::from_secs_f64(args.grace.max(0.0)),
                fail_fast: args.fail_fast,
                total,
                progress: !args.no_progress,
            },
            &plan,
            client.clone(),
        )
        .await?
    } else {
        // Upstream opens both files before dispatch, so they exist afterwards.
        for p in [&output, &failures] {
            std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(p)
                .with_context(|| format!("opening '{}'", p.display()))?;
        }
        Report::default()
    };
    print_summary(&report, &output, &failures);
    if let Some(msg) = &report.fatal {
        eprintln!("Error: {msg}");
        eprintln!(
            "Every finished rollout is on disk. To continue:\n  {}",
            resume_command()
        );
        return Ok(ExitCode::FAILURE);
    }
    if let Some(signal) = report.interrupted {
        eprintln!(
            "Stopped by {signal}. Every finished rollout is on disk. To continue:\n  {}",
            resume_command()
        );
        return Ok(ExitCode::from(130));
    }

    println!("Sorting results to ensure consistent ordering");
    let metrics = if args.disable_aggregation {
        println!("Skipping aggregate-metrics computation because disable_aggregation=True. Run `gymscope collect --merge` (or `gym eval aggregate`) after all shards finish to compute the global metrics.");
        None
    } else {
        println!("Computing aggregate metrics");
        aggregate_metrics(&client, &config, &output, args.max_line_bytes).await?
    };
    println!(
        "Finished rollout collection! View results at:\nFully materialized inputs: {}\nRollouts: {}\nAggregate metrics: {}",
        materialized.display(),
        output.display(),
        metrics.map_or("None".to_string(), |p| p.display().to_string())
    );
    // 0 only when every rollout succeeded: `collect && profile` must not go on after failures.
    let outcome = history::outcome(
        &materialized,
        &output,
        &failures,
        max_attempts,
        args.max_line_bytes,
    )?;
    if let Some(msg) = outcome.unfinished_report(&failures.display().to_string()) {
        eprintln!("{msg}");
        if outcome.to_run > 0 {
            eprintln!("To retry them:\n  {}", resume_command());
        }
        return Ok(ExitCode::from(3));
    }
    Ok(ExitCode::SUCCESS)
}

fn materialize(args: &CollectArgs, input: &Path, shard: Option<Shard>, path: &Path) -> Result<()> {
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
        println!("Limiting the number of rows to {n}");
    }
    if let Some(a) = &opts.agent_name {
        println!("Using `{a}` for rows that do not already have an agent ref");
    }
    if !opts.overrides.is_empty() {
        println!(
            "Overriding responses_create_params fields with {}",
            py_repr(&Value::Object(opts.overrides.clone()))
        );
    }
    match &opts.num_repeats {
        NumRepeats::Fixed(n) => {
            println!("Repeating rows {n} times (in a pattern of abc to aabbcc)!")
        }
        NumRepeats::PerAgent { .. } => println!(
            "Per-agent num_repeats: {}",
            py_repr(
                &hydra::parse(args.num_repeats.as_deref().unwrap_or("{}")).unwrap_or(Value::Null)
            )
        ),
    }
    if let Some(s) = shard {
        println!(
            "Shard {} of {}: running every {}th task starting with task number {}",
            s.index, s.count, s.count, s.index
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
            eprintln!("Warning: {warning}");
        }
        Ok(())
    })?;
    println!("Materialized {kept} rows into {}", path.display());
    Ok(())
}

/// `responses_create_params` overrides in upstream's order: the three flags, then the others.
fn overrides(args: &CollectArgs) -> Result<Row> {
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

fn remove_if_exists(path: &Path) -> Result<()> {
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            Err(e).with_context(|| format!("removing '{}'", path.display()))
        }
        _ => Ok(()),
    }
}

/// A fresh run keeps an old failures sidecar as `<name>.prev` instead of counting its rows as
/// attempts of the new run's rollouts (upstream leaves it in place).
fn set_aside_old_failures(failures: &Path) -> Result<()> {
    if std::fs::metadata(failures).is_ok_and(|m| m.len() > 0) {
        let mut prev = failures.as_os_str().to_owned();
        prev.push(".prev");
        std::fs::rename(failures, &prev)
            .with_context(|| format!("moving '{}' aside", failures.display()))?;
        println!(
            "Moved the previous run's failures to {}",
            PathBuf::from(prev).display()
        );
    } else {
        remove_if_exists(failures)?;
    }
    Ok(())
}

/// Python's `repr` of a JSON value, for upstream's messages.
fn py_repr(v: &Value) -> String {
    match v {
        Value::Null => "None".into(),
        Value::Bool(b) => if *b { "True" } else { "False" }.into(),
        Value::Number(n) => n.to_string(),
        Value::String(s) => format!("'{}'", s.replace('\\', "\\\\").replace('\'', "\\'")),
        Value::Array(a) => format!("[{}]", a.iter().map(py_repr).collect::<Vec<_>>().join(", ")),
        Value::Object(o) => format!(
            "{{{}}}",
            o.iter()
                .map(|(k, v)| format!("'{k}': {}", py_repr(v)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

fn print_summary(r: &Report, output: &Path, failures: &Path) {
    if r.completed == 0 && r.interrupted.is_none() && r.fatal.is_none() {
        println!("Nothing to run: every rollout is done, terminal or out of attempts.");
        return;
    }
    let secs = r.elapsed.as_secs_f64().max(1e-9);
    println!(
        "Collected {} rollouts in {:.1} s ({:.1} rollouts/s): {} to {}, {} to {}{}, {} not persisted (kill-shaped).{}",
        r.completed,
        secs,
        r.completed as f64 / secs,
        r.main,
        output.display(),
        r.sidecar,
        failures.display(),
        if r.collector_failures > 0 {
            format!(" ({} HTTP errors, bad answers or timeouts recorded by gymscope; retried on --resume)", r.collector_failures)
        } else {
            String::new()
        },
        r.nowhere,
        if r.connection_retries > 0 { format!(" {} connection retries.", r.connection_retries) } else { String::new() }
    );
    if !r.status.is_empty() {
        println!("Running means: {}", r.status);
    }
}

/// The command line that continues this run: the same arguments plus `--resume`.
fn resume_command() -> String {
    let mut args: Vec<String> = std::env::args().collect();
    if !args
        .iter()
        .any(|a| a == "--resume" || a.contains("resume_from_cache="))
    {
        args.push("--resume".into());
    }
    args.iter()
        .map(|a| shell_quote(a))
        .collect::<Vec<_>>()
        .join(" ")
}

fn shell_quote(s: &str) -> String {
    let plain = !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"_-./:=+,@%".contains(&b));
    if plain {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}
