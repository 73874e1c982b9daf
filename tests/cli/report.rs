//! The HTML report, natively: the same inputs give the same bytes, every data string is escaped
//! (in the page and in the embedded data), a profile and its output files give the same content,
//! and a 100,000-rollout run stays under 12 MB. The browser side is `tests/browser_report.rs`.

use crate::common;
use crate::common::assert_contains;
use crate::common::assert_success;
use crate::common::gen_run;
use crate::common::run_on;

use gymscope::conversation::conversation;
use gymscope::output::{profile_bytes, render_in_memory};
use gymscope::profile::{Profile, ProfileOptions};
use gymscope::render::LineSource;
use gymscope::report::{self, ReportInput, ReportMeta, Source};
use gymscope::table::Table;
use std::path::Path;

const PARTIAL: ProfileOptions = ProfileOptions {
    allow_partial_rollouts: true,
};

fn meta(title: &str) -> ReportMeta {
    ReportMeta {
        title: title.into(),
        sources: vec![Source {
            name: "rollouts.jsonl".into(),
            bytes: 1234,
        }],
        date: Some("2026-01-01".into()),
    }
}

/// A report built as the CLI builds it: profile, conversations of the first `tasks` tasks read
/// back by span.
fn report_of(inputs: &[u8], rollouts: &[u8], tasks: usize, title: &str) -> (Profile, ReportInput) {
    let p = profile_bytes(inputs, "in.jsonl", rollouts, "out.jsonl", PARTIAL).unwrap();
    let mut src: &[u8] = rollouts;
    let conversations = report::conversation_spans(&p, tasks, None)
        .into_iter()
        .map(|(key, span)| {
            let row = serde_json::from_slice(&src.read_span(span).unwrap()).unwrap();
            (key, conversation(&row))
        })
        .collect();
    let input = ReportInput::from_profile(&p, meta(title), conversations);
    (p, input)
}

/// The generated multi-agent run's files (inputs, rollouts).
fn multi_agent_run() -> (std::path::PathBuf, std::path::PathBuf) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/generated/multi_agent");
    (
        root.join("rollouts_materialized_inputs.jsonl"),
        root.join("rollouts.jsonl"),
    )
}

#[test]
fn same_inputs_give_the_same_bytes() {
    let (inputs, rollouts) = gen_run::hostile_run();
    let a = report::render(&report_of(inputs.as_bytes(), rollouts.as_bytes(), 20, "t").1);
    let b = report::render(&report_of(inputs.as_bytes(), rollouts.as_bytes(), 20, "t").1);
    assert_eq!(a, b);
    // The date is an option, shown only when given.
    assert!(a.contains("2026-01-01"));
}

#[test]
fn every_data_string_is_escaped() {
    let (inputs, rollouts) = gen_run::hostile_run();
    let html =
        report::render(&report_of(inputs.as_bytes(), rollouts.as_bytes(), 20, "<b>title</b>").1);
    // Exactly two script elements: the data block and the report's own script.
    assert_eq!(html.matches("<script").count(), 2, "{html}");
    assert_eq!(html.matches("</script>").count(), 2);
    assert!(!html.contains("<img"));
    assert!(!html.contains("<b>title"));
    assert!(html.contains("&lt;img src=x onerror=&quot;window.__pwned=2&quot;&gt;"));
    assert!(html.contains("&lt;/script&gt;&lt;script&gt;window.__pwned=1"));
    // In the JSON data block the same strings are \u-escaped and still read back.
    let start = html.find("id=\"report-data\">").unwrap() + "id=\"report-data\">".len();
    let end = start + html[start..].find("</script>").unwrap();
    let data: serde_json::Value = serde_json::from_str(&html[start..end]).unwrap();
    let fields = data["points"]["fields"].as_array().unwrap();
    assert!(
        fields
            .iter()
            .any(|f| f == "</script><script>window.__pwned=1</script>"),
        "{fields:?}"
    );
    assert!(data["tasks"]["headers"]
        .as_array()
        .unwrap()
        .iter()
        .any(|h| h == "mean/<img src=x onerror=\"window.__pwned=2\">"));
    // No element from the data can carry a URL or handler: the page has no src/href at all.
    assert!(!html.contains(" src=\"") && !html.contains(" href="));
    // The CSP allows exactly the inline script and style, by hash.
    let csp = &html[html.find("Content-Security-Policy").unwrap()..];
    let csp = &csp[..csp.find('>').unwrap()];
    assert!(csp.contains("default-src 'none'") && csp.contains("script-src 'sha256-"));
    assert!(!csp.contains("unsafe-inline"));
}

