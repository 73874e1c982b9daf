//! Resume bookkeeping (upstream's `_load_from_cache`): successes from the main file, attempts and
//! terminal flags from the failures sidecar, and from those which materialized rows run again.

use super::key::RolloutKey;
use super::{CollectError, Row};
use crate::gym::keys::FAILURE_TERMINAL;
use crate::gym::py;
use std::collections::{HashMap, HashSet};

pub const DEFAULT_MAX_ATTEMPTS: u32 = 3;

/// `NEMO_GYM_MAX_ROLLOUT_ATTEMPTS`: a positive int, else 3 with upstream's warning.
pub fn max_attempts(raw: Option<&str>) -> (u32, Option<String>) {
    match raw {
        None | Some("") => (DEFAULT_MAX_ATTEMPTS, None),
        Some(raw) => match raw.trim().parse::<i64>() {
            Ok(n) if n >= 1 => (n.min(i64::from(u32::MAX)) as u32, None),
            _ => (
                DEFAULT_MAX_ATTEMPTS,
                Some(format!(
                    "WARNING: could not parse NEMO_GYM_MAX_ROLLOUT_ATTEMPTS={raw:?}; falling back to default {DEFAULT_MAX_ATTEMPTS}."
                )),
            ),
        },
    }
}

/// What the two output files say about earlier attempts.
#[derive(Default)]
pub struct History {
    /// Main-file keys, and whether the materialized file has been seen to contain each.
    done: HashMap<RolloutKey, bool>,
    done_rows: u64,
    attempts: HashMap<RolloutKey, u32>,
    attempt_rows: u64,
    terminal: HashSet<RolloutKey>,
    /// Keys whose last failure is an HTTP client error that will likely fail again.
    refused: HashSet<RolloutKey>,
    /// v0.7.0's `retry_terminal_timeouts` ([`is_terminal`]).
    pub retry_terminal_timeouts: bool,
    /// Keys a sidecar row marks `reuse_cached_deliverable`: retried with that hint.
    reuse: HashSet<RolloutKey>,
    /// The longest duration a key's sidecar rows record (`dispatch_longest_first`).
    elapsed: HashMap<RolloutKey, f64>,
}

/// A row's wall time when it records one (v0.7.0 `observed_elapsed`): `elapsed_seconds`, else
/// `response.metadata.elapsed_seconds`, the first that reads as a positive number.
pub fn observed_elapsed(row: &Row) -> Option<f64> {
    let nested = row
        .get("response")
        .and_then(|r| r.get("metadata"))
        .and_then(|m| m.get("elapsed_seconds"));
    [row.get("elapsed_seconds"), nested]
        .into_iter()
        .flatten()
        .find_map(|v| {
            match v {
                serde_json::Value::Number(n) => n.as_f64(),
                serde_json::Value::Bool(b) => Some(f64::from(u8::from(*b))),
                serde_json::Value::String(s) => s.trim().parse::<f64>().ok(),
                _ => None,
            }
            .filter(|x| *x > 0.0)
        })
}

/// Whether a sidecar row gates its rollout on resume (v0.7.0 `is_terminal_failure`): its
/// `_ng_failure_terminal`, except that with `retry_terminal_timeouts` a timeout or an
/// environment fault (`timeout_exceeded`, `reference_missing`, `eval_missing`,
/// `transport_ineligible`) is retried and `skipped` never is.
pub fn is_terminal(row: &Row, retry_terminal_timeouts: bool) -> bool {
    let stamped = || row.get(FAILURE_TERMINAL).is_some_and(py::truthy);
    if !retry_terminal_timeouts {
        return stamped();
    }
    match row
        .get(crate::gym::keys::FAILURE_CLASS)
        .and_then(serde_json::Value::as_str)
    {
        Some(
            "timeout_exceeded" | "reference_missing" | "eval_missing" | "transport_ineligible",
        ) => false,
        Some("skipped") => true,
        _ => stamped(),
    }
}

