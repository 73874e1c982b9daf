//! How materialization routes each input row (NeMo Gym v0.7.0 `rollout_collection.py`
//! `_preprocess_rows_from_config`, `_environment_server_for_config_row`): the row's environment
//! server when it has one (taskset rows by `environment_server_routes`, flat rows in `legacy`
//! mode), else its agent after `agent_map` (`-a A` is `agent_map._default=A`), once per agent of
//! `fan_out`, or deferred to `task_source` resolution.

use super::Row;
use crate::gym::keys::AGENT_REF;
use crate::gym::py::str_repr;
use serde_json::Value;

/// `environment_routing_mode`: how flat rows are routed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Through the agent's environment server, resolved at dispatch (the default).
    Agent,
    /// Every flat row to this environment server (`environment_server_name`).
    Legacy(String),
    /// Flat rows refused: the run takes only taskset rows.
    Taskset,
}

/// The routing keys of a collection, checked as v0.7.0's config model checks them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Routing {
    /// `agent_map` in its order, `-a` folded in as `_default`.
    pub agent_map: Vec<(String, String)>,
    pub fan_out: Vec<(String, Vec<String>)>,
    pub mode: Mode,
    /// `environment_server_routes`: taskset → environment server.
    pub routes: Vec<(String, String)>,
}

impl Default for Routing {
    fn default() -> Self {
        Routing {
            agent_map: Vec::new(),
            fan_out: Vec::new(),
            mode: Mode::Agent,
            routes: Vec::new(),
        }
    }
}

/// The keys as given (Hydra-typed values).
#[derive(Default)]
pub struct RoutingKeys<'a> {
    pub agent_name: Option<&'a str>,
    pub agent_map: Option<&'a Value>,
    pub fan_out: Option<&'a Value>,
    pub mode: Option<&'a str>,
    pub environment_server_name: Option<&'a str>,
    pub environment_server_routes: Option<&'a Value>,
}

fn string_map(key: &str, v: Option<&Value>) -> Result<Vec<(String, String)>, String> {
    match v {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Object(m)) => m
            .iter()
            .map(|(k, v)| match v {
                Value::String(s) => Ok((k.clone(), s.clone())),
                other => Err(format!(
                    "{key}[{}] must be a string, got {other}",
                    str_repr(k)
                )),
            })
            .collect(),
        Some(other) => Err(format!(
            "{key} must be a mapping such as {{name: agent}}, got {other}"
        )),
    }
}