fn without_column(t: &Table, header: &str) -> Table {
    let Some(c) = t.headers.iter().position(|h| h == header) else {
        return t.clone();
    };
    let mut t = t.clone();
    t.headers.remove(c);
    for row in &mut t.rows {
        row.cells.remove(c);
    }
    t
}

/// The report from a profile and from that profile's files hold the same tables and points.
fn assert_same_content(inputs: &[u8], rollouts: &[u8], what: &str) {
    let (p, from_run) = report_of(inputs, rollouts, 0, "t");
    let files = render_in_memory(&p, inputs, "in.jsonl").unwrap();
    let from_files = ReportInput::from_profile_files(
        meta("t"),
        ("x_reward_profiling.jsonl", &files.reward_profiling),
        Some(("x_agent_metrics.json", &files.agent_metrics)),
        0,
    )
    .unwrap();
    assert_eq!(from_files.tasks, from_run.tasks, "{what}: task table");
    // Profile files do not name each rollout's agent; everything else is the same.
    assert!(from_files.points.agent.is_empty(), "{what}");
    assert_eq!(
        from_run.points.agent.len(),
        from_run.points.len(),
        "{what}: an agent per rollout"
    );
    let run_points = gymscope::report::Points {
        agent: Vec::new(),
        ..from_run.points.clone()
    };
    assert_eq!(from_files.points, run_points, "{what}: points");
    // The metrics file has no rollout counts per agent.
    let agents = without_column(from_run.agents.as_ref().unwrap(), "rollouts");
    assert_eq!(
        from_files.agents.as_ref().unwrap(),
        &agents,
        "{what}: agent table"
    );
    let (s, f) = (from_run.summary, from_files.summary);
    assert_eq!(
        (
            s.expected_rollout_rows - missing_expected(&p),
            s.completed_rollout_rows,
            s.complete_input_rows,
            s.partial_input_rows
        ),
        (
            f.expected_rollout_rows,
            f.completed_rollout_rows,
            f.complete_input_rows,
            f.partial_input_rows
        ),
        "{what}: summary"
    );
    assert_eq!(
        s.total_input_rows - s.missing_input_rows,
        f.total_input_rows,
        "{what}: summary"
    );
}

/// Expected rollouts of tasks that have none at all (not recorded in the profiling file).
fn missing_expected(p: &Profile) -> usize {
    p.summary.expected_rollout_rows
        - p.tasks
            .iter()
            .map(|t| t.expected_num_rollouts)
            .sum::<usize>()
}

#[test]
fn profile_files_give_the_same_content_as_the_run() {
    let mut cases = 0;
    for dir in ["gym-examples", "generated"] {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures")
            .join(dir);
        let mut entries: Vec<_> = std::fs::read_dir(&root)
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .collect();
        entries.sort();
        for case in entries {
            let files: Vec<_> = std::fs::read_dir(&case)
                .unwrap()
                .flatten()
                .map(|e| e.path())
                .collect();
            let find = |materialized: bool| {
                files.iter().find(|f| {
                    let name = f.file_name().unwrap().to_string_lossy();
                    name.ends_with(".jsonl") && name.contains("materialized_inputs") == materialized
                })
            };
            let (Some(inputs), Some(rollouts)) = (find(true), find(false)) else {
                continue;
            };
            let (inputs, rollouts) = (
                std::fs::read(inputs).unwrap(),
                std::fs::read(rollouts).unwrap(),
            );
            if profile_bytes(&inputs, "in.jsonl", &rollouts, "out.jsonl", PARTIAL).is_err() {
                continue; // an error case: no profile to report on
            }
            assert_same_content(&inputs, &rollouts, &case.display().to_string());
            cases += 1;
        }
    }
    assert!(cases >= 20, "only {cases} fixture runs found");
}

#[test]
fn a_100k_rollout_run_stays_under_12_mb() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/test-data");
    let (inputs, rollouts) = gen_run::generate(&dir, "report_25000x4", 25_000, 4, 600);
    let (inputs, rollouts) = (
        std::fs::read(inputs).unwrap(),
        std::fs::read(rollouts).unwrap(),
    );
    let (_, input) = report_of(
        &inputs,
        &rollouts,
        report::DEFAULT_CONVERSATION_TASKS,
        "big",
    );
    assert_eq!(input.points.len(), 100_000);
    let html = report::render(&input);
    println!(
        "report of 100,000 rollouts / 25,000 tasks: {:.2} MB",
        html.len() as f64 / 1e6
    );
    assert!(html.len() < 12_000_000, "{} bytes", html.len());
}

