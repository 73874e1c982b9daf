//! The `build-pivot` command: file names next to OUT, printed names, exit codes, no temp files,
//! the Gym config, byte-identical reruns, and never writing over the input.

use super::*;
use crate::common::assert_contains;
use crate::common::assert_exit;
use crate::common::assert_success;
use crate::common::write_in;

fn names_in(dir: &std::path::Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[test]
fn writes_every_output_next_to_out_and_reruns_identically() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("session.state.jsonl");
    let src = upstream("example_session_state_mgmt.example_rollouts.jsonl");
    let r = build_pivot(&src, &out, AGENT, &[]);
    assert_success(&r);
    let stdout = String::from_utf8(r.stdout).unwrap();
    assert_eq!(
        names_in(dir.path()),
        [
            "session.state.gym.yaml",
            "session.state.info.md",
            "session.state.jsonl",
            "session.state.metrics.json",
            "session.state.skipped.jsonl"
        ]
    );
    for name in [
        "session.state.jsonl",
        "session.state.skipped.jsonl",
        "session.state.metrics.json",
        "session.state.info.md",
        "session.state.gym.yaml",
    ] {
        assert!(
            stdout.contains(&dir.path().join(name).display().to_string()),
            "{name} not printed:\n{stdout}"
        );
    }
    assert!(stdout.contains("selfcheck: 10 / 10 passed"), "{stdout}");
    let read = |n: &str| std::fs::read(dir.path().join(n)).unwrap();
    let first: Vec<Vec<u8>> = names_in(dir.path()).iter().map(|n| read(n)).collect();
    assert!(build_pivot(&src, &out, AGENT, &[]).status.success());
    let second: Vec<Vec<u8>> = names_in(dir.path()).iter().map(|n| read(n)).collect();
    assert_eq!(
        first, second,
        "same input and flags give byte-identical files"
    );

    let yaml = String::from_utf8(read("session.state.gym.yaml")).unwrap();
    let expected = format!(
        "session_state_pivot_single_step_tool_use_with_argument_comparison_resources_server:
  resources_servers:
    single_step_tool_use_with_argument_comparison:
      entrypoint: app.py
      domain: agent
      tool_call_comparator_config:
        word_count_similarity_threshold: 0.1
      verified: false
      description: Single-step pivot dataset built by gymscope from session.state rollouts.
{AGENT}:
  responses_api_agents:
    tool_simulation_agent:
      entrypoint: app.py
      resources_server:
        type: resources_servers
        name: session_state_pivot_single_step_tool_use_with_argument_comparison_resources_server
      model_server:
        type: responses_api_models
        name: policy_model
      datasets:
      - name: train
        type: train
        jsonl_fpath: {}
        num_repeats: 1
        license: TBD
",
        out.display()
    );
    assert_eq!(yaml, expected);
    let info = String::from_utf8(read("session.state.info.md")).unwrap();
    assert!(info.starts_with("# Pivot Dataset Metrics\n\n"));
    for section in [
        "## Summary",
        "## Skip Reasons",
        "## Expected Action Type Distribution",
        "## Expected Tool Distribution",
        "## Turn Step Distribution",
        "## Assistant Depth Distribution",
        "## Source Reward Groups",
    ] {
        assert!(info.contains(&format!("{section}\n\n| ")), "{section}");
    }
    let row = info
        .lines()
        .find(|l| l.starts_with("| multi\\_tool\\_call "))
        .unwrap();
    // Names are made literal Markdown (`\_`), as every untrusted cell is.
    let cells: Vec<&str> = row.split('|').map(str::trim).collect();
    assert_eq!(cells, ["", "multi\\_tool\\_call", "5", "33.33%", ""]);
    let widths: Vec<usize> = info
        .lines()
        .skip_while(|l| !l.starts_with("| reason"))
        .take(3)
        .map(str::len)
        .collect();
    assert!(
        widths.windows(2).all(|w| w[0] == w[1]),
        "columns padded to one width: {widths:?}"
    );
    let metrics: Value = serde_json::from_slice(&read("session.state.metrics.json")).unwrap();
    assert_eq!(metrics["counts"]["pivot_rows_written"], 10);
    assert_eq!(
        metrics["skipped_output"],
        dir.path()
            .join("session.state.skipped.jsonl")
            .display()
            .to_string()
    );
}

