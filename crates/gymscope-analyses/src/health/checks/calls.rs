//! The model calls of one trajectory as upstream's checks read them (v0.7.0
//! `nemo_gym/health/checks.py`): failed or successful, bound to the turns and invocations that
//! reference them, and grouped per model to tell whether a model's last call failed.

use crate::gym::py;
use crate::gym::trajectory::{CallRef, ModelCall, ModelRef, Record};
use std::collections::HashMap;

/// A turn or invocation reference as a key (`_call_ref_key`): `call:ID`, else
/// `response:TYPE:NAME:RESPONSE_ID`.
pub(super) fn ref_key(r: &CallRef) -> Option<String> {
    if let Some(id) = r.model_call_id.as_deref().filter(|s| !s.is_empty()) {
        return Some(format!("call:{id}"));
    }
    match (&r.model_ref, r.response_id.as_deref()) {
        (Some(m), Some(rid)) if !rid.is_empty() => {
            Some(format!("response:{}:{}:{rid}", m.kind, m.name))
        }
        _ => None,
    }
}

pub(super) fn call_identity(c: &ModelCall<'_>) -> Option<String> {
    if let Some(id) = c.model_call_id.as_deref().filter(|s| !s.is_empty()) {
        return Some(format!("call:{id}"));
    }
    match (&c.meta.model_ref, c.meta.response_id.as_deref()) {
        (Some(m), Some(rid)) if !rid.is_empty() => {
            Some(format!("response:{}:{}:{rid}", m.kind, m.name))
        }
        (None, Some(rid)) if !rid.is_empty() => Some(format!("response::{rid}")),
        _ => None,
    }
}

pub(super) fn is_failed(c: &ModelCall<'_>) -> bool {
    c.meta.status_code.is_some_and(|s| s >= 400)
        || py::truthy_opt_str(c.meta.error_category.as_deref())
        || matches!(
            c.meta.response_status.as_deref(),
            Some("failed" | "error" | "cancelled")
        )
}

pub(super) fn is_successful(c: &ModelCall<'_>) -> bool {
    !is_failed(c) && c.meta.status_code.is_none_or(|s| (200..400).contains(&s))
}

/// Calls bound to the policy model by exact references (upstream's `_CallBindings`).
#[derive(Default)]
pub(super) struct Bindings {
    /// The reference keys, one per distinct reference (a key may repeat when two references
    /// spell it differently).
    pub references: Vec<String>,
    /// Calls matched by exactly one reference: each once, in their `model_calls` order.
    pub matched: Vec<usize>,
    pub missing: Vec<String>,
    pub duplicated: Vec<(String, usize)>,
}

impl Bindings {
    pub fn observed(&self) -> bool {
        !self.references.is_empty()
    }
    pub fn complete(&self) -> bool {
        self.observed() && self.missing.is_empty() && self.duplicated.is_empty()
    }
}

/// A reference as upstream de-duplicates it (`_call_reference_signature`): its id, model
/// type, model name and response id, missing parts as empty text.
fn signature(r: &CallRef) -> (&str, &str, &str, &str) {
    (
        r.model_call_id.as_deref().unwrap_or(""),
        r.model_ref.as_ref().map_or("", |m| m.kind.as_str()),
        r.model_ref.as_ref().map_or("", |m| m.name.as_str()),
        r.response_id.as_deref().unwrap_or(""),
    )
}

/// The usable references among `refs`, each signature kept once (the first).
fn distinct_refs<'a>(refs: impl Iterator<Item = &'a CallRef>) -> Vec<(String, &'a CallRef)> {
    let mut seen = std::collections::HashSet::new();
    refs.filter_map(|r| ref_key(r).map(|k| (k, r)))
        .filter(|(_, r)| seen.insert(signature(r)))
        .collect()
}

