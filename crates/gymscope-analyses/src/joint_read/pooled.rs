//! The joint read (profile and health) in the pool's ranges (`read::in_order`): each batch of a
//! range read for both ([`lines`]), and the results recorded in file order by [`Both`]. The rows,
//! health reads and the first error are those of one reader of both files (tested below against
//! the streaming read).

use super::{parse_batch, record_both, HealthLines};
use crate::error::ProfileError;
use crate::health::{HealthBuilder, HealthError};
use crate::profile::{ParsedBatch, ProfileBuilder};
use crate::read::batch::LineBatch;
use crate::read::in_order;
use crate::read::job::Job;
use crate::read::jsonl::LineTooLong;
use crate::record::RowKind;

/// A batch of a range read for the profile and health.
#[derive(serde::Serialize, serde::Deserialize)]
pub struct BothLines {
    pub parsed: ParsedBatch,
    pub health: HealthLines,
}

/// What a profile's range reader sends.
pub type RangePart = in_order::Part<BothLines>;

/// The profile and health read of a batch (a pool worker's part of the job).
pub fn lines(batch: &LineBatch) -> BothLines {
    let (parsed, health) = parse_batch(batch);
    BothLines { parsed, health }
}

/// The profile's and health's builders, recording a range's batches in file order.
pub struct Both {
    pub builder: ProfileBuilder,
    pub health: Result<HealthBuilder, HealthError>,
    pub inputs_name: String,
}

impl Job for Both {
    type Part = BothLines;
    type Error = ProfileError;

    fn record(&mut self, lines: BothLines, before: u64) -> Result<(), ProfileError> {
        let BothLines {
            mut parsed,
            mut health,
        } = lines;
        parsed.renumber(before);
        health.renumber(before);
        record_both(
            &mut self.builder,
            &mut self.health,
            &self.inputs_name,
            parsed,
            health,
        )
    }

    fn too_long(&mut self, kind: RowKind, too_long: LineTooLong) -> Result<(), ProfileError> {
        Err(self.builder.line_too_long(kind, too_long))
    }

    fn read_failed(&mut self, kind: RowKind, cause: String) -> ProfileError {
        self.builder.read_failed(kind, cause)
    }
}

