//! `ng_agent_observations`: what harness agents (Hermes, Claude Code, OpenClaw, Pi, OpenCode)
//! return instead of an `ng_trajectory`, as upstream handles it at `07d6b0d`
//! (`nemo_gym/rollout_observability.py`: `AgentObservationBundle`,
//! `join_model_call_observations`; `nemo_gym/rollout_collection.py`: the observation part of
//! `_build_trajectory_record`).
//!
//! - [`validate`]: `AgentObservationBundle.model_validate` (extra keys forbidden, records told
//!   apart by `kind`, unique invocation ids, no parent cycle) into its dumped form;
//! - [`join`]: each invocation's and compaction's model-call references resolved against the
//!   captured calls by `model_call_id` or the exact `(model_ref, response_id)` pair, never by
//!   guessing; what cannot be resolved exactly becomes a gap;
//! - [`merge_into`]: the bundle's invocations, tool timings and gaps folded into the trajectory
//!   being built.
//!
//! Claude Code's compaction summary calls are associated before the join by
//! [`super::claude_compaction`]. Conversation items are only checked to be objects.

use crate::gym::keys::OBSERVATIONS;
use crate::gym::py;
use crate::gym::pydantic::{list, literal, object, only, opt_float, opt_int, opt_str, req_str, R};
use crate::gym::trajectory::dump::{self, get, obj};
use crate::gym::trajectory::{self as t, call_ref};
use serde_json::{Map, Value};
use std::collections::{HashMap, HashSet};

/// A valid bundle in upstream's dumped form: every record with all its fields, in order.
#[derive(Clone, Debug, PartialEq)]
pub struct Bundle {
    pub source: Value,
    pub records: Vec<Value>,
    pub gaps: Vec<Value>,
}

impl Bundle {
    /// `bundle.model_dump(mode="json")`.
    pub fn dump(&self) -> Value {
        obj(vec![
            ("source", self.source.clone()),
            ("records", Value::Array(self.records.clone())),
            ("gaps", Value::Array(self.gaps.clone())),
        ])
    }

    fn records_of<'a>(&'a self, kind: &'a str) -> impl Iterator<Item = &'a Value> + 'a {
        self.records
            .iter()
            .filter(move |r| r["kind"].as_str() == Some(kind))
    }
}

const INVOCATION: &str = "agent_invocation";
const TOOL: &str = "tool_call";
const COMPACTION: &str = "context_compaction";
const SANDBOX: &str = "sandbox";

fn opt_ref(m: &Map<String, Value>, at: &str, k: &str) -> R<()> {
    match m.get(k) {
        None | Some(Value::Null) => Ok(()),
        Some(v) => call_ref(v, &format!("{at}.{k}")).map(|_| ()),
    }
}

/// `ContextCompactionObservation`.
fn compaction(v: &Value, at: &str) -> R<()> {
    let m = object(v, at)?;
    only(
        m,
        at,
        &[
            "kind",
            "invocation_id",
            "observed_at",
            "trigger",
            "tokens_before",
            "tokens_after",
            "outcome",
            "summary",
            "first_kept_item_id",
            "before_model_call",
            "model_calls",
            "after_model_call",
        ],
    )?;
    req_str(m, at, "invocation_id")?;
    opt_float(m, at, "observed_at", false)?;
    opt_str(m, at, "trigger")?;
    opt_int(m, at, "tokens_before", Some(0))?;
    opt_int(m, at, "tokens_after", Some(0))?;
    literal(
        m,
        at,
        "outcome",
        &["completed", "failed", "aborted", "unknown"],
    )?;
    opt_str(m, at, "summary")?;
    opt_str(m, at, "first_kept_item_id")?;
    opt_ref(m, at, "before_model_call")?;
    opt_ref(m, at, "after_model_call")?;
    for (i, r) in list(m, at, "model_calls")?.iter().enumerate() {
        call_ref(r, &format!("{at}.model_calls[{i}]"))?;
    }
    Ok(())
}

