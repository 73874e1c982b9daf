//! NeMo Gym's post-run rollout health checks, as upstream computes them at the pinned revision
//! (`nemo_gym/rollout_health.py` and `nemo_gym/health/checks.py` @9a974a9; docs/collect.md
//! "Observability"): the check catalog, the verdict rules and the
//! two report files `quality_summary.json` / `rollout_verdicts.jsonl`, byte for byte.
//!
//! Target-independent and streaming: [`EvidenceChecker::line`] turns one rollout line into a
//! [`Digest`] (the row is dropped at once), [`EvidenceChecker::finish`] marks duplicate
//! identities and reduces the digests into [`Reports`]. Check IDs are opaque strings.
//!
//! - `calls`: a trajectory's model calls: failed or not, bound to references, chained per model;
//! - `digest`: the rollout-level checks and the per-rollout statistics;
//! - `reduce`: task flags, coverage, the summary document and the verdict lines.

mod calls;
mod digest;
mod reduce;

pub use digest::{Digest, Index};
pub use reduce::Reports;

use serde_json::{Map, Value};

/// The fixed names of upstream's two report files (written beside the rollouts).
pub use super::upstream::{QUALITY_SUMMARY, ROLLOUT_VERDICTS};

/// The upstream revision these rules are read from.
pub const UPSTREAM_REVISION: &str = "9a974a9dc7b4d1c5abbc62bfcbe03e36a71560cf";

/// What evidence a check needs before it can say anything (upstream's `CheckInput`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Reads {
    /// The record alone (runner checks).
    Record,
    /// The trajectory's turns.
    Turns,
    /// Every captured model call, referenced or not (upstream's `OBSERVED_MODEL_CALLS`).
    ObservedCalls,
    /// Model calls bound through turn references only.
    TurnCalls,
    /// Model calls bound through turn or invocation references.
    OwnedCalls,
    /// Task level.
    Task,
}

struct Spec {
    id: &'static str,
    reads: Reads,
}

/// Upstream's `CHECK_REGISTRY`, in its order (the order of `issues` and `coverage`).
const REGISTRY: [Spec; 14] = [
    Spec {
        id: "check_execution_error",
        reads: Reads::Record,
    },
    Spec {
        id: "record_unreadable",
        reads: Reads::Record,
    },
    Spec {
        id: "rollout_duplicate_identity",
        reads: Reads::Record,
    },
    Spec {
        id: "rollout_missing_agent_turns",
        reads: Reads::Turns,
    },
    Spec {
        id: "rollout_ended_on_failed_model_call",
        reads: Reads::ObservedCalls,
    },
    Spec {
        id: "agent_turn_hollow",
        reads: Reads::Turns,
    },
    Spec {
        id: "model_call_zero_completion_tokens",
        reads: Reads::OwnedCalls,
    },
    Spec {
        id: "model_call_missing_token_counts",
        reads: Reads::OwnedCalls,
    },
    Spec {
        id: "trajectory_capture_mismatch",
        reads: Reads::OwnedCalls,
    },
    Spec {
        id: "model_call_failed",
        reads: Reads::OwnedCalls,
    },
    Spec {
        id: "rollout_token_count_mismatch",
        reads: Reads::TurnCalls,
    },
    Spec {
        id: "model_call_runaway_generation",
        reads: Reads::OwnedCalls,
    },
    Spec {
        id: "task_consistently_unhealthy",
        reads: Reads::Task,
    },
    Spec {
        id: "task_no_successful_model_calls",
        reads: Reads::Task,
    },
];

/// Every registered check id, in registry order.
pub fn check_ids() -> impl Iterator<Item = &'static str> {
    REGISTRY.iter().map(|s| s.id)
}

/// `--ignore-checks a,b` (or the Hydra list) as upstream normalizes it: split on commas,
/// trimmed, empty parts dropped, first occurrence kept; unknown ids are an error naming them.
pub fn normalize_ignored<S: AsRef<str>>(parts: &[S]) -> Result<Vec<String>, String> {
    let mut out: Vec<String> = Vec::new();
    for part in parts {
        for id in part.as_ref().split(',') {
            let id = id.trim();
            if !id.is_empty() && !out.iter().any(|o| o == id) {
                out.push(id.to_string());
            }
        }
    }
    let mut unknown: Vec<&str> = out
        .iter()
        .map(String::as_str)
        .filter(|id| !check_ids().any(|k| k == *id))
        .collect();
    unknown.sort_unstable();
    if unknown.is_empty() {
        Ok(out)
    } else {
        Err(format!(
            "Unknown rollout health check(s): {}",
            unknown.join(", ")
        ))
    }
}

/// A check's evidence (upstream's `Finding` without its subject, as the verdict file holds it).
/// The locator and detail are kept as the verdict file's compact JSON text: a run keeps every finding until the end, and one small
/// string costs a fraction of a map (an unreadable line's finding went from ~2 KB to ~150 bytes).
#[derive(Clone, Debug, PartialEq)]
pub struct Finding {
    pub check: &'static str,
    pub locator: Option<Box<str>>,
    /// A shared text where every such finding says the same (an unreadable line's).
    pub detail: std::borrow::Cow<'static, str>,
}

impl Finding {
    fn new(check: &'static str, locator: Option<Map<String, Value>>, detail: Value) -> Finding {
        // Pydantic's `exclude_none` drops a missing locator, never a null inside a detail
        // (v0.7.0 writes `"error_category": null`).
        let compact =
            |m: Map<String, Value>| -> Box<str> { Value::Object(m).to_string().into_boxed_str() };
        Finding {
            check,
            locator: locator.map(compact),
            detail: match detail {
                Value::Object(m) => String::from(compact(m)).into(),
                _ => "{}".into(),
            },
        }
    }

    /// A finding whose detail is `detail`, already the verdict file's compact JSON text.
    fn with_detail(
        check: &'static str,
        locator: Option<Map<String, Value>>,
        detail: &'static str,
    ) -> Finding {
        Finding {
            detail: detail.into(),
            ..Finding::new(check, locator, Value::Null)
        }
    }

    /// The detail as a JSON value.
    pub fn detail_value(&self) -> Value {
        serde_json::from_str(&self.detail).unwrap_or_default()
    }
}

/// The streaming checker: feed every non-empty line of the rollouts file(s), then finish.
pub struct EvidenceChecker {
    ignored: Vec<String>,
    digests: Vec<Digest>,
    ordinal: u64,
}

impl EvidenceChecker {
    /// `ignored` must have been through [`normalize_ignored`].
    pub fn new(ignored: Vec<String>) -> EvidenceChecker {
        EvidenceChecker {
            ignored,
            digests: Vec::new(),
            ordinal: 0,
        }
    }

    /// One line of rollouts file number `source` (0-based) at 1-based `line_number`, named
    /// `file` in `record_unreadable` locators. Blank lines are skipped, as upstream skips them.
    pub fn line(&mut self, file: &str, source: usize, line_number: u64, bytes: &[u8]) {
        if bytes.trim_ascii().is_empty() {
            return;
        }
        let d = digest::digest(
            &digest::LineAt {
                file,
                source,
                line_number,
                ordinal: self.ordinal,
            },
            bytes,
            &self.ignored,
        );
        self.ordinal += 1;
        self.digests.push(d);
    }

    /// Marks duplicate identities and reduces: the summary and the verdict lines.
    pub fn finish(mut self) -> Reports {
        digest::mark_duplicates(&mut self.digests, &self.ignored);
        reduce::reduce(self.digests, &self.ignored)
    }
}

#[cfg(test)]
mod tests;
