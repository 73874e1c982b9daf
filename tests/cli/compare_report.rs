//! The comparison report, natively: the same input gives the same bytes, hostile text is
//! escaped in the page and the data, the CSP hashes match the inline script and style, regressed
//! tasks' conversations sit side by side, and the CLI writes it (with a profiling-file side)
//! atomically. The browser side is `tests/browser_compare.rs`.

use crate::common;
use crate::common::assert_success;
use crate::common::compare_runs;

use crate::common::gen_run;

use common::run_gymscope;
use compare_runs::{by_content, side, two_runs_in};
use gymscope::compare;
use gymscope::report::{ReportMeta, Source};
use serde_json::{json, Value};

/// A and B of `gen_run::hostile_run` (payloads in prompts, answers, agent and field names); B's
/// rewards all 0, so every task regressed and gets its conversations in the report.
fn hostile_pair() -> ((String, String), (String, String)) {
    let a = gen_run::hostile_run();
    let b = (a.0.clone(), a.1.replace("\"reward\":1.0", "\"reward\":0.0"));
    (a, b)
}

fn report_html(a: &(String, String), b: &(String, String), title: &str) -> String {
    let (sa, sb) = (side(a, "a.jsonl"), side(b, "b.jsonl"));
    let c = compare::compare(&sa, &sb, by_content()).unwrap();
    let convs = compare::conversations::read(
        &c,
        (&sa, "a.jsonl", &mut a.1.as_bytes()),
        (&sb, "b.jsonl", &mut b.1.as_bytes()),
        20,
    )
    .unwrap();
    let meta = ReportMeta {
        title: title.into(),
        sources: vec![Source {
            name: "<i>a.jsonl".into(),
            bytes: 10,
        }],
        date: None,
    };
    compare::report::render(&c, &meta, &convs)
}

/// The text of the first element opened by `open` (e.g. `<script>`) up to its closing tag.
fn element<'a>(html: &'a str, open: &str, close: &str) -> &'a str {
    let start = html.find(open).unwrap() + open.len();
    &html[start..start + html[start..].find(close).unwrap()]
}

/// One pair's side-by-side block, up to the next one or the end of its section.
fn pair_block(html: &str, task_a: i64) -> &str {
    let open = format!("<details class=\"pair\" id=\"pair-{task_a}\">");
    let start = html.find(&open).unwrap_or_else(|| panic!("no {open}"));
    let rest = &html[start + open.len()..];
    let end = rest
        .find("<details class=\"pair\"")
        .unwrap_or_else(|| rest.find("</section>").unwrap());
    &rest[..end]
}

fn sha256_b64(text: &str) -> String {
    use base64::Engine;
    use sha2::Digest;
    base64::engine::general_purpose::STANDARD.encode(sha2::Sha256::digest(text.as_bytes()))
}

#[test]
fn report_is_deterministic_and_escapes_hostile_text() {
    let (a, b) = hostile_pair();
    let html = report_html(&a, &b, "<b>title</b>");
    assert_eq!(html, report_html(&a, &b, "<b>title</b>"), "same bytes");
    // Two script elements: the page's own and the inert data block; nothing from the data.
    assert_eq!(html.matches("<script").count(), 2);
    assert_eq!(html.matches("</script>").count(), 2);
    assert!(!html.contains("<img") && !html.contains("<b>title") && !html.contains("<i>a"));
    assert!(html.contains("&lt;img src=x onerror=&quot;window.__pwned=2&quot;&gt;"));
    assert!(html.contains("&lt;/script&gt;&lt;script&gt;window.__pwned=1"));
    assert!(!html.contains(" src=\"") && !html.contains(" href="));
    // The data block reads back the hostile agent names verbatim.
    let data: Value =
        serde_json::from_str(element(&html, "id=\"compare-data\">", "</script>")).unwrap();
    let agents = data["agents"].as_array().unwrap();
    assert!(agents
        .iter()
        .any(|a| a == "</script><script>window.__pwned=1</script>"));
    assert_eq!(data["tasks"]["delta"], json!([-0.5, -0.5, -0.5]));
    assert_eq!(data["pairs"], json!([0, 1, 2]));
    // The CSP allows exactly the inline script and style, by their hashes.
    let csp = element(&html, "Content-Security-Policy\" content=\"", "\"");
    assert!(csp.starts_with("default-src 'none'") && !csp.contains("unsafe-inline"));
    let script = element(&html, "</style><script>", "</script>");
    let style = element(&html, "<style>", "</style>");
    assert!(csp.contains(&format!("script-src 'sha256-{}'", sha256_b64(script))));
    assert!(csp.contains(&format!("style-src 'sha256-{}'", sha256_b64(style))));
    // Every regressed task's conversations, A beside B.
    for t in 0..3 {
        let pair = pair_block(&html, t);
        assert!(pair.contains("<div class=\"sides\"><div class=\"side\">"));
    }
    for section in [
        "headline",
        "agents",
        "transitions",
        "plots",
        "tasks",
        "details",
    ] {
        assert!(
            html.contains(&format!("<section id=\"{section}\">")),
            "{section}"
        );
    }
    for plot in ["id=\"scatter\"", "id=\"histogram\"", "id=\"cost\""] {
        assert!(html.contains(plot), "{plot}");
    }
}

