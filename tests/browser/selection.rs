//! The two selections in the app against the CLI (issue 27): the Profile page's pass-rate band
//! on the example run is `gymscope select-tasks --min-pass A --max-pass B` (counts, the query it
//! writes, the curated tasks and `.selection.json` byte for byte), and the pivot builder's λ_diff
//! slider is `gymscope select-pivot --max-mean X` (counts per move, the three files). Needs
//! `dist/` and chromium: scripts/test.sh.

use crate::common;
use crate::common::browser::start_app;
use crate::common::run_gymscope_in as gymscope_in;

use common::browser::Browser;
use serde_json::{json, Value};
use std::path::PathBuf;
use std::time::{Duration, Instant};

const AGENT: &str = "tasks_pivot_single_step_tool_use_with_argument_comparison_agent";

async fn download(b: &Browser, testid: &str) -> String {
    let script = format!(
        "const done = arguments[arguments.length - 1];
         fetch(document.querySelector('[data-testid={testid}]').href).then(r => r.text()).then(done, e => done('ERR ' + e));"
    );
    b.eval_async(&script).await.as_str().unwrap().to_string()
}

/// Moves a range input to `value` as a person's drag ends: `input` events, then `change`.
async fn slide(b: &Browser, testid: &str, value: f64, release: bool) {
    let change = if release {
        "s.dispatchEvent(new Event('change', {bubbles: true}));"
    } else {
        ""
    };
    b.eval(&format!(
        "const s = document.querySelector('[data-testid={testid}]');
         s.value = '{value}'; s.dispatchEvent(new Event('input', {{bubbles: true}})); {change}"
    ))
    .await;
}

