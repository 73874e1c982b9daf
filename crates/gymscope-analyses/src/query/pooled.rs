//! A query's three reads ([`QueryRun`]: the inputs for agents, a first read of the rollouts for
//! task aggregates when the expression needs them, the matching read) in the app's pool of
//! workers, through `read::in_order`: a pool worker turns each batch of its range into what the
//! read finds ([`RangeReader`]), and [`Recorded`] takes those in file order into the run, so the
//! matches and the first error (file and line) are those of one reader (tested below).

use super::run::{input_agent, task_reward};
use super::{Query, QueryRun, RunFacts};
use crate::read::batch::LineBatch;
use crate::read::in_order;
use crate::read::job::Job;
use crate::read::jsonl::LineTooLong;
use crate::record::{KeyTable, RowKind};

/// Which of a query's reads a range is read for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum QueryRead {
    /// The materialized inputs: each rollout's agent.
    Agents,
    /// The rollouts' first read: each task's rewards.
    Tasks,
    /// The rollouts' matching read.
    Matches,
}

/// What a batch's lines held for the read, in line order.
#[derive(Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum Found {
    Agents(Vec<super::run::InputRun>),
    Rewards(Vec<(i64, Option<f64>)>),
    Matches(Vec<(i64, i64)>),
}

/// A batch read for a query: what its lines held up to the first that failed (its line number
/// in the range, and why).
#[derive(Debug, serde::Serialize, serde::Deserialize)]
pub struct QueryLines {
    pub found: Found,
    pub error: Option<(u64, String)>,
}

/// What a query's range reader sends.
pub type QueryPart = in_order::Part<QueryLines>;

/// `'FILE' line N: why`, the query's error for a line (the one-worker read's too).
pub fn line_error(file: &str, line: u64, why: &str) -> String {
    format!("'{file}' line {line}: {why}")
}

/// `'FILE' line N: is longer than L bytes`.
pub fn too_long_error(file: &str, t: LineTooLong) -> String {
    line_error(file, t.line, &format!("is longer than {} bytes", t.limit))
}

impl RunFacts {
    /// The facts as the matching read's pool workers get them.
    pub fn to_bytes(&self) -> Vec<u8> {
        // Numbers, strings and maps of them: postcard writes them all.
        postcard::to_allocvec(self).unwrap_or_default()
    }

    pub fn from_bytes(bytes: &[u8]) -> Result<RunFacts, String> {
        postcard::from_bytes(bytes).map_err(|e| format!("a query's facts: {e}"))
    }
}

/// A pool worker's side of one read: the run as far as the read needs it (the matching read
/// needs the query and everything the earlier reads learned).
pub struct RangeReader {
    read: QueryRead,
    keys: KeyTable,
    /// The matching read's run (its query and facts).
    matching: Option<QueryRun>,
}

impl RangeReader {
    /// For the agents' or the tasks' read (the query does not matter to them).
    pub fn new(read: QueryRead) -> Self {
        RangeReader {
            read,
            keys: KeyTable::default(),
            matching: None,
        }
    }

    /// For the matching read: the query, and the facts the earlier reads recorded.
    pub fn matching(query: Query, facts: RunFacts) -> Self {
        let mut run = QueryRun::new(query, facts.pass_threshold, facts.single_step);
        run.facts = facts;
        RangeReader {
            read: QueryRead::Matches,
            keys: KeyTable::default(),
            matching: Some(run),
        }
    }

    /// Reads a batch's lines, up to the first that fails.
    pub fn lines(&mut self, batch: &LineBatch) -> QueryLines {
        let mut found = match (self.read, &self.matching) {
            (QueryRead::Agents, _) => Found::Agents(Vec::new()),
            (QueryRead::Tasks, _) => Found::Rewards(Vec::new()),
            (QueryRead::Matches, Some(_)) => Found::Matches(Vec::new()),
            (QueryRead::Matches, None) => {
                let why = "a matching read started without its query".to_string();
                return QueryLines {
                    found: Found::Matches(Vec::new()),
                    error: batch.lines().next().map(|(span, _)| (span.line, why)),
                };
            }
        };
        let mut error = None;
        for (span, line) in batch.lines() {
            let read = match &mut found {
                Found::Agents(v) => input_agent(line, &mut self.keys).map(|a| v.extend(a)),
                Found::Rewards(v) => task_reward(line, &mut self.keys).map(|t| v.extend(t)),
                Found::Matches(v) => match &mut self.matching {
                    Some(run) => run.line(line, &[]).map(|m| v.extend(m.map(|m| m.key))),
                    None => Ok(()),
                },
            };
            if let Err(why) = read {
                error = Some((span.line, why));
                break;
            }
        }
        QueryLines { found, error }
    }
}

