//! `gymscope collect` (native): a fresh run or a resume, from materialization through discovery,
//! the run and aggregation to the verdict, with the messages upstream prints around them. The
//! CLI turns flags into [`CollectOptions`](super::options::CollectOptions) and the [`Ending`] into an exit code.

use super::environment::Destination;
use super::head::{aggregate_metrics, fetch_config};
use super::http::{self, Client};
use super::key::{parse_row, RolloutKey};
use super::options::CollectOptions;
use super::resume::{self, History};
use super::run::{self, Report};
use super::{discover, fresh, history, paths, CollectError};
use crate::native::files::FilePlan;
use crate::native::read::for_each_line;
use crate::native::UsageError;
use anyhow::{Context, Result};
use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::Path;
use std::time::Duration;

/// How a collection ended (the CLI's exit codes: 0, 3, 130, 1).
#[derive(Debug, PartialEq, Eq)]
pub enum Ending {
    /// Every rollout succeeded.
    Success,
    /// Rollouts did not succeed (in the failures sidecar, terminal ones included).
    Unfinished,
    /// Stopped by Ctrl-C or SIGTERM.
    Interrupted,
    /// Aborted (`--fail-fast`, a write error).
    Fatal,
}

/// A resume finds the run's files (else the run starts fresh).
fn resuming_possible(args: &CollectOptions, output: &Path, materialized: &Path) -> bool {
    args.resume && materialized.exists() && output.exists()
}