/// The parts of a profile's ranges, recorded in order.
pub type InOrder = in_order::InOrder<Both>;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::health::HealthBuilder;
    use crate::output::render_in_memory;
    use crate::profile::parse_batch as parse_profile;
    use crate::profile::ProfileOptions;
    use crate::read::job::OneThread;
    use crate::read::ranges::plan;
    use crate::record::RowKind;

    const IN: &str = "run_materialized_inputs.jsonl";
    const OUT: &str = "rollouts.jsonl";

    /// A small run of two agents whose rollouts carry usage, a verifier field and tool calls.
    fn run(tasks: usize, repeats: usize) -> (String, String) {
        let (mut inputs, mut rollouts) = (String::new(), String::new());
        for t in 0..tasks {
            for r in 0..repeats {
                let agent = ["math", "code"][t % 2];
                inputs.push_str(&format!(
                    r#"{{"_ng_task_index": {t}, "_ng_rollout_index": {r}, "agent_ref": {{"name": "{agent}"}}, "responses_create_params": {{"input": [{{"role": "user", "content": "task {t}"}}]}}}}"#
                ));
                inputs.push('\n');
                let reward = ((t * 7 + r * 3) % 5) as f64 / 4.0;
                rollouts.push_str(&format!(
                    r#"{{"_ng_task_index": {t}, "_ng_rollout_index": {r}, "agent_ref": {{"name": "{agent}"}}, "reward": {reward}, "acc": {}, "response": {{"output": [{{"type": "function_call", "name": "run", "arguments": "{{\"x\": {r}}}", "call_id": "c{r}"}}, {{"type": "function_call_output", "call_id": "c{r}", "output": "ok"}}, {{"type": "message", "role": "assistant", "content": [{{"type": "output_text", "text": "done {t}"}}]}}], "usage": {{"input_tokens": {}, "output_tokens": {}, "total_tokens": {}}}}}}}"#,
                    r % 2,
                    100 + t,
                    10 + r,
                    110 + t + r
                ));
                rollouts.push('\n');
            }
        }
        (inputs, rollouts)
    }

    /// The profile's files (or its error) and health's report (or its error), as text.
    type Outcome = (Result<(Vec<u8>, Vec<u8>), String>, String);

    fn builders(max: u64) -> (ProfileBuilder, Result<HealthBuilder, HealthError>) {
        let mut health = HealthBuilder::new(OUT, 0.5);
        health.expect_inputs();
        (
            ProfileBuilder::new(IN, OUT).with_max_line_bytes(max),
            Ok(health),
        )
    }

    fn outcome(
        builder: ProfileBuilder,
        health: Result<HealthBuilder, HealthError>,
        inputs: &[u8],
    ) -> Outcome {
        let profile = builder
            .finish(ProfileOptions::default())
            .map_err(|e| e.to_string())
            .map(|p| {
                let r = render_in_memory(&p, inputs, IN).unwrap();
                (r.reward_profiling, r.agent_metrics)
            });
        (
            profile,
            format!("{:?}", health.and_then(HealthBuilder::finish)),
        )
    }

    /// The app's one-worker read: both files streamed in chunks through the one-thread driver.
    fn streamed(inputs: &[u8], rollouts: &[u8], max: u64) -> Outcome {
        let (builder, health) = builders(max);
        let both = Both {
            builder,
            health,
            inputs_name: IN.to_string(),
        };
        let mut read = OneThread::new(both, max, lines);
        for (data, kind) in [(inputs, RowKind::Input), (rollouts, RowKind::Rollout)] {
            for chunk in data.chunks(1000) {
                if let Err(e) = read.push(kind, chunk) {
                    return (Err(e.to_string()), String::new());
                }
            }
        }
        match read.finish() {
            Ok(Both {
                builder, health, ..
            }) => outcome(builder, health, inputs),
            Err(e) => (Err(e.to_string()), String::new()),
        }
    }

    /// The pool's read: every range read alone, its parts sent as bytes, and delivered last
    /// range first (the recorder holds them until their turn).
    fn in_ranges(inputs: &[u8], rollouts: &[u8], max: u64, piece: u64, slice: u64) -> Outcome {
        let mut ranges = plan(RowKind::Input, inputs.len() as u64, piece);
        ranges.extend(plan(RowKind::Rollout, rollouts.len() as u64, piece));
        let (builder, health) = builders(max);
        let both = Both {
            builder,
            health,
            inputs_name: IN.to_string(),
        };
        let mut order = InOrder::new(both, ranges.clone());
        let files = (inputs, rollouts);
        // The profile alone in the same ranges (the comparison's read): its rows and first
        // error are the joint read's.
        let mut alone = in_order::InOrder::new(
            ProfileBuilder::new(IN, OUT).with_max_line_bytes(max),
            ranges,
        );
        let alone = in_order::record_last_first(&mut alone, files, max, slice, parse_profile)
            .map(|()| alone.into_job())
            .map_err(|e| e.to_string());
        if let Err(e) = in_order::record_last_first(&mut order, files, max, slice, lines) {
            assert_eq!(alone.err(), Some(e.to_string()), "the profile read alone");
            return (Err(e.to_string()), String::new());
        }
        let Ok(alone) = alone else {
            panic!("the profile read alone failed where both did not")
        };
        let Both {
            builder, health, ..
        } = order.into_job();
        let both = outcome(builder, health, inputs);
        assert_eq!(
            both.0,
            outcome(alone, Ok(HealthBuilder::new(OUT, 0.5)), inputs).0
        );
        both
    }

    #[test]
    fn ranges_recorded_in_order_are_the_streaming_read() {
        let (inputs, rollouts) = run(12, 3);
        let lines: Vec<&str> = rollouts.lines().collect();
        let late = lines.len() * 3 / 4;
        let replace = |i: usize, with: &str| {
            let mut l = lines.clone();
            l[i] = with;
            l.join("\n") + "\n"
        };
        let duplicate = {
            let mut l = lines.clone();
            l.insert(late, lines[2]);
            l.join("\n") + "\n"
        };
        let orphan = lines[late].replace("\"_ng_task_index\": ", "\"_ng_task_index\": 9");
        let long = format!(r#"{{"reward": 1, "pad": "{}"}}"#, "x".repeat(400));
        let cases: Vec<(&str, String, String, u64)> = vec![
            ("clean", inputs.clone(), rollouts.clone(), 1 << 20),
            (
                "crlf",
                inputs.replace('\n', "\r\n"),
                rollouts.replace('\n', "\r\n"),
                1 << 20,
            ),
            (
                "no final newline",
                inputs.clone(),
                rollouts.trim_end().to_string(),
                1 << 20,
            ),
            (
                "blank line late",
                inputs.clone(),
                replace(late, ""),
                1 << 20,
            ),
            (
                "malformed late",
                inputs.clone(),
                replace(late, r#"{"reward": 1,"#),
                1 << 20,
            ),
            ("duplicate late", inputs.clone(), duplicate, 1 << 20),
            (
                "unknown task",
                inputs.clone(),
                replace(late, &orphan),
                1 << 20,
            ),
            ("too long late", inputs.clone(), replace(late, &long), 380),
            (
                "bom",
                format!("\u{feff}{inputs}"),
                rollouts.clone(),
                1 << 20,
            ),
            (
                "bom in rollouts",
                inputs.clone(),
                format!("\u{feff}{rollouts}"),
                1 << 20,
            ),
            (
                "malformed in both",
                inputs.replacen("\"agent_ref\"", "agent_ref", 1),
                replace(1, "{"),
                1 << 20,
            ),
        ];
        for (name, inputs, rollouts, max) in cases {
            let (inputs, rollouts) = (inputs.as_bytes(), rollouts.as_bytes());
            let expected = streamed(inputs, rollouts, max);
            for piece in [97, 1000, 4096, 1 << 20] {
                for slice in [61, 1 << 20] {
                    let got = in_ranges(inputs, rollouts, max, piece, slice);
                    assert!(
                        got == expected,
                        "{name}, piece {piece}, slice {slice}:\n{got:?}\nwanted\n{expected:?}"
                    );
                }
            }
        }
    }

    #[test]
    fn an_error_in_a_late_range_names_its_line_in_the_file() {
        let (inputs, rollouts) = run(20, 2);
        let mut lines: Vec<&str> = rollouts.lines().collect();
        lines[33] = r#"{"_ng_task_index": 16, "reward": }"#;
        let rollouts = lines.join("\n") + "\n";
        let (profile, _) = in_ranges(
            inputs.as_bytes(),
            rollouts.as_bytes(),
            1 << 20,
            500,
            1 << 20,
        );
        let message = profile.unwrap_err();
        assert!(
            message.contains("rollouts.jsonl") && message.contains("line 34"),
            "{message}"
        );
    }
}
