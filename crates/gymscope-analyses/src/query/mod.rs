//! The query language: one small expression over rollout rows (`reward == 0 and output ~
//! "\\boxed"`), parsed and evaluated here for the CLI's `gymscope query` (docs/query.md "gymscope
//! query").
//!
//! - `lex`, `parse`: tokens with their columns, and the tree (precedence, errors that name the
//!   column and what was expected);
//! - `field`: what each name refers to in a row;
//! - `eval`: the evaluation on one row, two-valued;
//! - `run`: a whole run fed line by line (inputs, a first read for task aggregates, the match);
//! - `pooled`: the same three reads in the app's pool of workers, in byte ranges;
//! - `prefilter`: the substrings a row must hold for a text predicate to match, so that a row
//!   without them is answered without parsing it;
//! - `rows`: a run as one row per rollout, its columns the language's fields (`gymscope.rollouts`,
//!   `query --format rows`).

mod eval;
mod field;
mod keyed;
mod lex;
mod parse;
pub mod pooled;
mod prefilter;
pub mod rows;
mod run;

pub use eval::Hit;
pub use eval::{compare, eval_fields};
pub use field::{Field, Scope, BUILT_IN};
pub use lex::{string_literal, Op};
pub use parse::{Expr, Lit, Pattern};
pub use run::QueryRun;

use crate::record::{AgentField, IndexField, KeyTable, Reward, RowKind};
use crate::reward_group::Outcomes;
use serde_json::Value;
use std::collections::HashMap;

/// A malformed expression: where and what was expected there.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("column {column}: {message}")]
pub struct ParseError {
    pub column: usize,
    pub message: String,
}

/// A parsed expression and what reading a run for it needs.
#[derive(Clone, Debug)]
pub struct Query {
    pub source: String,
    expr: Expr,
    /// What a row must hold to be worth reading (`prefilter`).
    prefilter: Option<prefilter::Prefilter>,
}

/// What a query knows of the run beyond one row: task aggregates, each rollout's agent from the
/// materialized inputs, upstream's verdicts, the pass threshold and the health mode. Sent to the
/// app's pool workers for the matching read (`pooled`).
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct RunFacts {
    pub tasks: HashMap<i64, TaskStats>,
    /// Each rollout's agent as NeMo Gym v0.7.0 labels it, from the materialized inputs
    /// ([`RunFacts::label_inputs`]).
    pub input_agents: HashMap<(i64, i64), String>,
    /// The inputs' rows read so far, until [`RunFacts::label_inputs`] labels them.
    #[serde(skip)]
    pub input_runs: Vec<run::InputRun>,
    pub verdicts: Option<HashMap<(i64, i64), String>>,
    pub pass_threshold: f64,
    /// `--single-step`: health flags judge every rollout as one action.
    pub single_step: bool,
}

/// A task's rollouts in this run: their numeric rewards (booleans as 0/1) and outcomes.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct TaskStats {
    sum: f64,
    rewards: u32,
    pub outcomes: Outcomes,
}

impl TaskStats {
    pub fn add(&mut self, reward: Option<f64>, threshold: f64) {
        if let Some(r) = reward.filter(|r| !r.is_nan()) {
            self.sum += r;
            self.rewards += 1;
        }
        self.outcomes.add(reward, threshold);
    }
    /// The mean of the numeric rewards (the profile's `mean/reward`).
    pub fn mean(&self) -> Option<f64> {
        (self.rewards > 0).then(|| self.sum / f64::from(self.rewards))
    }
    /// The share of graded rollouts whose reward passes.
    pub fn pass_rate(&self) -> Option<f64> {
        self.outcomes.pass_rate()
    }
}

/// One row read for a query: its key, agent and reward, by the profile's reader.
#[derive(Clone, Debug, PartialEq)]
pub struct KeyedRow {
    pub key: (i64, i64),
    /// `agent_ref.name` of the row itself.
    pub agent: Option<String>,
    pub reward: Option<Value>,
}

/// A row that matched: its key and agent, the first text hit, and the row parsed (when it was).
#[derive(Clone, Debug, PartialEq)]
pub struct Matched {
    pub key: (i64, i64),
    pub agent: Option<String>,
    pub reward: Option<Value>,
    pub hit: Option<Hit>,
    /// Values of the fields asked for (`--fields`, the table's columns), as JSON (`None`: missing).
    pub fields: Vec<Option<Value>>,
}

/// Reads one rollout line with the profile's reader: `Ok(None)` for a blank line; the error
/// names the column or field (the caller names the file and line).
pub fn read_keyed(line: &[u8]) -> Result<Option<KeyedRow>, String> {
    read_keyed_with(line, &mut KeyTable::default())
}

/// [`read_keyed`] with the field-name table kept from line to line (as the profile keeps it:
/// a run's rows share their names, so none is allocated again).
pub fn read_keyed_with(line: &[u8], keys: &mut KeyTable) -> Result<Option<KeyedRow>, String> {
    if line.iter().all(u8::is_ascii_whitespace) {
        return Ok(None);
    }
    if let Some(row) = keyed::skim_keyed(line) {
        return Ok(Some(row));
    }
    read_keyed_by_profile(line, keys).map(Some)
}

