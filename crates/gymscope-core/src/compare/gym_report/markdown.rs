//! `compare_report.md` in upstream's layout and the lines `gym eval compare` prints (v0.7.0
//! `nemo_gym/comparison/report.py`). Names from the files are written as upstream writes them,
//! unescaped, byte for byte; gymscope's own section (`compare::markdown`) escapes its own.

use super::diff::MAX_FLIPS_SHOWN;
use super::{ComparisonResult, JSON_REPORT, NEMO_GYM_VERSION};
use serde_json::{Map, Value};

const MISSING: &str = "—";

const CI_FOOTNOTE: &str = "Displayed baseline/candidate values and each delta use \
`mean_across_repeats/<metric>` when recorded, otherwise the metric value. Delta CI = two-sided \
independent-sample 95% Welch t-interval for candidate minus baseline, computed from the named \
metric's values in each run's `repeat_level_metrics`. `—` means the required interval data was \
unavailable: delta intervals require at least 2 finite repeat-level values on each side. \
Baseline/candidate CI = 95% t-interval of the per-repeat mean across repeats, read verbatim from \
`ci_{low,high}_95_across_repeats/<metric>` in `*_aggregate_metrics.json`.";

const DELTA_HEADER: &str = "Δ (cand − base)";

fn fmt(v: Option<f64>) -> String {
    match v {
        None => MISSING.into(),
        Some(v) if v.abs() < 10.0 => format!("{v:.4}"),
        Some(v) => format!("{v:.2}"),
    }
}

fn fmt_signed(v: Option<f64>) -> String {
    match v {
        None => MISSING.into(),
        Some(v) if v.abs() < 10.0 => format!("{v:+.4}"),
        Some(v) => format!("{v:+.2}"),
    }
}

fn num(m: &Value, k: &str) -> Option<f64> {
    m.get(k).and_then(Value::as_f64)
}

/// A side's shown value: the mean across repeats when recorded.
fn fmt_point(v: &Value) -> String {
    if v.is_null() {
        return MISSING.into();
    }
    fmt(num(v, "mean_across_repeats").or_else(|| num(v, "value")))
}

fn fmt_ci(v: &Value) -> String {
    match (num(v, "ci_low"), num(v, "ci_high")) {
        (Some(lo), Some(hi)) => format!("[{}, {}]", fmt(Some(lo)), fmt(Some(hi))),
        _ => MISSING.into(),
    }
}

fn fmt_delta_cell(c: &Value) -> String {
    let Some(delta) = num(c, "delta") else {
        return MISSING.into();
    };
    match num(c, "delta_pct") {
        None => format!("{} (n/a)", fmt_signed(Some(delta))),
        Some(p) => format!("{} ({p:+.1}%)", fmt_signed(Some(delta))),
    }
}

fn fmt_delta_ci(c: &Value) -> String {
    match (num(c, "delta_ci_low"), num(c, "delta_ci_high")) {
        (Some(lo), Some(hi)) => format!("[{}, {}]", fmt_signed(Some(lo)), fmt_signed(Some(hi))),
        _ => MISSING.into(),
    }
}

/// Python's `format(x, "g")`: six significant digits, trailing zeros dropped, scientific below
/// 1e-4 and from 1e6.
pub(crate) fn python_g(x: f64) -> String {
    if !x.is_finite() {
        return if x.is_nan() {
            "nan".into()
        } else if x > 0.0 {
            "inf".into()
        } else {
            "-inf".into()
        };
    }
    if x == 0.0 {
        return if x.is_sign_negative() {
            "-0".into()
        } else {
            "0".into()
        };
    }
    let sci = format!("{x:.5e}");
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let trim = |s: String| -> String {
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s
        }
    };
    if (-4..6).contains(&exp) {
        let decimals = usize::try_from(5 - exp).unwrap_or(0);
        trim(format!("{x:.decimals$}"))
    } else {
        let sign = if exp < 0 { '-' } else { '+' };
        format!("{}e{sign}{:02}", trim(mantissa.to_string()), exp.abs())
    }
}

fn fmt_rewards(v: &Value) -> String {
    match v.as_array() {
        Some(a) if !a.is_empty() => a
            .iter()
            .map(|r| python_g(r.as_f64().unwrap_or(f64::NAN)))
            .collect::<Vec<_>>()
            .join(", "),
        _ => MISSING.into(),
    }
}

fn table(header: &[String], align: &[&str], rows: &[Vec<String>]) -> Vec<String> {
    let mut out = vec![
        format!("| {} |", header.join(" | ")),
        format!("|{}|", align.join("|")),
    ];
    out.extend(rows.iter().map(|r| format!("| {} |", r.join(" | "))));
    out
}

