//! The second half of a conversion: each decision point of a trajectory becomes a row (after
//! deduplication and the verifier's self-check) or an audit record, and is counted.

use super::PivotBuilder;
use crate::pivot_build::extract::{decision_points, Found};
use crate::pivot_build::row::{self, Prepared};
use crate::pivot_build::skips::{audit_record, Reason, RowRef, TurnRef};
use crate::pivot_build::source::{dotted, GroupFacts};
use crate::pivot_build::turns::Trajectory;
use crate::pivot_build::{tools, BuildError, SourceFormat};
use crate::verifier::{self, Action};
use serde_json::{Map, Value};
use std::hash::Hasher;

/// Hashes a pivot id by its first 8 bytes (it is a SHA-256 digest already).
#[derive(Default)]
pub(super) struct IdHasher(u64);

impl Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for (i, b) in bytes.iter().take(8).enumerate() {
            self.0 ^= u64::from(*b) << (8 * i);
        }
    }
}

impl PivotBuilder {
    /// `pivot_info`'s row-level members (through `source_group_success_rate`).
    pub(super) fn base_info(
        &self,
        row: &Value,
        format: SourceFormat,
        reward: Option<&Value>,
        facts: Option<GroupFacts>,
    ) -> Map<String, Value> {
        let top = |k: &str| {
            row.get(k)
                .filter(|v| !v.is_null())
                .cloned()
                .unwrap_or(Value::Null)
        };
        let task_id = ["task_id", "problem_id", "instance_id"]
            .iter()
            .map(|k| top(k))
            .chain([
                dotted(row, "task.id").cloned().unwrap_or(Value::Null),
                dotted(row, "result.task_id")
                    .cloned()
                    .unwrap_or(Value::Null),
            ])
            .find(|v| !v.is_null())
            .unwrap_or(Value::Null);
        let mut m = Map::new();
        m.insert("pivot_id".into(), Value::Null);
        m.insert("source_format".into(), format.as_str().into());
        m.insert("_ng_task_index".into(), top("_ng_task_index"));
        m.insert("_ng_rollout_index".into(), top("_ng_rollout_index"));
        m.insert("task_id".into(), task_id);
        m.insert("uuid".into(), top("uuid"));
        m.insert(
            "source_agent".into(),
            dotted(row, "agent_ref.name")
                .cloned()
                .unwrap_or(Value::Null),
        );
        m.insert("reward".into(), reward.cloned().unwrap_or(Value::Null));
        m.insert(
            "source_group".into(),
            facts.map(|f| f.class.as_str()).into(),
        );
        m.insert("source_group_size".into(), facts.map(|f| f.size).into());
        m.insert(
            "source_group_success_rate".into(),
            facts.map(|f| f.success_rate).into(),
        );
        m
    }

