//! Decision points of one trajectory: the skip checks (in [`Reason`]'s order) and, for
//! the turns that pass, the expected action and the position facts of `meta_info`/`pivot_info`.

use super::skips::Reason;
use super::turns::{assistant_text, Kind, Trajectory};
use serde_json::{json, Value};

/// The checks' switches (a subset of the build options).
#[derive(Clone, Debug)]
pub struct CheckOptions {
    pub check_tool_names: bool,
    pub multi_call_batch: bool,
    pub tool_calls_only: bool,
    pub doom_loop_threshold: Option<u32>,
    pub skip_tool_errors: bool,
}

/// A decision point that passed the content checks.
pub struct Found {
    pub expected_action: Value,
    /// The prefix is `T[..start]`.
    pub start: usize,
    pub turn: u64,
    pub step: u64,
    pub depth: u64,
    pub steps_with_reasoning: u64,
    pub call_id: Option<Value>,
    pub has_reasoning: bool,
    pub has_content: bool,
    pub is_message: bool,
    /// A reason checked after deduplication (`message_pivot_disabled`, `doom_loop`,
    /// `tool_error` come after `duplicate_pivot`).
    pub late_skip: Option<(Reason, Option<String>)>,
}

/// One decision point's outcome.
pub struct Point<'t> {
    pub source_index: usize,
    /// Index among the trajectory's decision points.
    pub assistant_index: usize,
    /// Index in `T` of the turn's first item.
    pub item_index: usize,
    pub calls: Vec<&'t Value>,
    pub outcome: Result<Found, (Reason, Option<String>)>,
}

/// Evaluates every decision point of `t`.
pub fn decision_points<'t>(
    t: &'t Trajectory,
    tool_names: &[&str],
    o: &CheckOptions,
) -> Vec<Point<'t>> {
    let n = t.items.len();
    let paired = t.paired_prefixes();
    // users_before[p]: user messages in T[..p]; last_user[p]: index of the last one before p.
    let mut users_before = vec![0u64; n + 1];
    let mut last_user = vec![None; n + 1];
    for i in 0..n {
        let is_user = t.kinds[i] == Kind::Context
            && t.items[i].get("role").and_then(Value::as_str) == Some("user");
        users_before[i + 1] = users_before[i] + u64::from(is_user);
        last_user[i + 1] = if is_user { Some(i) } else { last_user[i] };
    }
    let decision: Vec<usize> = (0..t.turns.len())
        .filter(|&i| t.turns[i].decision)
        .collect();
    let first_call_names: Vec<Option<&str>> = decision
        .iter()
        .map(|&ti| {
            let turn = &t.turns[ti];
            (turn.start..turn.end)
                .find(|&i| t.kinds[i] == Kind::Call)
                .and_then(|i| t.items[i].get("name").and_then(Value::as_str))
        })
        .collect();
    let doom = doom_flags(&first_call_names, o.doom_loop_threshold);
    let last_turn = t.turns.len().checked_sub(1);
    decision
        .iter()
        .enumerate()
        .map(|(di, &ti)| {
            let turn = &t.turns[ti];
            let range = turn.start..turn.end;
            let calls: Vec<&Value> = range
                .clone()
                .filter(|&i| t.kinds[i] == Kind::Call)
                .map(|i| &t.items[i])
                .collect();
            let outcome = check(
                t,
                ti,
                &calls,
                tool_names,
                o,
                &users_before,
                &last_user,
                &paired,
                last_turn,
            )
            .map(|mut found| {
                if found.late_skip.is_none() && doom[di] {
                    found.late_skip =
                        Some((Reason::DoomLoop, first_call_names[di].map(String::from)));
                }
                found
            });
            Point {
                source_index: turn.source_index,
                assistant_index: di,
                item_index: turn.start,
                calls,
                outcome,
            }
        })
        .collect()
}

/// Runs of ≥ threshold consecutive decision points whose first call has the same tool: every
/// member but the last is flagged.
fn doom_flags(names: &[Option<&str>], threshold: Option<u32>) -> Vec<bool> {
    let mut flags = vec![false; names.len()];
    let Some(threshold) = threshold.filter(|&t| t >= 2) else {
        return flags;
    };
    let mut start = 0;
    while start < names.len() {
        let mut end = start + 1;
        while names[start].is_some() && end < names.len() && names[end] == names[start] {
            end += 1;
        }
        if names[start].is_some() && end - start >= threshold as usize {
            flags[start..end - 1].iter_mut().for_each(|f| *f = true);
        }
        start = end;
    }
    flags
}

