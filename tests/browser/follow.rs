//! The profile page follows a growing run (docs/watch.md, "In the app") in headless Chromium.
//! A real picker cannot be clicked under automation, so the run's two files are written to the
//! page's origin-private file system (OPFS) and `window.showOpenFilePicker` is made to return
//! their `FileSystemFileHandle`s: the app takes the same path as with the picker. The test then
//! appends to the rollouts through the handle (`createWritable({keepExistingData: true})`),
//! with a torn last line, while the page follows them.

use crate::common::browser::Browser;
use crate::common::browser::{start_app, start_app_sized};
use crate::common::static_server::StaticServer;
use crate::query_bar::query;
use serde_json::Value;
use std::time::{Duration, Instant};

const INPUTS: &str = "example_rollouts_materialized_inputs.jsonl";
const ROLLOUTS: &str = "example_rollouts.jsonl";
/// The rows the run starts with (of the example's 120).
pub const FIRST: usize = 80;
/// The rows after the first append.
const SECOND: usize = 100;

fn example(name: &str) -> String {
    std::fs::read_to_string(
        crate::common::repo_root()
            .join("assets/example-run")
            .join(name),
    )
    .unwrap()
}

/// The example's rollout lines (each with its newline).
pub fn lines() -> Vec<String> {
    example(ROLLOUTS)
        .lines()
        .map(|l| format!("{l}\n"))
        .collect()
}

/// `lines[from..to]` and the first half of line `to` (a write torn mid-line), when there is one.
pub fn chunk(lines: &[String], from: usize, to: usize) -> (String, String) {
    let whole = lines[from..to].concat();
    let torn = lines
        .get(to)
        .map_or(String::new(), |l| l[..l.len() / 2].to_string());
    (whole, torn)
}

/// Runs `body` (an async JS function body) in the page and returns what it returns.
async fn run_js(b: &Browser, body: &str) -> Value {
    let script = format!(
        "const done = arguments[arguments.length - 1];
         (async () => {{ {body} }})().then(done, e => done('ERR ' + e));"
    );
    let got = b.eval_async(&script).await;
    assert!(!got.as_str().is_some_and(|s| s.starts_with("ERR")), "{got}");
    got
}

/// Appends `text` to the rollouts file through its handle.
pub async fn append(b: &Browser, text: &str) {
    let body = format!(
        "const h = window.__followed[1];
         const size = (await h.getFile()).size;
         const w = await h.createWritable({{keepExistingData: true}});
         await w.seek(size);
         await w.write({});
         await w.close();
         return 'ok';",
        serde_json::to_string(text).unwrap()
    );
    run_js(b, &body).await;
}

/// The page with the example run's inputs and its first [`FIRST`] rows (and a torn one) in
/// OPFS, opened with "Open to follow…", a query applied, a rollout open and the page scrolled.
pub async fn open_followed(width: u32, height: u32) -> (StaticServer, Browser) {
    let (server, b) = start_app_sized("", width, height).await;
    let (first, torn) = chunk(&lines(), 0, FIRST);
    let body = format!(
        "const root = await navigator.storage.getDirectory();
         const put = async (name, text) => {{
           const h = await root.getFileHandle(name, {{create: true}});
           const w = await h.createWritable();
           await w.write(text);
           await w.close();
           return h;
         }};
         window.__followed = [await put({}, {}), await put({}, {})];
         window.showOpenFilePicker = async () => window.__followed;
         return 'ok';",
        serde_json::to_string(INPUTS).unwrap(),
        serde_json::to_string(&example(INPUTS)).unwrap(),
        serde_json::to_string(ROLLOUTS).unwrap(),
        serde_json::to_string(&format!("{first}{torn}")).unwrap(),
    );
    run_js(&b, &body).await;
    b.click_testid("follow-open").await;
    // A run opened to follow is partial by nature: no offer to click, the torn line waits.
    b.wait_testid("status", "Profile ready").await;
    b.wait_testid("totals", &format!("{FIRST} of 120 rollouts"))
        .await;
    (server, b)
}

/// How many of the first `n` rows the test's query matches (`task < 10`).
fn matching(n: usize) -> usize {
    lines()[..n]
        .iter()
        .filter(|l| serde_json::from_str::<Value>(l).unwrap()["_ng_task_index"].as_i64() < Some(10))
        .count()
}

