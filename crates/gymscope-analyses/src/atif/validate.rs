//! An ATIF file checked against the schema as Harbor's validator checks it (harbor 0.22.0,
//! `harbor/utils/trajectory_validator.py` and the models in `harbor/models/trajectories/`):
//! versions ATIF-v1.0 to v1.7 checked against the v1.7 models, unknown fields refused at every
//! level, required fields, step ids 1..n, `source`, the fields only agent steps may have,
//! `llm_call_count` 0 without LLM output, tool-call / observation pairing, metric types,
//! content parts, subagent references and embedded subagent trajectories. Unlike Harbor, which
//! stops at the first root-level error, every error is listed, each with its place
//! (`steps[2].tool_calls[0].function_name`).

use serde_json::{Map, Value};
use std::collections::HashSet;

/// One error: the field's place and what is wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Problem {
    pub at: String,
    pub what: String,
}

/// A relative image path a trajectory references (the face checks the file exists).
pub type ImagePath = String;

struct Check {
    problems: Vec<Problem>,
    images: Vec<(String, ImagePath)>,
}

impl Check {
    fn add(&mut self, at: &str, what: impl Into<String>) {
        self.problems.push(Problem {
            at: at.to_string(),
            what: what.into(),
        });
    }

    fn fields(&mut self, v: &Value, at: &str, allowed: &[&str]) -> Option<Map<String, Value>> {
        let Value::Object(m) = v else {
            self.add(
                at,
                format!("expected an object, got {}", crate::json::describe(v)),
            );
            return None;
        };
        for k in m.keys().filter(|k| !allowed.contains(&k.as_str())) {
            self.add(&join(at, k), "unexpected field (not part of ATIF schema)");
        }
        Some(m.clone())
    }

    fn required<'a>(
        &mut self,
        m: &'a Map<String, Value>,
        at: &str,
        key: &str,
    ) -> Option<&'a Value> {
        match m.get(key) {
            None => {
                self.add(&join(at, key), "required field is missing");
                None
            }
            Some(v) => Some(v),
        }
    }

    fn string(&mut self, m: &Map<String, Value>, at: &str, key: &str, required: bool) {
        match m.get(key) {
            None if required => self.add(&join(at, key), "required field is missing"),
            None | Some(Value::String(_)) => {}
            Some(Value::Null) if !required => {}
            Some(v) => self.add(
                &join(at, key),
                format!("expected a string, got {}", crate::json::describe(v)),
            ),
        }
    }

    fn object(&mut self, m: &Map<String, Value>, at: &str, key: &str) {
        match m.get(key) {
            None | Some(Value::Null | Value::Object(_)) => {}
            Some(v) => self.add(
                &join(at, key),
                format!("expected an object, got {}", crate::json::describe(v)),
            ),
        }
    }

    fn integer(&mut self, m: &Map<String, Value>, at: &str, key: &str, min: Option<i64>) {
        match m.get(key) {
            None | Some(Value::Null) => {}
            Some(v) => match as_int(v) {
                Some(i) if min.is_some_and(|min| i < min) => {
                    self.add(
                        &join(at, key),
                        format!("must be at least {}, got {i}", min.unwrap_or(0)),
                    );
                }
                Some(_) => {}
                None => self.add(
                    &join(at, key),
                    format!("expected an integer, got {}", crate::json::describe(v)),
                ),
            },
        }
    }

    fn number(&mut self, m: &Map<String, Value>, at: &str, key: &str) {
        match m.get(key) {
            None | Some(Value::Null | Value::Number(_)) => {}
            Some(v) => self.add(
                &join(at, key),
                format!("expected a number, got {}", crate::json::describe(v)),
            ),
        }
    }

    fn list_of(
        &mut self,
        m: &Map<String, Value>,
        at: &str,
        key: &str,
        each: fn(&Value) -> bool,
        what: &str,
    ) {
        match m.get(key) {
            None | Some(Value::Null) => {}
            Some(Value::Array(items)) => {
                if let Some(i) = items.iter().position(|x| !each(x)) {
                    self.add(
                        &format!("{}[{i}]", join(at, key)),
                        format!("expected {what}"),
                    );
                }
            }
            Some(v) => self.add(
                &join(at, key),
                format!("expected a list, got {}", crate::json::describe(v)),
            ),
        }
    }
}