/// Which rows a run dispatches, and the counts upstream prints.
pub struct Plan {
    done: HashMap<RolloutKey, bool>,
    gated: HashSet<RolloutKey>,
    attempts: HashMap<RolloutKey, u32>,
    refused: HashSet<RolloutKey>,
    reuse: HashSet<RolloutKey>,
    elapsed: HashMap<RolloutKey, f64>,
    pub counts: Counts,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Counts {
    pub input_rows: u64,
    pub done_rows: u64,
    pub attempt_rows: u64,
    pub attempt_keys: u64,
    pub terminal: u64,
    pub maxed_out: u64,
    pub max_attempts: u32,
    pub to_run: u64,
    /// Materialized rows without a success in the main file.
    pub unfinished: u64,
    /// Of those, rows with at least one attempt in the failures sidecar.
    pub unfinished_in_sidecar: u64,
    /// Of `to_run`, rows whose last attempt the agent refused with a 4xx other than 408/429 (a
    /// validation error, say 422): resume retries them, but they will likely fail again.
    pub refused: u64,
}

impl History {
    /// A row of the main file: a success. Rows without both indices cannot be matched.
    pub fn add_main(&mut self, row: &Row, file: &str, line: u64) -> Result<(), CollectError> {
        let key = RolloutKey::of(row).ok_or_else(|| {
            CollectError::line(
                file,
                line,
                "row has no `_ng_task_index` / `_ng_rollout_index`",
            )
        })?;
        self.done.insert(key, false);
        self.done_rows += 1;
        Ok(())
    }

    /// A row of the failures sidecar: one failed attempt; rows without both indices are skipped
    /// as upstream skips them.
    pub fn add_failure(&mut self, row: &Row) {
        let Some(key) = RolloutKey::of(row) else {
            return;
        };
        self.attempt_rows += 1;
        if is_terminal(row, self.retry_terminal_timeouts) {
            self.terminal.insert(key.clone());
        }
        if row.get("reuse_cached_deliverable").is_some_and(py::truthy) {
            self.reuse.insert(key.clone());
        }
        if let Some(seconds) = observed_elapsed(row) {
            let longest = self.elapsed.entry(key.clone()).or_insert(seconds);
            *longest = longest.max(seconds);
        }
        // v0.7.0's key, or gymscope's before it (older sidecars).
        if row
            .get("_ng_failure_http_status")
            .or_else(|| row.get("_ng_http_status"))
            .and_then(serde_json::Value::as_u64)
            .is_some_and(refused_for_good)
        {
            self.refused.insert(key.clone());
        } else {
            self.refused.remove(&key);
        }
        *self.attempts.entry(key).or_insert(0) += 1;
    }

    pub fn is_empty(&self) -> bool {
        self.done.is_empty() && self.attempts.is_empty()
    }

    pub fn plan(self, max_attempts: u32) -> Plan {
        let maxed: HashSet<RolloutKey> = self
            .attempts
            .iter()
            .filter(|(_, n)| **n >= max_attempts)
            .map(|(k, _)| k.clone())
            .collect();
        let counts = Counts {
            done_rows: self.done_rows,
            attempt_rows: self.attempt_rows,
            attempt_keys: self.attempts.len() as u64,
            terminal: self.terminal.len() as u64,
            maxed_out: maxed.len() as u64,
            max_attempts,
            ..Counts::default()
        };
        let mut gated = maxed;
        gated.extend(self.terminal);
        Plan {
            done: self.done,
            gated,
            attempts: self.attempts,
            refused: self.refused,
            reuse: self.reuse,
            elapsed: self.elapsed,
            counts,
        }
    }
}

impl Plan {
    /// Rollouts already in the main file before this run.
    pub fn done_keys(&self) -> u64 {
        self.done.len() as u64
    }

    /// A retry whose earlier attempt left a deliverable to re-judge (v0.7.0 re-sends it with
    /// `reuse_cached_deliverable: true`).
    pub fn reuse(&self, key: &RolloutKey) -> bool {
        self.reuse.contains(key)
    }

    /// The longest wall time a key's failed attempts recorded (`dispatch_longest_first`).
    pub fn elapsed(&self, key: &RolloutKey) -> Option<f64> {
        self.elapsed.get(key).copied()
    }

    /// The attempt number for a materialized row that must run (0 = first attempt, sent
    /// unstamped), or `None` when it is done, terminal or out of attempts.
    pub fn attempt(&self, key: &RolloutKey) -> Option<u32> {
        if self.done.contains_key(key) || self.gated.contains(key) {
            return None;
        }
        Some(self.attempts.get(key).copied().unwrap_or(0))
    }

    /// Counts one materialized row (the planning pass) and returns [`Plan::attempt`].
    pub fn count(&mut self, key: &RolloutKey) -> Option<u32> {
        self.counts.input_rows += 1;
        if let Some(seen) = self.done.get_mut(key) {
            *seen = true;
        }
        if !self.done.contains_key(key) {
            self.counts.unfinished += 1;
            if self.attempts.contains_key(key) || self.gated.contains(key) {
                self.counts.unfinished_in_sidecar += 1;
            }
        }
        let attempt = self.attempt(key);
        if attempt.is_some() {
            self.counts.to_run += 1;
            if self.refused.contains(key) {
                self.counts.refused += 1;
            }
        }
        attempt
    }