/// The turn-only and the turn-or-invocation bindings (upstream's `_bind_policy_call_views`,
/// v0.7.0 `nemo_gym/health/checks.py`).
pub(super) fn bind_views(t: &Record<'_>) -> (Bindings, Bindings) {
    let turn_refs = distinct_refs(t.turns.iter().flat_map(|turn| turn.model_calls.iter()));
    let owned_refs = distinct_refs(
        turn_refs
            .iter()
            .map(|(_, r)| *r)
            .chain(t.invocations.iter().flat_map(|i| i.model_calls.iter())),
    );
    let mut by_id: HashMap<&str, Vec<usize>> = HashMap::new();
    let mut by_response: HashMap<(&str, &str, &str), Vec<usize>> = HashMap::new();
    for (i, c) in t.model_calls.iter().enumerate() {
        if let Some(id) = c.model_call_id.as_deref().filter(|s| !s.is_empty()) {
            by_id.entry(id).or_default().push(i);
        }
        if let (Some(m), Some(rid)) = (&c.meta.model_ref, c.meta.response_id.as_deref()) {
            if !rid.is_empty() {
                by_response
                    .entry((m.kind.as_str(), m.name.as_str(), rid))
                    .or_default()
                    .push(i);
            }
        }
    }
    let resolve = |r: &CallRef| -> Vec<usize> {
        match r.model_call_id.as_deref().filter(|s| !s.is_empty()) {
            Some(id) => by_id
                .get(id)
                .map(|v| {
                    v.iter()
                        .copied()
                        .filter(|i| {
                            let c = &t.model_calls[*i];
                            (r.model_ref.is_none() || r.model_ref == c.meta.model_ref)
                                && (r.response_id.is_none() || r.response_id == c.meta.response_id)
                        })
                        .collect()
                })
                .unwrap_or_default(),
            None => match (&r.model_ref, r.response_id.as_deref()) {
                (Some(m), Some(rid)) => by_response
                    .get(&(m.kind.as_str(), m.name.as_str(), rid))
                    .cloned()
                    .unwrap_or_default(),
                _ => Vec::new(),
            },
        }
    };
    let build = |items: &[(String, &CallRef)]| {
        let mut b = Bindings {
            references: items.iter().map(|(k, _)| k.clone()).collect(),
            ..Bindings::default()
        };
        for (k, r) in items {
            let matches = resolve(r);
            match matches.len() {
                0 => b.missing.push(k.clone()),
                1 => b.matched.push(matches[0]),
                n => b.duplicated.push((k.clone(), n)),
            }
        }
        b.matched.sort_unstable();
        b.matched.dedup();
        b
    };
    (build(&turn_refs), build(&owned_refs))
}

/// The calls (positions) grouped by the model they went to, models in order of first
/// appearance; calls without a model reference form one chain (upstream's `_model_chains`).
pub(super) fn model_chains<'a>(
    calls: &'a [ModelCall<'_>],
) -> Vec<(Option<&'a ModelRef>, Vec<usize>)> {
    let mut chains: Vec<(Option<&ModelRef>, Vec<usize>)> = Vec::new();
    for (i, c) in calls.iter().enumerate() {
        let model = c.meta.model_ref.as_ref();
        match chains.iter_mut().find(|(m, _)| *m == model) {
            Some((_, chain)) => chain.push(i),
            None => chains.push((model, vec![i])),
        }
    }
    chains
}

/// The chain's last call in time: sorted by (start, position), a missing start as 0.0
/// (upstream sorts on `started_at or 0.0`).
pub(super) fn last_in_time(calls: &[ModelCall<'_>], chain: &[usize]) -> usize {
    let start = |i: usize| calls[i].started_at.unwrap_or(0.0);
    chain
        .iter()
        .copied()
        .max_by(|a, b| {
            start(*a)
                .partial_cmp(&start(*b))
                .unwrap_or(std::cmp::Ordering::Equal)
                .then(a.cmp(b))
        })
        .unwrap_or(0)
}

/// Whether a model's own last call failed (upstream's `_chain_ended_on_failure`, v0.7.0
/// `nemo_gym/health/checks.py`): every call failed, or all have a start time and the last
/// one in time failed. Without start times a mixed chain cannot be ordered, so it says no.
pub(super) fn chain_ended_on_failure(calls: &[ModelCall<'_>], chain: &[usize]) -> bool {
    let failed = chain.iter().filter(|i| is_failed(&calls[**i])).count();
    if failed == 0 {
        return false;
    }
    if failed == chain.len() {
        return true;
    }
    if chain.iter().any(|i| calls[*i].started_at.is_none()) {
        return false;
    }
    is_failed(&calls[last_in_time(calls, chain)])
}

/// Whether some model's own last call failed (`run.stats.model_call_errors.ended_on_error`).
pub(super) fn ended_on_failed_call(calls: &[ModelCall<'_>]) -> bool {
    model_chains(calls)
        .iter()
        .any(|(_, chain)| chain_ended_on_failure(calls, chain))
}
