//! Where a user meets the tool first: missing output folders, outputs that are devices, and
//! outputs that are files a command reads beside its inputs.

use crate::common::{fixtures_dir, repo_root, run_gymscope};
use std::path::{Path, PathBuf};
use std::process::Output;

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn run(args: &[&str]) -> Output {
    run_gymscope(args)
}

fn blackjack() -> (PathBuf, PathBuf) {
    let dir = fixtures_dir().join("blackjack");
    (
        dir.join("example_rollouts_materialized_inputs.jsonl"),
        dir.join("example_rollouts.jsonl"),
    )
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn every_command_creates_its_output_folder() {
    let dir = tempfile::tempdir().unwrap();
    let (inputs, rollouts) = blackjack();
    let report = dir.path().join("a/report.html");
    let r = run(&[
        "report",
        "--inputs",
        s(&inputs),
        "--rollouts",
        s(&rollouts),
        "-o",
        s(&report),
    ]);
    assert!(r.status.success() && report.is_file(), "{}", text(&r));

    let pivots_in = repo_root().join("tests/fixtures/pivot/upstream/example.jsonl");
    let fixed = dir.path().join("b/fixed.jsonl");
    let r = run(&[
        "validate-pivot",
        "--path",
        s(&pivots_in),
        "--fix",
        s(&fixed),
    ]);
    assert!(fixed.is_file(), "{}", text(&r));

    let source = repo_root()
        .join("tests/fixtures/pivot-build/upstream/example_multi_step.example_rollouts.jsonl");
    let pivots = dir.path().join("c/pivots.jsonl");
    let r = run(&[
        "build-pivot",
        "--input",
        s(&source),
        "--output",
        s(&pivots),
        "--agent-ref",
        "pivot_agent",
    ]);
    assert!(r.status.success() && pivots.is_file(), "{}", text(&r));
}

#[test]
fn a_device_output_is_written_in_place() {
    let (inputs, rollouts) = blackjack();
    let r = run(&[
        "report",
        "--inputs",
        s(&inputs),
        "--rollouts",
        s(&rollouts),
        "-o",
        "/dev/null",
    ]);
    assert!(r.status.success(), "{}", text(&r));
    assert!(!std::fs::metadata("/dev/null").unwrap().is_file());
    if Path::new("/dev/full").exists() {
        let r = run(&[
            "report",
            "--inputs",
            s(&inputs),
            "--rollouts",
            s(&rollouts),
            "-o",
            "/dev/full",
        ]);
        assert_eq!(r.status.code(), Some(1), "{}", text(&r));
        assert!(text(&r).contains("No space left on device"), "{}", text(&r));
    }
}

#[test]
fn report_never_writes_over_the_files_it_reads_beside_the_rollouts() {
    let dir = tempfile::tempdir().unwrap();
    let (inputs, rollouts) = blackjack();
    let run_rollouts = dir.path().join("r.jsonl");
    let run_inputs = dir.path().join("r_materialized_inputs.jsonl");
    std::fs::copy(&rollouts, &run_rollouts).unwrap();
    std::fs::copy(&inputs, &run_inputs).unwrap();
    for name in [
        "r_failures.jsonl",
        "quality_summary.json",
        "rollout_verdicts.jsonl",
    ] {
        let beside = dir.path().join(name);
        let before = if name.ends_with(".json") { "{}\n" } else { "" };
        std::fs::write(&beside, before).unwrap();
        let r = run(&[
            "report",
            "--inputs",
            s(&run_inputs),
            "--rollouts",
            s(&run_rollouts),
            "-o",
            s(&beside),
        ]);
        assert_eq!(r.status.code(), Some(2), "{name}: {}", text(&r));
        assert!(
            text(&r).contains("refusing to write"),
            "{name}: {}",
            text(&r)
        );
        assert_eq!(std::fs::read_to_string(&beside).unwrap(), before, "{name}");
        std::fs::remove_file(&beside).unwrap();
    }
}
