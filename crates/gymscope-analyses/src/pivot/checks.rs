//! The pivot row contract, check by check, in upstream's order and with upstream's messages.
//! Unlike upstream (which stops at the first failure), every independent failure of a row is
//! reported; a failure that makes later checks meaningless (a non-object) stops its group.

use super::pyrepr::repr;
use super::tree::{Json, Kind};
use super::PivotOptions;
use crate::gym::py::str_repr;

/// A check of the validator, by the id the report prints (`[P2]`: docs/pivots.md "`gymscope
/// validate-pivot`"), in the order upstream's `validate_file` runs them.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
pub enum Check {
    J,
    R1,
    R2,
    F1,
    F2,
    A1,
    A2,
    A3,
    A4,
    P1,
    P2,
    P3,
    P4,
    P5,
    P6,
    X1,
    X2,
    X3,
    X4,
    X5,
    X6,
    /// `--allow-batch`: `calls` of a `function_call_batch` must be a non-empty list of objects.
    XB,
    /// `--gym-repo`: Gym's Pydantic model of `responses_create_params` (see `gym_models`).
    G,
    T1,
    E,
}

impl Check {
    pub fn id(self) -> &'static str {
        use Check::{
            A1, A2, A3, A4, E, F1, F2, G, J, P1, P2, P3, P4, P5, P6, R1, R2, T1, X1, X2, X3, X4,
            X5, X6, XB,
        };
        match self {
            J => "J",
            R1 => "R1",
            R2 => "R2",
            F1 => "F1",
            F2 => "F2",
            A1 => "A1",
            A2 => "A2",
            A3 => "A3",
            A4 => "A4",
            P1 => "P1",
            P2 => "P2",
            P3 => "P3",
            P4 => "P4",
            P5 => "P5",
            P6 => "P6",
            X1 => "X1",
            X2 => "X2",
            X3 => "X3",
            X4 => "X4",
            X5 => "X5",
            X6 => "X6",
            XB => "XB",
            G => "G",
            T1 => "T1",
            E => "E",
        }
    }

    /// What the check requires, in a few words (the heading of its group in reports).
    pub fn title(self) -> &'static str {
        use Check::{
            A1, A2, A3, A4, E, F1, F2, G, J, P1, P2, P3, P4, P5, P6, R1, R2, T1, X1, X2, X3, X4,
            X5, X6, XB,
        };
        match self {
            J => "each line is one JSON value",
            R1 => "each row is a JSON object",
            R2 => "required keys are present",
            F1 => "--require-field paths are non-null",
            F2 => "one of each --require-any-field group is non-null",
            A1 => "agent_ref is an object",
            A2 => "agent_ref.type is responses_api_agents",
            A3 => "agent_ref.name is a non-empty string",
            A4 => "agent_ref.name equals --agent-ref",
            P1 => "responses_create_params is an object",
            P2 => "responses_create_params.metadata is omitted or non-null",
            P3 => "responses_create_params.tool_choice is 'auto' when present",
            P4 => "responses_create_params.input is a non-empty list",
            P5 => "responses_create_params.tools is a list",
            P6 => "responses_create_params.parallel_tool_calls is a boolean when present",
            X1 => "expected_action is an object",
            X2 => "a message expected_action has string content",
            X3 => "expected_action.type is message or function_call",
            X4 => "a function_call has a non-empty name",
            X5 => "function_call.arguments is a string",
            X6 => "function_call.arguments is valid JSON",
            XB => "a function_call_batch has a non-empty list of calls",
            G => "responses_create_params passes Gym's model (--gym-repo)",
            T1 => "expected tools appear in responses_create_params.tools",
            E => "the file has at least one row",
        }
    }
}

