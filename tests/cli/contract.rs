//! The file contract (docs/files.md), read from the commands' own definition: clap's tree gives
//! every command and every argument that names a file or folder (a `PathBuf` value, or a path
//! hint); each such slot is run with each hostile shape, and the README's promises are checked:
//! exit 0, 1, 2 or 3 only, no panic or abort, bounded time and memory, no input changed, nothing
//! left in the output folder or `$TMPDIR`, and an error that names the file.
//!
//! A command added later is covered without a test of its own: its slots come from clap, and the
//! test fails until [`base`] has a working command line for it. CI runs a seeded sample
//! (`CONTRACT_SAMPLE`, default 90 runs); `CONTRACT_FULL=1` runs every slot × shape and prints the
//! totals per command.
#![allow(unsafe_code)] // libc: mkfifo, setrlimit before exec, kill

use crate::common;
use clap::CommandFactory;
use std::collections::BTreeMap;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// One argument that names a file or folder.
#[derive(Clone, Debug)]
struct Slot {
    command: String,
    /// `--flag`, or `None` for a positional.
    flag: Option<String>,
    output: bool,
}

/// Every (command, slot) clap declares; outputs are the arguments whose value name starts with
/// `OUT` (the help says so too: `-o <OUT.jsonl>`).
fn slots() -> Vec<Slot> {
    let mut cli = gymscope::cli::Cli::command();
    cli.build();
    let mut out = Vec::new();
    for sub in cli.get_subcommands() {
        for arg in sub.get_arguments() {
            let is_path = arg.get_value_parser().type_id() == std::any::TypeId::of::<PathBuf>()
                || matches!(
                    arg.get_value_hint(),
                    clap::ValueHint::FilePath | clap::ValueHint::DirPath | clap::ValueHint::AnyPath
                );
            if !is_path {
                continue;
            }
            let output = arg
                .get_value_names()
                .and_then(|n| n.first())
                .is_some_and(|n| n.as_str().starts_with("OUT"));
            out.push(Slot {
                command: sub.get_name().to_string(),
                flag: arg.get_long().map(|l| format!("--{l}")),
                output,
            });
        }
    }
    out
}

/// The files every command line is made of, in `in/` (checked unchanged after every run).
struct Files {
    root: tempfile::TempDir,
}

