//! The Health page's logic: the core's [`HealthReport`] laid out for the page (per-agent rates
//! with their thresholds and levels, outcome buckets, worst rollouts, upstream's trajectory
//! evidence), each rollout's flags as a column beside the profile's points, and the filter a rate
//! cell sets on the task table (the tasks with a rollout carrying the flag, for that agent).
//! Plain Rust, tested natively; the components only lay it out.

pub use super::health_view::{
    AgentRow, Buckets, HealthState, HealthView, RateCell, Trajectory, WorstRow,
};
use super::model::{Columns, InspectView};
use super::run::RunView;
use crate::health::{agent_label, Flag, HealthBuilder, HealthReport, Level, Signals};
use std::collections::HashMap;

/// A rollout without usage: a bit beside the flags' bits, so the `usage_missing` rate filters too.
pub const USAGE_MISSING_BIT: u16 = 1 << 8;

/// A rollout's flags as bits ([`Flag::bit`] and [`USAGE_MISSING_BIT`]).
pub fn bits(s: &Signals) -> u16 {
    s.flags
        | if s.tokens.is_none() {
            USAGE_MISSING_BIT
        } else {
            0
        }
}

/// The bit a rate counts (a per-call rate filters the rollouts with at least one such call).
pub fn rate_bit(rate: &str) -> Option<u16> {
    Some(match rate {
        "truncated" => Flag::Truncated.bit(),
        "empty_answer" => Flag::EmptyAnswer.bit(),
        "ended_on_tool" => Flag::EndedOnTool.bit(),
        "loops" => Flag::Loop.bit(),
        "tool_error_calls" => Flag::ToolError.bit(),
        "malformed_arguments" => Flag::MalformedArguments.bit(),
        "usage_missing" => USAGE_MISSING_BIT,
        _ => return None,
    })
}

/// A rate in words, as the page heads its column.
pub fn rate_label(rate: &str) -> &str {
    crate::health::rate_name(rate)
}

/// A flag in words, as a badge says it.
pub fn flag_label(flag: Flag) -> &'static str {
    match flag {
        Flag::Truncated => "truncated",
        Flag::EmptyAnswer => "no final answer",
        Flag::EndedOnTool => "ended on a tool",
        Flag::EmptyOutput => "empty output",
        Flag::Loop => "loop",
        Flag::ToolError => "tool error",
        Flag::MalformedArguments => "malformed arguments",
        Flag::DanglingCall => "call without output",
    }
}

/// The flags set in `bits`, in [`Flag::ALL`] order.
pub fn flags_in(bits: u16) -> impl Iterator<Item = Flag> {
    Flag::ALL.into_iter().filter(move |f| bits & f.bit() != 0)
}

/// A rollout's badges: each flag it carries with its words ("loop: search ×3", "truncated
/// (max_output_tokens)", "2 of 5 tool calls answered with an error").
pub fn badges(s: &Signals) -> Vec<(Flag, String)> {
    flags_in(s.flags)
        .map(|f| {
            let text = match f {
                Flag::Truncated => format!(
                    "truncated ({})",
                    s.truncated_reason.as_deref().unwrap_or("unknown")
                ),
                Flag::Loop => match &s.loop_call {
                    Some((name, times)) => format!("loop: {name} ×{times}"),
                    None => "loop".to_string(),
                },
                Flag::ToolError => format!(
                    "tool error: {} of {} calls",
                    s.tool_error_calls, s.tool_calls
                ),
                Flag::MalformedArguments => {
                    format!("malformed arguments: {} calls", s.malformed_arguments)
                }
                Flag::DanglingCall => format!("calls without output: {}", s.dangling_calls),
                other => flag_label(other).to_string(),
            };
            (f, text)
        })
        .collect()
}