#[test]
fn cli_writes_the_same_file_twice() {
    let (inputs, rollouts) = multi_agent_run();
    let (inputs, rollouts) = (inputs.to_str().unwrap(), rollouts.to_str().unwrap());
    let tmp = tempfile::tempdir().unwrap();
    let mut outputs = Vec::new();
    for name in ["a.html", "b.html"] {
        let out = tmp.path().join(name);
        common::write_report(
            Path::new(inputs),
            Path::new(rollouts),
            &out,
            &["--date", "2026-01-01"],
        );
        outputs.push(std::fs::read(out).unwrap());
    }
    assert_eq!(outputs[0], outputs[1]);

    // From the profile's files, found next to each other.
    let out_dir = ["--out-dir", tmp.path().to_str().unwrap()];
    let prof = run_on("profile", Path::new(inputs), Path::new(rollouts), &out_dir);
    assert!(prof.status.success());
    let run = common::run_gymscope(&[
        "report",
        "--profile",
        tmp.path()
            .join("rollouts_reward_profiling.jsonl")
            .to_str()
            .unwrap(),
    ]);
    assert_success(&run);
    let html = std::fs::read_to_string(tmp.path().join("rollouts_report.html")).unwrap();
    assert!(
        html.contains("rollouts_agent_metrics.json"),
        "the metrics file is found and named"
    );
    assert!(html.contains("id=\"agent-table\""));
}

/// `report --query`: the page stores the matches `gymscope query` finds (any expression: text
/// too), says how many, and refuses a bad expression (exit 2, its column) or a query without
/// the run's files before reading anything.
#[test]
fn a_query_stores_the_clis_matches_in_the_page() {
    let (inputs, rollouts) = multi_agent_run();
    let (inputs, rollouts) = (inputs.to_str().unwrap(), rollouts.to_str().unwrap());
    let tmp = tempfile::tempdir().unwrap();
    let page = tmp.path().join("deep/q.html");
    for (expr, any) in [
        ("reward < 1 and prompt ~ /alpha|zeta/i", true),
        ("output ~ \"no such text anywhere\"", false),
    ] {
        let flags = ["--query", expr];
        let run = common::write_report(Path::new(inputs), Path::new(rollouts), &page, &flags);
        let keys = common::run_gymscope(&["query", "--inputs", inputs, rollouts, expr]);
        let keys: Vec<String> = String::from_utf8(keys.stdout)
            .unwrap()
            .lines()
            .map(|l| l.replace(' ', ","))
            .collect();
        assert_eq!(keys.is_empty(), !any, "{expr}");
        let html = std::fs::read_to_string(&page).unwrap();
        let data = html.split("id=\"report-data\">").nth(1).unwrap();
        let data: serde_json::Value =
            serde_json::from_str(data.split("</script>").next().unwrap()).unwrap();
        assert_eq!(data["query"]["source"], expr);
        let stored: Vec<String> = data["query"]["keys"]
            .as_array()
            .unwrap()
            .chunks(2)
            .map(|k| format!("{},{}", k[0], k[1]))
            .collect();
        let mut sorted = keys.clone();
        sorted.sort_by_key(|k| {
            let (t, r) = k.split_once(',').unwrap();
            (t.parse::<i64>().unwrap(), r.parse::<i64>().unwrap())
        });
        assert_eq!(stored, sorted, "{expr}");
        // "Tasks in detail" follows the query (issue 44): the matching rollouts only.
        let shown: Vec<String> = html
            .split("<details class=\"rollout\" id=\"task-")
            .skip(1)
            .map(|s| {
                let id = s.split('"').next().unwrap();
                id.replace("-rollout-", ",")
            })
            .collect();
        assert!(
            shown.iter().all(|k| sorted.contains(k)),
            "{expr}: {shown:?} are not all matches"
        );
        assert_eq!(shown.is_empty(), !any, "{expr}: {shown:?}");
        let said = common::output_text(&run);
        assert_contains(&said, &format!("Query: {} of", keys.len()));
        if !any {
            assert_contains(&said, "the page opens with an empty table");
        }
    }
    let flags = ["-o", page.to_str().unwrap(), "--query", "reward >> 1"];
    let bad = run_on("report", Path::new(inputs), Path::new(rollouts), &flags);
    assert_eq!(bad.status.code(), Some(2));
    assert!(common::output_text(&bad).contains("column 9: expected a value after `>`"));
    let files = common::run_gymscope(&["report", "--profile", rollouts, "--query", "reward == 0"]);
    assert_eq!(
        files.status.code(),
        Some(2),
        "{}",
        common::output_text(&files)
    );
}

