//! Upstream's Hydra-style spellings (`++allow_partial_rollouts=True`, `+rollouts_jsonl_fpath=…`,
//! `+head_server.port=…`) rewritten into gymscope's flags, so upstream command lines work
//! unchanged. A key gymscope does not know, or knows but does not implement, is a usage error
//! naming it (exit 2), never passed on to be mistaken for a file.

/// Keys upstream's `gym eval run` / `ng_collect_rollouts` accepts that gymscope does not
/// implement, with what to do instead.
const NOT_SUPPORTED: [(&str, &str); 9] = [
    ("prompt_config", "apply the prompt to the input rows first"),
    ("skills", "stamp `skills_ref` on the input rows first"),
    ("upload_rollouts", "exporters are not part of gymscope"),
    (
        "rollout_collection_driver",
        "e2e mode (starting servers) is not part of gymscope",
    ),
    (
        "split",
        "e2e mode (starting servers) is not part of gymscope",
    ),
    (
        "reuse_existing_data_preparation",
        "e2e mode is not part of gymscope",
    ),
    (
        "config_paths",
        "start the servers with `gym env start`, then point --head-server at them",
    ),
    (
        "policy_model_name",
        "the model is configured on the servers, not in collection",
    ),
    (
        "policy_base_url",
        "the model is configured on the servers, not in collection",
    ),
];

/// `gym eval run`'s own flags that `gymscope collect` does not take, each with the key of
/// [`NOT_SUPPORTED`] whose advice applies (or its own), so they get the same answer as their
/// Hydra spelling instead of clap's "unexpected argument" and a misleading "similar argument".
const FLAGS_NOT_SUPPORTED: [(&[&str], &str); 8] = [
    (
        &["-v", "--verbose"],
        "gymscope collect always prints its progress (--no-progress hides the bar)",
    ),
    (&["-m", "--model"], "policy_model_name"),
    (&["--model-url", "--model-api-key"], "policy_base_url"),
    (&["--config"], "config_paths"),
    (&["--search-dir"], "config_paths"),
    (&["--resources-server"], "config_paths"),
    (&["--split"], "split"),
    (&["--prompt-config"], "prompt_config"),
];

/// A `gym eval run` flag `gymscope collect` does not take, as the usage error to print.
fn unsupported_flag(arg: &str) -> Option<String> {
    let name = arg.split_once('=').map_or(arg, |(n, _)| n);
    let (_, advice) = FLAGS_NOT_SUPPORTED
        .iter()
        .find(|(flags, _)| flags.contains(&name))?;
    let instead = NOT_SUPPORTED
        .iter()
        .find(|(k, _)| k == advice)
        .map_or(*advice, |(_, instead)| instead);
    Some(format!("not supported by gymscope: {name} ({instead})"))
}

/// Every key taken (for a "did you mean" on a mistyped one).
const KNOWN_KEYS: [&str; 40] = [
    "retry_invalid_judge_responses",
    "dispatch_longest_first",
    "materialized_inputs_jsonl_fpath",
    "rollouts_jsonl_fpath",
    "allow_partial_rollouts",
    "head_server",
    "input_jsonl_fpath",
    "input_glob",
    "merge_shards",
    "output_jsonl_fpath",
    "agent_name",
    "agent_map",
    "fan_out",
    "environment_routing_mode",
    "environment_server_name",
    "environment_server_routes",
    "interleave_repeats",
    "retry_terminal_timeouts",
    "require_complete",
    "count_failure_classes_as_zero",
    "count_missing_rollouts_as_zero",
    "dispatch_budget_s",
    "drain_margin_s",
    "allow_unsupported_pairing",
    "max_resident_rollout_tasks",
    "retain_results_in_memory",
    "limit",
    "num_repeats",
    "num_samples_in_parallel",
    "resume_from_cache",
    "disable_aggregation",
    "num_repeats_add_seed",
    "disable_health_check",
    "health_check_ignored_checks",
    "health_check_workers",
    "observability_enabled",
    "route_failures_to_sidecar",
    "model_call_capture_dir",
    "responses_create_params",
    "upload_rollouts",
];

