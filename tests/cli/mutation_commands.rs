//! Edges, round three (issue 42): the commands the round touched, fed mutated files and fuzzed
//! query expressions under the same rules as `mutation.rs` — no panic, no hang (each run is
//! killed after two minutes), only documented exit codes, errors that name a file (or the
//! expression's column), no temporary file, no input changed — and, every third round, the same
//! run with stdout on a closed pipe and on `/dev/full`.
//!
//!   MUTATION_SEED=7 MUTATION_SECONDS=600 cargo test --test cli mutation_commands

use crate::common;
use crate::mutation::{
    assert_inputs_unchanged, blackjack, check, check_replay, mutate, mutated_run, seeded, snapshot,
    stdout_to, Case, Rng, NASTY,
};

use std::collections::BTreeMap;
use std::io::Read;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

const FIELDS: &[&str] = &[
    "task",
    "rollout",
    "agent",
    "reward",
    "output_tokens",
    "usage.output_tokens_details.reasoning_tokens",
    "`my-field`",
    "a.b.c",
    "tool_calls",
    "tool",
    "health.truncated",
    "health.loop",
    "verdict",
    "task.group",
    "task.mean_reward",
    "task.pass_rate",
    "mean_reward",
    "pass_rate",
    "num_rollouts",
];
const VALUES: &[&str] = &[
    "0",
    "1",
    "-2e3",
    "0.5",
    "9007199254740993",
    "99999999999999999999999999",
    "1e999",
    "\"text\"",
    "'x'",
    "\"\\u00e9\\\"\"",
    "true",
    "false",
    "null",
    "\"mixed\"",
];
const SCOPES: &[&str] = &[
    "output",
    "reasoning",
    "args",
    "tool_output",
    "prompt",
    "text",
];
const NEEDLES: &[&str] = &[
    "\"Hit\"",
    "\"\\\\\"",
    "\"é😀\"",
    "/(?i)\\w{3}c/",
    "/(/",
    "/\\bstand\\b/i",
    "/a{1000}{1000}/",
    "\"\"",
    "/[/",
];
const SOUP: &[&str] = &[
    "(", ")", "and", "or", "not", "==", "!=", "<", "<=", ">", ">=", "~", "\"", "'", "`", "/", "\\",
    ".", " ", "é", "-", "e", "1", "x",
];

fn pick<'a>(rng: &mut Rng, from: &[&'a str]) -> &'a str {
    from[rng.below(from.len())]
}

fn predicate(rng: &mut Rng, depth: usize) -> String {
    match rng.below(if depth > 3 { 3 } else { 6 }) {
        0 => format!(
            "{} {} {}",
            pick(rng, FIELDS),
            pick(rng, &["==", "!=", "<", "<=", ">", ">="]),
            pick(rng, VALUES)
        ),
        1 => format!("{} ~ {}", pick(rng, SCOPES), pick(rng, NEEDLES)),
        2 => pick(rng, FIELDS).to_string(),
        3 => format!("not {}", predicate(rng, depth + 1)),
        4 => format!("({})", predicate(rng, depth + 1)),
        _ => format!(
            "{} {} {}",
            predicate(rng, depth + 1),
            pick(rng, &["and", "or"]),
            predicate(rng, depth + 1)
        ),
    }
}

/// An expression: well formed, broken by one edit, absurdly deep or long, or token soup (without
/// NUL, which no argument can hold).
pub(crate) fn expression(rng: &mut Rng) -> String {
    any_expression(rng).replace('\0', "")
}

fn any_expression(rng: &mut Rng) -> String {
    match rng.below(10) {
        0 => {
            let n = [50, 100, 101, 150, 6000][rng.below(5)];
            if rng.below(2) == 0 {
                format!("{}reward > 0{}", "(".repeat(n), ")".repeat(n))
            } else {
                format!("{}reward > 0", "not ".repeat(n))
            }
        }
        1 => {
            // 6,000 terms: one argument may not pass 128 KiB (MAX_ARG_STRLEN).
            let n = [10, 1000, 6000][rng.below(3)];
            let join = [" and ", " or "][rng.below(2)];
            (0..n)
                .map(|i| format!("task == {i}"))
                .collect::<Vec<_>>()
                .join(join)
        }
        2 => (0..=rng.below(12)).map(|_| pick(rng, SOUP)).collect(),
        3..=5 => {
            let mut e = predicate(rng, 0).into_bytes();
            let at = rng.below(e.len() + 1);
            match rng.below(3) {
                0 => e.truncate(at),
                1 => e.splice(at..at, pick(rng, SOUP).bytes()).for_each(drop),
                _ => e.splice(at..at, pick(rng, NASTY).bytes()).for_each(drop),
            }
            String::from_utf8_lossy(&e).into_owned()
        }
        _ => predicate(rng, 0),
    }
}

