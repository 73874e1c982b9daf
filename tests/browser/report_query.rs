//! The report's filter box speaks the query language (docs/report.md "Filtering"): its parser,
//! run in headless Chromium, accepts and refuses exactly what the core's does, with the same
//! column and message; what it answers from the report's columns equals `gymscope query` on the
//! run's files; what only the files can answer is named, not guessed; and a report made with
//! `--query` opens filtered to the matches the CLI found, its hostile text inert.

use crate::common;
use common::browser::Browser;
use gymscope::query::Query;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::time::Duration;

fn url(path: &Path) -> String {
    format!("file://{}", path.display())
}

async fn open(b: &Browser, path: &Path) {
    b.client.goto(&url(path)).await.unwrap();
    for _ in 0..400 {
        if !b
            .eval("return document.documentElement.getAttribute('data-ready')")
            .await
            .is_null()
        {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("the report's script never became ready");
}

async fn set_filter(b: &Browser, text: &str) {
    b.eval(&format!(
        "const f = document.getElementById('task-filter'); f.value = {}; f.dispatchEvent(new Event('input'));",
        json!(text)
    ))
    .await;
    tokio::time::sleep(Duration::from_millis(400)).await; // the filter waits 120 ms for typing
}

/// `(tasks shown, rollouts matching)` from the page's count, and its error line.
async fn shown(b: &Browser) -> (usize, Option<usize>, String) {
    let v = b
        .eval("return [document.getElementById('task-count').textContent, document.getElementById('task-filter-error').textContent]")
        .await;
    let count = v[0].as_str().unwrap();
    let tasks = count.split(' ').next().unwrap().parse().unwrap();
    let rollouts = count
        .split(" · ")
        .nth(1)
        .map(|r| r.split(' ').next().unwrap().parse().unwrap());
    (tasks, rollouts, v[1].as_str().unwrap().to_string())
}

/// `gymscope query --format json` on the run: (distinct tasks, rollouts) matched.
fn cli_answer(inputs: &Path, rollouts: &Path, expr: &str) -> (usize, usize) {
    let mut args = common::query_args(inputs, rollouts, expr);
    args.extend(["--format", "json"]);
    let out = common::run_gymscope(&args);
    assert!(
        out.status.success(),
        "{expr}: {}",
        common::output_text(&out)
    );
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let keys = doc["keys"].as_array().unwrap();
    let mut tasks: Vec<i64> = keys.iter().map(|k| k[0].as_i64().unwrap()).collect();
    tasks.sort_unstable();
    tasks.dedup();
    (tasks.len(), keys.len())
}

fn report(dir: &Path, inputs: &Path, rollouts: &Path, query: Option<&str>) -> PathBuf {
    let path = dir.join(format!("report{}.html", u8::from(query.is_some())));
    let flags: Vec<&str> = query.map(|q| vec!["--query", q]).unwrap_or_default();
    common::write_report(inputs, rollouts, &path, &flags);
    path
}

/// Expressions the two parsers must agree on, accepted or refused (column and message).
const PARSED: &[&str] = &[
    "reward == 0",
    "reward >= 0.5 and agent == \"math_with_judge\"",
    "not reward > 0 and task.group == \"mixed\"",
    "(reward == 1 or reward == 0) and not task.pass_rate < 0.5",
    "`mean/reward` < 0.5",
    "usage.output_tokens_details.reasoning_tokens > 100",
    "output ~ \"x\" or reasoning ~ /give\\/up/i",
    "health.loop and agent == 'a'",
    "reward != null and x == -1.5e3 and y == .5 and z == -.5 and w == 5.",
    "agent == \"日本\" x",
    "",
    "   ",
    "reward >> 1",
    "reward = 1",
    "reward ! 1",
    "a & b",
    "a | b",
    "\"abc",
    "x == \"a\\qb\"",
    "x == \"ab\\",
    "x ~ /abc",
    "x ~ /abc/g",
    "`abc",
    "`` == 1",
    "1.2.3 > x",
    "x > 1e999",
    "x == 1e5e5",
    "a..b == 1",
    "a. == 1",
    "#",
    "(reward > 1",
    "reward > 1)",
    "reward > 1 reward",
    "and",
    "reward >",
    "reward > 1 and",
    "not",
    "(",
    ")",
    "output == 1",
    "output",
    "output ~ 1",
    "health.nope",
    "task.nope == 1",
    "'single' == agent",
    "x == 0x10",
    "x == 1_000",
    "reward > 1 1e21",
    "reward > 1 0.0000001",
    "reward > 1 \"a\\\"b\\n\"",
    "reward > 1 /x\\/y/",
    "x ~ \"a\" ~ \"b\"",
    "x == -",
    "x ==\t\u{85}1",
    "é_2.b3 == true or reward < false",
];

#[tokio::test(flavor = "multi_thread")]
async fn the_filter_box_parses_as_the_core_and_answers_as_gymscope_query() {
    let tmp = tempfile::tempdir().unwrap();
    let (inputs, rollouts) = common::gen_run::generate_agentic(tmp.path(), "run", 48, 4, 3_000);
    let page = report(tmp.path(), &inputs, &rollouts, None);
    let b = Browser::start().await;
    open(&b, &page).await;

    // The parsers: the same verdict, column and message on every expression.
    let flags = b
        .eval("return JSON.parse(document.getElementById('report-data').textContent).health_flags")
        .await;
    for text in PARSED {
        let page_says = b
            .eval(&format!(
                "try {{ GymQuery.parse({}, {flags}); return 'ok'; }} catch (e) {{ return e.message; }}",
                json!(text)
            ))
            .await;
        let core_says = match Query::parse(text) {
            Ok(_) => "ok".to_string(),
            Err(e) => e.to_string(),
        };
        assert_eq!(page_says, json!(core_says), "{text:?}");
    }
    // A regex the engine refuses is refused at its column (the two engines word it apart).
    let page_says = b
        .eval("try { GymQuery.parse('output ~ /(/', []); return 'ok'; } catch (e) { return e.message; }")
        .await;
    assert!(
        page_says
            .as_str()
            .unwrap()
            .starts_with("column 10: the regex does not compile"),
        "{page_says}"
    );

    // What the report's columns answer, as `gymscope query` answers it from the files.
    for expr in [
        "reward == 0",
        "reward > 0.5",
        "reward >= 1 and agent == \"cvdp_code_agent\"",
        "agent != \"math_with_judge\"",
        "task.group == \"mixed\"",
        "task.pass_rate >= 0.25 and task.pass_rate <= 0.75",
        "task.mean_reward < 0.5",
        "not task.group == \"all_success\" and reward == 0",
        "usage.output_tokens > 300",
        "output_tokens <= 300 or rollout == 3",
        "task < 10 or rollout == 3",
        "agent ~ \"code\"",
        "agent ~ /^MATH/i",
        "task.group ~ \"all\"",
        "agent == null",
        "task.mean_reward != null and task.pass_rate == 0",
        "task == \"3\"",
        "agent != 3",
    ] {
        set_filter(&b, expr).await;
        let (tasks, rollouts_matched, error) = shown(&b).await;
        assert_eq!(error, "", "{expr}");
        let (want_tasks, want_rollouts) = cli_answer(&inputs, &rollouts, expr);
        assert_eq!(
            (tasks, rollouts_matched),
            (want_tasks, Some(want_rollouts)),
            "{expr}"
        );
    }
    // A profile column in backticks filters by the task table's value.
    set_filter(&b, "`mean/reward` >= 0.5").await;
    let (tasks, _, error) = shown(&b).await;
    assert_eq!(error, "");
    let (want, _) = cli_answer(&inputs, &rollouts, "task.mean_reward >= 0.5");
    assert_eq!(tasks, want);

    // What only the rollouts file can answer is named, and the table stays whole.
    for (expr, names) in [
        ("output ~ \"the\"", "reads the rollouts’ text"),
        ("tool_calls > 2", "`tool_calls` is read from the rollouts"),
        ("health.loop", "`health.loop` is read from the rollouts"),
        ("reward == null", "`reward` is held here as numbers only"),
        ("nonsense < 1", "`nonsense` is not a column of this report"),
    ] {
        set_filter(&b, expr).await;
        let (tasks, rollouts_matched, error) = shown(&b).await;
        assert!(error.contains(names), "{expr}: {error}");
        assert!(error.contains("gymscope query"), "{expr}: {error}");
        assert_eq!((tasks, rollouts_matched), (48, None), "{expr}");
    }
    set_filter(&b, "reward >> 1").await;
    let (_, _, error) = shown(&b).await;
    assert_eq!(error, "column 9: expected a value after `>`");
    b.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_report_made_with_a_query_opens_on_its_matches() {
    let tmp = tempfile::tempdir().unwrap();
    let (inputs, rollouts) = common::gen_run::generate_agentic(tmp.path(), "run", 30, 4, 3_000);
    // Text the report itself does not hold: answered by the CLI's read, stored in the page.
    let expr = "reward == 0 and text ~ /the/i";
    let page = report(tmp.path(), &inputs, &rollouts, Some(expr));
    let (want_tasks, want_rollouts) = cli_answer(&inputs, &rollouts, expr);
    assert!(want_rollouts > 0 && want_rollouts < 120, "{want_rollouts}");
    let b = Browser::start().await;
    open(&b, &page).await;
    assert_eq!(
        b.eval("return document.getElementById('task-filter').value")
            .await,
        json!(expr)
    );
    assert_eq!(
        shown(&b).await,
        (want_tasks, Some(want_rollouts), String::new())
    );
    let note = b
        .eval("return document.getElementById('report-query').textContent")
        .await;
    assert!(
        note.as_str()
            .unwrap()
            .contains(&format!("{want_rollouts} of 120 rollouts match")),
        "{note}"
    );
    // The key figures are the query's (issue 44: every section follows the query).
    let figures = || async {
        b.eval(
            "const q = document.getElementById('figures-query'), r = document.getElementById('figures');
             const v = (s, k) => s.querySelector('[data-key=' + k + '] .figure-value').textContent;
             return [q.hidden, r.hidden, v(q, 'rollouts'), v(r, 'rollouts')]",
        )
        .await
    };
    assert_eq!(
        figures().await,
        json!([false, true, want_rollouts.to_string(), "120"])
    );
    // So are the histogram, the agent and repeat tables and the Health section: the matches'
    // versions are the ones on screen, the run's laid out nowhere.
    let visible_parts = || async {
        b.eval(
            "return [...document.querySelectorAll('[data-of]')]
               .filter(e => e.getClientRects().length > 0).map(e => e.id).sort()",
        )
        .await
    };
    let of_query = json!([
        "agents-query",
        "figures-query",
        "health-query",
        "histogram-query",
        "repeats-query"
    ]);
    assert_eq!(visible_parts().await, of_query);
    // The binned means drawn are the matches' own (the app's item 1, in the report).
    let label = || async {
        b.eval("return document.getElementById('scatter-overlay-label').textContent")
            .await
    };
    assert!(
        label().await.as_str().unwrap().contains("of the matches"),
        "{}",
        label().await
    );
    // Another query is answered from the columns; the stored one comes back by its text.
    set_filter(&b, "reward == 0").await;
    let (t, r) = cli_answer(&inputs, &rollouts, "reward == 0");
    assert_eq!(shown(&b).await, (t, Some(r), String::new()));
    assert_eq!(
        figures().await,
        json!([true, false, want_rollouts.to_string(), "120"]),
        "the run's figures for a query the page was not made with"
    );
    assert_eq!(
        visible_parts().await,
        json!(["agents", "figures", "health", "histogram", "repeats"])
    );
    assert!(
        label()
            .await
            .as_str()
            .unwrap()
            .contains("not drawn for this filter"),
        "{}",
        label().await
    );
    set_filter(&b, expr).await;
    assert_eq!(
        shown(&b).await,
        (want_tasks, Some(want_rollouts), String::new())
    );
    assert_eq!(figures().await[0], json!(false));
    assert_eq!(visible_parts().await, of_query);
    b.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_hostile_query_is_text_in_the_page() {
    let tmp = tempfile::tempdir().unwrap();
    let (inputs, rollouts) = common::gen_run::generate_agentic(tmp.path(), "run", 6, 2, 2_000);
    let expr = "output ~ \"</script><img src=x onerror=window.pwned=1>\" or agent == '<b>&amp;'";
    let page = report(tmp.path(), &inputs, &rollouts, Some(expr));
    let b = Browser::start().await;
    open(&b, &page).await;
    assert_eq!(
        b.eval("return [document.getElementById('report-query-source').textContent, document.querySelectorAll('#report-query img, #report-query b').length, window.pwned === undefined]")
            .await,
        json!([expr, 0, true])
    );
    assert_eq!(
        b.eval("return document.getElementById('task-filter').value")
            .await,
        json!(expr)
    );
    b.close().await;
}