/// The offending items of a rollout, each index in `response.output` with the flags it raised.
pub fn marks_by_item(s: &Signals) -> Vec<(usize, Vec<Flag>)> {
    let mut out: Vec<(usize, Vec<Flag>)> = Vec::new();
    for m in &s.marks {
        let at = m.item as usize;
        match out.iter_mut().find(|(i, _)| *i == at) {
            Some((_, flags)) if !flags.contains(&m.flag) => flags.push(m.flag),
            Some(_) => {}
            None => out.push((at, vec![m.flag])),
        }
    }
    out.sort_by_key(|(i, _)| *i);
    out
}

/// Each rollout's bits and agent, read off a [`HealthBuilder`] before it finishes.
#[derive(Clone, Debug, Default)]
pub struct PointSignals {
    agents: Vec<Option<String>>,
    points: HashMap<(i64, i64), (u32, u16)>,
}

impl PointSignals {
    pub fn of(builder: &HealthBuilder) -> PointSignals {
        let mut out = PointSignals::default();
        let mut ids: HashMap<Option<&str>, u32> = HashMap::new();
        for (key, _, agent, s) in builder.rollout_signals() {
            let id = *ids.entry(agent).or_insert_with(|| {
                out.agents.push(agent.map(str::to_string));
                out.agents.len() as u32 - 1
            });
            out.points.insert(key, (id, bits(s)));
        }
        out
    }
}

/// Lays the report out for the page, and fills `cols.point_flags` / `cols.point_health_agent` for the
/// profile's points (NaN for a point health did not see).
pub fn attach(
    view: &mut InspectView,
    cols: &mut Columns,
    report: &HealthReport,
    points: &PointSignals,
) {
    let labels: Vec<String> = report
        .agents
        .iter()
        .map(|a| agent_label(a.agent.as_deref()).to_string())
        .collect();
    let agent_of: Vec<Option<usize>> = points
        .agents
        .iter()
        .map(|a| labels.iter().position(|l| l == agent_label(a.as_deref())))
        .collect();
    let mut flagged = vec![0u64; labels.len()];
    cols.point_flags.clear();
    cols.point_health_agent.clear();
    for (t, r) in cols.point_task.iter().zip(&cols.point_rollout) {
        let (agent, bits) = match points.points.get(&(*t as i64, *r as i64)) {
            Some(&(id, bits)) => (agent_of[id as usize], Some(bits)),
            None => (None, None),
        };
        if let (Some(a), Some(b)) = (agent, bits) {
            if b & !USAGE_MISSING_BIT != 0 {
                flagged[a] += 1;
            }
        }
        cols.point_flags.push(bits.map_or(f64::NAN, f64::from));
        cols.point_health_agent
            .push(agent.map_or(f64::NAN, |a| a as f64));
    }
    let agents = report
        .agents
        .iter()
        .zip(labels)
        .zip(&flagged)
        .map(|((a, agent), &flagged)| AgentRow {
            agent,
            rollouts: a.rollouts,
            flagged,
            tool_calls: a.tool_calls,
            rates: a.rates.iter().map(RateCell::of).collect(),
            buckets: Buckets::of(&a.outcomes),
            mode: crate::health::mode_line(a),
        })
        .collect();
    let trajectory = report.trajectory.as_ref().map(|t| Trajectory {
        rows: t.rows,
        unreadable: t.unreadable,
        turns: t.turns,
        gaps: t.gaps.iter().map(|(k, v)| (k.clone(), *v)).collect(),
        tool_calls_by_status: t
            .tool_calls_by_status
            .iter()
            .map(|(k, v)| (k.clone(), *v))
            .collect(),
    });
    view.health = HealthState::Ready(Box::new(HealthView {
        pass_threshold: report.pass_threshold,
        rollouts: report.rollouts.total,
        flagged: flagged.iter().sum(),
        duplicates: report.rollouts.duplicates,
        missing: report.rollouts.missing,
        run_rates: report.rates.iter().map(RateCell::of).collect(),
        agents,
        tasks: Buckets::of(&report.tasks),
        findings: report.findings_named(Level::Warn, |r| rate_label(r).to_string()),
        unhealthy_tasks: report.consistently_unhealthy_tasks,
        worst: report
            .worst
            .iter()
            .map(|w| WorstRow {
                task: w.task,
                rollout: w.rollout,
                agent: agent_label(w.agent.as_deref()).to_string(),
                reward: w.reward,
                reason: w.reason.clone(),
                upstream: None,
            })
            .collect(),
        trajectory,
        upstream: None,
    }));
}

