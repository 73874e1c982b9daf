//! The run inspector in real headless Chromium: files recognized by content, partial mode in one
//! click, sorting and filtering, the plot's hover and click (aimed through the page's test hook),
//! the rollout view and the URL hash, hostile model text shown and never run, and no request after
//! the page has loaded. Needs `dist/` and chromium: scripts/test.sh.

use crate::common;
use crate::common::assert_contains;
use crate::common::assert_success;
use crate::common::browser::start_app;
use crate::common::collect_args;
use crate::common::gym_standin;

use common::browser::{dist, Browser};
use common::static_server::StaticServer;
use fantoccini::Locator;
use serde_json::json;
use std::path::{Path, PathBuf};

fn generated(case: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/generated")
        .join(case)
}

async fn click(b: &Browser, css: &str) {
    b.click(css).await;
}

async fn choose_files(b: &Browser, testid: &str, files: &[PathBuf]) {
    b.choose_files(testid, files).await;
}

async fn row_keys(b: &Browser) -> Vec<String> {
    let v = b.eval("return Array.from(document.querySelectorAll('[data-testid=task-row]')).map(r => r.dataset.key)").await;
    serde_json::from_value(v).unwrap()
}

/// The "partial" case under names that say nothing (`a.jsonl` rollouts, `c.jsonl` inputs).
fn partial_run(tmp: &Path) -> [PathBuf; 2] {
    let dir = generated("partial");
    let (a, c) = (tmp.join("a.jsonl"), tmp.join("c.jsonl"));
    std::fs::copy(dir.join("rollouts.jsonl"), &a).unwrap();
    std::fs::copy(dir.join("rollouts_materialized_inputs.jsonl"), &c).unwrap();
    [a, c]
}

/// The app with the partial run loaded in partial mode.
async fn open_partial_run() -> (tempfile::TempDir, StaticServer, Browser) {
    let tmp = tempfile::tempdir().unwrap();
    let (server, b) = start_app("").await;
    choose_files(&b, "files", &partial_run(tmp.path())).await;
    b.wait_testid("status", "Missing rollout results").await;
    click(&b, "[data-testid=partial-offer]").await;
    b.wait_testid("status", "Profile ready").await;
    (tmp, server, b)
}

/// Moves the mouse onto a plotted point (located by the page's hook), returns the tooltip text.
async fn hover_point(b: &Browser, task: i64, rollout: i64) -> String {
    let script = format!(
        "const [x, y] = window.__gymscope.pointPixel({task}, {rollout});
         const c = document.querySelector('[data-testid=scatter]');
         c.dispatchEvent(new MouseEvent('mousemove', {{clientX: x, clientY: y, bubbles: true}}));
         return [x, y];"
    );
    b.eval(&script).await;
    b.wait_testid("plot-tooltip", &format!("task {task} · rollout {rollout}"))
        .await
}

