//! Input rows → materialized rows, exactly as v0.7.0's `_preprocess_rows_from_config`: routing
//! (`routing`: `agent_map`, `fan_out`, environment servers), the shallow
//! `responses_create_params` merge, task indices by distinct raw line (unless the row has one),
//! a per-task rollout counter and contiguous repeats (`aabbcc`; the native face interleaves
//! them afterwards when asked), `task_source` rows resolved to their agent.
//!
//! Streaming: lines go in one at a time and rows come out through a callback, so memory holds
//! one row plus a 16-byte digest per distinct line, not the input.

use super::environment::Topology;
use super::key::{parse_row, KeyPart};
use super::routing::{agent_name, Routing, Targets};
use super::{CollectError, Row};
use crate::gym::keys::{
    AGENT_REF, ENVIRONMENT_SERVER, RESPONSES_CREATE_PARAMS, ROLLOUT_INDEX, TASK_INDEX, TASK_SOURCE,
};
use crate::gym::py;
use serde_json::Value;
use std::collections::{BTreeSet, HashMap, HashSet};
use std::hash::{DefaultHasher, Hash, Hasher};

/// `--num-repeats`: an int for every row, or per routing key (the dispatched agent, else the
/// row's own `agent_ref.name` / `task_source` / taskset) with an optional `_default`.
#[derive(Clone, Debug, PartialEq)]
pub enum NumRepeats {
    Fixed(u64),
    PerKey {
        keys: Vec<(String, u64)>,
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
                let mut keys = Vec::new();
                let mut default = None;
                for (name, n) in map {
                    if name == "_default" {
                        default = Some(count(n)?);
                    } else {
                        keys.push((name.clone(), count(n)?));
                    }
                }
                Ok(NumRepeats::PerKey { keys, default })
            }
            other => count(other).map(NumRepeats::Fixed),
        }
    }
}

