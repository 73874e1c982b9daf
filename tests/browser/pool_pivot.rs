//! The pivot pages' reads in the pool (`?workers=N`): a pivot file validated by two workers
//! reports what one worker and the CLI report (the errors early and late, a lone CR's physical
//! lines, the stats) with the CLI's fixed copy; a build converted by two workers writes the
//! CLI's files, byte for byte.

use crate::common::browser::{dist, Browser};
use crate::common::static_server::StaticServer;
use std::path::Path;
use std::process::Command;

/// A valid pivot row with a prompt of about 4 KB; `i` makes each differ.
fn row(i: usize) -> String {
    let words: String = (0..600)
        .map(|w| format!("w{} ", (i * 7 + w) % 97))
        .collect();
    serde_json::json!({
        "responses_create_params": {
            "input": [{"role": "user", "content": format!("task {i}: {words}")}],
            "tools": [{"type": "function", "name": "search", "parameters": {}}],
        },
        "expected_action": {"type": "function_call", "name": "search", "arguments": "{}"},
        "agent_ref": {"type": "responses_api_agents", "name": "a"},
        "meta_info": {"depth": i % 5},
        "source_model_info": {"rewards": [0, (i % 2)]},
    })
    .to_string()
}

/// About 20 MB of rows: fixable ones throughout (no `agent_ref`, a null parameter), a row cut
/// short three quarters in and a lone CR splitting a row seven eighths in.
fn write_pivots(path: &Path) -> usize {
    let n = 5000;
    let mut out = String::new();
    for i in 0..n {
        let mut line = row(i);
        if i % 500 == 7 {
            line = line.replace(
                r#","agent_ref":{"type":"responses_api_agents","name":"a"}"#,
                "",
            );
        } else if i % 700 == 3 {
            line = line.replace(r#""tools":"#, r#""top_p":null,"tools":"#);
        } else if i == 3 * n / 4 {
            line.truncate(line.len() / 2);
        } else if i == 7 * n / 8 {
            line = line.replacen(" w", "\r w", 1);
        }
        out.push_str(&line);
        out.push('\n');
    }
    std::fs::write(path, out).unwrap();
    n
}

/// What the page shows of a validation, one string per part.
const SHOWN: &str = "return ['pivot-verdict', 'pivot-upstream', 'pivot-errors', 'pivot-stats', 'pivot-unfixable']
    .map(t => { const e = document.querySelector(`[data-testid=${t}]`); return e ? e.textContent : null; })";

#[tokio::test(flavor = "multi_thread")]
async fn a_pivot_file_checked_by_two_workers_is_one_workers_and_the_clis() {
    let dir = tempfile::tempdir().unwrap();
    let pivots = dir.path().join("pivots.jsonl");
    let rows = write_pivots(&pivots);
    let fixed = dir.path().join("pivots.fixed.jsonl");
    let cli = Command::new(env!("CARGO_BIN_EXE_gymscope"))
        .args(["validate-pivot", "--stats", "--agent-ref", "a", "--path"])
        .arg(&pivots)
        .arg("--fix")
        .arg(&fixed)
        .output()
        .unwrap();
    let stderr = String::from_utf8(cli.stderr).unwrap();
    let upstream = stderr.lines().next().unwrap().to_string();
    // The first error is the first row without `agent_ref`; the cut row and both halves of
    // the row a lone CR splits (one line more from there on) are in the second half.
    assert!(
        upstream.ends_with("line 8: missing required key 'agent_ref'"),
        "{stderr}"
    );
    let late = [
        format!("pivots.jsonl:{}:", 3 * rows / 4 + 1),
        format!("pivots.jsonl:{}:", 7 * rows / 8 + 2),
    ];
    assert!(
        late.iter().all(|at| stderr.contains(at.as_str())),
        "{stderr}"
    );
    let want_fixed = std::fs::read_to_string(&fixed).unwrap();

    let server = StaticServer::start(&dist());
    let b = Browser::start().await;
    let mut shown = Vec::new();
    for workers in [1u32, 2] {
        b.open_app(&format!("{}?workers={workers}", server.url()), "#pivot")
            .await;
        b.wait_testid("pivot-status", "Choose a pivot JSONL file")
            .await;
        b.type_into("pivot-agent-ref", "a").await;
        b.click_testid("pivot-stats-option").await;
        b.click_testid("pivot-fix").await;
        b.choose_file("pivot-file", &pivots).await;
        b.wait_text_for("[data-testid=pivot-verdict]", "Invalid", 120)
            .await;
        let read_by = b
            .eval("return Number(document.body.dataset.validateWorkers || 0)")
            .await;
        assert_eq!(read_by.as_u64(), Some(u64::from(workers)));
        let parts = b.eval(SHOWN).await;
        assert_eq!(
            parts[1].as_str(),
            Some(upstream.as_str()),
            "{workers} workers"
        );
        let errors = parts[2].as_str().unwrap();
        let lines = late.clone().map(|at| at.replace("pivots.jsonl:", "line "));
        assert!(
            lines.iter().all(|l| errors.contains(l.as_str())),
            "{errors}"
        );
        let stats = parts[3].as_str().unwrap();
        assert!(stats.contains("rows:") && stderr.contains(stats), "{stats}");
        let left_out = parts[4].as_str().unwrap();
        let cut = format!("line {}: invalid JSON", 3 * rows / 4 + 1);
        assert!(left_out.contains(&cut), "{left_out}");
        shown.push(parts);
        let copy = b.download_text("pivot-fix-download").await;
        assert!(
            copy == want_fixed,
            "{workers} workers: the fixed copy differs from the CLI's"
        );
    }
    assert_eq!(
        shown[0], shown[1],
        "one worker and two show the same report"
    );
    b.close().await;
}

/// `build-pivot` on about 6 MB of NeMo Gym rollouts (upstream's example twelve times, so every
/// later copy's pivots are duplicates of the first's, with blank lines between the copies),
/// its conversion read by one worker and by two: every file is the CLI's, byte for byte.
#[tokio::test(flavor = "multi_thread")]
async fn a_build_converted_by_two_workers_is_one_workers_and_the_clis() {
    const AGENT: &str = "pivot_agent";
    let dir = tempfile::tempdir().unwrap();
    let example = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/pivot-build/upstream/finance_agent_v2.example_rollouts.jsonl");
    let example = std::fs::read(example).unwrap();
    let mut source = Vec::new();
    for _ in 0..12 {
        source.extend_from_slice(&example);
        source.extend_from_slice(b"\n  \n");
    }
    std::fs::write(dir.path().join("src.jsonl"), &source).unwrap();
    let cli = Command::new(env!("CARGO_BIN_EXE_gymscope"))
        .current_dir(dir.path())
        .args([
            "build-pivot",
            "--input",
            "src.jsonl",
            "--output",
            "src_pivots.jsonl",
        ])
        .args(["--agent-ref", AGENT, "--relative-paths"])
        .output()
        .unwrap();
    assert!(cli.status.success(), "{cli:?}");
    let stdout = String::from_utf8(cli.stdout).unwrap();
    let file = |name: &str| std::fs::read_to_string(dir.path().join(name)).unwrap();
    assert!(file("src_pivots.skipped.jsonl").contains("duplicate_pivot"));

    let server = StaticServer::start(&dist());
    let b = Browser::start().await;
    for workers in [1u32, 2] {
        b.open_app(
            &format!("{}?workers={workers}", server.url()),
            "#pivot-build",
        )
        .await;
        b.wait_testid("pb-status", "Choose a rollouts file").await;
        b.set_text("pb-agent-ref", AGENT).await;
        b.choose_file("pb-source-file", &dir.path().join("src.jsonl"))
            .await;
        let headline = b
            .wait_text_for("[data-testid=pb-headline]", "pivots: ", 120)
            .await;
        assert_eq!(
            headline,
            stdout.lines().next().unwrap(),
            "{workers} workers"
        );
        let read_by = b
            .eval("return Number(document.body.dataset.buildWorkers || 0)")
            .await;
        assert_eq!(read_by.as_u64(), Some(u64::from(workers)));
        for (testid, name) in [
            ("pb-download-rows", "src_pivots.jsonl"),
            ("pb-download-audit", "src_pivots.skipped.jsonl"),
            ("pb-download-metrics", "src_pivots.metrics.json"),
            ("pb-download-info", "src_pivots.info.md"),
        ] {
            let got = b.download_text(testid).await;
            assert!(
                got == file(name),
                "{workers} workers: {name} differs from the CLI's"
            );
        }
    }
    b.close().await;
}
