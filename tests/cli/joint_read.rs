//! The joint read of a line (`joint_read::rollout_line` / `input_line`: one walk for the profile
//! and health) gives exactly what the two readers give alone — the profile's row or error (message
//! and column) and health's read or error — on every line of every JSONL file under
//! tests/fixtures, on a generated agentic run, on hand-made edge rows, and on seeded mutations
//! of all of them (cut short, a structural byte put anywhere).

use crate::common::fixture_files;
use crate::common::gen_run;

use gymscope::health;
use gymscope::joint_read;
use gymscope::profile;
use gymscope::read::jsonl::LineSpan;
use gymscope::record::{KeyTable, Row, RowError, RowKind};

/// What a line gives: the profile's row described, and health's read as text.
type Both = (String, Result<Option<String>, String>);

/// A profile row with the names its key ids stand for (each line gets a fresh table).
fn describe(row: &Result<Row, RowError>, keys: &KeyTable) -> String {
    let names: Vec<&str> = (0..keys.len()).map(|i| keys.name(i as u32)).collect();
    format!("{row:?} {names:?}")
}

fn health_read<T: std::fmt::Debug>(
    read: Result<Option<T>, String>,
) -> Result<Option<String>, String> {
    read.map(|r| r.map(|r| format!("{r:?}")))
}

fn separate(span: LineSpan, line: &[u8], kind: RowKind) -> Both {
    let mut keys = KeyTable::default();
    let row = profile::parse_line(span, line, kind, &mut keys);
    let read = match kind {
        RowKind::Rollout => health_read(health::read_rollout(line)),
        RowKind::Input => health_read(health::read_input(line)),
    };
    (describe(&row, &keys), read)
}

fn joint(span: LineSpan, line: &[u8], kind: RowKind) -> Both {
    let mut keys = KeyTable::default();
    let (row, read) = match kind {
        RowKind::Rollout => {
            let (row, read) = joint_read::rollout_line(span, line, &mut keys);
            (row, health_read(read))
        }
        RowKind::Input => {
            let (row, read) = joint_read::input_line(span, line, &mut keys);
            (row, health_read(read))
        }
    };
    (describe(&row, &keys), read)
}

/// Checks one line (as line `n` of its file) as a rollout and as a materialized input; returns
/// whether both readers read it as a rollout row.
fn check(n: u64, line: &[u8]) -> bool {
    let span = LineSpan {
        line: n,
        offset: 0,
        len: u32::try_from(line.len()).unwrap(),
    };
    let mut alone = None;
    for kind in [RowKind::Input, RowKind::Rollout] {
        let separate = separate(span, line, kind);
        let shown = String::from_utf8_lossy(line);
        assert_eq!(joint(span, line, kind), separate, "line {n}: {shown}");
        alone = Some(separate);
    }
    let alone = alone.unwrap();
    alone.0.starts_with("Ok(") && matches!(alone.1, Ok(Some(_)))
}

/// Seeded mutations of `line`: cut short, and a byte that changes the structure put anywhere.
fn mutations(line: &[u8], rng: &mut fastrand::Rng, out: &mut Vec<Vec<u8>>) {
    const BYTES: &[u8] = b"\"\\{}[],:-0e.9 \tnu\xff";
    if line.is_empty() {
        return;
    }
    for _ in 0..6 {
        out.push(line[..rng.usize(0..line.len())].to_vec());
        let mut changed = line.to_vec();
        changed[rng.usize(0..line.len())] = BYTES[rng.usize(0..BYTES.len())];
        out.push(changed);
    }
}

fn every_line_and_its_mutations(lines: &[Vec<u8>], seed: u64) -> usize {
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut read = 0;
    let mut mutated = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        read += usize::from(check(i as u64 + 1, line));
        mutations(line, &mut rng, &mut mutated);
    }
    for line in &mutated {
        check(2, line);
    }
    read
}

fn lines_of(bytes: &[u8]) -> Vec<Vec<u8>> {
    bytes.split(|&b| b == b'\n').map(<[u8]>::to_vec).collect()
}

#[test]
fn every_fixture_line_reads_as_the_two_readers_read_it() {
    let files = fixture_files::every_jsonl();
    let mut read = 0;
    for (seed, path) in files.iter().enumerate() {
        read += every_line_and_its_mutations(&lines_of(&std::fs::read(path).unwrap()), seed as u64);
    }
    // The example runs' rollouts are read in one walk by both (not all refused to the fallback).
    assert!(read > 500, "only {read} rows read by both");
}

#[test]
fn a_generated_agentic_run_reads_as_the_two_readers_read_it() {
    let dir = tempfile::tempdir().unwrap();
    let (_, rollouts) = gen_run::generate_agentic(dir.path(), "agentic", 40, 4, 4500);
    let lines = lines_of(&std::fs::read(rollouts).unwrap());
    assert_eq!(every_line_and_its_mutations(&lines, 99), 160);
}

