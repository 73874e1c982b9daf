//! The report's sections for the rollouts a query matched (docs/report.md "Made with a
//! query"): key figures, reward histogram, agent metrics, reward per repeat and health, each
//! computed over the matches alone. The page opens on them and shows the run's again when the
//! filter box no longer holds the query.
//!
//! The agent and repeat tables are the run's tables' statistics over a part of the run
//! (pandas' mean, median and sample std per column, a t interval per repeat); the health is
//! `gymscope health`'s judgement of the matching rows, read back by their spans.

use super::Points;
use crate::health::{HealthBuilder, HealthError, HealthReport};
use crate::json::Num;
use crate::profile::Profile;
use crate::render::LineSource;
use crate::stats::{Scratch, Spread};
use crate::table::key_figures::KeyFigure;
use crate::table::{Cell, Row, Table};

/// Everything the report shows of a query's matches.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct QueryParts {
    /// The matches' key figures (the page's first cards).
    pub figures: Vec<KeyFigure>,
    /// The matches' points (their histogram, their binned means).
    pub points: Points,
    /// Per agent, the statistics of the matches (`None` when the run has no agent table).
    pub agents: Option<Table>,
    /// Per agent and repeat, the matches' mean reward (`None` when the run has no such table).
    pub repeats: Option<Table>,
    /// The matches' health, when the caller read their rows ([`health_of_matches`]).
    pub health: Option<Box<HealthReport>>,
}

/// The agent a point belongs to, by name; matches of no known agent are one row of their own.
const NO_AGENT: &str = "(no agent)";

/// Groups of matched points by agent, in the agent table's order, then those of no agent.
fn by_agent(m: &Points, names: &[String]) -> Vec<(String, Vec<usize>)> {
    let mut groups: Vec<Vec<usize>> = vec![Vec::new(); names.len() + 1];
    for i in 0..m.len() {
        let a = m
            .agent
            .get(i)
            .copied()
            .flatten()
            .filter(|&a| a < names.len());
        groups[a.unwrap_or(names.len())].push(i);
    }
    groups
        .into_iter()
        .enumerate()
        .filter(|(_, g)| !g.is_empty())
        .map(|(a, g)| (names.get(a).map_or(NO_AGENT, String::as_str).to_string(), g))
        .collect()
}

/// The agent table of the matches: their rollouts and tasks, then `mean/max/min/median/std`
/// of the reward and every other numeric field, as the run's agent table orders them.
pub fn agent_table(m: &Points, names: &[String]) -> Table {
    let columns: Vec<(&str, Vec<f64>)> = std::iter::once(("reward", m.reward_values()))
        .chain((0..m.fields.len()).map(|f| (m.fields[f].as_str(), m.field_values(f))))
        .collect();
    let mut headers = vec!["rollouts".to_string(), "tasks".to_string()];
    headers.extend(
        columns
            .iter()
            .flat_map(|(c, _)| ["mean", "max", "min", "median", "std"].map(|s| format!("{s}/{c}"))),
    );
    let mut scratch = Scratch::default();
    let rows = by_agent(m, names)
        .into_iter()
        .map(|(name, points)| {
            let mut tasks: Vec<i64> = points.iter().map(|&i| m.task[i]).collect();
            tasks.sort_unstable();
            tasks.dedup();
            let mut cells = vec![Cell::count(points.len()), Cell::count(tasks.len())];
            for (_, values) in &columns {
                let group: Vec<f64> = points.iter().map(|&i| values[i]).collect();
                let s = scratch.column_stats(&group);
                let present = group.iter().copied().filter(|v| !v.is_nan());
                let (min, max) = present.fold((None, None), |(lo, hi): (Option<f64>, _), v| {
                    (
                        Some(lo.map_or(v, |lo| lo.min(v))),
                        Some(hi.map_or(v, |hi: f64| hi.max(v))),
                    )
                });
                let float = |v: Option<f64>| Cell::num(v.map(Num::Float));
                cells.extend([
                    float(s.mean),
                    float(max),
                    float(min),
                    float(s.median),
                    float(s.std),
                ]);
            }
            Row { key: name, cells }
        })
        .collect();
    Table { headers, rows }
}