/// Runs a fresh collection or a resume, printing upstream's messages around each step.
pub async fn collect(args: &CollectOptions) -> Result<Ending> {
    let shard = args.shard;
    let output = match shard {
        Some(s) => paths::shard_output(&args.output, s.index, s.count),
        None => args.output.clone(),
    };
    let materialized = paths::materialized(&output);
    let failures = paths::failures(&output);
    // v0.7.0's config model refuses bad routing keys before anything runs (exit 2).
    let routing = fresh::routing(args)?;
    let head_server = discover::parse_address(&args.head_server).map_err(UsageError)?;
    if !resuming_possible(args, &output, &materialized) {
        fresh::check_values(args)?;
    }
    if args.dispatch_budget_s.is_some() && args.concurrency.is_none_or(|n| n == 0) {
        return Err(UsageError("dispatch_budget_s requires a finite positive num_samples_in_parallel; unbounded dispatch can POST the entire queue before the budget is re-checked".into()).into());
    }
    // Every file the run writes, checked before anything runs against the input it reads (a
    // resume rewrites the run's own files: they are its outputs).
    let resuming = resuming_possible(args, &output, &materialized);
    let mut plan = FilePlan::new();
    plan.output(&output, "--output")
        .output(&materialized, "the materialized inputs")
        .output(&failures, "the failures file")
        .output(paths::aggregate_metrics(&output), "the aggregate metrics")
        .output(
            fresh::interleave_staging(&materialized),
            "--interleave-repeats",
        );
    super::evidence::plan_reports(&mut plan, &output);
    let progress_path = args.progress_file.as_ref().map(|p| {
        if p.as_os_str().is_empty() {
            crate::names::beside(&output, crate::names::progress)
        } else {
            p.clone()
        }
    });
    if let Some(p) = &progress_path {
        plan.output(p, "--progress-file");
    }
    let input = match (&args.input, resuming) {
        (Some(input), false) => {
            let input = crate::collect::files::resolve_input(
                input,
                std::env::var("NEMO_GYM_EXTRA_ROOTS").ok().as_deref(),
            )?;
            plan.input(&input, "--input");
            Some(input)
        }
        _ => None,
    };
    let cleared = plan.clear()?;
    let client = Client::default();
    let config = fetch_config(&client, &head_server).await?;
    if let Some(dir) = output.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).with_context(|| format!("creating '{}'", dir.display()))?;
    }

    let mut topology = discover::topology(&config);
    topology.allow_unsupported_pairing |= args.allow_unsupported_pairing;
    let mut history = History::default();
    history.retry_terminal_timeouts = args.retry_terminal_timeouts;
    if resuming {
        if args.retry_invalid_judge_responses {
            history::migrate_invalid_judge_rows(&output, &failures, args.max_line_bytes, &cleared)?;
        }
        history::read(&output, &failures, args.max_line_bytes, &mut history)?;
    } else {
        if args.resume {
            if !output.exists() {
                crate::say!(
                    "Skipping resume_from_cache because output_fpath {} doesn't exist!",
                    output.display()
                );
            }
            if !materialized.exists() {
                crate::say!(
                    "Skipping resume_from_cache because materialized_jsonl_fpath {} doesn't exist!",
                    materialized.display()
                );
            }
        } else {
            crate::say!("Clearing output fpath since `resume_from_cache=False`!");
        }
        let input = input
            .as_ref()
            .context("--input is required for a fresh collection (the tasks JSONL)")?;
        fresh::materialize(
            args,
            routing,
            &topology,
            input,
            shard,
            &materialized,
            &cleared,
        )?;
        fresh::remove_if_exists(&output)?;
        fresh::set_aside_old_failures(&failures)?;
        // As v0.7.0: an earlier run's metrics would describe rollouts that are gone.
        fresh::remove_if_exists(&paths::aggregate_metrics(&output))?;
    }

    let (max_attempts, warning) = resume::max_attempts(
        std::env::var("NEMO_GYM_MAX_ROLLOUT_ATTEMPTS")
            .ok()
            .as_deref(),
    );
    if let Some(w) = warning {
        crate::say!("{w}");
    }
    let mut plan = history.plan(max_attempts);
    // Each destination with the first materialized line that needs it, for messages: v0.7.0
    // resolves every row's environment server before the first `/run`, so a row nothing can
    // reach fails the run up front.
    let mut destinations: Vec<(Destination, u64)> = Vec::new();
    let mut seen: HashSet<Destination> = HashSet::new();
    let mut unknown: BTreeSet<String> = BTreeSet::new();
    // (agent, task_source) of the rows routed by agent: v0.7.0's pairing check.
    let mut pairings: BTreeSet<(String, Option<String>)> = BTreeSet::new();
    // With `dispatch_longest_first`: rows whose earlier attempts recorded their duration.
    let mut longest: Vec<(f64, crate::read::jsonl::LineSpan)> = Vec::new();
    // Rows to run per stamped environment server, first seen first (v0.7.0 prints them).
    let mut routes: Vec<(String, u64)> = Vec::new();
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
                if let Some(seconds) = plan.elapsed(&key).filter(|_| args.dispatch_longest_first) {
                    longest.push((seconds, span));
                }
                // v0.7.0 names every unknown agent at once, before any server is looked up.
                if !row.contains_key(crate::gym::keys::ENVIRONMENT_SERVER) {
                    if let Ok(Some(agent)) = super::routing::agent_name(&row) {
                        if !topology.is_agent(agent) {
                            unknown.insert(agent.to_string());
                            return Ok(true);
                        }
                        let source = row
                            .get(crate::gym::keys::TASK_SOURCE)
                            .and_then(serde_json::Value::as_str)
                            .map(String::from);
                        pairings.insert((agent.to_string(), source));
                    }
                }
                let d = topology
                    .destination(&row)
                    .map_err(|e| CollectError::line(&mat_name, span.line, e))?;
                if seen.insert(d.clone()) {
                    destinations.push((d, span.line));
                }
                if let Some(stamp) = row
                    .get(crate::gym::keys::ENVIRONMENT_SERVER)
                    .and_then(serde_json::Value::as_str)
                {
                    match routes.iter_mut().find(|(s, _)| s == stamp) {
                        Some((_, n)) => *n += 1,
                        None => routes.push((stamp.to_string(), 1)),
                    }
                }
            }
            Ok(true)
        },
    )?;
    if let Some(e) = super::task_source::unknown_agents(&topology, &unknown) {
        anyhow::bail!("{e}");
    }
    if let Some(e) = topology.pairing_error(&pairings) {
        anyhow::bail!("{e}");
    }
    // Known-long rows go first, longest first (a stable sort: ties keep file order), the rest in
    // file order behind them.
    longest.sort_by(|a, b| b.0.total_cmp(&a.0));
    if let Some((seconds, _)) = longest.first() {
        crate::say!(
            "Dispatching longest-first: {} row(s) with known timings (longest {:.0} min) ahead of {} unseen row(s)",
            longest.len(),
            seconds / 60.0,
            plan.counts.to_run - longest.len() as u64
        );
    }
    if resuming {
        crate::say!("{}", plan.counts.report());
        plan.check_done_rows_known(&output.display().to_string(), &mat_name)?;
    }
    let mut addresses = HashMap::new();
    for (d, line) in destinations {
        let a = match &d {
            Destination::Server { name, .. } => {
                discover::server_address(&config, name, "environment server")
            }
            Destination::Agent(agent) => discover::agent_address(&config, agent),
        }
        .map_err(|e| anyhow::anyhow!("'{mat_name}' line {line}: {e}"))?;
        addresses.insert(
            d,
            http::uri(&a.host, a.port, "/run").map_err(anyhow::Error::msg)?,
        );
    }
    if let Some(n) = args.concurrency.filter(|n| *n > 0) {
        crate::say!("Querying with {n} concurrent requests");
    }
    let total = plan.counts.to_run;
    let mut progress_file = progress_path.map(|p| {
        let seed = plan.counts.input_rows.saturating_sub(total);
        super::progress_file::ProgressFile::start(p, cleared.clone(), seed)
    });
    if let Some(dir) = &args.capture_dir {
        std::fs::create_dir_all(dir).with_context(|| format!("creating '{}'", dir.display()))?;
        if total > 0 {
            crate::say!("Clearing existing model-call captures for rollouts being dispatched");
        }
    }
    if !routes.is_empty() {
        let items: Vec<String> = routes
            .iter()
            .map(|(s, n)| format!("{}: {n}", crate::gym::py::str_repr(s)))
            .collect();
        crate::say!("Environment server routes: {{{}}}", items.join(", "));
    }
    if args.route_failures_to_sidecar {
        crate::say!("route_failures_to_sidecar is on: a failed agent /run becomes a sidecar row instead of ending the run, and its rollout leaves the score.");
    }
    if let Some(budget) = args.dispatch_budget_s {
        crate::say!(
            "{}",
            super::latency::budget_line(budget, args.drain_margin_s)
        );
    }
    let report = if total > 0 {
        run::run(
            run::Config {
                materialized: materialized.clone(),
                output: output.clone(),
                failures: failures.clone(),
                topology: topology.clone(),
                addresses,
                concurrency: args.concurrency.filter(|n| *n > 0).unwrap_or(1024),
                timeout: args
                    .timeout
                    .filter(|t| *t > 0.0)
                    .map(Duration::from_secs_f64),
                grace: Duration::from_secs_f64(args.grace.max(0.0)),
                fail_fast: args.fail_fast,
                total,
                progress: !args.no_progress,
                capture_dir: args.capture_dir.clone(),
                first: longest.into_iter().map(|(_, span)| span).collect(),
                budget: args
                    .dispatch_budget_s
                    .map(|b| (Duration::from_secs_f64(b), args.drain_margin_s)),
            },
            &plan,
            client.clone(),
            progress_file.take(),
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
        crate::note!("Error: {msg}");
        crate::note!(
            "Every finished rollout is on disk. To continue:\n  {}",
            args.resume_command
        );
        return Ok(Ending::Fatal);
    }
    if let Some(signal) = report.interrupted {
        crate::note!(
            "Stopped by {signal}. Every finished rollout is on disk. To continue:\n  {}",
            args.resume_command
        );
        return Ok(Ending::Interrupted);
    }
    // v0.7.0's counted zeros (the imputed ones only when this run aggregates).
    let count_missing = args.count_missing_rollouts_as_zero && !args.disable_aggregation;
    let zeros = if args.count_failure_classes_as_zero.is_empty() && !count_missing {
        super::zeros::Zeros::default()
    } else {
        super::zeros::count(
            &args.count_failure_classes_as_zero,
            count_missing,
            &materialized,
            &output,
            &failures,
            args.max_line_bytes,
        )?
    };
    let successes = plan.done_keys() + report.main;
    if total > 0 && successes == 0 && zeros.rows.is_empty() {
        // v0.7.0 stops here (exit 1): there is no score to report.
        let classes: Vec<String> = report
            .failure_classes
            .iter()
            .map(|(c, n)| format!("{}: {n}", crate::gym::py::str_repr(c)))
            .collect();
        let drained = if report.drained > 0 {
            format!(" {} of them were never started because dispatch_budget_s ran out; resume_from_cache dispatches them in the next run.", report.drained)
        } else {
            String::new()
        };
        crate::note!(
            "Error: None of the {total} dispatched rollouts produced a result {{{}}}.{drained} Inspect {}; the run has no score to report.",
            classes.join(", "),
            failures.display()
        );
        if report.sidecar > 0 {
            crate::note!("To retry them:\n  {}", args.resume_command);
        }
        return Ok(Ending::Fatal);
    }
    crate::say!("{}", super::latency::summary(&report.durations));
    if let Some(line) = super::latency::drained_line(report.drained) {
        crate::say!("{line}");
    }

    crate::say!("Sorting results to ensure consistent ordering");
    let metrics = if args.disable_aggregation {
        crate::say!("Skipping aggregate-metrics computation because disable_aggregation=True. Run `gymscope collect --merge` (or `gym eval aggregate`) after all shards finish to compute the global metrics.");
        None
    } else {
        crate::say!("Computing aggregate metrics");
        for line in super::aggregate::counted_zero_lines(
            &args.count_failure_classes_as_zero,
            zeros.failures,
            count_missing,
            zeros.imputed,
        ) {
            crate::say!("{line}");
        }
        aggregate_metrics(
            &client,
            &config,
            &topology,
            std::slice::from_ref(&output),
            &zeros.rows,
            (&output, &cleared),
            args.max_line_bytes,
        )
        .await?
    };
    // v0.7.0's coverage: the materialized rollouts the score misses, by this run's classes.
    let mut coverage = super::aggregate::coverage_report(
        plan.counts.input_rows,
        successes + zeros.rows.len() as u64,
        &report.failure_classes,
        &failures.display().to_string(),
    );
    coverage.push_str(&super::aggregate::imputed_line(
        zeros.imputed,
        plan.counts.input_rows,
    ));
    crate::say!(
        "Finished rollout collection! View results at:\nFully materialized inputs: {}\nRollouts: {}\nAggregate metrics: {}{coverage}",
        materialized.display(),
        output.display(),
        metrics.map_or("None".to_string(), |p| p.display().to_string())
    );
    // A shard's reports would collide with its siblings' fixed-name files: `--merge` writes them.
    if let (Some(ignored), None, false) = (&args.health_check, shard, args.disable_aggregation) {
        super::evidence::print_reports(&output, ignored, args.max_line_bytes, &cleared);
    }
    if args.require_complete {
        let (completed, expected) =
            history::completion(&materialized, &output, args.max_line_bytes)?;
        if completed < expected {
            crate::note!(
                "Error: EVAL FAILED: {completed}/{expected} samples completed. Partial artifacts retained at {}.",
                output.display()
            );
            return Ok(Ending::Fatal);
        }
    }
    // 0 only when every rollout succeeded: `collect && profile` must not go on after failures.
    let outcome = history::outcome(
        &materialized,
        &output,
        &failures,
        max_attempts,
        args.retry_terminal_timeouts,
        args.max_line_bytes,
    )?;
    if let Some(msg) = outcome.unfinished_report(&failures.display().to_string()) {
        crate::note!("{msg}");
        if outcome.to_run > 0 {
            crate::note!("To retry them:\n  {}", args.resume_command);
        }
        return Ok(Ending::Unfinished);
    }
    Ok(Ending::Success)
}

fn print_summary(r: &Report, output: &Path, failures: &Path) {
    if r.completed == 0 && r.interrupted.is_none() && r.fatal.is_none() {
        crate::say!("Nothing to run: every rollout is done, terminal or out of attempts.");
        return;
    }
    let secs = r.elapsed.as_secs_f64().max(1e-9);
    crate::say!(
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
        crate::say!("Running means: {}", r.status);
    }
}
