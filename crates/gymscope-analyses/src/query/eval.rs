//! An expression evaluated on one rollout row: the row read by the profile's reader (keys,
//! agent, reward: its reading, its errors), everything else from the row parsed once into a
//! `serde_json::Value` when a predicate first needs it, health flags by `gymscope health`'s own
//! reading of the line. Logic is two-valued: a missing or null value makes a comparison false.

use super::field::{Field, Scope};
use super::lex::Op;
use super::parse::{Expr, Lit, Pattern};
use super::RunFacts;
use crate::health::Signals;
use serde_json::Value;
use std::cell::OnceCell;
use std::cmp::Ordering;

/// The first text a true `~` predicate matched: where, the part, and the match's byte range.
#[derive(Clone, Debug, PartialEq)]
pub struct Hit {
    /// The scope or field name (`output`, `args`, `agent`, …).
    pub scope: String,
    pub text: String,
    pub range: (usize, usize),
}

impl Hit {
    /// The match with up to `width` characters of context either side, on one line (newlines
    /// and tabs shown as spaces): `(before, matched, after)`, an ellipsis where text was cut.
    pub fn context(&self, width: usize) -> (String, String, String) {
        let flat = |s: &str| s.replace(['\n', '\r', '\t'], " ");
        let (start, end) = self.range;
        let before = &self.text[..start];
        let cut = before.char_indices().rev().nth(width.saturating_sub(1));
        let before = match cut {
            Some((at, _)) if at > 0 => format!("…{}", &before[at..]),
            _ => before.to_string(),
        };
        let after = &self.text[end..];
        let after = match after.char_indices().nth(width) {
            Some((at, _)) => format!("{}…", &after[..at]),
            None => after.to_string(),
        };
        (flat(&before), flat(&self.text[start..end]), flat(&after))
    }
}

/// One rollout row as the expression sees it.
pub(super) struct RowView<'a> {
    pub line: &'a [u8],
    pub key: (i64, i64),
    /// `agent_ref.name` of the row, or else its materialized input's.
    pub agent: Option<String>,
    pub reward: Option<Value>,
    pub facts: &'a RunFacts,
    value: OnceCell<Option<Value>>,
    signals: OnceCell<Option<Signals>>,
}

impl<'a> RowView<'a> {
    pub fn new(
        line: &'a [u8],
        key: (i64, i64),
        agent: Option<String>,
        reward: Option<Value>,
        facts: &'a RunFacts,
    ) -> Self {
        RowView {
            line,
            key,
            agent,
            reward,
            facts,
            value: OnceCell::new(),
            signals: OnceCell::new(),
        }
    }

    /// The whole row, parsed once (the profile's reader already found it valid JSON).
    pub fn value(&self) -> Option<&Value> {
        self.value
            .get_or_init(|| serde_json::from_slice(self.line).ok())
            .as_ref()
    }

    pub fn signals(&self) -> Option<&Signals> {
        self.signals
            .get_or_init(|| crate::health::row_signals(self.line, self.facts.single_step).ok())
            .as_ref()
    }

    fn output_items(&self) -> impl Iterator<Item = &Value> {
        self.value()
            .and_then(|v| v.pointer("/response/output"))
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
    }

