//! The comparison report in real headless Chromium, from a file:// URL: nothing is fetched, its
//! own script and style pass its CSP, hostile text never runs, and every count, mark and bar
//! filters the paired-task table. Needs chromium + chromedriver (scripts/setup.sh --browser).

use crate::common;
use crate::common::{compare_runs, gen_run};
use crate::wait_for;

use common::browser::Browser;
use gymscope::compare::{self, CompareOptions};
use gymscope::report::ReportMeta;

#[tokio::test(flavor = "multi_thread")]
async fn comparison_report_works_from_a_file_url() {
    let tmp = tempfile::tempdir().unwrap();
    // Hostile strings everywhere; B's rewards all 0, so every task regressed.
    let (ia, ra) = gen_run::hostile_run();
    let rb = ra.replace("\"reward\":1.0", "\"reward\":0.0");
    let side = |rollouts: &str, name| compare_runs::side(&(ia.clone(), rollouts.to_string()), name);
    let (a, b) = (side(&ra, "a.jsonl"), side(&rb, "b.jsonl"));
    let c = compare::compare(&a, &b, CompareOptions::default()).unwrap();
    let convs = compare::conversations::read(
        &c,
        (&a, "a", &mut ra.as_bytes()),
        (&b, "b", &mut rb.as_bytes()),
        20,
    )
    .unwrap();
    let meta = ReportMeta {
        title: "</script><script>window.__pwned=9</script>".into(),
        ..ReportMeta::default()
    };
    let path = tmp.path().join("compare.html");
    std::fs::write(&path, compare::report::render(&c, &meta, &convs)).unwrap();

    let br = Browser::start().await;
    br.client
        .goto(&format!("file://{}", path.display()))
        .await
        .unwrap();
    wait_for(
        &br,
        "return document.documentElement.getAttribute('data-ready')",
        "the page's script",
    )
    .await;
    br.assert_self_contained().await;
    // The inline style applied (its CSP hash matched) and nothing from the data ran.
    br.assert_no_script_ran().await;
    assert!(br
        .eval("return document.title")
        .await
        .as_str()
        .unwrap()
        .starts_with("</script><script>window.__pwned=9"));
    br.wait_text("#task-count", "3 of 3 paired tasks").await;

    // A transition count filters the table to its tasks; the chip clears it.
    br.eval("document.querySelector('#transition-table td[data-ga=\"1\"][data-gb=\"0\"]').click()")
        .await;
    br.wait_text("#task-count", "3 of 3").await;
    br.eval("document.querySelector('#transition-table td[data-ga=\"2\"][data-gb=\"2\"]').click()")
        .await;
    br.wait_text("#task-count", "0 of 3").await;
    br.eval("document.querySelector('#task-chip button').click()")
        .await;
    br.wait_text("#task-count", "3 of 3").await;
    // A bar of the delta histogram, and the "improved" pick.
    br.eval("document.querySelector('#histogram .mark').dispatchEvent(new MouseEvent('click', {bubbles: true}))")
        .await;
    br.wait_text("#task-count", "3 of 3").await;
    br.eval("document.querySelector('.pick[data-pick=improved]').click()")
        .await;
    br.wait_text("#task-count", "0 of 3").await;
    // A link to a task opens its side-by-side conversations.
    br.eval("location.hash = 'task=1'").await;
    wait_for(
        &br,
        "return document.getElementById('pair-1').open",
        "task 1 opened",
    )
    .await;
    assert_eq!(br.count("#pair-1 .side").await, 2);
    br.assert_no_script_ran().await;
    br.close().await;
}