fn join(at: &str, key: &str) -> String {
    if at.is_empty() {
        key.to_string()
    } else {
        format!("{at}.{key}")
    }
}

/// An integer as Pydantic's lax int takes it from JSON: an integer, or a float without fraction.
fn as_int(v: &Value) -> Option<i64> {
    match v {
        Value::Number(n) => n.as_i64().or_else(|| {
            n.as_f64()
                .filter(|f| f.fract() == 0.0 && f.abs() < 9.2e18)
                .map(|f| f as i64)
        }),
        _ => None,
    }
}

const VERSIONS: [&str; 8] = [
    "ATIF-v1.0",
    "ATIF-v1.1",
    "ATIF-v1.2",
    "ATIF-v1.3",
    "ATIF-v1.4",
    "ATIF-v1.5",
    "ATIF-v1.6",
    "ATIF-v1.7",
];
const MEDIA_TYPES: [&str; 4] = ["image/jpeg", "image/png", "image/gif", "image/webp"];

fn content(c: &mut Check, v: &Value, at: &str) {
    match v {
        Value::String(_) => {}
        Value::Array(parts) => {
            for (i, p) in parts.iter().enumerate() {
                let at = format!("{at}[{i}]");
                let Some(m) = c.fields(p, &at, &["type", "text", "source"]) else {
                    continue;
                };
                match m.get("type").and_then(Value::as_str) {
                    Some("text") => {
                        c.string(&m, &at, "text", true);
                        if m.get("source").is_some_and(|s| !s.is_null()) {
                            c.add(
                                &join(&at, "source"),
                                "text content parts cannot contain an image source",
                            );
                        }
                    }
                    Some("image") => {
                        if m.get("text").is_some_and(|s| !s.is_null()) {
                            c.add(
                                &join(&at, "text"),
                                "image content parts cannot contain text",
                            );
                        }
                        match m.get("source") {
                            None | Some(Value::Null) => {
                                c.add(&join(&at, "source"), "image content parts require source");
                            }
                            Some(s) => {
                                let sat = join(&at, "source");
                                if let Some(sm) = c.fields(s, &sat, &["media_type", "path"]) {
                                    match sm.get("media_type").and_then(Value::as_str) {
                                        Some(t) if MEDIA_TYPES.contains(&t) => {}
                                        _ => c.add(
                                            &join(&sat, "media_type"),
                                            format!("expected one of {MEDIA_TYPES:?}"),
                                        ),
                                    }
                                    c.string(&sm, &sat, "path", true);
                                    if let Some(p) = sm.get("path").and_then(Value::as_str) {
                                        if !p.contains("://") {
                                            c.images.push((join(&sat, "path"), p.to_string()));
                                        }
                                    }
                                }
                            }
                        }
                    }
                    _ => c.add(&join(&at, "type"), "expected \"text\" or \"image\""),
                }
            }
        }
        _ => c.add(
            at,
            format!(
                "expected a string or a list of content parts, got {}",
                crate::json::describe(v)
            ),
        ),
    }
}

fn subagent_ref(c: &mut Check, v: &Value, at: &str) {
    let Some(m) = c.fields(
        v,
        at,
        &["trajectory_id", "session_id", "trajectory_path", "extra"],
    ) else {
        return;
    };
    for k in ["trajectory_id", "session_id", "trajectory_path"] {
        c.string(&m, at, k, false);
    }
    c.object(&m, at, "extra");
    let set = |k: &str| m.get(k).is_some_and(|v| !v.is_null());
    if !set("trajectory_id") && !set("trajectory_path") {
        c.add(
            at,
            "a subagent reference needs trajectory_id or trajectory_path (ATIF-v1.7)",
        );
    }
}

