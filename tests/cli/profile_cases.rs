//! Upstream's error cases and the inputs upstream crashes on: gymscope gives the same decision
//! with file, line (and column) named, or profiles correctly. Plus streaming invariants.

use crate::common;
use crate::common::assert_contains;
use crate::common::assert_exit;
use crate::common::assert_success;

use gymscope::output::{profile_bytes, render_in_memory, RenderedProfile};
use gymscope::profile::{Profile, ProfileBuilder, ProfileOptions};

const STRICT: ProfileOptions = ProfileOptions {
    allow_partial_rollouts: false,
};
const PARTIAL: ProfileOptions = ProfileOptions {
    allow_partial_rollouts: true,
};

fn input(t: i64, r: i64, agent: &str) -> String {
    format!(
        r#"{{"responses_create_params":{{"input":"task {t}"}},"agent_ref":{{"name":"{agent}"}},"_ng_task_index":{t},"_ng_rollout_index":{r}}}"#
    )
}

fn rollout(t: i64, r: i64, reward: f64) -> String {
    format!(
        r#"{{"response":{{"output":[{{"text":"out"}}],"usage":{{"input_tokens":10,"output_tokens":{},"total_tokens":{}}}}},"reward":{reward:?},"_ng_task_index":{t},"_ng_rollout_index":{r}}}"#,
        5 + r,
        15 + r
    )
}

fn lines(rows: &[String]) -> String {
    rows.iter().map(|r| format!("{r}\n")).collect()
}

fn profile(inputs: &str, rollouts: &str, options: ProfileOptions) -> Result<Profile, String> {
    profile_bytes(
        inputs.as_bytes(),
        "in.jsonl",
        rollouts.as_bytes(),
        "out.jsonl",
        options,
    )
    .map_err(|e| e.to_string())
}

fn rendered(inputs: &str, p: &Profile) -> RenderedProfile {
    render_in_memory(p, inputs.as_bytes(), "in.jsonl").unwrap()
}

fn two_tasks() -> (String, String) {
    let inputs = lines(&[
        input(0, 0, "a"),
        input(0, 1, "a"),
        input(1, 0, "a"),
        input(1, 1, "a"),
    ]);
    let rollouts = lines(&[
        rollout(1, 1, 1.0),
        rollout(0, 0, 0.0),
        rollout(1, 0, 1.0),
        rollout(0, 1, 1.0),
    ]);
    (inputs, rollouts)
}

#[test]
fn duplicate_input_key_names_both_lines() {
    let inputs = lines(&[input(0, 0, "a"), input(0, 1, "a"), input(0, 1, "a")]);
    let err = profile(&inputs, &lines(&[rollout(0, 0, 1.0)]), PARTIAL).unwrap_err();
    assert_eq!(
        err,
        "Duplicate materialized input row for rollout key (0, 1): 'in.jsonl' line 3 repeats line 2"
    );
}

#[test]
fn duplicate_result_key_names_both_lines() {
    let (inputs, _) = two_tasks();
    let rollouts = lines(&[rollout(0, 0, 1.0), rollout(1, 0, 1.0), rollout(0, 0, 0.0)]);
    let err = profile(&inputs, &rollouts, PARTIAL).unwrap_err();
    assert_eq!(
        err,
        "Duplicate result row for rollout key (0, 0): 'out.jsonl' line 3 repeats line 1"
    );
}

#[test]
fn extra_rollouts_fail_even_in_partial_mode() {
    let (inputs, mut rollouts) = two_tasks();
    rollouts.push_str(&lines(&[rollout(7, 0, 1.0), rollout(2, 3, 1.0)]));
    for options in [STRICT, PARTIAL] {
        let err = profile(&inputs, &rollouts, options).unwrap_err();
        assert_eq!(
            err,
            "Rollout results contain rows with no matching materialized input rows. Found 2 extra rollout rows. \
             Extra rollout keys: [(2, 3), (7, 0)]. First extra row: 'out.jsonl' line 5."
        );
    }
}