/// A name in a code span, as upstream writes it: as it is, byte for byte (a backtick or a `|`
/// in a name breaks the span or the row in v0.7.0's file too; gymscope's own section escapes).
fn code(s: &str) -> String {
    format!("`{s}`")
}

fn candidate_labels(n: usize) -> Vec<String> {
    if n == 1 {
        vec!["Candidate".into()]
    } else {
        (1..=n).map(|i| format!("Candidate {i}")).collect()
    }
}

fn strs(v: &Value) -> Vec<String> {
    v.as_array()
        .map(|a| {
            a.iter()
                .map(|x| x.as_str().unwrap_or("").to_string())
                .collect()
        })
        .unwrap_or_default()
}

fn opt_count(v: &Value) -> String {
    v.as_i64().map_or("unknown".into(), |n| n.to_string())
}

fn run_summary(r: &ComparisonResult, c: &Map<String, Value>) -> Vec<String> {
    let labels = candidate_labels(r.candidates.len());
    let mut header = vec![String::new(), "Baseline".into()];
    header.extend(labels);
    let row = |name: &str, base: String, cands: Vec<String>| {
        let mut v = vec![name.to_string(), base];
        v.extend(cands);
        v
    };
    let counts: Vec<String> = c["candidate_task_counts"]
        .as_array()
        .map(|a| a.iter().map(ToString::to_string).collect())
        .unwrap_or_default();
    let repeats: Vec<String> = c["candidate_repeat_counts"]
        .as_array()
        .map(|a| a.iter().map(opt_count).collect())
        .unwrap_or_default();
    let rows = vec![
        row(
            "Run",
            code(&r.baseline.label()),
            r.candidates.iter().map(|f| code(&f.label())).collect(),
        ),
        row(
            "Rollouts",
            code(&r.baseline.rollouts_path),
            r.candidates
                .iter()
                .map(|f| code(&f.rollouts_path))
                .collect(),
        ),
        row(
            "Aggregate metrics",
            code(&r.baseline.aggregate_path),
            r.candidates
                .iter()
                .map(|f| code(&f.aggregate_path))
                .collect(),
        ),
        row(
            "Agent",
            code(c["baseline_agent"].as_str().unwrap_or("")),
            strs(&c["candidate_agents"])
                .iter()
                .map(|a| code(a))
                .collect(),
        ),
        row("Tasks", c["baseline_task_count"].to_string(), counts),
        row("Repeats", opt_count(&c["baseline_repeat_count"]), repeats),
    ];
    let align = vec!["---"; header.len()];
    table(&header, &align, &rows)
}

fn metric_table(rows: &[&Value], labels: &[String]) -> Vec<String> {
    let mut header: Vec<String> = vec![
        "Metric".into(),
        DELTA_HEADER.into(),
        format!("95% CI for {DELTA_HEADER}"),
        "Baseline".into(),
        "Baseline 95% CI".into(),
    ];
    let mut align = vec!["---", "---:", "---", "---:", "---"];
    for l in labels {
        header.push(l.clone());
        header.push(format!("{l} 95% CI"));
        align.extend(["---:", "---"]);
    }
    let body: Vec<Vec<String>> = rows
        .iter()
        .map(|row| {
            let cands = row["candidates"].as_array().cloned().unwrap_or_default();
            let mut cells = vec![
                code(row["metric"].as_str().unwrap_or("")),
                cands
                    .iter()
                    .map(fmt_delta_cell)
                    .collect::<Vec<_>>()
                    .join(" / "),
                cands
                    .iter()
                    .map(fmt_delta_ci)
                    .collect::<Vec<_>>()
                    .join(" / "),
                fmt_point(&row["baseline"]),
                fmt_ci(&row["baseline"]),
            ];
            for c in &cands {
                cells.push(fmt_point(c));
                cells.push(fmt_ci(c));
            }
            cells
        })
        .collect();
    table(&header, &align, &body)
}

