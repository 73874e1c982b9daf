//! `gymscope watch` and the core's incremental read against a real writer: shards grow by whole
//! and torn lines, one is replaced mid-run as a resume replaces it, a failures sidecar fills;
//! at every step the counts are the rows written so far, and the finished run's figures are the
//! merged run's profile and health.

use crate::common::assert_exit;
use crate::common::assert_success;
use crate::common::run_gymscope;
use crate::common::run_on;
use gymscope::native::follow;
use gymscope::watch::{FileKind, Snapshot, Watch};
use gymscope_testkit::gen_run::generate_agentic;
use serde_json::Value;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const SHARDS: usize = 3;

struct Shard {
    rollouts: PathBuf,
    failures: PathBuf,
    /// The rollout lines still to write, and those written whole.
    pending: Vec<String>,
    written: usize,
    /// Bytes of the next line already written (a torn line).
    torn: usize,
}

impl Shard {
    fn append(&mut self, bytes: &[u8]) {
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(&self.rollouts)
            .unwrap();
        f.write_all(bytes).unwrap();
    }

    /// Writes `n` more lines; with `tear`, half of the line after them too.
    fn write(&mut self, n: usize, tear: bool) {
        let mut out = Vec::new();
        for _ in 0..n.min(self.pending.len()) {
            let line = self.pending.remove(0);
            out.extend_from_slice(&line.as_bytes()[self.torn..]);
            out.push(b'\n');
            self.torn = 0;
            self.written += 1;
        }
        if tear {
            if let Some(next) = self.pending.first() {
                let half = next.len() / 2;
                out.extend_from_slice(&next.as_bytes()[..half]);
                self.torn = half;
            }
        }
        self.append(&out);
    }

    /// A resume: the file replaced atomically by its whole lines (the torn tail dropped).
    fn resume(&mut self) {
        let text = std::fs::read_to_string(&self.rollouts).unwrap();
        let whole = &text[..text.rfind('\n').map_or(0, |i| i + 1)];
        let tmp = self.rollouts.with_extension("tmp");
        std::fs::write(&tmp, whole).unwrap();
        std::fs::rename(&tmp, &self.rollouts).unwrap();
        self.torn = 0;
    }
}

/// A 3-agent run of 30 tasks × 4 repeats split into shards by task, nothing written yet.
fn shards(dir: &Path) -> (Vec<Shard>, PathBuf, PathBuf) {
    let (inputs, rollouts) = generate_agentic(&dir.join("full"), "run", 30, 4, 1500);
    let task = |line: &str| {
        serde_json::from_str::<Value>(line).unwrap()["_ng_task_index"]
            .as_i64()
            .unwrap() as usize
    };
    let (inputs_text, rollouts_text) = (
        std::fs::read_to_string(&inputs).unwrap(),
        std::fs::read_to_string(&rollouts).unwrap(),
    );
    let dir = dir.join("shards");
    std::fs::create_dir_all(&dir).unwrap();
    let mut out = Vec::new();
    for i in 0..SHARDS {
        let name = format!("run-shard{i}-of-{SHARDS}");
        let mine = |text: &str| -> Vec<String> {
            text.lines()
                .filter(|l| task(l) % SHARDS == i)
                .map(str::to_string)
                .collect()
        };
        let mat: String = mine(&inputs_text)
            .iter()
            .map(|l| format!("{l}\n"))
            .collect();
        std::fs::write(dir.join(format!("{name}_materialized_inputs.jsonl")), mat).unwrap();
        let rollouts = dir.join(format!("{name}.jsonl"));
        let failures = dir.join(format!("{name}_failures.jsonl"));
        std::fs::write(&rollouts, "").unwrap();
        std::fs::write(&failures, "").unwrap();
        out.push(Shard {
            rollouts,
            failures,
            pending: mine(&rollouts_text),
            written: 0,
            torn: 0,
        });
    }
    (out, inputs, rollouts)
}

