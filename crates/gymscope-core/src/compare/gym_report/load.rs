//! One run's `*_aggregate_metrics.json` and which agents to compare (v0.7.0
//! `nemo_gym/comparison/loading.py`).

use serde_json::{Map, Value};
use std::collections::BTreeSet;

/// A file's entries: per agent name, its entry object, in the file's order.
pub type Entries = Vec<(String, Map<String, Value>)>;

/// What [`select_agents`] decides: the picks, the warnings, and the skipped agents per run.
pub type Selected = (Vec<Pick>, Vec<String>, Map<String, Value>);

/// One run as the report names it (upstream's `RunFile`), with its entries by agent.
#[derive(Clone, Debug)]
pub struct RunFile {
    /// `baseline` or `candidate`.
    pub role: &'static str,
    pub index: usize,
    /// The rollouts path as upstream resolves it (absolute).
    pub rollouts_path: String,
    pub aggregate_path: String,
    /// Per agent name, its entry, in the file's order.
    pub entries: Entries,
}

/// One side narrowed to one agent (upstream's `LoadedRun`).
#[derive(Clone, Debug)]
pub struct LoadedRun<'a> {
    pub agent: &'a str,
    pub agent_metrics: &'a Map<String, Value>,
    pub key_metrics: &'a Map<String, Value>,
    pub groups: &'a [Value],
    pub repeats: &'a [Value],
    pub num_repeats: Option<i64>,
    pub has_repeat_cis: bool,
}

/// Which agents the user asked for (`--agent`, `--baseline-agent`, `--candidate-agents`).
#[derive(Clone, Debug, Default)]
pub struct Selection {
    pub agent: Option<String>,
    pub baseline_agent: Option<String>,
    pub candidate_agents: Option<Vec<String>>,
}

static EMPTY_MAP: std::sync::LazyLock<Map<String, Value>> = std::sync::LazyLock::new(Map::new);

fn object_or_empty<'a>(entry: &'a Map<String, Value>, key: &str) -> &'a Map<String, Value> {
    entry
        .get(key)
        .and_then(Value::as_object)
        .unwrap_or(&EMPTY_MAP)
}

fn list_or_empty<'a>(entry: &'a Map<String, Value>, key: &str) -> &'a [Value] {
    entry
        .get(key)
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

impl RunFile {
    /// `label`: the name of the directory holding the rollouts, else the file's stem.
    pub fn label(&self) -> String {
        let p = std::path::Path::new(&self.rollouts_path);
        p.parent()
            .and_then(|d| d.file_name())
            .map(|n| n.to_string_lossy().into_owned())
            .filter(|n| !n.is_empty())
            .unwrap_or_else(|| {
                p.file_stem()
                    .map(|s| s.to_string_lossy().into_owned())
                    .unwrap_or_default()
            })
    }

    /// The agent names, sorted (code point order, as Python sorts).
    pub fn agent_names(&self) -> Vec<&str> {
        let mut names: Vec<&str> = self.entries.iter().map(|(n, _)| n.as_str()).collect();
        names.sort_unstable();
        names
    }

    fn has(&self, agent: &str) -> bool {
        self.entries.iter().any(|(n, _)| n == agent)
    }

    /// The run narrowed to `agent` (which [`select_agents`] checked is there).
    pub fn loaded<'a>(&'a self, agent: &'a str) -> LoadedRun<'a> {
        let entry = self
            .entries
            .iter()
            .find(|(n, _)| n == agent)
            .map_or(&*EMPTY_MAP, |(_, e)| e);
        let agent_metrics = object_or_empty(entry, "agent_metrics");
        let groups = list_or_empty(entry, "group_level_metrics");
        let repeats = list_or_empty(entry, "repeat_level_metrics");
        LoadedRun {
            agent,
            agent_metrics,
            key_metrics: object_or_empty(entry, "key_metrics"),
            groups,
            repeats,
            num_repeats: num_repeats(groups, repeats),
            has_repeat_cis: agent_metrics
                .keys()
                .any(|k| k.starts_with("ci_low_95_across_repeats/")),
        }
    }

    /// The `RunFile` part of the report (`role, index, rollouts_jsonl_fpath,
    /// aggregate_metrics_fpath, label, agent_names`).
    pub fn to_value(&self) -> Value {
        let mut m = Map::new();
        m.insert("role".into(), self.role.into());
        m.insert("index".into(), self.index.into());
        m.insert(
            "rollouts_jsonl_fpath".into(),
            self.rollouts_path.clone().into(),
        );
        m.insert(
            "aggregate_metrics_fpath".into(),
            self.aggregate_path.clone().into(),
        );
        m.insert("label".into(), self.label().into());
        m.insert("agent_names".into(), self.agent_names().into());
        Value::Object(m)
    }
}

/// The most repeats any task expected (`expected_num_rollouts`), else one per repeat-level
/// entry, else unknown (upstream's `_derive_num_repeats`).
pub(super) fn num_repeats(groups: &[Value], repeats: &[Value]) -> Option<i64> {
    let expected = groups
        .iter()
        .filter_map(|g| g.get("expected_num_rollouts"))
        .filter_map(|v| match v {
            Value::Bool(b) => Some(i64::from(*b)),
            other => other.as_i64(),
        })
        .max();
    expected.or_else(|| (!repeats.is_empty()).then_some(repeats.len() as i64))
}

