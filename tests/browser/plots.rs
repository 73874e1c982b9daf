//! The inspector's plots in real headless Chromium, on a generated run of three agents: the
//! legend toggles agents, a dragged brush filters the task table (count, URL hash, reload,
//! clearing), every plot downloads as SVG and PNG, and at 1,440 px the opened rollout sits
//! beside the table. Needs `dist/` and chromium: scripts/test.sh.

use crate::common;
use crate::common::browser::start_app_sized;
use crate::common::gen_run;

use common::browser::Browser;
use common::static_server::StaticServer;
use std::path::{Path, PathBuf};

const TASKS: usize = 40;
const REPEATS: usize = 4;

fn run_files(dir: &Path) -> [PathBuf; 2] {
    let (inputs, rollouts) = gen_run::generate(dir, "run", TASKS, REPEATS, 200);
    [inputs, rollouts]
}

/// The app with the generated run profiled.
async fn open_run(width: u32) -> (tempfile::TempDir, StaticServer, Browser) {
    let tmp = tempfile::tempdir().unwrap();
    let (server, b) = start_app_sized("", width, 900).await;
    b.choose_files("files", &run_files(tmp.path())).await;
    b.wait_testid("status", "Profile ready").await;
    (tmp, server, b)
}

/// Opaque pixels on the rollout scatter's canvas (after the redraw a click scheduled).
async fn drawn_pixels(b: &Browser) -> u64 {
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    b.eval(
        "const c = document.querySelector('[data-testid=scatter]');
         const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
         let n = 0; for (let i = 3; i < d.length; i += 4) if (d[i] > 0) n++;
         return n;",
    )
    .await
    .as_u64()
    .unwrap()
}

/// The task table's count, once the table is on the page (a loaded machine showed the status
/// line a moment before the table).
async fn task_count(b: &Browser) -> String {
    b.wait_testid("task-count", " tasks").await
}

/// Drags on the rollout scatter from (`x0`, `y0`) to (`x1`, `y1`), fractions of its size.
async fn drag(b: &Browser, x0: f64, y0: f64, x1: f64, y1: f64) {
    b.eval(&format!(
        "const c = document.querySelector('[data-testid=scatter]');
         const r = c.getBoundingClientRect();
         const at = (fx, fy) => ({{clientX: r.left + fx * r.width, clientY: r.top + fy * r.height, bubbles: true, button: 0}});
         c.dispatchEvent(new MouseEvent('mousedown', at({x0}, {y0})));
         c.dispatchEvent(new MouseEvent('mousemove', at(({x0} + {x1}) / 2, ({y0} + {y1}) / 2)));
         c.dispatchEvent(new MouseEvent('mousemove', at({x1}, {y1})));
         c.dispatchEvent(new MouseEvent('mouseup', at({x1}, {y1})));"
    ))
    .await;
}

/// Tasks of the generated run with a rollout in the brush (output tokens × reward), computed
/// here from the rollouts file.
fn tasks_in(rollouts: &Path, brush: [f64; 4]) -> usize {
    let text = std::fs::read_to_string(rollouts).unwrap();
    let mut tasks = std::collections::BTreeSet::new();
    for line in text.lines() {
        let row: serde_json::Value = serde_json::from_str(line).unwrap();
        let x = row["response"]["usage"]["output_tokens"].as_f64().unwrap();
        let y = row["reward"].as_f64().unwrap();
        if (brush[0]..=brush[1]).contains(&x) && (brush[2]..=brush[3]).contains(&y) {
            tasks.insert(row["_ng_task_index"].as_i64().unwrap());
        }
    }
    tasks.len()
}

