//! Single-step runs: rollouts that are one model call by design (PivotRL's on-policy rollouts,
//! `tool_simulation_agent` answering a pivot row), judged on their one action instead of on a
//! final answer they never give (docs/health.md "Rollout health", "Single-step runs"). One detection
//! serves every reader of health: the `health` command, `collect`'s `Behaviour:` line, the
//! report, the app.

use super::signals::Signals;
use super::Flag;
use serde::Serialize;

/// Agent names that mark a single-step rollout: any `agent_ref.name` containing one of these.
/// `tool_simulation_agent` is upstream's one-call agent (`responses_api_agents/
/// tool_simulation_agent/app.py`); its config blocks are named after the resources server
/// `single_step_tool_use_with_argument_comparison` (`RS/configs/*.yaml`: `…_agent`).
pub const SINGLE_STEP_AGENTS: [&str; 2] = [
    "tool_simulation_agent",
    "single_step_tool_use_with_argument_comparison",
];

/// Whether an agent named `name` answers in one step by design.
pub fn is_single_step_agent(name: &str) -> bool {
    SINGLE_STEP_AGENTS.iter().any(|p| name.contains(p))
}

/// Why a rollout is judged as single-step; the report names each reason met.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SingleStepBy {
    /// `--single-step` was given.
    Flag,
    /// The rollout row or its materialized input carries `expected_action` (a pivot row).
    ExpectedAction,
    /// The agent is in [`SINGLE_STEP_AGENTS`].
    Agent,
}

impl SingleStepBy {
    pub const ALL: [SingleStepBy; 3] = [
        SingleStepBy::Flag,
        SingleStepBy::ExpectedAction,
        SingleStepBy::Agent,
    ];
    pub fn bit(self) -> u8 {
        1 << (self as u8)
    }
    /// How the report says it.
    pub fn describe(self) -> &'static str {
        match self {
            SingleStepBy::Flag => "--single-step",
            SingleStepBy::ExpectedAction => "rows carry expected_action",
            SingleStepBy::Agent => "single-step agent",
        }
    }
}

/// Why a rollout is single-step, as bits of [`SingleStepBy`] (0: it is judged as a multi-step
/// episode).
pub(super) fn reasons(flag: bool, expected_action: bool, agent: Option<&str>) -> u8 {
    let mut bits = 0;
    if flag {
        bits |= SingleStepBy::Flag.bit();
    }
    if expected_action {
        bits |= SingleStepBy::ExpectedAction.bit();
    }
    if agent.is_some_and(is_single_step_agent) {
        bits |= SingleStepBy::Agent.bit();
    }
    bits
}

/// The reasons of a bit set, in order.
pub fn reasons_of(bits: u8) -> Vec<SingleStepBy> {
    SingleStepBy::ALL
        .into_iter()
        .filter(|r| bits & r.bit() != 0)
        .collect()
}

impl Signals {
    /// Judges the rollout as one action: a tool call is the answer, so a rollout that ends on it
    /// neither lacks an answer nor ended on a tool, and its call is not left dangling (nobody was
    /// meant to run it). A rollout with neither a call nor answer text still has no action
    /// (`empty_answer`); truncation, malformed arguments and the rest are judged as before.
    pub(super) fn judge_single_step(&mut self) {
        self.single_step = true;
        if self.tool_calls == 0 {
            return;
        }
        let cleared = [Flag::EmptyAnswer, Flag::EndedOnTool, Flag::DanglingCall];
        for f in cleared {
            self.flags &= !f.bit();
        }
        self.dangling_calls = 0;
        self.marks.retain(|m| !cleared.contains(&m.flag));
    }
}

#[cfg(test)]
mod tests {
    use super::super::{HealthBuilder, HealthReport, Level};
    use super::*;
    use serde_json::{json, Value};

    /// A pivot rollout as `tool_simulation_agent` writes it: one call, never answered.
    fn pivot_row(task: i64, agent: &str, extra: &[(&str, Value)], output: Value) -> String {
        let mut row = json!({"responses_create_params": {"input": "x"},
            "response": {"status": "completed", "output": output,
                         "usage": {"input_tokens": 10, "output_tokens": 2, "total_tokens": 12}},
            "reward": 1.0, "_ng_task_index": task, "_ng_rollout_index": 0,
            "agent_ref": {"name": agent}});
        for (k, v) in extra {
            row[*k] = v.clone();
        }
        row.to_string()
    }

    fn one_call() -> Value {
        json!([{"type": "function_call", "name": "get", "arguments": "{\"a\": 1}", "call_id": "c", "status": "completed"}])
    }

    fn expected() -> (&'static str, Value) {
        (
            "expected_action",
            json!({"type": "function_call", "name": "get", "arguments": "{}"}),
        )
    }

    fn report(inputs: &[String], rollouts: &[String], flag: bool, serde: bool) -> HealthReport {
        let mut b = HealthBuilder::new("r.jsonl", 1.0).single_step(flag);
        if serde {
            b = b.serde_reader();
        }
        b.push_inputs("m.jsonl", inputs.join("\n").as_bytes())
            .unwrap();
        b.push_rollouts(rollouts.join("\n").as_bytes()).unwrap();
        b.finish().unwrap()
    }

    fn bad(h: &HealthReport) -> Vec<String> {
        h.findings(Level::Bad)
    }

