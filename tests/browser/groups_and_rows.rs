//! The inspector, round three (issue 60), the rest: "Group by" any field beside agent and reward
//! group, following the query; Compare's paired tasks sortable by their reward delta with the
//! flipped ones alone, and a task's two transcripts aligned with their differences marked;
//! numbers for people in Compare's verdict table; the pass-rate band on a numeric axis. Each
//! test saves what it shows to target/screenshots/ to look at. Needs `dist/` and chromium.

use crate::common;
use crate::common::browser::start_app_sized;
use crate::round_three::{
    apply_query, continuous_run, json, open, significant, task_fields, Checks,
};
use common::browser::Browser;
use std::collections::BTreeMap;
use std::time::Duration;

async fn save(b: &Browser, name: &str) {
    let png = b.client.screenshot().await.unwrap();
    let dir = common::repo_root().join("target/screenshots");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join(name), png).unwrap();
}

async fn choose(b: &Browser, testid: &str, value: &str) {
    b.eval(&format!(
        "const s = document.querySelector('[data-testid={testid}]'); s.value = {};
         s.dispatchEvent(new Event('change', {{bubbles: true}}));",
        serde_json::json!(value)
    ))
    .await;
}

/// The group table's rows: (group, rollouts, mean reward) as shown.
async fn group_rows(b: &Browser) -> Vec<(String, String, String)> {
    json(
        b,
        "return Array.from(document.querySelectorAll('[data-testid=agent-line]')).map(r => [r.dataset.key, r.cells[1].textContent, r.cells[2].childNodes[0].textContent])",
    )
    .await
}

/// Per difficulty of [`continuous_run`]'s tasks: the rollouts `keep` keeps and their mean
/// reward as people read it, from the rollouts file itself.
fn expected(
    rollouts: &std::path::Path,
    keep: impl Fn(f64) -> bool,
) -> BTreeMap<String, (usize, String)> {
    let mut sums: BTreeMap<String, (usize, f64)> = BTreeMap::new();
    for line in std::fs::read_to_string(rollouts).unwrap().lines() {
        let row: serde_json::Value = serde_json::from_str(line).unwrap();
        let reward = row["reward"].as_f64().unwrap();
        if keep(reward) {
            let t = row["_ng_task_index"].as_u64().unwrap() as usize;
            let e = sums.entry(task_fields(t).1.to_string()).or_default();
            e.0 += 1;
            e.1 += reward;
        }
    }
    sums.into_iter()
        .map(|(k, (n, s))| (k, (n, gymscope::figures::reward(Some(s / n as f64)))))
        .collect()
}

fn shown(rows: &[(String, String, String)]) -> BTreeMap<String, (usize, String)> {
    rows.iter()
        .map(|(k, n, m)| (k.clone(), (n.replace(',', "").parse().unwrap(), m.clone())))
        .collect()
}

