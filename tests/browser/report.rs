//! The HTML report in real headless Chromium, opened from file:// URLs as a mail attachment or
//! a downloaded file would be: it makes no request, its own script and style pass its CSP, the
//! task table sorts, filters and pages, the plot names the rollout under the pointer, deep links
//! open tasks, hostile strings show as text and never run, and with script blocked the page still
//! shows the summary, tables and a static plot. Needs chromium + chromedriver (scripts/test.sh).

use crate::common;
use crate::common::gen_run;
use crate::wait_for;

use common::browser::Browser;
use gymscope::conversation::conversation;
use gymscope::output::profile_bytes;
use gymscope::profile::ProfileOptions;
use gymscope::render::LineSource;
use gymscope::report::{self, ReportInput, ReportMeta};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Writes the report of a run (conversations for the first 20 tasks) and returns its path and
/// its input.
fn write_report(dir: &Path, name: &str, inputs: &str, rollouts: &str) -> (PathBuf, ReportInput) {
    let options = ProfileOptions {
        allow_partial_rollouts: false,
    };
    let p = profile_bytes(
        inputs.as_bytes(),
        "in.jsonl",
        rollouts.as_bytes(),
        "r.jsonl",
        options,
    )
    .unwrap();
    let mut src: &[u8] = rollouts.as_bytes();
    let conversations = report::conversation_spans(&p, 20, None)
        .into_iter()
        .map(|(key, span)| {
            let row: Value = serde_json::from_slice(&src.read_span(span).unwrap()).unwrap();
            (key, conversation(&row))
        })
        .collect();
    let meta = ReportMeta {
        title: name.into(),
        ..ReportMeta::default()
    };
    let input = ReportInput::from_profile(&p, meta, conversations);
    let path = dir.join(format!("{name}.html"));
    std::fs::write(&path, report::render(&input)).unwrap();
    (path, input)
}

fn url(path: &Path) -> String {
    format!("file://{}", path.display())
}

async fn open(b: &Browser, target: &str) {
    b.client.goto(target).await.unwrap();
    wait_for(
        b,
        "return document.documentElement.getAttribute('data-ready')",
        "the report's script",
    )
    .await;
}

/// Texts of the shown task table, row by row.
async fn table_rows(b: &Browser) -> Vec<Vec<String>> {
    let v = b
        .eval("return Array.from(document.querySelectorAll('#task-table tbody tr')).map(tr => Array.from(tr.cells).map(c => c.textContent))")
        .await;
    serde_json::from_value(v).unwrap()
}

async fn set_filter(b: &Browser, text: &str) {
    let script = format!(
        "const f = document.getElementById('task-filter'); f.value = {}; f.dispatchEvent(new Event('input'));",
        json!(text)
    );
    b.eval(&script).await;
    tokio::time::sleep(Duration::from_millis(400)).await; // the filter waits 120 ms for typing
}

/// Moves the pointer over (or clicks) rollout (task, rollout) of the scatter, found from the
/// page's own data the way the plot places it.
async fn at_point(b: &Browser, task: i64, rollout: i64, event: &str) {
    let script = format!(
        r"const d = JSON.parse(document.getElementById('report-data').textContent).points;
        let at = 0; const runs = d.task_runs;
        for (let i = 0; i < runs.length; i += 2) {{ if (runs[i] === {task}) break; at += runs[i + 1]; }}
        const i = at + d.rollout.slice(at).indexOf({rollout});
        const xs = d.values[d.x], ys = d.reward;
        // The plot model's axes for this field, as the page draws them.
        const [ax, ay] = d.scales[d.x];
        const [x0, x1, y0, y1] = [ax.lo, ax.hi, ay.lo, ay.hi];
        const px = 60 + (xs[i] - x0) / (x1 - x0) * (640 - 72), py = 300 - 40 - (ys[i] - y0) / (y1 - y0) * (300 - 52);
        const c = document.getElementById('scatter-canvas'); const r = c.getBoundingClientRect();
        c.dispatchEvent(new MouseEvent('{event}', {{ clientX: r.left + px * r.width / 640, clientY: r.top + py * r.height / 300, bubbles: true }}));"
    );
    b.eval(&script).await;
}

/// [`gen_run::generate`]'s run of `tasks` tasks (4 rollouts each), as text.
fn generated_text(dir: &Path, name: &str, tasks: usize) -> (String, String) {
    let (inputs, rollouts) = gen_run::generate(dir, name, tasks, 4, 100);
    (
        std::fs::read_to_string(inputs).unwrap(),
        std::fs::read_to_string(rollouts).unwrap(),
    )
}

/// The page table's column of `mean/reward` (after the task key's).
fn mean_reward_column(input: &ReportInput) -> usize {
    1 + input
        .tasks
        .headers
        .iter()
        .position(|h| h == "mean/reward")
        .unwrap()
}