    #[test]
    fn each_detection_judges_the_one_call_as_the_answer() {
        let input = |extra: &[(&str, Value)]| {
            let mut row =
                json!({"_ng_task_index": 0, "_ng_rollout_index": 0, "agent_ref": {"name": "p"}});
            for (k, v) in extra {
                row[*k] = v.clone();
            }
            row.to_string()
        };
        let cases: [(&str, Vec<String>, String, bool, SingleStepBy); 4] = [
            (
                "the rollout row carries expected_action",
                vec![input(&[])],
                pivot_row(0, "p", &[expected()], one_call()),
                false,
                SingleStepBy::ExpectedAction,
            ),
            (
                "only its materialized input does",
                vec![input(&[expected()])],
                pivot_row(0, "p", &[], one_call()),
                false,
                SingleStepBy::ExpectedAction,
            ),
            (
                "a single-step agent",
                vec![],
                pivot_row(
                    0,
                    "synonym_pivot_single_step_tool_use_with_argument_comparison_agent",
                    &[],
                    one_call(),
                ),
                false,
                SingleStepBy::Agent,
            ),
            (
                "--single-step",
                vec![],
                pivot_row(0, "p", &[], one_call()),
                true,
                SingleStepBy::Flag,
            ),
        ];
        for (why, inputs, rollout, flag, by) in cases {
            for serde in [false, true] {
                let h = report(&inputs, std::slice::from_ref(&rollout), flag, serde);
                let a = &h.agents[0];
                assert_eq!(
                    (a.mode, a.single_step_rollouts, a.single_step_by.as_slice()),
                    ("single_step", 1, &[by][..]),
                    "{why}"
                );
                assert_eq!(
                    (
                        a.empty_answer,
                        a.ended_on_tool,
                        a.dangling_calls,
                        a.rollouts_with_dangling_calls
                    ),
                    (0, 0, 0, 0),
                    "{why}"
                );
                assert!(bad(&h).is_empty(), "{why}: {:?}", bad(&h));
                assert!(
                    h.worst.is_empty() && h.consistently_unhealthy_tasks == 0,
                    "{why}"
                );
                let text = crate::health::text(&h);
                assert!(text.contains("mode: single-step ("), "{why}: {text}");
                assert!(text.contains(by.describe()), "{why}: {text}");
                assert!(crate::health::behaviour_line(&h).contains("single-step run: "));
            }
        }
    }

    #[test]
    fn the_same_rows_without_a_sign_are_judged_as_episodes() {
        let rows: Vec<String> = (0..4).map(|t| pivot_row(t, "p", &[], one_call())).collect();
        let h = report(&[], &rows, false, false);
        let a = &h.agents[0];
        assert_eq!(
            (a.mode, a.empty_answer, a.ended_on_tool, a.dangling_calls),
            ("multi_step", 4, 4, 4)
        );
        assert!(!bad(&h).is_empty());
        assert!(!crate::health::text(&h).contains("mode: single-step"));
        assert!(crate::health::behaviour_line(&h).contains("100.0 % empty answers"));
    }

    #[test]
    fn a_single_step_rollout_without_an_action_or_with_bad_arguments_is_still_flagged() {
        let none = pivot_row(0, "p", &[expected()], json!([]));
        let blank = pivot_row(
            1,
            "p",
            &[expected()],
            json!([{"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": " "}]}]),
        );
        let malformed = pivot_row(
            2,
            "p",
            &[expected()],
            json!([{"type": "function_call", "name": "get", "arguments": "{oops", "call_id": "c"}]),
        );
        let answer = pivot_row(
            3,
            "p",
            &[expected()],
            json!([{"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "done"}]}]),
        );
        let h = report(&[], &[none, blank, malformed, answer], false, false);
        let a = &h.agents[0];
        assert_eq!(
            (a.empty_answer, a.malformed_arguments, a.ended_on_tool),
            (2, 1, 0)
        );
        assert!(h.worst.iter().any(|w| w.reason.contains("no action")));
        assert!(crate::health::behaviour_line(&h).contains("50.0 % without an action"));
    }

    #[test]
    fn a_run_of_two_agents_judges_each_by_its_own_rows() {
        let multi = pivot_row(0, "episodes", &[], one_call());
        let single = pivot_row(1, "pivots", &[expected()], one_call());
        let h = report(&[], &[multi, single], false, false);
        let modes: Vec<(&str, u64)> = h.agents.iter().map(|a| (a.mode, a.empty_answer)).collect();
        assert_eq!(modes, [("multi_step", 1), ("single_step", 0)]);
        assert!(crate::health::behaviour_line(&h).contains("1 single-step rollouts: "));
    }

    #[test]
    fn the_rollout_view_judges_a_row_as_the_report_does() {
        let row = pivot_row(0, "p", &[expected()], one_call());
        let s = crate::health::row_signals(row.as_bytes(), false).unwrap();
        assert!(s.single_step && s.flags == 0 && s.marks.is_empty(), "{s:?}");
        let plain = pivot_row(0, "p", &[], one_call());
        assert!(
            !crate::health::row_signals(plain.as_bytes(), false)
                .unwrap()
                .single_step
        );
        assert!(
            crate::health::row_signals(plain.as_bytes(), true)
                .unwrap()
                .single_step
        );
    }

    #[test]
    fn the_agent_list_matches_upstreams_names() {
        for name in [
            "tool_simulation_agent",
            "swe_pivot_tool_simulation_agent",
            "single_step_tool_use_with_argument_comparison_agent",
            "session_state_pivot_single_step_tool_use_with_argument_comparison_agent",
        ] {
            assert!(is_single_step_agent(name), "{name}");
        }
        for name in ["simple_agent", "finance_agent", "tau2"] {
            assert!(!is_single_step_agent(name), "{name}");
        }
    }
}