fn metrics(c: &mut Check, v: &Value, at: &str) {
    let Some(m) = c.fields(
        v,
        at,
        &[
            "prompt_tokens",
            "completion_tokens",
            "cached_tokens",
            "cost_usd",
            "prompt_token_ids",
            "completion_token_ids",
            "logprobs",
            "extra",
        ],
    ) else {
        return;
    };
    for k in ["prompt_tokens", "completion_tokens", "cached_tokens"] {
        c.integer(&m, at, k, None);
    }
    c.number(&m, at, "cost_usd");
    c.list_of(
        &m,
        at,
        "prompt_token_ids",
        |x| as_int(x).is_some(),
        "an integer",
    );
    c.list_of(
        &m,
        at,
        "completion_token_ids",
        |x| as_int(x).is_some(),
        "an integer",
    );
    c.list_of(&m, at, "logprobs", Value::is_number, "a number");
    c.object(&m, at, "extra");
}

fn step(c: &mut Check, v: &Value, index: usize) {
    let at = format!("steps[{index}]");
    let Some(m) = c.fields(
        v,
        &at,
        &[
            "step_id",
            "timestamp",
            "source",
            "model_name",
            "reasoning_effort",
            "reasoning_content",
            "message",
            "tool_calls",
            "observation",
            "metrics",
            "llm_call_count",
            "is_copied_context",
            "extra",
        ],
    ) else {
        return;
    };
    match c.required(&m, &at, "step_id").map(as_int) {
        Some(Some(id)) if id != index as i64 + 1 => {
            c.add(
                &join(&at, "step_id"),
                format!("expected {} (sequential from 1), got {id}", index + 1),
            );
        }
        Some(None) => c.add(&join(&at, "step_id"), "expected an integer"),
        _ => {}
    }
    let source = c
        .required(&m, &at, "source")
        .and_then(Value::as_str)
        .map(str::to_string);
    if m.contains_key("source") && !matches!(source.as_deref(), Some("system" | "user" | "agent")) {
        c.add(
            &join(&at, "source"),
            "expected \"system\", \"user\" or \"agent\"",
        );
    }
    if let Some(msg) = c.required(&m, &at, "message") {
        content(c, msg, &join(&at, "message"));
    }
    if let Some(Value::String(t)) = m.get("timestamp") {
        if !is_iso_8601(t) {
            c.add(
                &join(&at, "timestamp"),
                format!("invalid ISO 8601 timestamp {t:?}"),
            );
        }
    } else {
        c.string(&m, &at, "timestamp", false);
    }
    c.string(&m, &at, "model_name", false);
    c.string(&m, &at, "reasoning_content", false);
    match m.get("reasoning_effort") {
        None | Some(Value::Null | Value::String(_) | Value::Number(_)) => {}
        Some(_) => c.add(
            &join(&at, "reasoning_effort"),
            "expected a string or a number",
        ),
    }
    c.integer(&m, &at, "llm_call_count", Some(0));
    match m.get("is_copied_context") {
        None | Some(Value::Null | Value::Bool(_)) => {}
        Some(_) => c.add(&join(&at, "is_copied_context"), "expected a bool"),
    }
    c.object(&m, &at, "extra");
    let set = |k: &str| m.get(k).is_some_and(|v| !v.is_null());
    if source.as_deref().is_some_and(|s| s != "agent") {
        for k in [
            "model_name",
            "reasoning_effort",
            "reasoning_content",
            "tool_calls",
            "metrics",
        ] {
            if set(k) {
                c.add(&join(&at, k), "only valid for agent steps");
            }
        }
    }
    if source.as_deref() == Some("agent") && m.get("llm_call_count").and_then(as_int) == Some(0) {
        for k in ["metrics", "reasoning_content"] {
            if set(k) {
                c.add(
                    &join(&at, k),
                    "a step with llm_call_count 0 made no LLM call: it has no metrics or reasoning",
                );
            }
        }
    }
    let mut call_ids = HashSet::new();
    match m.get("tool_calls") {
        None | Some(Value::Null) => {}
        Some(Value::Array(calls)) => {
            for (i, call) in calls.iter().enumerate() {
                let cat = format!("{at}.tool_calls[{i}]");
                let Some(cm) = c.fields(
                    call,
                    &cat,
                    &["tool_call_id", "function_name", "arguments", "extra"],
                ) else {
                    continue;
                };
                c.string(&cm, &cat, "tool_call_id", true);
                c.string(&cm, &cat, "function_name", true);
                match c.required(&cm, &cat, "arguments") {
                    Some(Value::Object(_)) | None => {}
                    Some(v) => {
                        let what = format!("expected an object, got {}", crate::json::describe(v));
                        c.add(&join(&cat, "arguments"), what);
                    }
                }
                c.object(&cm, &cat, "extra");
                if let Some(id) = cm.get("tool_call_id").and_then(Value::as_str) {
                    call_ids.insert(id.to_string());
                }
            }
        }
        Some(v) => c.add(
            &join(&at, "tool_calls"),
            format!("expected a list, got {}", crate::json::describe(v)),
        ),
    }
    if let Some(o) = m.get("observation").filter(|o| !o.is_null()) {
        let oat = join(&at, "observation");
        if let Some(om) = c.fields(o, &oat, &["results"]) {
            match c.required(&om, &oat, "results") {
                Some(Value::Array(results)) => {
                    for (i, r) in results.iter().enumerate() {
                        let rat = format!("{oat}.results[{i}]");
                        let Some(rm) = c.fields(
                            r,
                            &rat,
                            &[
                                "source_call_id",
                                "content",
                                "subagent_trajectory_ref",
                                "extra",
                            ],
                        ) else {
                            continue;
                        };
                        c.string(&rm, &rat, "source_call_id", false);
                        if let Some(id) = rm.get("source_call_id").and_then(Value::as_str) {
                            if !call_ids.contains(id) {
                                c.add(
                                    &join(&rat, "source_call_id"),
                                    format!(
                                        "{id:?} is not a tool_call_id of this step's tool_calls"
                                    ),
                                );
                            }
                        }
                        if let Some(content_v) = rm.get("content").filter(|v| !v.is_null()) {
                            content(c, content_v, &join(&rat, "content"));
                        }
                        match rm.get("subagent_trajectory_ref") {
                            None | Some(Value::Null) => {}
                            Some(Value::Array(refs)) => {
                                for (j, r) in refs.iter().enumerate() {
                                    subagent_ref(
                                        c,
                                        r,
                                        &format!("{rat}.subagent_trajectory_ref[{j}]"),
                                    );
                                }
                            }
                            Some(_) => {
                                c.add(&join(&rat, "subagent_trajectory_ref"), "expected a list");
                            }
                        }
                        c.object(&rm, &rat, "extra");
                    }
                }
                Some(_) => c.add(&join(&oat, "results"), "expected a list"),
                None => {}
            }
        }
    }
    if let Some(mv) = m.get("metrics").filter(|v| !v.is_null()) {
        metrics(c, mv, &join(&at, "metrics"));
    }
}

