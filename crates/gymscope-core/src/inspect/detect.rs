//! Recognizes a dropped file by its content (its first line), not only by its name.

use serde_json::Value;

#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum FileKind {
    MaterializedInputs,
    Rollouts,
    /// `*_reward_profiling.jsonl` (upstream's or gymscope's).
    RewardProfiling,
    /// `*_agent_metrics.json`.
    AgentMetrics,
    /// A pivot dataset row (`expected_action`).
    Pivot,
    /// NeMo Gym v0.6's `quality_summary.json` (an object with `run.verdicts` / `run.issues`).
    QualitySummary,
    /// NeMo Gym v0.6's `rollout_verdicts.jsonl` (rows with `verdict`, `findings`, `unobserved`).
    RolloutVerdicts,
    /// An ATIF trajectory (any agent's; Gym's export writes one per rollout).
    Atif,
    /// The `manifest.jsonl` of Gym's ATIF export (each file's indices and SHA-256).
    AtifManifest,
    Unknown,
}

impl FileKind {
    pub fn label(self) -> &'static str {
        match self {
            FileKind::MaterializedInputs => "materialized inputs",
            FileKind::Rollouts => "rollouts",
            FileKind::RewardProfiling => "reward profile (*_reward_profiling.jsonl)",
            FileKind::AgentMetrics => "agent metrics (*_agent_metrics.json)",
            FileKind::Pivot => "pivot dataset",
            FileKind::QualitySummary => "NeMo Gym health summary (quality_summary.json)",
            FileKind::RolloutVerdicts => "NeMo Gym rollout verdicts (rollout_verdicts.jsonl)",
            FileKind::Atif => "ATIF trajectory",
            FileKind::AtifManifest => "ATIF export manifest (manifest.jsonl)",
            FileKind::Unknown => "not recognized",
        }
    }
}

/// Classifies a file from its first bytes (at least its first line) and its name.
pub fn classify(head: &[u8], file_name: &str) -> FileKind {
    let text = String::from_utf8_lossy(head);
    let text = text.trim_start_matches('\u{feff}').trim_start();
    if text.starts_with('[') {
        // agent metrics: a JSON list of objects with `agent_ref` and `mean/...` keys
        if text.contains("\"agent_ref\"") && (text.contains("\"mean/") || text.starts_with("[]")) {
            return FileKind::AgentMetrics;
        }
        return if file_name.ends_with("_agent_metrics.json") {
            FileKind::AgentMetrics
        } else {
            FileKind::Unknown
        };
    }
    let first = text.lines().next().unwrap_or_default();
    if text.starts_with('{') && is_atif_head(text) {
        return FileKind::Atif;
    }
    if first.trim_end() == "{" {
        // A pretty-printed object: upstream's `quality_summary.json` is the one such run file.
        return if is_quality_summary(text) {
            FileKind::QualitySummary
        } else {
            FileKind::Unknown
        };
    }
    let Ok(Value::Object(row)) = serde_json::from_str::<Value>(first) else {
        // A first line longer than the head read: look for the telling keys in what we have.
        return by_keys_in_text(first).unwrap_or_else(|| by_name(file_name));
    };
    let has = |k: &str| row.contains_key(k);
    if has("trajectory_path") && has("expected_sha256") {
        return FileKind::AtifManifest;
    }
    if row.get("verdict").is_some_and(Value::is_string) && has("findings") && has("unobserved") {
        // Before the index keys' rule: verdict rows carry `_ng_rollout_index` too.
        FileKind::RolloutVerdicts
    } else if row
        .get("run")
        .is_some_and(|r| r.get("verdicts").is_some_and(Value::is_object))
    {
        FileKind::QualitySummary
    } else if is_profile_row(&row) {
        FileKind::RewardProfiling
    } else if has("_ng_rollout_index") && !(has("response") || has("reward")) {
        // A collected run's row (a pivot dataset's too, once materialized for collection).
        FileKind::MaterializedInputs
    } else if has("expected_action") && !has("_ng_rollout_index") {
        FileKind::Pivot
    } else if has("response") || has("reward") {
        FileKind::Rollouts
    } else if has("responses_create_params") {
        FileKind::MaterializedInputs
    } else {
        by_name(file_name)
    }
}

/// A task row of `*_reward_profiling.jsonl`, told by what only such a row has: no
/// `_ng_rollout_index` of its own (every rollout row and materialized row has one; a task row's
/// are inside `rollout_infos`) and `rollout_infos` or a derived `mean/…` key. A rollout may carry
/// a field named `mean/…` (v0.7.0 profiles it as `mean/mean/…`).
fn is_profile_row(row: &serde_json::Map<String, Value>) -> bool {
    let has = |k: &str| row.contains_key(k);
    !has("_ng_rollout_index")
        && (has("rollout_infos")
            || (has("_ng_task_index") && row.keys().any(|k| k.starts_with("mean/"))))
}

