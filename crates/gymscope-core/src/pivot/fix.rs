//! `--fix`: a normalized copy that passes. Drops null fields of `responses_create_params` (the
//! skill's "omit null optional fields"), fills `agent_ref` from `--agent-ref` where it is missing,
//! re-checks each changed row, and lists the rows it could not fix with the reason.

use super::checks::RowChecker;
use super::tree::{self, Interest};
use super::PivotOptions;
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

pub struct Fixer {
    agent_ref: Option<String>,
    out: Vec<u8>,
    report: FixReport,
}

impl Fixer {
    pub fn new(agent_ref: Option<String>) -> Self {
        Fixer {
            agent_ref,
            out: Vec::new(),
            report: FixReport::default(),
        }
    }

    pub fn take_output(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.out)
    }

    pub fn into_report(self) -> FixReport {
        self.report
    }

    /// Handles one row: copies a valid row as it is, normalizes an invalid one.
    pub fn row(
        &mut self,
        line: u64,
        text: &str,
        valid: bool,
        options: &PivotOptions,
        groups: &[Vec<String>],
        interest: &Interest,
    ) {
        if valid {
            self.write(text);
            return;
        }
        let Ok(mut value) = super::depth::from_str::<Value>(text) else {
            self.report
                .unfixable
                .push((line, format!("line {line}: invalid JSON")));
            return;
        };
        normalize(&mut value, self.agent_ref.as_deref());
        let fixed = match serde_json::to_string(&value) {
            Ok(s) => s,
            Err(e) => {
                self.report
                    .unfixable
                    .push((line, format!("line {line}: {e}")));
                return;
            }
        };
        let row = match tree::parse(&fixed, interest) {
            Ok(row) => row,
            Err(e) => {
                self.report
                    .unfixable
                    .push((line, format!("line {line}: {e}")));
                return;
            }
        };
        let mut checker = RowChecker {
            options,
            any_field_groups: groups,
            line,
            fail_fast: true,
            findings: Vec::new(),
        };
        if checker.check(&row).is_some() {
            self.report.changed += 1;
            self.write(&fixed);
        } else {
            let reason = checker.findings[0].upstream_message();
            let hint = match checker.findings[0].check {
                super::checks::Check::R2 | super::checks::Check::A3 if self.agent_ref.is_none() => {
                    " (pass --agent-ref NAME to fill agent_ref)"
                }
                _ => "",
            };
            self.report
                .unfixable
                .push((line, format!("{reason}{hint}")));
        }
    }

    fn write(&mut self, text: &str) {
        self.out.extend_from_slice(text.as_bytes());
        self.out.push(b'\n');
        self.report.written += 1;
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
