//! Rollouts counted as scored zeros in the aggregate request only (NeMo Gym v0.7.0
//! `count_failure_classes_as_zero`, `count_missing_rollouts_as_zero`, `rollout_collection.py`
//! `_counted_failure_row`, `_missing_rollout_rows_counted_as_zero`, `_fill_task_fields`): no
//! file changes, but the denominator includes rollouts that failed or never left a row.

use super::Row;
use crate::gym::keys::{
    AGENT_REF, ENVIRONMENT_SERVER, RESPONSES_CREATE_PARAMS, ROLLOUT_INDEX, TASK_INDEX,
};
use serde_json::Value;
use std::collections::{HashMap, HashSet};

/// The metric-input copy of a sidecar row counted as zero: its diagnostics dropped (an HTTP
/// status is a number the aggregator would average), `mask_sample` false, `reward` 0.0 unless
/// present.
pub fn failure_row(row: &Row) -> Row {
    let mut out: Row = row
        .iter()
        .filter(|(k, _)| {
            !k.starts_with("_ng_failure_")
                && k.as_str() != "failure_kind"
                && k.as_str() != "failure_reason"
        })
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    out.insert("mask_sample".into(), Value::Bool(false));
    out.entry("reward").or_insert(Value::from(0.0));
    out
}

/// The name a rollout is counted under (v0.7.0 `_routing_identity`): its agent, else (a
/// taskset row) its environment server.
pub fn routing_identity(row: &Row) -> Option<&str> {
    row.get(AGENT_REF)
        .and_then(|a| a.get("name"))
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .or_else(|| row.get(ENVIRONMENT_SERVER).and_then(Value::as_str))
}

/// The zero a materialized rollout without any row is counted as, `None` when it names neither
/// agent nor server (it cannot reach any server's metrics).
pub fn zero_row(materialized: &Row) -> Option<Row> {
    routing_identity(materialized)?;
    let mut out = Row::new();
    for k in [TASK_INDEX, ROLLOUT_INDEX, AGENT_REF] {
        out.insert(
            k.into(),
            materialized.get(k).cloned().unwrap_or(Value::Null),
        );
    }
    out.insert("reward".into(), Value::from(0.0));
    if let Some(s) = materialized.get(ENVIRONMENT_SERVER) {
        out.insert(ENVIRONMENT_SERVER.into(), s.clone());
    }
    Some(out)
}

/// The keys real rows of each group carry: only those are copied into added rows. A collection
/// groups by [`routing_identity`]; `gymscope aggregate` by environment server (`*_in`).
#[derive(Default)]
pub struct CarriedKeys(HashMap<Option<String>, HashSet<String>>);

impl CarriedKeys {
    pub fn add(&mut self, real_row: &Row) {
        self.add_in(routing_identity(real_row).map(String::from), real_row);
    }

    pub fn add_in(&mut self, group: Option<String>, real_row: &Row) {
        self.0
            .entry(group)
            .or_default()
            .extend(real_row.keys().cloned());
    }

    /// Copies the task's dataset fields from its materialized row into an added row (v0.7.0
    /// `_fill_task_fields`): fields real rows of its group carry, not `_`-prefixed, not
    /// `responses_create_params` or `response`, never overwriting.
    pub fn fill(&self, added: &mut Row, source: &Row) {
        self.fill_in(routing_identity(source).map(String::from), added, source);
    }

    pub fn fill_in(&self, group: Option<String>, added: &mut Row, source: &Row) {
        let Some(carried) = self.0.get(&group) else {
            return;
        };
        for (k, v) in source {
            if carried.contains(k)
                && !k.starts_with('_')
                && k != RESPONSES_CREATE_PARAMS
                && k != "response"
            {
                added.entry(k.clone()).or_insert_with(|| v.clone());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn row(v: Value) -> Row {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn counted_rows_are_v07s() {
        let f = row(
            json!({"_ng_failure_class": "agent_run_error", "_ng_failure_http_status": 500, "failure_kind": "x", "_ng_task_index": 1, "_ng_rollout_index": 0, "agent_ref": {"name": "a"}, "mask_sample": true}),
        );
        assert_eq!(
            serde_json::to_string(&failure_row(&f)).unwrap(),
            r#"{"_ng_task_index":1,"_ng_rollout_index":0,"agent_ref":{"name":"a"},"mask_sample":false,"reward":0.0}"#
        );
        let m = row(
            json!({"responses_create_params": {}, "subset": "hard", "_ng_task_index": 2, "_ng_rollout_index": 1, "agent_ref": {"name": "a", "type": "t"}}),
        );
        let mut z = zero_row(&m).unwrap();
        assert_eq!(
            serde_json::to_string(&z).unwrap(),
            r#"{"_ng_task_index":2,"_ng_rollout_index":1,"agent_ref":{"name":"a","type":"t"},"reward":0.0}"#
        );
        let mut carried = CarriedKeys::default();
        carried.add(&row(
            json!({"agent_ref": {"name": "a"}, "subset": "easy", "reward": 1.0}),
        ));
        carried.fill(&mut z, &m);
        assert_eq!(z["subset"], "hard");
        assert!(zero_row(&row(json!({"_ng_task_index": 0}))).is_none());
    }
}