/// Rewrites the process arguments; `Err` is the usage error to print (exit 2).
pub fn normalize_legacy_args(
    args: impl IntoIterator<Item = String>,
) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    let mut head: (Option<String>, Option<String>) = (None, None);
    let mut collect = false;
    for arg in args {
        // `gym eval run`'s flags that `collect` lacks (after the subcommand, before any `--`).
        collect |= out.len() == 1 && arg == "collect";
        if collect && out.len() > 1 {
            if let Some(e) = unsupported_flag(&arg) {
                return Err(e);
            }
        }
        let Some((name, value)) = hydra_override(&arg) else {
            out.push(arg);
            continue;
        };
        match name {
            "materialized_inputs_jsonl_fpath" => flag(&mut out, "--inputs", value),
            "rollouts_jsonl_fpath" => flag(&mut out, "--rollouts", value),
            "allow_partial_rollouts" => {
                if boolean(name, value)? {
                    out.push("--allow-partial-rollouts".into());
                }
            }
            "head_server.host" => head.0 = Some(value.to_string()),
            "head_server.port" => head.1 = Some(value.to_string()),
            _ => collect_override(name, value, &mut out)?,
        }
    }
    if head.0.is_some() || head.1.is_some() {
        let host = head.0.unwrap_or_else(|| "127.0.0.1".into());
        let port = head.1.unwrap_or_else(|| "11000".into());
        flag(&mut out, "--head-server", &format!("{host}:{port}"));
    }
    Ok(out)
}