#[tokio::test(flavor = "multi_thread")]
async fn files_are_recognized_by_content_and_strict_by_default() {
    let (_server, b) = start_app("").await;
    b.wait_testid("status", "Choose both files").await;
    let tmp = tempfile::tempdir().unwrap();
    choose_files(&b, "files", &partial_run(tmp.path())).await;
    b.wait_testid_holding(
        "file-roles",
        "c.jsonl — materialized inputs",
        "a.jsonl — rollouts",
    )
    .await;
    // Strict by default; the missing rollouts are counted and partial mode is one click away.
    b.wait_testid_holding(
        "status",
        "Missing rollout results for 15 materialized input rows",
        "'c.jsonl' line",
    )
    .await;
    click(&b, "[data-testid=partial-offer]").await;
    b.wait_testid(
        "summary",
        "Reward profile completion: 13/28 rollout rows (46.43%)",
    )
    .await;
    b.wait_testid("totals", "5 tasks · 13 of 28 rollouts").await;
    b.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn task_table_sorts_by_any_column_and_searches() {
    let (_tmp, _server, b) = open_partial_run().await;
    assert_eq!(row_keys(&b).await, ["-3", "0", "2", "5", "12"]);
    let counts = || async {
        let v = b.eval("return Array.from(document.querySelectorAll('[data-testid=task-row] td[data-key=num_rollouts]')).map(td => Number(td.dataset.value))").await;
        serde_json::from_value::<Vec<f64>>(v).unwrap()
    };
    click(&b, "[data-testid=sort][data-key='num_rollouts']").await;
    let c = counts().await;
    assert!(c.windows(2).all(|w| w[0] >= w[1]), "descending: {c:?}");
    click(&b, "[data-testid=sort][data-key='num_rollouts']").await;
    let c = counts().await;
    assert!(c.windows(2).all(|w| w[0] <= w[1]), "ascending: {c:?}");
    b.type_into("task-search", "12").await;
    b.wait_testid("task-count", "1 of 5 tasks").await;
    assert_eq!(row_keys(&b).await, ["12"]);
    b.set_text("task-search", " ").await;
    b.wait_testid("task-count", "5 of 5 tasks").await;
    // Prompt text: the snippets come with the output files, after the profile is shown.
    b.wait_testid("download-profiling", "").await;
    b.set_text("task-search", "TASK 12:").await;
    b.wait_testid("task-count", "1 of 5 tasks").await;
    assert_eq!(row_keys(&b).await, ["12"]);
    click(&b, "[data-testid=task-row][data-key='12']").await;
    b.wait_testid("task-rollouts", "Task 12 — task 12:").await;
    b.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn keyboard_selects_a_task_and_enter_opens_its_rollout() {
    let (_tmp, _server, b) = open_partial_run().await;
    let wrap = b
        .client
        .find(Locator::Css("[data-testid=task-table-wrap]"))
        .await
        .unwrap();
    // Keys go to the focused table (no click: that would select the row under the pointer).
    wrap.send_keys("\u{E015}").await.unwrap(); // ArrowDown
    b.wait_testid("task-rollouts", "Task -3").await;
    wrap.send_keys("\u{E015}").await.unwrap();
    b.wait_testid("task-rollouts", "Task 0").await;
    wrap.send_keys("\u{E007}").await.unwrap(); // Enter
    b.wait_testid("rollout-title", "task 0 · rollout").await;
    b.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn plot_hover_names_a_rollout_and_click_opens_it() {
    let (_tmp, _server, b) = open_partial_run().await;
    let tip = hover_point(&b, 5, 2).await;
    assert!(tip.contains("reward"), "{tip}");
    b.eval(
        "const [x, y] = window.__gymscope.pointPixel(5, 2);
         document.querySelector('[data-testid=scatter]').dispatchEvent(new MouseEvent('click', {clientX: x, clientY: y, bubbles: true}));",
    )
    .await;
    b.wait_testid("rollout-title", "task 5 · rollout 2").await;
    if let Ok(path) = std::env::var("GYMSCOPE_SCREENSHOT") {
        hover_point(&b, 5, 1).await;
        b.client.set_window_size(1200, 2600).await.unwrap();
        std::fs::write(path, b.client.screenshot().await.unwrap()).unwrap();
        b.client.set_window_size(1200, 900).await.unwrap();
    }
    let hash = b.eval("return location.hash").await;
    assert!(
        hash.as_str().unwrap().ends_with("task=5&rollout=2"),
        "{hash}"
    );
    let kinds = b.eval("return Array.from(document.querySelectorAll('[data-testid=rollout-item]')).map(i => i.dataset.kind)").await;
    assert!(
        kinds.as_array().unwrap().contains(&json!("message")),
        "{kinds}"
    );
    click(&b, "[data-testid=rollout-raw-toggle]").await;
    b.wait_testid("rollout-raw", "\"_ng_rollout_index\": 2")
        .await;
    b.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn plots_have_axis_titles_and_the_histogram_counts() {
    let (_tmp, _server, b) = open_partial_run().await;
    let titles = b.eval("return Array.from(document.querySelectorAll('[data-testid=axis-title-x], [data-testid=axis-title-y]')).map(e => e.textContent)").await;
    let titles: Vec<String> = serde_json::from_value(titles).unwrap();
    assert!(titles.contains(&"reward".to_string()), "{titles:?}");
    assert!(titles.iter().any(|t| t.contains("tokens")), "{titles:?}");
    let counts = b.eval("return Array.from(document.querySelectorAll('[data-testid=histogram-bar]')).map(e => Number(e.dataset.count))").await;
    let counts: Vec<u64> = serde_json::from_value(counts).unwrap();
    assert_eq!(
        counts.iter().sum::<u64>(),
        13,
        "one count per rollout: {counts:?}"
    );
    b.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_reload_with_the_same_files_lands_on_the_same_rollout() {
    let (tmp, server, b) = open_partial_run().await;
    b.reload_at(&format!("{}#profile&task=5&rollout=2", server.url()))
        .await;
    choose_files(&b, "files", &partial_run(tmp.path())).await;
    b.wait_testid("status", "Missing rollout results").await;
    click(&b, "[data-testid=partial-offer]").await;
    b.wait_testid("rollout-title", "task 5 · rollout 2").await;
    b.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn every_page_is_a_tab_chosen_by_the_hash() {
    let (_server, b) = start_app("#pivot-build").await;
    let shown = "return Array.from(document.querySelectorAll('main > div')).filter(d => d.style.display !== 'none').map(d => d.dataset.testid || '')";
    assert_eq!(b.eval(shown).await, json!(["page-pivot-build"]));
    for route in ["profile", "pivot", "pivot-build", "compare", "health"] {
        b.click_testid(&format!("tab-{route}")).await;
        let hash = b.eval("return location.hash").await;
        assert_eq!(hash, json!(format!("#{route}")));
        let active = b
            .eval("return document.querySelector('nav .tab.active').dataset.testid")
            .await;
        assert_eq!(active, json!(format!("tab-{route}")));
    }
    b.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn model_text_is_shown_and_never_run() {
    let tmp = tempfile::tempdir().unwrap();
    let evil = "</script><script>window.__pwned=1</script><img src=x onerror=\"window.__pwned=2\">";
    let inputs = json!({"responses_create_params": {"input": [{"role": "user", "content": evil}]}, "agent_ref": {"name": evil}, "_ng_task_index": 0, "_ng_rollout_index": 0});
    let rollout = json!({
        "responses_create_params": {"input": [{"role": "user", "content": evil}]},
        "response": {"output": [
            {"type": "reasoning", "summary": [{"type": "summary_text", "text": evil}]},
            {"type": "function_call", "name": evil, "arguments": "{\"q\": \"<img src=x onerror=window.__pwned=3>\"}", "call_id": "c"},
            {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": evil}]}
        ], "usage": {"input_tokens": 3, "output_tokens": 5, "total_tokens": 8}},
        "reward": 1.0, (evil): 2, "_ng_task_index": 0, "_ng_rollout_index": 0
    });
    std::fs::write(
        tmp.path().join("evil_materialized_inputs.jsonl"),
        format!("{inputs}\n"),
    )
    .unwrap();
    std::fs::write(tmp.path().join("evil.jsonl"), format!("{rollout}\n")).unwrap();

    let server = StaticServer::start(&dist());
    let b = Browser::start().await;
    b.client
        .goto(&format!("{}#task=0&rollout=0", server.url()))
        .await
        .unwrap();
    b.wait_worker_ready().await;
    let loaded_requests = server.served();
    choose_files(
        &b,
        "files",
        &[
            tmp.path().join("evil.jsonl"),
            tmp.path().join("evil_materialized_inputs.jsonl"),
        ],
    )
    .await;
    b.wait_testid("status", "Profile ready").await;
    // The deep link opened the rollout; every hostile string is there as text.
    let view = b
        .wait_testid("rollout-view", "onerror=\"window.__pwned=2\"")
        .await;
    assert_contains(&view, "</script><script>window.__pwned=1</script>");
    b.wait_testid("agent-metrics", "<img src=x").await;
    hover_point(&b, 0, 0).await;
    let agents = b
        .eval("return document.querySelector('[data-testid=agent-metrics]').textContent")
        .await;
    assert!(agents.as_str().unwrap().contains(evil));
    b.assert_inert("main img, main script").await;
    server.assert_none_since(loaded_requests, "requests");
    b.close().await;
}

/// "Export report" writes, with the same core renderer, the very file `gymscope report` writes.
#[tokio::test(flavor = "multi_thread")]
async fn exported_report_is_the_clis_report() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/gym-examples/blackjack");
    let (inputs, rollouts) = (
        dir.join("example_rollouts_materialized_inputs.jsonl"),
        dir.join("example_rollouts.jsonl"),
    );
    let tmp = tempfile::tempdir().unwrap();
    let cli_report = tmp.path().join("cli.html");
    // The CLI titles a report by the run's folder; a page sees file names only, so the app
    // offers the file's base name as the title: the same title given to both.
    common::write_report(
        &inputs,
        &rollouts,
        &cli_report,
        &["--date", "2026-11-29", "--title", "example_rollouts"],
    );

    let server = StaticServer::start(&dist());
    let b = Browser::start().await;
    b.client.goto(&server.url()).await.unwrap();
    b.wait_worker_ready().await;
    choose_files(&b, "files", &[inputs.clone(), rollouts.clone()]).await;
    b.wait_testid("status", "Profile ready").await;
    b.set_text("report-date", "2026-11-29").await;
    assert_eq!(
        exported_report(&b).await,
        std::fs::read_to_string(&cli_report).unwrap()
    );

    // With a query applied (text: the page's worker reads the file for it), the export is
    // `gymscope report --query`'s page, opening on the same matches.
    let expr = "reward > 0 and output ~ \"stand\"";
    let flags = [
        "--date",
        "2026-11-29",
        "--title",
        "example_rollouts",
        "--query",
        expr,
    ];
    common::write_report(&inputs, &rollouts, &cli_report, &flags);
    b.eval(&format!(
        "const i = document.querySelector('[data-testid=query-input]'); i.value = {}; \
         i.dispatchEvent(new Event('input')); document.querySelector('[data-testid=query-apply]').click()",
        serde_json::json!(expr)
    ))
    .await;
    b.wait_testid("query-count", "3 of 5 rollouts match").await;
    b.wait_testid("export-query", "3 matching rollouts").await;
    let want = std::fs::read_to_string(&cli_report).unwrap();
    assert!(want.contains("3 of 5 rollouts match"), "the CLI's page");
    assert_eq!(exported_report(&b).await, want);
    b.close().await;
}

/// Clicks "Export report" and reads the file it offers; the one click saved it, with no second
/// click on a link (issue 44, item 8: the browser's download is started by the page).
async fn exported_report(b: &Browser) -> String {
    b.eval(
        "window.__saved = []; if (!window.__savePatched) { window.__savePatched = true; \
         const click = HTMLAnchorElement.prototype.click; \
         HTMLAnchorElement.prototype.click = function () { if (this.download) { window.__saved.push(this.download); return; } return click.call(this); }; }",
    )
    .await;
    click(b, "[data-testid=export-report]").await;
    b.wait_testid("report-download", "example_rollouts_report.html")
        .await;
    assert_eq!(
        b.eval("return window.__saved").await,
        serde_json::json!(["example_rollouts_report.html"]),
        "one press of Export report saves the file"
    );
    b.link_text("report-download").await
}

/// Existing profile files (upstream's own, here) are recognized and shown directly.
#[tokio::test(flavor = "multi_thread")]
async fn existing_profile_files_are_shown_directly() {
    let expected =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/gym-examples/cvdp/expected");
    let profiling = expected.join("example_rollouts_reward_profiling.jsonl");
    let server = StaticServer::start(&dist());
    let b = Browser::start().await;
    b.client.goto(&server.url()).await.unwrap();
    b.wait_worker_ready().await;
    choose_files(
        &b,
        "files",
        &[
            profiling.clone(),
            expected.join("example_rollouts_agent_metrics.json"),
        ],
    )
    .await;
    b.wait_testid("file-roles", "shown directly").await;
    b.wait_testid("status", "Profile ready").await;
    b.wait_testid(
        "summary",
        "Reward profile completion: 5/5 rollout rows (100.00%)",
    )
    .await;
    // Every shown statistic is the file's value.
    let rows: Vec<serde_json::Value> = std::fs::read_to_string(&profiling)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let shown = b
        .eval(
            "return Array.from(document.querySelectorAll('[data-testid=task-row]')).map(tr => [tr.dataset.key,
               Object.fromEntries(Array.from(tr.querySelectorAll('td[data-key]')).map(td => [td.dataset.key, td.dataset.value]))])",
        )
        .await;
    let shown = shown.as_array().unwrap();
    assert_eq!(shown.len(), rows.len());
    for (row, want) in shown.iter().zip(&rows) {
        for (key, cell) in row[1].as_object().unwrap() {
            let cell = cell.as_str().unwrap();
            match want.get(key) {
                Some(v) if key.contains('/') => {
                    let (got, want) = (cell.parse::<f64>().unwrap(), v.as_f64().unwrap());
                    assert!(
                        (got - want).abs() <= 1e-3 * want.abs().max(1.0),
                        "{key}: {got} vs {want}"
                    );
                }
                None if key.contains('/') => assert_eq!(cell, "", "{key}"),
                _ => {}
            }
        }
    }
    assert_eq!(b.count("[data-testid=agent-row]").await, 1);
    // A rollout's numbers are there; its text is not in these files, and the page says so.
    click(&b, "[data-testid=task-row]").await;
    click(&b, "[data-testid=open-rollout]").await;
    b.wait_testid("rollout-view", "reward").await;
    click(&b, "[data-testid=rollout-raw-toggle]").await;
    b.wait_testid("rollout-raw", "not in a profile file").await;
    b.close().await;
}

/// What `gymscope collect` writes (here against the Rust stand-in Gym server) loads in the app.
#[test]
fn collected_files_load_in_the_app() {
    let gym = gym_standin::StandIn::start(&["standin_agent"]);
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("input.jsonl");
    let rows: String = (0..6)
        .map(|i| format!("{{\"responses_create_params\":{{\"input\":[{{\"role\":\"user\",\"content\":\"task {i}\"}}]}},\"fake_behavior\":\"ok\"}}\n"))
        .collect();
    std::fs::write(&input, rows).unwrap();
    let out = dir.path().join("rollouts.jsonl");
    let collected = common::run_gymscope(&collect_args(
        &input,
        &out,
        "standin_agent",
        &format!("127.0.0.1:{}", gym.addr.port()),
        &["--num-repeats", "3", "--no-progress"],
    ));
    assert_success(&collected);
    let materialized = dir.path().join("rollouts_materialized_inputs.jsonl");
    assert!(materialized.exists());

    tokio::runtime::Runtime::new().unwrap().block_on(async {
        let server = StaticServer::start(&dist());
        let b = Browser::start().await;
        b.client.goto(&server.url()).await.unwrap();
        b.wait_worker_ready().await;
        choose_files(&b, "files", &[out.clone(), materialized.clone()]).await;
        b.wait_testid("status", "Profile ready").await;
        b.wait_testid("totals", "6 tasks · 18 of 18 rollouts").await;
        b.wait_testid(
            "summary",
            "Reward profile completion: 18/18 rollout rows (100.00%)",
        )
        .await;
        b.close().await;
    });
}

/// A rollout whose answer is Markdown with everything that could fetch or run something: the
/// page renders the Markdown, shows raw HTML and images as text, links only http(s) with
/// `rel="noopener noreferrer"`, indents JSON arguments with real newlines, and fetches nothing.
#[tokio::test(flavor = "multi_thread")]
async fn markdown_renders_safely_and_arguments_read_as_code() {
    let tmp = tempfile::tempdir().unwrap();
    let answer = "# Result\n\nSee **this** and [docs](https://example.com/docs) or [x](javascript:window.__pwned=1).\n\n![chart](https://example.com/chart.png)\n\n<img src=https://example.com/p.png onerror=window.__pwned=2>\n\n<iframe src=https://example.com></iframe>";
    let inputs = json!({"responses_create_params": {"input": [{"role": "user", "content": "go"}]}, "_ng_task_index": 0, "_ng_rollout_index": 0});
    let rollout = json!({
        "response": {"output": [
            {"type": "function_call", "name": "python", "arguments": "{\"code\": \"def f():\\n    return 1\\n\"}", "call_id": "c1"},
            {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": ""}]},
            {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": answer}]}
        ]},
        "reward": 1.0, "_ng_task_index": 0, "_ng_rollout_index": 0
    });
    std::fs::write(
        tmp.path().join("md_materialized_inputs.jsonl"),
        format!("{inputs}\n"),
    )
    .unwrap();
    std::fs::write(tmp.path().join("md.jsonl"), format!("{rollout}\n")).unwrap();
    let (server, b) = start_app("#profile&task=0&rollout=0").await;
    let loaded = server.served();
    choose_files(
        &b,
        "files",
        &[
            tmp.path().join("md.jsonl"),
            tmp.path().join("md_materialized_inputs.jsonl"),
        ],
    )
    .await;
    b.wait_testid("rollout-view", "Result").await;
    let view = "[data-testid=rollout-view]";
    let q = |css: &str| format!("return document.querySelectorAll('{view} {css}').length");
    assert_eq!(b.eval(&q(".md h1")).await, json!(1), "Markdown heading");
    assert_eq!(b.eval(&q(".md strong")).await, json!(1));
    for tag in ["img", "iframe", "script"] {
        assert_eq!(
            b.eval(&q(tag)).await,
            json!(0),
            "no {tag} in the rollout view"
        );
    }
    let links = b.eval(&format!("return Array.from(document.querySelectorAll('{view} .md a')).map(a => [a.getAttribute('href'), a.rel])")).await;
    assert_eq!(
        links,
        json!([["https://example.com/docs", "noopener noreferrer"]])
    );
    let text = b
        .wait_text(view, "[image: chart] (https://example.com/chart.png)")
        .await;
    assert_contains(
        &text,
        "<img src=https://example.com/p.png onerror=window.__pwned=2>",
    );
    assert_contains(&text, "<iframe src=https://example.com></iframe>");
    // The empty message is left out; the arguments read as code.
    let kinds = b.eval(&format!("return Array.from(document.querySelectorAll('{view} [data-testid=rollout-item]')).map(i => i.dataset.kind)")).await;
    assert_eq!(kinds, json!(["function_call", "message"]));
    let code = b
        .eval(&format!(
            "return document.querySelector('{view} pre.code').textContent"
        ))
        .await;
    // A multi-line string argument reads as the code it is, under its name (no JSON escapes).
    assert_eq!(code, json!("def f():\n    return 1\n"));
    let arg = b
        .eval(&format!(
            "return document.querySelector('{view} .arg').textContent"
        ))
        .await;
    assert_eq!(arg, json!("code"));
    // "As written" shows the text as it is in the row.
    b.click_testid("rollout-as-written").await;
    b.wait_text(view, "# Result").await;
    b.assert_no_script_ran().await;
    server.assert_none_since(loaded, "no request after load");
    b.close().await;
}
