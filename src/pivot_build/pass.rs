//! [`PivotBuilder`]: the two passes over a source file fed in chunks, producing pivot rows,
//! audit records and metrics.

use super::detect::{detect, SourceFormat};
use super::extract::{decision_points, CheckOptions};
use super::metrics::Metrics;
use super::row::{self, Prepared};
use super::skips::{audit_record, Reason, RowRef, TurnRef};
use super::source::{class_slot, dotted, dotted_raw, reward_of, GroupFacts, Groups, RawRow};
use super::trajectory::Trajectory;
use super::{chat, conversational, generic, responses, tools, BuildError, BuildOptions};
use crate::jsonl::LineSplitter;
use crate::verifier::{self, Action, ComparatorConfig};
use serde_json::{Map, Value};
use std::collections::HashSet;
use std::hash::{BuildHasherDefault, Hasher};

/// Hashes a pivot id by its first 8 bytes (it is a SHA-256 digest already).
#[derive(Default)]
struct IdHasher(u64);

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

/// Builds a pivot dataset from a source fed twice in chunks: `scan` … `start_conversion`, then
/// `convert` … `finish`; after each `convert`, `take_rows` / `take_audit` hand over the output.
pub struct PivotBuilder {
    file: String,
    options: BuildOptions,
    checks: CheckOptions,
    comparator: ComparatorConfig,
    splitter: LineSplitter,
    /// Non-blank lines seen in the current pass (the next one's `trajectory_id`).
    row_index: u64,
    /// Physical line number of the current line.
    line: u64,
    format: Option<SourceFormat>,
    groups: Groups,
    /// Task groups of one (rows without the group field), by class.
    single_groups: [u64; 3],
    /// Ids of the pivots written: already SHA-256 bytes, so their first 8 bytes are the hash.
    dedup: HashSet<[u8; 16], BuildHasherDefault<IdHasher>>,
    metrics: Metrics,
    conv_counts: conversational::ConvCounts,
    rows: Vec<u8>,
    audit: Vec<u8>,
    error: Option<BuildError>,
    done: bool,
}

impl PivotBuilder {
    pub fn new(file: impl Into<String>, options: BuildOptions) -> PivotBuilder {
        let checks = CheckOptions {
            check_tool_names: options.check_tool_names,
            multi_call_batch: options.multi_call_batch,
            tool_calls_only: options.tool_calls_only,
            doom_loop_threshold: options.doom_loop_threshold,
            skip_tool_errors: options.skip_tool_errors,
        };
        PivotBuilder {
            file: file.into(),
            comparator: options.comparator(),
            format: options.source_format,
            options,
            checks,
            splitter: LineSplitter::new(),
            row_index: 0,
            line: 0,
            groups: Groups::default(),
            single_groups: [0; 3],
            dedup: HashSet::default(),
            metrics: Metrics::default(),
            conv_counts: Default::default(),
            rows: Vec::new(),
            audit: Vec::new(),
            error: None,
            done: false,
        }
    }

    // ---- pass 1 ----

    /// Feeds the next chunk of the first pass (rewards per task group).
    pub fn scan(&mut self, chunk: &[u8]) {
        let mut splitter = std::mem::take(&mut self.splitter);
        let _ = splitter.push::<()>(chunk, |span, bytes| {
            self.line = span.line;
            self.scan_line(bytes);
            Ok(())
        });
        self.splitter = splitter;
    }

    /// Ends the first pass; returns the layout being converted.
    pub fn start_conversion(&mut self) -> Result<SourceFormat, BuildError> {
        let mut splitter = std::mem::take(&mut self.splitter);
        let _ = splitter.finish::<()>(|span, bytes| {
            self.line = span.line;
            self.scan_line(bytes);
            Ok(())
        });
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        let format = self.format.ok_or_else(|| {
            BuildError::new(format!(
                "'{}' has no source rows (the file is empty or blank)",
                self.file
            ))
        })?;
        self.metrics.source_format = format.as_str().into();
        self.row_index = 0;
        self.line = 0;
        Ok(format)
    }

