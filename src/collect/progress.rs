//! The progress display: an indicatif bar on a terminal (done/total, rate, ETA, failures and the
//! running mean of each numeric field per agent), one status line per 10 % elsewhere (logs).

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressState, ProgressStyle};
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// Prints lines without tearing the bar; cheap to clone into tasks.
#[derive(Clone)]
pub struct Printer(ProgressBar);

impl Printer {
    pub fn line(&self, s: &str) {
        self.0.suspend(|| crate::note!("{s}"));
    }
    /// A line of upstream's on stdout, the progress bar held meanwhile.
    pub fn out_line(&self, s: &str) {
        self.0.suspend(|| crate::say!("{s}"));
    }
}

#[derive(Default)]
struct AgentMeans {
    count: u64,
    sums: Vec<(String, f64)>,
}

pub struct Progress {
    bar: ProgressBar,
    tty: bool,
    lines: bool,
    total: u64,
    done: u64,
    failures: u64,
    next_line_pct: u64,
    last_msg: Instant,
    start: Instant,
    agents: BTreeMap<String, AgentMeans>,
}

impl Progress {
    pub fn new(total: u64, enabled: bool) -> Progress {
        let tty = enabled && crate::native::out::stderr_is_terminal();
        let bar = ProgressBar::with_draw_target(
            Some(total),
            if tty {
                ProgressDrawTarget::stderr_with_hz(4)
            } else {
                ProgressDrawTarget::hidden()
            },
        );
        bar.set_style(
            ProgressStyle::with_template(
                "Collecting rollouts {bar:25} {pos}/{len} {rate} ETA {eta} {msg}",
            )
            .expect("valid template")
            // indicatif's {per_sec} shows four decimals; one is plenty for rollouts/s.
            .with_key(
                "rate",
                |state: &ProgressState, w: &mut dyn std::fmt::Write| {
                    let _ = write!(w, "{:.1}/s", state.per_sec());
                },
            ),
        );
        if tty {
            bar.enable_steady_tick(Duration::from_millis(250));
        }
        Progress {
            bar,
            tty,
            lines: enabled && !tty,
            total,
            done: 0,
            failures: 0,
            next_line_pct: 10,
            last_msg: Instant::now(),
            start: Instant::now(),
            agents: BTreeMap::new(),
        }
    }

    pub fn printer(&self) -> Printer {
        Printer(self.bar.clone())
    }

    /// One completed rollout (any destination), with the numbers upstream averages.
    pub fn record(&mut self, agent: &str, numbers: &[(String, f64)], failed: bool) {
        self.done += 1;
        self.failures += u64::from(failed);
        if failed {
            // Not in the main file, so not in the metrics: the running means leave it out too.
            return;
        }
        let means = self.agents.entry(agent.to_string()).or_default();
        means.count += 1;
        for (name, x) in numbers {
            match means.sums.iter_mut().find(|(n, _)| n == name) {
                Some((_, s)) => *s += x,
                None => means.sums.push((name.clone(), *x)),
            }
        }
    }

    /// Redraws after a batch of records; the message is rebuilt at most 4 times a second.
    pub fn tick(&mut self) {
        self.bar.set_position(self.done);
        if self.tty && self.last_msg.elapsed() >= Duration::from_millis(250) {
            self.last_msg = Instant::now();
            self.bar.set_message(self.status(4));
        }
        if let Some(line) = self.line_due() {
            crate::note!("{line}");
        }
    }

    /// The status line due after this batch, if a 10 % step was passed: one line however many
    /// steps were, with the real percentage (with few rollouts one finishes several steps).
    fn line_due(&mut self) -> Option<String> {
        if !self.lines || self.total == 0 || self.next_line_pct > 100 {
            return None;
        }
        let pct = self.done * 100 / self.total;
        if pct < self.next_line_pct {
            return None;
        }
        self.next_line_pct = (pct / 10 + 1) * 10;
        let secs = self.start.elapsed().as_secs_f64().max(1e-9);
        Some(format!(
            "Finished {} / {} rollouts ({pct}%) in {:.0} s ({:.1} rollouts/s). {}",
            self.done,
            self.total,
            secs,
            self.done as f64 / secs,
            self.status(usize::MAX)
        ))
    }

    /// `failures N | agent: reward 0.93, …` with at most `fields` fields per agent.
    pub fn status(&self, fields: usize) -> String {
        let mut s = format!("failures {}", self.failures);
        for (agent, m) in &self.agents {
            s.push_str(&format!(" | {agent}:"));
            for (name, sum) in m.sums.iter().take(fields) {
                s.push_str(&format!(" {name} {:.4}", sum / m.count as f64));
            }
        }
        s
    }

    /// Clears the bar, so the summary that follows starts on its own line (it repeats the
    /// counts and running means).
    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn few_rollouts_print_real_percentages_once_and_failures_stay_out_of_the_means() {
        let mut p = Progress::new(3, true);
        p.lines = true; // as when stderr is not a terminal
        p.tty = false;
        let mut printed = Vec::new();
        for (i, failed) in [false, true, false].into_iter().enumerate() {
            let reward = if failed { 0.0 } else { 1.0 };
            p.record("a", &[("reward".into(), reward)], failed);
            if let Some(line) = p.line_due() {
                printed.push(line);
            }
            assert!(p.line_due().is_none(), "after rollout {i}: printed once");
        }
        let pcts: Vec<&str> = printed
            .iter()
            .map(|l| l.split(['(', ')']).nth(1).unwrap())
            .collect();
        assert_eq!(pcts, ["33%", "66%", "100%"]);
        assert!(
            printed[2].ends_with("failures 1 | a: reward 1.0000"),
            "{}",
            printed[2]
        );
    }
}