#[tokio::test(flavor = "multi_thread")]
async fn the_legend_toggles_agents() {
    let (_tmp, _server, b) = open_run(1200).await;
    let agents = b.eval("return Array.from(document.querySelectorAll('[data-testid=plot-legend] [data-testid=plot-legend-item]')).map(e => e.dataset.agent)").await;
    assert_eq!(
        agents,
        serde_json::json!(["math_agent_0", "math_agent_1", "math_agent_2"])
    );
    // Points only (the overlay's bands would cover most of the plot).
    b.click("[data-testid=plot-overlay]").await;
    let all = drawn_pixels(&b).await;
    b.click("[data-testid=plot-legend-item][data-agent=math_agent_1]")
        .await;
    let pressed = b
        .eval("return document.querySelector('[data-agent=math_agent_1]').getAttribute('aria-pressed')")
        .await;
    assert_eq!(pressed, "false");
    let fewer = drawn_pixels(&b).await;
    assert!(
        fewer < all * 9 / 10,
        "hiding an agent: {fewer} of {all} pixels"
    );
    // Its rollouts can no longer be hovered (task 1 is math_agent_1's).
    let hover = "const [x, y] = window.__gymscope.pointPixel(1, 0);
         document.querySelector('[data-testid=scatter]').dispatchEvent(new MouseEvent('mousemove', {clientX: x, clientY: y, bubbles: true}));";
    b.eval(hover).await;
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    let tip = b
        .eval("const t = document.querySelector('[data-testid=plot-tooltip]'); return t ? t.textContent : ''")
        .await;
    assert!(
        !tip.as_str().unwrap().contains("task 1 · rollout 0"),
        "{tip}"
    );
    b.click("[data-testid=plot-legend-item][data-agent=math_agent_1]")
        .await;
    assert_eq!(drawn_pixels(&b).await, all, "shown again, drawn as before");
    b.eval(hover).await;
    b.wait_testid("plot-tooltip", "task 1 · rollout 0 · math_agent_1")
        .await;
    b.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_brush_filters_the_task_table_and_lives_in_the_hash() {
    let (tmp, server, b) = open_run(1200).await;
    let total = format!("{TASKS} of {TASKS} tasks");
    assert_eq!(task_count(&b).await, total);
    // The upper left: short answers that succeeded.
    drag(&b, 0.05, 0.02, 0.3, 0.3).await;
    let hash = b.eval("return location.hash").await;
    let hash = hash.as_str().unwrap().to_string();
    let brush: Vec<f64> = hash
        .split("brush=")
        .nth(1)
        .unwrap_or_else(|| panic!("no brush in {hash}"))
        .split('&')
        .next()
        .unwrap()
        .split(',')
        .map(|v| v.parse().unwrap())
        .collect();
    assert!(
        brush[0] < brush[1] && brush[2] < 1.0 && brush[3] > 1.0,
        "{brush:?}"
    );
    let want = tasks_in(&run_files(tmp.path())[1], brush.clone().try_into().unwrap());
    assert!(want > 0 && want < TASKS, "{want}");
    let count = format!("{want} of {TASKS} tasks");
    assert_eq!(task_count(&b).await, count);
    b.wait_testid("brush-status", &format!("{want} tasks"))
        .await;
    // A reload with the same files lands on the same brush.
    b.client
        .goto(&format!("{}{hash}", server.url()))
        .await
        .unwrap();
    b.wait_worker_ready().await;
    b.choose_files("files", &run_files(tmp.path())).await;
    b.wait_testid("status", "Profile ready").await;
    assert_eq!(task_count(&b).await, count);
    b.click("[data-testid=brush-clear]").await;
    assert_eq!(task_count(&b).await, total);
    let hash = b.eval("return location.hash").await;
    assert!(!hash.as_str().unwrap().contains("brush"), "{hash}");
    b.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn escape_clears_the_brush() {
    let (_tmp, _server, b) = open_run(1200).await;
    let total = format!("{TASKS} of {TASKS} tasks");
    drag(&b, 0.05, 0.02, 0.3, 0.3).await;
    b.wait_testid("brush-status", "tasks").await;
    assert_ne!(task_count(&b).await, total, "the brush filters");
    // A real key press, with the focus on the task table (not on the plot).
    b.client
        .find(fantoccini::Locator::Css("[data-testid=task-table-wrap]"))
        .await
        .unwrap()
        .send_keys(&char::from(fantoccini::key::Key::Escape).to_string())
        .await
        .unwrap();
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    assert_eq!(task_count(&b).await, total);
    let left = b
        .eval("return [location.hash, document.querySelectorAll('[data-testid=brush-rect], [data-testid=brush-status]').length]")
        .await;
    assert!(!left[0].as_str().unwrap().contains("brush"), "{left}");
    assert_eq!(left[1], 0, "no brush drawn or named: {left}");
    b.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn every_plot_downloads_as_svg_and_png() {
    let (_tmp, _server, b) = open_run(1200).await;
    for plot in ["reward-scatter", "task-scatter", "reward-histogram"] {
        b.click(&format!("[data-testid=download-svg][data-plot={plot}]"))
            .await;
        let link = format!("[data-testid=plot-download-link][data-plot={plot}]");
        b.wait_text(&link, &format!("{plot}.svg")).await;
        let svg = b
            .eval_async(&format!(
                "const done = arguments[0];
                 fetch(document.querySelector('{link}').href).then(r => r.text()).then(done);"
            ))
            .await;
        let svg = svg.as_str().unwrap();
        assert!(svg.starts_with("<svg xmlns="), "{plot}: {}", &svg[..80]);
        assert!(svg.contains("<text"), "{plot}: ticks and titles");
        if plot == "reward-scatter" {
            assert!(svg.contains("math_agent_2") && svg.contains("<circle"));
            assert!(svg.contains("<polyline"), "the binned-mean overlay");
        }
        b.click(&format!("[data-testid=download-png][data-plot={plot}]"))
            .await;
        b.wait_text(&link, &format!("{plot}.png")).await;
        let png = b
            .eval(&format!(
                "const href = document.querySelector('{link}').href;
                 const bytes = atob(href.split(',')[1]);
                 return [href.slice(0, 22), bytes.length, bytes.slice(1, 4)];"
            ))
            .await;
        assert_eq!(png[0], "data:image/png;base64,", "{plot}");
        assert_eq!(png[2], "PNG", "{plot}");
        assert!(png[1].as_u64().unwrap() > 5_000, "{plot}: {png}");
    }
    b.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn at_1440_px_the_rollout_opens_beside_the_table() {
    let (_tmp, _server, b) = open_run(1440).await;
    // Scroll to the table, open a task's first rollout from it.
    b.eval("document.querySelector('[data-testid=task-table-wrap]').scrollIntoView()")
        .await;
    // Clicked by script: WebDriver's own click would scroll the button into view first.
    b.eval("document.querySelector('[data-testid=task-row]').click()")
        .await;
    let before = b.eval("return window.scrollY").await;
    b.eval("document.querySelector('[data-testid=open-rollout]').click()")
        .await;
    b.wait_testid("rollout-title", "task 0 · rollout").await;
    let layout = b
        .eval(
            "const box = s => document.querySelector(s).getBoundingClientRect();
             const table = box('[data-testid=task-table-wrap]'), view = box('[data-testid=rollout-view]');
             return {scrollY: window.scrollY, tableRight: table.right, viewLeft: view.left,
                     viewTop: view.top, tableTop: table.top, height: window.innerHeight};",
        )
        .await;
    assert_eq!(
        layout["scrollY"], before,
        "opening a rollout scrolls nowhere: {layout}"
    );
    let f = |k: &str| layout[k].as_f64().unwrap();
    assert!(f("viewLeft") >= f("tableRight"), "side by side: {layout}");
    assert!(
        f("viewTop") < f("height") && f("tableTop") < f("height"),
        "both on screen: {layout}"
    );
    // Narrow: one column, the rollout below the table.
    b.client.set_window_size(900, 900).await.unwrap();
    let stacked = b
        .eval(
            "const table = document.querySelector('[data-testid=task-table-wrap]').getBoundingClientRect();
             const view = document.querySelector('[data-testid=rollout-view]').getBoundingClientRect();
             return view.top >= table.bottom;",
        )
        .await;
    assert_eq!(stacked, true);
    b.close().await;
}