/// A rate cell's filter: the tasks with a rollout carrying the rate's flag, for one agent (or
/// all). Kept in the URL hash (`flag=loops&agent=…`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HealthFilter {
    /// The rate's name (`truncated`, `loops`, `tool_error_calls`, …).
    pub rate: String,
    /// The agent's label; `None` for every agent.
    pub agent: Option<String>,
}

impl HealthFilter {
    /// The filter as a query of the language (`health.loop == true and agent == "a"`), so the
    /// profile page has one filter model; `None` for `usage_missing`, which no flag names.
    pub fn as_query(&self) -> Option<String> {
        let flag = match self.rate.as_str() {
            "truncated" => Flag::Truncated,
            "empty_answer" => Flag::EmptyAnswer,
            "ended_on_tool" => Flag::EndedOnTool,
            "loops" => Flag::Loop,
            "tool_error_calls" => Flag::ToolError,
            "malformed_arguments" => Flag::MalformedArguments,
            _ => return None,
        };
        let mut q = format!("health.{} == true", flag.as_str());
        match self.agent.as_deref() {
            None => {}
            Some(a) if a == agent_label(None) => q.push_str(" and agent == null"),
            Some(a) => {
                q.push_str(" and agent == ");
                q.push_str(&crate::query::string_literal(a));
            }
        }
        Some(q)
    }

    /// The chip's words.
    pub fn label(&self) -> String {
        match &self.agent {
            Some(a) => format!("{} · {a}", rate_label(&self.rate)),
            None => rate_label(&self.rate).to_string(),
        }
    }
}

impl RunView {
    /// A point's flag bits (`None` where health did not see it).
    pub fn point_bits(&self, p: usize) -> Option<u16> {
        self.cols
            .point_flags
            .get(p)
            .filter(|v| !v.is_nan())
            .map(|&v| v as u16)
    }