/// `SandboxObservation`.
fn sandbox(v: &Value, at: &str) -> R<()> {
    let m = object(v, at)?;
    only(
        m,
        at,
        &[
            "kind",
            "role",
            "provider",
            "sandbox_id",
            "outcome",
            "exit_code",
            "wall_time_s",
            "cpu_time_s",
            "peak_memory_mib",
            "resource_usage_source",
            "error_type",
        ],
    )?;
    if !m.contains_key("role") {
        return Err(format!("{at}.role: field required"));
    }
    literal(m, at, "role", &["agent", "verifier", "environment"])?;
    opt_str(m, at, "provider")?;
    opt_str(m, at, "sandbox_id")?;
    literal(
        m,
        at,
        "outcome",
        &[
            "completed",
            "failed",
            "timeout",
            "oom",
            "sandbox_error",
            "cancelled",
            "unknown",
        ],
    )?;
    opt_int(m, at, "exit_code", None)?;
    opt_float(m, at, "wall_time_s", true)?;
    opt_float(m, at, "cpu_time_s", true)?;
    opt_float(m, at, "peak_memory_mib", true)?;
    opt_str(m, at, "resource_usage_source")?;
    opt_str(m, at, "error_type")?;
    Ok(())
}

fn dump_opt_ref(m: &Map<String, Value>, k: &str) -> Value {
    get(m, k).as_object().map_or(Value::Null, dump::call_ref)
}

fn dump_compaction(m: &Map<String, Value>) -> Value {
    obj(vec![
        ("kind", Value::from(COMPACTION)),
        ("invocation_id", dump::value(m, "invocation_id")),
        ("observed_at", dump::float(m, "observed_at")),
        ("trigger", dump::value(m, "trigger")),
        ("tokens_before", dump::int(m, "tokens_before")),
        ("tokens_after", dump::int(m, "tokens_after")),
        ("outcome", dump::or_default(m, "outcome", "unknown")),
        ("summary", dump::value(m, "summary")),
        ("first_kept_item_id", dump::value(m, "first_kept_item_id")),
        ("before_model_call", dump_opt_ref(m, "before_model_call")),
        ("model_calls", dump::list(m, "model_calls", dump::call_ref)),
        ("after_model_call", dump_opt_ref(m, "after_model_call")),
    ])
}

fn dump_sandbox(m: &Map<String, Value>) -> Value {
    obj(vec![
        ("kind", Value::from(SANDBOX)),
        ("role", dump::value(m, "role")),
        ("provider", dump::value(m, "provider")),
        ("sandbox_id", dump::value(m, "sandbox_id")),
        ("outcome", dump::or_default(m, "outcome", "unknown")),
        ("exit_code", dump::int(m, "exit_code")),
        ("wall_time_s", dump::float(m, "wall_time_s")),
        ("cpu_time_s", dump::float(m, "cpu_time_s")),
        ("peak_memory_mib", dump::float(m, "peak_memory_mib")),
        (
            "resource_usage_source",
            dump::value(m, "resource_usage_source"),
        ),
        ("error_type", dump::value(m, "error_type")),
    ])
}

/// `ToolCallObservation` dumped: a trajectory tool call without `output`.
fn dump_tool_observation(m: &Map<String, Value>) -> Value {
    let mut v = dump::tool_call(m);
    if let Some(o) = v.as_object_mut() {
        o.shift_remove("output");
    }
    v
}

