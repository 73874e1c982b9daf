//! `gymscope compare BASELINE CANDIDATE…`: three runs paired with the baseline and labelled by
//! their shortest distinguishing path suffix, hand-computed p-values, Holm and flips through the
//! CLI, Gym's `--baseline/--candidates` spelling, `--fail-if-worse` exit codes, usage errors,
//! and the Markdown output against its snapshot (`tests/cli/snapshots/compare_three_runs.md`;
//! `UPDATE_SNAPSHOTS=1` rewrites it).

use crate::common;
use crate::common::compare_runs;

use common::run_gymscope;
use compare_runs::{numbered, run, task, write_run};
use serde_json::{json, Value};
use std::path::Path;

/// `dir/<name>/rollouts.jsonl` (+ inputs): three runs whose files all have the same name.
fn three_runs(dir: &Path) -> [String; 3] {
    // The baseline's tasks (c2 is the baseline again, rows scrambled).
    let base_tasks = || {
        numbered(&[
            ("p0", &[0.0, 0.0]),
            ("p1", &[1.0, 0.0]),
            ("p2", &[0.0, 0.0]),
            ("p3", &[1.0, 1.0]),
            ("p4", &[1.0, 1.0]),
            ("only in base", &[1.0, 1.0]),
        ])
    };
    let base = run(&base_tasks(), 0.6, 0);
    // c1: deltas +1, +0.5, +1, 0, −0.5 (p0..p4); other indices, another order, one new task.
    let c1 = run(
        &numbered(&[
            ("p4", &[0.0, 1.0]),
            ("new", &[0.0, 0.0]),
            ("p2", &[1.0, 1.0]),
            ("p0", &[1.0, 1.0]),
            ("p1", &[1.0, 1.0]),
            ("p3", &[1.0, 1.0]),
        ]),
        0.7,
        3,
    );
    let mut out = [String::new(), String::new(), String::new()];
    let c2 = run(&base_tasks(), 0.9, 5);
    for (i, (name, files)) in [("base", &base), ("c1", &c1), ("c2", &c2)]
        .iter()
        .enumerate()
    {
        let sub = dir.join(name);
        std::fs::create_dir_all(&sub).unwrap();
        out[i] = write_run(&sub, "rollouts", files).1;
    }
    out
}

