//! An ATIF trajectory file (v1.0 to v1.7) read into the parts gymscope shows and counts: the
//! agent, the steps (who spoke, the message, reasoning, tool calls and their observations,
//! token metrics) and the totals. Reading is lenient where a field only adds detail and strict
//! where meaning depends on it; every refusal names the field's place. Checking a file against
//! the schema is [`super::validate`].

use serde_json::{Map, Value};

/// Deeper than this, a trajectory is refused (real ones nest a few levels; `extra` and tool
/// arguments are the deep parts).
pub const MAX_DEPTH: usize = 64;

/// One trajectory file larger than this is refused (real ones are kilobytes to a few MB), by
/// the command line and the app alike.
pub const MAX_FILE_BYTES: u64 = 64 << 20;

#[derive(Clone, Debug, PartialEq)]
pub enum Part {
    Text(String),
    /// An image part: its media type and where the file is (kept as a reference, never read).
    Image {
        media_type: String,
        path: String,
    },
}

/// A message or an observation: text, or parts (text and images).
#[derive(Clone, Debug, PartialEq)]
pub enum Content {
    Text(String),
    Parts(Vec<Part>),
}

impl Content {
    /// The text, images as `[image: PATH]`.
    pub fn text(&self) -> String {
        match self {
            Content::Text(t) => t.clone(),
            Content::Parts(parts) => parts
                .iter()
                .map(|p| match p {
                    Part::Text(t) => t.clone(),
                    Part::Image { path, .. } => format!("[image: {path}]"),
                })
                .collect::<Vec<_>>()
                .join("\n"),
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct ToolCall {
    pub id: String,
    pub name: String,
    /// The arguments object.
    pub arguments: Value,
    /// `extra`, kept whole.
    pub extra: Option<Value>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Observation {
    pub source_call_id: Option<String>,
    pub content: Option<Content>,
    /// The result points at a subagent's trajectory (`subagent_trajectory_ref`).
    pub subagent: bool,
    pub extra: Option<Value>,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Metrics {
    pub prompt_tokens: Option<u64>,
    pub completion_tokens: Option<u64>,
    pub cached_tokens: Option<u64>,
    pub cost_usd: Option<f64>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Step {
    pub step_id: u64,
    /// `system`, `user` or `agent`.
    pub source: String,
    pub message: Content,
    pub timestamp: Option<String>,
    pub model_name: Option<String>,
    pub reasoning: Option<String>,
    pub tool_calls: Vec<ToolCall>,
    pub observations: Vec<Observation>,
    pub metrics: Option<Metrics>,
    /// `llm_call_count` (0: a step no model call made, such as a copied or scripted one).
    pub llm_call_count: Option<u64>,
    pub extra: Option<Value>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Trajectory {
    pub schema_version: String,
    pub session_id: Option<String>,
    pub trajectory_id: Option<String>,
    pub agent_name: String,
    pub agent_version: Option<String>,
    pub model_name: Option<String>,
    pub tool_definitions: Option<Value>,
    pub steps: Vec<Step>,
    pub final_metrics: Option<Metrics>,
    /// `extra`, kept whole (Gym's export keeps its provenance there).
    pub extra: Option<Value>,
}

/// Whether `value` looks like an ATIF trajectory (an object whose `schema_version` says ATIF).
pub fn is_atif(value: &Value) -> bool {
    value
        .get("schema_version")
        .and_then(Value::as_str)
        .is_some_and(|v| v.starts_with("ATIF-v"))
}

/// The supported versions: 1.0 to 1.7.
pub fn supported_version(v: &str) -> bool {
    matches!(
        v,
        "ATIF-v1.0"
            | "ATIF-v1.1"
            | "ATIF-v1.2"
            | "ATIF-v1.3"
            | "ATIF-v1.4"
            | "ATIF-v1.5"
            | "ATIF-v1.6"
            | "ATIF-v1.7"
    )
}

/// The deepest nesting in `value` (1 for a scalar), stopping once past `limit`.
pub fn depth(value: &Value, limit: usize) -> usize {
    fn walk(v: &Value, at: usize, limit: usize) -> usize {
        if at > limit {
            return at;
        }
        match v {
            Value::Array(items) => items
                .iter()
                .map(|x| walk(x, at + 1, limit))
                .max()
                .unwrap_or(at),
            Value::Object(m) => m
                .values()
                .map(|x| walk(x, at + 1, limit))
                .max()
                .unwrap_or(at),
            _ => at,
        }
    }
    walk(value, 1, limit)
}

type R<T> = Result<T, String>;

fn obj<'a>(v: &'a Value, at: &str) -> R<&'a Map<String, Value>> {
    v.as_object().ok_or_else(|| {
        format!(
            "{at}: expected an object, found {}",
            crate::json::describe(v)
        )
    })
}

fn opt_str(m: &Map<String, Value>, key: &str, at: &str) -> R<Option<String>> {
    match m.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(v) => Err(format!(
            "{at}.{key}: expected a string, found {}",
            crate::json::describe(v)
        )),
    }
}

fn req_str(m: &Map<String, Value>, key: &str, at: &str) -> R<String> {
    opt_str(m, key, at)?.ok_or_else(|| format!("{at}.{key}: required"))
}

/// A token count as Harbor's schema takes it (validate-atif agrees): an integer, or a float
/// with no fraction (Pydantic's lax `int`); a negative count, which the schema allows, is read
/// as unknown.
fn opt_count(m: &Map<String, Value>, key: &str, at: &str) -> R<Option<u64>> {
    match m.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) if n.as_u64().is_some() => Ok(n.as_u64()),
        Some(Value::Number(n)) if n.as_i64().is_some() => Ok(None),
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        Some(Value::Number(n))
            if n.as_f64()
                .is_some_and(|f| f.fract() == 0.0 && f.abs() < 9.007_199_254_740_992e15) =>
        {
            let f = n.as_f64().unwrap_or(0.0);
            Ok((f >= 0.0).then_some(f as u64))
        }
        Some(v) => Err(format!(
            "{at}.{key}: expected a non-negative integer, found {}",
            crate::json::describe(v)
        )),
    }
}

fn content(v: &Value, at: &str) -> R<Content> {
    match v {
        Value::String(s) => Ok(Content::Text(s.clone())),
        Value::Array(parts) => parts
            .iter()
            .enumerate()
            .map(|(i, p)| {
                let at = format!("{at}[{i}]");
                let m = obj(p, &at)?;
                match m.get("type").and_then(Value::as_str) {
                    Some("text") => Ok(Part::Text(req_str(m, "text", &at)?)),
                    Some("image") => {
                        let source = obj(
                            m.get("source").unwrap_or(&Value::Null),
                            &format!("{at}.source"),
                        )?;
                        Ok(Part::Image {
                            media_type: req_str(source, "media_type", &format!("{at}.source"))?,
                            path: req_str(source, "path", &format!("{at}.source"))?,
                        })
                    }
                    _ => Err(format!("{at}.type: expected \"text\" or \"image\"")),
                }
            })
            .collect::<R<Vec<Part>>>()
            .map(Content::Parts),
        _ => Err(format!(
            "{at}: expected a string or a list of content parts, found {}",
            crate::json::describe(v)
        )),
    }
}

fn metrics(v: &Value, at: &str, prefix: &str) -> R<Metrics> {
    let m = obj(v, at)?;
    let cost = match m.get(&format!("{prefix}cost_usd")) {
        None | Some(Value::Null) => None,
        Some(Value::Number(n)) => n.as_f64(),
        Some(v) => {
            return Err(format!(
                "{at}.{prefix}cost_usd: expected a number, found {}",
                crate::json::describe(v)
            ))
        }
    };
    Ok(Metrics {
        prompt_tokens: opt_count(m, &format!("{prefix}prompt_tokens"), at)?,
        completion_tokens: opt_count(m, &format!("{prefix}completion_tokens"), at)?,
        cached_tokens: opt_count(m, &format!("{prefix}cached_tokens"), at)?,
        cost_usd: cost,
    })
}

fn step(v: &Value, at: &str) -> R<Step> {
    let m = obj(v, at)?;
    let step_id = opt_count(m, "step_id", at)?.ok_or_else(|| format!("{at}.step_id: required"))?;
    let source = req_str(m, "source", at)?;
    if !matches!(source.as_str(), "system" | "user" | "agent") {
        return Err(format!(
            "{at}.source: expected \"system\", \"user\" or \"agent\", found {source:?}"
        ));
    }
    let message = match m.get("message") {
        None | Some(Value::Null) => Content::Text(String::new()),
        Some(v) => content(v, &format!("{at}.message"))?,
    };
    let tool_calls = match m.get("tool_calls") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(calls)) => calls
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let at = format!("{at}.tool_calls[{i}]");
                let c = obj(c, &at)?;
                let arguments = match c.get("arguments") {
                    None | Some(Value::Null) => Value::Object(Map::new()),
                    Some(a @ Value::Object(_)) => a.clone(),
                    Some(v) => {
                        return Err(format!(
                            "{at}.arguments: expected an object, found {}",
                            crate::json::describe(v)
                        ))
                    }
                };
                Ok(ToolCall {
                    id: req_str(c, "tool_call_id", &at)?,
                    name: req_str(c, "function_name", &at)?,
                    arguments,
                    extra: c.get("extra").filter(|e| !e.is_null()).cloned(),
                })
            })
            .collect::<R<_>>()?,
        Some(v) => {
            return Err(format!(
                "{at}.tool_calls: expected a list, found {}",
                crate::json::describe(v)
            ))
        }
    };
    let observations = match m.get("observation") {
        None | Some(Value::Null) => Vec::new(),
        Some(o) => {
            let o = obj(o, &format!("{at}.observation"))?;
            match o.get("results") {
                Some(Value::Array(results)) => results
                    .iter()
                    .enumerate()
                    .map(|(i, r)| {
                        let at = format!("{at}.observation.results[{i}]");
                        let r = obj(r, &at)?;
                        Ok(Observation {
                            source_call_id: opt_str(r, "source_call_id", &at)?,
                            content: match r.get("content") {
                                None | Some(Value::Null) => None,
                                Some(c) => Some(content(c, &format!("{at}.content"))?),
                            },
                            subagent: r
                                .get("subagent_trajectory_ref")
                                .is_some_and(|s| !s.is_null()),
                            extra: r.get("extra").filter(|e| !e.is_null()).cloned(),
                        })
                    })
                    .collect::<R<_>>()?,
                _ => return Err(format!("{at}.observation.results: expected a list")),
            }
        }
    };
    Ok(Step {
        step_id,
        source,
        message,
        timestamp: opt_str(m, "timestamp", at)?,
        model_name: opt_str(m, "model_name", at)?,
        reasoning: opt_str(m, "reasoning_content", at)?,
        tool_calls,
        observations,
        metrics: match m.get("metrics") {
            None | Some(Value::Null) => None,
            Some(v) => Some(metrics(v, &format!("{at}.metrics"), "")?),
        },
        llm_call_count: opt_count(m, "llm_call_count", at)?,
        extra: m.get("extra").filter(|e| !e.is_null()).cloned(),
    })
}