/// The report opens on its key figures and its plot (issue 44), titled by the run's folder.
#[test]
fn a_report_opens_on_its_key_figures_and_is_titled_by_its_run_folder() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("math_eval_run");
    std::fs::create_dir(&dir).unwrap();
    let (inputs, rollouts) = gen_run::generate_agentic(&dir, "rollouts", 30, 4, 1500);
    let out = dir.join("r.html");
    let o = run_on("report", &inputs, &rollouts, &["-o", out.to_str().unwrap()]);
    assert_success(&o);
    let html = std::fs::read_to_string(&out).unwrap();
    assert!(
        html.contains("<h1>math_eval_run</h1>"),
        "titled by the folder"
    );
    let at = |needle: &str| {
        html.find(needle)
            .unwrap_or_else(|| panic!("{needle} is not in the report"))
    };
    assert!(at("id=\"figures\"") < at("id=\"plots\""));
    assert!(at("id=\"plots\"") < at("id=\"summary\""));
    assert!(at("id=\"plots\"") < at("id=\"tasks\""));
    for key in [
        "tasks",
        "rollouts",
        "agents",
        "mean-reward",
        "pass-at-1",
        "pass-at-k",
    ] {
        assert!(html.contains(&format!("data-key=\"{key}\"")), "{key} card");
    }
    assert!(
        html.contains("<div class=\"figure-value\">120</div>"),
        "120 rollouts"
    );
}

/// Every section of a report made with a query is the matches' (issue 44): the agent and
/// repeat tables count exactly the matches, the histogram and the Health section too; the
/// run's versions are on the page, hidden, for when the filter box no longer holds the query.
#[test]
fn every_section_of_a_query_report_is_the_matches() {
    let (inputs, rollouts) = multi_agent_run();
    let tmp = tempfile::tempdir().unwrap();
    let page = tmp.path().join("q.html");
    let expr = "reward == 0";
    let run = common::write_report(&inputs, &rollouts, &page, &["--query", expr]);
    assert!(run.status.success(), "{}", common::output_text(&run));
    let keys = common::run_gymscope(&common::query_args(&inputs, &rollouts, expr));
    let n = String::from_utf8(keys.stdout).unwrap().lines().count();
    assert!(n > 0);
    let html = std::fs::read_to_string(&page).unwrap();
    // A table's column, as the numbers shown.
    let column = |id: &str, header: &str| -> Vec<f64> {
        let t = html.split(&format!("<table id=\"{id}\">")).nth(1).unwrap();
        let t = t.split("</table>").next().unwrap();
        let heads: Vec<&str> = t
            .split("</thead>")
            .next()
            .unwrap()
            .split("<th>")
            .skip(1)
            .map(|h| h.split("</th>").next().unwrap())
            .collect();
        let c = heads.iter().position(|h| *h == header).unwrap();
        let body = t.split("<tbody>").nth(1).unwrap();
        body.split("<tr><th>")
            .skip(1)
            .map(|row| {
                let cell = row.split("<td>").nth(c).unwrap();
                cell.split("</td>")
                    .next()
                    .unwrap()
                    .replace(',', "")
                    .parse()
                    .unwrap()
            })
            .collect()
    };
    let sum = |v: Vec<f64>| v.iter().sum::<f64>() as usize;
    assert_eq!(sum(column("agent-table-query", "rollouts")), n);
    assert!(column("agent-table-query", "mean/reward")
        .iter()
        .all(|&m| m == 0.0));
    assert!(
        sum(column("agent-table", "rollouts")) > n,
        "the run's table is kept"
    );
    assert_eq!(sum(column("repeat-table-query", "rollouts")), n);
    assert_eq!(sum(column("health-table-query", "rollouts")), n);
    // The histogram of the matches: one bar, at 0, of n rollouts.
    let hist = html.split("id=\"histogram-query\"").nth(1).unwrap();
    let hist = hist.split("</figure>").next().unwrap();
    assert_contains(hist, &format!("of the {n} matching rollouts"));
    for id in ["agents", "repeats", "health", "histogram", "figures"] {
        let open = html.split(&format!("id=\"{id}\"")).nth(1).unwrap();
        let open = open.split('>').next().unwrap();
        assert!(open.contains("data-of=\"run\" hidden"), "{id}: {open}");
        let query = html.split(&format!("id=\"{id}-query\"")).nth(1).unwrap();
        assert!(query.starts_with(" data-of=\"query\""), "{id}");
    }
}