/// The page's worker's side: the run recorded in file order, and the matches' keys.
pub struct Recorded {
    pub run: QueryRun,
    pub matches: Vec<(i64, i64)>,
    /// The file being read, as errors name it.
    pub file: String,
}

impl Job for Recorded {
    type Part = QueryLines;
    type Error = String;

    fn record(&mut self, lines: QueryLines, before: u64) -> Result<(), String> {
        match lines.found {
            Found::Agents(agents) => self.run.facts.input_runs.extend(agents),
            Found::Rewards(rewards) => {
                for (task, reward) in rewards {
                    self.run.facts.add_rollout(task, reward);
                }
            }
            Found::Matches(keys) => self.matches.extend(keys),
        }
        match lines.error {
            Some((line, why)) => Err(line_error(&self.file, line + before, &why)),
            None => Ok(()),
        }
    }

    fn too_long(&mut self, _: RowKind, t: LineTooLong) -> Result<(), String> {
        Err(too_long_error(&self.file, t))
    }

    fn read_failed(&mut self, _: RowKind, cause: String) -> String {
        format!("Could not read '{}': {cause}", self.file)
    }
}

/// The parts of a query's read, recorded in order.
pub type InOrder = in_order::InOrder<Recorded>;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::read::jsonl::{LineSplitter, SplitError};
    use crate::read::ranges::plan;

    const IN: &str = "run_materialized_inputs.jsonl";
    const OUT: &str = "rollouts.jsonl";

    /// The worker's one-reader query: each file split into lines and fed to the run.
    fn streamed(
        expr: &str,
        inputs: &[u8],
        rollouts: &[u8],
        max: u64,
    ) -> Result<Vec<(i64, i64)>, String> {
        fn each(
            file: &str,
            data: &[u8],
            max: u64,
            mut line: impl FnMut(&[u8]) -> Result<(), String>,
        ) -> Result<(), String> {
            let mut splitter = LineSplitter::with_max_line_bytes(max);
            splitter
                .push(data, |span, l| {
                    line(l).map_err(|e| line_error(file, span.line, &e))
                })
                .map_err(|e| match e {
                    SplitError::Line(e) => e,
                    SplitError::TooLong(t) => too_long_error(file, t),
                })?;
            splitter.finish(|span, l| line(l).map_err(|e| line_error(file, span.line, &e)))
        }
        let mut run = QueryRun::new(Query::parse(expr).unwrap(), 0.5, false);
        each(IN, inputs, max, |l| run.input_line(l))?;
        if run.needs_first_read() {
            each(OUT, rollouts, max, |l| run.first_read_line(l))?;
        }
        let mut keys = Vec::new();
        each(OUT, rollouts, max, |l| {
            keys.extend(run.line(l, &[])?.map(|m| m.key));
            Ok(())
        })?;
        Ok(keys)
    }

    /// One read in ranges of `piece` bytes, each range's parts sent as bytes and delivered last
    /// range first; the reader of each range is made by `reader`.
    fn read(
        recorded: Recorded,
        kind: RowKind,
        data: &[u8],
        max: u64,
        piece: u64,
        reader: impl Fn() -> RangeReader,
    ) -> Result<Recorded, String> {
        let mut order = InOrder::new(recorded, plan(kind, data.len() as u64, piece));
        let mut reader = reader();
        in_order::record_last_first(&mut order, (data, data), max, 61, |b| reader.lines(b))?;
        Ok(order.into_job())
    }

    /// The pool's query: the three reads as the page's worker drives them.
    fn in_ranges(
        expr: &str,
        inputs: &[u8],
        rollouts: &[u8],
        max: u64,
        piece: u64,
    ) -> Result<Vec<(i64, i64)>, String> {
        let run = QueryRun::new(Query::parse(expr).unwrap(), 0.5, false);
        let recorded = Recorded {
            run,
            matches: Vec::new(),
            file: IN.into(),
        };
        let mut recorded = read(recorded, RowKind::Input, inputs, max, piece, || {
            RangeReader::new(QueryRead::Agents)
        })?;
        recorded.run.facts.label_inputs();
        recorded.file = OUT.into();
        if recorded.run.needs_first_read() {
            recorded = read(recorded, RowKind::Rollout, rollouts, max, piece, || {
                RangeReader::new(QueryRead::Tasks)
            })?;
        }
        let (query, facts) = (recorded.run.query.clone(), recorded.run.facts.clone());
        // The facts cross to the workers as bytes, as the pool sends them.
        let facts: RunFacts =
            postcard::from_bytes(&postcard::to_allocvec(&facts).unwrap()).unwrap();
        let recorded = read(recorded, RowKind::Rollout, rollouts, max, piece, || {
            RangeReader::matching(query.clone(), facts.clone())
        })?;
        Ok(recorded.matches)
    }

    /// Three agents (one only named by the inputs), rewards of every kind, text to search.
    fn run(tasks: usize, repeats: usize) -> (String, Vec<String>) {
        let (mut inputs, mut rollouts) = (String::new(), Vec::new());
        for t in 0..tasks {
            for r in 0..repeats {
                let agent = ["math", "code", "search"][t % 3];
                inputs.push_str(&format!(
                    r#"{{"_ng_task_index": {t}, "_ng_rollout_index": {r}, "agent_ref": {{"name": "{agent}"}}, "responses_create_params": {{"input": []}}}}"#
                ));
                inputs.push('\n');
                let reward = match (t + r) % 4 {
                    0 => "true".to_string(),
                    1 => "null".to_string(),
                    n => format!("{}", n as f64 / 4.0),
                };
                let agent_ref = if t % 3 == 2 {
                    String::new()
                } else {
                    format!(r#""agent_ref": {{"name": "{agent}"}}, "#)
                };
                let word = ["timeout", "done", "\\\\boxed{4}"][(t * 5 + r) % 3];
                rollouts.push(format!(
                    r#"{{"_ng_task_index": {t}, "_ng_rollout_index": {r}, {agent_ref}"reward": {reward}, "response": {{"output": [{{"type": "message", "role": "assistant", "content": [{{"type": "output_text", "text": "{word} {t}"}}]}}]}}}}"#
                ));
            }
        }
        (inputs, rollouts)
    }

    #[test]
    fn a_query_read_in_ranges_is_the_one_reader_query() {
        let (inputs, lines) = run(18, 3);
        let late = lines.len() * 3 / 4;
        let with = |i: usize, line: &str| {
            let mut l = lines.clone();
            l[i] = line.to_string();
            l.join("\n") + "\n"
        };
        let rollouts = lines.join("\n") + "\n";
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
            ("blank late", inputs.clone(), with(late, ""), 1 << 20),
            (
                "malformed late",
                inputs.clone(),
                with(late, r#"{"reward": 1, "t": "timeout boxed","#),
                1 << 20,
            ),
            // Without the text the first two need: not read by them, so no error from them.
            (
                "malformed, cannot match",
                inputs.clone(),
                with(late, r#"{"reward": 1,"#),
                1 << 20,
            ),
            (
                "malformed input",
                inputs.replacen("\"agent_ref\"", "agent_ref", 3),
                rollouts.clone(),
                1 << 20,
            ),
            ("too long late", inputs.clone(), with(late, &long), 380),
        ];
        let exprs = [
            r#"output ~ "timeout""#,
            r#"output ~ "boxed" and agent == "search""#,
            "task.pass_rate > 0.3 and reward < 1",
            "reward == null",
        ];
        let mut errors = 0;
        for (name, inputs, rollouts, max) in &cases {
            for expr in exprs {
                let expected = streamed(expr, inputs.as_bytes(), rollouts.as_bytes(), *max);
                errors += usize::from(expected.is_err());
                assert!(
                    expected.as_ref().map_or(true, |k| !k.is_empty()) || *name != "clean",
                    "{expr} matches nothing"
                );
                for piece in [97, 1000, 4096, 1 << 20] {
                    let got = in_ranges(expr, inputs.as_bytes(), rollouts.as_bytes(), *max, piece);
                    assert_eq!(got, expected, "{name}, {expr}, piece {piece}");
                }
            }
        }
        // Every malformed case failed, each query that reads the bad line: the errors were
        // compared, not only matches.
        assert_eq!(errors, 3 * exprs.len() + 2);
    }
}