fn flip_section(s: &Value, label: &str) -> Vec<String> {
    let mut lines = vec![format!("### Sample flips{label}"), String::new()];
    let field = s["field"].as_str().unwrap_or("reward");
    let count = |k: &str| s[k].as_i64().unwrap_or(0);
    let flips = s["flips"].as_array().cloned().unwrap_or_default();
    match s["mode"].as_str() {
        Some("unavailable") | None => {
            lines.push(format!(
                "Not available: {}",
                s["reason"].as_str().unwrap_or("None")
            ));
            lines.push(String::new());
            return lines;
        }
        Some("binary") => {
            lines.push(format!(
                "Field: `{field}` (task mean over its repeats). A task passes when its mean is above 0.5."
            ));
            lines.push(String::new());
            lines.push(format!(
                "**{} common tasks · {} pass→fail · {} fail→pass · net {:+} · {} unchanged · {} tied**",
                count("common_task_count"),
                count("pass_to_fail_count"),
                count("fail_to_pass_count"),
                count("net"),
                count("unchanged_count"),
                count("tied_count"),
            ));
            lines.push(String::new());
        }
        Some(_) => {
            lines.push(format!(
                "Rewards are not binary, so this lists the largest per-task changes in `{field}` rather than pass/fail flips."
            ));
            lines.push(String::new());
            lines.push(format!(
                "**{} common tasks · {} changed · {} unchanged**",
                count("common_task_count"),
                flips.len(),
                count("unchanged_count"),
            ));
            lines.push(String::new());
        }
    }
    let mut per_direction = std::collections::HashMap::new();
    let shown: Vec<&Value> = flips
        .iter()
        .filter(|f| {
            let n = per_direction
                .entry(f["direction"].as_str().unwrap_or("").to_string())
                .or_insert(0usize);
            *n += 1;
            *n <= MAX_FLIPS_SHOWN
        })
        .collect();
    if !shown.is_empty() {
        let header: Vec<String> = [
            "Task",
            "Direction",
            "Baseline",
            "Candidate",
            "Δ",
            "Baseline per-repeat",
            "Candidate per-repeat",
        ]
        .map(String::from)
        .to_vec();
        let body: Vec<Vec<String>> = shown
            .iter()
            .map(|f| {
                vec![
                    f["task_index"].to_string(),
                    f["direction"].as_str().unwrap_or("").replace("_to_", "→"),
                    fmt(num(f, "baseline_score")),
                    fmt(num(f, "candidate_score")),
                    fmt_signed(num(f, "delta")),
                    fmt_rewards(&f["baseline_rewards"]),
                    fmt_rewards(&f["candidate_rewards"]),
                ]
            })
            .collect();
        lines.extend(table(
            &header,
            &["---:", "---", "---:", "---:", "---:", "---", "---"],
            &body,
        ));
        let remaining = flips.len() - shown.len();
        if remaining > 0 {
            lines.push(String::new());
            lines.push(format!(
                "… and {remaining} more (full list in `compare_report.json`)."
            ));
        }
        lines.push(String::new());
    }
    lines.push(
        "Tasks are joined on `_ng_task_index`. `*_aggregate_metrics.json` carries no task \
         identity, so flips are reported by index only — this assumes both runs used the same \
         dataset, split, `--limit` and ordering."
            .into(),
    );
    lines.push(String::new());
    lines
}

/// `compare_report.md` (upstream's `render_markdown`), then `extra` (gymscope's own analysis)
/// before the closing rule when given.
pub fn render_markdown(r: &ComparisonResult, extra: Option<&str>) -> String {
    let labels = candidate_labels(r.candidates.len());
    let mut lines: Vec<String> = vec!["# gym eval compare".into(), String::new()];
    for c in &r.comparisons {
        if r.comparisons.len() > 1 {
            lines.push(format!(
                "## Agent: {}",
                code(c["baseline_agent"].as_str().unwrap_or(""))
            ));
            lines.push(String::new());
        }
        lines.extend(run_summary(r, c));
        lines.extend([
            String::new(),
            format!(
                "Generated {} by nemo-gym {NEMO_GYM_VERSION}.",
                r.generated_at
            ),
            String::new(),
            format!("Command: {}", code(&r.command)),
            String::new(),
        ]);
        let metrics: Vec<&Value> = c["metrics"]
            .as_array()
            .map(|a| a.iter().collect())
            .unwrap_or_default();
        let is_key = |m: &&Value| m["is_key_metric"].as_bool() == Some(true);
        let key_rows: Vec<&Value> = metrics.iter().copied().filter(is_key).collect();
        let other_rows: Vec<&Value> = metrics.iter().copied().filter(|m| !is_key(m)).collect();
        lines.extend(["### Key metrics".into(), String::new()]);
        if key_rows.is_empty() {
            lines.push("No key metrics were recorded for this agent.".into());
        } else {
            lines.extend(metric_table(&key_rows, &labels));
        }
        lines.extend([String::new(), CI_FOOTNOTE.into(), String::new()]);
        if !other_rows.is_empty() {
            lines.extend([
                "<details>".into(),
                format!(
                    "<summary>All other metrics ({} rows)</summary>",
                    other_rows.len()
                ),
                String::new(),
            ]);
            lines.extend(metric_table(&other_rows, &labels));
            lines.extend([String::new(), "</details>".into(), String::new()]);
        }
        let flips = c["flips"].as_array().cloned().unwrap_or_default();
        for (i, s) in flips.iter().enumerate() {
            let label = if flips.len() > 1 {
                format!(" — {}", labels.get(i).cloned().unwrap_or_default())
            } else {
                String::new()
            };
            lines.extend(flip_section(s, &label));
        }
        let one_sided: Vec<&Value> = metrics
            .iter()
            .copied()
            .filter(|m| m["present_in"].as_array().map_or(0, Vec::len) < 1 + r.candidates.len())
            .collect();
        if !one_sided.is_empty() {
            lines.extend([
                "### Metrics present in only one run".into(),
                String::new(),
                "Metric names embed the repeat count (`pass@1[avg-of-3]` vs `pass@1[avg-of-5]`), so \
                 runs collected with different `--num-repeats` will not line these up."
                    .into(),
                String::new(),
            ]);
            for m in one_sided {
                let sides = strs(&m["present_in"]).join(", ");
                let sides = if sides.is_empty() {
                    "no numeric value on either side".to_string()
                } else {
                    sides
                };
                lines.push(format!(
                    "- {} — {sides}",
                    code(m["metric"].as_str().unwrap_or(""))
                ));
            }
            lines.push(String::new());
        }
        let notes = strs(&c["notes"]);
        if !notes.is_empty() {
            lines.extend(["### Notes".into(), String::new()]);
            lines.extend(notes.iter().map(|n| format!("- {n}")));
            lines.push(String::new());
        }
    }
    if !r.warnings.is_empty() {
        lines.extend(["## Warnings".into(), String::new()]);
        lines.extend(r.warnings.iter().map(|w| format!("- {w}")));
        lines.push(String::new());
    }
    if let Some(extra) = extra {
        lines.push(extra.trim_end().to_string());
        lines.push(String::new());
    }
    lines.extend([
        "---".into(),
        format!(
            "Generated by `gym eval compare` (nemo-gym {NEMO_GYM_VERSION}). Machine-readable \
             output: `{JSON_REPORT}` (schema_version 1)."
        ),
        String::new(),
    ]);
    lines.join("\n")
}

