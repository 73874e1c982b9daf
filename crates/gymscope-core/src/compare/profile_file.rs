//! A side from an existing `*_reward_profiling.jsonl` (upstream's or gymscope's), fed in chunks:
//! per row, `sample` gives the content key and agent, `rollout_infos` the rewards (in
//! rollout-index order) and `mean/<field>` the other means. Rows are read one at a time and only
//! those numbers are kept. Errors name the file, line and column or field, as the profile's do.

use super::key::TaskKey;
use super::side::{agent_name, push_rewards, AgentNames, LineRef, RunKind, RunTasks, TaskEntry};
use super::CompareError;
use crate::error::ProfileError;
use crate::gym::keys::{ROLLOUT_INDEX, TASK_INDEX};
use crate::read::jsonl::{self, LineSpan, LineSplitter};
use crate::reward_group::reward_value;
use serde_json::{Map, Value};
use std::collections::HashMap;

/// `push(chunk)* -> finish()`.
pub struct ProfilingFileReader {
    file: String,
    name: String,
    splitter: LineSplitter,
    fields: Vec<String>,
    field_index: HashMap<String, usize>,
    agents: AgentNames,
    tasks: Vec<TaskEntry>,
    rewards: Vec<f64>,
    lines: Vec<LineRef>,
    seen: HashMap<i64, u64>,
    key_buf: Vec<u8>,
    scratch: Vec<f64>,
}

impl ProfilingFileReader {
    /// `file` is how errors name the file; `name` how the comparison shows it.
    pub fn new(file: &str, name: &str) -> Self {
        ProfilingFileReader {
            file: file.to_string(),
            name: name.to_string(),
            splitter: LineSplitter::new(),
            fields: Vec::new(),
            field_index: HashMap::new(),
            agents: AgentNames::default(),
            tasks: Vec::new(),
            rewards: Vec::new(),
            lines: Vec::new(),
            seen: HashMap::new(),
            key_buf: Vec::new(),
            scratch: Vec::new(),
        }
    }

    pub fn push(&mut self, chunk: &[u8]) -> Result<(), CompareError> {
        let result = jsonl::push_held(self, |r| &mut r.splitter, chunk, Self::row);
        result.map_err(|e| {
            e.into_error(|t| {
                crate::error::ProfileError::LineTooLong {
                    file: self.file.clone(),
                    line: t.line,
                    limit: t.limit,
                }
                .into()
            })
        })
    }

    pub fn finish(mut self) -> Result<RunTasks, CompareError> {
        jsonl::finish_held(&mut self, |r| &mut r.splitter, Self::row)?;
        // The file is in task order; sort anyway so a hand-edited file pairs the same.
        self.tasks.sort_by_key(|t| t.task);
        Ok(RunTasks {
            kind: RunKind::ProfilingFile,
            name: self.name,
            fields: self.fields,
            agents: self.agents.names,
            tasks: self.tasks,
            rewards: self.rewards,
            lines: self.lines,
            warnings: Vec::new(),
        })
    }

    fn bad(&self, span: LineSpan, field: &'static str, problem: String) -> CompareError {
        ProfileError::BadField {
            file: self.file.clone(),
            line: span.line,
            field,
            problem,
        }
        .into()
    }