    fn scan_line(&mut self, bytes: &[u8]) {
        let Ok(text) = simdutf8::basic::from_utf8(bytes) else {
            self.row_index += 1;
            return;
        };
        if text.trim().is_empty() {
            return;
        }
        self.row_index += 1;
        if self.format.is_none() && self.error.is_none() {
            match serde_json::from_str::<Value>(text)
                .ok()
                .as_ref()
                .and_then(detect)
            {
                Some(f) => self.format = Some(f),
                None => {
                    self.error = Some(BuildError::new(format!(
                        "'{}' line {}: the first row fits no source layout (Gym rollouts with `responses_create_params` and `response.output`, tau2 rollouts with `result.messages`, chat rows with `messages`, or a JSON array of candidates with `problem` and `expected_action`); pass --source-format to say which it is",
                        self.file, self.line
                    )));
                    return;
                }
            }
        }
        let Some(reward_path) = self.reward_path() else {
            return;
        };
        let Ok(raw) = serde_json::from_str::<RawRow<'_>>(text) else {
            return;
        };
        let reward = reward_of(dotted_raw(&raw, &reward_path).as_ref());
        if reward.is_none() && self.format == Some(SourceFormat::Chat) {
            return; // chat rows without a reward are not grouped
        }
        let key = dotted_raw(&raw, &self.options.group_by).map(|v| v.to_string());
        self.groups
            .add(key, reward.is_some_and(|r| r >= self.options.min_reward));
    }

    fn reward_path(&self) -> Option<String> {
        let format = self.format?;
        self.options
            .reward_field
            .clone()
            .or_else(|| format.default_reward_field().map(String::from))
    }

    // ---- pass 2 ----

    /// Feeds the next chunk of the second pass. Returns false once done (`--limit` reached) or
    /// failed (the error comes from `finish`).
    pub fn convert(&mut self, chunk: &[u8]) -> bool {
        if self.done || self.error.is_some() {
            return false;
        }
        let mut splitter = std::mem::take(&mut self.splitter);
        let _ = splitter.push::<()>(chunk, |span, bytes| {
            if !self.done && self.error.is_none() {
                self.line = span.line;
                self.convert_line(bytes);
            }
            Ok(())
        });
        self.splitter = splitter;
        !self.done && self.error.is_none()
    }

    /// Pivot rows produced so far (JSONL bytes); the caller writes them out.
    pub fn take_rows(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.rows)
    }

    /// Hands back a buffer returned by `take_rows` once written, so the next rows reuse its
    /// memory instead of faulting in fresh pages.
    pub fn give_back(&mut self, mut buffer: Vec<u8>) {
        if self.rows.is_empty() && buffer.capacity() > self.rows.capacity() {
            buffer.clear();
            self.rows = buffer;
        }
    }

    /// Audit records produced so far (JSONL bytes).
    pub fn take_audit(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.audit)
    }

    /// Ends the second pass: the last rows and records are left for `take_rows`/`take_audit`.
    pub fn finish(&mut self) -> Result<Metrics, BuildError> {
        if !self.done && self.error.is_none() {
            let mut splitter = std::mem::take(&mut self.splitter);
            let _ = splitter.finish::<()>(|span, bytes| {
                self.line = span.line;
                self.convert_line(bytes);
                Ok(())
            });
        }
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        let mut m = self.metrics.clone();
        let tasks = self.groups.class_counts();
        for ((slot, t), single) in m.group_tasks.iter_mut().zip(tasks).zip(self.single_groups) {
            *slot = t + single;
        }
        if self.format == Some(SourceFormat::Conversational) {
            let c = self.conv_counts;
            m.conversational = Some([
                c.skipped_seed_assistant_messages,
                c.dropped_user_tool_messages,
                c.dropped_unconvertible_messages,
            ]);
        }
        Ok(m)
    }

    fn skip_row(&mut self, row: &RowRef, reason: Reason, detail: String) {
        *self.metrics.skips.entry(reason).or_default() += 1;
        if reason == Reason::InvalidSourceRow {
            self.metrics.invalid_source_rows += 1;
        }
        audit_record(row, None, reason, Some(detail), &mut self.audit);
    }

    fn convert_line(&mut self, bytes: &[u8]) {
        let format = self.format.expect("start_conversion ran");
        let text = match simdutf8::compat::from_utf8(bytes) {
            Ok(t) if t.trim().is_empty() => return,
            Ok(t) => Ok(t),
            Err(e) => Err(format!(
                "line {}: invalid UTF-8 at byte {}",
                self.line,
                e.valid_up_to()
            )),
        };
        let trajectory_id = self.row_index;
        self.row_index += 1;
        self.metrics.source_rows_seen += 1;
        let index_kind = if format == SourceFormat::Responses {
            super::skips::IndexKind::Item
        } else {
            super::skips::IndexKind::Message
        };
        let bare = RowRef {
            trajectory_id,
            uuid: None,
            task_index: None,
            rollout_index: None,
            metadata: None,
            index_kind,
        };
        let mut row: Value = match text.and_then(|t| {
            serde_json::from_str(t).map_err(|e| format!("line {}: invalid JSON: {e}", self.line))
        }) {
            Ok(v) => v,
            Err(detail) => return self.skip_row(&bare, Reason::InvalidSourceRow, detail),
        };
        if format == SourceFormat::Generic {
            return self.convert_generic(&row, &bare);
        }
        // Owned copies of the small identity fields: the row's items are moved out below.
        let field = |k: &str| row.get(k).filter(|v| !v.is_null()).cloned();
        let (uuid, task_index, rollout_index, metadata) = (
            field("uuid"),
            field("_ng_task_index"),
            field("_ng_rollout_index"),
            field("metadata"),
        );
        let rref = RowRef {
            trajectory_id,
            uuid: uuid.as_ref(),
            task_index: task_index.as_ref(),
            rollout_index: rollout_index.as_ref(),
            metadata: metadata.as_ref(),
            index_kind,
        };
        if detect(&row) != Some(format)
            && !(format == SourceFormat::Responses
                && detect(&row) == Some(SourceFormat::Conversational))
        {
            let detail = format!(
                "line {}: the row is not in the {} layout",
                self.line,
                format.as_str()
            );
            return self.skip_row(&rref, Reason::InvalidSourceRow, detail);
        }
        // Reward and source group (spec §d.1).
        let reward_path = self.reward_path().unwrap_or_default();
        let reward_owned = dotted(&row, &reward_path).cloned();
        let reward_value = reward_owned.as_ref();
        let reward = reward_of(reward_value);
        let facts = if reward_value.is_none() && format == SourceFormat::Chat {
            None
        } else {
            let success = reward.is_some_and(|r| r >= self.options.min_reward);
            let key = dotted(&row, &self.options.group_by).map(|v| v.to_string());
            let facts = self.groups.facts(key.as_deref(), success);
            self.metrics.group_trajectories[class_slot(facts.class)] += 1;
            if key.is_none() {
                self.single_groups[class_slot(facts.class)] += 1;
            }
            if !success {
                let detail = match reward_value {
                    None => format!("no reward at `{reward_path}`"),
                    Some(v) if reward.is_none() => format!("reward {v} is not numeric"),
                    Some(v) => format!("reward {v} < --min-reward {}", self.options.min_reward),
                };
                return self.skip_row(&rref, Reason::BelowMinReward, detail);
            }
            if !self.options.source_groups.contains(&facts.class) {
                let detail = format!("source group is {}", facts.class.as_str());
                return self.skip_row(&rref, Reason::SourceGroupFiltered, detail);
            }
            Some(facts)
        };
        let built = match format {
            SourceFormat::Responses => {
                responses::trajectory(&mut row, self.options.include_input_turns)
                    .map_err(|e| (Reason::InvalidSourceRow, e))
            }
            SourceFormat::Chat => {
                chat::trajectory(&row, trajectory_id, &mut self.metrics.nameless_tool_calls)
            }
            SourceFormat::Conversational => conversational::trajectory(
                &row,
                trajectory_id,
                &mut self.metrics.nameless_tool_calls,
                &mut self.conv_counts,
            ),
            SourceFormat::Generic => unreachable!("handled above"),
        };
        let t = match built {
            Ok(t) => t,
            Err((reason, detail)) => {
                return self.skip_row(&rref, reason, format!("line {}: {detail}", self.line))
            }
        };
        self.metrics.source_rows_used += 1;
        let base = self.base_info(&row, format, reward_value, facts);
        let wrote = self.convert_trajectory(t, &rref, &base, None);
        self.metrics.trajectories_with_pivots += u64::from(wrote);
    }

    fn convert_generic(&mut self, line: &Value, rref: &RowRef) {
        let candidates = match generic::candidates(
            line,
            rref.trajectory_id,
            &mut self.metrics.nameless_tool_calls,
        ) {
            Ok(c) => c,
            Err((reason, detail)) => {
                return self.skip_row(rref, reason, format!("line {}: {detail}", self.line))
            }
        };
        self.metrics.source_rows_used += 1;
        let base = self.base_info(&Value::Null, SourceFormat::Generic, None, None);
        let mut wrote = false;
        for c in candidates {
            if self.done {
                break;
            }
            wrote |= self.convert_trajectory(c.trajectory, rref, &base, Some(&c.source_model_info));
        }
        self.metrics.trajectories_with_pivots += u64::from(wrote);
    }

    /// `pivot_info`'s row-level members (through `source_group_success_rate`).
    fn base_info(
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
    fn convert_trajectory(
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
            if self.done {
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
            self.metrics.pivot_rows_written += 1;
            wrote = true;
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

    /// The verifier fed its own demonstration must score 1.0 (spec §g).
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

    fn count_pivot(&mut self, found: &super::extract::Found, info: &Map<String, Value>) {
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
                *m.coverage.entry(k).or_default() += 1;
            }
        }
    }
}
