//! What a researcher sees first (issue 44): right after a three-agent, four-repeat run loads at
//! 1440×900, the key figures, the reward × tokens plot and the per-agent lines are on the first
//! screen, nothing is reserved for a rollout until one is opened, and the page never scrolls
//! sideways (at 390×844 either). Needs `dist/` and chromium: scripts/test.sh.

use crate::common;
use crate::common::browser::start_app_sized;

use common::browser::Browser;
use common::gen_run;
use common::static_server::StaticServer;
use serde_json::Value;

/// `[top, bottom, left, right, width]` of the first element matching `css`, in the viewport.
async fn rect(b: &Browser, css: &str) -> Vec<f64> {
    let r = b
        .eval(&format!(
            "const e = document.querySelector({}); if (!e) return null; const r = e.getBoundingClientRect(); return [r.top, r.bottom, r.left, r.right, r.width]",
            serde_json::json!(css)
        ))
        .await;
    serde_json::from_value(r).unwrap_or_else(|_| panic!("{css} is not on the page"))
}

async fn viewport(b: &Browser) -> (f64, f64) {
    let v: Vec<f64> = serde_json::from_value(
        b.eval("return [window.innerWidth, window.innerHeight]")
            .await,
    )
    .unwrap();
    (v[0], v[1])
}

/// The rollouts the reward histogram counts.
async fn histogram_total(b: &Browser) -> u64 {
    b.eval("return Array.from(document.querySelectorAll('[data-testid=histogram-bar]')).reduce((s, e) => s + Number(e.dataset.count), 0)")
        .await
        .as_u64()
        .unwrap()
}

/// The screen as it is, into `$GYMSCOPE_FIRST_SCREEN/NAME.png` when that is set (to look at).
async fn keep_screenshot(b: &Browser, name: &str) {
    if let Ok(dir) = std::env::var("GYMSCOPE_FIRST_SCREEN") {
        let png = b.client.screenshot().await.unwrap();
        std::fs::write(format!("{dir}/{name}.png"), png).unwrap();
    }
}

/// The page's width past the viewport (0: no sideways scrolling).
async fn overflow(b: &Browser) -> f64 {
    b.eval("return document.documentElement.scrollWidth - document.documentElement.clientWidth")
        .await
        .as_f64()
        .unwrap()
}

/// The app at 1440×900 with a generated three-agent run of `tasks` × 4 rollouts profiled (the
/// server and the folder kept while the page uses them).
async fn open_generated_run(tasks: usize) -> (tempfile::TempDir, StaticServer, Browser) {
    let tmp = tempfile::tempdir().unwrap();
    let (inputs, rollouts) = gen_run::generate_agentic(tmp.path(), "rollouts", tasks, 4, 1500);
    let (server, b) = start_app_sized("", 1440, 900).await;
    b.choose_files("files", &[inputs, rollouts]).await;
    b.wait_testid("status", "Profile ready").await;
    (tmp, server, b)
}