impl Routing {
    pub fn new(keys: &RoutingKeys) -> Result<Routing, String> {
        let mut agent_map = string_map("agent_map", keys.agent_map)?;
        if let Some(name) = keys.agent_name {
            match agent_map.iter_mut().find(|(k, _)| k == "_default") {
                Some((_, existing)) if existing != name => {
                    return Err(format!(
                        "agent_name={} conflicts with agent_map._default={}. Set only one of them.",
                        str_repr(name),
                        str_repr(existing)
                    ))
                }
                Some(_) => {}
                None => agent_map.push(("_default".into(), name.to_string())),
            }
        }
        let fan_out = match keys.fan_out {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Object(m)) => {
                let mut out = Vec::new();
                for (k, v) in m {
                    let agents: Vec<String> = v
                        .as_array()
                        .and_then(|a| a.iter().map(|x| x.as_str().map(String::from)).collect())
                        .ok_or_else(|| {
                            format!(
                                "fan_out[{}] must be a list of agent names, got {v}",
                                str_repr(k)
                            )
                        })?;
                    if agents.is_empty() {
                        return Err(format!(
                            "fan_out[{}] is an empty list, which would silently drop every matching row (zero rollouts collected). Remove the key, or list at least one agent.",
                            str_repr(k)
                        ));
                    }
                    let mut duplicates: Vec<&str> = agents
                        .iter()
                        .filter(|a| agents.iter().filter(|b| b == a).count() > 1)
                        .map(String::as_str)
                        .collect();
                    duplicates.sort_unstable();
                    duplicates.dedup();
                    if !duplicates.is_empty() {
                        let listed: Vec<String> = duplicates.iter().map(|d| str_repr(d)).collect();
                        return Err(format!(
                            "fan_out[{}] lists the same agent more than once: [{}]. Each listed agent already runs every matching row; use num_repeats for repetition.",
                            str_repr(k),
                            listed.join(", ")
                        ));
                    }
                    out.push((k.clone(), agents));
                }
                out
            }
            Some(other) => {
                return Err(format!(
                    "fan_out must be a mapping such as {{key: [agent_a, agent_b]}}, got {other}"
                ))
            }
        };
        let routes = string_map("environment_server_routes", keys.environment_server_routes)?;
        let mode = match keys.mode.unwrap_or("agent") {
            "agent" => Mode::Agent,
            "legacy" => Mode::Legacy(keys.environment_server_name.map(String::from).ok_or(
                "environment_server_name is required when environment_routing_mode=legacy",
            )?),
            "taskset" => {
                if routes.is_empty() {
                    return Err(
                        "environment_server_routes are required when environment_routing_mode=taskset"
                            .into(),
                    );
                }
                Mode::Taskset
            }
            other => {
                return Err(format!(
                    "environment_routing_mode must be one of 'agent', 'legacy', 'taskset', got {}",
                    str_repr(other)
                ))
            }
        };
        Ok(Routing {
            agent_map,
            fan_out,
            mode,
            routes,
        })
    }

    /// `agent_map` as Python prints the dict (`Routing rows via agent_map {…}`); `None` unset.
    pub fn agent_map_repr(&self) -> Option<String> {
        if self.agent_map.is_empty() {
            return None;
        }
        let items: Vec<String> = self
            .agent_map
            .iter()
            .map(|(k, v)| format!("{}: {}", str_repr(k), str_repr(v)))
            .collect();
        Some(format!("{{{}}}", items.join(", ")))
    }

    fn mapped(&self, agent: Option<&str>, task_source: Option<&str>) -> Option<&str> {
        let find = |key: &str| {
            self.agent_map
                .iter()
                .find(|(k, _)| k == key)
                .map(|(_, v)| v.as_str())
        };
        agent
            .and_then(find)
            .or_else(|| task_source.and_then(find))
            .or_else(|| find("_default"))
    }

    /// Where an input row goes; `agent_ref` is replaced on the row when `agent_map` re-routes it
    /// (in place; `replaced` gets the old name when it differed).
    pub fn route(&self, row: &mut Row, task_source: Option<&str>) -> Result<RowRoute, String> {
        let taskset = materialized_taskset(row).map(String::from);
        let server = match &taskset {
            Some(ts) => Some(
                self.routes
                    .iter()
                    .find(|(k, _)| k == ts)
                    .map(|(_, v)| v.clone())
                    .ok_or_else(|| {
                        format!(
                            "No environment server route is configured for taskset {}",
                            str_repr(ts)
                        )
                    })?,
            ),
            None => match &self.mode {
                Mode::Agent => None,
                Mode::Legacy(s) => Some(s.clone()),
                Mode::Taskset => return Err("taskset routing requires rows containing task_id.taskset and task_input; use environment_routing_mode=agent to mix materialized and flat rows in one batch".into()),
            },
        };
        let mut agent = agent_name(row)?.map(String::from);
        let mut basis = agent.clone().or_else(|| task_source.map(String::from));
        let mut replaced = None;
        if let Some(server) = &server {
            basis = Some(
                taskset
                    .clone()
                    .or_else(|| task_source.map(String::from))
                    .unwrap_or_else(|| server.clone()),
            );
        } else if let Some(mapped) = self.mapped(agent.as_deref(), task_source).map(String::from) {
            if agent.as_deref().is_some_and(|a| a != mapped) {
                replaced.clone_from(&agent);
            }
            let mut agent_ref = Row::new();
            agent_ref.insert("name".into(), Value::from(mapped.as_str()));
            row.insert(AGENT_REF.into(), Value::Object(agent_ref));
            agent = Some(mapped);
        }
        let targets = if server.is_some() {
            Targets::Deferred
        } else if let Some(listed) = basis
            .as_deref()
            .and_then(|b| self.fan_out.iter().find(|(k, _)| k == b))
        {
            Targets::Agents(listed.1.clone())
        } else if let Some(a) = &agent {
            Targets::Agents(vec![a.clone()])
        } else if task_source.is_some() {
            Targets::Deferred
        } else {
            Targets::Missing
        };
        Ok(RowRoute {
            server,
            taskset,
            basis,
            targets,
            replaced,
        })
    }
}

/// One input row's routing.
#[derive(Debug, PartialEq, Eq)]
pub struct RowRoute {
    /// The environment server stamped on the row (`_ng_environment_server`).
    pub server: Option<String>,
    /// A taskset row's taskset.
    pub taskset: Option<String>,
    /// The name `num_repeats` and `fan_out` key it by besides its target.
    pub basis: Option<String>,
    pub targets: Targets,
    /// The agent name `agent_map` replaced.
    pub replaced: Option<String>,
}

#[derive(Debug, PartialEq, Eq)]
pub enum Targets {
    /// One copy set per agent, in order (a copy naming another agent is re-stamped).
    Agents(Vec<String>),
    /// One copy set whose agent comes later (its server's, or its `task_source`'s).
    Deferred,
    /// Neither agent nor `task_source` nor server: the missing-agent error.
    Missing,
}