#[allow(clippy::too_many_arguments)]
fn check(
    t: &Trajectory,
    ti: usize,
    calls: &[&Value],
    tool_names: &[&str],
    o: &CheckOptions,
    users_before: &[u64],
    last_user: &[Option<usize>],
    paired: &[bool],
    last_turn: Option<usize>,
) -> Result<Found, (Reason, Option<String>)> {
    let turn = &t.turns[ti];
    let kinds = &t.kinds[turn.start..turn.end];
    let items = &t.items[turn.start..turn.end];
    if let Some(i) = kinds.iter().position(|k| *k == Kind::OtherCall) {
        let ty = items[i]
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or_default();
        return Err((Reason::UnsupportedActionType, Some(ty.to_string())));
    }
    if calls.len() >= 2 && !o.multi_call_batch {
        return Err((
            Reason::MultiToolCall,
            Some(format!("{} function calls in one turn", calls.len())),
        ));
    }
    for c in calls {
        match c.get("arguments") {
            Some(Value::String(s)) => {
                if let Err(e) = serde_json::from_str::<serde::de::IgnoredAny>(s) {
                    return Err((Reason::MalformedArguments, Some(e.to_string())));
                }
            }
            _ => {
                return Err((
                    Reason::MalformedArguments,
                    Some("arguments is not a string".into()),
                ))
            }
        }
        let name = c.get("name").and_then(Value::as_str).unwrap_or_default();
        if o.check_tool_names && !tool_names.contains(&name) {
            return Err((Reason::ToolNotInTools, Some(name.to_string())));
        }
    }
    let text_item = kinds
        .iter()
        .position(|k| *k == Kind::AssistantText)
        .map(|i| &items[i]);
    let text = text_item.and_then(assistant_text);
    let is_message = calls.is_empty();
    if is_message {
        match text {
            None => return Err((Reason::NoAction, None)),
            Some(s) if s.trim().is_empty() => return Err((Reason::EmptyMessage, None)),
            _ => {}
        }
    }
    let incomplete = items
        .iter()
        .any(|i| i.get("status").and_then(Value::as_str) == Some("incomplete"))
        || (Some(ti) == last_turn && t.incomplete);
    if incomplete {
        return Err((Reason::IncompleteTurn, None));
    }
    if users_before[turn.start] == 0 {
        return Err((Reason::NoUserMessage, None));
    }
    if !paired[turn.start] {
        return Err((Reason::UnmatchedCallInPrefix, None));
    }
    let expected_action = if is_message {
        json!({"type": "message", "content": text.unwrap_or_default()})
    } else if calls.len() == 1 {
        json!({"type": "function_call", "name": calls[0]["name"], "arguments": calls[0]["arguments"]})
    } else {
        let calls: Vec<Value> = calls
            .iter()
            .map(|c| json!({"type": "function_call", "name": c["name"], "arguments": c["arguments"]}))
            .collect();
        json!({"type": "function_call_batch", "calls": calls})
    };
    let since_user = last_user[turn.start];
    let steps: Vec<usize> = (0..ti)
        .filter(|&j| since_user.is_none_or(|u| t.turns[j].start > u))
        .collect();
    let steps_with_reasoning = steps
        .iter()
        .filter(|&&j| t.kinds[t.turns[j].start..t.turns[j].end].contains(&Kind::Reasoning))
        .count() as u64;
    let late_skip = if is_message && o.tool_calls_only {
        Some((Reason::MessagePivotDisabled, None))
    } else if o.skip_tool_errors {
        tool_error(t, turn.end, calls).map(|d| (Reason::ToolError, Some(d)))
    } else {
        None
    };
    Ok(Found {
        expected_action,
        start: turn.start,
        turn: users_before[turn.start],
        step: steps.len() as u64 + 1,
        depth: ti as u64 + 1,
        steps_with_reasoning,
        call_id: (calls.len() == 1)
            .then(|| calls[0].get("call_id").cloned().unwrap_or(Value::Null)),
        has_reasoning: kinds.contains(&Kind::Reasoning),
        has_content: !is_message && text.is_some_and(|s| !s.trim().is_empty()),
        is_message,
        late_skip,
    })
}

/// `--skip-tool-errors`: the output answering one of the turn's calls reads like an error.
fn tool_error(t: &Trajectory, after: usize, calls: &[&Value]) -> Option<String> {
    const MARKERS: [&str; 5] = ["error", "not found", "invalid", "denied", "failed"];
    for c in calls {
        let id = c.get("call_id")?;
        let output = t.items[after..].iter().find(|o| {
            o.get("type").and_then(Value::as_str) == Some("function_call_output")
                && o.get("call_id") == Some(id)
        })?;
        let text = match output.get("output") {
            Some(Value::String(s)) => s.to_lowercase(),
            Some(other) => other.to_string().to_lowercase(),
            None => continue,
        };
        if let Some(m) = MARKERS.iter().find(|m| text.contains(*m)) {
            return Some(format!("tool output contains '{m}'"));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::doom_flags;

    #[test]
    fn doom_loop_flags_all_but_the_last_of_a_long_run() {
        let names = [
            Some("a"),
            Some("a"),
            Some("a"),
            None,
            Some("a"),
            Some("b"),
            Some("b"),
        ];
        assert_eq!(
            doom_flags(&names, Some(3)),
            [true, true, false, false, false, false, false]
        );
        assert!(doom_flags(&names, Some(2))[5]);
        assert!(doom_flags(&names, None).iter().all(|f| !f));
    }
}
