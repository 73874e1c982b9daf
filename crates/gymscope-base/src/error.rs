//! Everything that can stop a profile, each naming the file, line and (where known) column and
//! field, in the words upstream uses for the same check.

use std::fmt;

/// A rollout key, printed as upstream prints a Python tuple: `(3, 1)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RolloutKey {
    pub task: i64,
    pub rollout: i64,
}

impl fmt::Display for RolloutKey {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "({}, {})", self.task, self.rollout)
    }
}

/// Upstream's `Key list: [(0, 1), (2, 0)]` formatting.
pub struct KeyList<'a>(pub &'a [RolloutKey]);

impl fmt::Display for KeyList<'_> {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("[")?;
        for (i, k) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{k}")?;
        }
        f.write_str("]")
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ProfileError {
    #[error("Malformed JSON in '{file}' at line {line}, column {column}: {message}")]
    MalformedJson {
        file: String,
        line: u64,
        column: usize,
        message: String,
    },

    #[error("'{file}' line {line}: field `{field}` {problem}")]
    BadField {
        file: String,
        line: u64,
        field: &'static str,
        problem: String,
    },

    #[error(
        "Duplicate {what} row for rollout key {key}: '{file}' line {line} repeats line {first_line}"
    )]
    DuplicateKey {
        what: &'static str,
        key: RolloutKey,
        file: String,
        line: u64,
        first_line: u64,
    },

    #[error(
        "Rollout results contain rows with no matching materialized input rows. Found {count} extra \
         rollout rows. Extra rollout keys: {}. First extra row: '{file}' line {first_line}.",
        KeyList(keys)
    )]
    ExtraRollouts {
        count: usize,
        keys: Vec<RolloutKey>,
        file: String,
        first_line: u64,
    },

    #[error(
        "Materialized input rows and rollout results do not have matching rollout keys. Missing \
         rollout results for {count} materialized input rows. Missing rollout keys: {}. First \
         input row without a rollout: '{file}' line {first_line}.\n\nUse --allow-partial-rollouts \
         (or ++allow_partial_rollouts=True) to profile completed rollouts from a partial collection.",
        KeyList(keys)
    )]
    MissingRollouts {
        count: usize,
        keys: Vec<RolloutKey>,
        file: String,
        first_line: u64,
    },

    #[error(
        "'{file}' line {line} is longer than {limit} bytes (the limit; raise it with --max-line-bytes)"
    )]
    LineTooLong { file: String, line: u64, limit: u64 },

    // Not `source`: the cause is part of this message and must not be printed twice.
    #[error("Could not read '{file}': {cause}")]
    Io { file: String, cause: std::io::Error },
}

impl ProfileError {
    /// Missing rollouts without partial mode: the one error a partial profile would avoid.
    pub fn is_missing_rollouts(&self) -> bool {
        matches!(self, ProfileError::MissingRollouts { .. })
    }

    pub fn io(file: &str, cause: std::io::Error) -> Self {
        ProfileError::Io {
            file: file.to_string(),
            cause,
        }
    }
}
