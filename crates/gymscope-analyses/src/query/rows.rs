//! A run as one row per rollout (docs/python.md `gymscope.rollouts`, docs/query.md `--format
//! rows`): each column is the query language's field of the same name, read by the same
//! [`RowView`](super::eval::RowView) an expression reads, so a row and a query can never
//! disagree on a value.
//!
//! Fixed columns ([`FIXED`]) first, then every numeric top-level field of the rows (verifier
//! fields such as `num_passed`), in the order first met.

use super::eval::{self, RowView};
use super::{read_keyed_with, Field, Query, RunFacts};
use crate::fast_map::FastMap;
use crate::health::Flag;
use crate::record::KeyTable;
use serde_json::Value;
use std::io::Write;

/// The token counts of `response.usage`, as the query language names them.
pub const TOKENS: [&str; 3] = ["input_tokens", "output_tokens", "total_tokens"];

/// The columns every row has, in order (a health flag is `health.<flag>`).
pub const FIXED: [&str; 17] = [
    "task",
    "rollout",
    "agent",
    "reward",
    "input_tokens",
    "output_tokens",
    "total_tokens",
    "tool_calls",
    "turns",
    "health.truncated",
    "health.empty_answer",
    "health.ended_on_tool",
    "health.empty_output",
    "health.loop",
    "health.tool_error",
    "health.malformed_arguments",
    "health.dangling_call",
];

/// One rollout's row. `None` is a missing value: a usage count that is absent or not an
/// integer, health flags of a row `gymscope health` cannot judge.
#[derive(Clone, Debug, PartialEq)]
pub struct RolloutRow {
    /// The row's line in the rollouts file (1-based).
    pub line: u64,
    pub task: i64,
    pub rollout: i64,
    pub agent: Option<String>,
    /// A numeric reward (a boolean as 0 or 1).
    pub reward: Option<f64>,
    pub tokens: [Option<i64>; 3],
    pub tool_calls: Option<i64>,
    pub turns: Option<i64>,
    /// Bits of [`Flag`].
    pub flags: Option<u16>,
    /// The numeric top-level fields but the indices and the reward, in the row's order.
    pub fields: Vec<(String, f64)>,
}

/// Reads `line` as a row; `None` for a blank line or, with `query`, a row it does not match
/// (the prefilter first, as `gymscope query`). The error names the column or field.
pub fn read_row(
    line: &[u8],
    line_no: u64,
    keys: &mut KeyTable,
    facts: &RunFacts,
    query: Option<&Query>,
) -> Result<Option<RolloutRow>, String> {
    if query.is_some_and(|q| !q.may_match(line)) {
        return Ok(None);
    }
    let Some(row) = read_keyed_with(line, keys)? else {
        return Ok(None);
    };
    let agent = facts.agent_of(&row);
    let view = RowView::new(line, row.key, agent, row.reward, facts);
    if query.is_some_and(|q| !eval::eval(&q.expr, &view, &mut None, false)) {
        return Ok(None);
    }
    Ok(Some(row_of(&view, line_no)))
}

fn row_of(view: &RowView, line: u64) -> RolloutRow {
    let int = |f: Field| view.field(&f).as_ref().and_then(Value::as_i64);
    let reward = match &view.reward {
        Some(Value::Number(n)) => n.as_f64(),
        Some(Value::Bool(b)) => Some(f64::from(u8::from(*b))),
        _ => None,
    };
    let fields = view
        .value()
        .and_then(Value::as_object)
        .map(|row| {
            row.iter()
                .filter(|(k, _)| !k.starts_with('_') && k.as_str() != "reward")
                .filter(|(k, _)| !FIXED.contains(&k.as_str()))
                .filter_map(|(k, v)| Some((k.clone(), v.as_f64()?)))
                .collect()
        })
        .unwrap_or_default();
    let signals = view.signals();
    RolloutRow {
        line,
        task: view.key.0,
        rollout: view.key.1,
        agent: view.agent.clone(),
        reward,
        tokens: TOKENS.map(|t| int(Field::Usage(vec![t.to_string()]))),
        tool_calls: int(Field::ToolCalls),
        turns: signals.map(|s| i64::from(s.turns)),
        flags: signals.map(|s| s.flags),
        fields,
    }
}

impl RolloutRow {
    /// Whether health flag `flag` is set (`None` when the row could not be judged).
    pub fn flag(&self, flag: Flag) -> Option<bool> {
        self.flags.map(|f| f & flag.bit() != 0)
    }

    /// The row as one JSON object, [`FIXED`] first (`null` when missing), then its own numeric
    /// fields: a line of `gymscope query --format rows`.
    pub fn write_json(&self, out: &mut Vec<u8>) {
        let mut o = serde_json::Map::new();
        let num = |v: Option<f64>| {
            v.and_then(serde_json::Number::from_f64)
                .map_or(Value::Null, Value::Number)
        };
        o.insert("task".into(), self.task.into());
        o.insert("rollout".into(), self.rollout.into());
        o.insert("agent".into(), self.agent.clone().into());
        o.insert("reward".into(), num(self.reward));
        for (name, v) in TOKENS.iter().zip(self.tokens) {
            o.insert((*name).into(), v.into());
        }
        o.insert("tool_calls".into(), self.tool_calls.into());
        o.insert("turns".into(), self.turns.into());
        for f in Flag::ALL {
            o.insert(format!("health.{}", f.as_str()), self.flag(f).into());
        }
        for (name, v) in &self.fields {
            o.insert(name.clone(), num(Some(*v)));
        }
        let _ = serde_json::to_writer(&mut *out, &Value::Object(o));
        let _ = out.write_all(b"\n");
    }
}