pub struct Options {
    /// `agent_map` (with `--agent` as its `_default`), `fan_out`, the routing mode and routes.
    pub routing: Routing,
    /// The running config's instances: `task_source` rows are resolved against them.
    pub topology: Topology,
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
    keys_seen: HashSet<String>,
    /// (old, new) agent names `agent_map` replaced (v0.7.0 re-routes every row).
    overridden: BTreeSet<(String, String)>,
    /// Each `task_source`'s agent, or why it has none.
    task_sources: HashMap<String, Result<String, String>>,
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
            keys_seen: HashSet::new(),
            overridden: BTreeSet::new(),
            task_sources: HashMap::new(),
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
        let task_source = match row.get(TASK_SOURCE) {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) => Some(s.clone()),
            Some(other) => {
                return Err(err(format!(
                    "field `task_source` must be a string, found {}",
                    super::key::kind_name(other)
                )))
            }
        };
        let route = self
            .opts
            .routing
            .route(&mut row, task_source.as_deref())
            .map_err(err)?;
        if let (Some(old), Some(new)) = (&route.replaced, agent_name(&row).ok().flatten()) {
            self.overridden.insert((old.clone(), new.to_string()));
        }
        let targets: Vec<Option<String>> = match route.targets {
            Targets::Agents(agents) => agents.into_iter().map(Some).collect(),
            Targets::Deferred => vec![None],
            Targets::Missing => {
                self.missing_agent_rows.push(limit_index);
                self.missing_agent_lines.push(line_no);
                return Ok(());
            }
        };

        if route.taskset.is_some() {
            // v0.7.0 refuses these for taskset rows: their input is `task_input`, not sent as is.
            if !self.opts.overrides.is_empty() {
                return Err(err("responses_create_params overrides are not supported for materialized task rows".into()));
            }
            if self.opts.add_seed {
                return Err(err(
                    "num_repeats_add_seed is not supported for materialized task rows".into(),
                ));
            }
        } else {
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
        }

        if !row.contains_key(TASK_INDEX) {
            let next = self.task_of_line.len() as u64;
            let task = *self
                .task_of_line
                .entry(digest(line, newline))
                .or_insert(next);
            row.insert(TASK_INDEX.into(), Value::from(task));
        }
        if let Some(server) = &route.server {
            row.insert(ENVIRONMENT_SERVER.into(), Value::from(server.as_str()));
        }
        let task_key = KeyPart::of(&row[TASK_INDEX]);
        // A row with neither agent nor server runs on its `task_source`'s agent, named after
        // its rollout index (v0.7.0 resolves before writing the materialized file). Fan-out
        // comes first: a `task_source` that `fan_out` lists is run by the listed agents, not
        // resolved (v0.7.0 on a live stack: two agents behind one resources server fan out).
        let fanned_out = targets.iter().any(Option::is_some);
        let resolved =
            if route.server.is_none() && !fanned_out && agent_name(&row).ok().flatten().is_none() {
                let topology = &self.opts.topology;
                let cache = &mut self.task_sources;
                match task_source.as_deref().map(|ts| {
                    cache
                        .entry(ts.to_string())
                        .or_insert_with(|| super::task_source::resolve(topology, ts))
                        .clone()
                }) {
                    Some(Ok(agent)) => Some(agent),
                    // Reported together in `finish`; the run stops there.
                    Some(Err(_)) => return Ok(()),
                    None => None,
                }
            } else {
                None
            };

        for target in targets {
            let mut keys: Vec<&str> = Vec::new();
            for k in [target.as_deref(), route.basis.as_deref()]
                .into_iter()
                .flatten()
            {
                if !keys.contains(&k) {
                    keys.push(k);
                }
            }
            self.keys_seen
                .extend(keys.iter().map(std::string::ToString::to_string));
            let repeats = match &self.opts.num_repeats {
                NumRepeats::Fixed(n) => *n,
                NumRepeats::PerKey {
                    keys: listed,
                    default,
                } => {
                    let found = keys
                        .iter()
                        .find_map(|k| listed.iter().find(|(l, _)| l == k).map(|(_, n)| *n));
                    let Some(n) = found.or(*default) else {
                        self.missing_repeats.insert(keys.join(" / "));
                        continue;
                    };
                    n
                }
            };
            // A fan-out copy for another agent gets its own `agent_ref` (in place, else appended
            // before the rollout index); otherwise the row's is kept byte for byte.
            let restamp = target
                .as_deref()
                .filter(|t| agent_name(&row).ok().flatten() != Some(*t));
            let mut copy;
            let base: &mut Row = match restamp {
                Some(t) => {
                    copy = row.clone();
                    copy.shift_remove(ROLLOUT_INDEX);
                    let mut agent_ref = Row::new();
                    agent_ref.insert("name".into(), Value::from(t));
                    copy.insert(AGENT_REF.into(), Value::Object(agent_ref));
                    &mut copy
                }
                None => &mut row,
            };
            for _ in 0..repeats {
                let counter = self.rollout_counter.entry(task_key.clone()).or_insert(0);
                base.insert(ROLLOUT_INDEX.into(), Value::from(*counter));
                if self.opts.add_seed {
                    super::seed::add_seed(base, *counter).map_err(err)?;
                }
                *counter += 1;
                self.rows += 1;
                if let Some(agent) = &resolved {
                    let mut out = base.clone();
                    let mut agent_ref = Row::new();
                    agent_ref.insert("name".into(), Value::from(agent.as_str()));
                    out.insert(AGENT_REF.into(), Value::Object(agent_ref));
                    emit(&out)?;
                } else {
                    emit(base)?;
                }
            }
        }
        Ok(())
    }

    /// Upstream's checks after the loop: rows without an agent, `task_source`s without one,
    /// routing keys missing from a `num_repeats` dict (errors) and dict entries never seen (a
    /// warning).
    pub fn finish(self) -> Result<Summary, CollectError> {
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
        if !self.missing_agent_rows.is_empty() {
            return Err(CollectError::Config(format!(
                "No agent specified for rows {}. Provide +agent_name (or +agent_map with a _default entry), or include agent_ref or task_source in the data. ('{}' lines {}; use --agent)",
                py_list(&self.missing_agent_rows),
                self.file,
                shorten(&self.missing_agent_lines)
            )));
        }
        if let NumRepeats::PerKey { keys, .. } = &self.opts.num_repeats {
            let listed: BTreeSet<&str> = keys.iter().map(|(a, _)| a.as_str()).collect();
            if !self.missing_repeats.is_empty() {
                return Err(CollectError::Config(format!(
                    "num_repeats dict has no entry for routing keys {} and no '_default' fallback. Listed keys: {}",
                    py_str_list(self.missing_repeats.iter().map(String::as_str)),
                    py_str_list(listed.iter().copied())
                )));
            }
            let unknown: Vec<&str> = listed
                .iter()
                .copied()
                .filter(|a| !self.keys_seen.contains(*a))
                .collect();
            if !unknown.is_empty() {
                warnings.push(format!(
                    "num_repeats dict contains agent names that never appeared in input rows (possible typo?): {}",
                    py_str_list(unknown.into_iter())
                ));
            }
        }
        let mut failed: Vec<(&String, &String)> = self
            .task_sources
            .iter()
            .filter_map(|(ts, r)| r.as_ref().err().map(|e| (ts, e)))
            .collect();
        if !failed.is_empty() {
            failed.sort();
            let errors: Vec<&str> = failed.iter().map(|(_, e)| e.as_str()).collect();
            return Err(CollectError::Config(format!(
                "Cannot resolve task_source to an agent: {}",
                errors.join("; ")
            )));
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
            routing: Routing::new(&crate::collect::routing::RoutingKeys {
                agent_name: agent,
                ..Default::default()
            })
            .unwrap(),
            topology: Topology::default(),
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
        assert!(
            e.to_string().contains("no entry for routing keys ['b']"),
            "{e}"
        );
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

    fn routed(map: &str, fan: &str, routes: &str, repeats: &str) -> Options {
        let v = |s: &str| (!s.is_empty()).then(|| hydra::parse(s).unwrap());
        let (map, fan, routes) = (v(map), v(fan), v(routes));
        use crate::collect::environment::{Instance, InstanceKind};
        let inst = |name: &str, kind, rs: Option<&str>| Instance {
            name: name.into(),
            kind,
            resources_server: rs.map(String::from),
            pins: Vec::new(),
            agent_type: None,
            allowed_agents: None,
        };
        Options {
            add_seed: false,
            routing: Routing::new(&crate::collect::routing::RoutingKeys {
                agent_map: map.as_ref(),
                fan_out: fan.as_ref(),
                environment_server_routes: routes.as_ref(),
                ..Default::default()
            })
            .unwrap(),
            topology: Topology {
                servers: Vec::new(),
                instances: vec![
                    inst("rs", InstanceKind::Resources, None),
                    inst("rs_agent", InstanceKind::Agent, Some("rs")),
                ],
                allow_unsupported_pairing: false,
            },
            overrides: Row::new(),
            num_repeats: NumRepeats::from_value(&hydra::parse(repeats).unwrap()).unwrap(),
        }
    }

    #[test]
    fn fan_out_copies_share_the_tasks_rollout_counter() {
        // v0.7.0, measured: task 0 with 2 agents x 2 repeats is 0,1 for the first, 2,3 for the second.
        let input = "{\"responses_create_params\":{},\"agent_ref\":{\"name\":\"k\"}}\n";
        let got = run(input, &routed("", "{k: [x, y]}", "", "2"), None).unwrap();
        let want = "\
{\"responses_create_params\":{},\"agent_ref\":{\"name\":\"x\"},\"_ng_task_index\":0,\"_ng_rollout_index\":0}
{\"responses_create_params\":{},\"agent_ref\":{\"name\":\"x\"},\"_ng_task_index\":0,\"_ng_rollout_index\":1}
{\"responses_create_params\":{},\"agent_ref\":{\"name\":\"y\"},\"_ng_task_index\":0,\"_ng_rollout_index\":2}
{\"responses_create_params\":{},\"agent_ref\":{\"name\":\"y\"},\"_ng_task_index\":0,\"_ng_rollout_index\":3}
";
        assert_eq!(got, want);
        // A dict keyed by the target wins over the basis; a key for neither is an error.
        let got = run(input, &routed("", "{k: [x, y]}", "", "{k: 1, y: 3}"), None).unwrap();
        assert_eq!(got.lines().count(), 4);
        let e = run(input, &routed("", "{k: [x, y]}", "", "{y: 3}"), None).unwrap_err();
        assert_eq!(
            e.to_string(),
            "num_repeats dict has no entry for routing keys ['x / k'] and no '_default' fallback. Listed keys: ['y']"
        );
    }

    /// Issue 58: `+fan_out={rs: [a, b]}` over rows that have only `task_source: rs` fans out,
    /// even where `rs` alone could not be resolved to one agent (v0.7.0, live stack).
    #[test]
    fn fan_out_comes_before_task_source_resolution() {
        let input = "{\"responses_create_params\":{},\"task_source\":\"rs\"}\n";
        let mut o = routed("", "{rs: [a, b]}", "", "2");
        o.topology
            .instances
            .push(crate::collect::environment::Instance {
                name: "rs_agent_2".into(),
                kind: crate::collect::environment::InstanceKind::Agent,
                resources_server: Some("rs".into()),
                pins: Vec::new(),
                agent_type: None,
                allowed_agents: None,
            });
        let got = run(input, &o, None).unwrap();
        let agents: Vec<String> = got
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap()["agent_ref"]["name"].to_string())
            .map(|n| n.trim_matches('"').to_string())
            .collect();
        assert_eq!(agents, ["a", "a", "b", "b"], "{got}");
    }

    #[test]
    fn task_sources_resolve_after_the_rollout_index_and_tasksets_get_their_server() {
        let input = "{\"responses_create_params\":{},\"task_source\":\"rs\"}\n";
        let got = run(input, &routed("", "", "", "1"), None).unwrap();
        assert_eq!(
            got,
            "{\"responses_create_params\":{},\"task_source\":\"rs\",\"_ng_task_index\":0,\"_ng_rollout_index\":0,\"agent_ref\":{\"name\":\"rs_agent\"}}\n"
        );
        let e = run("{\"responses_create_params\":{},\"task_source\":\"rss\"}\n{\"responses_create_params\":{},\"task_source\":\"qq\"}\n", &routed("", "", "", "1"), None).unwrap_err();
        assert_eq!(
            e.to_string(),
            "Cannot resolve task_source to an agent: 'qq': not in the running config; 'rss': not in the running config (did you mean 'rs'?)"
        );
        let input = "{\"task_id\":{\"taskset\":\"t\",\"id\":1},\"task_input\":{\"q\":1}}\n";
        let got = run(input, &routed("", "", "{t: env_t}", "2"), None).unwrap();
        assert_eq!(
            got.lines().next().unwrap(),
            "{\"task_id\":{\"taskset\":\"t\",\"id\":1},\"task_input\":{\"q\":1},\"_ng_task_index\":0,\"_ng_environment_server\":\"env_t\",\"_ng_rollout_index\":0}"
        );
    }
}