/// One failed check on one row.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Finding {
    pub line: u64,
    /// Byte offset and length of the row's line in the file, to show the row again.
    pub span: Option<(u64, u32)>,
    /// 1-based column (in characters) of the offending value, where it could be located.
    pub column: Option<usize>,
    /// Where in the row: `responses_create_params.tools`, `expected_action.arguments`, ….
    pub path: Path,
    pub check: Check,
    /// Upstream's message, without its `line N: ` prefix.
    pub message: String,
    /// What was found there, briefly (`null`, `a string`, `'required'`).
    pub found: String,
}

impl Finding {
    /// Where the error is, for a list: `line 3:14`, `line 3`, or nothing for file-level errors.
    pub fn place(&self) -> String {
        match self.column {
            Some(c) => format!("line {}:{c}", self.line),
            None if self.line > 0 => format!("line {}", self.line),
            None => String::new(),
        }
    }

    /// ` — found …` after the message, or nothing when the value is missing.
    pub fn found_note(&self) -> String {
        if self.found == "(missing)" {
            String::new()
        } else {
            format!(" — found {}", self.found)
        }
    }
}

impl Finding {
    /// Upstream's full message: `line N: …` (file-level checks have no line).
    pub fn upstream_message(&self) -> String {
        if self.check == Check::E {
            self.message.clone()
        } else {
            format!("line {}: {}", self.line, self.message)
        }
    }
}

/// A JSON path inside a row.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Path(pub Vec<Step>);

#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum Step {
    Key(String),
    Index(usize),
}

impl Path {
    fn of(keys: &[&str]) -> Path {
        Path(keys.iter().map(|k| Step::Key(k.to_string())).collect())
    }
    fn index(mut self, i: usize) -> Path {
        self.0.push(Step::Index(i));
        self
    }
    fn key(mut self, k: &str) -> Path {
        self.0.push(Step::Key(k.to_string()));
        self
    }
}

impl std::fmt::Display for Path {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        if self.0.is_empty() {
            return f.write_str("(row)");
        }
        for (i, step) in self.0.iter().enumerate() {
            match step {
                Step::Key(k) if i == 0 => write!(f, "{k}")?,
                Step::Key(k) => write!(f, ".{k}")?,
                Step::Index(n) => write!(f, "[{n}]")?,
            }
        }
        Ok(())
    }
}

/// A short description of a value for reports.
pub fn describe(v: Option<&Json>) -> String {
    let Some(v) = v else {
        return "(missing)".into();
    };
    match v {
        Json::Str(s) if s.chars().count() > 60 => {
            let cut: String = s.chars().take(57).collect();
            format!("{}…", str_repr(&cut))
        }
        Json::Str(_) | Json::Bool(_) | Json::Num(_) | Json::Null => repr(v),
        Json::Arr(a) => format!("a list of {} items", a.len()),
        Json::Obj(o) => format!("an object with {} keys", o.len()),
        Json::Skipped(Kind::Arr(n)) => format!("a list of {n} items"),
        Json::Skipped(Kind::Obj(n)) => format!("an object with {n} keys"),
        Json::Skipped(Kind::Str) => "a string".into(),
        Json::Skipped(Kind::Num) => "a number".into(),
        Json::Skipped(Kind::Bool) => "a boolean".into(),
        Json::Skipped(Kind::Null) => "None".into(),
    }
}

/// What a valid row contributes to the summary.
#[derive(Debug, Default, PartialEq)]
pub struct RowFacts {
    pub agent: String,
    pub action_type: &'static str,
    pub expected_tools: Vec<String>,
    pub input_items: usize,
    pub tools: usize,
}

/// `get_path` of upstream: walks objects only (lists are not indexed); missing or null is None.
pub fn get_path<'r, 'a>(row: &'r Json<'a>, dotted: &str) -> Option<&'r Json<'a>> {
    let mut current = row;
    for part in dotted.split('.') {
        current = current.get(part)?;
    }
    (!current.is_null()).then_some(current)
}

/// Upstream's `extract_tool_name`.
fn tool_name<'r>(tool: &'r Json) -> Option<&'r str> {
    if let Some(name) = tool.get("name").and_then(Json::as_str) {
        return Some(name);
    }
    tool.get("function")?.get("name")?.as_str()
}