    /// After the planning pass: a main-file row whose key is no materialized row means the two
    /// files are from different runs (upstream: `KeyError`).
    pub fn check_done_rows_known(
        &self,
        main_file: &str,
        materialized: &str,
    ) -> Result<(), CollectError> {
        match self.done.iter().find(|(_, seen)| !**seen) {
            None => Ok(()),
            Some((key, _)) => Err(CollectError::Config(format!(
                "'{main_file}' has a rollout {key} (_ng_task_index, _ng_rollout_index) that is not in '{materialized}': the files are from different runs"
            ))),
        }
    }
}

/// An HTTP status the agent will likely answer again: a client error, but not 408 (request
/// timeout) or 429 (too many requests), which are worth retrying.
fn refused_for_good(status: u64) -> bool {
    (400..500).contains(&status) && status != 408 && status != 429
}

impl Counts {
    /// After a run that did not stop early: why it is not a success (exit 3), or `None` when
    /// every rollout succeeded.
    pub fn unfinished_report(&self, failures: &str) -> Option<String> {
        (self.unfinished > 0).then(|| {
            let likely = self.to_run - self.refused;
            let mut text = format!(
                "{} of {} rollouts did not succeed ({} with failures recorded in '{failures}'); `--resume` would retry {likely} of them ({} are terminal or out of attempts",
                self.unfinished,
                self.input_rows,
                self.unfinished_in_sidecar,
                self.unfinished - likely
            );
            if self.refused > 0 {
                text.push_str(&format!(
                    "; {} of those the agent refused with an HTTP client error, which will likely fail again, though --resume still retries them",
                    self.refused
                ));
            }
            text.push_str(").");
            text
        })
    }

