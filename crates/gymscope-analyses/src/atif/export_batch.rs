//! A rollouts file exported as NeMo Gym v0.7.0's `export_rollouts_to_atif` exports it
//! (`nemo_gym/atif_export.py`): every line is converted or refused with its line number, keys
//! must be unique, one agent per file (the agent version is the batch's), and the manifest
//! lists each file with its SHA-256. The face writes the files; this keeps the rules and the
//! bytes. Lines convert on any thread ([`LineConverter`], a `read::job` parse) and are recorded
//! in file order ([`Batch::record`]), so a file of any size needs the memory of a few batches.

use super::export::{agent_label, convert, encode, index};
use super::strict_json::{self, StrictError};
use crate::gym::keys;
use crate::read::batch::LineBatch;
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::collections::{BTreeSet, HashSet};

/// One exported trajectory: its file name in the output folder and its bytes.
pub struct Exported {
    pub file_name: String,
    pub bytes: Vec<u8>,
}

/// A line's conversion, made on any thread (`LineConverter`): what [`Batch::record`] needs of it
/// in file order, where the key and agent checks that span lines are made.
pub enum LineExport {
    /// Refused before its key was read: nothing of the batch changes.
    Refused(String),
    /// Its key, its agent label, and the rest of its conversion (the file's bytes, or why not).
    Keyed {
        task: u64,
        rollout: u64,
        agent: Option<String>,
        converted: Result<Exported, String>,
    },
}

/// Converts lines on their own (any thread): the batch's settings.
#[derive(Clone)]
pub struct LineConverter {
    session_id: String,
    agent_version: String,
}

impl LineConverter {
    /// Every line of `batch`, with its line number.
    pub fn batch(&self, batch: &LineBatch) -> Vec<(u64, LineExport)> {
        let lines = batch.lines();
        lines
            .map(|(span, line)| (span.line, self.line(span.line, line)))
            .collect()
    }

    /// Line `line_no` (1-based; without its newline), checked in upstream's order up to its key;
    /// the checks after the key's (a duplicate) come first when it is recorded.
    pub fn line(&self, line_no: u64, line: &[u8]) -> LineExport {
        match self.keyed(line_no, line) {
            Ok(keyed) => keyed,
            Err(message) => LineExport::Refused(message),
        }
    }

    fn keyed(&self, line_no: u64, line: &[u8]) -> Result<LineExport, String> {
        if line
            .iter()
            .all(|b| matches!(b, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c))
        {
            return Err(format!(
                "line {line_no}: blank JSONL records are not supported"
            ));
        }
        let text = std::str::from_utf8(line)
            .map_err(|_| format!("line {line_no}: invalid JSON (gymscope: not UTF-8)"))?;
        // A lone surrogate escape: Python reads it, and the row is refused at its path, after
        // the key checks (v0.7.0 `gym_rollout_to_atif` -> `_validate_json_value`).
        let mut surrogate = None;
        let parsed = match strict_json::parse(text) {
            Err(StrictError::Invalid(why)) => match super::surrogates::replaced(text) {
                Some(fixed) if matches!(strict_json::parse(&fixed), Ok(Value::Object(_))) => {
                    surrogate = super::surrogates::first_path(text);
                    strict_json::parse(&fixed)
                }
                _ => Err(StrictError::Invalid(why)),
            },
            other => other,
        };
        let row = match parsed {
            Ok(Value::Object(row)) => row,
            Ok(_) => return Err(format!("line {line_no}: expected a JSON object")),
            Err(StrictError::Invalid(why)) => {
                return Err(format!("line {line_no}: invalid JSON (gymscope: {why})"))
            }
            Err(wide @ StrictError::WideInteger(_)) => {
                return Err(format!("line {line_no}: {wide}"))
            }
        };
        let task = index(&row, keys::TASK_INDEX).ok_or_else(|| {
            format!(
                "line {line_no}.{}: expected a non-negative integer",
                keys::TASK_INDEX
            )
        })?;
        let rollout = index(&row, keys::ROLLOUT_INDEX).ok_or_else(|| {
            format!(
                "line {line_no}.{}: expected a non-negative integer",
                keys::ROLLOUT_INDEX
            )
        })?;
        let agent = match agent_label(&row) {
            Some(Value::String(label)) => Some(label.clone()),
            _ => None,
        };
        let converted = match surrogate {
            Some(path) => Err(format!(
                "line {line_no}: {path}: contains an unpaired Unicode surrogate and is not valid UTF-8 JSON"
            )),
            None => convert(&row, &self.session_id, &self.agent_version).map(|trajectory| {
                Exported {
                    file_name: format!("{task}-{rollout}.json"),
                    bytes: encode(&trajectory),
                }
            }),
        };
        Ok(LineExport::Keyed {
            task,
            rollout,
            agent,
            converted,
        })
    }
}