/// The matches' mean reward per agent and repeat (`_ng_rollout_index`), with its 95 % t
/// interval over the repeat's matched tasks: the run's repeat table over a part of the run.
pub fn repeat_table(m: &Points, names: &[String]) -> Table {
    let headers = [
        "repeat",
        "rollouts",
        "mean reward",
        "95% CI low",
        "95% CI high",
    ]
    .map(String::from)
    .to_vec();
    let mut rows = Vec::new();
    for (name, mut points) in by_agent(m, names) {
        points.sort_by_key(|&i| (m.rollout[i], m.task[i]));
        for repeat in points.chunk_by(|&a, &b| m.rollout[a] == m.rollout[b]) {
            let mut rewards: Vec<f64> = repeat.iter().filter_map(|&i| m.reward[i]).collect();
            let spread = Spread::of(&mut rewards);
            let (low, high) = spread.and_then(|s| s.ci).unzip();
            let float = |v: Option<f64>| Cell::num(v.filter(|v| v.is_finite()).map(Num::Float));
            rows.push(Row {
                key: name.clone(),
                cells: vec![
                    Cell::num(Some(Num::Int(m.rollout[repeat[0]]))),
                    Cell::count(repeat.len()),
                    float(spread.map(|s| s.mean)),
                    float(low),
                    float(high),
                ],
            });
        }
    }
    Table { headers, rows }
}

/// The health of a query's matches: their rows (measured and masked) read back by span, in
/// file order, and judged by `builder` as `gymscope health` judges a whole run. Only the
/// rollouts file is read, so nothing counts as missing.
pub fn health_of_matches(
    p: &Profile,
    keys: &[(i64, i64)],
    rollouts: &mut dyn LineSource,
    mut builder: HealthBuilder,
) -> Result<HealthReport, HealthError> {
    let mut spans: Vec<_> = p
        .rollouts
        .iter()
        .chain(&p.masked)
        .filter(|r| keys.binary_search(&(r.key.task, r.key.rollout)).is_ok())
        .map(|r| r.span)
        .collect();
    spans.sort_unstable_by_key(|s| s.line);
    for span in spans {
        let line = rollouts.read_span(span).map_err(|e| HealthError {
            file: builder.rollouts_name().to_string(),
            line: span.line,
            message: e.to_string(),
            too_long: false,
        })?;
        builder.rollout_line(span.line, &line)?;
    }
    builder.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn points() -> Points {
        Points {
            task: vec![0, 0, 1, 1, 2],
            rollout: vec![0, 1, 0, 1, 0],
            reward: vec![Some(1.0), Some(0.0), Some(0.5), None, Some(1.0)],
            fields: vec!["tokens".into()],
            values: vec![vec![Some(10.0), Some(20.0), None, Some(40.0), Some(50.0)]],
            agent: vec![Some(1), Some(1), Some(0), Some(0), None],
        }
    }

    #[test]
    fn the_agent_table_has_each_agents_statistics_and_the_matches_of_none_last() {
        let names = vec!["a".to_string(), "b".to_string()];
        let t = agent_table(&points(), &names);
        assert_eq!(
            t.headers[..4],
            ["rollouts", "tasks", "mean/reward", "max/reward"]
        );
        let keys: Vec<&str> = t.rows.iter().map(|r| r.key.as_str()).collect();
        assert_eq!(keys, ["a", "b", NO_AGENT]);
        let text = |r: usize, h: &str| {
            let c = t.headers.iter().position(|x| x == h).unwrap();
            t.rows[r].cells[c].text()
        };
        // Agent a: task 1's two rollouts, one reward missing, one token count missing.
        assert_eq!(text(0, "rollouts"), "2");
        assert_eq!(text(0, "tasks"), "1");
        assert_eq!(text(0, "mean/reward"), "0.5");
        assert_eq!(text(0, "std/reward"), "–");
        assert_eq!(text(0, "mean/tokens"), "40");
        // Agent b: rewards 1 and 0 over one task.
        assert_eq!(text(1, "mean/reward"), "0.5");
        assert_eq!(text(1, "min/reward"), "0");
        assert_eq!(text(1, "median/tokens"), "15");
        assert_eq!(text(1, "std/tokens"), "7.0711");
    }

    #[test]
    fn the_repeat_table_is_per_agent_and_repeat() {
        let names = vec!["a".to_string(), "b".to_string()];
        let t = repeat_table(&points(), &names);
        let rows: Vec<(String, String, String, String)> = t
            .rows
            .iter()
            .map(|r| {
                (
                    r.key.clone(),
                    r.cells[0].text(),
                    r.cells[1].text(),
                    r.cells[2].text(),
                )
            })
            .collect();
        let row = |a: &str, rep: &str, n: &str, mean: &str| {
            (
                a.to_string(),
                rep.to_string(),
                n.to_string(),
                mean.to_string(),
            )
        };
        assert_eq!(
            rows,
            [
                row("a", "0", "1", "0.5"),
                row("a", "1", "1", "–"),
                row("b", "0", "1", "1"),
                row("b", "1", "1", "0"),
                row(NO_AGENT, "0", "1", "1"),
            ]
        );
    }
}