    /// Upstream's resume report.
    pub fn report(&self) -> String {
        format!(
            "Resumed from cache. Found:\n- {} original input rows\n- {} rows already done (in main jsonl)\n- {} prior failure attempts ({} unique tasks) in sidecar\n- {} sidecar-terminal (for example skipped) \u{2192} not retried\n- {} hit max_attempts={} \u{2192} not retried\n- {} rows that still need to be run",
            self.input_rows,
            self.done_rows,
            self.attempt_rows,
            self.attempt_keys,
            self.terminal,
            self.maxed_out,
            self.max_attempts,
            self.to_run
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::collect::key::parse_row;

    fn row(s: &str) -> Row {
        parse_row(s.as_bytes()).unwrap()
    }

    #[test]
    fn client_errors_are_counted_apart_in_the_resume_hint() {
        let mut h = History::default();
        // v0.7.0's key for even tasks, gymscope's earlier one for odd (older sidecars).
        let fail = |task: u32, status: u32| {
            let key = if task % 2 == 0 {
                "_ng_failure_http_status"
            } else {
                "_ng_http_status"
            };
            row(&format!(
                r#"{{"_ng_task_index":{task},"_ng_rollout_index":0,"_ng_failure_class":"agent_run_error","{key}":{status}}}"#
            ))
        };
        // 422 twice, 400; 429 and 408 are worth retrying; task 5 was refused, then a 500.
        for (task, status) in [
            (0, 422),
            (1, 422),
            (2, 400),
            (3, 429),
            (4, 408),
            (5, 422),
            (5, 500),
        ] {
            h.add_failure(&fail(task, status));
        }
        let mut plan = h.plan(5);
        for task in 0..6 {
            let key = RolloutKey::of(&row(&format!(
                r#"{{"_ng_task_index":{task},"_ng_rollout_index":0}}"#
            )))
            .unwrap();
            assert!(plan.count(&key).is_some(), "task {task} is retried");
        }
        assert_eq!((plan.counts.to_run, plan.counts.refused), (6, 3));
        assert_eq!(
            plan.counts.unfinished_report("f").unwrap(),
            "6 of 6 rollouts did not succeed (6 with failures recorded in 'f'); `--resume` would retry 3 of them (3 are terminal or out of attempts; 3 of those the agent refused with an HTTP client error, which will likely fail again, though --resume still retries them)."
        );
    }

    #[test]
    fn plan_follows_upstream() {
        let mut h = History::default();
        h.add_main(
            &row(r#"{"_ng_task_index":0,"_ng_rollout_index":0}"#),
            "o",
            1,
        )
        .unwrap();
        h.add_failure(&row(
            r#"{"_ng_task_index":1,"_ng_rollout_index":0,"_ng_failure_class":"transient"}"#,
        ));
        h.add_failure(&row(r#"{"_ng_task_index":2,"_ng_rollout_index":0,"_ng_failure_class":"timeout_exceeded","_ng_failure_terminal":true}"#));
        for _ in 0..2 {
            h.add_failure(&row(
                r#"{"_ng_task_index":3,"_ng_rollout_index":0,"_ng_failure_class":"transient"}"#,
            ));
        }
        h.add_failure(&row(r#"{"_ng_failure_class":"x"}"#));
        let mut plan = h.plan(2);
        let got: Vec<Option<u32>> = (0..5)
            .map(|t| {
                plan.count(
                    &RolloutKey::of(&row(&format!(
                        r#"{{"_ng_task_index":{t},"_ng_rollout_index":0}}"#
                    )))
                    .unwrap(),
                )
            })
            .collect();
        assert_eq!(got, [None, Some(1), None, None, Some(0)]);
        plan.check_done_rows_known("o", "m").unwrap();
        let c = &plan.counts;
        assert_eq!(
            (
                c.input_rows,
                c.done_rows,
                c.attempt_rows,
                c.attempt_keys,
                c.terminal,
                c.maxed_out,
                c.to_run
            ),
            (5, 1, 4, 3, 1, 1, 2)
        );
        assert_eq!((c.unfinished, c.unfinished_in_sidecar), (4, 3));
        assert_eq!(
            c.unfinished_report("f").unwrap(),
            "4 of 5 rollouts did not succeed (3 with failures recorded in 'f'); `--resume` would retry 2 of them (2 are terminal or out of attempts)."
        );
        assert!(c.report().contains(
            "- 1 hit max_attempts=2 \u{2192} not retried\n- 2 rows that still need to be run"
        ));
    }

    #[test]
    fn unknown_done_key_is_an_error() {
        let mut h = History::default();
        h.add_main(
            &row(r#"{"_ng_task_index":9,"_ng_rollout_index":0}"#),
            "o",
            1,
        )
        .unwrap();
        let plan = h.plan(3);
        assert!(plan
            .check_done_rows_known("o", "m")
            .unwrap_err()
            .to_string()
            .contains("(9, 0)"));
        assert!(h_missing().is_err());
    }

    fn h_missing() -> Result<(), CollectError> {
        History::default().add_main(&row(r#"{"a":1}"#), "o", 4)
    }

    #[test]
    fn max_attempts_env() {
        assert_eq!(max_attempts(None).0, 3);
        assert_eq!(max_attempts(Some("5")).0, 5);
        assert!(max_attempts(Some("0")).1.is_some());
        assert_eq!(max_attempts(Some("x")).0, 3);
    }

    #[test]
    fn retry_terminal_timeouts_retries_timeouts_and_never_skips() {
        let timeout =
            row(r#"{"_ng_failure_class":"timeout_exceeded","_ng_failure_terminal":true}"#);
        let skipped = row(r#"{"_ng_failure_class":"skipped"}"#);
        let other = row(r#"{"_ng_failure_class":"x","_ng_failure_terminal":1}"#);
        assert!(is_terminal(&timeout, false) && !is_terminal(&timeout, true));
        assert!(!is_terminal(&skipped, false) && is_terminal(&skipped, true));
        assert!(is_terminal(&other, true));
    }

    #[test]
    fn retries_carry_the_reuse_hint_and_known_durations() {
        let mut h = History::default();
        h.add_failure(&row(r#"{"_ng_task_index":0,"_ng_rollout_index":0,"_ng_failure_class":"judge_failed","reuse_cached_deliverable":true,"elapsed_seconds":"12.5"}"#));
        h.add_failure(&row(r#"{"_ng_task_index":0,"_ng_rollout_index":0,"_ng_failure_class":"x","response":{"metadata":{"elapsed_seconds":40}}}"#));
        h.add_failure(&row(r#"{"_ng_task_index":1,"_ng_rollout_index":0,"_ng_failure_class":"x","elapsed_seconds":0}"#));
        let plan = h.plan(3);
        let k = |t: i64| {
            RolloutKey::of(&row(&format!(
                r#"{{"_ng_task_index":{t},"_ng_rollout_index":0}}"#
            )))
            .unwrap()
        };
        assert!(plan.reuse(&k(0)) && !plan.reuse(&k(1)));
        assert_eq!(
            (plan.elapsed(&k(0)), plan.elapsed(&k(1))),
            (Some(40.0), None)
        );
    }
}