impl Files {
    fn new() -> Files {
        let root = tempfile::tempdir().unwrap();
        let d = root.path().join("in");
        std::fs::create_dir(&d).unwrap();
        let fx = common::fixtures_dir().join("blackjack");
        std::fs::copy(
            fx.join("example_rollouts_materialized_inputs.jsonl"),
            d.join("r_materialized_inputs.jsonl"),
        )
        .unwrap();
        std::fs::copy(fx.join("example_rollouts.jsonl"), d.join("r.jsonl")).unwrap();
        std::fs::copy(
            fx.join("example_rollouts_materialized_inputs.jsonl"),
            d.join("c_materialized_inputs.jsonl"),
        )
        .unwrap();
        std::fs::copy(fx.join("example_rollouts.jsonl"), d.join("c.jsonl")).unwrap();
        let atif = common::repo_root().join("tests/fixtures/atif-v07/tool_then_answer");
        std::fs::copy(atif.join("rollouts.jsonl"), d.join("observed.jsonl")).unwrap();
        let files = Files { root };
        let f = |n: &str| files.path(n);
        // Outputs of the commands, made once, as inputs of others.
        let run = |args: &[&str]| {
            let o = common::run_gymscope(args);
            assert!(o.status.success(), "{args:?}: {}", common::output_text(&o));
        };
        run(&[
            "profile",
            "--inputs",
            &f("r_materialized_inputs.jsonl"),
            "--rollouts",
            &f("r.jsonl"),
        ]);
        let steps = common::repo_root()
            .join("tests/fixtures/pivot-build/upstream/example_multi_step.example_rollouts.jsonl");
        std::fs::copy(steps, d.join("steps.jsonl")).unwrap();
        run(&[
            "build-pivot",
            "--input",
            &f("steps.jsonl"),
            "--output",
            &f("p.jsonl"),
            "--agent-ref",
            "a",
        ]);
        run(&[
            "export",
            "--rollouts",
            &f("observed.jsonl"),
            "--output-dir",
            &f("atif"),
            "--agent-version",
            "v1",
            "--session-id",
            "s",
        ]);
        std::fs::create_dir(d.join("hc")).unwrap();
        std::fs::copy(d.join("r.jsonl"), d.join("hc/rollouts.jsonl")).unwrap();
        std::fs::create_dir(d.join("capture")).unwrap();
        std::fs::copy(d.join("r.jsonl"), d.join("s-shard0-of-1.jsonl")).unwrap();
        std::fs::copy(
            d.join("r_materialized_inputs.jsonl"),
            d.join("s-shard0-of-1_materialized_inputs.jsonl"),
        )
        .unwrap();
        // select-pivot's profile: two on-policy rollouts per pivot, one passing (mixed),
        // profiled; task i is the file's i-th pivot.
        let pivots = std::fs::read_to_string(d.join("p.jsonl")).unwrap();
        let (mut mat, mut rolls) = (String::new(), String::new());
        for (i, line) in pivots.lines().enumerate() {
            let mut row: serde_json::Value = serde_json::from_str(line).unwrap();
            for r in 0..2 {
                row["_ng_task_index"] = i.into();
                row["_ng_rollout_index"] = r.into();
                mat.push_str(&format!("{row}\n"));
                let out = serde_json::json!({"_ng_task_index": i, "_ng_rollout_index": r,
                    "reward": r, "agent_ref": row["agent_ref"], "response": {"output": []}});
                rolls.push_str(&format!("{out}\n"));
            }
        }
        std::fs::write(d.join("pp_materialized_inputs.jsonl"), mat).unwrap();
        std::fs::write(d.join("pp.jsonl"), rolls).unwrap();
        run(&[
            "profile",
            "--inputs",
            &f("pp_materialized_inputs.jsonl"),
            "--rollouts",
            &f("pp.jsonl"),
        ]);
        files
    }

    fn dir(&self) -> PathBuf {
        self.root.path().join("in")
    }

    fn path(&self, name: &str) -> String {
        self.dir().join(name).display().to_string()
    }

    /// Every file under `in/` with its bytes.
    fn snapshot(&self) -> BTreeMap<PathBuf, Vec<u8>> {
        let mut out = BTreeMap::new();
        let mut stack = vec![self.dir()];
        while let Some(d) = stack.pop() {
            for e in std::fs::read_dir(&d).unwrap() {
                let p = e.unwrap().path();
                let meta = std::fs::symlink_metadata(&p).unwrap();
                if meta.is_dir() {
                    stack.push(p);
                } else if meta.is_file() {
                    out.insert(p.clone(), std::fs::read(&p).unwrap());
                } else {
                    out.insert(p, Vec::new());
                }
            }
        }
        out
    }
}

/// A working command line for each command (`{in}` the inputs folder, `{out}` the run's output
/// folder); the harness sets one slot at a time to a hostile shape.
fn base(command: &str, flag: Option<&str>) -> Option<Vec<&'static str>> {
    Some(match (command, flag) {
        // The shards of `--merge`, and the capture folder of an observed run.
        ("collect", None) => vec![
            "collect",
            "--merge",
            "{in}/s-shard0-of-1.jsonl",
            "-o",
            "{out}/merged.jsonl",
            "--disable-aggregation",
        ],
        ("collect", Some("--model-call-capture-dir")) => {
            let mut observed = base_of("collect")?;
            observed.extend([
                "--observability",
                "--model-call-capture-dir",
                "{in}/capture",
            ]);
            observed
        }
        _ => return base_of(command),
    })
}

