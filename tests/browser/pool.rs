//! The pool of reading workers (`?workers=N`): a run read by two workers gives the profile, the
//! downloads, the first error, a text query's matches and a comparison's report of one worker,
//! and of the CLI.

use crate::common::assert_success;
use crate::common::browser::{dist, Browser};
use crate::common::gen_run;
use crate::common::static_server::StaticServer;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The CLI's two output files, or its error message (from `Malformed JSON …` on).
fn cli_profile(inputs: &Path, rollouts: &Path, out: &Path) -> Result<(String, String), String> {
    let run = gymscope_testkit::bench::profile_args(
        &mut Command::new(env!("CARGO_BIN_EXE_gymscope")),
        inputs,
        rollouts,
        out,
    )
    .output()
    .unwrap();
    if !run.status.success() {
        let stderr = String::from_utf8(run.stderr).unwrap();
        let at = stderr.find("Malformed JSON").expect(&stderr);
        return Err(stderr[at..].lines().next().unwrap().to_string());
    }
    let read = |name: &str| std::fs::read_to_string(out.join(name)).unwrap();
    Ok((
        read("rollouts_reward_profiling.jsonl"),
        read("rollouts_agent_metrics.json"),
    ))
}

/// Drops the run into the app opened with `?workers=N`; the status text once the read ends.
async fn profile_in_app(b: &Browser, base: &str, workers: u32, files: &[PathBuf]) -> String {
    b.open_app(&format!("{base}?workers={workers}"), "").await;
    b.choose_files("files", files).await;
    let status = "const s = document.querySelector('[data-testid=status]');
                  return s && !s.textContent.includes('Reading') && /Profile ready|Malformed|rror/.test(s.textContent) ? s.textContent : ''";
    first_text(b, status, "the profile").await
}

/// [`profile_in_app`], stopping the test unless the profile is ready.
async fn profile_ready(b: &Browser, base: &str, workers: u32, files: &[PathBuf]) {
    let status = profile_in_app(b, base, workers, files).await;
    assert!(
        status.contains("Profile ready"),
        "{workers} workers: {status}"
    );
}