    /// Task `t`'s flags with how many of its rollouts carry each (the task table's column).
    pub fn task_flags(&self, t: usize) -> Vec<(Flag, u32)> {
        let mut counts = [0u32; Flag::ALL.len()];
        for p in self.task_points(t) {
            if let Some(b) = self.point_bits(p) {
                for (i, f) in Flag::ALL.into_iter().enumerate() {
                    counts[i] += u32::from(b & f.bit() != 0);
                }
            }
        }
        Flag::ALL
            .into_iter()
            .zip(counts)
            .filter(|(_, n)| *n > 0)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The rate cell's filter as it was before it became a query: a point carries the
    /// filter's flag for its agent (the reference the query is checked against).
    fn point_matches(r: &RunView, p: usize, f: &HealthFilter) -> bool {
        let Some(bit) = rate_bit(&f.rate) else {
            return false;
        };
        let agent_ok = match &f.agent {
            None => true,
            Some(name) => r.cols.point_health_agent.get(p).is_some_and(|&a| {
                let HealthState::Ready(h) = &r.view.health else {
                    return false;
                };
                !a.is_nan()
                    && h.agents
                        .get(a as usize)
                        .is_some_and(|row| row.agent == *name)
            }),
        };
        agent_ok && r.point_bits(p).is_some_and(|b| b & bit != 0)
    }

    /// Per task: whether it has a rollout [`point_matches`].
    fn health_task_mask(r: &RunView, f: &HealthFilter) -> Vec<bool> {
        (0..r.view.tasks.len())
            .map(|t| r.task_points(t).any(|p| point_matches(r, p, f)))
            .collect()
    }
    use crate::health::HealthBuilder;
    use serde_json::json;

    fn row(task: i64, rollout: i64, agent: &str, reward: f64, output: serde_json::Value) -> String {
        json!({"_ng_task_index": task, "_ng_rollout_index": rollout, "agent_ref": {"name": agent},
               "reward": reward, "response": {"output": output,
               "usage": {"input_tokens": 1, "output_tokens": 2, "total_tokens": 3}}})
        .to_string()
    }

    fn answer() -> serde_json::Value {
        json!([{"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "42"}]}])
    }

    /// Tool errors: `b`'s rollout (1, 0) has one; `a`'s rollout (2, 1) has one.
    fn tool_error() -> serde_json::Value {
        json!([{"type": "function_call", "name": "f", "arguments": "{}", "call_id": "x"},
               {"type": "function_call_output", "call_id": "x", "output": "Error: boom"},
               {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "ok"}]}])
    }

    fn run() -> RunView {
        let rows = [
            row(0, 0, "a", 1.0, answer()),
            row(1, 0, "b", 0.0, tool_error()),
            row(1, 1, "b", 1.0, answer()),
            row(2, 0, "a", 1.0, answer()),
            row(2, 1, "a", 0.0, tool_error()),
        ];
        let mut b = HealthBuilder::new("r.jsonl", 1.0);
        // The last line without a newline: ended before the signals are read.
        b.push_rollouts(rows.join("\n").as_bytes()).unwrap();
        b.end_rollouts().unwrap();
        let points = PointSignals::of(&b);
        let report = b.finish().unwrap();
        let task = |task, first_point, num_rollouts| super::super::model::TaskMeta {
            task,
            agents: vec![],
            group: crate::reward_group::RewardGroup::Mixed,
            snippet: String::new(),
            first_point,
            num_rollouts,
        };
        let mut view = InspectView {
            inputs_name: String::new(),
            rollouts_name: String::new(),
            summary: [String::new(), String::new()],
            warnings: vec![],
            totals: super::super::model::Totals {
                tasks: 3,
                rollouts: 5,
                expected_rollouts: 5,
                agents: 2,
                mean_reward: None,
                mean_output_tokens: None,
                mean_total_tokens: None,
            },
            agents: crate::table::Table {
                headers: vec![],
                rows: vec![],
            },
            repeats: None,
            repeat_notes: vec![],
            figures: vec![],
            agent_lines: vec![],
            metrics: vec![],
            task_headers: vec![],
            tasks: vec![task(0, 0, 1), task(1, 1, 2), task(2, 3, 2)],
            health: HealthState::NotComputed,
        };
        // One more point than health saw: (9, 9).
        let mut cols = Columns {
            point_task: vec![0.0, 1.0, 1.0, 2.0, 2.0, 9.0],
            point_rollout: vec![0.0, 0.0, 1.0, 0.0, 1.0, 9.0],
            ..Columns::default()
        };
        attach(&mut view, &mut cols, &report, &points);
        RunView::new(view, cols)
    }

    #[test]
    fn rates_are_laid_out_with_levels_thresholds_and_buckets() {
        let r = run();
        let HealthState::Ready(h) = &r.view.health else {
            panic!("no health")
        };
        assert_eq!((h.rollouts, h.flagged), (5, 2));
        assert!(r.point_bits(5).is_none() && r.cols.point_health_agent[5].is_nan());
        assert_eq!(r.point_bits(1), Some(Flag::ToolError.bit()));
        let agents: Vec<&str> = h.agents.iter().map(|a| a.agent.as_str()).collect();
        assert_eq!(agents, ["a", "b"]);
        let a = &h.agents[0];
        let errors = a
            .rates
            .iter()
            .find(|c| c.rate == "tool_error_calls")
            .unwrap();
        // One of `a`'s one tool call answered with an error: bad (> 20 %).
        assert_eq!((errors.count, errors.of, errors.word()), (1, 1, "bad"));
        assert_eq!(errors.counts(), "1 of 1 tool calls");
        assert_eq!(errors.percent(), "100.0 %");
        assert_eq!(errors.threshold, "warn > 5 %, bad > 20 %");
        let truncated = a.rates.iter().find(|c| c.rate == "truncated").unwrap();
        assert_eq!(
            (truncated.word(), truncated.percent().as_str()),
            ("ok", "0.0 %")
        );
        let usage = a.rates.iter().find(|c| c.rate == "usage_missing").unwrap();
        assert_eq!(usage.threshold, "warn > 0 %, bad = 100 %");
        // `a`: task 0 always passes, task 2 sometimes.
        assert_eq!(
            (
                a.buckets.always_pass,
                a.buckets.sometimes_pass,
                a.buckets.never_pass
            ),
            (1, 1, 0)
        );
        assert_eq!((a.rollouts, a.flagged), (3, 1));
        // Named as the page's table names the rate.
        assert!(h.findings.iter().any(|f| f.starts_with("a: tool errors")));
    }

    #[test]
    fn a_rate_cell_filters_tasks_by_flag_and_agent() {
        let r = run();
        let f = |rate: &str, agent: Option<&str>| HealthFilter {
            rate: rate.into(),
            agent: agent.map(str::to_string),
        };
        assert_eq!(
            health_task_mask(&r, &f("tool_error_calls", None)),
            [false, true, true]
        );
        assert_eq!(
            health_task_mask(&r, &f("tool_error_calls", Some("a"))),
            [false, false, true]
        );
        assert_eq!(
            health_task_mask(&r, &f("tool_error_calls", Some("b"))),
            [false, true, false]
        );
        assert_eq!(
            health_task_mask(&r, &f("loops", None)),
            [false, false, false]
        );
        assert_eq!(health_task_mask(&r, &f("no_such_rate", None)), [false; 3]);
        assert!(point_matches(&r, 4, &f("tool_error_calls", Some("a"))));
        assert!(!point_matches(&r, 3, &f("tool_error_calls", Some("a"))));
        assert_eq!(r.task_flags(2), [(Flag::ToolError, 1)]);
        assert!(r.task_flags(0).is_empty());
        assert_eq!(f("loops", Some("x&y")).label(), "loops · x&y");
    }

    #[test]
    fn a_rate_cell_is_a_query_that_keeps_the_same_tasks() {
        let mut r = run();
        // The profile's agent column beside health's (a loaded run has both).
        r.view.agents.rows = ["a", "b"]
            .map(|k| crate::table::Row {
                key: k.into(),
                cells: vec![],
            })
            .to_vec();
        r.cols.point_agent = vec![0.0, 1.0, 1.0, 0.0, 0.0, f64::NAN];
        let f = |rate: &str, agent: Option<&str>| HealthFilter {
            rate: rate.into(),
            agent: agent.map(str::to_string),
        };
        for filter in [
            f("tool_error_calls", None),
            f("tool_error_calls", Some("a")),
            f("tool_error_calls", Some("b")),
            f("loops", None),
            f("empty_answer", Some("a")),
        ] {
            let q = filter.as_query().unwrap();
            let parsed = crate::query::Query::parse(&q).unwrap();
            let crate::inspect::run_query::Answer::Points(points) =
                crate::inspect::run_query::answer(&r, &parsed)
            else {
                panic!("{q}: needs the file")
            };
            assert_eq!(
                crate::inspect::run_query::task_mask(&r, &points),
                health_task_mask(&r, &filter),
                "{q}"
            );
        }
        assert_eq!(
            f("loops", Some("x\"y\\z")).as_query().unwrap(),
            r#"health.loop == true and agent == "x\"y\\z""#
        );
        let hostile = f("loops", Some("x\"y\\z")).as_query().unwrap();
        assert!(crate::query::Query::parse(&hostile).is_ok(), "{hostile}");
        assert_eq!(f("usage_missing", None).as_query(), None);
        assert_eq!(
            f("truncated", Some(agent_label(None))).as_query().unwrap(),
            "health.truncated == true and agent == null"
        );
    }

    #[test]
    fn upstream_trajectory_evidence_is_shown_when_rows_carry_it() {
        let mut line: serde_json::Value =
            serde_json::from_str(&row(0, 0, "a", 1.0, answer())).unwrap();
        line["ng_trajectory"] = json!({"turns": [{}, {}, {}], "gaps": [{"code": "<gap&>"}],
            "tool_calls": [{"status": "ok"}, {"status": "ok"}, {"status": "timeout"}]});
        let mut b = HealthBuilder::new("r.jsonl", 1.0);
        b.push_rollouts(format!("{line}\n{}\n", row(0, 1, "a", 1.0, answer())).as_bytes())
            .unwrap();
        let points = PointSignals::of(&b);
        let report = b.finish().unwrap();
        let mut view = run().view;
        let mut cols = Columns {
            point_task: vec![0.0, 0.0],
            point_rollout: vec![0.0, 1.0],
            ..Columns::default()
        };
        attach(&mut view, &mut cols, &report, &points);
        let HealthState::Ready(h) = view.health else {
            panic!("no health")
        };
        assert_eq!(
            h.trajectory,
            Some(Trajectory {
                rows: 1,
                unreadable: 0,
                turns: 3,
                gaps: vec![("<gap&>".into(), 1)],
                tool_calls_by_status: vec![("ok".into(), 2), ("timeout".into(), 1)],
            })
        );
        assert_eq!(cols.point_flags, [0.0, 0.0]);
        // Without such rows: none.
        let HealthState::Ready(h) = run().view.health else {
            panic!("no health")
        };
        assert_eq!(h.trajectory, None);
    }

    #[test]
    fn badges_and_marks_of_one_rollout() {
        let line = json!({"_ng_task_index": 0, "_ng_rollout_index": 0, "response": {
            "status": "incomplete", "incomplete_details": {"reason": "max_output_tokens"},
            "output": [
                {"type": "function_call", "name": "ls", "arguments": "{}", "call_id": "a"},
                {"type": "function_call_output", "call_id": "a", "output": "Error: denied"},
                {"type": "function_call", "name": "ls", "arguments": "{ }", "call_id": "b"},
                {"type": "function_call_output", "call_id": "b", "output": "ok"},
                {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "I will"}]}
            ]}})
        .to_string();
        let s = crate::health::row_signals(line.as_bytes(), false).unwrap();
        let words: Vec<String> = badges(&s).into_iter().map(|(_, w)| w).collect();
        assert_eq!(
            words,
            [
                "truncated (max_output_tokens)",
                "loop: ls ×2",
                "tool error: 1 of 2 calls"
            ]
        );
        assert_eq!(
            marks_by_item(&s),
            [
                (0, vec![Flag::Loop]),
                (1, vec![Flag::ToolError]),
                (2, vec![Flag::Loop]),
                (4, vec![Flag::Truncated])
            ]
        );
    }

    #[test]
    fn usage_missing_is_a_bit_of_its_own() {
        let mut b = HealthBuilder::new("r.jsonl", 1.0);
        b.push_rollouts(
            json!({"_ng_task_index": 0, "_ng_rollout_index": 0, "reward": 1.0,
                   "response": {"output": answer()}})
            .to_string()
            .as_bytes(),
        )
        .unwrap();
        b.end_rollouts().unwrap();
        let (_, _, _, s) = b.rollout_signals().next().unwrap();
        assert_eq!(bits(s), USAGE_MISSING_BIT);
        assert_eq!(flags_in(bits(s)).count(), 0);
        assert_eq!(rate_bit("usage_missing"), Some(USAGE_MISSING_BIT));
        assert_eq!(rate_bit("loops"), Some(Flag::Loop.bit()));
    }
}