/// Rows gathered column by column (`gymscope.rollouts`' Arrow table): every row has every
/// column, `None` where it lacks a numeric field another row has.
#[derive(Debug, Default)]
pub struct RowColumns {
    pub line: Vec<u64>,
    pub task: Vec<i64>,
    pub rollout: Vec<i64>,
    pub agent: Vec<Option<String>>,
    pub reward: Vec<Option<f64>>,
    pub tokens: [Vec<Option<i64>>; 3],
    pub tool_calls: Vec<Option<i64>>,
    pub turns: Vec<Option<i64>>,
    pub flags: Vec<Option<u16>>,
    /// The numeric fields' names, first met first, and `values[f][row]`.
    pub fields: Vec<String>,
    pub values: Vec<Vec<Option<f64>>>,
    at: FastMap<String, usize>,
}

impl RowColumns {
    pub fn len(&self) -> usize {
        self.task.len()
    }
    pub fn is_empty(&self) -> bool {
        self.task.is_empty()
    }

    pub fn push(&mut self, row: RolloutRow) {
        let i = self.len();
        self.line.push(row.line);
        self.task.push(row.task);
        self.rollout.push(row.rollout);
        self.agent.push(row.agent);
        self.reward.push(row.reward);
        for (column, v) in self.tokens.iter_mut().zip(row.tokens) {
            column.push(v);
        }
        self.tool_calls.push(row.tool_calls);
        self.turns.push(row.turns);
        self.flags.push(row.flags);
        for (name, v) in row.fields {
            let f = if let Some(&f) = self.at.get(&name) {
                f
            } else {
                self.values.push(vec![None; i]);
                self.fields.push(name.clone());
                self.at.insert(name, self.fields.len() - 1);
                self.fields.len() - 1
            };
            // A name twice in one row (JSON allows it): the last value, as serde keeps it.
            if self.values[f].len() > i {
                self.values[f][i] = Some(v);
            } else {
                self.values[f].push(Some(v));
            }
        }
        for column in &mut self.values {
            if column.len() == i {
                column.push(None);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(line: &str, query: Option<&str>) -> Option<RolloutRow> {
        let q = query.map(|q| Query::parse(q).unwrap());
        let facts = RunFacts {
            pass_threshold: 1.0,
            ..RunFacts::default()
        };
        read_row(
            line.as_bytes(),
            7,
            &mut KeyTable::default(),
            &facts,
            q.as_ref(),
        )
        .unwrap()
    }

    const LINE: &str = r#"{"_ng_task_index":3,"_ng_rollout_index":1,"agent_ref":{"name":"a"},"reward":true,"num_passed":2,"note":"x","response":{"usage":{"input_tokens":10,"output_tokens":5.5,"total_tokens":15},"output":[{"type":"function_call","name":"f","arguments":"{}","call_id":"c"},{"type":"function_call_output","call_id":"c","output":"ok"},{"type":"message","role":"assistant","content":[{"type":"output_text","text":"done"}]}]}}"#;

    #[test]
    fn a_row_holds_the_query_languages_fields() {
        let r = row(LINE, None).unwrap();
        assert_eq!((r.line, r.task, r.rollout), (7, 3, 1));
        assert_eq!(r.agent.as_deref(), Some("a"));
        assert_eq!(r.reward, Some(1.0));
        // A token count that is not an integer is missing, not rounded.
        assert_eq!(r.tokens, [Some(10), None, Some(15)]);
        assert_eq!(r.tool_calls, Some(1));
        assert_eq!(r.fields, [("num_passed".to_string(), 2.0)]);
        assert_eq!(r.flag(Flag::EndedOnTool), Some(false));
        let mut json = Vec::new();
        r.write_json(&mut json);
        let v: Value = serde_json::from_slice(&json).unwrap();
        let keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(keys[..FIXED.len()], FIXED);
        assert_eq!(keys[FIXED.len()..], ["num_passed"]);
        assert_eq!(v["output_tokens"], Value::Null);
    }

    #[test]
    fn a_query_keeps_only_its_matches() {
        assert!(row(LINE, Some("tool_calls == 1 and output ~ \"done\"")).is_some());
        assert!(row(LINE, Some("output ~ \"absent\"")).is_none());
        assert!(row("   ", None).is_none());
    }

    #[test]
    fn columns_fill_what_a_row_lacks() {
        let mut c = RowColumns::default();
        c.push(row(LINE, None).unwrap());
        let other = LINE.replace("num_passed", "wer");
        c.push(row(&other, None).unwrap());
        assert_eq!(c.fields, ["num_passed", "wer"]);
        assert_eq!(c.values, [vec![Some(2.0), None], vec![None, Some(2.0)]]);
    }
}
