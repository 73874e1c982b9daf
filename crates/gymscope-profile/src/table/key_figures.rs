//! The run's key figures, first in the report and on the app's Profile page: tasks, rollouts, agents,
//! the mean reward (with its 95 % interval across repeats, NeMo Gym v0.7.0's repeat-level
//! metrics), pass@1 and pass@k at the pass threshold, and tokens. Values read as people read
//! them (`figures`); each card keeps its exact value for the tooltip.

use crate::figures::{count, percent, reward, tokens};
use crate::reward_group::{Outcomes, DEFAULT_THRESHOLD};
use crate::table::RewardAcross;
use serde::{Deserialize, Serialize};

/// The run's totals: the cards' counts and means (the page and the report).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Totals {
    pub tasks: usize,
    pub rollouts: usize,
    pub expected_rollouts: usize,
    pub agents: usize,
    pub mean_reward: Option<f64>,
    pub mean_output_tokens: Option<f64>,
    pub mean_total_tokens: Option<f64>,
}

impl Totals {
    /// The run in one line, as the inspector heads it.
    pub fn line(&self) -> String {
        use crate::figures::{count, reward, tokens};
        format!(
            "{} {} · {} of {} rollouts · {} · mean reward {} · mean output tokens {} · mean total tokens {}",
            count(self.tasks),
            if self.tasks == 1 { "task" } else { "tasks" },
            count(self.rollouts),
            count(self.expected_rollouts),
            crate::table::plural(self.agents, "agent"),
            reward(self.mean_reward),
            tokens(self.mean_output_tokens),
            tokens(self.mean_total_tokens)
        )
    }
}

/// A task's rollouts: points `first .. first + n`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TaskSpan {
    pub first: usize,
    pub n: usize,
}

/// One card: what it counts, its value, a line of context, and the value in full.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct KeyFigure {
    /// A stable name for tests and styles (`tasks`, `mean-reward`, `pass-at-1`, …).
    pub key: String,
    pub label: String,
    pub value: String,
    pub detail: String,
    pub exact: String,
}

fn card(key: &str, label: &str, value: String, detail: String, exact: String) -> KeyFigure {
    KeyFigure {
        key: key.into(),
        label: label.into(),
        value,
        detail,
        exact,
    }
}

/// The cards of a run: `reward_of(point)` is a rollout's numeric reward, `tasks` its tasks in
/// order (each naming its points), `across` each agent's reward across repeats (none when the
/// run was read back from its profile files).
pub fn key_figures(
    totals: &Totals,
    tasks: &[TaskSpan],
    reward_of: impl Fn(usize) -> Option<f64>,
    across: &[RewardAcross],
) -> Vec<KeyFigure> {
    let mut cards = vec![
        card(
            "tasks",
            "tasks",
            count(totals.tasks),
            String::new(),
            totals.tasks.to_string(),
        ),
        card(
            "rollouts",
            "rollouts",
            count(totals.rollouts),
            rollouts_detail(totals, tasks),
            totals.rollouts.to_string(),
        ),
        card(
            "agents",
            if totals.agents == 1 {
                "agent"
            } else {
                "agents"
            },
            count(totals.agents),
            String::new(),
            totals.agents.to_string(),
        ),
        card(
            "mean-reward",
            "mean reward",
            reward(totals.mean_reward),
            if totals.mean_reward.is_none() {
                "no rollout has a reward".into()
            } else {
                reward_detail(across)
            },
            totals.mean_reward.map_or("–".into(), |v| v.to_string()),
        ),
    ];
    // pass@1: each task's share of passing rollouts, averaged over graded tasks; pass@k: the
    // share of graded tasks with a passing rollout (k = the task's rollouts).
    let (mut graded, mut pass1, mut passk) = (0usize, 0.0, 0usize);
    for t in tasks {
        let mut outcomes = Outcomes::default();
        for p in t.first..t.first + t.n {
            outcomes.add(reward_of(p), DEFAULT_THRESHOLD);
        }
        if let Some(rate) = outcomes.pass_rate() {
            graded += 1;
            pass1 += rate;
            passk += usize::from(outcomes.successes > 0);
        }
    }
    if graded > 0 {
        let (p1, pk) = (pass1 / graded as f64, passk as f64 / graded as f64);
        let k = uniform_rollouts(tasks).map_or("k".to_string(), |k| k.to_string());
        let threshold = format!("a pass is reward ≥ {}", reward(Some(DEFAULT_THRESHOLD)));
        cards.push(card(
            "pass-at-1",
            "pass@1",
            percent(Some(p1)),
            threshold.clone(),
            p1.to_string(),
        ));
        cards.push(card(
            "pass-at-k",
            &format!("pass@{k}"),
            percent(Some(pk)),
            format!("{} of {} tasks pass once", count(passk), count(graded)),
            pk.to_string(),
        ));
    }
    if totals.mean_output_tokens.is_some() || totals.mean_total_tokens.is_some() {
        cards.push(card(
            "output-tokens",
            "mean output tokens",
            tokens(totals.mean_output_tokens),
            totals
                .mean_total_tokens
                .map_or(String::new(), |t| format!("{} in total", tokens(Some(t)))),
            totals
                .mean_output_tokens
                .map_or("–".into(), |v| v.to_string()),
        ));
    }
    cards
}