fn base_of(command: &str) -> Option<Vec<&'static str>> {
    Some(match command {
        "profile" => vec![
            "profile",
            "--inputs",
            "{in}/r_materialized_inputs.jsonl",
            "--rollouts",
            "{in}/r.jsonl",
            "--out-dir",
            "{out}/prof",
        ],
        "report" => vec![
            "report",
            "--inputs",
            "{in}/r_materialized_inputs.jsonl",
            "--rollouts",
            "{in}/r.jsonl",
            "-o",
            "{out}/report.html",
        ],
        "health" => vec![
            "health",
            "--rollouts",
            "{in}/r.jsonl",
            "--inputs",
            "{in}/r_materialized_inputs.jsonl",
        ],
        "query" => vec![
            "query",
            "--rollouts",
            "{in}/r.jsonl",
            "--inputs",
            "{in}/r_materialized_inputs.jsonl",
            "reward > 0",
        ],
        "compare" => vec![
            "compare",
            "--baseline",
            "{in}/r.jsonl",
            "--candidates",
            "{in}/c.jsonl",
            "-o",
            "{out}/cmp",
        ],
        "health-check" => vec!["health-check", "{out}/hc"],
        "collect" => vec![
            "collect",
            "-i",
            "{in}/r_materialized_inputs.jsonl",
            "-o",
            "{out}/col.jsonl",
            "-a",
            "x",
            "--head-server",
            "127.0.0.1:9",
        ],
        "aggregate" => vec![
            "aggregate",
            "-i",
            "{in}/r.jsonl",
            "-o",
            "{out}/agg.jsonl",
            "--head-server",
            "127.0.0.1:9",
        ],
        "export" => vec![
            "export",
            "--rollouts",
            "{in}/observed.jsonl",
            "--output-dir",
            "{out}/atif",
            "--agent-version",
            "v1",
            "--session-id",
            "s",
        ],
        "validate-atif" => vec!["validate-atif", "{in}/atif"],
        "watch" => vec!["watch", "--once", "{in}/r.jsonl"],
        "validate-pivot" => vec!["validate-pivot", "--path", "{in}/p.jsonl"],
        "build-pivot" => vec![
            "build-pivot",
            "--input",
            "{in}/steps.jsonl",
            "--output",
            "{out}/p.jsonl",
            "--agent-ref",
            "a",
        ],
        "select-pivot" => vec![
            "select-pivot",
            "--pivots",
            "{in}/p.jsonl",
            "--profile",
            "{in}/pp_reward_profiling.jsonl",
            "--output",
            "{out}/sel.jsonl",
            "--min-rollouts",
            "1",
        ],
        "select-tasks" => vec![
            "select-tasks",
            "--profile",
            "{in}/r_reward_profiling.jsonl",
            "-o",
            "{out}/tasks.jsonl",
        ],
        _ => return None,
    })
}

/// What a slot is set to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Shape {
    Missing,
    Directory,
    FifoNoWriter,
    FifoLateWriter,
    DevZero,
    DevFull,
    DevNull,
    SymlinkLoop,
    NoFinalNewline,
    BlankLine,
    Empty,
    /// Outputs: the same file as one of the command's inputs, spelled four ways.
    SameAsInput,
    ViaSymlink,
    ViaHardLink,
    ViaDotDot,
}

const INPUT_SHAPES: &[Shape] = &[
    Shape::Missing,
    Shape::Directory,
    Shape::FifoNoWriter,
    Shape::FifoLateWriter,
    Shape::DevZero,
    Shape::DevFull,
    Shape::DevNull,
    Shape::SymlinkLoop,
    Shape::NoFinalNewline,
    Shape::BlankLine,
    Shape::Empty,
];

const OUTPUT_SHAPES: &[Shape] = &[
    Shape::SameAsInput,
    Shape::ViaSymlink,
    Shape::ViaHardLink,
    Shape::ViaDotDot,
    Shape::DevFull,
    Shape::DevNull,
    Shape::Directory,
    Shape::SymlinkLoop,
];

/// How the process's stdout is set, or a signal sent to it mid-run.
#[derive(Clone, Copy, Debug)]
enum Around {
    Plain,
    StdoutClosed,
    StdoutFull,
    Signal(i32),
}