    fn row(&mut self, span: LineSpan, line: &[u8]) -> Result<(), CompareError> {
        let malformed = |column: usize, message: String| ProfileError::MalformedJson {
            file: self.file.clone(),
            line: span.line,
            column,
            message,
        };
        let row: Map<String, Value> = match serde_json::from_slice::<Value>(line) {
            Ok(Value::Object(row)) => row,
            Ok(_) => return Err(malformed(1, "not a JSON object".into()).into()),
            Err(e) => return Err(malformed(e.column().max(1), e.to_string()).into()),
        };
        let task = match row.get(TASK_INDEX) {
            Some(v) => v.as_i64().ok_or_else(|| {
                self.bad(span, TASK_INDEX, format!("must be an integer, found {v}"))
            })?,
            None => return Err(self.bad(span, TASK_INDEX, "is missing".into())),
        };
        if let Some(first) = self.seen.insert(task, span.line) {
            return Err(self.bad(
                span,
                TASK_INDEX,
                format!("repeats task {task} of line {first} (one row per task)"),
            ));
        }
        let sample = row
            .get("sample")
            .filter(|s| s.is_object())
            .ok_or_else(|| self.bad(span, "sample", "is missing or not an object".into()))?;
        let infos = row
            .get("rollout_infos")
            .and_then(Value::as_array)
            .ok_or_else(|| self.bad(span, "rollout_infos", "is missing or not a list".into()))?;
        let mut rewards: Vec<(i64, Option<f64>)> = Vec::with_capacity(infos.len());
        for info in infos {
            let rollout = info
                .get(ROLLOUT_INDEX)
                .and_then(Value::as_i64)
                .ok_or_else(|| {
                    self.bad(
                        span,
                        "rollout_infos",
                        "has an entry without an integer `_ng_rollout_index`".into(),
                    )
                })?;
            rewards.push((rollout, info.get("reward").and_then(reward_value)));
        }
        rewards.sort_by_key(|&(r, _)| r);
        let (mean_reward, reward_range) = push_rewards(
            rewards.iter().map(|&(_, r)| r),
            &mut self.rewards,
            &mut self.scratch,
        );
        let mut means = vec![f64::NAN; self.fields.len()];
        for (k, v) in &row {
            let Some(field) = k.strip_prefix("mean/").filter(|f| *f != "reward") else {
                continue;
            };
            let f = if let Some(&f) = self.field_index.get(field) {
                f
            } else {
                self.field_index
                    .insert(field.to_string(), self.fields.len());
                self.fields.push(field.to_string());
                self.fields.len() - 1
            };
            if means.len() <= f {
                means.resize(f + 1, f64::NAN);
            }
            // `null` is an overflowed mean (orjson writes inf as null): no value.
            means[f] = v.as_f64().unwrap_or(f64::NAN);
        }
        let num = |k: &str| row.get(k).and_then(Value::as_u64);
        let start = self.lines.len() as u32;
        self.lines.push(LineRef {
            rollout: None,
            span,
        });
        self.tasks.push(TaskEntry {
            task,
            key: TaskKey::of_row(sample, &mut self.key_buf),
            agent: self.agents.id(agent_name(sample)),
            rollouts: num("num_rollouts").unwrap_or(infos.len() as u64) as u32,
            mean_reward,
            rewards: reward_range,
            means,
            lines: start..start + 1,
        });
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> Result<RunTasks, String> {
        let mut r = ProfilingFileReader::new("p.jsonl", "p");
        for chunk in text.as_bytes().chunks(5) {
            r.push(chunk).map_err(|e| e.to_string())?;
        }
        r.finish().map_err(|e| e.to_string())
    }

    const ROW: &str = r#"{"_ng_task_index":3,"mean/reward":0.5,"mean/output_tokens":12.0,"sample":{"responses_create_params":{"input":"q"},"agent_ref":{"name":"ag"}},"num_rollouts":2,"rollout_infos":[{"_ng_rollout_index":1,"reward":true},{"_ng_rollout_index":0,"reward":"x"}]}"#;

    #[test]
    fn reads_rewards_in_rollout_order_and_means() {
        let run = read(&format!("{ROW}\n")).unwrap();
        let t = &run.tasks[0];
        assert_eq!((t.task, t.rollouts, t.mean_reward), (3, 2, Some(1.0)));
        // Rollout 0's reward is not a number (NaN), rollout 1's `true` counts as 1.
        let rewards = &run.rewards[t.rewards.start as usize..t.rewards.end as usize];
        assert!(rewards[0].is_nan() && rewards[1] == 1.0);
        assert_eq!(run.fields, vec!["output_tokens"]);
        assert_eq!(t.mean(0), Some(12.0));
        assert_eq!(run.agent_of(t), Some("ag"));
        assert_eq!(run.lines[0].span.line, 1);
    }

    #[test]
    fn errors_name_the_line_and_field() {
        let two = format!("{ROW}\n{ROW}\n");
        let e = read(&two).unwrap_err();
        assert!(
            e.contains("'p.jsonl' line 2: field `_ng_task_index` repeats task 3 of line 1"),
            "{e}"
        );
        let e = read("{\"_ng_task_index\":1}\n\n").unwrap_err();
        assert!(e.contains("line 1: field `sample`"), "{e}");
        let e = read(&format!("{ROW}\n\n")).unwrap_err();
        assert!(e.contains("'p.jsonl' at line 2, column 1"), "{e}");
        let e = read("{\"sample\":{}}").unwrap_err();
        assert!(e.contains("field `_ng_task_index` is missing"), "{e}");
    }
}