/// The lines printed after the files are written (upstream's `summary_lines`).
pub fn recap_lines(r: &ComparisonResult, written: &[String]) -> Vec<String> {
    let mut lines = vec![format!("Baseline:  {}", r.baseline.aggregate_path)];
    lines.extend(
        r.candidates
            .iter()
            .map(|f| format!("Candidate: {}", f.aggregate_path)),
    );
    let mut agents: Vec<&str> = r
        .comparisons
        .iter()
        .filter_map(|c| c["baseline_agent"].as_str())
        .collect();
    agents.sort_unstable();
    agents.dedup();
    lines.push(format!("Agents compared: {}", agents.join(", ")));
    for c in &r.comparisons {
        for s in c["flips"].as_array().into_iter().flatten() {
            let n = |k: &str| s[k].as_i64().unwrap_or(0);
            lines.push(match s["mode"].as_str() {
                Some("binary") => format!(
                    "Sample flips: {} fail→pass, {} pass→fail over {} common tasks",
                    n("fail_to_pass_count"),
                    n("pass_to_fail_count"),
                    n("common_task_count")
                ),
                Some("continuous") => format!(
                    "Per-task changes: {} of {} common tasks moved",
                    s["flips"].as_array().map_or(0, Vec::len),
                    n("common_task_count")
                ),
                _ => format!(
                    "Sample flips unavailable: {}",
                    s["reason"].as_str().unwrap_or("None")
                ),
            });
        }
    }
    lines.extend(written.iter().map(|p| format!("Wrote: {p}")));
    lines
}

/// The terminal's key-metrics tables (upstream prints them with Rich): per compared agent, its
/// name and the rows under [`KEY_METRIC_HEADERS`], first candidate only as upstream shows.
pub fn key_metric_tables(r: &ComparisonResult) -> Vec<(String, Vec<Vec<String>>)> {
    r.comparisons
        .iter()
        .map(|c| {
            let rows = c["metrics"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|m| m["is_key_metric"].as_bool() == Some(true))
                .map(|m| {
                    let cand = m["candidates"].get(0).unwrap_or(&Value::Null);
                    vec![
                        m["metric"].as_str().unwrap_or("").to_string(),
                        fmt_delta_cell(cand),
                        fmt_delta_ci(cand),
                        fmt_point(&m["baseline"]),
                        fmt_ci(&m["baseline"]),
                        fmt_point(cand),
                        fmt_ci(cand),
                    ]
                })
                .collect();
            (c["baseline_agent"].as_str().unwrap_or("").to_string(), rows)
        })
        .collect()
}

/// The columns of [`key_metric_tables`].
pub const KEY_METRIC_HEADERS: [&str; 7] = [
    "Metric",
    DELTA_HEADER,
    "95% CI for Δ (cand − base)",
    "Baseline",
    "Baseline 95% CI",
    "Candidate",
    "Candidate 95% CI",
];