#[tokio::test(flavor = "multi_thread")]
async fn the_first_screen_shows_the_figures_the_plot_and_the_agents() {
    let (_tmp, _server, b) = open_generated_run(120).await;
    let (width, height) = viewport(&b).await;
    keep_screenshot(&b, "first-screen-1440").await;

    // The cards: tasks, rollouts, agents, mean reward with its interval, pass@1, pass@k, tokens.
    let cards: Vec<(String, String, String)> = serde_json::from_value(
        b.eval("return Array.from(document.querySelectorAll('[data-testid=figure]')).map(f => [f.dataset.key, f.querySelector('.figure-value').textContent, f.querySelector('.figure-detail').textContent])")
            .await,
    )
    .unwrap();
    let card = |k: &str| {
        cards
            .iter()
            .find(|c| c.0 == k)
            .unwrap_or_else(|| panic!("no {k} card in {cards:?}"))
            .clone()
    };
    assert_eq!(card("tasks").1, "120");
    assert_eq!(card("rollouts").1, "480");
    assert_eq!(card("agents").1, "3");
    assert!(
        card("mean-reward").2.starts_with("agents from"),
        "{cards:?}"
    );
    assert!(card("pass-at-1").1.ends_with('%'), "{cards:?}");
    assert!(card("output-tokens")
        .1
        .chars()
        .all(|c| c.is_ascii_digit() || c == ','));
    let figures = rect(&b, "[data-testid=key-figures]").await;
    assert!(
        figures[1] <= height,
        "the cards end at {} of {height}",
        figures[1]
    );

    // The plot, whole, and the agents' lines beside it, on the first screen.
    let plot = rect(&b, "[data-testid=scatter]").await;
    assert!(
        plot[1] <= height,
        "the plot ends at {} of {height}",
        plot[1]
    );
    let lines = rect(&b, "[data-testid=agent-lines]").await;
    assert!(
        lines[0] < height && lines[2] >= plot[3],
        "beside the plot: {lines:?} {plot:?}"
    );
    let rows = b
        .eval("return document.querySelectorAll('[data-testid=agent-line]').length")
        .await;
    assert_eq!(rows, Value::from(3));

    // Item 3: groups in words against the pass threshold, which the filter names (a task of
    // fractional rewards "never passes"; it was "all-0 (every rollout failed)"). Issue 60,
    // item 6: the rule is said where the label is ("never ≥ 1 (best 0.75)").
    let groups: Vec<String> = serde_json::from_value(
        b.eval("return Array.from(document.querySelectorAll('[data-testid=task-row] td.group')).map(c => c.textContent)")
            .await,
    )
    .unwrap();
    assert!(!groups.is_empty());
    for g in &groups {
        assert!(
            ["never ≥ 1", "sometimes ≥ 1", "always ≥ 1", "no reward"]
                .iter()
                .any(|w| g.starts_with(w)),
            "{g}"
        );
    }
    let options = b
        .eval("return Array.from(document.querySelectorAll('[data-testid=filter-group] option')).map(o => o.textContent).join(' | ')")
        .await;
    assert!(
        options
            .as_str()
            .unwrap()
            .contains("no rollout has reward ≥ 1"),
        "{options}"
    );

    // Numbers for people: token means as whole numbers with separators, rewards at 4
    // significant digits; the exact value in the tooltip.
    let cells: Vec<(String, String)> = serde_json::from_value(
        b.eval("return Array.from(document.querySelectorAll('[data-testid=task-row] td[data-key=\"mean/output_tokens\"], [data-testid=task-row] td[data-key=\"mean/reward\"]')).map(c => [c.textContent, c.title])")
            .await,
    )
    .unwrap();
    assert!(cells.len() > 10, "{cells:?}");
    for (text, exact) in &cells {
        let digits = text.chars().filter(char::is_ascii_digit).count();
        assert!(
            text.chars()
                .all(|c| c.is_ascii_digit() || c == ',' || c == '.')
                && !text.contains('.')
                || digits <= 5,
            "{text} (exact {exact})"
        );
        assert!(!exact.is_empty());
    }

    // The query bar's buttons on one line (item 13: "Clear" wrapped under "Apply").
    let (apply, clear) = (
        rect(&b, "[data-testid=query-apply]").await,
        rect(&b, "[data-testid=query-clear]").await,
    );
    assert_eq!(apply[0], clear[0], "Apply {apply:?}, Clear {clear:?}");

    // Item 1: with a query applied, the heading, the histogram and the binned-mean curves
    // count its rollouts only.
    assert_eq!(histogram_total(&b).await, 480);
    let binned = || async {
        b.eval("return Number(document.querySelector('[data-testid=scatter]').dataset.binned)")
            .await
            .as_u64()
            .unwrap()
    };
    let binned_all = binned().await;
    assert!(
        binned_all > 400,
        "the curves hold {binned_all} of 480 points"
    );
    b.eval("const i = document.querySelector('[data-testid=query-input]'); i.value = 'reward == 0'; i.dispatchEvent(new Event('input')); document.querySelector('[data-testid=query-apply]').click(); return 0")
        .await;
    let count = b.wait_testid("query-count", "rollouts match").await;
    let matched: u64 = count.split(' ').next().unwrap().parse().unwrap();
    assert!(matched > 0 && matched < 480, "{count}");
    b.wait_testid(
        "plot-count",
        &format!("{matched} of 480 rollouts (the query's)"),
    )
    .await;
    assert_eq!(histogram_total(&b).await, matched);
    let binned_query = binned().await;
    assert!(
        binned_query <= matched && binned_query < binned_all,
        "the curves hold {binned_query} points; the query matched {matched}"
    );
    b.click("[data-testid=query-clear]").await;
    b.wait_testid("plot-count", "480 rollouts").await;
    assert_eq!(
        binned().await,
        binned_all,
        "cleared: the whole run's curves"
    );

    // No pane waits for a rollout; one opens beside the run when chosen, and closes.
    let pane = rect(&b, "[data-testid=pane-rollout]").await;
    assert_eq!(
        pane[4], 0.0,
        "an empty rollout pane takes no room: {pane:?}"
    );
    assert_eq!(
        overflow(&b).await,
        0.0,
        "the page scrolls sideways at {width}"
    );
    // Item 2: a task row opens its first rollout in the panel, no second click.
    b.click("[data-testid=task-row]").await;
    let title = b.wait_testid("rollout-title", "rollout").await;
    let first = b
        .eval("return document.querySelector('[data-testid=task-row]').dataset.key")
        .await;
    assert!(
        title.starts_with(&format!("task {} ", first.as_str().unwrap())),
        "{title}"
    );
    let pane = rect(&b, "[data-testid=pane-rollout]").await;
    assert!(
        pane[4] > 400.0 && pane[2] > width / 3.0,
        "beside the run: {pane:?}"
    );
    // Item 13: long tool output wraps inside the pane; nothing in it scrolls sideways.
    let wide = b
        .eval("const p = document.querySelector('[data-testid=pane-rollout]'); return Array.from(p.querySelectorAll('*')).filter(e => e.getBoundingClientRect().right > p.getBoundingClientRect().right + 1).map(e => e.tagName + '.' + e.className).slice(0, 5)")
        .await;
    assert_eq!(wide, serde_json::json!([]), "wider than the pane");
    assert_eq!(overflow(&b).await, 0.0);
    keep_screenshot(&b, "rollout-open-1440").await;
    b.click("[data-testid=rollout-close]").await;
    let pane = rect(&b, "[data-testid=pane-rollout]").await;
    assert_eq!(pane[4], 0.0, "closed: {pane:?}");

    // Item 9: "Change files" does not keep listing the shown run's files as the next ones.
    let listed = b
        .eval("return document.querySelectorAll('[data-testid=file-roles] li').length")
        .await;
    assert_eq!(listed, Value::from(2));
    b.click("[data-testid=change-files]").await;
    let listed = b
        .eval("return document.querySelectorAll('[data-testid=file-roles] li').length")
        .await;
    assert_eq!(listed, Value::from(0));

    // At phone width: no sideways scrolling either.
    b.client.set_window_size(390, 844).await.unwrap();
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    let (narrow, _) = viewport(&b).await;
    assert_eq!(
        overflow(&b).await,
        0.0,
        "the page scrolls sideways at {narrow}"
    );
    keep_screenshot(&b, "first-screen-390").await;
    b.close().await;
}