    fn items_of<'s>(&'s self, kind: &'s str) -> impl Iterator<Item = &'s Value> + 's {
        self.output_items()
            .filter(move |i| i.get("type").and_then(Value::as_str) == Some(kind))
    }

    /// A field's value; `None` when missing.
    pub fn field(&self, field: &Field) -> Option<Value> {
        let num = |n: f64| serde_json::Number::from_f64(n).map(Value::Number);
        match field {
            Field::Task => Some(Value::from(self.key.0)),
            Field::Rollout => Some(Value::from(self.key.1)),
            Field::Agent => self.agent.clone().map(Value::String),
            Field::Reward => self.reward.clone(),
            Field::ToolCalls => Some(Value::from(self.items_of("function_call").count() as u64)),
            Field::Tool => None, // compared call by call (`compare_tool`)
            Field::Verdict => self
                .facts
                .verdicts
                .as_ref()?
                .get(&self.key)
                .cloned()
                .map(Value::String),
            Field::Health(flag) => self.signals().map(|s| Value::Bool(s.has(*flag))),
            Field::TaskMeanReward => num(self.facts.tasks.get(&self.key.0)?.mean()?),
            Field::TaskPassRate => num(self.facts.tasks.get(&self.key.0)?.pass_rate()?),
            Field::TaskGroup => Some(Value::String(
                self.facts
                    .tasks
                    .get(&self.key.0)?
                    .outcomes
                    .group()
                    .as_str()
                    .to_string(),
            )),
            Field::Usage(path) => walk(self.value()?.pointer("/response/usage")?, path).cloned(),
            // A plain name not in the row is its usage field, as the profile's columns flatten
            // `response.usage` (the row's own field wins, as there).
            Field::Path(path) => {
                let row = self.value()?;
                walk(row, path)
                    .or_else(|| match path.as_slice() {
                        [name] if row.get(name).is_none() => {
                            row.pointer("/response/usage")?.get(name)
                        }
                        _ => None,
                    })
                    .cloned()
            }
            Field::Scope(_) => None,
        }
    }

    /// Each text part of `scope`, in row order, with the scope it belongs to.
    pub fn parts(&self, scope: Scope) -> Vec<(Scope, std::borrow::Cow<'_, str>)> {
        use std::borrow::Cow;
        let mut out: Vec<(Scope, Cow<str>)> = Vec::new();
        if scope == Scope::Prompt {
            if let Some(input) = self
                .value()
                .and_then(|v| v.pointer("/responses_create_params/input"))
            {
                match input {
                    Value::String(s) => out.push((Scope::Prompt, Cow::Borrowed(s))),
                    Value::Array(items) => {
                        for item in items {
                            content_texts(item.get("content"), &mut |t| {
                                out.push((Scope::Prompt, Cow::Borrowed(t)));
                            });
                        }
                    }
                    _ => {}
                }
            }
            return out;
        }
        for item in self.output_items() {
            let kind = item.get("type").and_then(Value::as_str);
            match kind {
                Some("message") if scope.includes(Scope::Output) => {
                    content_texts(item.get("content"), &mut |t| {
                        out.push((Scope::Output, Cow::Borrowed(t)));
                    });
                }
                Some("reasoning") if scope.includes(Scope::Reasoning) => {
                    for s in item
                        .get("summary")
                        .and_then(Value::as_array)
                        .into_iter()
                        .flatten()
                    {
                        if let Some(t) = s.get("text").and_then(Value::as_str) {
                            out.push((Scope::Reasoning, Cow::Borrowed(t)));
                        }
                    }
                }
                Some("function_call") if scope.includes(Scope::Args) => {
                    if let Some(a) = item.get("arguments") {
                        string_leaves(a, &mut |t| out.push((Scope::Args, Cow::Borrowed(t))));
                    }
                }
                Some("function_call_output") if scope.includes(Scope::ToolOutput) => {
                    if let Some(o) = item.get("output") {
                        string_leaves(o, &mut |t| out.push((Scope::ToolOutput, Cow::Borrowed(t))));
                    }
                }
                _ => {}
            }
        }
        out
    }
}

/// A string as itself; in a list or object (arguments given as an object, an output as content
/// parts) each string inside, one part each: text is matched as the row holds it, never as a
/// re-serialization (which would differ from the line in spacing and number spelling).
fn string_leaves<'v>(v: &'v Value, push: &mut impl FnMut(&'v str)) {
    match v {
        Value::String(s) => push(s),
        Value::Array(a) => a.iter().for_each(|x| string_leaves(x, push)),
        Value::Object(m) => m.values().for_each(|x| string_leaves(x, push)),
        _ => {}
    }
}

/// The texts of a message's `content`: a plain string, or its parts' `text` strings.
fn content_texts<'v>(content: Option<&'v Value>, push: &mut impl FnMut(&'v str)) {
    match content {
        Some(Value::String(s)) => push(s),
        Some(Value::Array(parts)) => {
            for p in parts {
                if let Some(t) = p.get("text").and_then(Value::as_str) {
                    push(t);
                }
            }
        }
        _ => {}
    }
}

fn walk<'v>(mut v: &'v Value, path: &[String]) -> Option<&'v Value> {
    for key in path {
        v = v.as_object()?.get(key)?;
    }
    Some(v)
}

/// `value OP lit` under the language's rules: missing or null is false whatever the operator
/// (`== null` aside); numbers compare as numbers; a boolean is never a number; values of
/// different kinds are unequal.
pub fn compare(value: Option<&Value>, op: Op, lit: &Lit) -> bool {
    let absent = matches!(value, None | Some(Value::Null));
    if *lit == Lit::Null {
        return match op {
            Op::Eq => absent,
            Op::Ne => !absent,
            _ => false,
        };
    }
    let Some(value) = value.filter(|_| !absent) else {
        return false;
    };
    let order = match (value, lit) {
        (Value::Number(n), Lit::Num(x)) => n.as_f64().and_then(|n| n.partial_cmp(x)),
        (Value::Number(n), Lit::Int(x)) => number_cmp_int(n, *x),
        (Value::String(s), Lit::Str(x)) => Some(s.as_str().cmp(x.as_str())),
        (Value::Bool(b), Lit::Bool(x)) => Some(b.cmp(x)).filter(|_| matches!(op, Op::Eq | Op::Ne)),
        _ => None,
    };
    match (order, op) {
        (Some(o), Op::Eq) => o == Ordering::Equal,
        (Some(o), Op::Ne) => o != Ordering::Equal,
        (Some(o), Op::Lt) => o == Ordering::Less,
        (Some(o), Op::Le) => o != Ordering::Greater,
        (Some(o), Op::Gt) => o == Ordering::Greater,
        (Some(o), Op::Ge) => o != Ordering::Less,
        (None, Op::Ne) => true,
        (None, _) => false,
    }
}

