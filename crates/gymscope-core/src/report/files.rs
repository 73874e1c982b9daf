//! [`ReportInput`] from existing output files: `*_reward_profiling.jsonl` (every statistic per
//! task, `sample`, counts and `rollout_infos`) and optionally `*_agent_metrics.json`, as written by
//! upstream's `gym eval profile` or by `gymscope profile`. The tables are built through
//! `table`'s own cell functions, so both paths show the same text.

use super::input::FieldColumns;
use super::{Points, ReportInput, ReportMeta};
use crate::conversation::{conversation, Conversation};
use crate::gym::keys::{ROLLOUT_INDEX, TASK_INDEX};
use crate::json::number_to_num;
use crate::json::Num;
use crate::profile::{ColumnSummary, CompletionSummary};
use crate::table::{self, Cell, Row, Table};
use serde_json::{Map, Value};

#[derive(Debug, thiserror::Error)]
pub enum FilesError {
    #[error("'{file}' line {line}: {message}")]
    Line {
        file: String,
        line: usize,
        message: String,
    },
    #[error("'{file}': {message}")]
    File { file: String, message: String },
}

/// What is kept of a `*_reward_profiling.jsonl` row.
struct TaskRow {
    task: i64,
    done: usize,
    expected: usize,
    /// Only the `<stat>/<column>` entries.
    stats: Map<String, Value>,
}

const STATS: [&str; 5] = ["mean", "max", "min", "median", "std"];

impl ReportInput {
    /// The report of a profile read back from its files. `prompt_tasks` tasks get their
    /// `sample` prompt shown (the rollouts' answers are not in these files).
    pub fn from_profile_files(
        meta: ReportMeta,
        reward_profiling: (&str, &[u8]),
        agent_metrics: Option<(&str, &[u8])>,
        prompt_tasks: usize,
    ) -> Result<ReportInput, FilesError> {
        let (file, bytes) = reward_profiling;
        // One row at a time: its rollouts go to the points and its sample to the prompts at
        // once; only its statistics are kept (the file can be hundreds of MB).
        let mut rows: Vec<TaskRow> = Vec::new();
        let mut points = Points::default();
        let mut columns = FieldColumns::default();
        let mut prompts = Vec::new();
        for (i, line) in bytes.split(|&b| b == b'\n').enumerate() {
            if line.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            let err = |message: &str| FilesError::Line {
                file: file.to_string(),
                line: i + 1,
                message: message.to_string(),
            };
            let mut row = match serde_json::from_slice::<Value>(line) {
                Ok(Value::Object(row)) => row,
                Ok(_) => return Err(err("not a JSON object")),
                Err(e) => return Err(err(&e.to_string())),
            };
            let task = row
                .get(TASK_INDEX)
                .and_then(Value::as_i64)
                .ok_or_else(|| err("`_ng_task_index` is missing or not an integer"))?;
            let count = |key: &str| {
                row.get(key)
                    .and_then(Value::as_u64)
                    .map(|v| v as usize)
                    .ok_or_else(|| err(&format!("`{key}` is missing or not a count")))
            };
            let (done, expected) = (count("num_rollouts")?, count("expected_num_rollouts")?);
            let infos = row.get("rollout_infos").and_then(Value::as_array);
            for info in infos.into_iter().flatten() {
                push_info(&mut points, &mut columns, task, info).map_err(|m| err(&m))?;
            }
            if rows.len() < prompt_tasks {
                if let Some(sample) = row.get("sample") {
                    prompts.push((task, prompt_only(conversation(sample))));
                }
            }
            row.retain(|k, _| stat_column(k).is_some());
            rows.push(TaskRow {
                task,
                done,
                expected,
                stats: row,
            });
        }
        // Metric columns in the profile's order: first seen over rows in task order (a row lists
        // its columns in that order, and a column first seen later comes after all earlier ones).
        let mut columns: Vec<String> = Vec::new();
        for row in &rows {
            for key in row.stats.keys() {
                if let Some(c) = stat_column(key) {
                    if !columns.iter().any(|k| k == c) {
                        columns.push(c.to_string());
                    }
                }
            }
        }
        let names: Vec<&str> = columns.iter().map(String::as_str).collect();

        let mut tasks = Table {
            headers: table::stat_headers_of(&names),
            rows: Vec::with_capacity(rows.len()),
        };
        tasks.headers.extend(
            [
                "num_rollouts",
                "expected_num_rollouts",
                "missing_num_rollouts",
                "reward_profile_completion_pct",
            ]
            .map(String::from),
        );
        let mut summary = CompletionSummary::default();
        for row in &rows {
            let (done, expected) = (row.done, row.expected);
            let mut cells: Vec<Cell> = table::stat_cells(&summaries(&row.stats, &names)).collect();
            cells.push(Cell::count(done));
            cells.push(Cell::count(expected));
            cells.push(Cell::count(expected.saturating_sub(done)));
            let pct = if expected == 0 {
                100.0
            } else {
                100.0 * done as f64 / expected as f64
            };
            cells.push(Cell::num(Some(Num::Float(pct))));
            tasks.rows.push(Row {
                key: row.task.to_string(),
                cells,
            });
            summary.expected_rollout_rows += expected;
            summary.completed_rollout_rows += done;
            summary.total_input_rows += 1;
            if done == expected {
                summary.complete_input_rows += 1;
            } else {
                summary.partial_input_rows += 1;
            }
        }

        let agents = match agent_metrics {
            Some((file, bytes)) => Some(agent_table(file, bytes, &mut columns)?),
            None => None,
        };
        let figures = super::key_figures_of(
            &points,
            summary.expected_rollout_rows,
            agents.as_ref().map_or(0, |a| a.rows.len()),
            &[],
        );
        Ok(ReportInput {
            meta,
            summary,
            figures,
            summary_note: Some(
                "Read from a profiling file: tasks without any rollout are not recorded there, \
                 so they are not counted."
                    .into(),
            ),
            warnings: Vec::new(),
            agents,
            repeats: None,
            repeat_notes: Vec::new(),
            tasks,
            points,
            conversations: Vec::new(),
            prompts,
            health: None,
            query: None,
            query_parts: super::QueryParts::default(),
        })
    }
}