/// `datetime.fromisoformat` after `Z` becomes `+00:00`: a date, optionally a time and offset.
fn is_iso_8601(t: &str) -> bool {
    let t = t.strip_suffix('Z').unwrap_or(t);
    let b = t.as_bytes();
    let digits =
        |r: std::ops::Range<usize>| b.get(r).is_some_and(|s| s.iter().all(u8::is_ascii_digit));
    if b.len() < 10
        || !digits(0..4)
        || b[4] != b'-'
        || !digits(5..7)
        || b[7] != b'-'
        || !digits(8..10)
    {
        return false;
    }
    let (month, day) = (&t[5..7], &t[8..10]);
    if !("01"..="12").contains(&month) || !("01"..="31").contains(&day) {
        return false;
    }
    if b.len() == 10 {
        return true;
    }
    if !matches!(b[10], b'T' | b' ') {
        return false;
    }
    let rest = &t[11..];
    let (time, offset) = match rest.find(['+', '-']) {
        Some(i) => (&rest[..i], Some(&rest[i + 1..])),
        None => (rest, None),
    };
    let time_ok = {
        let (hms, frac) = time.split_once('.').unwrap_or((time, ""));
        let parts: Vec<&str> = hms.split(':').collect();
        (1..=3).contains(&parts.len())
            && parts
                .iter()
                .all(|p| p.len() == 2 && p.bytes().all(|c| c.is_ascii_digit()))
            && parts[0] < "24"
            && parts.get(1).is_none_or(|m| *m < "60")
            && parts.get(2).is_none_or(|s| *s < "60")
            && frac.bytes().all(|c| c.is_ascii_digit())
            && frac.len() <= 6
    };
    let offset_ok = offset.is_none_or(|o| {
        let hm: Vec<&str> = o.split(':').collect();
        !hm.is_empty()
            && hm.len() <= 3
            && hm
                .iter()
                .all(|p| p.len() == 2 && p.bytes().all(|c| c.is_ascii_digit()))
    });
    time_ok && offset_ok
}

