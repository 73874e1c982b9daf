//! Input rows → materialized rows, exactly as upstream's `_preprocess_rows_from_config`: the
//! default `agent_ref`, the shallow `responses_create_params` merge, task indices by distinct raw
//! line (unless the row has one), a per-task rollout counter and contiguous repeats (`aabbcc`).
//!
//! Streaming: lines go in one at a time and rows come out through a callback, so memory holds
//! one row plus a 16-byte digest per distinct line, not the input.

use super::key::{parse_row, KeyPart};
use super::{CollectError, Row};
use crate::gym::keys::{AGENT_REF, RESPONSES_CREATE_PARAMS, ROLLOUT_INDEX, TASK_INDEX};
use crate::gym::py;
use serde_json::Value;
use std::collections::{BTreeSet, HashMap, HashSet};
use std::hash::{DefaultHasher, Hash, Hasher};

/// `--num-repeats`: an int for every row, or per `agent_ref.name` with an optional `_default`.
#[derive(Clone, Debug, PartialEq)]
pub enum NumRepeats {
    Fixed(u64),
    PerAgent {
        agents: Vec<(String, u64)>,
        default: Option<u64>,
    },
}

impl NumRepeats {
    /// From the Hydra-typed flag value; `null` means 1 as upstream's validator says.
    pub fn from_value(v: &Value) -> Result<NumRepeats, String> {
        let count = |v: &Value| -> Result<u64, String> {
            match v.as_i64() {
                Some(n) if n >= 1 => Ok(n as u64),
                _ => Err(format!("num_repeats must be an integer >= 1, got {v}")),
            }
        };
        match v {
            Value::Null => Ok(NumRepeats::Fixed(1)),
            Value::Object(map) => {
                let mut agents = Vec::new();
                let mut default = None;
                for (name, n) in map {
                    if name == "_default" {
                        default = Some(count(n)?);
                    } else {
                        agents.push((name.clone(), count(n)?));
                    }
                }
                Ok(NumRepeats::PerAgent { agents, default })
            }
            other => count(other).map(NumRepeats::Fixed),
        }
    }
}

pub struct Options {
    /// `--agent`: `agent_ref` for rows that have none.
    pub agent_name: Option<String>,
    /// `responses_create_params` overrides, merged shallowly (top-level keys replaced whole).
    pub overrides: Row,
    pub num_repeats: NumRepeats,
    /// `+num_repeats_add_seed`: each repeat's rollout index as `extra_body.seed`.
    pub add_seed: bool,
}

pub struct Materializer<'a> {
    opts: &'a Options,
    file: String,
    task_of_line: HashMap<u128, u64>,
    rollout_counter: HashMap<KeyPart, u64>,
    missing_agent_rows: Vec<u64>,
    missing_agent_lines: Vec<u64>,
    missing_repeats: BTreeSet<String>,
    agents_seen: HashSet<String>,
    /// (old, new) agent names `--agent` replaced (v0.7.0 re-routes every row).
    overridden: BTreeSet<(String, String)>,
    lines: u64,
    rows: u64,
}

/// What a finished materialization reports besides its rows.
#[derive(Debug, Default)]
pub struct Summary {
    pub lines: u64,
    pub rows: u64,
    pub warnings: Vec<String>,
}

impl<'a> Materializer<'a> {
    pub fn new(opts: &'a Options, file: &str) -> Self {
        Materializer {
            opts,
            file: file.to_string(),
            task_of_line: HashMap::new(),
            rollout_counter: HashMap::new(),
            missing_agent_rows: Vec::new(),
            missing_agent_lines: Vec::new(),
            missing_repeats: BTreeSet::new(),
            agents_seen: HashSet::new(),
            overridden: BTreeSet::new(),
            lines: 0,
            rows: 0,
        }
    }