/// `+key=value` or `++key=value` in Hydra's form (a key of letters, digits, `_`, `.` and `-`,
/// not starting with a digit): its key and value. Any other argument that starts with `+` is
/// an ordinary value (`--title '+3% reward'`, `--date '+%Y'`, a file named `+r.jsonl`).
fn hydra_override(arg: &str) -> Option<(&str, &str)> {
    let body = arg.strip_prefix("++").or_else(|| arg.strip_prefix('+'))?;
    let (name, value) = body.split_once('=')?;
    let mut chars = name.chars();
    let first = chars.next()?;
    let key = (first.is_ascii_alphabetic() || first == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'));
    key.then_some((name, value))
}

fn flag(out: &mut Vec<String>, f: &str, v: &str) {
    out.push(f.into());
    out.push(v.into());
}

/// A boolean as upstream's config model reads it; anything else is refused (as Hydra and
/// Pydantic refuse `maybe`) instead of silently meaning false.
fn boolean(name: &str, value: &str) -> Result<bool, String> {
    crate::gym::pydantic::str_as_bool(value)
        .ok_or_else(|| format!("+{name}={value}: not a boolean (use true or false)"))
}

/// The collection config's `Optional` keys (v0.7.0 `nemo_gym/rollout_collection.py`, its config
/// models): Hydra's `null` there means "not set", as if the key were not given.
const OPTIONAL_KEYS: [&str; 12] = [
    "num_samples_in_parallel",
    "max_resident_rollout_tasks",
    "health_check_workers",
    "rollout_collection_driver",
    "agent_name",
    "agent_map",
    "fan_out",
    "limit",
    "prompt_config",
    "skills",
    "dispatch_budget_s",
    "drain_margin_s",
];

/// `gym eval run` / `ng_collect_rollouts` config keys → `gymscope collect` flags.
fn collect_override(name: &str, value: &str, out: &mut Vec<String>) -> Result<(), String> {
    // Hydra's null literal (`null`, any case) on an Optional key: the default, nothing to pass.
    if value.eq_ignore_ascii_case("null") && OPTIONAL_KEYS.contains(&name) {
        return Ok(());
    }
    let on = |out: &mut Vec<String>, f: &str| -> Result<(), String> {
        if boolean(name, value)? {
            out.push(f.into());
        }
        Ok(())
    };
    match name {
        "input_jsonl_fpath" => flag(out, "--input", value),
        // `gym eval aggregate`'s.
        "input_glob" => flag(out, "--input-glob", value),
        "merge_shards" => {
            if !boolean(name, value)? {
                out.push("--no-merge-shards".into());
            }
        }
        "output_jsonl_fpath" => flag(out, "--output", value),
        "agent_name" => flag(out, "--agent", value),
        "agent_map" => flag(out, "--agent-map", value),
        "fan_out" => flag(out, "--fan-out", value),
        "environment_routing_mode" => flag(out, "--environment-routing-mode", value),
        "environment_server_name" => flag(out, "--environment-server-name", value),
        "environment_server_routes" => flag(out, "--environment-server-routes", value),
        "interleave_repeats" => on(out, "--interleave-repeats")?,
        "retry_terminal_timeouts" => on(out, "--retry-terminal-timeouts")?,
        "retry_invalid_judge_responses" => on(out, "--retry-invalid-judge-responses")?,
        "dispatch_longest_first" => on(out, "--dispatch-longest-first")?,
        "require_complete" => on(out, "--require-complete")?,
        "count_failure_classes_as_zero" => {
            flag(out, "--count-failure-classes-as-zero", &hydra_list(value));
        }
        "count_missing_rollouts_as_zero" => on(out, "--count-missing-rollouts-as-zero")?,
        "dispatch_budget_s" => flag(out, "--dispatch-budget-s", value),
        "drain_margin_s" => flag(out, "--drain-margin-s", value),
        "allow_unsupported_pairing" => on(out, "--allow-unsupported-pairing")?,
        // v0.7.0's memory knobs: gymscope streams, its memory bounded by --concurrency, so they
        // change nothing here (checked as upstream checks them, then dropped).
        "max_resident_rollout_tasks" => {
            if !value.parse::<u64>().is_ok_and(|n| n >= 1) {
                return Err(format!("+{name}={value}: must be an integer >= 1"));
            }
        }
        "retain_results_in_memory" => {
            boolean(name, value)?;
        }
        "upload_rollouts" if !boolean(name, value)? => {}
        "limit" => flag(out, "--limit", value),
        "num_repeats" => flag(out, "--num-repeats", value),
        "num_samples_in_parallel" => flag(out, "--concurrency", value),
        "head_server" => flag(out, "--head-server", &head_server_from_dict(value)),
        "resume_from_cache" => on(out, "--resume")?,
        "disable_aggregation" => on(out, "--disable-aggregation")?,
        "num_repeats_add_seed" => on(out, "--num-repeats-add-seed")?,
        "disable_health_check" => on(out, "--no-health-check")?,
        "health_check_ignored_checks" => {
            flag(out, "--health-check-ignore", &hydra_list(value));
        }
        "health_check_workers" => flag(out, "--health-check-workers", value),
        "observability_enabled" => on(out, "--observability")?,
        // v0.7.0's switch for recording a failed `/run` in the sidecar: gymscope always does;
        // `false`, upstream's default, stops the run at the first one, as `--fail-fast` does.
        "route_failures_to_sidecar" => {
            out.push(
                if boolean(name, value)? {
                    "--route-failures-to-sidecar"
                } else {
                    "--fail-fast"
                }
                .into(),
            );
        }
        "model_call_capture_dir" => flag(out, "--model-call-capture-dir", value),
        "responses_create_params" => flag(out, "--responses-create-params", &format!("={value}")),
        _ => match name.strip_prefix("responses_create_params.") {
            Some(key) => flag(out, "--responses-create-params", &format!("{key}={value}")),
            None => {
                return Err(match NOT_SUPPORTED.iter().find(|(k, _)| *k == name) {
                    Some((_, instead)) => format!("not supported by gymscope: {name} ({instead})"),
                    None => format!(
                        "unknown key `+{name}`{}: gymscope takes upstream's keys for `gym eval profile`, `gym eval run` and `gym eval aggregate` (see `gymscope profile --help`, `gymscope collect --help`, `gymscope aggregate --help`)",
                        crate::gym::difflib::close_match(name, KNOWN_KEYS)
                            .map(|k| format!(" (did you mean `+{k}`?)"))
                            .unwrap_or_default()
                    ),
                })
            }
        },
    }
    Ok(())
}

/// A Hydra list `[a, b]` (or a plain `a,b`) as `a,b`.
fn hydra_list(value: &str) -> String {
    match crate::collect::hydra::parse(value) {
        Ok(serde_json::Value::Array(items)) => items
            .iter()
            .map(|v| match v {
                serde_json::Value::String(s) => s.clone(),
                other => other.to_string(),
            })
            .collect::<Vec<_>>()
            .join(","),
        _ => value.to_string(),
    }
}

/// `{host: H, port: P}` → `H:P` (left as is when it is not that shape, for clap to report).
fn head_server_from_dict(value: &str) -> String {
    let Ok(serde_json::Value::Object(m)) = crate::collect::hydra::parse(value) else {
        return value.to_string();
    };
    let part = |k: &str| match m.get(k) {
        Some(serde_json::Value::String(s)) => s.clone(),
        Some(v) => v.to_string(),
        None => String::new(),
    };
    let host = if m.contains_key("host") {
        part("host")
    } else {
        "127.0.0.1".into()
    };
    let port = if m.contains_key("port") {
        part("port")
    } else {
        "11000".into()
    };
    format!("{host}:{port}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::args::{Cli, Command};
    use clap::Parser;
    use std::path::PathBuf;

    fn norm(args: &[&str]) -> Result<Vec<String>, String> {
        normalize_legacy_args(args.iter().map(std::string::ToString::to_string))
    }

    /// Issue 58: v0.7.0 runs normally with these keys given as `null` (found on a live stack).
    #[test]
    fn null_on_an_optional_key_is_not_set() {
        let keys = [
            "limit",
            "num_samples_in_parallel",
            "max_resident_rollout_tasks",
            "health_check_workers",
            "dispatch_budget_s",
            "drain_margin_s",
            "prompt_config",
            "skills",
            "rollout_collection_driver",
        ];
        for key in keys {
            let arg = format!("+{key}=null");
            let out = norm(&["gymscope", "collect", "--input", "i.jsonl", &arg]).unwrap();
            assert_eq!(out, ["gymscope", "collect", "--input", "i.jsonl"], "{arg}");
        }
        assert_eq!(
            norm(&["gymscope", "collect", "++limit=NULL"]).unwrap(),
            ["gymscope", "collect"]
        );
        // Not Optional upstream: null is still refused.
        assert!(norm(&["gymscope", "collect", "+require_complete=null"]).is_err());
    }

    #[test]
    fn upstream_spellings_map_to_flags() {
        let args = [
            "gymscope",
            "profile",
            "+materialized_inputs_jsonl_fpath=m.jsonl",
            "++rollouts_jsonl_fpath=r.jsonl",
            "++allow_partial_rollouts=True",
        ];
        let cli = Cli::try_parse_from(norm(&args).unwrap()).unwrap();
        let Command::Profile(p) = cli.command else {
            panic!("parsed as profile")
        };
        assert_eq!(p.inputs, Some(PathBuf::from("m.jsonl")));
        assert_eq!(p.rollouts, PathBuf::from("r.jsonl"));
        assert!(p.allow_partial_rollouts);
        assert!(norm(&["++allow_partial_rollouts=False"])
            .unwrap()
            .is_empty());
    }

    #[test]
    fn a_value_that_is_not_a_boolean_is_refused() {
        let e = norm(&["++allow_partial_rollouts=maybe"]).unwrap_err();
        assert_eq!(
            e,
            "+allow_partial_rollouts=maybe: not a boolean (use true or false)"
        );
        assert!(norm(&["+resume_from_cache=perhaps"]).is_err());
    }

    #[test]
    fn unknown_and_unsupported_keys_are_named() {
        let e = norm(&["collect", "+no_such_key=1"]).unwrap_err();
        assert!(e.contains("unknown key `+no_such_key`"), "{e}");
        // A mistyped v0.7.0 key is named with the one meant.
        let e = norm(&["gymscope", "collect", "-o", "o", "+interleave_repeat=true"]).unwrap_err();
        assert!(
            e.starts_with("unknown key `+interleave_repeat` (did you mean `+interleave_repeats`?)"),
            "{e}"
        );
        let e = norm(&["collect", "+prompt_config=p.yaml"]).unwrap_err();
        assert!(
            e.starts_with("not supported by gymscope: prompt_config"),
            "{e}"
        );
        let e = norm(&["collect", "+skills={path: x}"]).unwrap_err();
        assert!(e.starts_with("not supported by gymscope: skills"), "{e}");
        for (flag, advice) in [
            (
                "--prompt-config",
                "apply the prompt to the input rows first",
            ),
            ("-m", "the model is configured on the servers"),
            (
                "--model-url=http://x",
                "the model is configured on the servers",
            ),
            ("-v", "always prints its progress"),
            ("--resources-server", "gym env start"),
        ] {
            let e = norm(&["gymscope", "collect", "-o", "r.jsonl", flag, "x"]).unwrap_err();
            assert!(e.starts_with("not supported by gymscope: "), "{flag}: {e}");
            assert!(e.contains(advice), "{flag}: {e}");
        }
        // Only `collect` has them to refuse: another command's own flag stays its own.
        assert!(norm(&["gymscope", "health", "-v"]).is_ok());
    }

    #[test]
    fn collect_upstream_spellings_map_to_flags() {
        let args = [
            "gymscope",
            "collect",
            "+agent_name=A",
            "+input_jsonl_fpath=in.jsonl",
            "+output_jsonl_fpath=o.jsonl",
            "+num_repeats={a: 2, _default: 1}",
            "+num_samples_in_parallel=8",
            "+resume_from_cache=true",
            "++responses_create_params.temperature=0.5",
            "+head_server={host: 127.0.0.2, port: 12000}",
            "+num_repeats_add_seed=true",
            "--no-serve",
        ];
        let cli = Cli::try_parse_from(norm(&args).unwrap()).unwrap();
        let Command::Collect(c) = cli.command else {
            panic!("not collect")
        };
        assert_eq!(c.agent.as_deref(), Some("A"));
        assert_eq!(c.input, Some(PathBuf::from("in.jsonl")));
        assert_eq!(c.num_repeats.as_deref(), Some("{a: 2, _default: 1}"));
        assert_eq!(c.concurrency, Some(8));
        assert!(c.resume && c.num_repeats_add_seed && c.no_serve);
        assert_eq!(c.responses_create_params, ["temperature=0.5"]);
        assert_eq!(c.head_server, "127.0.0.2:12000");
        assert!(!c.fail_fast);

        // v0.7.0's `route_failures_to_sidecar`: true is gymscope's way, false stops at a failure.
        for (value, fail_fast) in [("true", false), ("false", true)] {
            let args = [
                "gymscope".to_string(),
                "collect".into(),
                "-o".into(),
                "o.jsonl".into(),
                format!("+route_failures_to_sidecar={value}"),
            ];
            let refs: Vec<&str> = args.iter().map(String::as_str).collect();
            let Command::Collect(c) = Cli::try_parse_from(norm(&refs).unwrap()).unwrap().command
            else {
                panic!("not collect")
            };
            assert_eq!(c.fail_fast, fail_fast, "{value}");
            assert_eq!(c.route_failures_to_sidecar, !fail_fast, "{value}");
        }

        let dotted = [
            "gymscope",
            "collect",
            "-o",
            "o.jsonl",
            "+head_server.port=12001",
        ];
        let Command::Collect(c) = Cli::try_parse_from(norm(&dotted).unwrap()).unwrap().command
        else {
            panic!("not collect")
        };
        assert_eq!(c.head_server, "127.0.0.1:12001");
        let both = [
            "gymscope",
            "collect",
            "-o",
            "o.jsonl",
            "++head_server.host=10.0.0.5",
            "+head_server.port=9",
        ];
        let Command::Collect(c) = Cli::try_parse_from(norm(&both).unwrap()).unwrap().command else {
            panic!("not collect")
        };
        assert_eq!(c.head_server, "10.0.0.5:9");
    }

    #[test]
    fn values_that_start_with_a_plus_are_not_hydra_overrides() {
        // They were refused as unknown Hydra keys.
        let args = [
            "gymscope",
            "report",
            "--example",
            "--title",
            "+3% reward",
            "-o",
            "+r.html",
            "--date",
            "+%Y",
        ];
        assert_eq!(norm(&args).unwrap(), args);
        // Hydra's own form still is one, an unknown key still refused.
        assert_eq!(
            norm(&["gymscope", "profile", "++allow_partial_rollouts=true"]).unwrap(),
            ["gymscope", "profile", "--allow-partial-rollouts"]
        );
        assert!(norm(&["gymscope", "profile", "+no_such_key=1"]).is_err());
    }
}