struct Case {
    slot: Slot,
    shape: Shape,
    around: Around,
}

/// The command line of `case`, its slot set to the shape's path (made in `scratch`).
fn command_line(files: &Files, case: &Case, scratch: &Path, out: &Path) -> Option<Vec<String>> {
    let inputs = files.dir().display().to_string();
    let outs = out.display().to_string();
    let fill = |a: &str| a.replace("{in}", &inputs).replace("{out}", &outs);
    let mut args: Vec<String> = base(&case.slot.command, case.slot.flag.as_deref())?
        .iter()
        .map(|a| fill(a))
        .collect();
    // The base's value of the slot (a positional: the first argument after the command that is
    // a path in `{in}`), which the shape replaces or, for an output, names an input.
    let at = match &case.slot.flag {
        Some(flag) => args.iter().position(|a| a == flag).map(|i| i + 1),
        None => args
            .iter()
            .skip(1)
            .position(|a| a.starts_with(&inputs))
            .map(|i| i + 1),
    };
    let some_input = args
        .iter()
        .find(|a| a.starts_with(&inputs) && Path::new(a).is_file())
        .cloned()
        .unwrap_or_else(|| files.path("r.jsonl"));
    let original = at.map_or_else(|| some_input.clone(), |i| args[i].clone());
    let path = shape_path(case.shape, &original, &some_input, scratch)?;
    match at {
        Some(i) => args[i] = path,
        None => match &case.slot.flag {
            Some(flag) => args.extend([flag.clone(), path]),
            None => return None,
        },
    }
    Some(args)
}