/// Exit code, stdout and stderr of a gymscope run (shared with `compare_aggregate`).
pub(crate) fn output(args: &[&str]) -> (i32, String, String) {
    let out = run_gymscope(args);
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The JSON a successful gymscope run prints.
pub(crate) fn json_of(args: &[&str]) -> Value {
    let (code, stdout, stderr) = output(args);
    assert_eq!(code, 0, "{stderr}");
    serde_json::from_str(&stdout).unwrap()
}

#[test]
fn three_runs_each_paired_with_the_baseline_and_judged() {
    let dir = tempfile::tempdir().unwrap();
    let [base, c1, c2] = three_runs(dir.path());
    let doc = json_of(&["compare", &base, &c1, &c2, "--format", "json"]);
    // The two-run schema is the first candidate's, with the labels as names.
    assert_eq!(doc["a"], json!({"name": "base/rollouts.jsonl", "tasks": 6}));
    assert_eq!(doc["b"], json!({"name": "c1/rollouts.jsonl", "tasks": 6}));
    assert_eq!(doc["mean_reward"]["delta"].as_f64().unwrap(), 0.4);
    assert_eq!(doc["baseline"]["name"], "base/rollouts.jsonl");
    let cands = doc["candidates"].as_array().unwrap();
    assert_eq!(cands.len(), 2);
    for ((c, name), paired) in cands.iter().zip(["c1", "c2"]).zip([5, 6]) {
        assert_eq!(c["name"], format!("{name}/rollouts.jsonl"));
        let path = c["path"].as_str().unwrap();
        assert!(Path::new(path).is_absolute(), "{path}");
        assert!(path.ends_with(&format!("{name}/rollouts.jsonl")), "{path}");
        assert_eq!(c["paired_tasks"], paired);
    }
    let r1 = &cands[0]["metrics"]["reward"];
    // Deltas +1, +0.5, +1, 0, −0.5 (Σ 2): of the 16 sign patterns of the nonzero ones, |Σ| ≥ 2
    // for 6 (ones summing to ±2 with halves not against them): p = 6/16, every pattern tried.
    assert_eq!(r1["p"], 0.375);
    assert_eq!(r1["p_method"], "exact");
    // Holm over {0.375, 1}: 2 × 0.375, then max(0.75, 1).
    assert_eq!(r1["p_holm"], 0.75);
    assert_eq!(r1["verdict"], "no detectable difference");
    let r2 = &cands[1]["metrics"]["reward"];
    assert_eq!(
        (&r2["delta"], &r2["p"], &r2["p_holm"]),
        (&json!(0.0), &json!(1.0), &json!(1.0))
    );
    for (_, m) in cands[1]["metrics"].as_object().unwrap() {
        assert_eq!(m["p"], 1.0, "identical runs: {m}");
        assert_eq!(m["verdict"], "no detectable difference");
    }
    assert_eq!(
        cands[0]["flips"],
        json!({"identical": 1, "flipped_to_pass": 3, "flipped_to_fail": 1, "without_reward": 0,
            "only_baseline": 1, "only_candidate": 1})
    );
    assert_eq!(cands[1]["flips"]["identical"], 6);
    assert_eq!(cands[1]["power"]["zero_variance"], true);
    assert!(cands[1]["power"]["minimum_detectable_effect"].is_null());
    assert!(
        cands[0]["power"]["minimum_detectable_effect"]
            .as_f64()
            .unwrap()
            > 0.0
    );

    // Gym's spelling gives the same document.
    let gym = json_of(&[
        "compare",
        "--baseline",
        &base,
        "--candidates",
        &c1,
        &c2,
        "--format",
        "json",
    ]);
    assert_eq!(gym, doc);

    // Text: a row per candidate and metric, labelled; the power line's words.
    let (code, text, _) = output(&["compare", &base, &c1, &c2]);
    assert_eq!(code, 0);
    for label in ["c1/rollouts.jsonl", "c2/rollouts.jsonl"] {
        let rows = text
            .lines()
            .filter(|l| l.trim_start().starts_with(label) && l.contains(" reward "))
            .count();
        assert_eq!(rows, 1, "{label}:\n{text}");
    }
    assert!(text.contains("minimum detectable effect"), "{text}");
    assert!(text.contains("the observed variance is zero"), "{text}");
    assert!(text.contains("== base/rollouts.jsonl vs c2/rollouts.jsonl =="));
}

/// Twenty tasks solved by the baseline and failed by the candidate (or the other way round).
fn one_sided(dir: &Path, name: &str, reward: f64) -> String {
    let prompts: Vec<String> = (0..20).map(|i| format!("q{i}")).collect();
    let tasks: Vec<_> = prompts
        .iter()
        .enumerate()
        .map(|(i, p)| task(i as i64, p, &[reward]))
        .collect();
    write_run(dir, name, &run(&tasks, 0.5, 0)).1
}

#[test]
fn fail_if_worse_exits_3_only_for_a_worse_candidate() {
    let dir = tempfile::tempdir().unwrap();
    let good = one_sided(dir.path(), "good", 1.0);
    let bad = one_sided(dir.path(), "bad", 0.0);
    // 20 deltas of −1: no random sign pattern reaches |−20| but the two all-same ones, which a
    // draw of 10,000 almost never hits: p ≈ 1/10,001.
    let doc = json_of(&["compare", &good, &bad, "--format", "json"]);
    let r = &doc["candidates"][0]["metrics"]["reward"];
    assert_eq!(r["p_method"], "permutation");
    assert!(r["p"].as_f64().unwrap() < 0.001, "{r}");
    assert_eq!(r["verdict"], "worse");

    let (code, text, stderr) = output(&["compare", &good, &bad, "--fail-if-worse"]);
    assert_eq!(code, 3, "{stderr}");
    assert!(text.contains("worse"));
    assert!(stderr.contains("bad.jsonl"), "{stderr}");
    assert_eq!(output(&["compare", &good, &bad]).0, 0, "without the flag");
    // Better, or the same, is not a failure.
    assert_eq!(output(&["compare", &bad, &good, "--fail-if-worse"]).0, 0);
    assert_eq!(output(&["compare", &good, &good, "--fail-if-worse"]).0, 0);
    // Among several candidates one worse one is enough (Holm still leaves p tiny).
    assert_eq!(
        output(&["compare", &bad, &good, &bad, "--fail-if-worse"]).0,
        0
    );
    assert_eq!(
        output(&["compare", &good, &good, &bad, "--fail-if-worse"]).0,
        3
    );
    // A stricter alpha than the p-value turns the verdict off.
    let doc = json_of(&[
        "compare", &good, &bad, "--format", "json", "--alpha", "0.00001",
    ]);
    assert_eq!(
        doc["candidates"][0]["metrics"]["reward"]["verdict"],
        "no detectable difference"
    );
}

#[test]
fn bad_numbers_and_missing_runs_are_usage_errors() {
    let dir = tempfile::tempdir().unwrap();
    let good = one_sided(dir.path(), "good", 1.0);
    for bad in [
        vec!["--alpha", "nan"],
        vec!["--alpha", "inf"],
        vec!["--alpha", "0"],
        vec!["--alpha", "1.5"],
        vec!["--effect", "nan"],
        vec!["--effect", "inf"],
        vec!["--effect", "0"],
    ] {
        let mut args = vec!["compare", good.as_str(), good.as_str()];
        args.extend(bad.iter().copied());
        let (code, _, stderr) = output(&args);
        assert_eq!(code, 2, "{bad:?}: {stderr}");
        assert!(stderr.contains(bad[0]), "{bad:?}: {stderr}");
    }
    let (code, _, stderr) = output(&["compare", &good]);
    assert_eq!(code, 2);
    assert!(stderr.contains("at least one candidate"), "{stderr}");
    assert_eq!(output(&["compare"]).0, 2);
    assert_eq!(output(&["compare", "--baseline", &good]).0, 2);
    // A missing candidate names itself.
    let (code, _, stderr) = output(&["compare", &good, &good, "nope.jsonl"]);
    assert_eq!(code, 1);
    assert!(stderr.contains("'nope.jsonl' (C)"), "{stderr}");
}

#[test]
fn effect_asks_for_repeats_or_tasks() {
    let dir = tempfile::tempdir().unwrap();
    let [base, c1, _] = three_runs(dir.path());
    let doc = json_of(&[
        "compare", &base, &c1, "--format", "json", "--effect", "0.05",
    ]);
    let p = &doc["candidates"][0]["power"];
    assert_eq!(p["effect"], 0.05);
    let mde = p["minimum_detectable_effect"].as_f64().unwrap();
    assert!(mde > 0.05, "{p}");
    assert!(
        p["needed"]["repeats"].is_u64() || p["needed"]["tasks"].is_u64(),
        "{p}"
    );
    // At an effect above the MDE nothing more is needed.
    let big = format!("{}", mde * 1.01);
    let doc = json_of(&["compare", &base, &c1, "--format", "json", "--effect", &big]);
    assert_eq!(doc["candidates"][0]["power"]["needed"], "already");
}

#[test]
fn markdown_matches_its_snapshot_and_renders_as_tables() {
    let dir = tempfile::tempdir().unwrap();
    let [base, c1, c2] = three_runs(dir.path());
    let (code, md, stderr) = output(&[
        "compare", &base, &c1, &c2, "--format", "md", "--effect", "0.2",
    ]);
    assert_eq!(code, 0, "{stderr}");
    // Every table row has as many cells as its header, and the verdict rows name their run.
    let mut header_cells = 0;
    for line in md.lines().filter(|l| l.starts_with('|')) {
        let cells = line.replace("\\|", "").matches('|').count();
        if line.starts_with("| run |") {
            header_cells = cells;
        } else {
            assert_eq!(cells, header_cells, "{line}");
        }
    }
    let verdict_rows: Vec<&str> = md
        .lines()
        .filter(|l| l.contains("| reward |") || l.contains("| output\\_tokens |"))
        .collect();
    assert_eq!(verdict_rows.len(), 4, "{md}");
    assert!(verdict_rows
        .iter()
        .all(|l| l.starts_with("| c1/rollouts.jsonl |") || l.starts_with("| c2/rollouts.jsonl |")));
    assert!(md.contains("minimum detectable effect"));
    assert!(md.contains("### Largest flips"));

    let snapshot =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/cli/snapshots/compare_three_runs.md");
    if std::env::var_os("UPDATE_SNAPSHOTS").is_some() {
        std::fs::create_dir_all(snapshot.parent().unwrap()).unwrap();
        std::fs::write(&snapshot, &md).unwrap();
    }
    let want = std::fs::read_to_string(&snapshot).unwrap();
    assert_eq!(
        md, want,
        "the Markdown changed; UPDATE_SNAPSHOTS=1 rewrites the snapshot"
    );
}

#[test]
fn the_report_has_a_verdict_row_per_candidate_and_links_each_flip() {
    let dir = tempfile::tempdir().unwrap();
    let [base, c1, c2] = three_runs(dir.path());
    let out = dir.path().join("report.html");
    let (code, _, stderr) = output(&[
        "compare",
        &base,
        &c1,
        &c2,
        "--report",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{stderr}");
    let html = std::fs::read_to_string(&out).unwrap();
    let start = html
        .find("<section id=\"verdicts\">")
        .expect("a verdict section");
    let section = &html[start..start + html[start..].find("</section>").unwrap()];
    for label in ["c1/rollouts.jsonl", "c2/rollouts.jsonl"] {
        let rows = section
            .matches(&format!("<th>{label}</th><td>reward</td>"))
            .count();
        assert_eq!(rows, 1, "{label}");
    }
    // c1's four flipped tasks (baseline indices 0, 1, 2 up; 4 down), each a link to its rollouts.
    for (task, class) in [(0, "better"), (1, "better"), (2, "better"), (4, "worse")] {
        assert!(
            section.contains(&format!("<a class=\"flip {class}\" href=\"#task={task}\">")),
            "task {task}: {section}"
        );
    }
    assert!(section.contains("minimum detectable effect"));
    // Shared as a file: no local path in it.
    let root = dir.path().to_string_lossy().into_owned();
    assert!(!html.contains(&root), "a local path in the report");
    // Deterministic.
    let again = dir.path().join("again.html");
    let (code, _, _) = output(&[
        "compare",
        &base,
        &c1,
        &c2,
        "--report",
        again.to_str().unwrap(),
    ]);
    assert_eq!(code, 0);
    assert_eq!(std::fs::read(&again).unwrap(), html.as_bytes());
}