#[test]
fn report_from_the_cli_with_a_profile_file_side() {
    let dir = tempfile::tempdir().unwrap();
    let ((_, ra), (ib, rb)) = two_runs_in(dir.path());
    assert!(
        run_gymscope(&["profile", "--inputs", &ib, "--rollouts", &rb])
            .status
            .success()
    );
    let profile = dir.path().join("b_reward_profiling.jsonl");
    let out = dir.path().join("cmp.html");
    let args = [
        "compare",
        ra.as_str(),
        profile.to_str().unwrap(),
        "--report",
        out.to_str().unwrap(),
        "--conversations",
        "1",
        "--title",
        "a vs b",
    ];
    let first = run_gymscope(&args);
    assert_success(&first);
    let html = std::fs::read_to_string(&out).unwrap();
    assert!(run_gymscope(&args).status.success());
    assert_eq!(std::fs::read_to_string(&out).unwrap(), html, "same bytes");
    // Only the worst regression's conversations: A's rollouts, B's prompt (a profiling file).
    assert_eq!(html.matches("<details class=\"pair\"").count(), 1);
    let pair = pair_block(&html, 0);
    assert!(pair.contains("Rollout 0 · reward 1.0"), "{pair}");
    assert!(pair.contains("From a profiling file: the prompt only"));
    assert!(pair.contains("answer to p0"));
    // Names of the files, never their paths; no temporary file left behind.
    assert!(
        html.contains("b_reward_profiling.jsonl") && !html.contains(dir.path().to_str().unwrap())
    );
    let names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(names.iter().all(|n| !n.ends_with(".tmp")), "{names:?}");
}

#[test]
fn static_table_keeps_both_ends_of_a_long_list() {
    use compare_runs::{run, task};
    let prompts: Vec<String> = (0..1_100).map(|i| format!("q{i}")).collect();
    let rewards = [[0.0], [1.0]];
    let ta: Vec<_> = prompts
        .iter()
        .enumerate()
        .map(|(i, p)| task(i as i64, p, &rewards[i % 2]))
        .collect();
    let tb: Vec<_> = prompts
        .iter()
        .enumerate()
        .map(|(i, p)| task(i as i64, p, &rewards[(i / 2) % 2]))
        .collect();
    let (a, b) = (run(&ta, 0.6, 0), run(&tb, 0.6, 0));
    let c = compare::compare(&side(&a, "a"), &side(&b, "b"), by_content()).unwrap();
    let html = compare::report::render(&c, &ReportMeta::default(), &[]);
    let table = element(&html, "<table id=\"task-table\">", "</table>");
    assert_eq!(table.matches("<tr><th>").count(), 1_000);
    assert!(table.contains("… 100 tasks not shown without JavaScript …"));
    // The worst regression first and the best improvement last.
    let (first, last) = (&c.tasks[0], &c.tasks[c.tasks.len() - 1]);
    assert_eq!((first.delta, last.delta), (Some(-1.0), Some(1.0)));
    assert!(table.contains(&format!("<tr><th>{}</th>", first.task_a)));
    assert!(table.ends_with(&format!(
        "<tr><th>{}</th><td>{}</td><td class=\"agent\">math</td><td>0</td><td>1</td><td><span class=\"delta up better\" title=\"1\">+1</span></td><td>all_failure</td><td>all_success</td><td>100</td><td>100</td></tr></tbody>",
        last.task_a, last.task_b
    )));
}

/// A task of many rollouts embeds the first `MAX_SHOWN_ROLLOUTS` of each run, and says so (a task
/// of 20,000 rollouts made a 271 MB page).
#[test]
fn a_task_of_many_rollouts_shows_a_few_and_says_how_many() {
    let many = compare_runs::task(0, "many", &[1.0; 20]);
    let a = compare_runs::run(&[many, compare_runs::task(1, "few", &[1.0, 1.0])], 0.0, 3);
    let b = (a.0.clone(), a.1.replace("\"reward\":1.0", "\"reward\":0.0"));
    let html = report_html(&a, &b, "t");
    let block = pair_block(&html, 0);
    let shown = compare::conversations::MAX_SHOWN_ROLLOUTS;
    assert_eq!(
        block.matches("<details class=\"rollout\">").count(),
        2 * shown,
        "{block}"
    );
    assert_eq!(
        block
            .matches(&format!(
                "The first {shown} of this task's 20 rollouts in this run."
            ))
            .count(),
        2
    );
    // A task within the bound shows every rollout and no note.
    let few = pair_block(&html, 1);
    assert_eq!(few.matches("<details class=\"rollout\">").count(), 4);
    assert!(!few.contains("data-sampled"), "{few}");
}
