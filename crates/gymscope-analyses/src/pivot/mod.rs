//! Pivot datasets checked as upstream's validator checks them (upstream
//! `.agents/skills/nemo-gym-pivot-datasets/scripts/validate_pivot_dataset.py` @07d6b0d; docs/pivots.md
//! "`gymscope validate-pivot`"):
//! [`validate`] streams a file through the row checks ([`checks`], with Gym's model for
//! `--gym-repo`: [`gym_models`]), [`summary`] and [`stats`] count the valid rows, [`fix`] writes
//! the normalized copy; `inspect::pivot` lays a report out for the CLI's text and the page.

pub mod checked;
pub mod checks;
pub mod depth;
pub mod fix;
pub mod gym_models;
pub mod highlight;
pub mod pooled;
pub mod pyrepr;
pub mod rules;
pub mod stats;
pub mod summary;
pub mod tree;
pub mod validate;

pub use validate::{validate_bytes, PivotValidator, Report};

/// A typed list of dotted field paths (`a.b, c` or one per line), as the page takes
/// `--require-field` values.
pub fn split_field_list(text: &str) -> Vec<String> {
    text.split([',', '\n', ' '])
        .filter(|p| !p.is_empty())
        .map(String::from)
        .collect()
}

/// What to check, with upstream's flag meanings.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct PivotOptions {
    /// `--agent-ref`: every row's `agent_ref.name` must equal it.
    pub agent_ref: Option<String>,
    /// Off with `--no-check-tool-names`.
    pub check_tool_names: bool,
    /// `--require-field`, in order.
    pub require_fields: Vec<String>,
    /// `--require-any-field`, raw comma-separated groups, in order.
    pub require_any_fields: Vec<String>,
    /// Accept `function_call_batch` expected actions (the resource server does; upstream's
    /// validator does not).
    pub allow_batch: bool,
    /// Stop at the first error, as upstream does.
    pub fail_fast: bool,
    /// How many errors to keep in detail (all are counted).
    pub max_errors: usize,
    /// Collect `--stats` metrics.
    pub stats: bool,
    /// Produce a normalized copy (`--fix`).
    pub fix: bool,
    /// `--gym-repo`: also check `responses_create_params` against Gym's Pydantic model.
    pub gym_models: bool,
}

impl Default for PivotOptions {
    fn default() -> Self {
        PivotOptions {
            agent_ref: None,
            check_tool_names: true,
            require_fields: Vec::new(),
            require_any_fields: Vec::new(),
            allow_batch: false,
            fail_fast: false,
            max_errors: 50,
            stats: false,
            fix: false,
            gym_models: false,
        }
    }
}
