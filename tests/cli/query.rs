//! `gymscope query` end to end: every output format on a three-agent agentic run, file order,
//! byte-for-byte rows, usage errors with their column (exit 2), bad rows naming file and line,
//! the inputs' agents, `--strict`, upstream's verdicts beside the run, and a closed pipe.

use crate::common::write_in;
use crate::common::{assert_contains, assert_lacks};
use crate::common::{gymscope_bin, run_gymscope};
use gymscope_testkit::gen_run::generate_agentic;
use serde_json::Value;
use std::path::Path;

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn stdout(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The keys of the rows the reference evaluation (the JSON read by serde, here) finds.
fn lines(p: &Path) -> Vec<(String, Value)> {
    std::fs::read_to_string(p)
        .unwrap()
        .lines()
        .map(|l| (l.to_string(), serde_json::from_str(l).unwrap()))
        .collect()
}

fn key(v: &Value) -> String {
    format!("{} {}", v["_ng_task_index"], v["_ng_rollout_index"])
}

#[test]
fn formats_keys_jsonl_json_count_and_limit_on_an_agentic_run() {
    let dir = tempfile::tempdir().unwrap();
    let (_, rollouts) = generate_agentic(dir.path(), "run", 30, 4, 3000);
    let rows = lines(&rollouts);
    let expr = r#"agent == "library_tool_agent" and reward == 0"#;
    let want: Vec<String> = rows
        .iter()
        .filter(|(_, v)| v["agent_ref"]["name"] == "library_tool_agent" && v["reward"] == 0.0)
        .map(|(_, v)| key(v))
        .collect();
    assert!(want.len() > 5, "{}", want.len());

    // Keys by default when stdout is not a terminal, in file order.
    let o = run_gymscope(&["query", s(&rollouts), expr]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stdout(&o).lines().collect::<Vec<_>>(), want);

    // The same with --rollouts.
    let o = run_gymscope(&["query", "--rollouts", s(&rollouts), expr]);
    assert_eq!(stdout(&o).lines().collect::<Vec<_>>(), want);

    // jsonl: the rows byte for byte.
    let o = run_gymscope(&["query", s(&rollouts), expr, "--format", "jsonl"]);
    let want_rows: String = rows
        .iter()
        .filter(|(_, v)| want.contains(&key(v)))
        .map(|(l, _)| format!("{l}\n"))
        .collect();
    assert_eq!(stdout(&o), want_rows);

    // json: one document.
    let o = run_gymscope(&["query", s(&rollouts), expr, "--format", "json"]);
    let doc: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(doc["count"], want.len());
    assert_eq!(doc["expression"], expr);
    assert_eq!(doc["agents"]["library_tool_agent"], want.len());
    assert_eq!(doc["keys"].as_array().unwrap().len(), want.len());

    let o = run_gymscope(&["query", s(&rollouts), expr, "--count"]);
    assert_eq!(stdout(&o).trim(), want.len().to_string());

    let o = run_gymscope(&["query", s(&rollouts), expr, "--limit", "2"]);
    assert_eq!(stdout(&o).lines().collect::<Vec<_>>(), want[..2]);

    // The table: the first text match in its context, marked.
    let o = run_gymscope(&[
        "query",
        s(&rollouts),
        r#"tool == "python" and args ~ "code""#,
        "--format",
        "table",
        "--limit",
        "3",
        "--fields",
        "usage.total_tokens",
    ]);
    let table = stdout(&o);
    let first = table.lines().nth(1).unwrap();
    assert!(
        table.lines().next().unwrap().contains("usage.total_tokens"),
        "{table}"
    );
    assert!(
        first.contains("args: ") && first.contains("[code]"),
        "{table}"
    );
    assert_eq!(table.lines().count(), 4, "{table}");
}

#[test]
fn text_queries_agree_with_a_reference_search_of_the_parts() {
    let dir = tempfile::tempdir().unwrap();
    let (_, rollouts) = generate_agentic(dir.path(), "run", 20, 3, 2500);
    let rows = lines(&rollouts);
    // The generator's words: pick one that some outputs have and others lack.
    let word = "proof proof";
    let has = |v: &Value| {
        v["response"]["output"].as_array().unwrap().iter().any(|i| {
            i["type"] == "message"
                && i["content"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|p| p["text"].as_str().unwrap().contains(word))
        })
    };
    let want: Vec<String> = rows
        .iter()
        .filter(|(_, v)| has(v))
        .map(|(_, v)| key(v))
        .collect();
    assert!(
        !want.is_empty() && want.len() < rows.len(),
        "{} of {}",
        want.len(),
        rows.len()
    );
    let o = run_gymscope(&["query", s(&rollouts), &format!("output ~ \"{word}\"")]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stdout(&o).lines().collect::<Vec<_>>(), want);
}

#[test]
fn a_malformed_expression_is_a_usage_error_naming_its_column() {
    let dir = tempfile::tempdir().unwrap();
    let (_, rollouts) = generate_agentic(dir.path(), "run", 3, 1, 1500);
    let o = run_gymscope(&["query", s(&rollouts), "reward >> 1"]);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert_contains(&err, "column 9: expected a value after `>`");
    assert!(err.contains("  reward >> 1\n          ^"), "{err}");
    let o = run_gymscope(&["query", s(&rollouts)]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let o = run_gymscope(&["query", "--rollouts", s(&rollouts), "a", "b"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    // An unknown field is missing, said when nothing matches; --strict makes it an error.
    let o = run_gymscope(&["query", s(&rollouts), "no_such_field > 0"]);
    assert_eq!(o.status.code(), Some(0));
    assert_contains(&stderr(&o), "No rollout matches `no_such_field > 0`");
    let o = run_gymscope(&["query", s(&rollouts), "no_such_field > 0", "--strict"]);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(
        err.contains("no field `no_such_field`") && err.contains("judge_score"),
        "{err}"
    );
}

#[test]
fn a_row_that_cannot_be_read_names_the_file_line_and_field() {
    let dir = tempfile::tempdir().unwrap();
    let p = write_in(dir.path(), "r.jsonl", "{\"_ng_task_index\": 0, \"_ng_rollout_index\": 0, \"reward\": 1}\n{\"_ng_task_index\": 1, \"reward\": 0}\n");
    let o = run_gymscope(&["query", s(&p), "reward >= 0"]);
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    assert_contains(
        &err,
        "r.jsonl' line 2: field `_ng_rollout_index` is missing",
    );
    std::fs::write(
        &p,
        "{\"_ng_task_index\": 0, \"_ng_rollout_index\": 0, \"reward\": 1}\n{nope x\n",
    )
    .unwrap();
    let o = run_gymscope(&["query", s(&p), "output ~ \"x\""]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("line 2: column 2"), "{}", stderr(&o));
    // A row without the text a predicate needs cannot match: it is not read (docs/query.md).
    let o = run_gymscope(&["query", s(&p), "output ~ \"zebra\"", "--count"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(String::from_utf8_lossy(&o.stdout).trim(), "0");
}

#[test]
fn agents_come_from_the_inputs_and_verdicts_from_beside_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let r = dir.path().join("rollouts.jsonl");
    let m = dir.path().join("rollouts_materialized_inputs.jsonl");
    std::fs::write(&r, "{\"_ng_task_index\": 0, \"_ng_rollout_index\": 0, \"reward\": 1}\n{\"_ng_task_index\": 0, \"_ng_rollout_index\": 1, \"reward\": 0}\n").unwrap();
    std::fs::write(&m, "{\"_ng_task_index\": 0, \"_ng_rollout_index\": 0, \"agent_ref\": {\"name\": \"x\"}}\n{\"_ng_task_index\": 0, \"_ng_rollout_index\": 1, \"agent_ref\": {\"name\": \"y\"}}").unwrap();
    let o = run_gymscope(&["query", "--inputs", s(&m), s(&r), "agent == \"y\""]);
    assert_eq!(stdout(&o), "0 1\n", "{}", stderr(&o));
    let o = run_gymscope(&["query", s(&r), "agent == null"]);
    assert_eq!(stdout(&o), "0 0\n0 1\n");
    assert_eq!(
        stdout(&run_gymscope(&[
            "query",
            s(&r),
            "task.group == \"mixed\" and reward == 0"
        ])),
        "0 1\n"
    );
    std::fs::write(
        dir.path().join("rollout_verdicts.jsonl"),
        "{\"_ng_task_index\": 0, \"_ng_rollout_index\": 1, \"verdict\": \"unhealthy\", \"findings\": []}\n",
    )
    .unwrap();
    let o = run_gymscope(&["query", s(&r), "verdict == \"unhealthy\""]);
    assert_eq!(stdout(&o), "0 1\n", "{}", stderr(&o));
}

#[test]
fn a_closed_pipe_stops_the_read_quietly() {
    let dir = tempfile::tempdir().unwrap();
    let (_, rollouts) = generate_agentic(dir.path(), "run", 200, 4, 3000);
    let mut child = crate::common::spawn_gymscope(
        ["query", s(&rollouts), "reward >= 0"],
        std::process::Stdio::piped(),
        std::process::Stdio::piped(),
    );
    {
        use std::io::Read;
        let mut first = [0u8; 4];
        child
            .stdout
            .as_mut()
            .unwrap()
            .read_exact(&mut first)
            .unwrap();
    }
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(out.stderr.is_empty(), "{}", stderr(&out));
}

/// A query 6,000 `(` deep aborted `query`, `report --query` and `select-tasks --where` with a
/// stack overflow (exit 134): each now refuses it as a usage error naming the column.
#[test]
fn a_query_nested_thousands_deep_is_a_usage_error_in_every_command() {
    let dir = tempfile::tempdir().unwrap();
    let deep = |leaf: &str| format!("{}{leaf}{}", "(".repeat(6000), ")".repeat(6000));
    let gen = dir.path().join("gen");
    std::fs::create_dir_all(&gen).unwrap();
    let (inputs, rollouts) = generate_agentic(&gen, "rollouts", 4, 2, 600);
    let profiled = run_gymscope(&[
        "profile",
        "--inputs",
        s(&inputs),
        "--rollouts",
        s(&rollouts),
    ]);
    assert!(profiled.status.success(), "{}", stderr(&profiled));
    let profile = gen.join("rollouts_reward_profiling.jsonl");
    let report = dir.path().join("r.html");
    let curated = dir.path().join("c.jsonl");
    let q = deep("reward == 0");
    let w = deep("task.pass_rate > 0");
    for argv in [
        vec!["query", s(&rollouts), &q, "--count"],
        vec![
            "report",
            "--inputs",
            s(&inputs),
            "--rollouts",
            s(&rollouts),
            "--query",
            &q,
            "-o",
            s(&report),
        ],
        vec![
            "select-tasks",
            "--profile",
            s(&profile),
            "-o",
            s(&curated),
            "--where",
            &w,
        ],
    ] {
        let out = run_gymscope(&argv);
        assert_eq!(out.status.code(), Some(2), "{}: {}", argv[0], stderr(&out));
        assert!(
            stderr(&out).contains("column 101: the expression nests more than 100 levels deep"),
            "{}: {}",
            argv[0],
            stderr(&out)
        );
    }
    assert!(!report.exists() && !curated.exists());
}

/// On a terminal the table's highlight is an escape of ours, printed raw (it was shown as the
/// text `\u001b[1;7m`), while an escape in the run's own text is still shown as text; a table
/// whose reader is gone says nothing of "no match" (it did, for rows that matched).
#[test]
fn the_table_highlights_on_a_terminal_and_is_quiet_when_stdout_is_gone() {
    let dir = tempfile::tempdir().unwrap();
    let rollouts = dir.path().join("r.jsonl");
    let row = serde_json::json!({
        "_ng_task_index": 0, "_ng_rollout_index": 0, "reward": 1.0,
        "response": {"output": [{"type": "message", "role": "assistant",
            "content": [{"type": "output_text", "text": "evil \u{1b}[31m red needle here"}]}]}
    });
    std::fs::write(&rollouts, format!("{row}\n")).unwrap();
    let command = format!(
        "{} query {} 'output ~ \"needle\"' --format table",
        gymscope_bin().display(),
        rollouts.display()
    );
    // `script` gives the command a terminal (util-linux, in every Debian).
    let out = std::process::Command::new("script")
        .args(["-qec", &command, "/dev/null"])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let shown = stdout(&out);
    assert!(out.status.success(), "{shown}");
    assert!(shown.contains("\u{1b}[1;7mneedle\u{1b}[0m"), "{shown:?}");
    assert!(shown.contains("\\u001b[31m red"), "{shown:?}");
    assert!(!shown.contains("\u{1b}[31m"), "{shown:?}");

    let args = [s(&rollouts), "reward == 1", "--format", "table"];
    let closed = std::process::Command::new(gymscope_bin())
        .arg("query")
        .args(args)
        .stdout(crate::edges::closed_pipe())
        .output()
        .unwrap();
    assert_eq!(closed.status.code(), Some(0));
    assert_lacks(&stderr(&closed), "No rollout matches");
    if Path::new("/dev/full").exists() {
        let full = std::fs::File::options()
            .write(true)
            .open("/dev/full")
            .unwrap();
        let out = std::process::Command::new(gymscope_bin())
            .arg("query")
            .args(args)
            .stdout(full)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1));
        assert_lacks(&stderr(&out), "No rollout matches");
        assert!(stderr(&out).contains("No space left"), "{}", stderr(&out));
    }
}

/// A run that mixes agents and environment servers (NeMo Gym v0.7.0): rollouts are counted and
/// selected under the labels v0.7.0's own profile gave them (its `*_agent_metrics.json`).
#[test]
fn agents_are_v07_labels_when_environment_servers_share_an_agent() {
    let dir = crate::common::repo_root().join("tests/fixtures/generated-v07/env_servers");
    let (rollouts, inputs) = (
        dir.join("rollouts.jsonl"),
        dir.join("rollouts_materialized_inputs.jsonl"),
    );
    let labels = crate::health::v07_agent_labels(&dir);
    let o = run_gymscope(&[
        "query",
        s(&rollouts),
        "reward >= 0",
        "--inputs",
        s(&inputs),
        "--format",
        "json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let doc: Value = serde_json::from_str(&stdout(&o)).unwrap();
    let counted: Vec<String> = doc["agents"].as_object().unwrap().keys().cloned().collect();
    assert_eq!(counted, labels);
    // `agent ==` selects by label: a server's rollouts, though its rows say `agent_ref` "shared".
    let o = run_gymscope(&[
        "query",
        s(&rollouts),
        "agent == \"env_math_1\"",
        "--inputs",
        s(&inputs),
        "--format",
        "json",
    ]);
    let doc: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert!(doc["count"].as_u64().unwrap() > 0);
    assert_eq!(doc["agents"].as_object().unwrap().len(), 1);
}
