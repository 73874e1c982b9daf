//! The page: static HTML for everything readable without JavaScript (summary, tables, SVG
//! plots, conversations), the data as inert JSON, and the inline script and style, which the
//! Content-Security-Policy allows by their SHA-256 hashes and allows nothing else (no
//! `'unsafe-inline'`, no network: `default-src 'none'`).

use super::part::Part;
use super::{conv, data, svg, ReportInput};
use crate::html::escape;
use crate::table::Table;
use base64::Engine;
use sha2::{Digest, Sha256};
use std::fmt::Write;

/// The page's script, and the query language its filter box reads (docs/report.md "Filtering").
const SCRIPT: &str = concat!(include_str!("report.js"), include_str!("query.js"));
/// The report's style, also the base of other pages' (the comparison report's).
pub(crate) const STYLE: &str = include_str!("report.css");

/// Tasks shown in the static table; the script shows them all (from the data).
pub(super) const STATIC_TASK_ROWS: usize = 1_000;

fn csp_hash(code: &str) -> String {
    let digest = Sha256::digest(code.as_bytes());
    format!(
        "'sha256-{}'",
        base64::engine::general_purpose::STANDARD.encode(digest)
    )
}

/// The whole report. Same input, same bytes: nothing here reads a clock or iterates a hash map.
pub fn render(r: &ReportInput) -> String {
    let mut out = String::with_capacity(4 << 20);
    let title = if r.meta.title.is_empty() {
        "gymscope report"
    } else {
        &r.meta.title
    };
    page_head(&mut out, title, "gymscope report", SCRIPT, STYLE);
    header(&mut out, &r.meta, title);
    // What a reader looks at first: the key figures and the plot; the details below.
    figures(&mut out, r);
    plots(&mut out, r);
    summary(&mut out, r);
    let parts = &r.query_parts;
    let matching = r.query.as_ref().map(|q| {
        format!(
            "the {} matching rollouts",
            crate::figures::count(q.keys.len())
        )
    });
    let query_part = matching.as_deref().map(Part::Query);
    // The run's version of a section is hidden while the matches' is shown.
    let run_part = |has_query: bool| match (has_query, query_part) {
        (true, Some(_)) => Part::Run,
        _ => Part::Only,
    };
    if let (Some(part), Some(t)) = (query_part, &parts.agents) {
        agent_section(&mut out, t, part);
    }
    if let Some(t) = &r.agents {
        agent_section(&mut out, t, run_part(parts.agents.is_some()));
    }
    if let (Some(part), Some(t)) = (query_part, &parts.repeats) {
        repeat_section(&mut out, t, part);
    }
    if let Some(t) = &r.repeats {
        repeat_section(&mut out, t, run_part(parts.repeats.is_some()));
    }
    if let (Some(part), Some(h)) = (query_part, &parts.health) {
        super::health::section(&mut out, h, part);
    }
    if let Some(h) = &r.health {
        super::health::section(&mut out, h, run_part(parts.health.is_some()));
    }
    tasks(&mut out, r);
    out.push_str("<section id=\"details\"><h2>Tasks in detail</h2>");
    if r.conversations.is_empty() && r.prompts.is_empty() {
        out.push_str("<p class=\"note\">No conversations are included in this report.</p>");
    } else if let Some(q) = &r.query {
        let _ = write!(
            out,
            "<p class=\"note\">The rollouts matching <code>{}</code>, for the tasks listed here; \
             other tasks show their rollouts' numbers when opened from the table or the plot.</p>",
            escape(&q.source)
        );
    } else {
        out.push_str(
            "<p class=\"note\">Conversations are included for the tasks listed here; \
             other tasks show their rollouts' numbers when opened from the table or the plot.</p>",
        );
    }
    out.push_str("<div id=\"task-details\">");
    conv::details(&mut out, r);
    out.push_str("</div></section>\n<script type=\"application/json\" id=\"report-data\">");
    out.push_str(&data::data_json(r));
    out.push_str("</script>\n</body></html>\n");
    out
}

/// The page up to `<body>`: the Content-Security-Policy allows exactly the inline `script` and
/// `style` given (by hash) and nothing else. Shared by every self-contained page gymscope writes.
pub(crate) fn page_head(out: &mut String, title: &str, kind: &str, script: &str, style: &str) {
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; script-src {}; style-src {}; base-uri 'none'; form-action 'none'\">\
         <meta name=\"referrer\" content=\"no-referrer\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <meta name=\"generator\" content=\"gymscope {}\">\
         <title>{} · {}</title><style>{style}</style><script>{script}</script></head><body>\n",
        csp_hash(script),
        csp_hash(style),
        env!("CARGO_PKG_VERSION"),
        escape(title),
        escape(kind)
    );
}

/// The title and the sources' names and sizes (never their paths), and the date when given.
pub(crate) fn header(out: &mut String, meta: &super::ReportMeta, title: &str) {
    let _ = write!(out, "<header><h1>{}</h1><p class=\"meta\">", escape(title));
    for (i, s) in meta.sources.iter().enumerate() {
        if i > 0 {
            out.push_str(" · ");
        }
        let _ = write!(
            out,
            "<span class=\"source\">{}</span> ({})",
            escape(&s.name),
            bytes(s.bytes)
        );
    }
    if let Some(date) = &meta.date {
        let _ = write!(out, " · <span class=\"date\">{}</span>", escape(date));
    }
    out.push_str(" · made with gymscope</p></header>\n");
}