/// [`is_profile_row`] on a line's text: a task row's own keys come before its `rollout_infos`,
/// whose rollouts have `_ng_rollout_index`.
fn is_profile_text(text: &str) -> bool {
    let at = |k: &str| text.find(&format!("\"{k}\":"));
    let rollout = at("_ng_rollout_index");
    match at("rollout_infos") {
        Some(infos) => rollout.is_none_or(|r| r > infos),
        // Before `rollout_infos`, a task row has no `reward` or `response` either.
        None => {
            rollout.is_none()
                && at("reward").is_none()
                && at("response").is_none()
                && at("_ng_task_index").is_some()
                && text.contains("\"mean/")
        }
    }
}

/// For a truncated first line: the keys that tell the kinds apart, as they appear in the text.
fn by_keys_in_text(text: &str) -> Option<FileKind> {
    let has = |k: &str| text.contains(&format!("\"{k}\":"));
    if has("verdict") && has("findings") && has("unobserved") && !has("response") {
        Some(FileKind::RolloutVerdicts)
    } else if is_profile_text(text) {
        Some(FileKind::RewardProfiling)
    } else if has("_ng_rollout_index") && !(has("response") || has("reward")) {
        Some(FileKind::MaterializedInputs)
    } else if has("expected_action") && !has("_ng_rollout_index") {
        Some(FileKind::Pivot)
    } else if has("response") || has("reward") {
        Some(FileKind::Rollouts)
    } else if has("responses_create_params") {
        Some(FileKind::MaterializedInputs)
    } else {
        None
    }
}

/// An object whose `schema_version` names ATIF (`"ATIF-v1.7"`), near its start as every
/// writer puts it.
fn is_atif_head(text: &str) -> bool {
    let end = (0..=text.len().min(4096))
        .rev()
        .find(|&i| text.is_char_boundary(i))
        .unwrap_or(0);
    let head = &text[..end];
    head.find("\"schema_version\"").is_some_and(|at| {
        let rest = head[at + 16..]
            .trim_start()
            .trim_start_matches(':')
            .trim_start();
        rest.starts_with("\"ATIF-v")
    })
}

/// A pretty-printed object whose `run` holds `verdicts` (and `issues`): parsed when the head
/// holds it whole, else looked for in the text (`run` comes first, its counts within a few KB).
fn is_quality_summary(text: &str) -> bool {
    match serde_json::from_str::<Value>(text) {
        Ok(v) => v["run"]["verdicts"].is_object(),
        Err(e) if e.is_eof() => {
            let at = |k: &str| text.find(&format!("\"{k}\": {{"));
            matches!((at("run"), at("verdicts"), at("issues")), (Some(r), Some(v), Some(i)) if r < v && r < i)
        }
        Err(_) => false,
    }
}

