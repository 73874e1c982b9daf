//! Keep it hardened (issue 10): mutated fixtures fed to every parser and command path, seeded
//! and bounded in time (about a minute in a debug build). For every run it asserts: no panic,
//! only documented exit codes (0/1/2; 3 and 130 for `collect`), errors that name a file (and a
//! line when a line is at fault), no temporary file left, and no input changed.
//!
//!   MUTATION_SEED=7 MUTATION_SECONDS=600 cargo test --test mutation   (another seed, longer)

use crate::common;
use crate::common::gym_standin;

use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::{Duration, Instant};

/// xorshift64*: the same seed gives the same mutations everywhere.
pub(crate) struct Rng(pub(crate) u64);
impl Rng {
    pub(crate) fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    pub(crate) fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// Text that parsers find hard, spliced in at random places.
pub(crate) const NASTY: &[&str] = &[
    "\u{0}",
    "\r",
    "\r\n",
    "\n\n",
    "\u{feff}",
    "\"",
    "\\",
    "\\ud800",
    "{",
    "}",
    "[",
    "]",
    ",",
    ":",
    "NaN",
    "-0",
    "1e400",
    "123456789012345678901234567890",
    "null",
    "true",
    "\"0\"",
    "[0]",
    "{}",
    "\u{2028}",
    "é",
    "😀",
];

pub(crate) fn mutate(rng: &mut Rng, data: &[u8]) -> Vec<u8> {
    let mut out = data.to_vec();
    for _ in 0..=rng.below(3) {
        let at = rng.below(out.len() + 1);
        match rng.below(10) {
            0 => {
                if !out.is_empty() {
                    let i = rng.below(out.len());
                    out[i] ^= 1 << rng.below(8);
                }
            }
            1 => {
                let n = rng.below(out.len().saturating_sub(at) + 1);
                out.drain(at..at + n.min(64));
            }
            2 => out.truncate(at),
            3 => {
                let s = NASTY[rng.below(NASTY.len())];
                out.splice(at..at, s.bytes());
            }
            4 => {
                // Duplicate a line.
                let lines: Vec<&[u8]> = data.split(|b| *b == b'\n').collect();
                let l = lines[rng.below(lines.len())];
                out.splice(at..at, l.iter().copied().chain([b'\n']));
            }
            5 => {
                // Deep nesting.
                let depth = [10, 200, 20_000][rng.below(3)];
                let deep = format!("{}{}", "[".repeat(depth), "]".repeat(depth));
                out.splice(at..at, deep.into_bytes());
            }
            6 => {
                // An index field replaced by something else.
                let text = String::from_utf8_lossy(&out).into_owned();
                let key = ["\"_ng_task_index\":", "\"_ng_rollout_index\":"][rng.below(2)];
                if let Some(pos) = text.find(key) {
                    let v = NASTY[rng.below(NASTY.len())];
                    let pos = pos + key.len();
                    out.splice(pos..pos, v.bytes());
                }
            }
            7 => {
                // A numeric field with its own name (a new column).
                let field = format!("\"f{}\":{},", rng.below(1000), rng.below(100));
                if let Some(pos) = out.iter().position(|b| *b == b'{') {
                    out.splice((pos + 1)..=pos, field.into_bytes());
                }
            }
            8 => out.extend_from_slice(b"{\"_ng_task_index\":0,\"_ng_rollout_index\":0}"),
            _ => {
                let b = rng.below(256) as u8;
                out.insert(at, b);
            }
        }
    }
    out
}

pub(crate) fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut files: Vec<(PathBuf, Vec<u8>)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file())
        .map(|p| {
            let bytes = std::fs::read(&p).unwrap();
            (p, bytes)
        })
        .collect();
    files.sort();
    files
}