/// "Group by": the fields of the materialized rows are offered beside agent and reward group;
/// grouped by `metadata.difficulty`, each line counts its tasks' rollouts and mean reward, and
/// with a query applied, the query's (the rule of docs/app.md).
#[tokio::test(flavor = "multi_thread")]
async fn group_by_any_field_follows_the_query() {
    let tmp = tempfile::tempdir().unwrap();
    let files = continuous_run(tmp.path(), 300);
    let (_server, b) = open(Some(&files), 1440, 900).await;
    let mut options: Vec<String> = Vec::new();
    for _ in 0..50 {
        options = json(&b, "return Array.from(document.querySelectorAll('[data-testid=group-by] option')).map(o => o.value)").await;
        if options.len() > 2 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    for want in [
        "agent",
        "group",
        "field:dataset",
        "field:metadata.difficulty",
    ] {
        assert!(
            options.iter().any(|o| o == want),
            "{want} not in {options:?}"
        );
    }
    choose(&b, "group-by", "field:metadata.difficulty").await;
    b.wait_testid("group-note", "values of metadata.difficulty")
        .await;
    let mut checks = Checks::default();
    let header: String = json(
        &b,
        "return document.querySelector('[data-testid=agent-lines]').dataset.groupBy",
    )
    .await;
    checks.check(
        header == "metadata.difficulty",
        format!("grouped by {header}"),
    );
    let whole = shown(&group_rows(&b).await);
    checks.check(
        whole == expected(&files[1], |_| true),
        format!("the whole run: {whole:?}"),
    );
    b.eval("document.querySelector('[data-testid=agent-lines]').scrollIntoView({block: 'center'})")
        .await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    save(&b, "group-by-difficulty-1440.png").await;

    let (matched, _) = apply_query(&b, "reward > 0.5").await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let queried = shown(&group_rows(&b).await);
    let sum: usize = queried.values().map(|v| v.0).sum();
    checks.check(
        sum == matched,
        format!("the groups count {sum}, the query {matched}"),
    );
    checks.check(
        queried == expected(&files[1], |r| r > 0.5),
        format!("the query's: {queried:?}"),
    );
    let heading: String = json(
        &b,
        "return document.querySelector('.agent-lines h2').textContent",
    )
    .await;
    checks.check(
        heading.contains("the query's"),
        format!("heading {heading}"),
    );

    choose(&b, "group-by", "group").await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let groups = group_rows(&b).await;
    let sum: usize = groups
        .iter()
        .map(|g| g.1.replace(',', "").parse::<usize>().unwrap())
        .sum();
    checks.check(
        sum == matched,
        format!("the reward groups count {sum}, the query {matched}"),
    );
    checks.check(
        groups
            .iter()
            .all(|g| ["always ≥ 1", "sometimes ≥ 1", "never ≥ 1"].contains(&g.0.as_str())),
        format!("reward groups say their rule: {groups:?}"),
    );
    checks.done(b).await;
}

/// The example comparison's paired-task rows: each one's delta (`None`: no delta).
async fn deltas(b: &Browser) -> Vec<Option<f64>> {
    json(b, "return Array.from(document.querySelectorAll('[data-testid=compare-task-row]')).map(r => r.dataset.delta === '' ? null : Number(r.dataset.delta))").await
}

/// Compare: every paired task sortable by its reward delta (worst first, then best first), the
/// flipped ones alone on a tick, and a flipped task's two transcripts aligned item by item
/// with what differs marked (for an improvement, A's worst rollout against B's best).
#[tokio::test(flavor = "multi_thread")]
async fn compare_sorts_by_delta_and_marks_what_differs() {
    let (_server, b) = crate::round_three::compare_example().await;
    let mut checks = Checks::default();
    let order = |d: &[Option<f64>], descending: bool| {
        let known: Vec<f64> = d.iter().map_while(|x| *x).collect();
        known.windows(2).all(|w| {
            if descending {
                w[0] >= w[1]
            } else {
                w[0] <= w[1]
            }
        }) && d[known.len()..].iter().all(Option::is_none)
    };
    let first = deltas(&b).await;
    checks.check(
        first.len() == 24 && order(&first, false),
        format!("worst first: {first:?}"),
    );
    b.click_testid("compare-sort-delta").await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    let then = deltas(&b).await;
    checks.check(
        then.len() == 24 && order(&then, true),
        format!("best first: {then:?}"),
    );
    b.click_testid("compare-flipped-only").await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    let groups: Vec<String> = json(&b, "return Array.from(document.querySelectorAll('[data-testid=compare-task-row]')).map(r => r.cells[6].textContent)").await;
    checks.check(
        !groups.is_empty()
            && groups.len() < 24
            && groups.iter().all(|g| g.ends_with('↑') || g.ends_with('↓')),
        format!("only the flipped: {groups:?}"),
    );
    let flipped = deltas(&b).await;
    checks.check(
        order(&flipped, true),
        format!("the flipped, best first: {flipped:?}"),
    );
    b.click("[data-testid=compare-task-row]").await;
    b.wait_text("[data-testid=compare-diff] h3", "what differs")
        .await;
    let rows: Vec<(String, String, String)> = json(
        &b,
        "return Array.from(document.querySelectorAll('[data-testid=diff-row]')).map(r => [r.dataset.diff, r.children[0].textContent, r.children[1].textContent])",
    )
    .await;
    checks.check(
        rows.iter().any(|r| r.0 == "same"),
        format!("the prompt is the same: {rows:?}"),
    );
    checks.check(
        rows.iter().any(|r| r.0 != "same"),
        format!("something differs: {rows:?}"),
    );
    for (kind, a, b_text) in &rows {
        checks.check(
            (kind == "same") == (a == b_text),
            format!("a {kind} row: {a:?} / {b_text:?}"),
        );
    }
    let marks: Vec<String> = json(&b, "return Array.from(document.querySelectorAll('[data-diff=changed] [data-testid=diff-mark]')).map(m => m.textContent)").await;
    let changed = rows.iter().filter(|r| r.0 == "changed").count();
    checks.check(
        changed == 0 || !marks.is_empty(),
        format!("{changed} changed rows, marks {marks:?}"),
    );
    // An improvement: A's worst rollout against B's best.
    let picks: Vec<Vec<(String, bool)>> = json(
        &b,
        "return ['diff-pick-a', 'diff-pick-b'].map(t => Array.from(document.querySelector(`[data-testid=${t}]`).options).map(o => [o.textContent, o.selected]))",
    )
    .await;
    let reward = |s: &str| {
        s.rsplit(' ')
            .next()
            .unwrap()
            .parse::<f64>()
            .unwrap_or(f64::NAN)
    };
    let picked = |side: &[(String, bool)]| side.iter().find(|o| o.1).map(|o| reward(&o.0)).unwrap();
    let (a, bb) = (picked(&picks[0]), picked(&picks[1]));
    let a_min = picks[0]
        .iter()
        .map(|o| reward(&o.0))
        .fold(f64::INFINITY, f64::min);
    let b_max = picks[1]
        .iter()
        .map(|o| reward(&o.0))
        .fold(f64::NEG_INFINITY, f64::max);
    checks.check(
        a == a_min && bb == b_max,
        format!("picked A {a} (lowest {a_min}), B {bb} (highest {b_max})"),
    );
    b.eval("document.querySelector('[data-testid=compare-diff]').scrollIntoView()")
        .await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    save(&b, "compare-diff-1440.png").await;
    checks.done(b).await;
}

/// Numbers for people on Compare's verdict table (Δ and its interval by the metric: tokens
/// whole from 10 on, the rest at 4 significant digits; p at 2) and paired tasks; the pass-rate band's
/// bars on a numeric x axis (0.25 a quarter of the way from 0 to 1, round ticks below).
#[tokio::test(flavor = "multi_thread")]
async fn compare_numbers_and_the_band_axis_read_right() {
    let (server, b) = crate::round_three::compare_example().await;
    let mut checks = Checks::default();
    let rows: Vec<Vec<String>> = json(&b, "return Array.from(document.querySelectorAll('#verdict-table tbody tr')).map(r => Array.from(r.cells).map(c => c.textContent))").await;
    assert!(!rows.is_empty());
    for r in &rows {
        let (metric, delta, ci, p, holm) = (&r[1], &r[4], &r[5], &r[6], &r[7]);
        let tokens = metric.ends_with("tokens");
        for v in std::iter::once(delta.as_str()).chain(ci.split(" … ").filter(|s| !s.is_empty()))
        {
            // `figures::for_column`: token counts whole from 10 on, below at 4 digits.
            let digits = v.trim_start_matches(['-', '+']);
            let whole = digits.chars().all(|c| c.is_ascii_digit() || c == ',');
            let small = digits.parse::<f64>().is_ok_and(|d| d < 10.0);
            let ok = if tokens {
                whole || (small && significant(v) <= 4)
            } else {
                significant(v) <= 4
            };
            checks.check(ok, format!("{metric}'s Δ or interval {v}"));
        }
        for v in [p, holm] {
            checks.check(
                v == "< 0.0001" || v == "–" || significant(v) <= 2,
                format!("{metric}'s p {v}"),
            );
        }
    }
    let cells: Vec<String> = json(&b, "return Array.from(document.querySelectorAll('[data-testid=compare-task-row]')).flatMap(r => [3, 4, 5].map(i => r.cells[i].textContent))").await;
    for c in &cells {
        checks.check(significant(c) <= 4, format!("a paired task's {c}"));
    }
    // The band: bars where their values lie between the ticks 0 and 1.
    b.open_app(&server.url(), "").await;
    b.load_example().await;
    crate::open_pass_band(&b).await;
    let ticks: Vec<(String, f64)> = json(&b, "return Array.from(document.querySelectorAll('[data-testid=band-histogram] [data-testid=x-tick]')).map(t => { const r = t.getBoundingClientRect(); return [t.textContent, r.left + r.width / 2]; })").await;
    let at = |label: &str| ticks.iter().find(|t| t.0 == label).map(|t| t.1);
    checks.check(
        at("0").is_some() && at("1").is_some(),
        format!("x ticks {ticks:?}"),
    );
    if let (Some(x0), Some(x1)) = (at("0"), at("1")) {
        let bars: Vec<(f64, f64)> = json(&b, "return Array.from(document.querySelectorAll('[data-testid=band-bar]')).map(e => { const r = e.getBoundingClientRect(); return [Number(e.dataset.value), r.left + r.width / 2]; })").await;
        for (v, x) in &bars {
            let share = (x - x0) / (x1 - x0);
            checks.check(
                (share - v).abs() < 0.02,
                format!("the bar of {v} stands at {share:.3} of the axis"),
            );
        }
    }
    b.eval("document.querySelector('[data-testid=pass-band]').scrollIntoView()")
        .await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    save(&b, "band-axis-1440.png").await;
    checks.done(b).await;
}

/// On a phone the band's end labels (`≥ 0`, `≤ 1`) read whole: each lies inside the plot's
/// box and the nearest box that clips it (the right one was cut in half at 390 px).
#[tokio::test(flavor = "multi_thread")]
async fn the_band_labels_read_whole_on_a_phone() {
    let (_server, b) = start_app_sized("", 390, 844).await;
    b.load_example().await;
    crate::open_pass_band(&b).await;
    b.eval("document.querySelector('[data-testid=band-histogram]').scrollIntoView()")
        .await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    // Each label with its room to the nearest box that clips it and to the histogram's sides,
    // and what it lies on (the other label, a bar's count, a tick), at two bands.
    for at in ["0", "0.9"] {
        b.eval(&format!(
            "const s = document.querySelector('[data-testid=band-min]'); s.value = '{at}';
             s.dispatchEvent(new Event('input', {{bubbles: true}})); s.dispatchEvent(new Event('change', {{bubbles: true}}));"
        ))
        .await;
        tokio::time::sleep(Duration::from_millis(600)).await;
        let labels: Vec<(String, [f64; 4], Vec<String>)> = json(
            &b,
            "const plot = document.querySelector('[data-testid=band-histogram]').getBoundingClientRect();
             const spans = Array.from(document.querySelectorAll('[data-testid=band-histogram] [data-testid=histogram-mark] > span'));
             const others = Array.from(document.querySelectorAll('[data-testid=band-histogram] .bar-count, [data-testid=band-histogram] .tick')).concat(spans);
             const meet = (a, b) => a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom;
             return spans.map(s => {
               let clip = s.parentElement;
               while (clip && clip !== document.body && getComputedStyle(clip).overflowX === 'visible') clip = clip.parentElement;
               const c = clip ? clip.getBoundingClientRect() : { left: 0, right: innerWidth };
               const r = s.getBoundingClientRect();
               const on = others.filter(o => o !== s && meet(r, o.getBoundingClientRect())).map(o => o.textContent);
               return [s.textContent, [r.left - Math.max(c.left, 0), Math.min(c.right, innerWidth) - r.right, r.left - plot.left, plot.right - r.right], on];
             })",
        )
        .await;
        assert_eq!(labels.len(), 2, "{labels:?}");
        for (text, room, on) in &labels {
            assert!(
                room.iter().all(|r| *r >= -0.5),
                "band from {at}: the label {text:?} runs out of its box by {room:?} (left, right of the clip; of the plot)"
            );
            assert!(
                on.is_empty(),
                "band from {at}: the label {text:?} lies on {on:?}"
            );
        }
    }
    save(&b, "band-labels-390.png").await;
    b.close().await;
}