/// `mean/reward` → `reward`, for the five statistics.
fn stat_column(key: &str) -> Option<&str> {
    let (stat, column) = key.split_once('/')?;
    STATS.contains(&stat).then_some(column)
}

fn summaries(row: &Map<String, Value>, columns: &[&str]) -> Vec<ColumnSummary> {
    let num = |stat: &str, c: &str| match row.get(&format!("{stat}/{c}")) {
        Some(Value::Number(n)) => Some(number_to_num(n)),
        // A statistic that overflowed is written as `null` (orjson): shown as the table shows it.
        Some(Value::Null) => Some(Num::Float(f64::INFINITY)),
        _ => None,
    };
    columns
        .iter()
        .map(|c| ColumnSummary {
            mean: num("mean", c).map(Num::as_f64),
            max: num("max", c),
            min: num("min", c),
            median: num("median", c).map(Num::as_f64),
            std: num("std", c).map(Num::as_f64),
        })
        .collect()
}

fn push_info(
    points: &mut Points,
    columns: &mut FieldColumns,
    task: i64,
    info: &Value,
) -> Result<(), String> {
    let info = info
        .as_object()
        .ok_or("a `rollout_infos` entry is not an object")?;
    let rollout = info
        .get(ROLLOUT_INDEX)
        .and_then(Value::as_i64)
        .ok_or("a `rollout_infos` entry has no integer `_ng_rollout_index`")?;
    let i = points.len();
    points.task.push(task);
    points.rollout.push(rollout);
    points
        .reward
        .push(info.get("reward").and_then(Value::as_f64));
    let row: Vec<(&str, f64)> = info
        .iter()
        .filter(|(k, _)| {
            !matches!(
                k.as_str(),
                TASK_INDEX | ROLLOUT_INDEX | "rollout_id" | "reward"
            )
        })
        .filter_map(|(k, v)| v.as_f64().map(|v| (k.as_str(), v)))
        .collect();
    columns.push_row(points, i, &row);
    Ok(())
}

/// A `sample` is a materialized input row: only its prompt is of interest.
fn prompt_only(c: Conversation) -> Conversation {
    Conversation {
        input: c.input,
        ..Conversation::default()
    }
}

/// `*_agent_metrics.json`: a list of `{<stat>/<column>: …, "agent_ref": {"name": …}}`. It has no
/// rollout counts, so that column is left out.
fn agent_table(file: &str, bytes: &[u8], columns: &mut Vec<String>) -> Result<Table, FilesError> {
    let err = |message: String| FilesError::File {
        file: file.to_string(),
        message,
    };
    let list = match serde_json::from_slice::<Value>(bytes) {
        Ok(Value::Array(list)) => list,
        Ok(_) => return Err(err("not a JSON list".into())),
        Err(e) => return Err(err(e.to_string())),
    };
    for entry in &list {
        for key in entry.as_object().into_iter().flat_map(Map::keys) {
            if let Some(c) = stat_column(key) {
                if !columns.iter().any(|k| k == c) {
                    columns.push(c.to_string());
                }
            }
        }
    }
    // v0.7.0's keys after the statistics: repeat means across repeats (columns in order of first
    // appearance) and coverage, as `table::agent_table` heads them.
    let mut across: Vec<&str> = Vec::new();
    let mut listed: std::collections::HashSet<&str> = std::collections::HashSet::new();
    for entry in &list {
        for key in entry.as_object().into_iter().flat_map(Map::keys) {
            if let Some(c) = key.strip_prefix("mean_across_repeats/mean/") {
                if listed.insert(c) {
                    across.push(c);
                }
            }
        }
    }
    let coverage = list.iter().any(|e| e.get(table::COVERAGE[0]).is_some());
    let names: Vec<&str> = columns.iter().map(String::as_str).collect();
    let mut extra: Vec<String> = across
        .iter()
        .flat_map(|c| table::across_headers(c))
        .collect();
    if coverage {
        extra.extend(table::COVERAGE.map(String::from));
    }
    let empty = Map::new();
    let rows = list
        .iter()
        .map(|entry| {
            let entry = entry.as_object().unwrap_or(&empty);
            let key = match entry.get("agent_ref").and_then(|a| a.get("name")) {
                Some(Value::String(s)) => s.clone(),
                Some(Value::Number(n)) => {
                    let mut buf = Vec::new();
                    let _ = number_to_num(n).write_json(&mut buf);
                    String::from_utf8_lossy(&buf).into_owned()
                }
                Some(other) => other.to_string(),
                None => String::new(),
            };
            let mut cells: Vec<table::Cell> =
                table::stat_cells(&summaries(entry, &names)).collect();
            cells.extend(extra.iter().map(|h| {
                table::Cell::num(match entry.get(h) {
                    Some(Value::Number(n)) => Some(number_to_num(n)),
                    _ => None,
                })
            }));
            Row { key, cells }
        })
        .collect();
    let mut headers = table::stat_headers_of(&names);
    headers.extend(extra);
    Ok(Table { headers, rows })
}