    /// Converts every decision point of one trajectory; true when a pivot was written.
    pub(super) fn convert_trajectory(
        &mut self,
        mut t: Trajectory,
        rref: &RowRef,
        base: &Map<String, Value>,
        model_info: Option<&Value>,
    ) -> bool {
        let (tools, filled) = tools::normalize(std::mem::take(&mut t.tools));
        t.tools = tools;
        tools::extend_with(&mut t.tools, &self.options.extra_tools);
        self.metrics.tools_parameters_filled += filled;
        let tool_names = tools::names(&t.tools);
        let points = decision_points(&t, &tool_names, &self.checks);
        let upto = points
            .iter()
            .filter_map(|p| p.outcome.as_ref().ok())
            .map(|f| f.start)
            .max()
            .unwrap_or(0);
        let prepared = Prepared::new(&t, rref.trajectory_id, upto, self.options.drop_reasoning);
        let num_actions = points.len();
        let mut wrote = false;
        for p in points {
            if self.done || self.too_big {
                break;
            }
            self.metrics.decision_points += 1;
            let found = match p.outcome {
                Ok(found) => found,
                Err((reason, detail)) => {
                    if reason == Reason::MultiToolCall {
                        *self
                            .metrics
                            .multi_tool_counts
                            .entry(p.calls.len().to_string())
                            .or_default() += 1;
                    }
                    if reason == Reason::ToolNotInTools && t.tools.is_empty() {
                        self.metrics.pivots_lost_without_tools += 1;
                    }
                    self.skip_turn(
                        rref,
                        &p.calls,
                        p.source_index,
                        p.assistant_index,
                        reason,
                        detail,
                    );
                    continue;
                }
            };
            let id = prepared.pivot_id(found.start, &found.expected_action);
            self.checked.push(id);
            let late = if self.dedup.contains(&id) {
                Some((
                    Reason::DuplicatePivot,
                    Some(format!("pivot_id {}", row::hex(&id))),
                ))
            } else {
                found
                    .late_skip
                    .clone()
                    .or_else(|| self.selfcheck(&found.expected_action))
            };
            if let Some((reason, detail)) = late {
                if reason == Reason::SelfcheckFailed && !self.options.selfcheck_skip {
                    self.error = Some(BuildError::new(format!(
                        "'{}' line {}: the pivot of decision point {} does not score 1.0 with its own expected action ({}); lower --word-count-similarity-threshold or pass --on-selfcheck-fail skip",
                        self.file, self.line, p.assistant_index, detail.unwrap_or_default()
                    )));
                    self.done = true;
                    return wrote;
                }
                self.skip_turn(
                    rref,
                    &p.calls,
                    p.source_index,
                    p.assistant_index,
                    reason,
                    detail,
                );
                continue;
            }
            self.dedup.insert(id);
            self.metrics.selfcheck_passed += 1;
            let mut info = base.clone();
            info.insert("pivot_id".into(), row::hex(&id).into());
            info.insert(t.index_kind.key().into(), p.source_index.into());
            if let Some(k0) = t.k0 {
                info.insert(
                    "source_output_index".into(),
                    p.item_index.checked_sub(k0).into(),
                );
            }
            info.insert("source_assistant_index".into(), p.assistant_index.into());
            info.insert(
                "trajectory_num_assistant_actions".into(),
                num_actions.into(),
            );
            let num_key = if t.k0.is_some() {
                "trajectory_num_items"
            } else {
                "trajectory_num_messages"
            };
            info.insert(num_key.into(), t.num_source.into());
            info.insert(
                "pivot_call_id".into(),
                found.call_id.clone().unwrap_or(Value::Null),
            );
            info.insert("pivot_has_reasoning".into(), found.has_reasoning.into());
            info.insert("pivot_has_content".into(), found.has_content.into());
            info.insert("previous_steps_in_turn".into(), (found.step - 1).into());
            info.insert(
                "previous_steps_in_turn_with_reasoning".into(),
                found.steps_with_reasoning.into(),
            );
            if let Some(mi) = model_info {
                info.insert("source_model_info".into(), mi.clone());
            }
            self.count_pivot(&found, &info);
            let mut middle = Vec::new();
            row::middle([found.turn, found.step, found.depth], &info, &mut middle);
            let mut tail = Vec::new();
            tail.extend_from_slice(b",\"agent_ref\":");
            row::compact(
                &serde_json::json!({"type": "responses_api_agents", "name": self.options.agent_ref}),
                &mut tail,
            );
            if self.options.stamp_task_index {
                tail.extend_from_slice(
                    format!(",\"_ng_task_index\":{}", self.metrics.pivot_rows_written).as_bytes(),
                );
            }
            prepared.write_row(
                rref.trajectory_id,
                found.start,
                &found.expected_action,
                &middle,
                &tail,
                &mut self.rows,
            );
            self.row_ends.push(self.rows.len());
            self.metrics.pivot_rows_written += 1;
            wrote = true;
            self.row_written();
            if self
                .options
                .limit
                .is_some_and(|l| self.metrics.pivot_rows_written >= l)
            {
                self.done = true;
            }
        }
        wrote
    }

    /// The verifier fed its own demonstration must score 1.0 (docs/pivots.md "Pivot datasets":
    /// `--on-selfcheck-fail`).
    fn selfcheck(&mut self, expected: &Value) -> Option<(Reason, Option<String>)> {
        let action = Action::from_expected(expected)?;
        let demo = Action::from_output(&action.to_output());
        let (reward, category) = verifier::compare(&self.comparator, &action, demo.as_ref());
        if reward == 1.0 {
            return None;
        }
        self.metrics.selfcheck_failed += 1;
        Some((
            Reason::SelfcheckFailed,
            Some(format!("reward {reward}: {}", category.text())),
        ))
    }

    fn skip_turn(
        &mut self,
        rref: &RowRef,
        calls: &[&Value],
        source_index: usize,
        assistant_index: usize,
        reason: Reason,
        detail: Option<String>,
    ) {
        *self.metrics.skips.entry(reason).or_default() += 1;
        let turn = TurnRef {
            source_index,
            assistant_index,
            calls,
        };
        audit_record(rref, Some(&turn), reason, detail, &mut self.audit);
    }

    fn count_pivot(&mut self, found: &Found, info: &Map<String, Value>) {
        let m = &mut self.metrics;
        let ty = found.expected_action["type"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        *m.action_types.entry(ty).or_default() += 1;
        let names: Vec<&Value> = match found.expected_action.get("calls").and_then(Value::as_array)
        {
            Some(calls) => calls.iter().map(|c| &c["name"]).collect(),
            None => found.expected_action.get("name").into_iter().collect(),
        };
        for n in names {
            *m.tools
                .entry(n.as_str().unwrap_or_default().to_string())
                .or_default() += 1;
        }
        *m.turn_step
            .entry(format!("({}, {})", found.turn, found.step))
            .or_default() += 1;
        *m.depth.entry(found.depth.to_string()).or_default() += 1;
        m.with_target_reasoning += u64::from(found.has_reasoning);
        m.with_target_content += u64::from(found.has_content);
        if found.step > 1 {
            m.multistep += 1;
            m.multistep_with_prior_reasoning += u64::from(found.steps_with_reasoning > 0);
        }
        for k in [
            "_ng_task_index",
            "_ng_rollout_index",
            "task_id",
            "uuid",
            "reward",
        ] {
            if info.get(k).is_some_and(|v| !v.is_null()) {
                *m.coverage.entry(k.to_string()).or_default() += 1;
            }
        }
    }
}
