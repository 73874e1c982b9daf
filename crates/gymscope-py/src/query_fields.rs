//! A query's fields that no row of the run has: a comparison with such a field is false, so a
//! misspelled field gave a silent empty table (issue 57). `rollouts(…, strict=True)` refuses
//! the query, as `gymscope query --strict` does; without it, Python warns.

use gymscope::native::query_read::field_names;
use gymscope::query::rows::RowColumns;
use gymscope::query::{Field, Query};
use std::collections::BTreeSet;
use std::path::Path;

/// The top-level fields `query` names (a path's first part, and the path as written); none for
/// an expression that does not parse (the read reports it, with its column).
pub fn named(query: &str) -> Vec<(String, String)> {
    let Ok(q) = Query::parse(query) else {
        return Vec::new();
    };
    let mut out: Vec<(String, String)> = Vec::new();
    for f in q.fields() {
        if let Field::Path(path) = f {
            let entry = (path[0].clone(), path.join("."));
            if !out.contains(&entry) {
                out.push(entry);
            }
        }
    }
    out
}

/// The fields of `fields` whose top level no row has, and what the rows have.
pub fn missing(
    rollouts: &Path,
    fields: &[(String, String)],
    max_line: u64,
) -> anyhow::Result<Option<String>> {
    let present = field_names(rollouts, max_line)?;
    let absent: Vec<&str> = fields
        .iter()
        .filter(|(top, _)| !present.contains(top))
        .map(|(_, path)| path.as_str())
        .collect();
    Ok((!absent.is_empty()).then(|| describe(&absent, &present)))
}

fn describe(absent: &[&str], present: &BTreeSet<String>) -> String {
    let names: Vec<String> = absent.iter().map(|f| format!("`{f}`")).collect();
    let has: Vec<&str> = present.iter().map(String::as_str).collect();
    format!(
        "the run has no field {}: a comparison with it is false; its rows have: {}",
        names.join(", "),
        has.join(", ")
    )
}

/// `strict=True`: an error naming the fields no row has (one read of the run, as `--strict`).
pub fn refuse_missing(
    rollouts: &Path,
    fields: &[(String, String)],
    max_line: u64,
) -> anyhow::Result<()> {
    if fields.is_empty() {
        return Ok(());
    }
    match missing(rollouts, fields, max_line)? {
        Some(why) => Err(anyhow::anyhow!("{why}")),
        None => Ok(()),
    }
}

/// The warning for the fields no row has. A field that is a numeric column of the matches is
/// present; only when some is not is the run read again for its field names.
pub fn warn_missing(
    rollouts: &Path,
    fields: &[(String, String)],
    rows: &RowColumns,
    max_line: u64,
) -> anyhow::Result<Option<String>> {
    let unseen: Vec<(String, String)> = fields
        .iter()
        .filter(|(top, path)| !(top == path && rows.fields.contains(top)))
        .cloned()
        .collect();
    if unseen.is_empty() {
        return Ok(None);
    }
    Ok(missing(rollouts, &unseen, max_line)?.map(|why| as_warning(&why)))
}

/// The warning's text for what [`missing`] found.
pub fn as_warning(why: &str) -> String {
    format!("{why} (strict=True makes this an error)")
}