/// The seed (`MUTATION_SEED`, else `default_seed`), its generator and the time budget
/// (`MUTATION_SECONDS`, else `default_seconds`).
pub(crate) fn seeded(default_seed: u64, default_seconds: u64) -> (u64, Rng, Duration) {
    let env = |name: &str, default: u64| {
        std::env::var(name)
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(default)
    };
    let seed = env("MUTATION_SEED", default_seed);
    let budget = Duration::from_secs(env("MUTATION_SECONDS", default_seconds));
    (seed, Rng(seed | 1), budget)
}

/// The blackjack fixture's materialized inputs and rollouts, as bytes.
pub(crate) fn blackjack() -> (Vec<u8>, Vec<u8>) {
    let dir = common::fixtures_dir().join("blackjack");
    let inputs = std::fs::read(dir.join("example_rollouts_materialized_inputs.jsonl")).unwrap();
    let rollouts = std::fs::read(dir.join("example_rollouts.jsonl")).unwrap();
    (inputs, rollouts)
}

/// A run in `d` (`m.jsonl`, `r.jsonl`) with one of its files mutated, or both; returns their bytes.
pub(crate) fn mutated_run(
    rng: &mut Rng,
    inputs: &[u8],
    rollouts: &[u8],
    d: &Path,
) -> (Vec<u8>, Vec<u8>) {
    let which = rng.below(3);
    let m_bytes = if which == 1 {
        inputs.to_vec()
    } else {
        mutate(rng, inputs)
    };
    let r_bytes = if which != 0 {
        mutate(rng, rollouts)
    } else {
        rollouts.to_vec()
    };
    std::fs::write(d.join("m.jsonl"), &m_bytes).unwrap();
    std::fs::write(d.join("r.jsonl"), &r_bytes).unwrap();
    (m_bytes, r_bytes)
}

/// Stops the test if a run changed one of its inputs: `before` and `after` are [`snapshot`]s.
pub(crate) fn assert_inputs_unchanged(
    inputs: &[PathBuf],
    before: &[(PathBuf, Vec<u8>)],
    after: &[(PathBuf, Vec<u8>)],
    ctx: &str,
) {
    for (path, bytes) in before {
        if inputs.contains(path) {
            let now = after.iter().find(|(q, _)| q == path).map(|(_, b)| b);
            assert_eq!(now, Some(bytes), "{ctx} changed {}", path.display());
        }
    }
}

pub(crate) struct Case<'a> {
    pub(crate) what: &'a str,
    pub(crate) args: Vec<String>,
    /// The files it reads: they must not change.
    pub(crate) inputs: Vec<PathBuf>,
    pub(crate) codes: &'a [i32],
}

pub(crate) fn check(case: &Case, out: &Output, dir: &Path, seed: u64, round: usize) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    let ctx = format!(
        "seed {seed} round {round} {}: {:?}\n{stderr}",
        case.what, case.args
    );
    assert!(!stderr.contains("panicked"), "panic: {ctx}");
    let code = out.status.code();
    assert!(
        code.is_some_and(|c| case.codes.contains(&c)),
        "exit {code:?}: {ctx}"
    );
    if code != Some(0) {
        let names_a_file = case
            .inputs
            .iter()
            .chain([&dir.to_path_buf()])
            .any(|p| stderr.contains(&*p.file_name().unwrap().to_string_lossy()))
            || stderr.contains("--");
        assert!(names_a_file, "the error names no file: {ctx}");
    }
    if code == Some(1) && stderr.contains("JSON") {
        assert!(
            stderr.contains("line"),
            "a JSON error without its line: {ctx}"
        );
    }
    let temps: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".tmp"))
        .collect();
    assert!(temps.is_empty(), "temporary files left {temps:?}: {ctx}");
}

/// Stdout for a replay: `/dev/full` (`full`) or a pipe whose reader is gone.
pub(crate) fn stdout_to(full: bool) -> std::process::Stdio {
    if full {
        std::fs::File::options()
            .write(true)
            .open("/dev/full")
            .unwrap()
            .into()
    } else {
        crate::edges::closed_pipe()
    }
}

