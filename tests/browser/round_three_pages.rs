//! Issue 60's two rules, on every page (docs/app.md, "Two rules"), and its items on the pivot
//! pages and the pass-rate band. Needs `dist/` and chromium: scripts/test.sh.

use crate::common;
use crate::common::run_on;
use crate::round_three::{apply_query, json, open, soft_wait, Checks};
use common::browser::Browser;
use serde_json::Value;

/// The page's text as shown.
async fn main_text(b: &Browser) -> String {
    json(b, "return document.querySelector('main').innerText").await
}

/// Items 2 and 9 as rules, on every page: with a query applied on the Reward profile page,
/// every table and figure there counts the query's rollouts or says it shows the whole run, as
/// the Health page does; and no page, nor the exported report or the CLI's text, names a rate by
/// another name than its one (`tool errors`, not `tool_error_calls`, "of 3 tool calls").
#[tokio::test(flavor = "multi_thread")]
async fn every_page_follows_the_query_and_names_each_rate_once() {
    let (_server, b) = open(None, 1440, 900).await;
    let mut checks = Checks::default();
    let (matched, tasks) = apply_query(&b, "reward == 0").await;
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    // Every table and figure is in a scope: the query's, the whole run's (said in words), or
    // one rollout's.
    let unscoped: Vec<String> = json(
        &b,
        "return Array.from(document.querySelectorAll('main table, main canvas, main [data-testid=key-figures], main .histogram')).filter(e => e.offsetParent !== null && !e.closest('[data-scope]')).map(e => e.outerHTML.slice(0, 60))",
    )
    .await;
    checks.check(unscoped.is_empty(), format!("in no scope: {unscoped:?}"));
    let unsaid: Vec<String> = json(
        &b,
        "return Array.from(document.querySelectorAll('[data-scope=run]')).filter(e => e.offsetParent !== null && e.querySelector('table, canvas, .histogram') && !e.textContent.includes('whole run')).map(e => e.textContent.slice(0, 60))",
    )
    .await;
    checks.check(
        unsaid.is_empty(),
        format!("the whole run's, unsaid: {unsaid:?}"),
    );
    // The query's: each counts its matches.
    let numbers: Vec<Value> = json(
        &b,
        "const sum = sel => Array.from(document.querySelectorAll(sel)).reduce((s, e) => s + Number((e.dataset.count || e.textContent).replace(/,/g, '')), 0);
         return [
           document.querySelector('[data-testid=figure][data-key=rollouts] .figure-value').textContent.replace(/,/g, ''),
           sum('[data-testid=agent-line] td:nth-of-type(1)'),
           sum('[data-testid=histogram-bar]'),
           document.querySelector('[data-testid=scatter]').dataset.points,
           document.querySelector('[data-testid=task-scatter]').dataset.points,
           document.querySelector('[data-testid=task-count]').textContent.split(' ')[0],
         ]",
    )
    .await;
    let n = |v: &Value| {
        v.as_u64()
            .or_else(|| v.as_str().and_then(|s| s.parse().ok()))
            .unwrap() as usize
    };
    let got: Vec<usize> = numbers.iter().map(n).collect();
    checks.check(
        got == [matched, matched, matched, matched, tasks, tasks],
        format!("cards, agent table, histogram, scatter, task scatter, task table: {got:?}, the query {matched} rollouts of {tasks} tasks"),
    );

    // Rule 9: no rate by its id, on any page (`tool_calls` alone is the query language's
    // field, named so on purpose: the hint under the query bar shows it).
    let ids = [
        "tool_error_calls",
        "empty_answer",
        "ended_on_tool",
        "malformed_arguments",
        "usage_missing",
        "tool_calls)",
    ];
    let mut seen = vec![("profile", main_text(&b).await)];
    b.eval("window.scrollTo(0, 0)").await;
    b.click_testid("tab-health").await;
    b.wait_testid("health-headline", "rollouts").await;
    let note = soft_wait(&b, "[data-testid=scope-whole-run]", "whole run", 3).await;
    checks.check(note.is_some(), "Health does not say it shows the whole run");
    let health_unscoped: usize = json(
        &b,
        "return Array.from(document.querySelectorAll('main table')).filter(e => e.offsetParent !== null && !e.closest('[data-scope]')).length",
    )
    .await;
    checks.check(health_unscoped == 0, "Health's tables in no scope");
    seen.push(("health", main_text(&b).await));
    b.click_testid("tab-compare").await;
    b.click_testid("compare-example").await;
    b.wait_testid("compare-status", "Compared").await;
    seen.push(("compare", main_text(&b).await));
    b.click_testid("tab-pivot-build").await;
    b.click_testid("pb-build").await;
    b.wait_testid("pb-headline", "pivots: ").await;
    seen.push(("pivot-build", main_text(&b).await));
    b.click_testid("tab-pivot").await;
    seen.push(("pivot", main_text(&b).await));
    // Pages reading files of their own: none claims the query.
    let claims: usize = json(
        &b,
        "return Array.from(document.querySelectorAll('main [data-scope=query]')).filter(e => e.offsetParent !== null).length",
    )
    .await;
    checks.check(claims == 0, "a page of its own files claims the query");
    for (page, text) in &seen {
        for id in ids {
            checks.check(!text.contains(id), format!("{page} names a rate {id}"));
        }
    }
    for name in [
        "truncated",
        "no final answer",
        "tool errors",
        "usage missing",
    ] {
        checks.check(
            seen[1].1.contains(name),
            format!("the Health page lacks {name}"),
        );
    }
    // The report and the CLI's text say the same names.
    let example = common::repo_root().join("assets/example-run");
    let (inputs, rollouts) = (
        example.join("example_rollouts_materialized_inputs.jsonl"),
        example.join("example_rollouts.jsonl"),
    );
    let cli = run_on("health", &inputs, &rollouts, &[]);
    let text =
        String::from_utf8_lossy(&cli.stdout).to_string() + &String::from_utf8_lossy(&cli.stderr);
    for name in ["no final answer", "tool errors", "usage missing"] {
        checks.check(text.contains(name), format!("the CLI's text lacks {name}"));
    }
    for id in ["empty_answer ", "tool_error_calls ", "tool_calls)"] {
        checks.check(!text.contains(id), format!("the CLI's text says {id}"));
    }
    let tmp = tempfile::tempdir().unwrap();
    let page = tmp.path().join("r.html");
    common::write_report(&inputs, &rollouts, &page, &[]);
    let html = std::fs::read_to_string(&page).unwrap();
    checks.check(
        html.contains(">tool errors <small>") && !html.contains(">tool_error_calls <small>"),
        "the report's rate headers",
    );
    checks.done(b).await;
}