/// One agent in a line, beside the plot: its rollouts, mean reward with the interval across
/// repeats, pass@1 and mean output tokens, as people read them.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AgentLine {
    pub agent: String,
    pub rollouts: String,
    pub mean_reward: String,
    /// `0.41 – 0.52` (95 % across repeats), empty without repeats.
    pub interval: String,
    /// Why the interval stops where it does: a t interval over few repeats can reach past the
    /// range the rewards are bounded to (`0.47 – 1.03` for rewards in [0, 1]); it is clipped to
    /// that range and this says so. Empty when nothing was clipped.
    #[serde(default)]
    pub interval_note: String,
    pub pass_at_1: String,
    pub output_tokens: String,
}

/// What a point holds for the agent lines.
pub struct PointFacts {
    /// The agent's index in `names`.
    pub agent: Option<usize>,
    pub reward: Option<f64>,
    pub output_tokens: Option<f64>,
}

/// Every agent's [`AgentLine`], in `names` order; `point(p)` reads point `p`.
pub fn agent_lines(
    names: &[String],
    tasks: &[TaskSpan],
    point: impl Fn(usize) -> PointFacts,
    across: &[RewardAcross],
) -> Vec<AgentLine> {
    #[derive(Default, Clone)]
    struct Acc {
        rollouts: usize,
        rewards: (f64, usize),
        tokens: (f64, usize),
        pass1: (f64, usize),
        /// The lowest and highest reward seen.
        range: Option<(f64, f64)>,
    }
    let mut acc = vec![Acc::default(); names.len()];
    let mut outcomes = vec![Outcomes::default(); names.len()];
    for t in tasks {
        outcomes.fill(Outcomes::default());
        for p in t.first..t.first + t.n {
            let f = point(p);
            let Some(a) = f.agent.filter(|a| *a < names.len()) else {
                continue;
            };
            acc[a].rollouts += 1;
            if let Some(r) = f.reward {
                acc[a].rewards.0 += r;
                acc[a].rewards.1 += 1;
                let (lo, hi) = acc[a].range.unwrap_or((r, r));
                acc[a].range = Some((lo.min(r), hi.max(r)));
            }
            if let Some(o) = f.output_tokens {
                acc[a].tokens.0 += o;
                acc[a].tokens.1 += 1;
            }
            outcomes[a].add(f.reward, DEFAULT_THRESHOLD);
        }
        for (a, o) in outcomes.iter().enumerate() {
            if let Some(rate) = o.pass_rate() {
                acc[a].pass1.0 += rate;
                acc[a].pass1.1 += 1;
            }
        }
    }
    let mean = |(sum, n): (f64, usize)| (n > 0).then(|| sum / n as f64);
    names
        .iter()
        .zip(acc)
        .map(|(name, a)| {
            let repeats = across.iter().find(|x| x.agent == *name);
            let (interval, interval_note) = repeats
                .and_then(|x| Some((x.ci?, x.repeats)))
                .map_or((String::new(), String::new()), |(ci, n)| {
                    clipped_interval(ci, a.range, n)
                });
            AgentLine {
                agent: name.clone(),
                rollouts: count(a.rollouts),
                mean_reward: reward(repeats.map(|x| x.mean).or(mean(a.rewards))),
                interval,
                interval_note,
                pass_at_1: mean(a.pass1).map_or("–".into(), |v| percent(Some(v))),
                output_tokens: tokens(mean(a.tokens)),
            }
        })
        .collect()
}

/// The interval as people read it, clipped to [0, 1] when every reward lies in [0, 1] (a t
/// interval over a few repeats is symmetric and can pass the bound), with a note when clipped.
fn clipped_interval(
    (low, high): (f64, f64),
    range: Option<(f64, f64)>,
    repeats: usize,
) -> (String, String) {
    let bounded = range.is_some_and(|(lo, hi)| lo >= 0.0 && hi <= 1.0);
    let (l, h) = if bounded {
        (low.max(0.0), high.min(1.0))
    } else {
        (low, high)
    };
    let text = format!("{} – {}", reward(Some(l)), reward(Some(h)));
    if (l, h) == (low, high) {
        return (text, String::new());
    }
    let note = format!(
        "clipped to [0, 1]: the 95 % t interval over {repeats} repeats is {} – {}, past the range the rewards lie in",
        reward(Some(low)),
        reward(Some(high))
    );
    (text, note)
}

/// Every task's rollout count when they are all the same.
fn uniform_rollouts(tasks: &[TaskSpan]) -> Option<usize> {
    let first = tasks.first()?.n;
    tasks.iter().all(|t| t.n == first).then_some(first)
}