/// Reads one trajectory. `Err` names the field's place (`steps[2].tool_calls[0].function_name:
/// required`).
pub fn read(v: &Value) -> R<Trajectory> {
    if depth(v, MAX_DEPTH) > MAX_DEPTH {
        return Err(format!("nested deeper than {MAX_DEPTH} levels"));
    }
    let m = obj(v, "trajectory")?;
    let schema_version = req_str(m, "schema_version", "trajectory")?;
    if !supported_version(&schema_version) {
        return Err(format!(
            "schema_version: {schema_version:?} is not a version gymscope reads (ATIF-v1.0 to ATIF-v1.7)"
        ));
    }
    let agent = obj(m.get("agent").unwrap_or(&Value::Null), "agent")?;
    let steps = match m.get("steps") {
        Some(Value::Array(steps)) if !steps.is_empty() => steps
            .iter()
            .enumerate()
            .map(|(i, s)| step(s, &format!("steps[{i}]")))
            .collect::<R<Vec<Step>>>()?,
        Some(Value::Array(_)) => {
            return Err("steps: empty (a trajectory has at least one step)".into())
        }
        _ => return Err("steps: required (a list of steps)".into()),
    };
    Ok(Trajectory {
        schema_version,
        session_id: opt_str(m, "session_id", "trajectory")?,
        trajectory_id: opt_str(m, "trajectory_id", "trajectory")?,
        agent_name: req_str(agent, "name", "agent")?,
        agent_version: opt_str(agent, "version", "agent")?,
        model_name: opt_str(agent, "model_name", "agent")?,
        tool_definitions: agent
            .get("tool_definitions")
            .filter(|t| !t.is_null())
            .cloned(),
        steps,
        final_metrics: match m.get("final_metrics") {
            None | Some(Value::Null) => None,
            Some(v) => Some(metrics(v, "final_metrics", "total_")?),
        },
        extra: m.get("extra").filter(|e| !e.is_null()).cloned(),
    })
}

impl Trajectory {
    /// Prompt and completion tokens: the totals, else the steps' sums (`None` when neither
    /// says).
    pub fn tokens(&self) -> (Option<u64>, Option<u64>) {
        let sum = |f: fn(&Metrics) -> Option<u64>| {
            let values: Vec<u64> = self
                .steps
                .iter()
                .filter_map(|s| s.metrics.as_ref().and_then(f))
                .collect();
            (!values.is_empty()).then(|| values.iter().sum())
        };
        let total = self.final_metrics.as_ref();
        (
            total
                .and_then(|t| t.prompt_tokens)
                .or_else(|| sum(|m| m.prompt_tokens)),
            total
                .and_then(|t| t.completion_tokens)
                .or_else(|| sum(|m| m.completion_tokens)),
        )
    }

    /// `(task, rollout)` from a `trajectory_id` of the form `session:task:rollout` (Gym's).
    pub fn gym_indices(&self) -> Option<(u64, u64)> {
        let id = self.trajectory_id.as_deref()?;
        let mut parts = id.rsplitn(3, ':');
        let rollout = parts.next()?.parse().ok()?;
        let task = parts.next()?.parse().ok()?;
        parts.next()?;
        Some((task, rollout))
    }
}
