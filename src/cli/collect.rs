//! `gymscope collect`: flags into [`CollectOptions`] (or [`MergeOptions`]), the collection's
//! [`Ending`] into the exit code. The collection itself is `collect::command` / `collect::merge`;
//! `gymscope aggregate`'s is `collect::aggregate_shards`.

use super::args::{AggregateArgs, CollectArgs};
use crate::collect::aggregate_shards::{self, AggregateOptions};
use crate::collect::command::{self, Ending};
use crate::collect::merge::{self, MergeOptions};
use crate::collect::options::CollectOptions;
use anyhow::{Context, Result};
use std::process::ExitCode;

/// `gymscope aggregate`: exit 0 once the files are written, as upstream.
pub fn aggregate(args: &AggregateArgs) -> Result<ExitCode> {
    let health_check = health_check(
        args.no_health_check,
        &args.health_check_ignore,
        args.health_check_workers,
    )?;
    let opts = AggregateOptions {
        input_glob: args.input_glob.clone(),
        output: args.output.clone(),
        merge_shards: !args.no_merge_shards,
        head_server: args.head_server.clone(),
        max_line_bytes: args.max_line_bytes,
        health_check,
        zeros: aggregate_shards::Zeros {
            classes: failure_classes(&args.count_failure_classes_as_zero),
            missing: args.count_missing_rollouts_as_zero,
        },
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    rt.block_on(aggregate_shards::run(&opts))?;
    Ok(ExitCode::SUCCESS)
}

pub fn run(args: &CollectArgs) -> Result<ExitCode> {
    let health_check = health_check(
        args.no_health_check,
        &args.health_check_ignore,
        args.health_check_workers,
    )?;
    let capture_dir = capture_dir(args)?;
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
            health_check,
            allow_missing_shards: args.allow_missing_shards,
        };
        return Ok(ending_code(rt.block_on(merge::run(&opts))?));
    }
    if let Some(extra) = args.shards.first() {
        return Err(crate::native::UsageError(format!(
            "unexpected argument '{}' (shard files are only taken with --merge)",
            extra.display()
        ))
        .into());
    }
    let opts = CollectOptions {
        input: args.input.clone(),
        output: args.output.clone(),
        agent: args.agent.clone(),
        agent_map: args.agent_map.clone(),
        fan_out: args.fan_out.clone(),
        environment_routing_mode: args.environment_routing_mode.clone(),
        environment_server_name: args.environment_server_name.clone(),
        environment_server_routes: args.environment_server_routes.clone(),
        interleave_repeats: args.interleave_repeats,
        retry_terminal_timeouts: args.retry_terminal_timeouts,
        retry_invalid_judge_responses: args.retry_invalid_judge_responses,
        dispatch_longest_first: args.dispatch_longest_first,
        require_complete: args.require_complete,
        count_failure_classes_as_zero: failure_classes(&args.count_failure_classes_as_zero),
        count_missing_rollouts_as_zero: args.count_missing_rollouts_as_zero,
        allow_unsupported_pairing: args.allow_unsupported_pairing,
        limit: args.limit,
        num_repeats: args.num_repeats.clone(),
        num_repeats_add_seed: args.num_repeats_add_seed,
        concurrency: args.concurrency,
        resume: args.resume,
        temperature: args.temperature.clone(),
        top_p: args.top_p.clone(),
        max_output_tokens: args.max_output_tokens.clone(),
        responses_create_params: args.responses_create_params.clone(),
        disable_aggregation: args.disable_aggregation,
        head_server: args.head_server.clone(),
        fail_fast: args.fail_fast,
        route_failures_to_sidecar: args.route_failures_to_sidecar,
        timeout: args.timeout,
        grace: args.grace,
        shard: args.shard,
        no_progress: args.no_progress,
        progress_file: args.progress_file.clone().map(Option::unwrap_or_default),
        max_line_bytes: args.max_line_bytes,
        resume_command: resume_command(),
        health_check,
        capture_dir,
        dispatch_budget_s: args.dispatch_budget_s,
        drain_margin_s: args.drain_margin_s,
    };
    Ok(ending_code(rt.block_on(command::collect(&opts))?))
}

/// The end-of-run health reports' ignored check ids (`None`: `--no-health-check`), shared by
/// `collect` and `aggregate`; a worker count of 0 is a usage error, as upstream's model says.
fn health_check(
    off: bool,
    ignore: &[String],
    workers: Option<usize>,
) -> Result<Option<Vec<String>>> {
    if workers == Some(0) {
        return Err(
            crate::native::UsageError("health_check_workers must be at least 1".into()).into(),
        );
    }
    if off {
        return Ok(None);
    }
    Ok(Some(
        crate::health::checks::normalize_ignored(ignore).map_err(crate::native::UsageError)?,
    ))
}

/// `--count-failure-classes-as-zero`'s classes (an empty value, as `[]` gives, is none).
fn failure_classes(given: &[String]) -> Vec<String> {
    given.iter().filter(|c| !c.is_empty()).cloned().collect()
}

/// The exit code of a collection or merge: 3 when rollouts are still missing.
fn ending_code(ending: Ending) -> ExitCode {
    match ending {
        Ending::Success => ExitCode::SUCCESS,
        Ending::Unfinished => ExitCode::from(3),
        Ending::Interrupted => ExitCode::from(130),
        Ending::Fatal => ExitCode::FAILURE,
    }
}

/// `observability_enabled` needs an absolute `model_call_capture_dir`, as upstream refuses
/// anything else; the directory alone (capture off) is ignored, as upstream ignores it.
fn capture_dir(args: &CollectArgs) -> Result<Option<std::path::PathBuf>> {
    if !args.observability {
        return Ok(None);
    }
    let usage = |m: String| anyhow::Error::from(crate::native::UsageError(m));
    match &args.model_call_capture_dir {
        None => Err(usage(
            "observability_enabled=true needs model_call_capture_dir (an absolute directory)"
                .into(),
        )),
        Some(d) if !d.is_absolute() => Err(usage(format!(
            "model_call_capture_dir must be absolute: '{}'",
            d.display()
        ))),
        // Read after the run: anything there but a folder is named now, not then (a missing
        // one is the model servers' to make).
        Some(d) => match crate::native::files::kind(d)? {
            crate::native::files::Kind::Folder | crate::native::files::Kind::Missing => {
                Ok(Some(d.clone()))
            }
            _ => Err(usage(format!(
                "model_call_capture_dir '{}' is not a folder",
                d.display()
            ))),
        },
    }
}

/// The command line that continues this run: the same arguments plus `--resume`.
fn resume_command() -> String {
    let mut args: Vec<String> = super::invocation();
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