fn bytes(n: u64) -> String {
    match n {
        n if n >= 1 << 30 => format!("{:.1} GB", n as f64 / (1u64 << 30) as f64),
        n if n >= 1 << 20 => format!("{:.1} MB", n as f64 / (1u64 << 20) as f64),
        n if n >= 1 << 10 => format!("{:.1} KB", n as f64 / (1u64 << 10) as f64),
        n => format!("{n} bytes"),
    }
}

/// The key figures as cards, first on the page (each card's exact value in its tooltip). A
/// report made with a query opens on its matches' figures, named as such; the script shows the
/// run's again when the filter box no longer holds that query.
fn figures(out: &mut String, r: &ReportInput) {
    if let (Some(q), false) = (&r.query, r.query_parts.figures.is_empty()) {
        let _ = write!(
            out,
            "<section id=\"figures-query\" data-of=\"query\"><p class=\"note\">Figures of the {} rollouts matching \
             <code>{}</code>:</p><div class=\"figures\">",
            crate::figures::count(q.keys.len()),
            escape(&q.source)
        );
        cards(out, &r.query_parts.figures);
        out.push_str("</div></section>\n");
        out.push_str("<section id=\"figures\" class=\"figures\" data-of=\"run\" hidden>");
    } else if r.figures.is_empty() {
        return;
    } else {
        out.push_str("<section id=\"figures\" class=\"figures\">");
    }
    cards(out, &r.figures);
    out.push_str("</section>\n");
}

fn cards(out: &mut String, figures: &[crate::table::key_figures::KeyFigure]) {
    for f in figures {
        let _ = write!(
            out,
            "<div class=\"figure\" data-key=\"{}\" title=\"{}\"><div class=\"figure-value\">{}</div>\
             <div class=\"figure-label\">{}</div><div class=\"figure-detail\">{}</div></div>",
            escape(&f.key),
            escape(&f.exact),
            escape(&f.value),
            escape(&f.label),
            escape(&f.detail)
        );
    }
}

fn summary(out: &mut String, r: &ReportInput) {
    let [completion, input_rows] = r.summary.lines();
    let _ = write!(
        out,
        "<section id=\"summary\"><h2>Completion</h2><ul><li>{}</li><li>{}</li></ul>",
        escape(&completion),
        escape(&input_rows)
    );
    if !r.repeat_notes.is_empty() {
        out.push_str("<ul data-testid=\"repeat-notes\">");
        for note in &r.repeat_notes {
            let _ = write!(out, "<li>{}</li>", escape(note));
        }
        out.push_str("</ul>");
    }
    if let Some(note) = &r.summary_note {
        let _ = write!(out, "<p class=\"note\">{}</p>", escape(note));
    }
    for w in &r.warnings {
        let _ = write!(out, "<p class=\"warning\">Warning: {}</p>", escape(w));
    }
    out.push_str("</section>\n");
}

fn plots(out: &mut String, r: &ReportInput) {
    let p = &r.points;
    out.push_str("<section id=\"plots\"><h2>Rewards</h2><div class=\"plots\">");
    if let Some(x) = crate::plot::default_x(&p.fields) {
        let (shown, total) = svg::scatter_count(p, x);
        let _ = write!(
            out,
            "<figure id=\"scatter\"><figcaption>Reward × <span id=\"scatter-x-name\">{}</span>, one point per rollout \
             <span class=\"controls\" id=\"scatter-controls\" hidden><label>x: <select id=\"scatter-x\"></select></label> \
             <label><input type=\"checkbox\" id=\"scatter-overlay\" checked> binned mean<span id=\"scatter-overlay-label\" class=\"note\"></span></label> \
             <span id=\"scatter-legend\" class=\"legend\"></span></span></figcaption>\
             <div id=\"scatter-static\" class=\"nojs\">{}<p class=\"note\">{}</p></div>\
             <div id=\"scatter-live\" hidden><canvas id=\"scatter-canvas\" width=\"640\" height=\"300\"></canvas><div id=\"scatter-tip\" role=\"status\" hidden></div></div></figure>",
            escape(&p.fields[x]),
            svg::scatter(p, r.agents.as_ref(), x),
            if shown < total {
                format!("A sample of {shown} of {total} rollouts; with JavaScript the plot shows them all.")
            } else {
                format!("{total} rollouts.")
            }
        );
    }
    let run = match &r.query {
        Some(q) => {
            let matching = format!(
                "the {} matching rollouts",
                crate::figures::count(q.keys.len())
            );
            histogram(out, &r.query_parts.points.reward, Part::Query(&matching));
            Part::Run
        }
        None => Part::Only,
    };
    histogram(out, &p.reward, run);
    out.push_str("</div></section>\n");
}