    /// One input line (without its terminator; `newline` says whether it had one, since upstream's
    /// dedupe key is the raw line with its `\n`). `limit_index` is upstream's row counter for the
    /// missing-agent message: the line's 0-based index under `--limit`, else 0. Each materialized
    /// row is passed to `emit`.
    pub fn push_line(
        &mut self,
        line: &[u8],
        newline: bool,
        limit_index: u64,
        emit: &mut dyn FnMut(&Row) -> Result<(), CollectError>,
    ) -> Result<(), CollectError> {
        self.lines += 1;
        let line_no = self.lines;
        let err = |msg: String| CollectError::line(&self.file, line_no, msg);
        let mut row = parse_row(line).map_err(err)?;

        // `--agent A` is `agent_map._default=A` (v0.7.0 `rollout_collection.py`): every row is
        // re-routed to A, its `agent_ref` replaced by `{"name": A}` in place (other fields such
        // as `type` go), and the names it replaced are warned about.
        if let Some(name) = &self.opts.agent_name {
            let old = row
                .get(AGENT_REF)
                .and_then(|r| r.get("name"))
                .and_then(Value::as_str);
            if let Some(old) = old.filter(|old| old != name) {
                self.overridden.insert((old.to_string(), name.clone()));
            }
            let mut agent_ref = Row::new();
            agent_ref.insert("name".into(), Value::String(name.clone()));
            row.insert(AGENT_REF.into(), Value::Object(agent_ref));
        }
        let agent_name = match row.get(AGENT_REF) {
            None | Some(Value::Null) => None,
            Some(Value::Object(r)) => match r.get("name") {
                None | Some(Value::Null) => None,
                Some(Value::String(s)) => Some(s.clone()),
                Some(other) => {
                    return Err(err(format!(
                        "field `agent_ref.name` must be a string, found {}",
                        super::key::kind_name(other)
                    )))
                }
            },
            Some(other) if !py::truthy(other) => None,
            Some(other) => {
                return Err(err(format!(
                    "field `agent_ref` must be an object, found {}",
                    super::key::kind_name(other)
                )))
            }
        };
        let Some(agent_name) = agent_name else {
            self.missing_agent_rows.push(limit_index);
            self.missing_agent_lines.push(line_no);
            return Ok(());
        };
        self.agents_seen.insert(agent_name.clone());

        match row.get_mut(RESPONSES_CREATE_PARAMS) {
            Some(Value::Object(params)) => {
                for (k, v) in &self.opts.overrides {
                    params.insert(k.clone(), v.clone());
                }
            }
            Some(other) => {
                return Err(err(format!(
                    "field `responses_create_params` must be an object, found {}",
                    super::key::kind_name(other)
                )))
            }
            None => return Err(err("field `responses_create_params` is missing".into())),
        }

        if !row.contains_key(TASK_INDEX) {
            let next = self.task_of_line.len() as u64;
            let task = *self
                .task_of_line
                .entry(digest(line, newline))
                .or_insert(next);
            row.insert(TASK_INDEX.into(), Value::from(task));
        }
        let task_key = KeyPart::of(&row[TASK_INDEX]);

        let repeats = match &self.opts.num_repeats {
            NumRepeats::Fixed(n) => *n,
            NumRepeats::PerAgent { agents, default } => {
                match agents.iter().find(|(a, _)| *a == agent_name) {
                    Some((_, n)) => *n,
                    None => {
                        if let Some(n) = default {
                            *n
                        } else {
                            self.missing_repeats.insert(agent_name);
                            return Ok(());
                        }
                    }
                }
            }
        };
        for _ in 0..repeats {
            let counter = self.rollout_counter.entry(task_key.clone()).or_insert(0);
            row.insert(ROLLOUT_INDEX.into(), Value::from(*counter));
            if self.opts.add_seed {
                super::seed::add_seed(&mut row, *counter).map_err(err)?;
            }
            *counter += 1;
            self.rows += 1;
            emit(&row)?;
        }
        Ok(())
    }

    /// Upstream's checks after the loop: rows without an agent, agents missing from a
    /// `num_repeats` dict (errors) and dict entries for agents never seen (a warning).
    pub fn finish(self) -> Result<Summary, CollectError> {
        if !self.missing_agent_rows.is_empty() {
            return Err(CollectError::Config(format!(
                "No agent specified for rows {}. Provide +agent_name (or +agent_map with a _default entry), or include agent_ref or task_source in the data. ('{}' lines {}; use --agent)",
                py_list(&self.missing_agent_rows),
                self.file,
                shorten(&self.missing_agent_lines)
            )));
        }
        let mut warnings = Vec::new();
        if !self.overridden.is_empty() {
            let pairs: Vec<String> = self
                .overridden
                .iter()
                .map(|(a, b)| format!("({}, {})", py::str_repr(a), py::str_repr(b)))
                .collect();
            warnings.push(format!(
                "agent_map overrode agent_ref values already present in the data: [{}]. Prior to \
                 this release, +agent_name only filled rows missing an agent_ref; it now re-routes \
                 every row.",
                pairs.join(", ")
            ));
        }
        if let NumRepeats::PerAgent { agents, .. } = &self.opts.num_repeats {
            let listed: BTreeSet<&str> = agents.iter().map(|(a, _)| a.as_str()).collect();
            if !self.missing_repeats.is_empty() {
                return Err(CollectError::Config(format!(
                    "num_repeats dict has no entry for agents {} and no '_default' fallback. Listed agents: {}",
                    py_str_list(self.missing_repeats.iter().map(String::as_str)),
                    py_str_list(listed.iter().copied())
                )));
            }
            let unknown: Vec<&str> = listed
                .iter()
                .copied()
                .filter(|a| !self.agents_seen.contains(*a))
                .collect();
            if !unknown.is_empty() {
                warnings.push(format!(
                    "num_repeats dict contains agent names that never appeared in input rows (possible typo?): {}",
                    py_str_list(unknown.into_iter())
                ));
            }
        }
        Ok(Summary {
            lines: self.lines,
            rows: self.rows,
            warnings,
        })
    }
}