/// A JSON number against an integer literal, exactly: integers as integers, a whole float as
/// the integer it is, any other float as a float (it is then below 2^52, where the literal's
/// rounding cannot change the order).
fn number_cmp_int(n: &serde_json::Number, x: i128) -> Option<Ordering> {
    if let Some(v) = n.as_i64() {
        return Some(i128::from(v).cmp(&x));
    }
    if let Some(v) = n.as_u64() {
        return Some(i128::from(v).cmp(&x));
    }
    let f = n.as_f64()?;
    if f.fract() == 0.0 && f.abs() < 1e38 {
        Some((f as i128).cmp(&x))
    } else {
        f.partial_cmp(&(x as f64))
    }
}

/// Evaluates `e`; the first text hit of a predicate that made the row match (outside any
/// `not`) goes to `hit`.
pub(super) fn eval(e: &Expr, row: &RowView, hit: &mut Option<Hit>, negated: bool) -> bool {
    match e {
        Expr::Or(a, b) => eval(a, row, hit, negated) || eval(b, row, hit, negated),
        Expr::And(a, b) => eval(a, row, hit, negated) && eval(b, row, hit, negated),
        Expr::Not(a) => !eval(a, row, hit, !negated),
        Expr::Truthy(f) => compare(row.field(f).as_ref(), Op::Eq, &Lit::Bool(true)),
        Expr::Cmp {
            field: Field::Tool,
            op,
            value,
        } => {
            let any = |op: Op| {
                row.items_of("function_call")
                    .any(|c| compare(c.get("name"), op, value))
            };
            match op {
                Op::Ne => !any(Op::Eq),
                op => any(*op),
            }
        }
        Expr::Cmp { field, op, value } => compare(row.field(field).as_ref(), *op, value),
        Expr::Match { field, pattern } => {
            let found = match field {
                Field::Scope(scope) => row.parts(*scope).into_iter().find_map(|(part, text)| {
                    pattern.find(&text).map(|range| Hit {
                        scope: part.as_str().to_string(),
                        text: text.into_owned(),
                        range,
                    })
                }),
                Field::Tool => row.items_of("function_call").find_map(|c| {
                    let name = c.get("name")?.as_str()?;
                    found(pattern, "tool", name)
                }),
                other => match row.field(other) {
                    Some(Value::String(s)) => found(pattern, &label(other), &s),
                    _ => None,
                },
            };
            match found {
                Some(h) => {
                    if !negated && hit.is_none() {
                        *hit = Some(h);
                    }
                    true
                }
                None => false,
            }
        }
    }
}

/// Evaluates `e` by field values alone (`get`): the columns of a loaded run, a profile's task
/// row. A text scope or `tool` has no value there, so its predicates are false: callers send
/// such expressions to the file instead, or refuse them.
pub fn eval_fields(e: &Expr, get: &dyn Fn(&Field) -> Option<Value>) -> bool {
    match e {
        Expr::Or(a, b) => eval_fields(a, get) || eval_fields(b, get),
        Expr::And(a, b) => eval_fields(a, get) && eval_fields(b, get),
        Expr::Not(a) => !eval_fields(a, get),
        Expr::Truthy(f) => compare(get(f).as_ref(), Op::Eq, &Lit::Bool(true)),
        Expr::Cmp { field, op, value } => compare(get(field).as_ref(), *op, value),
        Expr::Match { field, pattern } => match get(field) {
            Some(Value::String(s)) => pattern.find(&s).is_some(),
            _ => false,
        },
    }
}

fn found(pattern: &Pattern, scope: &str, text: &str) -> Option<Hit> {
    pattern.find(text).map(|range| Hit {
        scope: scope.to_string(),
        text: text.to_string(),
        range,
    })
}

fn label(f: &Field) -> String {
    match f {
        Field::Agent => "agent".into(),
        Field::Verdict => "verdict".into(),
        Field::TaskGroup => "task.group".into(),
        Field::Usage(p) => format!("usage.{}", p.join(".")),
        Field::Path(p) => p.join("."),
        _ => "field".into(),
    }
}