/// Waits until `script` returns true.
async fn wait_for(b: &Browser, script: &str, what: &str) {
    let t0 = Instant::now();
    while b.eval(script).await != json!(true) {
        assert!(t0.elapsed() < Duration::from_secs(30), "never: {what}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The example run profiled by the CLI in a fresh folder (the page's example is the same run).
fn example_profile() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let src = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("assets/example-run");
    for name in [
        "example_rollouts_materialized_inputs.jsonl",
        "example_rollouts.jsonl",
    ] {
        std::fs::copy(src.join(name), dir.path().join(name)).unwrap();
    }
    let out = gymscope_in(
        dir.path(),
        &[
            "profile",
            "--inputs",
            "example_rollouts_materialized_inputs.jsonl",
            "--rollouts",
            "example_rollouts.jsonl",
        ],
    );
    assert!(out.status.success(), "{out:?}");
    dir
}

#[tokio::test(flavor = "multi_thread")]
async fn the_pass_band_is_select_tasks_on_the_example_run() {
    let dir = example_profile();
    let (_server, b) = start_app("#profile").await;
    b.click_testid("load-example").await;
    b.wait_testid("task-count", "task").await;
    b.eval("document.querySelector('[data-testid=pass-band] summary').click()")
        .await;
    // Opening shows the whole band: every task, and the histogram of their pass rates.
    b.wait_testid("band-status", "of 30 tasks kept").await;
    let bars = b
        .eval("return Array.from(document.querySelectorAll('[data-testid=band-bar]')).map(e => Number(e.dataset.count))")
        .await;
    assert_eq!(
        bars,
        json!([7, 6, 5, 1, 11]),
        "pass rates 0, 0.25, 0.5, 0.75 and 1 of the 30 tasks"
    );
    for (n, (lo, hi)) in [(0.5, 1.0), (0.0, 0.5), (0.25, 0.75), (1.0, 1.0)]
        .into_iter()
        .enumerate()
    {
        let out = format!("curated{n}.jsonl");
        let cli = gymscope_in(
            dir.path(),
            &[
                "select-tasks",
                "--profile",
                "example_rollouts_reward_profiling.jsonl",
                "-o",
                &out,
                "--min-pass",
                &lo.to_string(),
                "--max-pass",
                &hi.to_string(),
            ],
        );
        let stdout = String::from_utf8(cli.stdout.clone()).unwrap();
        // A drag: moves without files (counts only), then the release.
        slide(&b, "band-min", lo, false).await;
        slide(&b, "band-max", hi, false).await;
        slide(&b, "band-max", hi, true).await;
        let query = format!("task.pass_rate >= {lo} and task.pass_rate <= {hi}");
        wait_for(
            &b,
            &format!(
                "return document.querySelector('[data-testid=query-input]').value === {query:?}"
            ),
            "the band written as the query",
        )
        .await;
        if cli.status.success() {
            let kept = stdout.lines().find(|l| l.starts_with("kept: ")).unwrap();
            let kept = kept.split_whitespace().nth(1).unwrap();
            wait_for(
                &b,
                "return !!document.querySelector('[data-testid=band-download-curated]')",
                "the files",
            )
            .await;
            b.wait_testid("band-status", &format!("{kept} of 30 tasks kept"))
                .await;
            let counts = b.wait_testid("band-counts", "tasks read").await;
            let printed = &stdout[..stdout.find("curated tasks:").unwrap()];
            assert_eq!(counts.trim(), printed.trim(), "{lo}..{hi}");
            let want = std::fs::read_to_string(dir.path().join(&out)).unwrap();
            assert!(
                download(&b, "band-download-curated").await == want,
                "{lo}..{hi}: curated tasks differ"
            );
            let sel = out.replace(".jsonl", ".selection.json");
            let want = std::fs::read_to_string(dir.path().join(sel)).unwrap();
            assert_eq!(download(&b, "band-download-selection").await, want);
        } else {
            // The CLI writes nothing and says why; so does the page.
            assert_eq!(cli.status.code(), Some(1), "{cli:?}");
            let status = b.wait_testid("band-status", "Nothing to write").await;
            assert!(status.starts_with("0 of 30 tasks kept"), "{status}");
            let stderr = String::from_utf8(cli.stderr).unwrap();
            let why = stderr.split(": ").last().unwrap().trim();
            assert!(status.contains(why), "{status} / {stderr}");
            assert_eq!(b.count("[data-testid^=band-download]").await, 0);
        }
    }
    // A band upside down is refused as the CLI refuses it (exit 2), nothing sent.
    slide(&b, "band-min", 0.9, true).await;
    slide(&b, "band-max", 0.1, true).await;
    b.wait_testid("band-status", "The band is empty").await;
    b.close().await;
}

/// A build of upstream's example with the CLI, and a profile of its pivots' made-up on-policy
/// rollouts whose means spread over 0..1 (pivot i: i % 9 successes of 8).
fn built_and_profiled() -> (tempfile::TempDir, String, String) {
    let dir = tempfile::tempdir().unwrap();
    let name = "workplace_assistant.example_rollouts.jsonl";
    let src = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/pivot-build/upstream");
    std::fs::copy(src.join(name), dir.path().join(name)).unwrap();
    let out = "pivots.jsonl".to_string();
    let built = gymscope_in(
        dir.path(),
        &[
            "build-pivot",
            "--input",
            name,
            "--output",
            &out,
            "--agent-ref",
            AGENT,
            "--relative-paths",
        ],
    );
    assert!(built.status.success(), "{built:?}");
    let pivots = std::fs::read_to_string(dir.path().join(&out)).unwrap();
    let mut profile = String::new();
    for (i, line) in pivots.lines().enumerate() {
        let row: Value = serde_json::from_str(line).unwrap();
        let infos: Vec<Value> = (0..8)
            .map(|r| json!({"reward": f64::from(u8::from(r < i % 9))}))
            .collect();
        let p = json!({"_ng_task_index": i, "rollout_infos": infos,
            "sample": {"pivot_info": {"pivot_id": row["pivot_info"]["pivot_id"]}}});
        profile.push_str(&format!("{p}\n"));
    }
    let profile_name = "prof_rollouts_reward_profiling.jsonl".to_string();
    std::fs::write(dir.path().join(&profile_name), profile).unwrap();
    (dir, out, profile_name)
}

#[tokio::test(flavor = "multi_thread")]
async fn the_lambda_slider_is_select_pivot_max_mean() {
    let (dir, pivots, profile) = built_and_profiled();
    let (_server, b) = start_app("#pivot-build").await;
    crate::select_with_lambda(
        &b,
        &dir.path().join(&pivots),
        &dir.path().join(&profile),
        &dir.path().join("pivots.gym.yaml"),
    )
    .await;
    let selected = "pivots.selected.jsonl";
    for x in [0.5, 0.3, 0.9, 0.1, 0.0] {
        let cli = gymscope_in(
            dir.path(),
            &[
                "select-pivot",
                "--pivots",
                &pivots,
                "--profile",
                &profile,
                "--output",
                selected,
                "--max-mean",
                &x.to_string(),
            ],
        );
        let stdout = String::from_utf8(cli.stdout.clone()).unwrap();
        slide(&b, "pb-lambda", x, false).await;
        slide(&b, "pb-lambda", x, true).await;
        b.wait_testid("pb-lambda-value", &x.to_string()).await;
        if cli.status.success() {
            let table = &stdout[..stdout.find("selected pivots:").unwrap()];
            let kept_line = table.lines().find(|l| l.starts_with("| kept |")).unwrap();
            let kept = kept_line
                .split(" | ")
                .nth(1)
                .unwrap()
                .split(' ')
                .next()
                .unwrap();
            b.wait_testid("pb-select-status", &format!("{kept} pivots selected"))
                .await;
            wait_for(
                &b,
                "return !!document.querySelector('[data-testid=pb-download-selected-config]')",
                "the files",
            )
            .await;
            let counts = b.wait_testid("pb-select-counts", "kept per depth").await;
            for line in table
                .lines()
                .filter(|l| !l.starts_with('|') && !l.trim().is_empty())
            {
                assert!(counts.contains(line.trim()), "λ {x}: {line:?} in {counts}");
            }
            let cells = b
                .eval("return [...document.querySelectorAll('[data-testid=pb-select-counts] td')].map(e => e.textContent.trim())")
                .await;
            let want: Vec<String> = table
                .lines()
                .filter(|l| {
                    l.starts_with("| ") && !l.starts_with("| ---") && !l.starts_with("| selection")
                })
                .flat_map(|l| {
                    l.trim()
                        .trim_matches('|')
                        .split(" | ")
                        .map(|c| c.trim().to_string())
                        .collect::<Vec<_>>()
                })
                .collect();
            assert_eq!(cells, json!(want), "λ {x}");
            for (testid, file) in [
                ("pb-download-selected", selected.to_string()),
                (
                    "pb-download-selection",
                    "pivots.selected.selection.json".to_string(),
                ),
                (
                    "pb-download-selected-config",
                    "pivots.selected.gym.yaml".to_string(),
                ),
            ] {
                let want = std::fs::read_to_string(dir.path().join(&file)).unwrap();
                assert!(download(&b, testid).await == want, "λ {x}: {file} differs");
            }
            let marks = b.eval("return document.querySelectorAll('[data-testid=pb-mean-histogram] [data-testid=histogram-mark]').length").await;
            assert_eq!(marks, json!(1));
        } else {
            assert_eq!(cli.status.code(), Some(1), "{cli:?}");
            let status = b.wait_testid("pb-select-status", "No pivot selected").await;
            let stderr = String::from_utf8(cli.stderr).unwrap();
            let why = stderr.split_once("': ").unwrap().1.trim();
            assert!(status.contains(why), "{status} / {stderr}");
            assert_eq!(b.count("[data-testid^=pb-download-selected]").await, 0);
        }
    }
    let bars = b
        .eval("return Array.from(document.querySelectorAll('[data-testid=pb-mean-bar]')).reduce((n, e) => n + Number(e.dataset.count), 0)")
        .await;
    let pivots_n = std::fs::read_to_string(dir.path().join(&pivots))
        .unwrap()
        .lines()
        .count();
    assert_eq!(
        bars,
        json!(pivots_n),
        "every profiled pivot in the mean histogram"
    );
    b.close().await;
}

/// In the page: sets range `testid` to `value` (`input`, and `change` when `release`) and
/// returns the milliseconds until `[data-testid=status]`'s `data-kept` differs from before (and,
/// with `release`, until `link` exists), with the new count.
async fn timed_move(
    b: &Browser,
    testid: &str,
    value: f64,
    status: &str,
    link: Option<&str>,
) -> (f64, String) {
    let release = link.is_some();
    let link = link.unwrap_or("none");
    let v = b
        .eval_async(&format!(
            "const done = arguments[arguments.length - 1];
             const kept = () => document.querySelector('[data-testid={status}]')?.dataset.kept;
             const before = kept();
             const oldLink = document.querySelector('[data-testid={link}]')?.href;
             const s = document.querySelector('[data-testid={testid}]');
             const t0 = performance.now();
             s.value = '{value}'; s.dispatchEvent(new Event('input', {{bubbles: true}}));
             if ({release}) s.dispatchEvent(new Event('change', {{bubbles: true}}));
             const poll = () => {{
               const k = kept();
               const l = document.querySelector('[data-testid={link}]')?.href;
               if (k !== undefined && k !== before && (!{release} || (l && l !== oldLink))) done([performance.now() - t0, k]);
               else setTimeout(poll, 1);
             }};
             poll();"
        ))
        .await;
    (v[0].as_f64().unwrap(), v[1].as_str().unwrap().to_string())
}

/// Figures, not a check: the λ_diff slider on 100,000 pivots and the pass band on a
/// 10,000-task run (80,000 rollouts), each move timed in the page from the event to the new
/// count on the page (and to the new files when let go).
///
///   cargo test --test browser selection_timing -- --ignored --nocapture
#[tokio::test(flavor = "multi_thread")]
#[ignore = "prints figures; run by hand"]
async fn selection_timing() {
    use std::fmt::Write as _;
    let dir = tempfile::tempdir().unwrap();
    let (mut pivots, mut profile) = (String::new(), String::new());
    for i in 0..100_000_u32 {
        let id = format!("p{i}");
        let row = json!({"trajectory_id": i / 4, "responses_create_params": {"input": [{"role": "user", "content": format!("q{i}")}]},
            "expected_action": {"type": "function_call", "name": format!("tool_{}", i % 7), "arguments": "{}"},
            "meta_info": {"depth": i % 4}, "pivot_info": {"pivot_id": id}});
        writeln!(pivots, "{row}").unwrap();
        let infos: Vec<Value> = (0..8)
            .map(|r| json!({"reward": f64::from(u8::from(r < (i * 7919) % 9))}))
            .collect();
        let p = json!({"_ng_task_index": i, "rollout_infos": infos, "sample": {"pivot_info": {"pivot_id": id}}});
        writeln!(profile, "{p}").unwrap();
    }
    std::fs::write(dir.path().join("big.jsonl"), &pivots).unwrap();
    std::fs::write(dir.path().join("big_prof.jsonl"), &profile).unwrap();
    println!(
        "pivots {:.1} MB, profile {:.1} MB",
        pivots.len() as f64 / 1e6,
        profile.len() as f64 / 1e6
    );
    let (server, b) = start_app("#pivot-build").await;
    b.choose_file("pb-pivots-file", &dir.path().join("big.jsonl"))
        .await;
    b.choose_file("pb-profile-file", &dir.path().join("big_prof.jsonl"))
        .await;
    b.eval("document.querySelector('[data-testid=pb-lambda-on]').click()")
        .await;
    let t0 = Instant::now();
    b.click_testid("pb-select").await;
    b.wait_text_for("[data-testid=pb-select-status]", "selected", 300)
        .await;
    println!(
        "select (read both files, decide, plan, write the files): {:.2} s",
        t0.elapsed().as_secs_f64()
    );
    // Each move changes what is kept (means are k/8), so each is seen to land.
    for (x, y) in [(0.3, 0.45), (0.6, 0.2), (0.8, 0.4), (0.95, 0.3)] {
        let (ms, kept) = timed_move(&b, "pb-lambda", x, "pb-select-status", None).await;
        let files = Some("pb-download-selected");
        let (ms_files, kept_y) = timed_move(&b, "pb-lambda", y, "pb-select-status", files).await;
        println!("λ_diff {x}: counts in {ms:.0} ms ({kept} kept); let go at {y}: counts and files in {ms_files:.0} ms ({kept_y} kept)");
    }
    let tasks = tempfile::tempdir().unwrap();
    let (inputs, rollouts) = common::gen_run::generate_compact(tasks.path(), "rollouts", 10_000, 8);
    b.close().await;
    let b = Browser::start().await;
    b.open_app(&server.url(), "#profile").await;
    b.choose_files("files", &[inputs, rollouts]).await;
    b.wait_text_for("[data-testid=status]", "Profile ready", 300)
        .await;
    let t0 = Instant::now();
    b.eval("document.querySelector('[data-testid=pass-band] summary').click()")
        .await;
    b.wait_text_for("[data-testid=band-status]", "tasks kept", 300)
        .await;
    println!(
        "band opened (the profile read once, all kept, files): {:.2} s",
        t0.elapsed().as_secs_f64()
    );
    for (lo, hi) in [(0.25, 0.875), (0.5, 1.0), (0.125, 0.75), (0.0, 0.5)] {
        let (ms, kept) = timed_move(&b, "band-min", lo, "band-status", None).await;
        let files = Some("band-download-curated");
        let (ms_files, kept_hi) = timed_move(&b, "band-max", hi, "band-status", files).await;
        println!("band from {lo}: counts in {ms:.0} ms ({kept} kept); to {hi} let go: counts and files in {ms_files:.0} ms ({kept_hi} kept)");
    }
    b.close().await;
}