/// 128-bit digest of a raw line: two SipHash runs with different prefixes. Collisions would merge
/// two tasks; at 2^-64 per pair even for a billion lines that is not a practical concern.
fn digest(line: &[u8], newline: bool) -> u128 {
    let half = |salt: u8| {
        let mut h = DefaultHasher::new();
        salt.hash(&mut h);
        line.hash(&mut h);
        newline.hash(&mut h);
        h.finish()
    };
    (u128::from(half(0)) << 64) | u128::from(half(1))
}

fn py_list(v: &[u64]) -> String {
    let items: Vec<String> = v.iter().map(u64::to_string).collect();
    format!("[{}]", items.join(", "))
}

fn py_str_list<'s>(v: impl Iterator<Item = &'s str>) -> String {
    let items: Vec<String> = v.map(|s| format!("'{s}'")).collect();
    format!("[{}]", items.join(", "))
}

fn shorten(lines: &[u64]) -> String {
    let mut s: Vec<String> = lines.iter().take(10).map(u64::to_string).collect();
    if lines.len() > 10 {
        s.push(format!("… ({} in all)", lines.len()));
    }
    s.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::collect::hydra;

    fn run(input: &str, opts: &Options, limit: Option<u64>) -> Result<String, CollectError> {
        let mut out = Vec::new();
        let mut m = Materializer::new(opts, "in.jsonl");
        let mut lines: Vec<&str> = input.split_inclusive('\n').collect();
        if let Some(n) = limit {
            lines.truncate(n as usize);
        }
        for (i, l) in lines.iter().enumerate() {
            let nl = l.ends_with('\n');
            let idx = if limit.is_some() { i as u64 } else { 0 };
            m.push_line(l.trim_end_matches('\n').as_bytes(), nl, idx, &mut |row| {
                out.extend(crate::collect::key::to_line(row));
                Ok(())
            })?;
        }
        m.finish()?;
        Ok(String::from_utf8(out).unwrap())
    }

    fn opts(agent: Option<&str>, overrides: &str, repeats: &str) -> Options {
        Options {
            add_seed: false,
            agent_name: agent.map(String::from),
            overrides: hydra::parse(overrides)
                .unwrap()
                .as_object()
                .unwrap()
                .clone(),
            num_repeats: NumRepeats::from_value(&hydra::parse(repeats).unwrap()).unwrap(),
        }
    }

    #[test]
    fn matches_upstreams_verified_example() {
        // Upstream's run, observed with `nemo_gym/rollout_collection.py` on
        // `resources_servers/example_single_tool_call/data/example.jsonl`: --limit 3
        // --num-repeats 2 --temperature 0.5 -a A.
        let input = "{\"responses_create_params\":{\"input\":[],\"temperature\":1}}\n{\"responses_create_params\":{\"input\":[1]}}\n{\"responses_create_params\":{\"input\":[2]}}\n{\"responses_create_params\":{}}\n";
        let got = run(input, &opts(Some("A"), "{temperature: 0.5}", "2"), Some(3)).unwrap();
        let want = "\
{\"responses_create_params\":{\"input\":[],\"temperature\":0.5},\"agent_ref\":{\"name\":\"A\"},\"_ng_task_index\":0,\"_ng_rollout_index\":0}
{\"responses_create_params\":{\"input\":[],\"temperature\":0.5},\"agent_ref\":{\"name\":\"A\"},\"_ng_task_index\":0,\"_ng_rollout_index\":1}
{\"responses_create_params\":{\"input\":[1],\"temperature\":0.5},\"agent_ref\":{\"name\":\"A\"},\"_ng_task_index\":1,\"_ng_rollout_index\":0}
{\"responses_create_params\":{\"input\":[1],\"temperature\":0.5},\"agent_ref\":{\"name\":\"A\"},\"_ng_task_index\":1,\"_ng_rollout_index\":1}
{\"responses_create_params\":{\"input\":[2],\"temperature\":0.5},\"agent_ref\":{\"name\":\"A\"},\"_ng_task_index\":2,\"_ng_rollout_index\":0}
{\"responses_create_params\":{\"input\":[2],\"temperature\":0.5},\"agent_ref\":{\"name\":\"A\"},\"_ng_task_index\":2,\"_ng_rollout_index\":1}
";
        assert_eq!(got, want);
    }

    #[test]
    fn identical_lines_share_a_task_and_keep_counting() {
        let line =
            "{\"responses_create_params\":{},\"agent_ref\":{\"type\":\"t\",\"name\":\"B\"}}\n";
        let got = run(&line.repeat(3), &opts(Some("A"), "{}", "1"), None).unwrap();
        let keys: Vec<&str> = got
            .lines()
            .map(|l| &l[l.find("\"_ng_task").unwrap()..])
            .collect();
        assert_eq!(
            keys,
            [
                "\"_ng_task_index\":0,\"_ng_rollout_index\":0}",
                "\"_ng_task_index\":0,\"_ng_rollout_index\":1}",
                "\"_ng_task_index\":0,\"_ng_rollout_index\":2}"
            ]
        );
        // v0.7.0: `--agent` re-routes every row, its `agent_ref` replaced in place (`type` goes).
        assert!(
            got.starts_with("{\"responses_create_params\":{},\"agent_ref\":{\"name\":\"A\"},"),
            "{got}"
        );
        let options = opts(Some("A"), "{}", "1");
        let mut m = Materializer::new(&options, "in.jsonl");
        let same = "{\"responses_create_params\":{\"input\":[9]},\"agent_ref\":{\"name\":\"A\"}}";
        for l in [
            line.trim_end(),
            same,
            "{\"responses_create_params\":{\"input\":[8]}}",
        ] {
            m.push_line(l.as_bytes(), true, 0, &mut |_| Ok(())).unwrap();
        }
        assert_eq!(
            m.finish().unwrap().warnings,
            ["agent_map overrode agent_ref values already present in the data: [('B', 'A')]. Prior \
              to this release, +agent_name only filled rows missing an agent_ref; it now re-routes \
              every row."]
        );
        // The last line without its newline is a different raw line to upstream.
        let got = run(
            &format!("{line}{}", line.trim_end()),
            &opts(None, "{}", "1"),
            None,
        )
        .unwrap();
        assert!(got.lines().nth(1).unwrap().contains("\"_ng_task_index\":1"));
    }

    #[test]
    fn given_task_index_is_kept_and_counter_is_per_task() {
        let input = "{\"responses_create_params\":{},\"_ng_task_index\":7,\"x\":1}\n{\"responses_create_params\":{},\"_ng_task_index\":7.0,\"x\":2}\n";
        let got = run(input, &opts(Some("A"), "{}", "1"), None).unwrap();
        assert!(got.lines().next().unwrap().ends_with(
            "\"_ng_task_index\":7,\"x\":1,\"agent_ref\":{\"name\":\"A\"},\"_ng_rollout_index\":0}"
        ));
        assert!(got.lines().nth(1).unwrap().ends_with("\"_ng_task_index\":7.0,\"x\":2,\"agent_ref\":{\"name\":\"A\"},\"_ng_rollout_index\":1}"));
    }

    #[test]
    fn per_agent_repeats_and_errors() {
        let input = "{\"responses_create_params\":{},\"agent_ref\":{\"name\":\"a\"}}\n{\"responses_create_params\":{},\"agent_ref\":{\"name\":\"b\"}}\n";
        let got = run(input, &opts(None, "{}", "{a: 2, _default: 1}"), None).unwrap();
        assert_eq!(got.lines().count(), 3);
        let e = run(input, &opts(None, "{}", "{a: 2, typo: 3}"), None).unwrap_err();
        assert!(e.to_string().contains("no entry for agents ['b']"), "{e}");
        let e = run(
            "{\"responses_create_params\":{}}\n{\"responses_create_params\":{}}\n",
            &opts(None, "{}", "1"),
            None,
        )
        .unwrap_err();
        assert!(
            e.to_string()
                .starts_with("No agent specified for rows [0, 0]."),
            "{e}"
        );
        let e = run("{\"a\":1}\n", &opts(Some("A"), "{}", "1"), None).unwrap_err();
        assert_eq!(
            e.to_string(),
            "'in.jsonl' line 1: field `responses_create_params` is missing"
        );
        let e = run(
            "{\"responses_create_params\":{}}\n\n",
            &opts(Some("A"), "{}", "1"),
            None,
        )
        .unwrap_err();
        assert!(
            e.to_string()
                .starts_with("'in.jsonl' line 2: Malformed JSON"),
            "{e}"
        );
    }

    #[test]
    fn override_merge_is_shallow_and_keeps_positions() {
        let input = "{\"responses_create_params\":{\"metadata\":{\"a\":1,\"b\":2},\"temperature\":1.0,\"input\":\"x\"}}\n";
        let got = run(
            input,
            &opts(
                Some("A"),
                "{temperature: 0.5, metadata: {c: 3}, top_p: 1}",
                "1",
            ),
            None,
        )
        .unwrap();
        assert!(got.starts_with("{\"responses_create_params\":{\"metadata\":{\"c\":3},\"temperature\":0.5,\"input\":\"x\",\"top_p\":1},"), "{got}");
    }
}