/// Column `col` of the shown rows, as numbers.
fn numbers_at(rows: &[Vec<String>], col: usize) -> Vec<f64> {
    rows.iter()
        .map(|r| r[col].parse::<f64>().unwrap())
        .collect()
}

/// A 1,200-task report opened from `file://`, its script ready.
async fn open_distinct_report() -> (tempfile::TempDir, PathBuf, ReportInput, Browser) {
    let tmp = tempfile::tempdir().unwrap();
    let (inputs, rollouts) = gen_run::distinct_run(1_200, 4);
    let (path, input) = write_report(tmp.path(), "distinct", &inputs, &rollouts);
    let b = Browser::start().await;
    open(&b, &url(&path)).await;
    b.wait_text("#task-count", "1200 of 1200 tasks").await;
    (tmp, path, input, b)
}

#[tokio::test(flavor = "multi_thread")]
async fn nothing_is_fetched_and_the_table_reads_as_the_static_one() {
    let (_tmp, _, input, b) = open_distinct_report().await;
    // Nothing fetched; the inline style and script run under the page's own CSP.
    b.assert_self_contained().await;
    b.wait_text("#task-count", "1200 of 1200 tasks").await;
    b.wait_text("#task-page", "page 1 of 12").await;

    // The script's table reads exactly as the static one (both from table.rs's text).
    let rows = table_rows(&b).await;
    assert_eq!(rows.len(), 100);
    for (shown, row) in rows.iter().zip(&input.tasks.rows) {
        let mut want = vec![row.key.clone()];
        want.extend(row.cells.iter().map(gymscope::table::Cell::text));
        assert_eq!(shown, &want);
    }

    b.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn sorting_by_a_column_orders_both_ways() {
    let (_tmp, _, input, b) = open_distinct_report().await;
    let col = mean_reward_column(&input);
    let values = |rows: &[Vec<String>]| numbers_at(rows, col);
    // Sorting: by mean/reward, highest first, then lowest first; missing values never first.
    let click = format!("document.querySelectorAll('#task-table thead th')[{col}].click()");
    b.eval(&click).await;
    let desc = values(&table_rows(&b).await);
    assert!(desc.windows(2).all(|w| w[0] >= w[1]), "{desc:?}");
    let max = input
        .tasks
        .rows
        .iter()
        .map(|r| r.cells[col - 1].text().parse::<f64>().unwrap())
        .fold(f64::MIN, f64::max);
    assert_eq!(desc[0], max);
    b.eval(&click).await;
    let asc = values(&table_rows(&b).await);
    assert!(asc.windows(2).all(|w| w[0] <= w[1]), "{asc:?}");
    assert_eq!(b.eval(&format!("return document.querySelectorAll('#task-table thead th')[{col}].getAttribute('aria-sort')")).await, json!("ascending"));

    b.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn filters_take_conditions_task_indexes_and_say_what_is_wrong() {
    let (_tmp, _, input, b) = open_distinct_report().await;
    let col = mean_reward_column(&input);
    // Filtering (the query language): a condition on any column, a task index, and a readable
    // error.
    set_filter(&b, "`mean/reward` >= 0.6 and `num_rollouts` == 4").await;
    let count = b
        .eval("return document.getElementById('task-count').textContent")
        .await;
    let shown: usize = count
        .as_str()
        .unwrap()
        .split(' ')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    let want = input
        .tasks
        .rows
        .iter()
        .filter(|r| r.cells[col - 1].text().parse::<f64>().unwrap() >= 0.6)
        .count();
    assert_eq!(shown, want, "{count}");
    assert!(numbers_at(&table_rows(&b).await, col)
        .iter()
        .all(|&v| v >= 0.6));
    set_filter(&b, "task == 17").await;
    let rows = table_rows(&b).await;
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0][0], "17");
    set_filter(&b, "nonsense < 1").await;
    b.wait_text(
        "#task-filter-error",
        "`nonsense` is not a column of this report",
    )
    .await;
    set_filter(&b, "").await;
    b.wait_text("#task-count", "1200 of 1200 tasks").await;

    b.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn plot_hover_names_a_rollout_and_click_deep_links_to_it() {
    let (_tmp, _, _, b) = open_distinct_report().await;
    // The plot: hovering a rollout names it; clicking it opens it (task 5 has conversations).
    assert_eq!(
        b.eval("return document.getElementById('scatter-static').hidden")
            .await,
        json!(true)
    );
    at_point(&b, 5, 2, "mousemove").await;
    b.wait_text_holding("#scatter-tip", "task 5 · rollout 2", "output_tokens 320")
        .await;
    at_point(&b, 5, 2, "click").await;
    wait_for(
        &b,
        "return location.hash === '#task=5&rollout=2'",
        "the deep link",
    )
    .await;
    wait_for(
        &b,
        "return document.getElementById('task-5-rollout-2').open",
        "rollout 2 of task 5 to open",
    )
    .await;
    assert_eq!(
        b.eval("return document.getElementById('task-5').open")
            .await,
        json!(true)
    );
    let top = b
        .eval("return document.getElementById('task-5-rollout-2').getBoundingClientRect().top")
        .await;
    assert!(
        top.as_f64().unwrap().abs() < 5.0,
        "scrolled to the rollout: top {top}"
    );
    b.wait_text("#task-5-rollout-2", "It is 7.").await;

    b.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_deep_link_from_outside_opens_a_task_without_conversations() {
    let (_tmp, path, _, b) = open_distinct_report().await;
    // A deep link opened from outside, to a task without conversations: its numbers are shown.
    b.client.goto("about:blank").await.unwrap();
    open(&b, &format!("{}#task=700&rollout=3", url(&path))).await;
    wait_for(
        &b,
        "const d = document.getElementById('task-700'); return d && d.open",
        "task 700 to open",
    )
    .await;
    b.wait_text("#task-700-rollout-3", "930").await; // output_tokens
    b.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn hostile_strings_show_as_text_and_never_run() {
    let tmp = tempfile::tempdir().unwrap();
    let (inputs, rollouts) = gen_run::hostile_run();
    let (path, _) = write_report(tmp.path(), "hostile", &inputs, &rollouts);
    let b = Browser::start().await;
    open(&b, &url(&path)).await;
    let script_payload = "</script><script>window.__pwned=1</script>";
    let img_payload = "<img src=x onerror=\"window.__pwned=2\">";
    let js_payload = "javascript:window.__pwned=3";

    // Open every task and rollout, and plot against the hostile field, so all text is shown.
    b.eval("document.querySelectorAll('details').forEach(d => d.open = true)")
        .await;
    let select = format!(
        "const s = document.getElementById('scatter-x'); s.value = Array.from(s.options).find(o => o.textContent === {}).value; s.dispatchEvent(new Event('change'));",
        json!(script_payload)
    );
    b.eval(&select).await;
    tokio::time::sleep(Duration::from_millis(300)).await;

    b.assert_inert("img, a, iframe, object, embed").await;
    assert_eq!(b.eval("return document.scripts.length").await, json!(2));
    let text = b.eval("return document.body.innerText").await;
    let text = text.as_str().unwrap();
    for payload in [script_payload, img_payload, js_payload] {
        // In the prompt, the answer, the function call, the agent table and the field names.
        assert!(
            text.matches(payload).count() >= 5,
            "{payload} shown as text: {}",
            text.matches(payload).count()
        );
    }
    b.wait_text("#scatter-x-name", script_payload).await;
    let headers = b.eval("return Array.from(document.querySelectorAll('#task-table thead th')).map(th => th.textContent)").await;
    assert!(
        headers
            .as_array()
            .unwrap()
            .iter()
            .any(|h| h == &json!(format!("mean/{img_payload}"))),
        "{headers}"
    );
    let agents = b.eval("return Array.from(document.querySelectorAll('#agent-table tbody th')).map(th => th.textContent)").await;
    assert_eq!(agents, json!([script_payload, img_payload, js_payload]));
    b.assert_no_script_ran().await;
    b.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn without_javascript_the_page_still_reads() {
    let tmp = tempfile::tempdir().unwrap();
    let (inputs, rollouts) = gen_run::distinct_run(1_200, 4);
    let (path, input) = write_report(tmp.path(), "distinct", &inputs, &rollouts);
    // The same page with its script blocked by its own CSP (as with JavaScript turned off).
    let html = std::fs::read_to_string(&path).unwrap();
    let start = html.find("script-src 'sha256-").unwrap() + "script-src ".len();
    let end = start + html[start..].find(';').unwrap();
    let blocked = tmp.path().join("nojs.html");
    std::fs::write(
        &blocked,
        format!("{}'none'{}", &html[..start], &html[end..]),
    )
    .unwrap();

    let b = Browser::start().await;
    b.client.goto(&url(&blocked)).await.unwrap();
    wait_for(&b, "return document.readyState === 'complete'", "the page").await;
    assert_eq!(
        b.eval("return document.documentElement.getAttribute('data-ready')")
            .await,
        Value::Null
    );
    b.wait_text(
        "#summary",
        "Reward profile completion: 4800/4800 rollout rows (100.00%)",
    )
    .await;
    b.wait_text("#agent-table", "agent_1").await;
    // The first 1,000 tasks, with a note saying so; the script's controls stay hidden.
    assert_eq!(b.count("#task-table tbody tr").await, 1000);
    b.wait_text("#task-static-note", "the first 1000 of 1200 tasks")
        .await;
    assert_eq!(
        b.eval("return document.getElementById('task-controls').hidden")
            .await,
        json!(true)
    );
    let first = b.eval("return Array.from(document.querySelector('#task-table tbody tr').cells).map(c => c.textContent)").await;
    let mut want = vec![input.tasks.rows[0].key.clone()];
    want.extend(
        input.tasks.rows[0]
            .cells
            .iter()
            .map(gymscope::table::Cell::text),
    );
    assert_eq!(first, json!(want));
    // A static plot: a sample of the rollouts, each titled with its key; and the histogram.
    let circles = b
        .eval("return document.querySelectorAll('#scatter-static circle').length")
        .await;
    assert_eq!(circles, json!(1600)); // 4,800 rollouts, one in 3
    assert_eq!(
        b.eval("return document.querySelector('#scatter-static circle title').textContent")
            .await,
        json!("task 0 · rollout 0")
    );
    assert_eq!(
        b.eval(
            "return document.getElementById('scatter-static').getBoundingClientRect().height > 100"
        )
        .await,
        json!(true)
    );
    assert_eq!(b.count("#histogram rect").await, 20);
    // Conversations, collapsed, and readable when opened.
    assert_eq!(b.count("#task-details details.task").await, 20);
    b.eval("document.getElementById('task-3').open = true; document.getElementById('task-3-rollout-1').open = true").await;
    b.wait_text("#task-3-rollout-1", "What is 3 + 1?").await;
    b.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn the_scatter_colours_agents_with_a_legend_that_toggles_them() {
    let dir = tempfile::tempdir().unwrap();
    let (inputs, rollouts) = generated_text(dir.path(), "agents", 60);
    let (path, _) = write_report(dir.path(), "agents", &inputs, &rollouts);
    let b = Browser::start().await;
    open(&b, &url(&path)).await;
    let agents = b
        .eval("return Array.from(document.querySelectorAll('#scatter-legend .legend-item')).map(e => e.dataset.agent)")
        .await;
    assert_eq!(
        agents,
        json!(["math_agent_0", "math_agent_1", "math_agent_2"])
    );
    // The static SVG (shown without script) colours its points by agent too.
    let fills = b
        .eval("return new Set(Array.from(document.querySelectorAll('#scatter-static circle')).map(c => c.getAttribute('fill'))).size")
        .await;
    assert_eq!(fills, json!(3));
    let pixels = "const c = document.getElementById('scatter-canvas');
         const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
         let n = 0; for (let i = 3; i < d.length; i += 4) if (d[i] > 0) n++; return n;";
    b.eval("document.getElementById('scatter-overlay').click()")
        .await;
    let all = b.eval(pixels).await.as_u64().unwrap();
    b.eval("document.querySelector('#scatter-legend [data-agent=math_agent_1]').click()")
        .await;
    let fewer = b.eval(pixels).await.as_u64().unwrap();
    assert!(fewer < all, "hiding an agent: {fewer} of {all}");
    assert_eq!(
        b.eval("return document.querySelector('[data-agent=math_agent_1]').getAttribute('aria-pressed')")
            .await,
        json!("false")
    );
    b.eval("document.querySelector('#scatter-legend [data-agent=math_agent_1]').click()")
        .await;
    assert_eq!(b.eval(pixels).await.as_u64().unwrap(), all);
    b.close().await;
}

/// The report keeps to the screen at 1440 and at 390 px (issue 44: tables and plots scroll or
/// shrink inside the page, which never scrolls sideways), on the example run.
#[tokio::test(flavor = "multi_thread")]
async fn the_report_never_scrolls_sideways() {
    let tmp = tempfile::tempdir().unwrap();
    let example = common::repo_root().join("assets/example-run");
    let page = tmp.path().join("report.html");
    common::write_report(
        &example.join("example_rollouts_materialized_inputs.jsonl"),
        &example.join("example_rollouts.jsonl"),
        &page,
        &[],
    );
    let b = Browser::start().await;
    for (width, height) in [(1440, 900), (390, 844)] {
        b.client.set_window_size(width, height).await.unwrap();
        open(&b, &url(&page)).await;
        let wide = b
            .eval(
                "const w = document.documentElement.clientWidth;
                 return [document.documentElement.scrollWidth - w].concat(Array.from(document.querySelectorAll('body *'))
                   .filter(e => !e.closest('.scroll') && e.getBoundingClientRect().right > w + 0.5)
                   .map(e => e.tagName + '#' + e.id + '.' + e.className).slice(0, 5))",
            )
            .await;
        assert_eq!(wide, json!([0]), "at {width} px");
    }
    b.close().await;
}
