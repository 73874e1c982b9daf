//! What a researcher sees first (issue 44): right after a three-agent, four-repeat run loads at
//! 1440×900, the key figures, the reward × tokens plot and the per-agent lines are on the first
//! screen, nothing is reserved for a rollout until one is opened, and the page never scrolls
//! sideways (at 390×844 either). Needs `dist/` and chromium: scripts/test.sh.

use crate::common;

use common::browser::{dist, Browser};
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

/// The page's width past the viewport (0: no sideways scrolling).
async fn overflow(b: &Browser) -> f64 {
    b.eval("return document.documentElement.scrollWidth - document.documentElement.clientWidth")
        .await
        .as_f64()
        .unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn the_first_screen_shows_the_figures_the_plot_and_the_agents() {
    let tmp = tempfile::tempdir().unwrap();
    let (inputs, rollouts) = gen_run::generate_agentic(tmp.path(), "rollouts", 120, 4, 1500);
    let server = StaticServer::start(&dist());
    let b = Browser::start().await;
    b.client.set_window_size(1440, 900).await.unwrap();
    b.open_app(&server.url(), "").await;
    b.choose_files("files", &[inputs, rollouts]).await;
    b.wait_text("[data-testid=status]", "Profile ready").await;
    let (width, height) = viewport(&b).await;
    if let Ok(dir) = std::env::var("GYMSCOPE_FIRST_SCREEN") {
        std::fs::write(
            format!("{dir}/first-screen-1440.png"),
            b.client.screenshot().await.unwrap(),
        )
        .unwrap();
    }

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
    // fractional rewards "never passes"; it was "all-0 (every rollout failed)").
    let groups: Vec<String> = serde_json::from_value(
        b.eval("return Array.from(document.querySelectorAll('[data-testid=task-row] td.group')).map(c => c.textContent)")
            .await,
    )
    .unwrap();
    assert!(!groups.is_empty());
    for g in &groups {
        assert!(
            ["never passes", "sometimes", "always passes", "no reward"].contains(&g.as_str()),
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

    // Item 1: with a query applied, the heading and the histogram count its rollouts only.
    assert_eq!(histogram_total(&b).await, 480);
    b.eval("const i = document.querySelector('[data-testid=query-input]'); i.value = 'reward == 0'; i.dispatchEvent(new Event('input')); document.querySelector('[data-testid=query-apply]').click(); return 0")
        .await;
    let count = b
        .wait_text("[data-testid=query-count]", "rollouts match")
        .await;
    let matched: u64 = count.split(' ').next().unwrap().parse().unwrap();
    assert!(matched > 0 && matched < 480, "{count}");
    b.wait_text(
        "[data-testid=plot-count]",
        &format!("{matched} of 480 rollouts (the query's)"),
    )
    .await;
    assert_eq!(histogram_total(&b).await, matched);
    b.click("[data-testid=query-clear]").await;
    b.wait_text("[data-testid=plot-count]", "480 rollouts")
        .await;

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
    let title = b.wait_text("[data-testid=rollout-title]", "rollout").await;
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
    assert_eq!(overflow(&b).await, 0.0);
    if let Ok(dir) = std::env::var("GYMSCOPE_FIRST_SCREEN") {
        std::fs::write(
            format!("{dir}/rollout-open-1440.png"),
            b.client.screenshot().await.unwrap(),
        )
        .unwrap();
    }
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
    if let Ok(dir) = std::env::var("GYMSCOPE_FIRST_SCREEN") {
        std::fs::write(
            format!("{dir}/first-screen-390.png"),
            b.client.screenshot().await.unwrap(),
        )
        .unwrap();
    }
    b.close().await;
}