fn histogram(out: &mut String, rewards: &[Option<f64>], part: Part) {
    let _ = write!(
        out,
        "<figure {}><figcaption>{}</figcaption>{}</figure>",
        part.attrs("histogram"),
        escape(&part.heading("Reward histogram")),
        svg::histogram(rewards)
    );
}

fn tasks(out: &mut String, r: &ReportInput) {
    let n = r.tasks.rows.len();
    out.push_str("<section id=\"tasks\"><h2>Tasks</h2>");
    if let Some(q) = &r.query {
        query_note(out, q, &r.points);
    }
    let _ = write!(
        out,
        "<div class=\"controls\" id=\"task-controls\" hidden><label>Rollouts where <input id=\"task-filter\" type=\"search\" size=\"48\" spellcheck=\"false\" \
         placeholder=\"e.g. task.group == &quot;mixed&quot; and reward == 0   or   `mean/reward` &lt; 0.5\"></label> <span id=\"task-count\"></span> \
         <span id=\"task-pager\"></span><div id=\"task-filter-error\" class=\"warning\"></div></div>\
         <div class=\"scroll nojs\" id=\"task-table-wrap\">"
    );
    table(out, &r.tasks, "task", STATIC_TASK_ROWS, "task-table");
    out.push_str("</div>");
    if n > STATIC_TASK_ROWS {
        let _ = write!(
            out,
            "<p class=\"note nojs\" id=\"task-static-note\">Without JavaScript the first {STATIC_TASK_ROWS} of {n} tasks are shown.</p>"
        );
    }
    out.push_str("</section>\n");
}

/// Rollouts shown by key in the static note on a query's matches (the script shows them all).
const STATIC_QUERY_KEYS: usize = 100;

/// The query the report was made with, its count and its first matches by key: readable
/// without JavaScript; with it, the filter box starts with the query.
fn query_note(out: &mut String, q: &super::ReportQuery, points: &super::Points) {
    let tasks = {
        let mut t: Vec<i64> = q.keys.iter().map(|k| k.0).collect();
        t.dedup();
        t.len()
    };
    let _ = write!(
        out,
        "<div id=\"report-query\"><p>Made with the query <code id=\"report-query-source\">{}</code>: \
         <span id=\"report-query-count\">{} of {} rollouts match, in {tasks} tasks</span>.</p>",
        escape(&q.source),
        q.keys.len(),
        points.len()
    );
    if !q.keys.is_empty() {
        out.push_str("<p class=\"note nojs\">Task:rollout ");
        for (i, (task, rollout)) in q.keys.iter().take(STATIC_QUERY_KEYS).enumerate() {
            if i > 0 {
                out.push_str(" · ");
            }
            let _ = write!(out, "{task}:{rollout}");
        }
        if q.keys.len() > STATIC_QUERY_KEYS {
            let _ = write!(out, " … and {} more", q.keys.len() - STATIC_QUERY_KEYS);
        }
        out.push_str("</p>");
    }
    out.push_str("</div>");
}

/// A section holding one per-agent table: `id` and `table_id` (suffixed in the matches'
/// version), its heading and an optional note.
fn table_section(
    out: &mut String,
    t: &Table,
    part: Part,
    [id, table_id, heading]: [&str; 3],
    note: Option<&str>,
) {
    let _ = write!(
        out,
        "<section {}><h2>{}</h2>",
        part.attrs(id),
        escape(&part.heading(heading))
    );
    if let Some(note) = note {
        let _ = write!(out, "<p class=\"note\">{note}</p>");
    }
    out.push_str("<div class=\"scroll\">");
    table(out, t, "agent", t.rows.len(), &part.id(table_id));
    out.push_str("</div></section>\n");
}

fn agent_section(out: &mut String, agents: &Table, part: Part) {
    table_section(
        out,
        agents,
        part,
        ["agents", "agent-table", "Agent metrics"],
        None,
    );
}

fn repeat_section(out: &mut String, repeats: &Table, part: Part) {
    let note = match part {
        Part::Query(_) => "Each repeat's mean reward over its matching rollouts, with its 95 % t interval.",
        _ => "Each repeat's mean reward over the agent's tasks, with its 95 % t interval (NeMo Gym's repeat-level metrics).",
    };
    table_section(
        out,
        repeats,
        part,
        ["repeats", "repeat-table", "Reward per repeat"],
        Some(note),
    );
}

fn table(out: &mut String, t: &Table, key: &str, max_rows: usize, id: &str) {
    let _ = write!(out, "<table id=\"{id}\"><thead><tr><th>{key}</th>");
    for h in &t.headers {
        let _ = write!(out, "<th>{}</th>", escape(h));
    }
    out.push_str("</tr></thead><tbody>");
    for row in t.rows.iter().take(max_rows) {
        let _ = write!(out, "<tr><th>{}</th>", escape(&row.key));
        for c in &row.cells {
            let _ = write!(out, "<td>{}</td>", escape(&c.text()));
        }
        out.push_str("</tr>");
    }
    out.push_str("</tbody></table>");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inline_code_cannot_end_its_element_early() {
        assert!(!SCRIPT.to_ascii_lowercase().contains("</script"));
        assert!(!STYLE.to_ascii_lowercase().contains("</style"));
    }
}
