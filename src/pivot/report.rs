//! Renders a validation [`Report`]: upstream's lines first (so scripts that read them keep
//! working), then every error grouped by check; or one JSON document for machines.

use super::checks::{Check, Finding};
use super::Report;
use serde_json::{json, Value};

/// Text for stderr when the file is invalid: upstream's `validation failed: …` line, then
/// (unless fail-fast) each check with its count and the errors kept in detail.
pub fn failure_text(report: &Report) -> String {
    let Some(first) = &report.first else { return String::new() };
    let mut out = format!("validation failed: {}\n", first.upstream_message());
    if report.stopped_early {
        return out;
    }
    let total = report.total_errors();
    let rows = if report.counts.contains_key(&Check::E) { String::new() } else {
        format!(" in {} of {} rows", report.invalid_rows, report.rows)
    };
    out.push_str(&format!("\n{}: {total} error{}{rows}\n", report.file, if total == 1 { "" } else { "s" }));
    for (check, count) in &report.counts {
        out.push_str(&format!("\n[{}] {}: {count}\n", check.id(), check.title()));
        for f in report.findings.iter().filter(|f| f.check == *check) {
            let found = if f.found == "(missing)" { String::new() } else { format!(" (found {})", f.found) };
            out.push_str(&format!("  {}  {}{found}\n", location(&report.file, f), f.message));
        }
    }
    let shown = report.findings.len() as u64;
    if shown < total {
        out.push_str(&format!("\n(showing {shown} of {total} errors; --max-errors N shows more)\n"));
    }
    out
}

/// `file:line:column`, as editors and terminals link it.
pub fn location(file: &str, f: &Finding) -> String {
    match (f.check, f.column) {
        (Check::E, _) => file.to_string(),
        (_, Some(c)) => format!("{file}:{}:{c}", f.line),
        (_, None) => format!("{file}:{}", f.line),
    }
}

/// The whole report as JSON (`--format json`).
pub fn to_json(report: &Report) -> Value {
    let findings: Vec<Value> = report
        .findings
        .iter()
        .map(|f| {
            json!({
                "line": if f.check == Check::E { Value::Null } else { json!(f.line) },
                "column": f.column,
                "path": f.path.to_string(),
                "check": f.check.id(),
                "message": f.message,
                "upstream_message": f.upstream_message(),
                "found": f.found,
            })
        })
        .collect();
    let counts: serde_json::Map<String, Value> =
        report.counts.iter().map(|(c, n)| (c.id().to_string(), json!(n))).collect();
    let s = &report.summary;
    let mut doc = json!({
        "file": report.file,
        "valid": report.is_valid(),
        "rows": report.rows,
        "invalid_rows": report.invalid_rows,
        "errors_total": report.total_errors(),
        "errors_by_check": counts,
        "errors": findings,
        "stopped_early": report.stopped_early,
        "summary": {
            "rows": s.rows,
            "agent_ref": s.agents,
            "expected_tool": s.expected_tools,
            "expected_action_split": {"function_call": s.function_call, "message": s.message, "function_call_batch": s.function_call_batch},
            "input_items_total": s.input_items_total,
            "tools_total": s.tools_total,
        },
    });
    if let Some(fix) = &report.fix {
        doc["fix"] = json!({
            "written": fix.written,
            "changed": fix.changed,
            "unfixable": fix.unfixable.iter().map(|(line, why)| json!({"line": line, "reason": why})).collect::<Vec<_>>(),
        });
    }
    if let Some(stats) = &report.stats {
        doc["stats"] = json!({ "text": stats.text() });
    }
    doc
}