/// Runs gymscope with stdout to `stdout`, killed (and the test failed) after two minutes.
fn run(args: &[String], stdout: Stdio, ctx: &str) -> Output {
    let mut child = Command::new(common::gymscope_bin())
        .args(args)
        .stdin(Stdio::null())
        .stdout(stdout)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let drain = |pipe: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            if let Some(mut pipe) = pipe {
                pipe.read_to_end(&mut buf).unwrap();
            }
            buf
        })
    };
    let stdout = drain(child.stdout.take().map(|p| Box::new(p) as _));
    let stderr = drain(child.stderr.take().map(|p| Box::new(p) as _));
    let deadline = Instant::now() + Duration::from_secs(120);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            child.kill().unwrap();
            child.wait().unwrap();
            panic!("hung for two minutes: {ctx} {args:?}");
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    Output {
        status,
        stdout: stdout.join().unwrap(),
        stderr: stderr.join().unwrap(),
    }
}

/// `check`, but an expression's own error names its column instead of a file, and a validator's
/// findings are its output: they name the file on stdout.
fn judge(case: &Case, out: &Output, dir: &Path, seed: u64, round: usize) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    if out.status.code() == Some(2) && stderr.contains("the expression, column ") {
        assert!(!stderr.contains("panicked"), "panic: {stderr}");
        return;
    }
    if case.what == "validate-atif" && out.status.code() == Some(1) && stderr.is_empty() {
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            stdout.contains("t.json: "),
            "findings without their file: {stdout}"
        );
        return;
    }
    check(case, out, dir, seed, round);
}

fn s(p: &Path) -> String {
    p.to_string_lossy().into_owned()
}

fn strings(args: &[&str]) -> Vec<String> {
    args.iter().map(ToString::to_string).collect()
}