/// Items 10 and 12 on the pass-rate band and the pivot pages: the band's marker label never
/// sits on a bar count and the command's unused options' zeros are left out; the builder
/// accounts for every source row once; the validator's check badge says it is a check.
#[tokio::test(flavor = "multi_thread")]
async fn the_band_and_the_pivot_pages_account_for_everything() {
    let (_server, b) = open(None, 1440, 900).await;
    let mut checks = Checks::default();
    crate::open_pass_band(&b).await;
    for at in ["0.25", "0.5", "0.75"] {
        b.eval(&format!(
            "const s = document.querySelector('[data-testid=band-min]'); s.value = '{at}';
             s.dispatchEvent(new Event('input', {{bubbles: true}})); s.dispatchEvent(new Event('change', {{bubbles: true}}));"
        ))
        .await;
        tokio::time::sleep(std::time::Duration::from_millis(600)).await;
        let overlaps: Vec<String> = json(
            &b,
            "const boxes = sel => Array.from(document.querySelectorAll(sel)).map(e => [e.textContent, e.getBoundingClientRect()]);
             const out = [];
             for (const [m, a] of boxes('[data-testid=band-histogram] [data-testid=histogram-mark] span'))
               for (const [c, b] of boxes('[data-testid=band-histogram] .bar-count'))
                 if (a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom) out.push(m + ' on ' + c);
             return out;",
        )
        .await;
        checks.check(
            overlaps.is_empty(),
            format!("item 10, band from {at}: {overlaps:?}"),
        );
    }
    let zeros: Vec<String> = json(
        &b,
        "return Array.from(document.querySelectorAll('[data-testid=band-dropped]')).filter(l => l.dataset.count === '0' && ['where', 'over_max_tasks'].includes(l.dataset.reason)).map(l => l.textContent)",
    )
    .await;
    checks.check(
        zeros.is_empty(),
        format!("item 10: options the page does not offer: {zeros:?}"),
    );

    // The builder: skipped whole + read without a pivot + giving pivots = every source row.
    b.eval("window.scrollTo(0, 0)").await;
    b.click_testid("tab-pivot-build").await;
    b.click_testid("pb-build").await;
    b.wait_testid("pb-headline", "pivots: ").await;
    let funnel = soft_wait(&b, "[data-testid=pb-funnel]", "source rows", 2).await;
    let numbers: Vec<usize> = funnel
        .as_deref()
        .unwrap_or_default()
        .split(|c: char| !(c.is_ascii_digit() || c == ','))
        .filter(|t| t.chars().any(|c| c.is_ascii_digit()))
        .map(|t| t.replace(',', "").parse().unwrap())
        .collect();
    checks.check(
        numbers.len() == 5 && numbers[1] + numbers[2] + numbers[3] == numbers[0],
        format!("item 12: the builder's rows, unaccounted: {funnel:?}"),
    );

    // The validator: a check's badge says what it is.
    b.click_testid("tab-pivot").await;
    b.choose_file(
        "pivot-file",
        &common::repo_root().join("tests/fixtures/pivot/upstream/example.jsonl"),
    )
    .await;
    b.wait_testid("pivot-verdict", "Invalid").await;
    let badge: String = json(
        &b,
        "return document.querySelector('[data-testid=pivot-group] .check-id').textContent",
    )
    .await;
    checks.check(badge == "check R2", format!("item 12: the badge {badge:?}"));
    checks.done(b).await;
}