/// Collects the findings of one row.
pub struct RowChecker<'o> {
    pub options: &'o PivotOptions,
    pub any_field_groups: &'o [Vec<String>],
    pub line: u64,
    /// Stop at the first finding (upstream's behaviour).
    pub fail_fast: bool,
    pub findings: Vec<Finding>,
}

impl RowChecker<'_> {
    fn fail(&mut self, check: Check, path: Path, value: Option<&Json>, message: String) -> bool {
        self.findings.push(Finding {
            line: self.line,
            span: None,
            column: None,
            path,
            check,
            message,
            found: describe(value),
        });
        self.fail_fast
    }

    /// Runs every check on `row`; returns its facts when it is valid.
    pub fn check(&mut self, row: &Json) -> Option<RowFacts> {
        self.check_all(row);
        if !self.findings.is_empty() {
            return None;
        }
        Some(self.facts(row))
    }

    fn check_all(&mut self, row: &Json) {
        if !matches!(row, Json::Obj(_)) {
            self.fail(
                Check::R1,
                Path::default(),
                Some(row),
                "row must be an object".into(),
            );
            return;
        }
        for key in ["responses_create_params", "expected_action", "agent_ref"] {
            if row.get(key).is_none()
                && self.fail(
                    Check::R2,
                    Path::of(&[key]),
                    None,
                    format!("missing required key {}", str_repr(key)),
                )
            {
                return;
            }
        }
        for field in &self.options.require_fields {
            if get_path(row, field).is_none() {
                let path = Path(field.split('.').map(|p| Step::Key(p.to_string())).collect());
                let found = row_lookup(row, field);
                if self.fail(
                    Check::F1,
                    path,
                    found,
                    format!("missing required field {}", str_repr(field)),
                ) {
                    return;
                }
            }
        }
        for group in self.any_field_groups {
            if !group.iter().any(|p| get_path(row, p).is_some()) {
                let message = format!(
                    "none of required alternative fields are present: {}",
                    group.join(", ")
                );
                if self.fail(Check::F2, Path::of(&[group[0].as_str()]), None, message) {
                    return;
                }
            }
        }
        if let Some(agent_ref) = row.get("agent_ref") {
            if self.check_agent_ref(agent_ref) {
                return;
            }
        }
        let mut tool_names = None;
        if let Some(params) = row.get("responses_create_params") {
            match self.check_params(params) {
                Err(()) => return,
                Ok(names) => tool_names = names,
            }
        }
        let mut expected_tools = None;
        if let Some(action) = row.get("expected_action") {
            match self.check_expected_action(action) {
                Err(()) => return,
                Ok(tools) => expected_tools = tools,
            }
        }
        // Upstream validates with Gym's models after A/P/X and before T: only a row that passed
        // them gets this far there.
        if self.options.gym_models && self.findings.is_empty() {
            if let Some(params) = row.get("responses_create_params") {
                let errors = super::gym_models::check(params);
                if let Some(first) = errors.first() {
                    let path =
                        Path(
                            std::iter::once(Step::Key("responses_create_params".into()))
                                .chain(first.loc.split('.').filter(|p| !p.is_empty()).map(|p| {
                                    Step::Key(p.split('[').next().unwrap_or(p).to_string())
                                }))
                                .collect(),
                        );
                    // A row with a long tool list can break a rule per tool: name a few.
                    let mut listed: Vec<String> = errors
                        .iter()
                        .take(5)
                        .map(|e| format!("{}: {}", e.loc, e.msg))
                        .collect();
                    if errors.len() > 5 {
                        listed.push(format!("and {} more", errors.len() - 5));
                    }
                    let message = format!(
                        "Gym model validation failed: {} validation error{} for {}: {}",
                        errors.len(),
                        if errors.len() == 1 { "" } else { "s" },
                        super::gym_models::MODEL,
                        listed.join("; ")
                    );
                    if self.fail(Check::G, path, None, message) {
                        return;
                    }
                }
            }
        }
        if let (true, Some(names), Some(expected)) =
            (self.options.check_tool_names, tool_names, expected_tools)
        {
            let mut missing: Vec<&str> = expected
                .iter()
                .map(String::as_str)
                .filter(|e| !names.iter().any(|n| n == e))
                .collect();
            missing.sort_unstable();
            missing.dedup();
            if !missing.is_empty() {
                let list = format!(
                    "[{}]",
                    missing
                        .iter()
                        .map(|m| str_repr(m))
                        .collect::<Vec<_>>()
                        .join(", ")
                );
                let message = format!(
                    "expected_action uses tools absent from responses_create_params.tools: {list}"
                );
                self.fail(
                    Check::T1,
                    Path::of(&["expected_action", "name"]),
                    row.get("expected_action").and_then(|a| a.get("name")),
                    message,
                );
            }
        }
    }

    /// A checks; true when the run must stop.
    fn check_agent_ref(&mut self, agent_ref: &Json) -> bool {
        let at = Path::of(&["agent_ref"]);
        if !matches!(agent_ref, Json::Obj(_)) {
            return self.fail(
                Check::A1,
                at,
                Some(agent_ref),
                "agent_ref must be an object".into(),
            );
        }
        let ty = agent_ref.get("type");
        if ty.and_then(Json::as_str) != Some("responses_api_agents")
            && self.fail(
                Check::A2,
                at.clone().key("type"),
                ty,
                "agent_ref.type must be responses_api_agents".into(),
            )
        {
            return true;
        }
        let name = agent_ref.get("name");
        match name.and_then(Json::as_str).filter(|n| !n.is_empty()) {
            None => self.fail(
                Check::A3,
                at.key("name"),
                name,
                "agent_ref.name must be a non-empty string".into(),
            ),
            Some(n) => match &self.options.agent_ref {
                Some(expected) if expected != n => {
                    let message = format!(
                        "agent_ref.name {} does not match expected {}",
                        str_repr(n),
                        str_repr(expected)
                    );
                    self.fail(Check::A4, at.key("name"), name, message)
                }
                _ => false,
            },
        }
    }

    /// P checks; `Ok(Some(tool names))` when they pass, `Ok(None)` when a P check failed.
    #[allow(clippy::result_unit_err)]
    fn check_params(&mut self, params: &Json) -> Result<Option<Vec<String>>, ()> {
        let at = Path::of(&["responses_create_params"]);
        let stop = |stopped: bool| if stopped { Err(()) } else { Ok(()) };
        if !matches!(params, Json::Obj(_)) {
            stop(self.fail(
                Check::P1,
                at,
                Some(params),
                "responses_create_params must be an object".into(),
            ))?;
            return Ok(None);
        }
        let before = self.findings.len();
        if let Some(m) = params.get("metadata").filter(|m| m.is_null()) {
            let message = "responses_create_params.metadata must be omitted or non-null".into();
            stop(self.fail(Check::P2, at.clone().key("metadata"), Some(m), message))?;
        }
        if let Some(tc) = params
            .get("tool_choice")
            .filter(|tc| tc.as_str() != Some("auto"))
        {
            let message = format!(
                "responses_create_params.tool_choice should be 'auto', found {}",
                repr(tc)
            );
            stop(self.fail(Check::P3, at.clone().key("tool_choice"), Some(tc), message))?;
        }
        let input = params.get("input");
        if input.and_then(Json::array_len).unwrap_or(0) == 0 {
            let message = "responses_create_params.input must be a non-empty list".into();
            stop(self.fail(Check::P4, at.clone().key("input"), input, message))?;
        }
        let tools = params.get("tools");
        let tool_list = if let Some(Json::Arr(items)) = tools {
            Some(items)
        } else {
            let message = "responses_create_params.tools must be a list".into();
            stop(self.fail(Check::P5, at.clone().key("tools"), tools, message))?;
            None
        };
        if let Some(p) = params
            .get("parallel_tool_calls")
            .filter(|p| !matches!(p, Json::Bool(_)))
        {
            let message = "responses_create_params.parallel_tool_calls must be a boolean".into();
            stop(self.fail(Check::P6, at.key("parallel_tool_calls"), Some(p), message))?;
        }
        if self.findings.len() > before {
            return Ok(None);
        }
        let names = tool_list
            .map(|items| {
                items
                    .iter()
                    .filter_map(tool_name)
                    .filter(|n| !n.is_empty())
                    .map(String::from)
                    .collect()
            })
            .unwrap_or_default();
        Ok(Some(names))
    }

    /// X checks; `Ok(Some(expected tool names))` when they pass.
    fn check_expected_action(&mut self, action: &Json) -> Result<Option<Vec<String>>, ()> {
        let at = Path::of(&["expected_action"]);
        let stop = |stopped: bool| if stopped { Err(()) } else { Ok(()) };
        if !matches!(action, Json::Obj(_)) {
            stop(self.fail(
                Check::X1,
                at,
                Some(action),
                "expected_action must be an object".into(),
            ))?;
            return Ok(None);
        }
        let ty = action.get("type");
        match ty.and_then(Json::as_str) {
            Some("message") => {
                let content = action.get("content");
                if content.and_then(Json::as_str).is_none() {
                    let message = "message expected_action.content must be a string".into();
                    stop(self.fail(Check::X2, at.key("content"), content, message))?;
                    return Ok(None);
                }
                Ok(Some(Vec::new()))
            }
            Some("function_call") => {
                Ok(self.check_function_call(action, at)?.map(|name| vec![name]))
            }
            Some("function_call_batch") if self.options.allow_batch => {
                let calls = action.get("calls");
                let Some(Json::Arr(items)) = calls.filter(|c| c.array_len().is_some_and(|n| n > 0))
                else {
                    let message = "function_call_batch.calls must be a non-empty list".into();
                    stop(self.fail(Check::XB, at.key("calls"), calls, message))?;
                    return Ok(None);
                };
                let mut names = Vec::new();
                let mut ok = true;
                for (i, call) in items.iter().enumerate() {
                    let call_at = at.clone().key("calls").index(i);
                    if !matches!(call, Json::Obj(_)) {
                        stop(self.fail(
                            Check::XB,
                            call_at,
                            Some(call),
                            "expected function call must be an object".into(),
                        ))?;
                        ok = false;
                        continue;
                    }
                    match self.check_function_call(call, call_at)? {
                        Some(name) => names.push(name),
                        None => ok = false,
                    }
                }
                Ok(ok.then_some(names))
            }
            _ => {
                let shown = ty.cloned().unwrap_or(Json::Null);
                let message = format!("unsupported expected_action type {}", repr(&shown));
                stop(self.fail(Check::X3, at.key("type"), ty, message))?;
                Ok(None)
            }
        }
    }

    fn check_function_call(&mut self, call: &Json, at: Path) -> Result<Option<String>, ()> {
        let stop = |stopped: bool| if stopped { Err(()) } else { Ok(()) };
        let before = self.findings.len();
        let name = call.get("name");
        let name_text = name.and_then(Json::as_str).filter(|n| !n.is_empty());
        if name_text.is_none() {
            let message = "function_call is missing a non-empty name".into();
            stop(self.fail(Check::X4, at.clone().key("name"), name, message))?;
        }
        let arguments = call.get("arguments");
        match arguments.and_then(Json::as_str) {
            None => {
                let message = "function_call.arguments must be a JSON string".into();
                stop(self.fail(Check::X5, at.key("arguments"), arguments, message))?;
            }
            Some(text) => {
                if let Err(e) = parse_arguments(text) {
                    let message = format!("function_call.arguments is not valid JSON: {e}");
                    stop(self.fail(Check::X6, at.key("arguments"), arguments, message))?;
                }
            }
        }
        Ok((self.findings.len() == before).then(|| name_text.unwrap_or_default().to_string()))
    }

    fn facts(&self, row: &Json) -> RowFacts {
        let params = row.get("responses_create_params");
        let action = row.get("expected_action");
        let action_type = match action.and_then(|a| a.get("type")).and_then(Json::as_str) {
            Some("message") => "message",
            Some("function_call_batch") => "function_call_batch",
            _ => "function_call",
        };
        let expected_tools = match action_type {
            "function_call" => action
                .and_then(|a| a.get("name"))
                .and_then(Json::as_str)
                .map(String::from)
                .into_iter()
                .collect(),
            "function_call_batch" => match action.and_then(|a| a.get("calls")) {
                Some(Json::Arr(calls)) => calls
                    .iter()
                    .filter_map(|c| c.get("name")?.as_str().map(String::from))
                    .collect(),
                _ => Vec::new(),
            },
            _ => Vec::new(),
        };
        RowFacts {
            agent: row
                .get("agent_ref")
                .and_then(|a| a.get("name"))
                .and_then(Json::as_str)
                .unwrap_or_default()
                .to_string(),
            action_type,
            expected_tools,
            input_items: params
                .and_then(|p| p.get("input"))
                .and_then(Json::array_len)
                .unwrap_or(0),
            tools: params
                .and_then(|p| p.get("tools"))
                .and_then(Json::array_len)
                .unwrap_or(0),
        }
    }
}

