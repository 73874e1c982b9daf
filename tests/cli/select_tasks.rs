//! `gymscope select-tasks` end to end on a profiled three-agent run: the rows are the profile's
//! samples of the tasks a reference computation (serde, here) keeps, in task order; seeded
//! samples and splits are reproducible and disjoint; refusals exit 2 or 1 naming why and leave
//! nothing behind.

use crate::common::assert_contains;
use crate::common::run_gymscope;
use gymscope_testkit::gen_run::generate_agentic;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// `select-tasks --profile <profile> -o <out>` and then `extra`.
fn select(profile: &Path, out: &Path, extra: &[&str]) -> std::process::Output {
    let mut argv = vec!["select-tasks", "--profile", s(profile), "-o", s(out)];
    argv.extend(extra);
    run_gymscope(&argv)
}

/// [`select`], which must succeed.
fn selected(profile: &Path, out: &Path, extra: &[&str]) -> std::process::Output {
    let o = select(profile, out, extra);
    assert!(o.status.success(), "{}", stderr(&o));
    o
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn stderr(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A profiled run: (dir, profile path).
fn profiled() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let (inputs, rollouts) = generate_agentic(dir.path(), "run", 80, 4, 3000);
    let o = run_gymscope(&[
        "profile",
        "--inputs",
        s(&inputs),
        "--rollouts",
        s(&rollouts),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let profile = dir.path().join("run_reward_profiling.jsonl");
    assert!(profile.is_file());
    (dir, profile)
}

/// (task, pass rate, sample as the profile line holds it) per profile row.
fn reference(profile: &Path) -> Vec<(i64, Option<f64>, String)> {
    std::fs::read_to_string(profile)
        .unwrap()
        .lines()
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            let rewards: Vec<f64> = v["rollout_infos"]
                .as_array()
                .unwrap()
                .iter()
                .filter_map(|i| match &i["reward"] {
                    Value::Number(n) => n.as_f64(),
                    Value::Bool(b) => Some(f64::from(u8::from(*b))),
                    _ => None,
                })
                .collect();
            let pass = (!rewards.is_empty()).then(|| {
                rewards.iter().filter(|&&r| r >= 1.0).count() as f64 / rewards.len() as f64
            });
            let sample = serde_json::to_string(&v["sample"]).unwrap();
            (v["_ng_task_index"].as_i64().unwrap(), pass, sample)
        })
        .collect()
}

fn rows(p: &Path) -> Vec<String> {
    std::fs::read_to_string(p)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect()
}

#[test]
fn a_band_keeps_the_tasks_a_reference_keeps_as_their_samples() {
    let (dir, profile) = profiled();
    let out = dir.path().join("new/curated.jsonl");
    let o = selected(
        &profile,
        &out,
        &["--min-pass", "0.25", "--max-pass", "0.75"],
    );
    let want: Vec<String> = reference(&profile)
        .into_iter()
        .filter(|(_, p, _)| p.is_some_and(|p| (0.25..=0.75).contains(&p)))
        .map(|(_, _, sample)| sample)
        .collect();
    assert!(
        want.len() > 5 && want.len() < 80,
        "{} tasks in the band",
        want.len()
    );
    assert_eq!(rows(&out), want);
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert_contains(&stdout, &format!("kept: {} (", want.len()));
    assert!(
        stdout.contains("library_tool_agent"),
        "per-agent counts: {stdout}"
    );
    let sel: Value = serde_json::from_slice(
        &std::fs::read(dir.path().join("new/curated.selection.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(sel["kept"], want.len());
    assert_eq!(sel["tasks"], 80);
    assert_eq!(sel["options"]["min_pass"], 0.25);
    let dropped = sel["dropped"]["pass_rate_outside_band"].as_u64().unwrap();
    assert_eq!(
        dropped + want.len() as u64 + sel["dropped"]["no_numeric_reward"].as_u64().unwrap(),
        80
    );

    // --drop-saturated is the mixed tasks; --where says the same in the query language.
    let a = dir.path().join("a.jsonl");
    let b = dir.path().join("b.jsonl");
    assert!(select(&profile, &a, &["--drop-saturated"]).status.success());
    let o = run_gymscope(&[
        "select-tasks",
        "--profile",
        s(&profile),
        "-o",
        s(&b),
        "--where",
        r#"task.group == "mixed""#,
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap());
}

#[test]
fn a_seeded_sample_and_split_are_reproducible_and_disjoint() {
    let (dir, profile) = profiled();
    let run = |name: &str, seed: &str| {
        let out = dir.path().join(name);
        selected(
            &profile,
            &out,
            &[
                "--max-tasks",
                "40",
                "--seed",
                seed,
                "--stratify",
                "agent",
                "--val-fraction",
                "0.25",
                "--annotate",
            ],
        );
        (
            rows(&out),
            rows(&dir.path().join(name.replace(".jsonl", ".val.jsonl"))),
        )
    };
    let (train, val) = run("one.jsonl", "7");
    assert_eq!(
        (train.len(), val.len()),
        (30, 10),
        "round(0.25 × 40) = 10 after the cap"
    );
    assert_eq!(
        run("two.jsonl", "7"),
        (train.clone(), val.clone()),
        "the same seed, the same files"
    );
    assert_ne!(run("three.jsonl", "8").0, train);
    let all: Vec<&String> = train.iter().chain(&val).collect();
    let mut unique = all.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), 40, "no task in both files");
    let first: Value = serde_json::from_str(&train[0]).unwrap();
    for key in [
        "num_rollouts",
        "rewards",
        "reward_mean",
        "reward_std",
        "reward_var",
        "group",
        "pass_rate",
    ] {
        assert!(
            first["profile_info"].get(key).is_some(),
            "profile_info.{key}: {first}"
        );
    }
    // grouped by agent: no agent in both
    let out = dir.path().join("grouped.jsonl");
    selected(
        &profile,
        &out,
        &["--val-fraction", "0.3", "--group-by", "agent"],
    );
    let agent = |l: &String| serde_json::from_str::<Value>(l).unwrap()["agent_ref"]["name"].clone();
    let val_agents: Vec<Value> = rows(&dir.path().join("grouped.val.jsonl"))
        .iter()
        .map(agent)
        .collect();
    assert!(!val_agents.is_empty());
    assert!(rows(&out).iter().all(|l| !val_agents.contains(&agent(l))));
}

#[test]
fn refusals_name_why_and_leave_nothing_behind() {
    let (dir, profile) = profiled();
    let out = dir.path().join("out/curated.jsonl");
    let code = |args: &[&str]| {
        let o = select(&profile, &out, args);
        (o.status.code(), stderr(&o))
    };
    let (c, e) = code(&["--min-pass", "0.9", "--max-pass", "0.1"]);
    assert_eq!(c, Some(2), "{e}");
    assert!(e.contains("band is empty"), "{e}");
    let (c, e) = code(&["--min-pass", "0.51", "--max-pass", "0.52"]);
    assert_eq!(c, Some(1), "{e}");
    assert!(
        e.contains("no task selected") && e.contains("pass_rate_outside_band"),
        "{e}"
    );
    let (c, e) = code(&["--where", "output ~ \"x\""]);
    assert_eq!((c, e.contains("rollout field")), (Some(2), true), "{e}");
    let (c, e) = code(&["--where", "task.pass_rate >"]);
    assert_eq!((c, e.contains("column")), (Some(2), true), "{e}");
    let (c, e) = code(&["--stratify", "agent"]);
    assert_eq!(c, Some(2), "--stratify needs --max-tasks: {e}");
    // a rollouts file is not a profile
    let rollouts = dir.path().join("run.jsonl");
    let o = select(&rollouts, &out, &[]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o)
            .contains("line 1: field `rollout_infos` is missing: this looks like a rollout row"),
        "{}",
        stderr(&o)
    );
    // the output is never the input
    let before = std::fs::read(&profile).unwrap();
    let o = select(&profile, &profile, &[]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert_eq!(std::fs::read(&profile).unwrap(), before);
    // nothing written by any refusal, no temp file
    let left: Vec<_> = std::fs::read_dir(dir.path().join("out"))
        .map(|d| d.flatten().map(|e| e.file_name()).collect())
        .unwrap_or_default();
    assert!(left.is_empty(), "{left:?}");
}

/// The outputs are a set, written all or nothing: a failure on the last of them (here its
/// `.selection.json` is a folder) left the new main file beside the old run's others.
#[test]
fn a_late_failure_leaves_the_previous_set_whole() {
    let (dir, profile) = profiled();
    let out = dir.path().join("c.jsonl");
    let run = |extra: &[&str]| select(&profile, &out, extra);
    let o = run(&[]);
    assert!(o.status.success(), "{}", stderr(&o));
    let before = std::fs::read(&out).unwrap();
    let selection = dir.path().join("c.selection.json");
    std::fs::remove_file(&selection).unwrap();
    std::fs::create_dir(&selection).unwrap();
    let o = run(&["--val-fraction", "0.5", "--seed", "3"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert_contains(&stderr(&o), "c.selection.json': it is a directory");
    assert_eq!(
        std::fs::read(&out).unwrap(),
        before,
        "the main file is the old one"
    );
    assert!(!dir.path().join("c.val.jsonl").exists());
    let names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        !names
            .iter()
            .any(|n| n.contains(".tmp") || n.starts_with('.')),
        "{names:?}"
    );
}