#[test]
fn round_three_commands_hold_under_mutation() {
    let (seed, mut rng, budget) = seeded(0x5EED_0042, 30);
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let (inputs, rollouts) = blackjack();
    let profiling = std::fs::read(
        common::fixtures_dir().join("blackjack/expected/example_rollouts_reward_profiling.jsonl"),
    )
    .unwrap();
    // Pivots with their Gym config, built once from a multi-step run.
    let clean = tempfile::tempdir().unwrap();
    let built = common::run_gymscope(&[
        "build-pivot",
        "--input",
        &s(&root
            .join("tests/fixtures/pivot-build/upstream/example_multi_step.example_rollouts.jsonl")),
        "--output",
        &s(&clean.path().join("p.jsonl")),
        "--agent-ref",
        "a",
    ]);
    assert!(built.status.success());
    let pivots = std::fs::read(clean.path().join("p.jsonl")).unwrap();
    let multi_step = std::fs::read(
        root.join("tests/fixtures/pivot-build/upstream/example_multi_step.example_rollouts.jsonl"),
    )
    .unwrap();
    // Rows with the trajectories v0.7.0's export reads.
    let observed =
        std::fs::read(root.join("tests/fixtures/atif-v07/tool_then_answer/rollouts.jsonl"))
            .unwrap();
    let gym_config = std::fs::read(clean.path().join("p.gym.yaml")).unwrap();
    let atif_case = root.join("tests/fixtures/atif-v07/tool_then_answer/expected/out");
    let trajectory = std::fs::read_dir(&atif_case)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|x| x == "json") && !s(p).contains("manifest"))
        .map(|p| std::fs::read(p).unwrap())
        .unwrap();

    let start = Instant::now();
    let mut rounds = 0;
    let mut seen: BTreeMap<(String, i32), usize> = BTreeMap::new();
    // At least MIN_ROUNDS whatever the machine's load: the seeded sequence then always holds a
    // readable input for every command (the check after the loop), so the test cannot fail by
    // running slowly (it did under a load of 10+).
    const MIN_ROUNDS: usize = 48;
    while (start.elapsed() < budget || rounds < MIN_ROUNDS) && rounds < 400 {
        rounds += 1;
        let tmp = tempfile::tempdir().unwrap();
        let d = tmp.path();
        let p = |n: &str| d.join(n);
        let (_, r_bytes) = mutated_run(&mut rng, &inputs, &rollouts, d);
        let r2 = if rng.below(2) == 0 {
            mutate(&mut rng, &rollouts)
        } else {
            rollouts.clone()
        };
        std::fs::write(p("r2.jsonl"), r2).unwrap();
        std::fs::write(p("steps.jsonl"), mutate(&mut rng, &multi_step)).unwrap();
        std::fs::write(p("observed.jsonl"), mutate(&mut rng, &observed)).unwrap();
        std::fs::write(p("x_reward_profiling.jsonl"), mutate(&mut rng, &profiling)).unwrap();
        std::fs::write(p("p.jsonl"), mutate(&mut rng, &pivots)).unwrap();
        std::fs::write(p("p.gym.yaml"), &gym_config).unwrap();
        std::fs::write(p("t.json"), mutate(&mut rng, &trajectory)).unwrap();
        std::fs::create_dir(p("hc")).unwrap();
        std::fs::write(p("hc/r.jsonl"), &r_bytes).unwrap();

        let expr = expression(&mut rng);
        let format = ["table", "keys", "jsonl", "json"][rng.below(4)];
        let mut query = vec!["query".into(), s(&p("r.jsonl")), expr.clone()];
        query.extend(strings(&["--format", format, "--inputs"]));
        query.push(s(&p("m.jsonl")));
        if rng.below(3) == 0 {
            query.push("--count".into());
        }
        let mut select = strings(&["select-tasks", "--profile"]);
        select.extend([s(&p("x_reward_profiling.jsonl")), "-o".into()]);
        select.push(s(&p("sel/out.jsonl")));
        if rng.below(2) == 0 {
            select.extend(["--where".into(), expression(&mut rng)]);
        }
        if rng.below(2) == 0 {
            select.extend(strings(&["--val-fraction", "0.5", "--group-by"]));
            select.push(pick(&mut rng, &["agent_ref", "task", "nothing"]).into());
        }
        let pair = |a: &str, b: &str| format!("{}:{}", s(&p(a)), s(&p(b)));
        let mut cases = vec![
            Case {
                what: "health",
                args: vec![
                    "health".into(),
                    s(&p("r.jsonl")),
                    "--inputs".into(),
                    s(&p("m.jsonl")),
                ],
                inputs: vec![p("m.jsonl"), p("r.jsonl")],
                codes: &[0, 1, 2],
            },
            Case {
                what: "query",
                args: query,
                inputs: vec![p("m.jsonl"), p("r.jsonl")],
                codes: &[0, 1, 2],
            },
            Case {
                what: "report --query",
                args: vec![
                    "report".into(),
                    "--inputs".into(),
                    s(&p("m.jsonl")),
                    "--rollouts".into(),
                    s(&p("r.jsonl")),
                    "-o".into(),
                    s(&p("q/report.html")),
                    "--query".into(),
                    expr,
                ],
                inputs: vec![p("m.jsonl"), p("r.jsonl")],
                codes: &[0, 1, 2],
            },
            Case {
                what: "select-tasks",
                args: select,
                inputs: vec![p("x_reward_profiling.jsonl")],
                codes: &[0, 1, 2],
            },
            Case {
                what: "select-pivot",
                args: vec![
                    "select-pivot".into(),
                    "--pivots".into(),
                    s(&p("p.jsonl")),
                    "--profile".into(),
                    s(&p("x_reward_profiling.jsonl")),
                    "--output".into(),
                    s(&p("sp/out.jsonl")),
                    "--min-rollouts".into(),
                    "1".into(),
                    "--keep".into(),
                    pick(&mut rng, &["mixed", "all", "mixed,all_success"]).into(),
                ],
                inputs: vec![p("p.jsonl"), p("x_reward_profiling.jsonl"), p("p.gym.yaml")],
                codes: &[0, 1, 2],
            },
            Case {
                what: "compare",
                args: vec![
                    "compare".into(),
                    pair("m.jsonl", "r.jsonl"),
                    pair("m.jsonl", "r2.jsonl"),
                    "--format".into(),
                    pick(&mut rng, &["text", "md", "json"]).into(),
                ],
                inputs: vec![p("m.jsonl"), p("r.jsonl"), p("r2.jsonl")],
                codes: &[0, 1, 2],
            },
            Case {
                what: "build-pivot",
                args: vec![
                    "build-pivot".into(),
                    "--input".into(),
                    s(&p("steps.jsonl")),
                    "--output".into(),
                    s(&p("bp/p.jsonl")),
                    "--agent-ref".into(),
                    "a".into(),
                    "--source-groups".into(),
                    "mixed,all_success,all_failure".into(),
                ],
                inputs: vec![p("steps.jsonl")],
                codes: &[0, 1, 2],
            },
            Case {
                what: "health-check",
                args: vec![
                    "health-check".into(),
                    s(&p("hc")),
                    "--rollouts-file".into(),
                    "r.jsonl".into(),
                ],
                inputs: vec![p("hc/r.jsonl")],
                codes: &[0, 1, 2],
            },
            Case {
                what: "export",
                args: vec![
                    "export".into(),
                    "--rollouts".into(),
                    s(&p("observed.jsonl")),
                    "--output-dir".into(),
                    s(&p("atif")),
                    "--agent-version".into(),
                    "v1".into(),
                    "--session-id".into(),
                    "s".into(),
                ],
                inputs: vec![p("observed.jsonl")],
                codes: &[0, 1, 2],
            },
            Case {
                what: "validate-atif",
                args: vec!["validate-atif".into(), s(&p("t.json"))],
                inputs: vec![p("t.json")],
                codes: &[0, 1, 2],
            },
            Case {
                what: "health (ATIF)",
                args: vec!["health".into(), s(&p("t.json"))],
                inputs: vec![p("t.json")],
                codes: &[0, 1, 2],
            },
        ];
        if rng.below(4) == 0 {
            cases.retain(|c| c.what != "export");
        }
        for case in &cases {
            let before = snapshot(d);
            let ctx = format!("seed {seed} round {rounds} {}", case.what);
            let out = run(&case.args, Stdio::piped(), &ctx);
            judge(case, &out, d, seed, rounds);
            *seen
                .entry((case.what.to_string(), out.status.code().unwrap_or(-1)))
                .or_default() += 1;
            // Commands that only print: the same run on a closed pipe (the same exit, quietly)
            // and on `/dev/full` (the same exit, or 1 naming the full device).
            let prints = [
                "health",
                "query",
                "compare",
                "validate-atif",
                "health (ATIF)",
            ];
            if rounds % 3 == 1 && prints.contains(&case.what) {
                for full in [false, true] {
                    let again = run(&case.args, stdout_to(full), &ctx);
                    check_replay(&out, &again, full, &ctx);
                }
            }
            assert_inputs_unchanged(&case.inputs, &before, &snapshot(d), &ctx);
            let copy = std::fs::read(p("hc/r.jsonl")).unwrap();
            assert_eq!(copy, r_bytes, "{ctx} changed hc/r.jsonl");
        }
    }
    let total: usize = seen.values().sum();
    eprintln!(
        "mutation (round three): {rounds} rounds, {total} runs in {:.0?} (seed {seed}); exit codes: {seen:?}",
        start.elapsed()
    );
    assert!(rounds >= 5, "too few rounds to mean anything");
    for what in ["query", "select-tasks", "build-pivot", "export", "compare"] {
        assert!(
            seen.contains_key(&(what.to_string(), 0)),
            "{what} never succeeded: the mutations never leave it a readable input ({seen:?})"
        );
    }
    // (`health-check` is v0.7.0's: a row it cannot read is a verdict, not a failure.)
    let failing = [
        "health",
        "query",
        "report --query",
        "select-tasks",
        "select-pivot",
        "compare",
        "build-pivot",
        "export",
        "validate-atif",
    ];
    for what in failing {
        assert!(
            seen.keys().any(|(w, c)| w == what && *c != 0),
            "{what} never failed: the mutations miss it ({seen:?})"
        );
    }
}