/// `AgentObservationBundle.model_validate`, dumped. The error names the first offending field.
pub fn validate(v: &Value) -> R<Bundle> {
    let at = OBSERVATIONS;
    let m = object(v, at)?;
    only(m, at, &["source", "records", "gaps"])?;
    let source = Value::from(req_str(m, at, "source")?);
    let mut records = Vec::new();
    for (i, r) in list(m, at, "records")?.iter().enumerate() {
        let at = format!("{at}.records[{i}]");
        let rm = object(r, &at)?;
        // A discriminated union: the tag must be present and one of the four.
        let dumped = match rm.get("kind").and_then(Value::as_str) {
            Some(INVOCATION) => {
                t::invocation(r, &at)?;
                dump::invocation(rm)
            }
            Some(TOOL) => {
                t::tool_call(r, &at, false)?;
                dump_tool_observation(rm)
            }
            Some(COMPACTION) => {
                compaction(r, &at)?;
                dump_compaction(rm)
            }
            Some(SANDBOX) => {
                sandbox(r, &at)?;
                dump_sandbox(rm)
            }
            _ => return Err(format!("{at}.kind: not one of the record kinds")),
        };
        records.push(dumped);
    }
    let mut gaps = Vec::new();
    for (i, g) in list(m, at, "gaps")?.iter().enumerate() {
        t::gap(g, &format!("{at}.gaps[{i}]"))?;
        gaps.extend(g.as_object().map(dump::gap));
    }
    let bundle = Bundle {
        source,
        records,
        gaps,
    };
    // Unique invocation ids; a parent chain must not loop (missing parents are fine: a
    // producer may see only part of the tree).
    let parents: HashMap<&str, Option<&str>> = bundle
        .records_of(INVOCATION)
        .map(|r| {
            (
                r["invocation_id"].as_str().unwrap_or_default(),
                r["parent_invocation_id"].as_str(),
            )
        })
        .collect();
    if parents.len() != bundle.records_of(INVOCATION).count() {
        return Err("invocation_id must be unique within an observation bundle".into());
    }
    let mut checked: HashSet<&str> = HashSet::new();
    for start in parents.keys() {
        let mut chain = HashSet::new();
        let mut current = *start;
        while parents.contains_key(current) && !checked.contains(current) {
            if !chain.insert(current) {
                return Err("parent_invocation_id must not form a cycle".into());
            }
            match parents.get(current).copied().flatten() {
                Some(p) => current = p,
                None => break,
            }
        }
        checked.extend(chain);
    }
    Ok(bundle)
}

fn gap(code: &str, invocation: Option<&str>, detail: Option<Value>) -> Value {
    obj(vec![
        ("code", Value::from(code)),
        ("invocation_id", invocation.map_or(Value::Null, Value::from)),
        ("detail", detail.unwrap_or(Value::Null)),
    ])
}

/// Python's `a or b` over two optional strings, as a JSON value.
fn either(a: &Value, b: &Value) -> Value {
    py::truthy_str(a).map_or_else(|| b.clone(), Value::from)
}

/// Python's `f"{value}"` of an optional string.
fn py_text(v: &Value) -> String {
    v.as_str().map_or_else(|| "None".into(), str::to_string)
}

/// Gaps de-duplicated on `(code, invocation_id, detail)`, first position kept.
pub fn unique_gaps(gaps: Vec<Value>) -> Vec<Value> {
    let mut out: Vec<Value> = Vec::new();
    for g in gaps {
        let key = |v: &Value| {
            (
                v["code"].clone(),
                v["invocation_id"].clone(),
                v["detail"].clone(),
            )
        };
        match out.iter_mut().find(|u| key(u) == key(&g)) {
            Some(slot) => *slot = g,
            None => out.push(g),
        }
    }
    out
}