/// A replay of `out`'s run with stdout on [`stdout_to`]: quiet on a closed pipe, and the same
/// exit, or 1 naming the full device.
pub(crate) fn check_replay(out: &Output, again: &Output, full: bool, ctx: &str) {
    let err = String::from_utf8_lossy(&again.stderr);
    assert!(
        !err.contains("panicked") && !err.contains("Broken pipe"),
        "{ctx} (stdout full: {full}): {err}"
    );
    let (code, normal) = (again.status.code(), out.status.code());
    let full_error = full && code == Some(1) && err.contains("No space left on device");
    assert!(
        code == normal || full_error,
        "{ctx} (stdout full: {full}): exit {code:?}, not {normal:?}: {err}"
    );
}

#[test]
fn mutated_inputs_never_panic_or_break_the_rules() {
    let (seed, mut rng, budget) = seeded(0x5EED_0010, 45);
    let (inputs, rollouts) = blackjack();
    let pivot = std::fs::read(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/pivot/upstream/swe_pivot_example.jsonl"),
    )
    .unwrap();
    // `collect` against the stand-in: the input is materialized (and parsed) before discovery.
    let gym = gym_standin::StandIn::start(&["standin_agent", "blackjack_gymnasium_agent"]);
    let head = gym.head();
    let start = Instant::now();
    let mut rounds = 0;
    let mut seen: std::collections::BTreeMap<(String, i32), usize> = Default::default();
    while start.elapsed() < budget && rounds < 400 {
        rounds += 1;
        let tmp = tempfile::tempdir().unwrap();
        let d = tmp.path();
        let p = |n: &str| d.join(n);
        let s = |n: &str| p(n).to_string_lossy().into_owned();
        // The run's files, one of them mutated (or both).
        let (m_bytes, r_bytes) = mutated_run(&mut rng, &inputs, &rollouts, d);
        std::fs::write(p("pivots.jsonl"), mutate(&mut rng, &pivot)).unwrap();
        // A one-shard collection: the shard is the run itself.
        std::fs::write(p("c-shard0-of-1_materialized_inputs.jsonl"), &m_bytes).unwrap();
        std::fs::write(p("c-shard0-of-1.jsonl"), &r_bytes).unwrap();
        // A profile to report from: profile the original run, then mutate its output.
        let clean = tempfile::tempdir().unwrap();
        std::fs::write(clean.path().join("m.jsonl"), &inputs).unwrap();
        std::fs::write(clean.path().join("r.jsonl"), &rollouts).unwrap();
        let made = common::run_gymscope(&[
            "profile",
            "--inputs",
            &clean.path().join("m.jsonl").to_string_lossy(),
            "--rollouts",
            &clean.path().join("r.jsonl").to_string_lossy(),
        ]);
        assert!(made.status.success());
        let prof = std::fs::read(clean.path().join("r_reward_profiling.jsonl")).unwrap();
        std::fs::write(p("x_reward_profiling.jsonl"), mutate(&mut rng, &prof)).unwrap();

        let line_limit = ["1073741824", "4096"][rng.below(2)];
        let run_inputs = vec![p("m.jsonl"), p("r.jsonl")];
        let cases = [
            Case {
                what: "profile",
                args: vec![
                    "profile".into(),
                    "--inputs".into(),
                    s("m.jsonl"),
                    "--rollouts".into(),
                    s("r.jsonl"),
                    "--out-dir".into(),
                    s("out"),
                    "--max-line-bytes".into(),
                    line_limit.into(),
                ],
                inputs: run_inputs.clone(),
                codes: &[0, 1, 2],
            },
            Case {
                what: "profile partial",
                args: vec![
                    "profile".into(),
                    "--inputs".into(),
                    s("m.jsonl"),
                    "--rollouts".into(),
                    s("r.jsonl"),
                    "--allow-partial-rollouts".into(),
                ],
                inputs: run_inputs.clone(),
                codes: &[0, 1, 2],
            },
            Case {
                what: "report",
                args: vec![
                    "report".into(),
                    "--inputs".into(),
                    s("m.jsonl"),
                    "--rollouts".into(),
                    s("r.jsonl"),
                    "-o".into(),
                    s("r.html"),
                ],
                inputs: run_inputs.clone(),
                codes: &[0, 1, 2],
            },
            Case {
                what: "report --profile",
                args: vec![
                    "report".into(),
                    "--profile".into(),
                    s("x_reward_profiling.jsonl"),
                    "--max-line-bytes".into(),
                    line_limit.into(),
                ],
                inputs: vec![p("x_reward_profiling.jsonl")],
                codes: &[0, 1, 2],
            },
            Case {
                what: "validate-pivot",
                args: vec![
                    "validate-pivot".into(),
                    "--path".into(),
                    s("pivots.jsonl"),
                    "--fix".into(),
                    s("fixed.jsonl"),
                    "--stats".into(),
                ],
                inputs: vec![p("pivots.jsonl")],
                codes: &[0, 1, 2],
            },
            Case {
                what: "collect",
                args: vec![
                    "collect".into(),
                    "-i".into(),
                    s("m.jsonl"),
                    "-o".into(),
                    s("fresh.jsonl"),
                    "-a".into(),
                    "standin_agent".into(),
                    "--head-server".into(),
                    head.clone(),
                    "--no-progress".into(),
                    "--max-line-bytes".into(),
                    line_limit.into(),
                ],
                inputs: vec![p("m.jsonl")],
                codes: &[0, 1, 2, 3, 130],
            },
            Case {
                what: "collect --merge",
                args: vec![
                    "collect".into(),
                    "--merge".into(),
                    "-o".into(),
                    s("c.jsonl"),
                    "--disable-aggregation".into(),
                    "--max-line-bytes".into(),
                    line_limit.into(),
                ],
                inputs: vec![
                    p("c-shard0-of-1.jsonl"),
                    p("c-shard0-of-1_materialized_inputs.jsonl"),
                ],
                codes: &[0, 1, 2, 3, 130],
            },
        ];
        for case in &cases {
            let before = snapshot(d);
            let args: Vec<&str> = case.args.iter().map(String::as_str).collect();
            let out = common::run_gymscope(&args);
            check(case, &out, d, seed, rounds);
            // Every third round, the same mutated files with stdout on a closed pipe (the same
            // exit, quietly) and on `/dev/full` (the same exit, or 1 naming the full device).
            // Not `collect`: a second run over its output is a different run.
            if rounds % 3 == 1 && !case.what.starts_with("collect") {
                for full in [false, true] {
                    let again = std::process::Command::new(common::gymscope_bin())
                        .args(&args)
                        .stdout(stdout_to(full))
                        .stderr(std::process::Stdio::piped())
                        .output()
                        .unwrap();
                    let ctx = format!("seed {seed} round {rounds} {}", case.what);
                    check_replay(&out, &again, full, &ctx);
                }
            }
            *seen
                .entry((case.what.to_string(), out.status.code().unwrap_or(-1)))
                .or_default() += 1;
            let ctx = format!("seed {seed} round {rounds}: {}", case.what);
            assert_inputs_unchanged(&case.inputs, &before, &snapshot(d), &ctx);
        }
    }
    eprintln!(
        "mutation: {rounds} rounds × 7 commands in {:.0?} (seed {seed}); exit codes: {seen:?}",
        start.elapsed()
    );
    assert!(rounds >= 5, "too few rounds to mean anything");
    // The mutations must reach the error paths of every command, not only pass through.
    for what in [
        "profile",
        "report",
        "report --profile",
        "validate-pivot",
        "collect",
        "collect --merge",
    ] {
        assert!(
            seen.contains_key(&(what.to_string(), 1)),
            "{what} never failed: the mutations miss it ({seen:?})"
        );
    }
}
