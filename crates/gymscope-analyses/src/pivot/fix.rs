//! `--fix`: a normalized copy that passes. Drops null fields of `responses_create_params` (the
//! skill's "omit null optional fields"), fills `agent_ref` from `--agent-ref` where it is missing,
//! re-checks each changed row, and lists the rows it could not fix with the reason.

use super::checks::RowChecker;
use super::rules::Rules;
use super::tree;
use serde_json::{Map, Value};

#[derive(Debug, Default, PartialEq)]
pub struct FixReport {
    /// Rows written to the fixed copy.
    pub written: u64,
    /// Of those, rows that were changed.
    pub changed: u64,
    /// Rows left out, with upstream's message of what still fails.
    pub unfixable: Vec<(u64, String)>,
}

impl FixReport {
    /// Adds the rows of a run read after the earlier ones, its lines counted after `before`.
    pub fn add(&mut self, rows: &FixedRows, before: u64) {
        self.written += rows.written;
        self.changed += rows.changed;
        for (line, why) in &rows.unfixable {
            let line = line + before;
            // Upstream's `line N: ` prefix, numbered in the file (the run numbers from 1).
            self.unfixable.push((line, format!("line {line}: {why}")));
        }
    }
}

/// The fixed copy of a run of rows, and what became of them; lines numbered within the run.
#[derive(Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct FixedRows {
    /// The rows written, each with its newline.
    pub bytes: Vec<u8>,
    pub written: u64,
    pub changed: u64,
    /// Rows left out: line, and why without the `line N: ` prefix.
    pub unfixable: Vec<(u64, String)>,
}

/// Normalizes rows for the fixed copy.
pub struct Fixer {
    agent_ref: Option<String>,
}

impl Fixer {
    pub fn new(agent_ref: Option<String>) -> Self {
        Fixer { agent_ref }
    }

    /// Handles one row: copies a valid row as it is, normalizes an invalid one.
    pub fn row(&self, out: &mut FixedRows, line: u64, text: &str, valid: bool, rules: &Rules) {
        if valid {
            out.write(text);
            return;
        }
        let Ok(mut value) = super::depth::from_str::<Value>(text) else {
            out.unfixable.push((line, "invalid JSON".into()));
            return;
        };
        normalize(&mut value, self.agent_ref.as_deref());
        let fixed = match serde_json::to_string(&value) {
            Ok(s) => s,
            Err(e) => return out.unfixable.push((line, e.to_string())),
        };
        let row = match tree::parse(&fixed, &rules.interest) {
            Ok(row) => row,
            Err(e) => return out.unfixable.push((line, e.to_string())),
        };
        let mut checker = RowChecker {
            options: &rules.options,
            any_field_groups: &rules.any_field_groups,
            line,
            fail_fast: true,
            findings: Vec::new(),
        };
        if checker.check(&row).is_some() {
            out.changed += 1;
            out.write(&fixed);
        } else {
            // Upstream's message of the finding (`upstream_message` without its line prefix:
            // a row's checks never make file-level `E` findings).
            let reason = &checker.findings[0].message;
            let hint = match checker.findings[0].check {
                super::checks::Check::R2 | super::checks::Check::A3 if self.agent_ref.is_none() => {
                    " (pass --agent-ref NAME to fill agent_ref)"
                }
                _ => "",
            };
            out.unfixable.push((line, format!("{reason}{hint}")));
        }
    }
}

impl FixedRows {
    fn write(&mut self, text: &str) {
        self.bytes.extend_from_slice(text.as_bytes());
        self.bytes.push(b'\n');
        self.written += 1;
    }
}

/// The normalization itself; returns whether anything changed.
pub fn normalize(row: &mut Value, agent_ref: Option<&str>) -> bool {
    let Value::Object(obj) = row else {
        return false;
    };
    let mut changed = false;
    if let Some(Value::Object(params)) = obj.get_mut("responses_create_params") {
        let before = params.len();
        params.retain(|_, v| !v.is_null());
        changed |= params.len() != before;
    }
    if let Some(name) = agent_ref {
        match obj.get_mut("agent_ref") {
            Some(Value::Object(a)) => {
                if !a.get("type").is_some_and(Value::is_string) {
                    a.insert("type".into(), "responses_api_agents".into());
                    changed = true;
                }
                if a.get("name")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .is_empty()
                {
                    a.insert("name".into(), name.into());
                    changed = true;
                }
            }
            Some(Value::Null) | None => {
                let mut a = Map::new();
                a.insert("type".into(), "responses_api_agents".into());
                a.insert("name".into(), name.into());
                obj.insert("agent_ref".into(), Value::Object(a));
                changed = true;
            }
            Some(_) => {}
        }
    }
    changed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn drops_nulls_and_fills_agent_ref() {
        let mut row: Value = serde_json::from_str(
            r#"{"responses_create_params":{"input":[1],"metadata":null,"tools":[],"top_p":null},"expected_action":{}}"#,
        )
        .unwrap();
        assert!(normalize(&mut row, Some("my_agent")));
        assert_eq!(
            row.to_string(),
            r#"{"responses_create_params":{"input":[1],"tools":[]},"expected_action":{},"agent_ref":{"type":"responses_api_agents","name":"my_agent"}}"#
        );
        assert!(!normalize(&mut row, Some("my_agent")));
    }
}