#[test]
fn missing_rollouts_fail_unless_partial() {
    let (inputs, _) = two_tasks();
    let rollouts = lines(&[rollout(1, 1, 1.0), rollout(0, 0, 0.0)]);
    let err = profile(&inputs, &rollouts, STRICT).unwrap_err();
    assert!(err.starts_with(
        "Materialized input rows and rollout results do not have matching rollout keys. Missing rollout results \
         for 2 materialized input rows. Missing rollout keys: [(0, 1), (1, 0)]. First input row without a rollout: \
         'in.jsonl' line 2."
    ), "{err}");
    assert!(err.contains("--allow-partial-rollouts"), "{err}");

    let p = profile(&inputs, &rollouts, PARTIAL).unwrap();
    assert_eq!(p.summary.completed_rollout_rows, 2);
    assert_eq!(
        (
            p.summary.complete_input_rows,
            p.summary.partial_input_rows,
            p.summary.missing_input_rows
        ),
        (0, 2, 0)
    );
    let out = String::from_utf8(rendered(&inputs, &p).reward_profiling).unwrap();
    assert!(out.contains(r#""num_rollouts":1,"expected_num_rollouts":2,"missing_num_rollouts":1,"reward_profile_completion_pct":50.0"#), "{out}");
    // The sample is the row of the lowest *matched* rollout: task 1 has only rollout 1.
    let task1: serde_json::Value = serde_json::from_str(out.lines().nth(1).unwrap()).unwrap();
    assert_eq!(task1["rollout_infos"][0]["rollout_id"], "1:1");
}

#[test]
fn malformed_json_names_file_line_and_column() {
    let (inputs, _) = two_tasks();
    let cases: [(&str, &str); 8] = [
        ("{\"reward\": 1.0,}", "line 2, column 16: trailing comma"),
        ("", "line 2, column 1: empty line"),
        ("{\"reward\": NaN}", "line 2, column 12: expected value"),
        (
            "{\"reward\": 1e400}",
            "line 2, column 16: number out of range",
        ),
        (
            "{\"text\": \"\\ud800\"}",
            "line 2, column 17: unexpected end of hex escape",
        ),
        (
            "{\"text\": \"caf\u{e9}\"} x",
            "line 2, column 18: trailing characters",
        ),
        (
            "[1, 2]",
            "line 2, column 1: invalid type: sequence, expected a JSON object",
        ),
        ("{\"a\": \"\u{1}\"}", "control character"),
    ];
    for (bad, want) in cases {
        let rollouts = format!("{}\n{bad}\n{}\n", rollout(0, 0, 1.0), rollout(0, 1, 1.0));
        let err = profile(&inputs, &rollouts, PARTIAL).unwrap_err();
        assert!(
            err.starts_with("Malformed JSON in 'out.jsonl' at "),
            "{bad:?}: {err}"
        );
        assert!(err.contains(want), "{bad:?}: {err}");
    }
    let bom = format!("\u{feff}{}", lines(&[rollout(0, 0, 1.0)]));
    let err = profile(&inputs, &bom, PARTIAL).unwrap_err();
    assert_contains(
        &err,
        "line 1, column 1: the file starts with a UTF-8 byte order mark",
    );
    let mut bad_utf8 = rollout(0, 0, 1.0).into_bytes();
    bad_utf8[30] = 0xff;
    let err = profile_bytes(
        inputs.as_bytes(),
        "in.jsonl",
        &bad_utf8,
        "out.jsonl",
        PARTIAL,
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("line 1, column 31: invalid UTF-8"), "{err}");
    // A trailing blank line is an error for upstream too.
    let err = profile(&inputs, &format!("{}\n\n", rollout(0, 0, 1.0)), PARTIAL).unwrap_err();
    assert!(err.contains("line 2, column 1: empty line"), "{err}");
}

#[test]
fn malformed_json_anywhere_is_reported_before_key_checks() {
    // Upstream parses both files before any key check; so does gymscope.
    let inputs = lines(&[input(0, 0, "a"), input(0, 0, "a")]);
    let rollouts = format!("{}\n{{oops\n", rollout(0, 0, 1.0));
    let err = profile(&inputs, &rollouts, PARTIAL).unwrap_err();
    assert!(
        err.starts_with("Malformed JSON in 'out.jsonl' at line 2"),
        "{err}"
    );
}

#[test]
fn rows_without_index_keys_name_the_field() {
    let (inputs, _) = two_tasks();
    let err = profile(
        &inputs,
        &lines(&[
            rollout(0, 0, 1.0),
            r#"{"reward":1.0,"_ng_task_index":1}"#.into(),
        ]),
        PARTIAL,
    )
    .unwrap_err();
    assert!(
        err.starts_with("'out.jsonl' line 2: field `_ng_rollout_index` is missing"),
        "{err}"
    );
    let err = profile(
        &inputs,
        &lines(&[r#"{"reward":1.0,"_ng_task_index":"0","_ng_rollout_index":0}"#.into()]),
        PARTIAL,
    )
    .unwrap_err();
    assert_eq!(
        err,
        "'out.jsonl' line 1: field `_ng_task_index` must be an integer, found a string"
    );
    let err = profile(
        &lines(&[r#"{"agent_ref":{"name":"a"},"_ng_task_index":0}"#.into()]),
        "",
        PARTIAL,
    )
    .unwrap_err();
    assert!(
        err.starts_with("'in.jsonl' line 1: field `_ng_rollout_index` is missing"),
        "{err}"
    );
}

#[test]
fn null_or_absent_response_profiles_without_usage() {
    // Upstream crashes (`'NoneType' object has no attribute 'get'` / KeyError 'response').
    let inputs = lines(&[input(0, 0, "a"), input(0, 1, "a")]);
    let rollouts = lines(&[
        r#"{"response":null,"reward":1.0,"_ng_task_index":0,"_ng_rollout_index":0}"#.into(),
        r#"{"reward":0.0,"_ng_task_index":0,"_ng_rollout_index":1}"#.into(),
    ]);
    let p = profile(&inputs, &rollouts, STRICT).unwrap();
    let names: Vec<&str> = (0..p.columns.len()).map(|c| p.column_name(c)).collect();
    assert_eq!(names, ["reward"]);
    assert_eq!(p.tasks[0].columns[0].mean, Some(0.5));
}

#[test]
fn missing_agent_ref_leaves_agent_metrics_whatever_the_rollout_says() {
    // NeMo Gym v0.7.0 names a rollout's agent from its materialized row alone (its run label):
    // a rollout row's own `agent_ref` changes nothing.
    let inputs = lines(&[
        r#"{"_ng_task_index":0,"_ng_rollout_index":0}"#.into(),
        r#"{"_ng_task_index":0,"_ng_rollout_index":1}"#.into(),
        input(1, 0, "b"),
    ]);
    let rollouts = lines(&[
        r#"{"reward":1.0,"agent_ref":{"name":"a"},"_ng_task_index":0,"_ng_rollout_index":0}"#
            .into(),
        rollout(0, 1, 0.0),
        rollout(1, 0, 1.0),
    ]);
    let p = profile(&inputs, &rollouts, STRICT).unwrap();
    let agents: Vec<(&str, usize)> = p
        .agents
        .iter()
        .map(|a| (&*a.agent.name, a.num_rollouts))
        .collect();
    assert_eq!(agents, [("b", 1)]);
    assert_eq!(p.tasks[0].num_rollouts, 2);
    assert_eq!(p.warnings.len(), 1);
    assert!(
        p.warnings[0].contains("2 rollouts have no agent name") && p.warnings[0].contains("line 1"),
        "{:?}",
        p.warnings
    );
}

#[test]
fn values_that_crash_upstreams_histogram_profile_fine() {
    // np.histogram(bins=64) raises "Too many bins for data range" for these; the histogram is
    // never written, so gymscope just profiles.
    let inputs = lines(&[input(0, 0, "a"), input(1, 0, "a"), input(1, 1, "a")]);
    let rollouts = lines(&[
        r#"{"reward":1.0,"ts":140737488355328,"_ng_task_index":0,"_ng_rollout_index":0}"#.into(),
        r#"{"reward":1.0,"ts":1e15,"_ng_task_index":1,"_ng_rollout_index":0}"#.into(),
        r#"{"reward":0.0,"ts":1000000000000001,"_ng_task_index":1,"_ng_rollout_index":1}"#.into(),
    ]);
    let p = profile(&inputs, &rollouts, STRICT).unwrap();
    let out = String::from_utf8(rendered(&inputs, &p).reward_profiling).unwrap();
    assert!(out.contains(r#""max/ts":140737488355328.0"#), "{out}");
    assert!(out.contains(r#""max/ts":1000000000000001.0"#), "{out}");
}

#[test]
fn output_is_independent_of_chunking_and_row_order() {
    let mut inputs = Vec::new();
    let mut rollouts = Vec::new();
    for t in 0..30 {
        for r in 0..3 {
            inputs.push(input(t, r, if t % 2 == 0 { "even" } else { "odd" }));
            rollouts.push(rollout(t, r, ((t * 7 + r * 3) % 5) as f64 / 4.0));
        }
    }
    let inputs = lines(&inputs);
    let sorted = lines(&rollouts);
    let want = rendered(&inputs, &profile(&inputs, &sorted, STRICT).unwrap());
    rollouts.reverse();
    rollouts.swap(3, 50);
    let shuffled = lines(&rollouts).replace('\n', "\r\n");
    for chunk in [1, 2, 7, 64, 1000, 1 << 20] {
        let mut b = ProfileBuilder::new("in.jsonl", "out.jsonl");
        for c in inputs.as_bytes().chunks(chunk) {
            b.push_inputs(c).unwrap();
        }
        for c in shuffled.as_bytes().chunks(chunk) {
            b.push_rollouts(c).unwrap();
        }
        let got = rendered(&inputs, &b.finish(STRICT).unwrap());
        assert_eq!(got.reward_profiling, want.reward_profiling, "chunk {chunk}");
        assert_eq!(got.agent_metrics, want.agent_metrics, "chunk {chunk}");
    }
}

#[test]
fn empty_files_give_empty_outputs() {
    let p = profile("", "", STRICT).unwrap();
    let out = rendered("", &p);
    assert!(out.reward_profiling.is_empty());
    assert_eq!(out.agent_metrics, b"[]");
    assert_eq!(p.summary.completion_pct(), 100.0);
}

#[test]
fn cli_reports_missing_files_and_errors_with_exit_1() {
    let dir = tempfile::tempdir().unwrap();
    let (inputs, _) = two_tasks();
    std::fs::write(dir.path().join("in.jsonl"), &inputs).unwrap();
    let out = common::run_gymscope(&[
        "profile",
        "--inputs",
        dir.path().join("in.jsonl").to_str().unwrap(),
        "--rollouts",
        "nope.jsonl",
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "Error: Input file not found: 'nope.jsonl' (--rollouts). Check the path is spelled correctly.\n"
    );
    std::fs::write(dir.path().join("r.jsonl"), lines(&[rollout(0, 0, 1.0)])).unwrap();
    let out = common::run_gymscope(&[
        "profile",
        "--inputs",
        dir.path().join("in.jsonl").to_str().unwrap(),
        "--rollouts",
        dir.path().join("r.jsonl").to_str().unwrap(),
    ]);
    assert_exit(
        &out,
        1,
        "Missing rollout results for 3 materialized input rows",
    );
    assert!(
        !dir.path().join("r_reward_profiling.jsonl").exists(),
        "no output on error"
    );
    let out = common::run_gymscope(&[
        "profile",
        &format!(
            "+materialized_inputs_jsonl_fpath={}",
            dir.path().join("in.jsonl").display()
        ),
        &format!(
            "+rollouts_jsonl_fpath={}",
            dir.path().join("r.jsonl").display()
        ),
        "++allow_partial_rollouts=True",
    ]);
    assert_success(&out);
    assert!(String::from_utf8_lossy(&out.stdout)
        .contains("Reward profile completion: 1/4 rollout rows (25.00%)"));
    assert!(dir.path().join("r_reward_profiling.jsonl").exists());
}