/// The export of one file: its lines converted anywhere ([`LineConverter`]) and recorded in
/// file order ([`Batch::record`]).
pub struct Batch {
    converter: LineConverter,
    keys: HashSet<(u64, u64)>,
    agent_names: BTreeSet<String>,
    manifest: Vec<String>,
    /// Upstream's reasons, `line N: ...`, in line order.
    pub errors: Vec<String>,
}

impl Batch {
    pub fn new(session_id: &str, agent_version: &str) -> Batch {
        Batch {
            converter: LineConverter {
                session_id: session_id.to_string(),
                agent_version: agent_version.to_string(),
            },
            keys: HashSet::new(),
            agent_names: BTreeSet::new(),
            manifest: Vec::new(),
            errors: Vec::new(),
        }
    }

    /// What converts its lines on other threads.
    pub fn converter(&self) -> &LineConverter {
        &self.converter
    }

    /// Converts and records line `line_no` (1-based; without its newline) on this thread.
    pub fn line(&mut self, line_no: u64, line: &[u8]) -> Option<Exported> {
        let export = self.converter.line(line_no, line);
        self.record(line_no, export)
    }

    /// Records a converted line, in file order. `None` when it was refused (the reason is in
    /// `errors`).
    pub fn record(&mut self, line_no: u64, export: LineExport) -> Option<Exported> {
        match self.keep(line_no, export) {
            Ok(exported) => Some(exported),
            Err(message) => {
                let prefix = format!("line {line_no}");
                self.errors.push(if message.starts_with(&prefix) {
                    message
                } else {
                    format!("{prefix}: {message}")
                });
                None
            }
        }
    }

    fn keep(&mut self, line_no: u64, export: LineExport) -> Result<Exported, String> {
        let (task, rollout, agent, converted) = match export {
            LineExport::Refused(message) => return Err(message),
            LineExport::Keyed {
                task,
                rollout,
                agent,
                converted,
            } => (task, rollout, agent, converted),
        };
        if !self.keys.insert((task, rollout)) {
            return Err(format!(
                "line {line_no}: duplicate Gym rollout key ({task}, {rollout})"
            ));
        }
        if let Some(label) = agent {
            self.agent_names.insert(label);
        }
        let exported = converted?;
        let digest = hex(&Sha256::digest(&exported.bytes));
        // Compact and key-sorted, as `json.dumps(sort_keys=True, separators=(",", ":"))`.
        self.manifest.push(format!(
            "{{\"{}\":{rollout},\"{}\":{task},\"expected_sha256\":\"{digest}\",\"trajectory_path\":\"{}\"}}",
            keys::ROLLOUT_INDEX,
            keys::TASK_INDEX,
            exported.file_name
        ));
        Ok(exported)
    }

    /// The manifest's bytes once every line is in, or upstream's error for the whole batch.
    pub fn finish(&self) -> Result<Vec<u8>, String> {
        if !self.errors.is_empty() {
            let details: Vec<String> = self.errors.iter().map(|e| format!("- {e}")).collect();
            return Err(format!(
                "ATIF export rejected {} row(s):\n{}",
                self.errors.len(),
                details.join("\n")
            ));
        }
        if self.manifest.is_empty() {
            return Err("Rollouts file contains no records".into());
        }
        if self.agent_names.len() != 1 {
            return Err(
                "Strict ATIF export requires one agent_ref.name per file because --agent-version is batch-scoped"
                    .into(),
            );
        }
        let mut out = self.manifest.join("\n").into_bytes();
        out.push(b'\n');
        Ok(out)
    }

    pub fn count(&self) -> usize {
        self.manifest.len()
    }
}

/// Lowercase hex SHA-256, as the manifest's `expected_sha256`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