fn by_name(name: &str) -> FileKind {
    if name.ends_with("_materialized_inputs.jsonl") {
        FileKind::MaterializedInputs
    } else if name.ends_with("_reward_profiling.jsonl") {
        FileKind::RewardProfiling
    } else if name.ends_with("_agent_metrics.json") {
        FileKind::AgentMetrics
    } else {
        FileKind::Unknown
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 58: a rollout carrying a field named `mean/…` is a rollout (v0.7.0 profiles it); a
    /// task row is told by `rollout_infos` and having no `_ng_rollout_index` of its own.
    #[test]
    fn a_rollout_with_a_mean_field_is_not_a_profile() {
        let rollout =
            br#"{"mean/already":0.5,"reward":1.0,"_ng_task_index":0,"_ng_rollout_index":0}"#;
        assert_eq!(classify(rollout, "r.jsonl"), FileKind::Rollouts);
        let task =
            br#"{"_ng_task_index":0,"mean/reward":1.0,"rollout_infos":[{"_ng_rollout_index":0}]}"#;
        assert_eq!(classify(task, "r.jsonl"), FileKind::RewardProfiling);
        // Cut before the line ends (a head read shorter than the line).
        assert_eq!(classify(&rollout[..60], "r.jsonl"), FileKind::Rollouts);
        let cut =
            br#"{"_ng_task_index":0,"mean/reward":1.0,"rollout_infos":[{"_ng_rollout_index":0"#;
        assert_eq!(classify(cut, "r.jsonl"), FileKind::RewardProfiling);
        let cut_task = br#"{"_ng_task_index":0,"mean/reward":1.0,"max/reward":1"#;
        assert_eq!(classify(cut_task, "r.jsonl"), FileKind::RewardProfiling);
    }

    #[test]
    fn collected_pivot_rows_are_a_run_not_a_dataset() {
        let pivot =
            r#"{"responses_create_params":{"input":[]},"expected_action":{"type":"message"}}"#;
        assert_eq!(classify(pivot.as_bytes(), "p.jsonl"), FileKind::Pivot);
        let materialized = r#"{"responses_create_params":{"input":[]},"expected_action":{"type":"message"},"_ng_task_index":0,"_ng_rollout_index":1}"#;
        assert_eq!(
            classify(materialized.as_bytes(), "x.jsonl"),
            FileKind::MaterializedInputs
        );
        let rollout = r#"{"expected_action":{"type":"message"},"_ng_task_index":0,"_ng_rollout_index":1,"reward":1.0,"response":{}}"#;
        assert_eq!(classify(rollout.as_bytes(), "y.jsonl"), FileKind::Rollouts);
        // The same from a first line cut short.
        assert_eq!(
            by_keys_in_text(&materialized[..materialized.len() - 1]),
            Some(FileKind::MaterializedInputs)
        );
    }

    #[test]
    fn upstream_health_files_by_content_not_name() {
        let verdict = r#"{"_ng_task_index":3,"_ng_rollout_index":0,"rollout_id":"3-0","verdict":"unhealthy","findings":[{"check":"x"}],"unobserved":[]}"#;
        assert_eq!(
            classify(verdict.as_bytes(), "v.jsonl"),
            FileKind::RolloutVerdicts
        );
        assert_eq!(
            by_keys_in_text(&verdict[..verdict.len() - 1]),
            Some(FileKind::RolloutVerdicts)
        );
        let summary = "{\n  \"run\": {\n    \"ignored_checks\": [],\n    \"verdicts\": {\"healthy\": 1},\n    \"issues\": {}\n  },\n  \"tasks\": {}\n}";
        assert_eq!(
            classify(summary.as_bytes(), "s.json"),
            FileKind::QualitySummary
        );
        // Cut off by the head read: found by its keys in order.
        let cut = summary.find("\"issues\"").unwrap() + 12;
        assert_eq!(
            classify(&summary.as_bytes()[..cut], "s.json"),
            FileKind::QualitySummary
        );
        assert_eq!(
            classify(&summary.as_bytes()[..40], "s.json"),
            FileKind::Unknown
        );
        // Compact, on one line.
        let compact: Value = serde_json::from_str(summary).unwrap();
        assert_eq!(
            classify(compact.to_string().as_bytes(), "s.json"),
            FileKind::QualitySummary
        );
        // The name alone says nothing: another pretty-printed object is not recognized.
        assert_eq!(
            classify(b"{\n  \"a\": 1\n}", "quality_summary.json"),
            FileKind::Unknown
        );
        assert_eq!(
            classify(br#"{"x": 1}"#, "rollout_verdicts.jsonl"),
            FileKind::Unknown
        );
        // The files `collect`'s health check writes (upstream's format) are recognized.
        let mut checker = crate::health::checks::EvidenceChecker::new(Vec::new());
        let rows = std::fs::read(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../../tests/fixtures/gym-examples/blackjack/example_rollouts.jsonl"),
        )
        .unwrap();
        for (n, line) in rows.split(|&b| b == b'\n').enumerate() {
            checker.line("r.jsonl", 0, n as u64 + 1, line);
        }
        let reports = checker.finish();
        assert_eq!(
            classify(&reports.summary_bytes(), "a"),
            FileKind::QualitySummary
        );
        let line = reports.verdict_lines().next().unwrap();
        assert_eq!(classify(&line, "b"), FileKind::RolloutVerdicts);
    }

    #[test]
    fn recognizes_each_kind_by_content() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../tests/fixtures/gym-examples/blackjack");
        let read = |f: &str| std::fs::read(dir.join(f)).unwrap();
        assert_eq!(
            classify(&read("example_rollouts.jsonl"), "a.jsonl"),
            FileKind::Rollouts
        );
        assert_eq!(
            classify(
                &read("example_rollouts_materialized_inputs.jsonl"),
                "b.jsonl"
            ),
            FileKind::MaterializedInputs
        );
        assert_eq!(
            classify(
                &read("expected/example_rollouts_reward_profiling.jsonl"),
                "c.jsonl"
            ),
            FileKind::RewardProfiling
        );
        assert_eq!(
            classify(
                &read("expected/example_rollouts_agent_metrics.json"),
                "d.json"
            ),
            FileKind::AgentMetrics
        );
        let pivot = br#"{"responses_create_params":{"input":[]},"expected_action":{"type":"message","content":"x"}}"#;
        assert_eq!(classify(pivot, "p.jsonl"), FileKind::Pivot);
        assert_eq!(
            classify(b"hello", "x_materialized_inputs.jsonl"),
            FileKind::MaterializedInputs
        );
        assert_eq!(classify(b"hello", "x.txt"), FileKind::Unknown);
        // A first line cut off by the head read.
        let rollouts = read("example_rollouts.jsonl");
        assert_eq!(
            classify(&rollouts[..rollouts.len().min(3000)], "a"),
            FileKind::Rollouts
        );
    }
}