/// Upstream's `join_model_call_observations`: resolves the bundle's model-call references
/// against the captured call records (`ng_model_call_capture.calls`) in place. A reference
/// resolves when exactly one captured call matches it; each call belongs to one invocation
/// (a second claim is a conflict); captured calls no invocation owns are reported.
pub fn join(bundle: &mut Bundle, calls: &[&Map<String, Value>]) {
    let null = Value::Null;
    let field = |c: &Map<String, Value>, k: &str| c.get(k).unwrap_or(&null).clone();
    let matches = |r: &Value| -> Vec<usize> {
        let (id, mref, rid) = (&r["model_call_id"], &r["model_ref"], &r["response_id"]);
        (0..calls.len())
            .filter(|&i| {
                let c = calls[i];
                if let Some(id) = py::truthy_str(id) {
                    py::truthy_str(&field(c, "model_call_id")) == Some(id)
                        && (mref.is_null() || *mref == field(c, "model_ref"))
                        && (rid.is_null() || *rid == field(c, "response_id"))
                } else {
                    let (cref, crid) = (field(c, "model_ref"), field(c, "response_id"));
                    !cref.is_null()
                        && py::truthy_str(&crid).is_some()
                        && cref == *mref
                        && crid == *rid
                }
            })
            .collect()
    };
    // The reference that names captured call `i` exactly.
    let exact_ref = |i: usize| {
        obj(vec![
            ("model_call_id", field(calls[i], "model_call_id")),
            ("model_ref", field(calls[i], "model_ref")),
            ("response_id", field(calls[i], "response_id")),
        ])
    };
    let call_name = |i: usize| {
        either(
            &field(calls[i], "model_call_id"),
            &field(calls[i], "response_id"),
        )
    };
    let join_codes = [
        "model_call_reference_ambiguous",
        "model_call_reference_conflict",
        "model_call_reference_unmatched",
    ];
    let mut gaps: Vec<Value> = bundle
        .gaps
        .iter()
        .filter(|g| {
            let code = g["code"].as_str().unwrap_or_default();
            // Capture-level ownership gaps of an earlier join are recomputed below.
            let stale_ownership = code == "model_call_ownership_unavailable"
                && g["invocation_id"].is_null()
                && g["detail"]
                    .as_str()
                    .is_some_and(|d| d.starts_with("capture:"));
            !join_codes.contains(&code) && !stale_ownership
        })
        .cloned()
        .collect();
    let unresolved = |n: usize| {
        if n == 0 {
            "model_call_reference_unmatched"
        } else {
            "model_call_reference_ambiguous"
        }
    };
    let mut owner: HashMap<usize, String> = HashMap::new();
    let mut join_gaps = Vec::new();
    for rec in bundle
        .records
        .iter_mut()
        .filter(|r| r["kind"].as_str() == Some(INVOCATION))
    {
        let inv = rec["invocation_id"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        let refs = rec["model_calls"].as_array().cloned().unwrap_or_default();
        let mut resolved = Vec::new();
        for r in refs {
            let found = matches(&r);
            if found.len() != 1 {
                let detail = either(&r["model_call_id"], &r["response_id"]);
                join_gaps.push(gap(unresolved(found.len()), Some(&inv), Some(detail)));
                resolved.push(r);
            } else if let std::collections::hash_map::Entry::Vacant(e) = owner.entry(found[0]) {
                e.insert(inv.clone());
                resolved.push(exact_ref(found[0]));
            } else {
                let detail = call_name(found[0]);
                join_gaps.push(gap(
                    "model_call_reference_conflict",
                    Some(&inv),
                    Some(detail),
                ));
                resolved.push(r);
            }
        }
        rec["model_calls"] = Value::Array(resolved);
    }
    for rec in bundle
        .records
        .iter_mut()
        .filter(|r| r["kind"].as_str() == Some(COMPACTION))
    {
        let inv = rec["invocation_id"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        let prefixed = |p: &str, v: Value| Some(Value::from(format!("{p}:{}", py_text(&v))));
        let refs = rec["model_calls"].as_array().cloned().unwrap_or_default();
        let mut resolved = Vec::new();
        for r in refs {
            let found = matches(&r);
            if found.len() != 1 {
                let detail = either(&r["model_call_id"], &r["response_id"]);
                join_gaps.push(gap(
                    unresolved(found.len()),
                    Some(&inv),
                    prefixed("model_calls", detail),
                ));
                resolved.push(r);
                continue;
            }
            match owner.get(&found[0]) {
                Some(o) if *o == inv => resolved.push(exact_ref(found[0])),
                o => {
                    let code = if o.is_some() {
                        "model_call_reference_conflict"
                    } else {
                        "model_call_ownership_unavailable"
                    };
                    let detail = prefixed("model_calls", call_name(found[0]));
                    join_gaps.push(gap(code, Some(&inv), detail));
                    resolved.push(r);
                }
            }
        }
        rec["model_calls"] = Value::Array(resolved);
        for name in ["before_model_call", "after_model_call"] {
            let r = rec[name].clone();
            if r.is_null() {
                continue;
            }
            let found = matches(&r);
            if found.len() == 1 {
                if owner.get(&found[0]).is_some_and(|o| *o != inv) {
                    let detail = prefixed(name, call_name(found[0]));
                    join_gaps.push(gap("model_call_reference_conflict", Some(&inv), detail));
                    continue;
                }
                rec[name] = exact_ref(found[0]);
            } else {
                let detail = prefixed(name, either(&r["model_call_id"], &r["response_id"]));
                join_gaps.push(gap(unresolved(found.len()), Some(&inv), detail));
            }
        }
    }
    gaps.extend(join_gaps);
    for (i, c) in calls.iter().enumerate() {
        if !owner.contains_key(&i) {
            let name = either(&call_name(i), &Value::from("unknown"));
            let index = c
                .get("call_index")
                .map_or_else(|| "None".into(), Value::to_string);
            gaps.push(gap(
                "model_call_ownership_unavailable",
                None,
                Some(Value::from(format!(
                    "capture:{}:call_index={index}",
                    py_text(&name)
                ))),
            ));
        }
    }
    bundle.gaps = unique_gaps(gaps);
}

/// The observation part of upstream's `_build_trajectory_record`: the bundle's gaps, its
/// invocations the producer's trajectory lacks, and its tool timings merged by
/// `(invocation_id, tool_call_id)` with the `output` of the matching `function_call_output`
/// item. Items already folded in stay when a merged tool call turns out invalid (`Err`), as
/// upstream's in-place lists do.
pub fn merge_into(
    bundle: Bundle,
    gaps: &mut Vec<Value>,
    invocations: &mut Vec<Value>,
    tools: &mut Vec<Value>,
) -> R<()> {
    gaps.extend(bundle.gaps.iter().cloned());
    let known: HashSet<String> = invocations
        .iter()
        .filter_map(|i| i["invocation_id"].as_str().map(str::to_string))
        .collect();
    invocations.extend(
        bundle
            .records_of(INVOCATION)
            .filter(|r| {
                !r["invocation_id"]
                    .as_str()
                    .is_some_and(|id| known.contains(id))
            })
            .cloned(),
    );
    let observed: Vec<&Value> = bundle.records_of(TOOL).collect();
    if observed.is_empty() {
        return Ok(());
    }
    let key = |v: &Value| (v["invocation_id"].clone(), v["tool_call_id"].clone());
    let mut outputs: HashMap<(Value, Value), Value> = HashMap::new();
    for inv in invocations.iter() {
        for item in inv["conversation"].as_array().into_iter().flatten() {
            if item["type"].as_str() == Some("function_call_output") {
                outputs.insert(
                    (inv["invocation_id"].clone(), item["call_id"].clone()),
                    item["output"].clone(),
                );
            }
        }
    }
    let mut positions: HashMap<(Value, Value), usize> =
        tools.iter().enumerate().map(|(i, t)| (key(t), i)).collect();
    for o in observed {
        let k = key(o);
        let position = positions.get(&k).copied();
        let existing = position.map(|p| &tools[p]);
        let mut merged = existing
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        let keep_status =
            existing.is_some_and(|e| e["status"] != "unknown") && o["status"] == "unknown";
        for (f, v) in o.as_object().into_iter().flatten() {
            if !v.is_null() && (!keep_status || f != "status") {
                merged.insert(f.clone(), v.clone());
            }
        }
        if let Some(out) = outputs.get(&k) {
            merged.insert("output".into(), out.clone());
        }
        let merged = Value::Object(merged);
        t::tool_call(&merged, "tool_calls", true)?;
        let projected = merged.as_object().map_or(Value::Null, dump::tool_call);
        if let Some(p) = position {
            tools[p] = projected;
        } else {
            positions.insert(k, tools.len());
            tools.push(projected);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