#[test]
fn config_flags_and_batch_config() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("p.jsonl");
    let cfg = dir.path().join("conf/elsewhere.yaml");
    std::fs::create_dir_all(cfg.parent().unwrap()).unwrap();
    let src = upstream("example_session_state_mgmt.example_rollouts.jsonl");
    let r = build_pivot(
        &src,
        &out,
        "plain",
        &[
            "--config-out",
            cfg.to_str().unwrap(),
            "--license",
            "Apache 2.0",
            "--validation-path",
            "val.jsonl",
            "--multi-call",
            "batch",
        ],
    );
    assert_success(&r);
    assert!(!dir.path().join("p.gym.yaml").exists());
    let yaml = std::fs::read_to_string(&cfg).unwrap();
    assert!(yaml.starts_with("plain_resources_server:\n"));
    assert!(yaml.contains("        parallel_tool_call_rewarding: true\n        allow_subset: true\n        allow_superset: true\n        parallel_tool_call_reward_mode: f1\n"));
    assert!(yaml.contains("      - name: validation\n        type: validation\n        jsonl_fpath: val.jsonl\n        num_repeats: 1\n        license: Apache 2.0\n"));
    let r = validate_pivot(&out, &["--agent-ref", "plain", "--allow-batch"]);
    assert!(r.status.success());

    for (flag, value, says) in [
        ("--license", "GPL", "is not one Gym accepts"),
        (
            "--word-count-similarity-threshold",
            "0.6",
            "between 0 and 0.5",
        ),
    ] {
        let r = build_pivot(&src, &out, "a", &[flag, value]);
        // A flag's value Gym refuses is a usage error (exit 2).
        assert_eq!(r.status.code(), Some(2));
        assert!(String::from_utf8_lossy(&r.stderr).contains(says));
    }
}

#[test]
fn nothing_written_exits_1_with_top_reasons() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("p.jsonl");
    let src = upstream("ruler.example_rollouts.jsonl");
    let r = build_pivot(
        &src,
        &out,
        AGENT,
        &[
            "--min-reward=-100",
            "--source-groups",
            "mixed,all_success,all_failure",
        ],
    );
    assert_eq!(r.status.code(), Some(1));
    let err = String::from_utf8_lossy(&r.stderr);
    assert!(
        err.contains("no pivot written") && err.contains("  no_action: 5"),
        "{err}"
    );
    // The audit and metrics say why; no dataset and no config; no temporary file left.
    assert_eq!(
        names_in(dir.path()),
        ["p.info.md", "p.metrics.json", "p.skipped.jsonl"]
    );
}

#[test]
fn bad_rows_are_audited_not_fatal_and_input_is_never_overwritten() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src.jsonl");
    let good = std::fs::read_to_string(upstream(
        "example_session_state_mgmt.example_rollouts.jsonl",
    ))
    .unwrap();
    let first = good.lines().next().unwrap();
    std::fs::write(
        &src,
        format!("{first}\n{{\"truncated\": \n[1, 2]\n\u{1}\n{first}\n"),
    )
    .unwrap();
    let out = dir.path().join("out.jsonl");
    let r = build_pivot(&src, &out, AGENT, &[]);
    assert_success(&r);
    let audit = lines(&std::fs::read(dir.path().join("out.skipped.jsonl")).unwrap());
    let invalid: Vec<&Value> = audit
        .iter()
        .filter(|a| a["reason"] == "invalid_source_row")
        .collect();
    assert_eq!(invalid.len(), 3);
    assert!(invalid[0]["detail"]
        .as_str()
        .unwrap()
        .starts_with("line 2: invalid JSON"));
    assert!(
        audit.iter().any(|a| a["reason"] == "duplicate_pivot"),
        "the repeated row's pivots are duplicates"
    );

    let before = std::fs::read(&src).unwrap();
    let r = build_pivot(&src, &src, AGENT, &[]);
    // Refused by identity as a usage error (exit 2), before anything is written.
    assert_exit(&r, 2, "it is the input");
    assert_eq!(std::fs::read(&src).unwrap(), before);
    let r = build_pivot(&src, &out, AGENT, &["--config-out", src.to_str().unwrap()]);
    assert_eq!(r.status.code(), Some(2));
    assert_eq!(std::fs::read(&src).unwrap(), before);

    // A first line in no known layout is an error naming the line.
    let weird = write_in(dir.path(), "weird.jsonl", "\n{\"x\": 1}\n");
    let r = build_pivot(&weird, &out, AGENT, &[]);
    assert_exit(
        &r,
        1,
        "weird.jsonl' line 2: the first row fits no source layout",
    );
}