/// Rows at the edges of what the profile's reader and health's differ on: `-0` (orjson's integer
/// zero), numbers serde_json refuses or reads as floats, repeated keys and `response`s, `usage`
/// that is not an object, odd `reward`s and indices, a byte order mark, blank lines, invalid
/// UTF-8, raw control bytes, escaped keys, deep nesting, trailing text.
#[test]
fn edge_rows_read_as_the_two_readers_read_them() {
    let base = r#"{"_ng_task_index":3,"_ng_rollout_index":1,"agent_ref":{"name":"a"},"reward":1.0,"response":{"status":"completed","output":[{"type":"message","role":"assistant","content":[{"type":"output_text","text":"hi"}]}],"usage":{"input_tokens":5,"output_tokens":2,"total_tokens":7,"input_tokens_details":{"cached_tokens":1}}},"extra":2.5}"#;
    let edits: &[(&str, &str)] = &[
        ("\"extra\":2.5", "\"extra\":-0"),
        ("\"extra\":2.5", "\"extra\":-0.0"),
        ("\"output_tokens\":2", "\"output_tokens\":-0"),
        ("\"extra\":2.5", "\"extra\":123456789012345678901234"),
        ("\"extra\":2.5", "\"extra\":1e999"),
        ("\"extra\":2.5", "\"extra\":true,\"f\":false,\"n\":null,\"s\":\"x\",\"o\":{}"),
        ("\"extra\":2.5", "\"extra\":1,\"extra\":\"two\""),
        ("\"extra\":2.5", "\"extra\":2.5,\"response\":{\"usage\":{\"output_tokens\":9}}"),
        ("\"extra\":2.5", "\"extra\":2.5,\"response\":null"),
        ("\"usage\":{", "\"usage\":null,\"u\":{"),
        ("\"usage\":{", "\"usage\":{\"x\":1},\"usage\":{"),
        ("\"reward\":1.0", "\"reward\":[1]"),
        ("\"reward\":1.0", "\"reward\":{\"v\":1}"),
        ("\"reward\":1.0", "\"reward\":null"),
        ("\"reward\":1.0", "\"reward\":true"),
        ("\"_ng_task_index\":3", "\"_ng_task_index\":3.5"),
        ("\"_ng_task_index\":3", "\"_ng_task_index\":\"3\""),
        ("\"_ng_task_index\":3", "\"_ng_task_index\":99999999999999999999"),
        ("\"_ng_task_index\":3,", ""),
        ("\"agent_ref\":{\"name\":\"a\"}", "\"agent_ref\":{\"name\":7}"),
        ("\"agent_ref\":{\"name\":\"a\"}", "\"agent_ref\":null"),
        ("\"agent_ref\":{\"name\":\"a\"}", "\"agent_ref\":{\"name\":\"a\\\"b\\u00e9\"}"),
        ("\"extra\"", "\"\\u0065xtra\""),
        ("\"response\"", "\"\\u0072esponse\""),
        ("\"hi\"", "\"h\ti\""),
        ("\"hi\"", "\"\\ud800\""),
        ("\"hi\"", "\"😀 \\ud83d\\ude00\""),
        ("\"extra\":2.5", "\"extra\":[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]"),
        ("\"status\":\"completed\"", "\"status\":7"),
        ("\"response\":{", "\"response\":\"n/a\",\"r\":{"),
        ("\"output\":[", "\"output\":[1,"),
    ];
    let mut lines: Vec<Vec<u8>> = vec![base.as_bytes().to_vec()];
    for (from, to) in edits {
        assert!(base.contains(from), "{from}");
        lines.push(base.replacen(from, to, 1).into_bytes());
    }
    lines.extend(
        [
            format!("{base} x"),
            format!("  {base}  "),
            format!("{base},"),
            "[1]".to_string(),
            String::new(),
            " \t ".to_string(),
            "{}".to_string(),
        ]
        .map(String::into_bytes),
    );
    lines.push([b"\xEF\xBB\xBF", base.as_bytes()].concat());
    lines.push(
        base.replacen("hi", "h\u{e9}i", 1)
            .into_bytes()
            .into_iter()
            .filter(|&b| b != 0xA9)
            .collect(),
    );
    for (n, line) in lines.iter().enumerate() {
        check(n as u64 + 1, line);
        // A byte order mark is an error on line 1 only.
        check(1, line);
    }
    let read = every_line_and_its_mutations(&lines, 5);
    assert!(
        (15..lines.len()).contains(&read),
        "{read} of {} rows read by both",
        lines.len()
    );
}