fn refresh(watch: &mut Watch, shards: &[Shard], buf: &mut Vec<u8>) -> Snapshot {
    for (i, s) in shards.iter().enumerate() {
        let inputs = gymscope::names::beside(&s.rollouts, gymscope::names::materialized_inputs);
        follow::refresh(watch, i, FileKind::Inputs, &inputs, buf).unwrap();
        follow::refresh(watch, i, FileKind::Rollouts, &s.rollouts, buf).unwrap();
        follow::refresh(watch, i, FileKind::Failures, &s.failures, buf).unwrap();
    }
    let now = follow::now();
    watch.tick(now);
    watch.snapshot(now)
}

fn cli_snapshot(glob: &str) -> Value {
    let o = run_gymscope(&["watch", "--once", "--format", "json", glob]);
    assert_success(&o);
    serde_json::from_slice(&o.stdout).unwrap()
}

#[test]
fn counts_follow_a_growing_run_and_the_end_is_the_profile() {
    let dir = tempfile::tempdir().unwrap();
    let (mut shards, full_inputs, full_rollouts) = shards(dir.path());
    let glob = format!("{}/shards/run-shard*.jsonl", dir.path().display());
    let mut watch = Watch::default();
    for s in &shards {
        let shown = |p: PathBuf| p.display().to_string();
        watch.add_shard(
            shown(s.rollouts.clone()),
            shown(gymscope::names::beside(
                &s.rollouts,
                gymscope::names::materialized_inputs,
            )),
            shown(s.failures.clone()),
        );
    }
    let mut buf = Vec::new();
    let expected: usize = shards.iter().map(|s| s.pending.len()).sum();
    let mut step = 0;
    while shards.iter().any(|s| !s.pending.is_empty()) {
        step += 1;
        for (i, s) in shards.iter_mut().enumerate() {
            s.write(1 + (step + i) % 4, (step + i) % 3 != 0);
        }
        if step == 4 {
            shards[1].resume();
        }
        if step == 6 {
            // Two attempts that failed before their retry succeeded (resume's sidecar rows).
            let mut f = std::fs::OpenOptions::new()
                .append(true)
                .open(&shards[0].failures)
                .unwrap();
            f.write_all(b"{\"_ng_task_index\":0,\"_ng_rollout_index\":0,\"_ng_failure_class\":\"agent_run_error\"}\n{\"_ng_task_index\":3,\"_ng_rollout_index\":1,\"_ng_failure_class\":\"timeout_exceeded\"}\n").unwrap();
        }
        let snap = refresh(&mut watch, &shards, &mut buf);
        let written: usize = shards.iter().map(|s| s.written).sum();
        assert_eq!(snap.totals.expected as usize, expected, "step {step}");
        assert_eq!(snap.totals.done as usize, written, "step {step}");
        for (f, s) in snap.shards.iter().zip(&shards) {
            assert_eq!(f.done as usize, s.written, "step {step}: {}", f.rollouts);
        }
        assert_eq!(
            snap.unreadable_rows, 0,
            "step {step}: {:?}",
            snap.unreadable
        );
        if step % 3 == 1 {
            let cli = cli_snapshot(&glob);
            assert_eq!(cli["totals"]["done"], written as u64, "step {step}: {cli}");
            assert_eq!(cli["complete"], written == expected, "step {step}");
        }
        if step == 4 {
            assert!(
                snap.notes.iter().any(|n| n.contains("was replaced")),
                "{:?}",
                snap.notes
            );
        }
    }
    let snap = refresh(&mut watch, &shards, &mut buf);
    assert!(snap.complete);
    assert_eq!(snap.failures.get("agent_run_error"), Some(&1));

    // The CLI ends by itself on the finished run, and its figures are the merged run's.
    let start = Instant::now();
    let child = Command::new(gymscope_testkit::gymscope_bin())
        .args(["watch", "--format", "json", "--interval", "0.2", &glob])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let o = child.wait_with_output().unwrap();
    assert_success(&o);
    assert!(start.elapsed() < Duration::from_secs(30));
    let last: Value =
        serde_json::from_str(String::from_utf8_lossy(&o.stdout).lines().last().unwrap()).unwrap();
    assert_eq!(last["complete"], true);
    assert_eq!(last["totals"]["done"], expected as u64);
    let out = dir.path().join("prof");
    let p = run_on(
        "profile",
        &full_inputs,
        &full_rollouts,
        &["--out-dir", out.to_str().unwrap()],
    );
    assert!(p.status.success());
    let metrics: Value =
        serde_json::from_slice(&std::fs::read(out.join("run_agent_metrics.json")).unwrap())
            .unwrap();
    let agents = last["agents"].as_array().unwrap();
    assert_eq!(agents.len(), metrics.as_array().unwrap().len());
    let close = |a: &Value, b: &Value, what: &str| {
        let (a, b) = (a.as_f64().unwrap(), b.as_f64().unwrap());
        assert!(
            (a - b).abs() <= 1e-9 * b.abs().max(1.0),
            "{what}: {a} vs {b}"
        );
    };
    for m in metrics.as_array().unwrap() {
        let name = m["agent_ref"]["name"].as_str().unwrap();
        let a = agents.iter().find(|a| a["agent"] == name).unwrap();
        close(&a["mean_reward"], &m["mean/reward"], name);
        close(&a["mean_output_tokens"], &m["mean/output_tokens"], name);
        close(
            &a["interval"]["low"],
            &m["ci_low_95_across_repeats/mean/reward"],
            name,
        );
        close(
            &a["interval"]["high"],
            &m["ci_high_95_across_repeats/mean/reward"],
            name,
        );
    }
    let h = run_gymscope(&[
        "health",
        "--rollouts",
        full_rollouts.to_str().unwrap(),
        "--format",
        "json",
    ]);
    let health: Value = serde_json::from_slice(&h.stdout).unwrap();
    // `gymscope health` gives the rates per agent: the run's are their sums.
    let mut compared = 0;
    for mine in last["health"].as_array().unwrap() {
        if mine["rate"] == "failures" {
            continue; // the merged run has no sidecar
        }
        let (mut count, mut of) = (0, 0);
        for agent in health["agents"].as_array().unwrap() {
            if let Some(r) = agent["rates"]
                .as_array()
                .unwrap()
                .iter()
                .find(|r| r["rate"] == mine["rate"])
            {
                count += r["count"].as_u64().unwrap();
                of += r["of"].as_u64().unwrap();
                compared += 1;
            }
        }
        assert_eq!(
            (mine["count"].as_u64(), mine["of"].as_u64()),
            (Some(count), Some(of)),
            "{}",
            mine["rate"]
        );
    }
    assert!(compared >= 7 * 3, "{compared}");
}