async fn read_workers(b: &Browser) -> u64 {
    let n = b
        .eval("return Number(document.body.dataset.readWorkers || 0)")
        .await;
    n.as_u64().unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn two_workers_read_a_run_as_one_worker_and_the_cli() {
    let dir = tempfile::tempdir().unwrap();
    // About 12 MB: the pool cuts it into eight ranges of 1.5 MB, so every worker reads several.
    let (inputs, rollouts) = gen_run::generate_agentic(dir.path(), "rollouts", 600, 4, 4500);
    let files = [inputs.clone(), rollouts.clone()];
    let cli = cli_profile(&inputs, &rollouts, &dir.path().join("out")).unwrap();

    let server = StaticServer::start(&dist());
    let b = Browser::start().await;
    for workers in [1, 2] {
        profile_ready(&b, &server.url(), workers, &files).await;
        assert_eq!(read_workers(&b).await, u64::from(workers));
        let got = (
            b.download_text("download-profiling").await,
            b.download_text("download-agent-metrics").await,
        );
        assert!(
            got == cli,
            "{workers} workers: the downloads differ from the CLI's files"
        );
    }

    // A malformed row three quarters into the rollouts: the first error, in a late range.
    let text = std::fs::read_to_string(&rollouts).unwrap();
    let mut lines: Vec<&str> = text.lines().collect();
    let bad = lines.len() * 3 / 4;
    lines[bad] = r#"{"_ng_task_index": 1, "_ng_rollout_index": 0, "reward": }"#;
    lines[bad + 40] = "{";
    std::fs::write(&rollouts, lines.join("\n") + "\n").unwrap();
    // The CLI names the file as it was given; the page by its name.
    let want = cli_profile(&inputs, &rollouts, &dir.path().join("out2"))
        .unwrap_err()
        .replace(&format!("{}/", dir.path().display()), "");
    assert!(want.contains(&format!("line {}", bad + 1)), "{want}");
    for workers in [1, 2] {
        let status = profile_in_app(&b, &server.url(), workers, &files).await;
        assert!(
            status.contains(&want),
            "{workers} workers: {status}\nwanted: {want}"
        );
    }
    b.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_row_longer_than_many_ranges_is_one_error_at_its_line() {
    // A 24 MB row that never closes, between good rows: the ranges that begin inside it own no
    // line, and the range that owns its start reads on to its end.
    let dir = tempfile::tempdir().unwrap();
    let (inputs, rollouts) = gen_run::generate_agentic(dir.path(), "rollouts", 200, 4, 4500);
    let text = std::fs::read_to_string(&rollouts).unwrap();
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    lines.insert(
        300,
        format!(
            r#"{{"_ng_task_index": 1, "text": "{}"#,
            "a".repeat(24 << 20)
        ),
    );
    std::fs::write(&rollouts, lines.join("\n") + "\n").unwrap();
    let want = cli_profile(&inputs, &rollouts, &dir.path().join("out"))
        .unwrap_err()
        .replace(&format!("{}/", dir.path().display()), "");
    assert!(want.contains("line 301"), "{want}");

    let server = StaticServer::start(&dist());
    let b = Browser::start().await;
    for workers in [1, 2] {
        let files = [inputs.clone(), rollouts.clone()];
        let status = profile_in_app(&b, &server.url(), workers, &files).await;
        assert!(
            status.contains(&want),
            "{workers} workers: {status}\nwanted: {want}"
        );
    }
    b.close().await;
}

/// The query bar's text query, applied to the run on screen; the count's text or the error.
async fn query_in_app(b: &Browser, expr: &str) -> String {
    crate::query_bar::query(b, expr).await;
    let said =
        "const e = document.querySelector('[data-testid=query-count], [data-testid=query-error]');
         return e ? e.textContent : ''";
    first_text(b, said, "the query").await
}

/// The first non-empty text `script` returns, polled (up to 180 s).
async fn first_text(b: &Browser, script: &str, what: &str) -> String {
    let t0 = std::time::Instant::now();
    loop {
        let text = b.eval(script).await;
        if let Some(text) = text.as_str().filter(|t| !t.is_empty()) {
            return text.to_string();
        }
        assert!(t0.elapsed().as_secs() < 180, "{what} never ended");
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_text_query_read_by_two_workers_matches_one_worker_and_the_cli() {
    let dir = tempfile::tempdir().unwrap();
    // About 12 MB in ranges of 1.5 MB; the first expression needs all three reads (the inputs
    // for `agent`, the tasks' pass rates, the text), the second skips the inputs. The query's
    // errors are those the profile's read would meet first (the same reader): their order in
    // ranges is tested in `query::pooled`.
    let (inputs, rollouts) = gen_run::generate_agentic(dir.path(), "rollouts", 600, 4, 4500);
    let files = [inputs.clone(), rollouts.clone()];
    let exprs = [
        r#"output ~ "answer reason step" and task.pass_rate >= 0.5 and agent != "math_with_judge""#,
        r#"output ~ "answer reason step" and task.pass_rate >= 0.5"#,
    ];
    let mut wants = Vec::new();
    for expr in exprs {
        let cli = Command::new(env!("CARGO_BIN_EXE_gymscope"))
            .args(["query", "--format", "keys", "--inputs"])
            .arg(&inputs)
            .arg("--rollouts")
            .arg(&rollouts)
            .arg(expr)
            .output()
            .unwrap();
        assert!(cli.status.success());
        let keys = String::from_utf8(cli.stdout).unwrap();
        let tasks: std::collections::BTreeSet<&str> =
            keys.lines().filter_map(|l| l.split(' ').next()).collect();
        let matched = keys.lines().count();
        assert!(matched > 0, "{expr} matches nothing");
        // Counts read with thousands separators (docs/app.md: numbers for people).
        wants.push(format!(
            "{} of 2,400 rollouts match · {} tasks",
            gymscope::figures::count(matched),
            gymscope::figures::count(tasks.len())
        ));
    }
    assert_ne!(wants[0], wants[1], "the agent narrows the first");

    let server = StaticServer::start(&dist());
    let b = Browser::start().await;
    for workers in [1, 2] {
        profile_ready(&b, &server.url(), workers, &files).await;
        for (expr, want) in exprs.iter().zip(&wants) {
            assert_eq!(
                &query_in_app(&b, expr).await,
                want,
                "{workers} workers, {expr}"
            );
            let read_by = b
                .eval("return Number(document.body.dataset.queryWorkers || 0)")
                .await;
            assert_eq!(read_by.as_u64(), Some(u64::from(workers)));
        }
    }

    b.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn two_runs_compared_by_two_workers_are_the_clis_report() {
    let dir = tempfile::tempdir().unwrap();
    // Two runs of about 12 MB each; the candidate loses every third rollout's full reward.
    let (base_in, base) = gen_run::generate_agentic(dir.path(), "base", 600, 4, 4500);
    let (cand_in, cand) = (
        dir.path().join("cand_materialized_inputs.jsonl"),
        dir.path().join("cand.jsonl"),
    );
    std::fs::copy(&base_in, &cand_in).unwrap();
    let text = std::fs::read_to_string(&base).unwrap();
    let worse: Vec<String> = text
        .lines()
        .enumerate()
        .map(|(i, l)| {
            if i % 3 == 0 {
                l.replace(r#""reward":1.0"#, r#""reward":0.0"#)
            } else {
                l.to_string()
            }
        })
        .collect();
    std::fs::write(&cand, worse.join("\n") + "\n").unwrap();
    assert_ne!(
        std::fs::read(&cand).unwrap(),
        text.as_bytes(),
        "the candidate differs"
    );
    let out = dir.path().join("cli.html");
    let cli = Command::new(env!("CARGO_BIN_EXE_gymscope"))
        .arg("compare")
        .args([&base, &cand])
        .arg("--report")
        .arg(&out)
        .output()
        .unwrap();
    assert_success(&cli);
    let want = std::fs::read_to_string(&out).unwrap();

    let server = StaticServer::start(&dist());
    let b = Browser::start().await;
    for workers in [1u32, 2] {
        b.open_app(&format!("{}?workers={workers}", server.url()), "#compare")
            .await;
        b.wait_testid("compare-status", "Choose both runs").await;
        b.choose_files("compare-a", &[base_in.clone(), base.clone()])
            .await;
        b.choose_files("compare-b", &[cand_in.clone(), cand.clone()])
            .await;
        b.wait_testid("compare-status", "Compared: 600").await;
        let read_by = b
            .eval("return Number(document.body.dataset.compareWorkers || 0)")
            .await;
        assert_eq!(read_by.as_u64(), Some(u64::from(workers)));
        b.click_testid("compare-export").await;
        b.wait_testid("compare-report-download", "base_vs_cand_compare.html")
            .await;
        let html = b.download_text("compare-report-download").await;
        assert!(
            html == want,
            "{workers} workers: the report differs from the CLI's"
        );
    }
    b.close().await;
}