/// The entries of one aggregate file by agent name, with upstream's errors (`path` as the
/// messages name it).
pub fn read_entries(bytes: &[u8], path: &str) -> Result<Entries, String> {
    let doc: Value =
        serde_json::from_slice(bytes).map_err(|e| format!("'{path}' is not valid JSON: {e}"))?;
    let Value::Array(items) = doc else {
        return Err(format!(
            "'{path}' is not a valid aggregate-metrics file (expected a JSON list of per-agent entries)."
        ));
    };
    if items.is_empty() {
        return Err(format!("'{path}' contains no agent entries."));
    }
    let mut entries: Entries = Vec::new();
    for (position, item) in items.into_iter().enumerate() {
        let Value::Object(entry) = item else {
            return Err(format!(
                "'{path}' entry {position} is not an object (expected a JSON list of per-agent entries)."
            ));
        };
        let name = entry
            .get("agent_ref")
            .and_then(|r| r.get("name"))
            .and_then(Value::as_str)
            .filter(|n| !n.is_empty())
            .map(str::to_string);
        let Some(name) = name else {
            return Err(format!(
                "'{path}' entry {position} has no `agent_ref.name`."
            ));
        };
        if entries.iter().any(|(n, _)| *n == name) {
            return Err(format!("'{path}' contains two entries for agent '{name}'."));
        }
        entries.push((name, entry));
    }
    Ok(entries)
}

fn sole_agent(f: &RunFile) -> Result<String, String> {
    if f.entries.len() == 1 {
        return Ok(f.entries[0].0.clone());
    }
    Err(format!(
        "The {} run's metrics at '{}' contain {} agents: {}. Set 'agent_name' to compare one of \
         them on both sides, or 'baseline_agent_name' / 'candidate_agent_names' to choose a \
         different agent per side.",
        f.role,
        f.aggregate_path,
        f.entries.len(),
        f.agent_names().join(", ")
    ))
}

fn require_agent(f: &RunFile, agent: &str) -> Result<(), String> {
    if f.has(agent) {
        return Ok(());
    }
    Err(format!(
        "Agent '{agent}' is not in '{}'. Available: {}.",
        f.aggregate_path,
        f.agent_names().join(", ")
    ))
}

/// A baseline agent and one agent per candidate.
pub type Pick = (String, Vec<String>);

/// Upstream's `resolve_agent_selections`: a per-side name beats `--agent`, which beats every
/// agent common to all runs (sorted); the others are listed as skipped, with a warning.
pub fn select_agents(
    baseline: &RunFile,
    candidates: &[RunFile],
    s: &Selection,
) -> Result<Selected, String> {
    let nonempty = |o: &Option<String>| o.clone().filter(|n| !n.is_empty());
    if s.baseline_agent.is_some() || s.candidate_agents.is_some() {
        let base = match nonempty(&s.baseline_agent).or_else(|| nonempty(&s.agent)) {
            Some(a) => a,
            None => sole_agent(baseline)?,
        };
        require_agent(baseline, &base)?;
        let mut picks = Vec::new();
        for (i, f) in candidates.iter().enumerate() {
            let explicit = s
                .candidate_agents
                .as_ref()
                .and_then(|v| v.get(i).cloned())
                .filter(|n| !n.is_empty());
            let agent = match explicit.or_else(|| nonempty(&s.agent)) {
                Some(a) => a,
                None => sole_agent(f)?,
            };
            require_agent(f, &agent)?;
            picks.push(agent);
        }
        return Ok((vec![(base, picks)], Vec::new(), Map::new()));
    }
    if let Some(agent) = nonempty(&s.agent) {
        for f in std::iter::once(baseline).chain(candidates) {
            require_agent(f, &agent)?;
        }
        let picks = vec![agent.clone(); candidates.len()];
        return Ok((vec![(agent, picks)], Vec::new(), Map::new()));
    }
    let mut matched: BTreeSet<&str> = baseline.entries.iter().map(|(n, _)| n.as_str()).collect();
    for f in candidates {
        matched.retain(|n| f.has(n));
    }
    if matched.is_empty() {
        let listing: Vec<String> = std::iter::once(baseline)
            .chain(candidates)
            .map(|f| {
                format!(
                    "  {} ({}): {}",
                    f.role,
                    f.aggregate_path,
                    f.agent_names().join(", ")
                )
            })
            .collect();
        return Err(format!(
            "No agent name is present in every run, so there is nothing to compare.\n{}\nSet \
             'agent_name' to force one agent on both sides, or 'baseline_agent_name' / \
             'candidate_agent_names' to pick a different agent per side.",
            listing.join("\n")
        ));
    }
    let mut warnings = Vec::new();
    let mut skipped = Map::new();
    for f in std::iter::once(baseline).chain(candidates) {
        let extras: Vec<&str> = f
            .agent_names()
            .into_iter()
            .filter(|n| !matched.contains(n))
            .collect();
        if !extras.is_empty() {
            let label = if f.role == "candidate" {
                format!("{}[{}]", f.role, f.index)
            } else {
                f.role.to_string()
            };
            warnings.push(format!(
                "Agent(s) {} are present only in {label} and were not compared.",
                extras.join(", ")
            ));
            skipped.insert(label, extras.into());
        }
    }
    let picks = matched
        .iter()
        .map(|n| (n.to_string(), vec![n.to_string(); candidates.len()]))
        .collect();
    Ok((picks, warnings, skipped))
}