#[test]
fn a_torn_line_waits_and_becomes_an_error_only_at_the_end() {
    let dir = tempfile::tempdir().unwrap();
    let (mut shards, _, _) = shards(dir.path());
    shards.truncate(1);
    shards[0].write(3, true);
    let path = shards[0].rollouts.to_str().unwrap().to_string();
    let once = run_gymscope(&["watch", "--once", "--format", "json", &path]);
    assert_success(&once);
    let snap: Value = serde_json::from_slice(&once.stdout).unwrap();
    assert_eq!(snap["totals"]["done"], 3);
    assert_eq!(snap["unreadable_rows"], 0);
    // The writer stops mid-line and the run is declared over (its aggregate file appears).
    let agg = gymscope::names::beside(&shards[0].rollouts, gymscope::names::aggregate_metrics);
    std::thread::sleep(Duration::from_millis(20));
    std::fs::write(&agg, "[]").unwrap();
    let o = run_gymscope(&["watch", "--format", "text", &path]);
    assert_eq!(
        o.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains(&path) && err.contains("line 4"), "{err}");
}

#[test]
fn what_is_not_a_growing_file_is_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("nope.jsonl");
    let o = run_gymscope(&["watch", "--once", missing.to_str().unwrap()]);
    assert_exit(&o, 2, "nope.jsonl");
    let o = run_gymscope(&["watch", "--once", "/dev/zero"]);
    assert_exit(&o, 2, "not a regular file");
    let glob = format!("{}/*.jsonl", dir.path().display());
    let o = run_gymscope(&["watch", "--once", &glob]);
    assert_exit(&o, 2, "No shards matched");
}
