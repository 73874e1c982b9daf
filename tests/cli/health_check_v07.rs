//! `gymscope health-check RUN_DIR` against what NeMo Gym v0.7.0's `gym eval health-check` wrote
//! and printed for the same run dirs (`tests/fixtures/health-v07/`, recorded by
//! `scripts/parity-v07/health_cases.py`): both report files byte for byte, stdout and the exit
//! status, on a case per check and rule change and on 30 random runs.

use crate::common;

use common::*;
use std::fs;

#[test]
fn every_recorded_run_dir_gives_v07s_files_lines_and_status() {
    // `GYMSCOPE_HEALTH_V07` points at another recorded set (`health_cases.py --fuzz`).
    let root = std::env::var_os("GYMSCOPE_HEALTH_V07")
        .map_or_else(|| repo_root().join("tests/fixtures/health-v07"), Into::into);
    let mut checked = 0;
    let mut failures = Vec::new();
    let cases = crate::common::fixture_files::case_dirs(&root, "rollouts.jsonl");
    for case in cases {
        let name = case.file_name().unwrap().to_string_lossy().to_string();
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join(&name);
        fs::create_dir(&dir).unwrap();
        fs::copy(case.join("rollouts.jsonl"), dir.join("rollouts.jsonl")).unwrap();
        let mut args = vec!["health-check".to_string(), dir.display().to_string()];
        if case.join("args").exists() {
            args.extend(read_text(&case.join("args")).lines().map(str::to_string));
        }
        let refs: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = run_gymscope(&refs);
        let expected = case.join("expected");
        let want_code = expected_exit_code(&expected);
        let at = dir.display().to_string();
        let mut problems = Vec::new();
        if out.status.code() != Some(want_code) {
            problems.push(format!(
                "exit {:?}, want {want_code}: {}",
                out.status.code(),
                String::from_utf8_lossy(&out.stderr)
            ));
        }
        if want_code == 0 {
            let stdout = String::from_utf8_lossy(&out.stdout).replace(&at, "<dir>");
            if stdout != read_text(&expected.join("stdout")) {
                problems.push(format!("stdout:\n{stdout}"));
            }
            for file in ["quality_summary.json", "rollout_verdicts.jsonl"] {
                let got = fs::read_to_string(dir.join(file))
                    .unwrap_or_default()
                    .replace(&at, "<dir>");
                let want = read_text(&expected.join(file));
                if got != want {
                    let line = got
                        .lines()
                        .zip(want.lines())
                        .position(|(g, w)| g != w)
                        .unwrap_or(0);
                    problems.push(format!(
                        "{file} differs at line {}:\n got {}\nwant {}",
                        line + 1,
                        got.lines().nth(line).unwrap_or(""),
                        want.lines().nth(line).unwrap_or("")
                    ));
                }
            }
        } else {
            // Refused before reading: no file written, the reason on stderr.
            assert!(!dir.join("quality_summary.json").exists(), "{name}");
            let stderr = String::from_utf8_lossy(&out.stderr);
            let want = read_text(&expected.join("stderr"));
            let reason = want.lines().last().unwrap_or("");
            let reason = reason.rsplit(": error: ").next().unwrap_or(reason);
            // argparse names the flag its way (`argument --ignore-checks/--ignore: …`), clap
            // its own (`invalid value 'a,' for '--ignore-checks <ID,...>': …`): the reason is
            // upstream's.
            let reason = match reason.strip_prefix("argument ") {
                Some(rest) => rest.split_once(": ").map_or(rest, |(_, r)| r),
                None => reason,
            };
            if !stderr.contains(reason) {
                problems.push(format!("stderr lacks {reason:?}: {stderr}"));
            }
        }
        if !problems.is_empty() {
            failures.push(format!("{name}: {}", problems.join("\n")));
        }
        checked += 1;
    }
    let least = if std::env::var_os("GYMSCOPE_HEALTH_V07").is_some() {
        1
    } else {
        70
    };
    assert!(checked >= least, "only {checked} recorded run dirs");
    assert!(
        failures.is_empty(),
        "{} of {checked} differ from v0.7.0:\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}