fn trajectory(c: &mut Check, v: &Value, at: &str) {
    let Some(m) = c.fields(
        v,
        at,
        &[
            "schema_version",
            "session_id",
            "trajectory_id",
            "agent",
            "steps",
            "notes",
            "final_metrics",
            "continued_trajectory_ref",
            "extra",
            "subagent_trajectories",
        ],
    ) else {
        return;
    };
    match m.get("schema_version") {
        None => {}
        Some(Value::String(s)) if VERSIONS.contains(&s.as_str()) => {}
        Some(v) => c.add(
            &join(at, "schema_version"),
            format!("expected one of ATIF-v1.0 to ATIF-v1.7, got {v}"),
        ),
    }
    for k in [
        "session_id",
        "trajectory_id",
        "notes",
        "continued_trajectory_ref",
    ] {
        c.string(&m, at, k, false);
    }
    c.object(&m, at, "extra");
    if let Some(agent) = c.required(&m, at, "agent") {
        let aat = join(at, "agent");
        if let Some(am) = c.fields(
            agent,
            &aat,
            &["name", "version", "model_name", "tool_definitions", "extra"],
        ) {
            c.string(&am, &aat, "name", true);
            c.string(&am, &aat, "version", true);
            c.string(&am, &aat, "model_name", false);
            c.list_of(&am, &aat, "tool_definitions", Value::is_object, "an object");
            c.object(&am, &aat, "extra");
        }
    }
    match c.required(&m, at, "steps") {
        Some(Value::Array(steps)) => {
            if steps.is_empty() {
                c.add(&join(at, "steps"), "a trajectory has at least one step");
            }
            let before = c.problems.len();
            for (i, s) in steps.iter().enumerate() {
                step(c, s, i);
            }
            // Steps of an embedded trajectory are named below its own place.
            if !at.is_empty() {
                for p in &mut c.problems[before..] {
                    p.at = format!("{at}.{}", p.at);
                }
            }
        }
        Some(v) => {
            c.add(
                &join(at, "steps"),
                format!("expected a list, got {}", crate::json::describe(v)),
            );
        }
        None => {}
    }
    if let Some(fm) = m.get("final_metrics").filter(|v| !v.is_null()) {
        let fat = join(at, "final_metrics");
        if let Some(fm) = c.fields(
            fm,
            &fat,
            &[
                "total_prompt_tokens",
                "total_completion_tokens",
                "total_cached_tokens",
                "total_cost_usd",
                "total_steps",
                "extra",
            ],
        ) {
            for k in [
                "total_prompt_tokens",
                "total_completion_tokens",
                "total_cached_tokens",
            ] {
                c.integer(&fm, &fat, k, None);
            }
            c.number(&fm, &fat, "total_cost_usd");
            c.integer(&fm, &fat, "total_steps", Some(0));
            c.object(&fm, &fat, "extra");
        }
    }
    match m.get("subagent_trajectories") {
        None | Some(Value::Null) => {}
        Some(Value::Array(subs)) => {
            let mut ids = HashSet::new();
            for (i, s) in subs.iter().enumerate() {
                let sat = format!("{}[{i}]", join(at, "subagent_trajectories"));
                match s.get("trajectory_id").and_then(Value::as_str) {
                    None => c.add(
                        &join(&sat, "trajectory_id"),
                        "an embedded subagent trajectory needs a trajectory_id",
                    ),
                    Some(id) if !ids.insert(id.to_string()) => {
                        c.add(
                            &join(&sat, "trajectory_id"),
                            format!("{id:?} is used by another subagent trajectory"),
                        );
                    }
                    Some(_) => {}
                }
                trajectory(c, s, &sat);
            }
        }
        Some(_) => c.add(&join(at, "subagent_trajectories"), "expected a list"),
    }
}

