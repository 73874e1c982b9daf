//! The progress display: an indicatif bar on a terminal (done/total, rate, ETA, failures and the
//! running mean of each numeric field per agent), one status line per 10 % elsewhere (logs).

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::collections::BTreeMap;
use std::io::IsTerminal;
use std::time::{Duration, Instant};

/// Prints lines without tearing the bar; cheap to clone into tasks.
#[derive(Clone)]
pub struct Printer(ProgressBar);

impl Printer {
    pub fn line(&self, s: &str) {
        self.0.suspend(|| eprintln!("{s}"));
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
        let tty = enabled && std::io::stderr().is_terminal();
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
                "Collecting rollouts {bar:25} {pos}/{len} {per_sec} ETA {eta} {msg}",
            )
            .expect("valid template"),
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
        if self.lines && self.total > 0 {
            while self.done * 100 >= self.next_line_pct * self.total && self.next_line_pct <= 100 {
                let secs = self.start.elapsed().as_secs_f64().max(1e-9);
                eprintln!(
                    "Finished {} / {} rollouts ({}%) in {:.0} s ({:.1} rollouts/s). {}",
                    self.done,
                    self.total,
                    self.next_line_pct,
                    secs,
                    self.done as f64 / secs,
                    self.status(usize::MAX)
                );
                self.next_line_pct += 10;
            }
        }
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

    pub fn finish(&self) {
        self.bar.set_message(self.status(4));
        self.bar.finish();
    }
}