fn rollouts_detail(totals: &Totals, tasks: &[TaskSpan]) -> String {
    if totals.rollouts < totals.expected_rollouts {
        format!("of {} expected", count(totals.expected_rollouts))
    } else {
        uniform_rollouts(tasks).map_or(String::new(), |k| format!("{k} per task"))
    }
}

/// The interval across repeats for one agent; the agents' spread for several.
fn reward_detail(across: &[RewardAcross]) -> String {
    match across {
        [] => String::new(),
        [one] => match one.ci {
            Some((low, high)) => format!(
                "95 % CI {} – {} over {} repeats",
                reward(Some(low)),
                reward(Some(high)),
                one.repeats
            ),
            None => format!("over {} repeats", one.repeats),
        },
        many => {
            let (low, high) = many
                .iter()
                .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), a| {
                    (l.min(a.mean), h.max(a.mean))
                });
            format!(
                "agents from {} to {}",
                reward(Some(low)),
                reward(Some(high))
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn task(first: usize, n: usize) -> TaskSpan {
        TaskSpan { first, n }
    }

    #[test]
    fn cards_read_for_people() {
        let totals = Totals {
            tasks: 2,
            rollouts: 4,
            expected_rollouts: 4,
            agents: 1,
            mean_reward: Some(0.5),
            mean_output_tokens: Some(2157.7708),
            mean_total_tokens: Some(12_345.4),
        };
        let rewards = [1.0, 0.0, 0.0, 0.0];
        let across = [RewardAcross {
            agent: "a".into(),
            mean: 0.25,
            ci: Some((0.1, 0.4)),
            repeats: 2,
        }];
        let cards = key_figures(
            &totals,
            &[task(0, 2), task(2, 2)],
            |p| Some(rewards[p]),
            &across,
        );
        let get = |k: &str| cards.iter().find(|c| c.key == k).unwrap();
        assert_eq!(get("rollouts").detail, "2 per task");
        assert_eq!(get("agents").label, "agent");
        assert_eq!(
            get("mean-reward").detail,
            "95 % CI 0.1 – 0.4 over 2 repeats"
        );
        assert_eq!(get("pass-at-1").value, "25.0 %");
        assert_eq!(get("pass-at-1").detail, "a pass is reward ≥ 1");
        assert_eq!(get("pass-at-k").label, "pass@2");
        assert_eq!(get("pass-at-k").value, "50.0 %");
        assert_eq!(get("output-tokens").value, "2,158");
        assert_eq!(get("output-tokens").detail, "12,345 in total");
        assert_eq!(get("output-tokens").exact, "2157.7708");
    }

    #[test]
    fn agents_in_a_line_each() {
        let names = ["a".to_string(), "b".to_string()];
        // Task 0: a passes once of two; b fails. Task 1: a passes.
        let facts = [
            (0, 1.0, 100.0),
            (0, 0.0, 300.0),
            (1, 0.0, 50.0),
            (0, 1.0, 200.0),
        ];
        let point = |p: usize| PointFacts {
            agent: Some(facts[p].0),
            reward: Some(facts[p].1),
            output_tokens: Some(facts[p].2),
        };
        let across = [RewardAcross {
            agent: "a".into(),
            mean: 0.6667,
            ci: Some((0.2, 1.0)),
            repeats: 2,
        }];
        let lines = agent_lines(&names, &[task(0, 3), task(3, 1)], point, &across);
        assert_eq!(lines[0].rollouts, "3");
        assert_eq!(lines[0].mean_reward, "0.6667");
        assert_eq!(lines[0].interval, "0.2 – 1");
        assert_eq!(lines[0].pass_at_1, "75.0 %");
        assert_eq!(lines[0].output_tokens, "200");
        assert_eq!(lines[1].mean_reward, "0");
        assert_eq!(lines[1].interval, "");
        assert_eq!(lines[1].pass_at_1, "0.0 %");
        // A t interval past 1 for rewards in [0, 1] is clipped, and says so.
        let wide = [RewardAcross {
            ci: Some((0.4744, 1.0256)),
            ..across[0].clone()
        }];
        let lines = agent_lines(&names, &[task(0, 3), task(3, 1)], point, &wide);
        assert_eq!(lines[0].interval, "0.4744 – 1");
        assert!(
            lines[0].interval_note.contains("0.4744 – 1.026"),
            "{lines:?}"
        );
        assert_eq!(lines[1].interval_note, "");
    }

    #[test]
    fn a_run_without_rewards_has_no_pass_cards() {
        let totals = Totals {
            tasks: 1,
            rollouts: 1,
            expected_rollouts: 3,
            agents: 0,
            mean_reward: None,
            mean_output_tokens: None,
            mean_total_tokens: None,
        };
        let cards = key_figures(&totals, &[task(0, 1)], |_| None, &[]);
        let keys: Vec<&str> = cards.iter().map(|c| c.key.as_str()).collect();
        assert_eq!(keys, ["tasks", "rollouts", "agents", "mean-reward"]);
        assert_eq!(cards[1].detail, "of 3 expected");
        assert_eq!(cards[3].value, "–");
    }
}