fn mkfifo(p: &Path) {
    let c = std::ffi::CString::new(p.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a valid C string; mkfifo only creates a node.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
}

/// The path a shape stands for, made in `scratch` (a copy of the slot's own file where the shape
/// is a variation of it).
fn shape_path(shape: Shape, original: &str, input: &str, scratch: &Path) -> Option<String> {
    let name = Path::new(original)
        .file_name()
        .map_or("x.jsonl".into(), |n| n.to_string_lossy().into_owned());
    let p = scratch.join(&name);
    let bytes = || std::fs::read(original).unwrap_or_default();
    match shape {
        Shape::Missing => return Some(scratch.join("missing").join(&name).display().to_string()),
        Shape::Directory => std::fs::create_dir_all(&p).unwrap(),
        Shape::FifoNoWriter | Shape::FifoLateWriter => mkfifo(&p),
        Shape::DevZero => return Some("/dev/zero".into()),
        Shape::DevFull => return Some("/dev/full".into()),
        Shape::DevNull => return Some("/dev/null".into()),
        Shape::SymlinkLoop => {
            std::os::unix::fs::symlink(scratch.join("loop_b"), scratch.join("loop_a")).unwrap();
            std::os::unix::fs::symlink(scratch.join("loop_a"), scratch.join("loop_b")).unwrap();
            return Some(scratch.join("loop_a").join(&name).display().to_string());
        }
        Shape::NoFinalNewline | Shape::BlankLine | Shape::Empty => {
            if !Path::new(original).is_file() {
                return None;
            }
            let mut b = bytes();
            match shape {
                Shape::NoFinalNewline => {
                    while b.last() == Some(&b'\n') {
                        b.pop();
                    }
                }
                Shape::BlankLine => {
                    let at = b
                        .iter()
                        .position(|&c| c == b'\n')
                        .map_or(b.len(), |i| i + 1);
                    b.splice(at..at, b"  \n".iter().copied());
                }
                _ => b.clear(),
            }
            std::fs::write(&p, b).unwrap();
        }
        Shape::SameAsInput => return Some(input.to_string()),
        Shape::ViaSymlink => std::os::unix::fs::symlink(input, &p).unwrap(),
        Shape::ViaHardLink => std::fs::hard_link(input, &p).unwrap(),
        Shape::ViaDotDot => {
            let dir = Path::new(input).parent()?;
            let last = dir.file_name()?.to_string_lossy().into_owned();
            let file = Path::new(input).file_name()?.to_string_lossy().into_owned();
            return Some(format!("{}/../{last}/{file}", dir.display()));
        }
    }
    Some(p.display().to_string())
}

/// What one run broke, if anything.
fn run_case(files: &Files, case: &Case) -> Result<(), String> {
    let work = tempfile::tempdir().unwrap();
    let (scratch, out, tmp) = (
        work.path().join("s"),
        work.path().join("o"),
        work.path().join("t"),
    );
    for d in [&scratch, &out, &tmp] {
        std::fs::create_dir(d).unwrap();
    }
    // health-check writes its reports into the run's folder: a copy of it, in the output folder.
    std::fs::create_dir(out.join("hc")).unwrap();
    std::fs::copy(
        files.dir().join("hc/rollouts.jsonl"),
        out.join("hc/rollouts.jsonl"),
    )
    .unwrap();
    let Some(args) = command_line(files, case, &scratch, &out) else {
        return Ok(()); // the shape does not apply to this slot (a variation of a folder)
    };
    let before = files.snapshot();
    let mut cmd = Command::new(common::gymscope_bin());
    cmd.args(&args[..])
        .env("TMPDIR", &tmp)
        .current_dir(work.path());
    // Files, not pipes: a pipe nobody reads until the end could fill and hang the run.
    cmd.stdin(Stdio::null())
        .stderr(std::fs::File::create(work.path().join("stderr")).unwrap());
    match case.around {
        Around::StdoutClosed => cmd.stdout(Stdio::piped()),
        Around::StdoutFull => cmd.stdout(
            std::fs::File::options()
                .write(true)
                .open("/dev/full")
                .unwrap(),
        ),
        _ => cmd.stdout(std::fs::File::create(work.path().join("stdout")).unwrap()),
    };
    // Memory bounded: an address-space cap turns a runaway allocation into an abort we see.
    // SAFETY: setrlimit is async-signal-safe and touches nothing of the parent.
    unsafe {
        cmd.pre_exec(|| {
            let cap = libc::rlimit {
                rlim_cur: 6 << 30,
                rlim_max: 6 << 30,
            };
            libc::setrlimit(libc::RLIMIT_AS, &raw const cap);
            Ok(())
        });
    }
    let mut child = cmd.spawn().map_err(|e| e.to_string())?;
    if let Around::StdoutClosed = case.around {
        drop(child.stdout.take()); // the reader goes away: a closed pipe
    }
    let fifo = scratch.join(
        Path::new(
            args.iter()
                .find(|a| a.starts_with(&*scratch.to_string_lossy()))
                .map_or("", |s| s),
        )
        .file_name()
        .unwrap_or_default(),
    );
    if case.shape == Shape::FifoLateWriter {
        let content = std::fs::read(files.path("r.jsonl")).unwrap();
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(800));
            // Opening waits for the reader; a command that refused the pipe never opens it.
            let (tx, rx) = std::sync::mpsc::channel();
            std::thread::spawn(move || {
                let _ = tx.send(std::fs::OpenOptions::new().write(true).open(&fifo));
            });
            if let Ok(Ok(mut f)) = rx.recv_timeout(Duration::from_secs(10)) {
                let _ = std::io::Write::write_all(&mut f, &content);
            }
        });
    }
    if let Around::Signal(sig) = case.around {
        std::thread::sleep(Duration::from_millis(150));
        // SAFETY: a plain kill of our own child.
        unsafe { libc::kill(child.id() as i32, sig) };
    }
    let start = Instant::now();
    let limit = Duration::from_secs(60);
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!("hung over {} s", limit.as_secs()));
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    // What it printed (stdout too: validate-atif lists its findings there), for the checks.
    let mut stderr = std::fs::read_to_string(work.path().join("stderr")).unwrap_or_default();
    stderr.push_str(&std::fs::read_to_string(work.path().join("stdout")).unwrap_or_default());
    let mut problems = Vec::new();
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(0..=3), _) => {}
        (None, Some(sig)) if matches!(case.around, Around::Signal(s) if s == sig) => {}
        (Some(130 | 143 | 129), _) if matches!(case.around, Around::Signal(_)) => {}
        (code, sig) => problems.push(format!("ended with code {code:?}, signal {sig:?}")),
    }
    if stderr.contains("panicked") || stderr.contains("memory allocation") {
        problems.push("panicked or aborted".into());
    }
    if files.snapshot() != before {
        problems.push("an input changed".into());
    }
    let left_tmp: Vec<_> = std::fs::read_dir(&tmp).unwrap().collect();
    if !left_tmp.is_empty() {
        problems.push(format!("left {} entries in $TMPDIR", left_tmp.len()));
    }
    let temps = temp_files(&out);
    if !temps.is_empty() {
        problems.push(format!("left temporary files {temps:?}"));
    }
    // An input shape that fails names the file (its name, or the flag that gave it).
    let is_input_shape = INPUT_SHAPES.contains(&case.shape) && !case.slot.output;
    if is_input_shape
        && matches!(status.code(), Some(1 | 2))
        && matches!(case.around, Around::Plain)
        // An empty input (and /dev/null is one) gets the command's own word on it.
        && !matches!(
            case.shape,
            Shape::NoFinalNewline | Shape::BlankLine | Shape::Empty | Shape::DevNull
        )
        // The capture folder is the model servers' to make, and read after the run.
        && !(case.slot.flag.as_deref() == Some("--model-call-capture-dir")
            && matches!(case.shape, Shape::Missing | Shape::Directory))
    {
        let named = args
            .iter()
            .filter(|a| a.starts_with(&*scratch.to_string_lossy()) || a.starts_with("/dev/"))
            .any(|a| {
                let name = Path::new(a)
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default();
                stderr.contains(a.as_str()) || (!name.is_empty() && stderr.contains(&name))
            })
            || case
                .slot
                .flag
                .as_ref()
                .is_some_and(|f| stderr.contains(f.as_str()));
        if !named {
            problems.push(format!(
                "the error does not name the file: {}",
                stderr.trim()
            ));
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "{} — stderr: {}",
            problems.join("; "),
            last_lines(&stderr)
        ))
    }
}