/// The value at a dotted path even when null (for the `found` of F1).
fn row_lookup<'r, 'a>(row: &'r Json<'a>, dotted: &str) -> Option<&'r Json<'a>> {
    let mut current = row;
    for part in dotted.split('.') {
        current = current.get(part)?;
    }
    Some(current)
}

/// `json.loads(arguments)` as Python reads it: as deep as the row itself may nest.
fn parse_arguments(text: &str) -> Result<(), String> {
    use super::depth;
    let (levels, too_deep) = depth::measure(text.as_bytes());
    if too_deep.is_some() {
        return Err(format!("nesting deeper than {} levels", depth::MAX_DEPTH));
    }
    depth::with_stack_for(levels, || {
        depth::from_str::<crate::json::Skip>(text).map_err(|e| e.to_string())
    })
    .unwrap_or_else(|| {
        Err(format!(
            "could not start a thread to read {levels} levels of nesting"
        ))
    })
    .map(|_| ())
}

/// Byte offset of the value at `path` in `line` (of its nearest existing ancestor when the path
/// ends in a missing key), found by walking the line's raw JSON. Used only for reporting errors,
/// so the fast parse never tracks positions.
pub fn locate(line: &str, path: &Path) -> Option<usize> {
    use super::tree::deep_from_str;
    use serde_json::value::RawValue;
    use std::borrow::Cow;
    use std::collections::HashMap;
    let start = line.as_ptr() as usize;
    let mut raw: &RawValue = deep_from_str(line).ok()?;
    for step in &path.0 {
        let next = match step {
            Step::Key(k) => deep_from_str::<HashMap<Cow<str>, &RawValue>>(raw.get())
                .ok()?
                .get(k.as_str())
                .copied(),
            Step::Index(i) => deep_from_str::<Vec<&RawValue>>(raw.get())
                .ok()?
                .get(*i)
                .copied(),
        };
        match next {
            Some(v) => raw = v,
            None => break,
        }
    }
    Some(raw.get().as_ptr() as usize - start)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locates_values_by_path() {
        let line = r#"{"p": {"tools": [1, {"name": 5}]}}"#;
        let path = Path(vec![
            Step::Key("p".into()),
            Step::Key("tools".into()),
            Step::Index(1),
            Step::Key("name".into()),
        ]);
        assert_eq!(locate(line, &path), Some(line.find('5').unwrap()));
        let missing = Path(vec![Step::Key("p".into()), Step::Key("nope".into())]);
        assert_eq!(locate(line, &missing), Some(line.find("{\"tools").unwrap()));
    }
}