/// `agent_ref.name` as the row gives it: `None` when absent or null (or a falsy `agent_ref`).
pub fn agent_name(row: &Row) -> Result<Option<&str>, String> {
    match row.get(AGENT_REF) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Object(r)) => match r.get("name") {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(other) => Err(format!(
                "field `agent_ref.name` must be a string, found {}",
                super::key::kind_name(other)
            )),
        },
        Some(other) if !crate::gym::py::truthy(other) => Ok(None),
        Some(other) => Err(format!(
            "field `agent_ref` must be an object, found {}",
            super::key::kind_name(other)
        )),
    }
}

/// A taskset row's taskset (v0.7.0 `_materialized_taskset`): `task_id` an object with a
/// non-empty string `taskset`, and a `task_input` key.
pub fn materialized_taskset(row: &Row) -> Option<&str> {
    if !row.contains_key("task_input") {
        return None;
    }
    row.get("task_id")?
        .as_object()?
        .get("taskset")?
        .as_str()
        .filter(|s| !s.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn row(v: Value) -> Row {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn keys_are_checked_as_v07s_config_model() {
        let map = json!({"_default": "B"});
        let e = Routing::new(&RoutingKeys {
            agent_name: Some("A"),
            agent_map: Some(&map),
            ..Default::default()
        })
        .unwrap_err();
        assert_eq!(
            e,
            "agent_name='A' conflicts with agent_map._default='B'. Set only one of them."
        );
        let r = Routing::new(&RoutingKeys {
            agent_name: Some("A"),
            ..Default::default()
        })
        .unwrap();
        assert_eq!(r.agent_map_repr().unwrap(), "{'_default': 'A'}");
        let fan = json!({"k": ["a", "b", "a"]});
        let e = Routing::new(&RoutingKeys {
            fan_out: Some(&fan),
            ..Default::default()
        })
        .unwrap_err();
        assert!(
            e.starts_with("fan_out['k'] lists the same agent more than once: ['a']."),
            "{e}"
        );
        let e = Routing::new(&RoutingKeys {
            mode: Some("legacy"),
            ..Default::default()
        })
        .unwrap_err();
        assert_eq!(
            e,
            "environment_server_name is required when environment_routing_mode=legacy"
        );
    }

    #[test]
    fn rows_route_by_map_fan_out_task_source_or_server() {
        let map = json!({"old": "new", "src": "from_src"});
        let fan = json!({"fan": ["x", "y"]});
        let routes = json!({"ts1": "env1"});
        let r = Routing::new(&RoutingKeys {
            agent_map: Some(&map),
            fan_out: Some(&fan),
            environment_server_routes: Some(&routes),
            ..Default::default()
        })
        .unwrap();
        // agent_map replaces agent_ref in place, extra fields dropped.
        let mut a = row(json!({"agent_ref": {"type": "t", "name": "old"}, "x": 1}));
        let got = r.route(&mut a, None).unwrap();
        assert_eq!(got.targets, Targets::Agents(vec!["new".into()]));
        assert_eq!(got.replaced.as_deref(), Some("old"));
        assert_eq!(a, row(json!({"agent_ref": {"name": "new"}, "x": 1})));
        // A task_source mapped; one unmapped is deferred to resolution; fan-out by basis.
        let mut b = row(json!({"task_source": "src"}));
        assert_eq!(
            r.route(&mut b, Some("src")).unwrap().targets,
            Targets::Agents(vec!["from_src".into()])
        );
        let mut c = row(json!({"task_source": "other"}));
        assert_eq!(
            r.route(&mut c, Some("other")).unwrap().targets,
            Targets::Deferred
        );
        let mut d = row(json!({"agent_ref": {"name": "fan"}}));
        assert_eq!(
            r.route(&mut d, None).unwrap().targets,
            Targets::Agents(vec!["x".into(), "y".into()])
        );
        let mut e = row(json!({"responses_create_params": {}}));
        assert_eq!(r.route(&mut e, None).unwrap().targets, Targets::Missing);
        // A taskset row goes to its route, never through agent_map.
        let mut t = row(
            json!({"task_id": {"taskset": "ts1"}, "task_input": {}, "agent_ref": {"name": "old"}}),
        );
        let got = r.route(&mut t, None).unwrap();
        assert_eq!(
            (got.server.as_deref(), got.basis.as_deref()),
            (Some("env1"), Some("ts1"))
        );
        assert_eq!(t["agent_ref"]["name"], "old");
        let mut u = row(json!({"task_id": {"taskset": "ts9"}, "task_input": {}}));
        assert_eq!(
            r.route(&mut u, None).unwrap_err(),
            "No environment server route is configured for taskset 'ts9'"
        );
    }
}