/// `--tools FILE` supplies schemas a harness rollout did not record; without it those calls are
/// `tool_not_in_tools`.
#[test]
fn tools_file_supplies_missing_schemas() {
    let dir = tempfile::tempdir().unwrap();
    let row = serde_json::json!({"responses_create_params": {"input": [{"role": "user", "content": "list files", "type": "message"}], "tools": []},
        "response": {"output": [{"type": "function_call", "name": "bash", "arguments": "{\"cmd\": \"ls\"}", "call_id": "c1", "id": "fc_1", "status": "completed"}]},
        "reward": 1.0});
    let src = write_in(dir.path(), "harness.jsonl", format!("{row}\n"));
    let out = dir.path().join("p.jsonl");
    let r = build_pivot(&src, &out, AGENT, &[]);
    assert_exit(&r, 1, "tool_not_in_tools: 1");
    let info = std::fs::read_to_string(dir.path().join("p.info.md")).unwrap();
    assert!(info.contains(
        "1 tool-call decision points were skipped because the source recorded no tool schemas"
    ));
    let tools = write_in(
        dir.path(),
        "tools.json",
        r#"[{"type": "function", "function": {"name": "bash", "parameters": {"type": "object", "properties": {"cmd": {"type": "string"}}}}}]"#,
    );
    let r = build_pivot(&src, &out, AGENT, &["--tools", tools.to_str().unwrap()]);
    assert_success(&r);
    let rows = lines(&std::fs::read(&out).unwrap());
    assert_eq!(
        rows[0]["responses_create_params"]["tools"][0]["name"],
        "bash"
    );
    assert_eq!(rows[0]["expected_action"]["name"], "bash");
    assert_rows_valid(&std::fs::read(&out).unwrap(), false);
}

#[test]
fn select_pivot_usage_errors_name_the_problem() {
    let dir = tempfile::tempdir().unwrap();
    let row = "{\"pivot_info\": {\"pivot_id\": \"x\"}}\n";
    let pivots = write_in(dir.path(), "p.jsonl", row);
    let profile = write_in(dir.path(), "prof.jsonl", "{\"_ng_task_index\": 0}\n");
    let out = dir.path().join("s.jsonl");
    // Without the build's config (`p.gym.yaml`) the selection could not be trained on: refused.
    let r = select_pivot(&pivots, &profile, &out, &[]);
    assert_eq!(r.status.code(), Some(2));
    assert_contains(
        &String::from_utf8_lossy(&r.stderr),
        "p.gym.yaml' does not exist",
    );
    std::fs::write(
        dir.path().join("p.gym.yaml"),
        "a:\n  datasets:\n  - name: train\n    jsonl_fpath: p.jsonl\n",
    )
    .unwrap();
    let r = select_pivot(&pivots, &profile, &out, &[]);
    assert_exit(
        &r,
        1,
        "prof.jsonl' line 1: field `rollout_infos` is missing",
    );
    let r = select_pivot(&pivots, &profile, &out, &["--keep", "sometimes"]);
    assert!(String::from_utf8_lossy(&r.stderr).contains("--keep: 'sometimes'"));
    let r = select_pivot(&pivots, &profile, &pivots, &[]);
    assert_exit(&r, 2, "it is the input");
    assert_eq!(
        names_in(dir.path()),
        ["p.gym.yaml", "p.jsonl", "prof.jsonl"],
        "nothing written, no temp file"
    );
    let r = build_pivot(&pivots, &out, "a", &["--source-groups", "half"]);
    assert!(String::from_utf8_lossy(&r.stderr).contains("--source-groups: 'half'"));
}

/// A source that never ends a line (`/dev/zero`) stops at the line limit with the file and line
/// named, instead of being read forever; nothing is written.
#[test]
fn a_line_that_never_ends_stops_the_build() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("pivots.jsonl");
    let o = build_pivot(Path::new("/dev/zero"), &out, "a", &[]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success());
    assert!(err.contains("'/dev/zero' line 1 is longer than"), "{err}");
    assert!(
        names_in(dir.path()).is_empty(),
        "{:?}",
        names_in(dir.path())
    );
}