/// At phone width (issue 44, item 12): every tab is on screen, a tap on a task row shows its
/// rollout (brought into view below the run), and the Health page's tables stay within the
/// screen (they scroll inside their box). No page scrolls sideways: Profile, Health, Compare,
/// the pivot builder with a pivot open, the pivot validator with its findings.
#[tokio::test(flavor = "multi_thread")]
async fn at_phone_width_the_tabs_a_rollout_and_health_fit_the_screen() {
    let (_server, b) = start_app_sized("", 390, 844).await;
    b.load_example().await;
    let (width, height) = viewport(&b).await;
    let tabs: Vec<Vec<f64>> = serde_json::from_value(
        b.eval("return Array.from(document.querySelectorAll('header nav .tab')).map(t => { const r = t.getBoundingClientRect(); return [r.left, r.right, r.width]; })")
            .await,
    )
    .unwrap();
    assert_eq!(tabs.len(), 5, "{tabs:?}");
    for t in &tabs {
        assert!(
            t[0] >= 0.0 && t[1] <= width && t[2] > 30.0,
            "a tab off the screen: {t:?} of {width}"
        );
    }
    assert_eq!(overflow(&b).await, 0.0);
    b.click("[data-testid=task-row]").await;
    b.wait_testid("rollout-title", "rollout").await;
    tokio::time::sleep(std::time::Duration::from_millis(800)).await;
    let pane = rect(&b, "[data-testid=pane-rollout]").await;
    assert!(
        pane[0] > -40.0 && pane[0] < height / 2.0,
        "the rollout is not in view: {pane:?} of {height}"
    );
    assert_eq!(overflow(&b).await, 0.0);
    keep_screenshot(&b, "rollout-open-390").await;
    b.click_testid("tab-health").await;
    b.wait_testid("health-headline", "120 rollouts").await;
    for table in ["health-rates", "health-buckets", "health-worst"] {
        let wrap = rect(&b, &format!("div.table-wrap:has(> [data-testid={table}])")).await;
        assert!(
            wrap[2] >= 0.0 && wrap[3] <= width,
            "{table} is clipped: {wrap:?} of {width}"
        );
    }
    // The rate names stay in view while the agents' columns scroll.
    let sticky = b
        .eval("return getComputedStyle(document.querySelector('[data-testid=health-rates] tbody th')).position")
        .await;
    assert_eq!(sticky, Value::from("sticky"));
    assert_eq!(overflow(&b).await, 0.0);
    // Compare (the example comparison) and the pivot builder (a pivot open) keep to the
    // screen too.
    b.click_testid("tab-compare").await;
    b.click_testid("compare-example").await;
    b.wait_testid("compare-status", "Compared").await;
    assert_fits(&b, "Compare").await;
    b.click_testid("tab-pivot-build").await;
    b.click_testid("pb-build").await;
    b.wait_testid("pb-headline", "pivots: ").await;
    b.click("[data-testid=pb-pivot]").await;
    b.wait_testid("pb-pair-title", "Pivot").await;
    assert_fits(&b, "Build pivots").await;
    b.click_testid("tab-pivot").await;
    let pivots = common::repo_root().join("tests/fixtures/pivot/upstream/example.jsonl");
    b.choose_file("pivot-file", &pivots).await;
    b.wait_testid("pivot-verdict", "Invalid").await;
    assert_fits(&b, "Pivot validator").await;
    b.close().await;
}