/// The profile's reading of the row: its errors, its reading of every shape.
#[doc(hidden)]
pub fn read_keyed_by_profile(line: &[u8], keys: &mut KeyTable) -> Result<KeyedRow, String> {
    let row = crate::record::parse_row(line, RowKind::Rollout, keys)
        .map_err(|e| format!("column {}: {}", e.column, e.message))?;
    let index = |name: &str, f: IndexField| match f {
        IndexField::Int(v) | IndexField::Typed(v, _) => Ok(v),
        IndexField::Missing => Err(format!("field `{name}` is missing")),
        IndexField::Invalid(what) => {
            Err(format!("field `{name}` must be an integer, found {what}"))
        }
    };
    let key = (
        index(crate::gym::keys::TASK_INDEX, row.task)?,
        index(crate::gym::keys::ROLLOUT_INDEX, row.rollout)?,
    );
    let agent = match row.agent {
        AgentField::Name(n) => Some(n.into_string()),
        _ => None,
    };
    let reward = row.reward.map(|r| match r {
        Reward::Num(crate::json::Num::Int(i)) => Value::from(i),
        Reward::Num(crate::json::Num::UInt(u)) => Value::from(u),
        Reward::Num(crate::json::Num::Float(f)) => {
            serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number)
        }
        Reward::Other(v) => *v,
    });
    Ok(KeyedRow { key, agent, reward })
}

impl Query {
    /// Parses `source`; the error names the column.
    pub fn parse(source: &str) -> Result<Query, ParseError> {
        let expr = parse::parse(source)?;
        let prefilter = prefilter::Prefilter::of(&expr);
        Ok(Query {
            source: source.to_string(),
            expr,
            prefilter,
        })
    }

    pub fn expr(&self) -> &Expr {
        &self.expr
    }

    /// Every field the expression names.
    pub fn fields(&self) -> Vec<&Field> {
        fn walk<'e>(e: &'e Expr, out: &mut Vec<&'e Field>) {
            match e {
                Expr::Or(a, b) | Expr::And(a, b) => {
                    walk(a, out);
                    walk(b, out);
                }
                Expr::Not(a) => walk(a, out),
                Expr::Cmp { field, .. } | Expr::Match { field, .. } | Expr::Truthy(field) => {
                    out.push(field);
                }
            }
        }
        let mut out = Vec::new();
        walk(&self.expr, &mut out);
        out
    }

    /// Whether the task aggregates are needed (a first read of the run's rewards).
    pub fn needs_tasks(&self) -> bool {
        self.fields().iter().any(|f| {
            matches!(
                f,
                Field::TaskMeanReward | Field::TaskPassRate | Field::TaskGroup
            )
        })
    }

    /// Whether `line` may match: `false` only when its raw bytes lack the text the expression
    /// needs (`prefilter`), and then the line need not be read at all.
    pub fn may_match(&self, line: &[u8]) -> bool {
        self.prefilter.as_ref().is_none_or(|p| p.may_hold(line))
    }

    /// A rollout line's match: read (by the profile's reader, `keys` kept from line to line)
    /// only when it [may match](Self::may_match), so a row that cannot match costs a search of
    /// its bytes and its errors go unseen; the error names the column or field.
    pub fn match_line(
        &self,
        line: &[u8],
        keys: &mut KeyTable,
        facts: &RunFacts,
        extra: &[Field],
    ) -> Result<Option<Matched>, String> {
        if !self.may_match(line) {
            return Ok(None);
        }
        Ok(read_keyed_with(line, keys)?.and_then(|row| self.evaluate(line, row, facts, extra)))
    }

    /// Whether `line` (read as `row`) matches; `extra` are the fields whose values the caller
    /// wants of a match.
    pub fn matches(
        &self,
        line: &[u8],
        row: KeyedRow,
        facts: &RunFacts,
        extra: &[Field],
    ) -> Option<Matched> {
        if !self.may_match(line) {
            return None;
        }
        self.evaluate(line, row, facts, extra)
    }

    fn evaluate(
        &self,
        line: &[u8],
        row: KeyedRow,
        facts: &RunFacts,
        extra: &[Field],
    ) -> Option<Matched> {
        let agent = facts.agent_of(&row);
        let view = eval::RowView::new(line, row.key, agent, row.reward, facts);
        let mut hit = None;
        if !eval::eval(&self.expr, &view, &mut hit, false) {
            return None;
        }
        Some(Matched {
            key: view.key,
            fields: extra.iter().map(|f| view.field(f)).collect(),
            agent: view.agent.clone(),
            reward: view.reward.clone(),
            hit,
        })
    }

    /// The same answer without the prefilter: the reference the fast path is tested against.
    #[doc(hidden)]
    pub fn matches_slowly(&self, line: &[u8], row: KeyedRow, facts: &RunFacts) -> bool {
        let agent = facts.agent_of(&row);
        let view = eval::RowView::new(line, row.key, agent, row.reward, facts);
        eval::eval(&self.expr, &view, &mut None, false)
    }
}

/// The top-level keys of a row (for `--strict`'s list of the run's fields).
pub fn top_level_keys(line: &[u8]) -> Vec<String> {
    #[derive(serde::Deserialize)]
    struct Keys(#[serde(with = "keys_only")] Vec<String>);
    mod keys_only {
        use serde::de::{Deserializer, IgnoredAny, MapAccess, Visitor};
        pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
            struct V;
            impl<'de> Visitor<'de> for V {
                type Value = Vec<String>;
                fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                    f.write_str("an object")
                }
                fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<Vec<String>, A::Error> {
                    let mut out = Vec::new();
                    while let Some(k) = m.next_key::<String>()? {
                        m.next_value::<IgnoredAny>()?;
                        out.push(k);
                    }
                    Ok(out)
                }
            }
            d.deserialize_map(V)
        }
    }
    serde_json::from_slice::<Keys>(line).map_or_else(|_| Vec::new(), |k| k.0)
}

#[cfg(test)]
mod prefilter_props;
#[cfg(test)]
mod tests;