fn last_lines(s: &str) -> String {
    let lines: Vec<&str> = s.lines().rev().take(2).collect();
    lines.into_iter().rev().collect::<Vec<_>>().join(" | ")
}

fn temp_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(rd) = std::fs::read_dir(dir) else {
        return out;
    };
    for e in rd.flatten() {
        let p = e.path();
        let name = p
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned();
        if std::fs::symlink_metadata(&p).is_ok_and(|m| m.is_dir()) {
            out.extend(temp_files(&p));
        } else if name.ends_with(".tmp") || name.contains(".tmp-") {
            out.push(p);
        }
    }
    out
}

/// Every case: each slot × its shapes, plus each command's stdout and signal cases.
fn all_cases() -> Vec<Case> {
    let mut cases = Vec::new();
    let slots = slots();
    let mut commands: Vec<String> = slots.iter().map(|s| s.command.clone()).collect();
    commands.dedup();
    for slot in &slots {
        let shapes = if slot.output {
            OUTPUT_SHAPES
        } else {
            INPUT_SHAPES
        };
        for &shape in shapes {
            cases.push(Case {
                slot: slot.clone(),
                shape,
                around: Around::Plain,
            });
        }
    }
    for command in commands {
        // The run's main input slot, unchanged (a copy with no final newline: the same rows).
        let Some(slot) = slots
            .iter()
            .find(|s| s.command == command && !s.output)
            .cloned()
        else {
            continue;
        };
        for around in [
            Around::StdoutClosed,
            Around::StdoutFull,
            Around::Signal(libc::SIGINT),
            Around::Signal(libc::SIGTERM),
            Around::Signal(libc::SIGHUP),
        ] {
            cases.push(Case {
                slot: slot.clone(),
                shape: Shape::NoFinalNewline,
                around,
            });
        }
    }
    cases
}

