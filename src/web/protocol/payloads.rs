//! What some replies carry: a job's progress, its failure, a comparison shown.

use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
pub struct Progress {
    pub bytes: f64,
    pub total: f64,
    pub lines: u64,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Failure {
    pub message: String,
    /// The profile failed only because rollouts are missing: the page offers partial mode.
    pub missing_rollouts: bool,
}

impl From<String> for Failure {
    fn from(message: String) -> Failure {
        Failure {
            message,
            missing_rollouts: false,
        }
    }
}

impl From<&str> for Failure {
    fn from(message: &str) -> Failure {
        Failure::from(message.to_string())
    }
}

/// A comparison and its summary sections as the report renders them (escaped HTML).
#[derive(Serialize, Deserialize)]
pub struct Compared {
    pub comparison: crate::compare::Comparison,
    pub summary_html: String,
    /// How many workers read the runs' files.
    pub workers: u32,
    /// Every candidate's label (one: a plain A/B comparison), and the one shown.
    pub candidates: Vec<String>,
    pub candidate: usize,
}