async fn scroll_y(b: &Browser) -> f64 {
    b.eval("return window.scrollY").await.as_f64().unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_followed_file_grows_and_the_query_and_the_open_rollout_stay() {
    let (_server, b) = open_followed(1440, 900).await;
    // The switch is offered for files opened through the handles.
    query(&b, "task < 10").await;
    let want = format!("{} of {FIRST} rollouts match", matching(FIRST));
    b.wait_testid("query-count", &want).await;
    b.click("[data-testid=task-row]").await;
    b.click("[data-testid=open-rollout]").await;
    let title = b.wait_testid("rollout-title", "rollout").await;

    b.click_testid("follow-switch").await;
    b.wait_testid("follow-badge", "rows/min").await;
    b.wait_testid("follow-badge", &format!("{FIRST} of 120 rollouts"))
        .await;
    // The rest of the torn line, rows up to SECOND, and the next row torn.
    let all = lines();
    let half = all[FIRST].len() / 2;
    let (more, torn) = chunk(&all, FIRST + 1, SECOND);
    append(&b, &format!("{}{more}{torn}", &all[FIRST][half..])).await;
    let t0 = Instant::now();
    let want = format!("{} of {SECOND} rollouts match", matching(SECOND));
    b.wait_text_for("[data-testid=query-count]", &want, 5).await;
    println!("the new count showed {:?} after the append", t0.elapsed());
    b.wait_testid("totals", &format!("{SECOND} of 120 rollouts"))
        .await;
    b.wait_testid("follow-badge", &format!("{SECOND} of 120 rollouts"))
        .await;
    // The query and the open rollout stayed.
    let input = b
        .eval("return document.querySelector('[data-testid=query-input]').value")
        .await;
    assert_eq!(input, "task < 10");
    b.wait_testid("rollout-title", &title).await;

    // The last rows: the run is complete, and following stops by itself, saying so.
    let half = all[SECOND].len() / 2;
    let (rest, _) = chunk(&all, SECOND + 1, all.len());
    append(&b, &format!("{}{rest}", &all[SECOND][half..])).await;
    b.wait_text_for("[data-testid=follow-note]", "the run is complete", 10)
        .await;
    b.wait_testid("totals", "120 of 120 rollouts").await;
    let on = b
        .eval("return document.querySelector('[data-testid=follow-switch]').checked")
        .await;
    assert_eq!(on, Value::Bool(false));
    b.close().await;
}

/// A refresh keeps the page where the reader left it (issue 62, item 4): the scroll is taken
/// when the refresh begins and put back once the new profile is shown, unless the reader moved
/// the page meanwhile. Turning Follow on refreshes at once; the reader scrolls (a real wheel)
/// while that refresh is read, and neither it nor the next one takes the page back.
#[tokio::test(flavor = "multi_thread")]
async fn the_scroll_stays_through_a_refresh() {
    let (_server, b) = open_followed(1440, 900).await;
    b.click("[data-testid=task-row]").await;
    b.click("[data-testid=open-rollout]").await;
    b.wait_testid("rollout-title", "rollout").await;
    // WebDriver's click scrolls the switch into view; the wheel then moves the page down.
    b.click_testid("follow-switch").await;
    let before = scroll_y(&b).await;
    wheel(&b, 400).await;
    let y = settled_scroll(&b).await;
    assert!(
        y > before + 300.0,
        "the wheel should scroll: {before} to {y}"
    );
    let all = lines();
    let half = all[FIRST].len() / 2;
    let (more, torn) = chunk(&all, FIRST + 1, SECOND);
    append(&b, &format!("{}{more}{torn}", &all[FIRST][half..])).await;
    b.wait_text_for(
        "[data-testid=totals]",
        &format!("{SECOND} of 120 rollouts"),
        5,
    )
    .await;
    let after = settled_scroll(&b).await;
    assert!((after - y).abs() < 2.0, "scrolled from {y} to {after}");
    b.close().await;
}

/// A reader's wheel: `dy` pixels down, at the page's left margin (over no scrolling box:
/// the task table and the rollout pane scroll on their own).
async fn wheel(b: &Browser, dy: i64) {
    use fantoccini::actions::{InputSource, WheelAction, WheelActions};
    let scroll = WheelActions::new("wheel".into()).then(WheelAction::Scroll {
        duration: None,
        x: 4,
        y: 450,
        delta_x: 0,
        delta_y: dy,
    });
    b.client.perform_actions(scroll).await.unwrap();
}

/// The page's scroll once nothing has moved it for two seconds (longer than a refresh puts the
/// scroll back after its profile is shown).
async fn settled_scroll(b: &Browser) -> f64 {
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut last = scroll_y(b).await;
    let mut since = Instant::now();
    loop {
        tokio::time::sleep(Duration::from_millis(100)).await;
        let y = scroll_y(b).await;
        if (y - last).abs() > 0.5 {
            (last, since) = (y, Instant::now());
        } else if since.elapsed() > Duration::from_secs(2) {
            return y;
        }
        assert!(
            Instant::now() < deadline,
            "the page never stopped scrolling"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_chosen_file_is_a_snapshot_and_the_page_says_why_there_is_no_follow() {
    let (_server, b) = start_app("").await;
    b.load_example().await;
    b.wait_testid("follow-why", "snapshots").await;
    let switches = b
        .eval("return document.querySelectorAll('[data-testid=follow-switch]').length")
        .await;
    assert_eq!(switches, Value::from(0));
    // Where the browser hands out no file handles (Firefox, Safari), the line says so.
    b.eval("delete window.showOpenFilePicker; delete Window.prototype.showOpenFilePicker")
        .await;
    b.click_testid("change-files").await;
    b.click_testid("load-example").await;
    b.wait_testid("follow-why", "this browser gives only snapshots")
        .await;
    b.close().await;
}