#[test]
fn every_command_has_a_working_command_line() {
    let mut cli = gymscope::cli::Cli::command();
    cli.build();
    let missing: Vec<&str> = cli
        .get_subcommands()
        .map(clap::Command::get_name)
        .filter(|name| *name != "help" && base(name, None).is_none())
        .collect();
    assert!(
        missing.is_empty(),
        "no base command line for {missing:?}: add one to `base`"
    );
    let slots = slots();
    assert!(
        slots.len() >= 30,
        "too few file slots found: {}",
        slots.len()
    );
    assert!(slots.iter().any(|s| s.output), "no output slot found");
    // Each base runs as it is (the harness's shapes are variations of something that works).
    let files = Files::new();
    let out = tempfile::tempdir().unwrap();
    std::fs::create_dir(out.path().join("hc")).unwrap();
    std::fs::copy(
        files.dir().join("hc/rollouts.jsonl"),
        out.path().join("hc/rollouts.jsonl"),
    )
    .unwrap();
    for sub in cli.get_subcommands().filter(|s| s.get_name() != "help") {
        let args: Vec<String> = base(sub.get_name(), Some("--"))
            .unwrap()
            .iter()
            .map(|a| {
                a.replace("{in}", &files.dir().display().to_string())
                    .replace("{out}", &out.path().display().to_string())
            })
            .collect();
        let refs: Vec<&str> = args.iter().map(String::as_str).collect();
        let o = common::run_gymscope(&refs);
        // collect and aggregate reach for a head server that is not there (exit 1, by name).
        let want: &[i32] = if matches!(sub.get_name(), "collect" | "aggregate") {
            &[1]
        } else {
            &[0, 3]
        };
        assert!(
            o.status.code().is_some_and(|c| want.contains(&c)),
            "{args:?}: {}",
            common::output_text(&o)
        );
    }
}

#[test]
fn every_file_slot_holds_against_every_hostile_shape() {
    let files = Files::new();
    let mut cases = all_cases();
    let full = std::env::var("CONTRACT_FULL").is_ok_and(|v| v == "1");
    if !full {
        let n: usize = std::env::var("CONTRACT_SAMPLE")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(90);
        let seed: u64 = std::env::var("CONTRACT_SEED")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(56);
        // A seeded shuffle (SplitMix64), then the first n.
        let mut state = seed;
        let mut next = || {
            state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^ (z >> 31)
        };
        for i in (1..cases.len()).rev() {
            let j = (next() % (i as u64 + 1)) as usize;
            cases.swap(i, j);
        }
        cases.truncate(n);
    }
    let results: Vec<(String, Result<(), String>)> = std::thread::scope(|s| {
        let chunks: Vec<&[Case]> = cases.chunks(cases.len().div_ceil(3).max(1)).collect();
        let handles: Vec<_> = chunks
            .into_iter()
            .map(|chunk| {
                let files = &files;
                s.spawn(move || {
                    chunk
                        .iter()
                        .map(|c| {
                            let what = format!(
                                "{} {} = {:?} ({:?})",
                                c.slot.command,
                                c.slot.flag.as_deref().unwrap_or("<positional>"),
                                c.shape,
                                c.around
                            );
                            (what, run_case(files, c))
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect()
    });
    let mut per_command: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    for ((what, r), case) in results.iter().zip(&cases) {
        let e = per_command.entry(case.slot.command.clone()).or_default();
        e.0 += 1;
        if r.is_err() {
            e.1 += 1;
            eprintln!("FAILED {what}: {}", r.as_ref().unwrap_err());
        }
    }
    for (command, (runs, failed)) in &per_command {
        eprintln!("contract: {command}: {runs} runs, {failed} failed");
    }
    let failed: Vec<&String> = results
        .iter()
        .filter(|(_, r)| r.is_err())
        .map(|(w, _)| w)
        .collect();
    eprintln!("contract: {} runs, {} failed", results.len(), failed.len());
    assert!(
        failed.is_empty(),
        "{} of {} cases broke the contract: {failed:#?}",
        failed.len(),
        results.len()
    );
}