/// Every problem of one trajectory, and the relative image paths it names.
pub fn validate(v: &Value) -> (Vec<Problem>, Vec<(String, ImagePath)>) {
    let mut c = Check {
        problems: Vec::new(),
        images: Vec::new(),
    };
    if super::trajectory::depth(v, super::trajectory::MAX_DEPTH) > super::trajectory::MAX_DEPTH {
        c.add(
            "",
            format!("nested deeper than {} levels", super::trajectory::MAX_DEPTH),
        );
    } else {
        trajectory(&mut c, v, "");
    }
    (c.problems, c.images)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn places(v: Value) -> Vec<String> {
        validate(&v)
            .0
            .into_iter()
            .map(|p| format!("{}: {}", p.at, p.what))
            .collect()
    }

    #[test]
    fn a_valid_v17_trajectory_has_no_problem() {
        let t = json!({"schema_version": "ATIF-v1.7", "agent": {"name": "a", "version": "1"},
            "steps": [{"step_id": 1, "source": "user", "message": [{"type": "text", "text": "hi"},
                {"type": "image", "source": {"media_type": "image/png", "path": "a.png"}}]},
                {"step_id": 2, "source": "agent", "message": "", "llm_call_count": 0,
                 "tool_calls": [{"tool_call_id": "c", "function_name": "f", "arguments": {}}],
                 "observation": {"results": [{"source_call_id": "c", "content": "ok",
                    "subagent_trajectory_ref": [{"trajectory_path": "sub.json"}]}]}}],
            "final_metrics": {"total_steps": 2}});
        assert_eq!(places(t.clone()), Vec::<String>::new());
        assert_eq!(
            validate(&t).1,
            vec![(
                "steps[0].message[1].source.path".to_string(),
                "a.png".to_string()
            )]
        );
    }

    #[test]
    fn every_problem_is_listed_with_its_place() {
        let t = json!({"schema_version": "ATIF-v2.0", "agent": {"name": 3}, "bogus": 1,
            "steps": [{"step_id": 2, "source": "robot", "message": 5},
                      {"step_id": 2, "source": "user", "message": "x", "metrics": {"prompt_tokens": "many"}},
                      {"step_id": 3, "source": "agent", "message": "", "llm_call_count": 0, "reasoning_content": "r",
                       "observation": {"results": [{"source_call_id": "nope"}]}}]});
        let got = places(t);
        for want in [
            "bogus: unexpected field",
            "schema_version: expected one of",
            "agent.name: expected a string",
            "agent.version: required field is missing",
            "steps[0].step_id: expected 1",
            "steps[0].source: expected",
            "steps[0].message: expected a string or a list",
            "steps[1].metrics: only valid for agent steps",
            "steps[1].metrics.prompt_tokens: expected an integer",
            "steps[2].reasoning_content: a step with llm_call_count 0",
            "steps[2].observation.results[0].source_call_id: \"nope\" is not a tool_call_id",
        ] {
            assert!(got.iter().any(|g| g.starts_with(want)), "{want}\n{got:#?}");
        }
    }

    #[test]
    fn timestamps_as_python_reads_them() {
        for ok in [
            "2025-10-11",
            "2025-10-11T10:20:30Z",
            "2025-10-11T10:20:30.123456+00:00",
            "2025-10-11 10:20",
        ] {
            assert!(is_iso_8601(ok), "{ok}");
        }
        for bad in [
            "yesterday",
            "2025-13-01",
            "2025-10-11T25:00:00",
            "2025-10-11T10:20:30.1234567",
        ] {
            assert!(!is_iso_8601(bad), "{bad}");
        }
    }
}
