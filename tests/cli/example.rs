//! `--example`: a newcomer without a run sees real output from the embedded example (three agents,
//! 30 tasks × 4 repeats: the app's "Load the example run"), and nothing is left behind.

use crate::common::gymscope_bin;
use std::process::{Command, Output};

/// Runs gymscope in `cwd` with its temporary folder in `tmp` (so what it leaves there shows).
fn run_in(cwd: &std::path::Path, tmp: &std::path::Path, args: &[&str]) -> Output {
    Command::new(gymscope_bin())
        .args(args)
        .current_dir(cwd)
        .env("TMPDIR", tmp)
        .output()
        .unwrap()
}

#[test]
fn report_health_and_query_run_on_the_embedded_example() {
    let (cwd, tmp) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let (cwd, tmp) = (cwd.path(), tmp.path());
    let said = |o: &Output| {
        format!(
            "{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        )
    };

    // The report, by default into the current folder, as the run's own files would give it.
    let r = run_in(cwd, tmp, &["report", "--example"]);
    assert!(r.status.success(), "{}", said(&r));
    let page = std::fs::read_to_string(cwd.join("example_report.html")).unwrap();
    assert!(
        page.contains("Example run: three agents, four repeats"),
        "the title"
    );
    let example = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/example-run");
    let own = cwd.join("own.html");
    let r = run_in(
        cwd,
        tmp,
        &[
            "report",
            "--inputs",
            example
                .join("example_rollouts_materialized_inputs.jsonl")
                .to_str()
                .unwrap(),
            "--rollouts",
            example.join("example_rollouts.jsonl").to_str().unwrap(),
            "--title",
            "Example run: three agents, four repeats",
            "-o",
            own.to_str().unwrap(),
        ],
    );
    assert!(r.status.success(), "{}", said(&r));
    assert_eq!(
        page,
        std::fs::read_to_string(&own).unwrap(),
        "the same page as from the files"
    );

    // Health with the example's materialized inputs (120 expected, none missing).
    let r = run_in(cwd, tmp, &["health", "--example", "--format", "json"]);
    assert!(r.status.success(), "{}", said(&r));
    let v: serde_json::Value = serde_json::from_slice(&r.stdout).unwrap();
    assert_eq!(
        (
            v["rollouts"]["total"].as_u64(),
            v["rollouts"]["expected"].as_u64()
        ),
        (Some(120), Some(120)),
        "{v}"
    );

    // A query names only its expression; 63 of the example's 120 rewards are 1.
    let r = run_in(cwd, tmp, &["query", "--example", "reward == 1", "--count"]);
    assert!(r.status.success(), "{}", said(&r));
    assert_eq!(String::from_utf8_lossy(&r.stdout).trim(), "63");

    // The example comparison: the app's two checkpoints of 24 tasks, paired by content.
    let r = run_in(cwd, tmp, &["compare", "--example", "--format", "json"]);
    assert!(r.status.success(), "{}", said(&r));
    let v: serde_json::Value = serde_json::from_slice(&r.stdout).unwrap();
    assert_eq!(v["paired_tasks"], 24, "{}", &said(&r)[..200]);
    let r = run_in(cwd, tmp, &["compare", "--example", "base.jsonl"]);
    assert_eq!(r.status.code(), Some(2), "{}", said(&r));

    // Files of one's own and --example are refused together (exit 2).
    let r = run_in(
        cwd,
        tmp,
        &["query", "--example", "--rollouts", "x.jsonl", "reward == 1"],
    );
    assert_eq!(r.status.code(), Some(2), "{}", said(&r));

    let left: Vec<_> = std::fs::read_dir(tmp)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert!(
        left.is_empty(),
        "the example's temporary folder was left: {left:?}"
    );
}

/// The embedded example is the showcase generator's output, byte for byte
/// (`GYMSCOPE_WRITE_EXAMPLE=1` rewrites `assets/example-run/` after a change to the generator).
#[test]
fn the_embedded_example_is_the_generators_run() {
    let assets = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/example-run");
    if std::env::var_os("GYMSCOPE_WRITE_EXAMPLE").is_some() {
        crate::common::gen_run::generate_showcase(&assets, "example_rollouts");
    }
    let tmp = tempfile::tempdir().unwrap();
    let (inputs, rollouts) =
        crate::common::gen_run::generate_showcase(tmp.path(), "example_rollouts");
    for made in [inputs, rollouts] {
        let name = made.file_name().unwrap();
        assert!(
            std::fs::read(&made).unwrap() == std::fs::read(assets.join(name)).unwrap(),
            "assets/example-run/{name:?} is not the generator's output"
        );
    }
}
