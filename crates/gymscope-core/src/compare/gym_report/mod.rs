//! `gym eval compare`'s report (NeMo Gym v0.7.0 `nemo_gym/comparison/`): each run's
//! `*_aggregate_metrics.json` entries, the agents to compare, and `compare_report.json` in
//! upstream's schema (`schema.py`), `compare_report.md` in its layout (`report.py`) and the
//! lines it prints. gymscope's own analysis (paired verdicts, p-values, power) is added by the
//! caller under a key of its own, never in place of upstream's.
//!
//! - `load`: the entries of one aggregate file and the agent selection (`loading.py`);
//! - `diff`: metric rows, Welch intervals of the difference, flips and notes (`diff.py`);
//! - `markdown`: the Markdown report and the printed recap (`report.py`);
//! - `entries`: a run's entries from its own profile, when it has no aggregate file;
//! - `legacy`: the repeat-level metrics an older aggregate entry lacks, from its `rollout_infos`.

mod diff;
mod entries;
mod legacy;
mod load;
mod markdown;

pub use diff::compare_agent;
pub use entries::entries_from_profile;
pub use legacy::complete_legacy_entries;
pub use load::{read_entries, select_agents, Entries, RunFile, Selection};
pub use markdown::{key_metric_tables, recap_lines, render_markdown, KEY_METRIC_HEADERS};

use serde_json::{Map, Value};

/// The file names upstream writes (`report.py`).
pub const MARKDOWN_REPORT: &str = "compare_report.md";
pub const JSON_REPORT: &str = "compare_report.json";

/// The version written as `nemo_gym_version`: the upstream release these semantics are v0.7.0's.
pub const NEMO_GYM_VERSION: &str = "0.7.0";

/// `--report-format`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReportFormat {
    Md,
    Json,
    Both,
}

impl ReportFormat {
    pub fn markdown(self) -> bool {
        matches!(self, ReportFormat::Md | ReportFormat::Both)
    }
    pub fn json(self) -> bool {
        matches!(self, ReportFormat::Json | ReportFormat::Both)
    }
}

/// Everything `compare_report.json` holds (upstream's `ComparisonResult`), built by
/// [`build`].
#[derive(Clone, Debug)]
pub struct ComparisonResult {
    pub generated_at: String,
    pub command: String,
    pub baseline: RunFile,
    pub candidates: Vec<RunFile>,
    /// One per selected agent: upstream's `AgentComparison`, dumped.
    pub comparisons: Vec<Map<String, Value>>,
    pub skipped_agents: Map<String, Value>,
    pub warnings: Vec<String>,
}

/// Upstream's `build_comparison_result` after loading: the agent selection, then one comparison
/// per selected agent. Errors are upstream's messages (a `ConfigError` there).
pub fn build(
    baseline: RunFile,
    candidates: Vec<RunFile>,
    selection: &Selection,
    generated_at: String,
    command: String,
) -> Result<ComparisonResult, String> {
    let (picks, warnings, skipped_agents) = select_agents(&baseline, &candidates, selection)?;
    let mut comparisons = Vec::new();
    for (base_agent, cand_agents) in &picks {
        let base = baseline.loaded(base_agent);
        let cands: Vec<_> = candidates
            .iter()
            .zip(cand_agents)
            .map(|(f, a)| f.loaded(a))
            .collect();
        comparisons.push(compare_agent(&base, &cands)?);
    }
    Ok(ComparisonResult {
        generated_at,
        command,
        baseline,
        candidates,
        comparisons,
        skipped_agents,
        warnings,
    })
}

impl ComparisonResult {
    /// The document in upstream's key order (`ComparisonResult.model_dump(mode="json")`).
    pub fn to_value(&self) -> Value {
        let mut m = Map::new();
        m.insert("schema_version".into(), "1".into());
        m.insert("generated_at".into(), self.generated_at.clone().into());
        m.insert("nemo_gym_version".into(), NEMO_GYM_VERSION.into());
        m.insert("command".into(), self.command.clone().into());
        m.insert("baseline".into(), self.baseline.to_value());
        m.insert(
            "candidates".into(),
            self.candidates.iter().map(RunFile::to_value).collect(),
        );
        m.insert(
            "comparisons".into(),
            self.comparisons
                .iter()
                .cloned()
                .map(Value::Object)
                .collect(),
        );
        m.insert(
            "skipped_agents".into(),
            Value::Object(self.skipped_agents.clone()),
        );
        m.insert("warnings".into(), self.warnings.clone().into());
        Value::Object(m)
    }

    /// `compare_report.json`'s bytes: orjson's 2-space indent, no final newline.
    pub fn json_bytes(&self, extra: Option<(&str, &Value)>) -> Vec<u8> {
        let mut doc = self.to_value();
        if let (Some((k, v)), Value::Object(m)) = (extra, &mut doc) {
            m.insert(k.to_string(), v.clone());
        }
        let mut out = Vec::new();
        // Writing into a Vec cannot fail.
        let _ = crate::json::to_writer_orjson_pretty(&mut out, &doc);
        out
    }
}

#[cfg(test)]
mod tests;