/// How far the page scrolls sideways, then the first elements past its width not inside a box
/// that scrolls or clips on its own: `[0]` when it fits.
/// Stops the test unless nothing on `what` (a page) is wider than the page.
async fn assert_fits(b: &Browser, what: &str) {
    assert_eq!(wider_than_the_page(b).await, Value::from(vec![0]), "{what}");
}

async fn wider_than_the_page(b: &Browser) -> Value {
    b.eval(
        "const w = document.documentElement.clientWidth;
         const clipped = (e) => { for (let a = e.parentElement; a && a !== document.body; a = a.parentElement) if (getComputedStyle(a).overflowX !== 'visible') return true; return false; };
         return [document.documentElement.scrollWidth - w].concat(Array.from(document.querySelectorAll('body *'))
           .filter(e => e.offsetParent !== null && e.getBoundingClientRect().right > w + 0.5 && !clipped(e))
           .map(e => e.tagName + '#' + e.id + '.' + e.className).slice(0, 6))",
    )
    .await
}

/// Tables for wide data (issue 44): the task table's columns grouped by field under a header
/// row (reward first, then tokens, then verifier fields), a default few shown and the rest in the
/// column picker, the task column kept in view while the table scrolls inside its box.
#[tokio::test(flavor = "multi_thread")]
async fn the_task_table_groups_its_columns_and_picks_them() {
    let (_tmp, _server, b) = open_generated_run(30).await;
    let groups: Vec<String> = serde_json::from_value(
        b.eval("return Array.from(document.querySelectorAll('[data-testid=task-table] thead th.group')).map(t => t.textContent)")
            .await,
    )
    .unwrap();
    assert_eq!(groups[0], "reward", "{groups:?}");
    assert!(groups[1].ends_with("tokens"), "{groups:?}");
    assert!(groups.iter().any(|g| g == "judge_score"), "{groups:?}");
    let summary = b
        .wait_text("[data-testid=column-picker] summary", "Columns (")
        .await;
    let (shown, total) = summary
        .trim_start_matches("Columns (")
        .trim_end_matches(')')
        .split_once(" of ")
        .map(|(a, b)| (a.parse::<u32>().unwrap(), b.parse::<u32>().unwrap()))
        .unwrap();
    assert!(shown < total && total > 40, "{summary}");
    let display = |key: &'static str| {
        let b = &b;
        async move {
            b.eval(&format!(
                "return getComputedStyle(document.querySelector('[data-testid=task-row] td[data-key=\"{key}\"]')).display"
            ))
            .await
        }
    };
    assert_eq!(display("mean/reward").await, Value::from("table-cell"));
    assert_eq!(display("max/output_tokens").await, Value::from("none"));
    b.eval("document.querySelector('[data-testid=column-picker]').open = true")
        .await;
    b.click("[data-testid=column-toggle][data-key='max/output_tokens']")
        .await;
    assert_eq!(
        display("max/output_tokens").await,
        Value::from("table-cell")
    );
    b.wait_text(
        "[data-testid=column-picker] summary",
        &format!("Columns ({} of {total})", shown + 1),
    )
    .await;
    // Every statistic is still in the page to read (the parity checks read hidden cells too).
    let cells = b
        .eval("return document.querySelector('[data-testid=task-row]').querySelectorAll('td[data-key]').length")
        .await;
    assert_eq!(cells, Value::from(total));
    let sticky = b
        .eval(
            "return getComputedStyle(document.querySelector('[data-testid=task-row] th')).position",
        )
        .await;
    assert_eq!(sticky, Value::from("sticky"));
    assert_eq!(overflow(&b).await, 0.0);
    b.close().await;
}
