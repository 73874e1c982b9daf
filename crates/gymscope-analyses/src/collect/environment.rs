//! Environment servers (NeMo Gym v0.7.0): every `/run` and `/aggregate_metrics` goes through
//! the environment server that fronts a row's agent, and every result names it
//! (`_ng_environment_server`) and its type (`_ng_result_type`).
//!
//! The head server's config says which servers exist (v0.7.0 `rollout_collection.py`
//! `_environment_servers_by_agent`, `global_config.py` `environment_server_agent_names` /
//! `environment_server_attributed_agent`). The native face reads the config into a
//! [`Topology`]; the routing rules here are plain data, tested natively. A config without any
//! environment server is a head server older than v0.7.0: rows then go to their agent directly
//! and carry no stamp, as they did then.

use super::Row;
use crate::gym::keys::{AGENT_REF, ENVIRONMENT_SERVER};
use serde_json::Value;

/// The key v0.7.0 writes with the server's type (`legacy_agent`, …) on every result.
pub const RESULT_TYPE: &str = "_ng_result_type";

/// One top-level config instance with an `environment_servers` mapping.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EnvironmentServer {
    /// The instance's name (what rows are stamped with).
    pub name: String,
    /// The first key under `environment_servers` (`legacy_agent`, …): `_ng_result_type`.
    pub kind: String,
    /// Agents it references, in config order: fields whose value has `type:
    /// responses_api_agents`, and `agent_server` when its type is absent.
    pub agents: Vec<String>,
    /// `agent_server.name`, else its only agent (results are attributed to it).
    pub attributed: Option<String>,
}

/// What a top-level config instance is (the first key under it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InstanceKind {
    /// `responses_api_agents`
    Agent,
    /// `resources_servers`
    Resources,
    /// Any other server type (`environment_servers`, `responses_api_models`, …)
    OtherServer,
    /// Not a mapping (a plain setting such as `policy_base_url`)
    Setting,
}

/// A top-level config instance, as far as routing needs it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Instance {
    pub name: String,
    pub kind: InstanceKind,
    /// An agent's `resources_server.name`.
    pub resources_server: Option<String>,
    /// Distinct `agent:` pins of its `datasets`, in declaration order.
    pub pins: Vec<String>,
    /// An agent's type (the key under `responses_api_agents`, e.g. `simple_agent`).
    pub agent_type: Option<String>,
    /// A resources server's `allowed_agents` (agent types it accepts), when it declares any;
    /// `Err` when the declaration is neither a list nor a string.
    pub allowed_agents: Option<Result<Vec<String>, String>>,
}

/// The parts of a running config that route rows: every environment server and every
/// top-level instance, in config order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Topology {
    pub servers: Vec<EnvironmentServer>,
    pub instances: Vec<Instance>,
    /// The head config's `allow_unsupported_pairing` (or gymscope's flag, or
    /// `NEMO_GYM_ALLOW_UNSUPPORTED_PAIRING`): no pairing check.
    pub allow_unsupported_pairing: bool,
}

/// Where a row goes and what its result is stamped with.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Destination {
    /// Through this environment server (v0.7.0 stacks).
    Server { name: String, kind: String },
    /// Straight to the agent, no stamp (head servers before v0.7.0).
    Agent(String),
}

impl Topology {
    /// A head server older than v0.7.0 (no environment servers at all).
    pub fn is_legacy(&self) -> bool {
        self.servers.is_empty()
    }

    /// The agent a stamped flat row without one runs on (v0.7.0
    /// `_stamp_environment_server_agent_refs`): its server's attributed agent. Taskset rows name
    /// no agent by design.
    pub fn bound_agent(&self, row: &Row) -> Option<&str> {
        let stamp = row.get(ENVIRONMENT_SERVER)?.as_str()?;
        if agent_name(row).is_some() || super::routing::materialized_taskset(row).is_some() {
            return None;
        }
        self.server(stamp)?.attributed.as_deref()
    }

    /// A top-level `responses_api_agents` instance of the config.
    pub fn is_agent(&self, name: &str) -> bool {
        self.instances
            .iter()
            .any(|i| i.name == name && i.kind == InstanceKind::Agent)
    }

    pub fn server(&self, name: &str) -> Option<&EnvironmentServer> {
        self.servers.iter().find(|s| s.name == name)
    }

    fn names(&self) -> Vec<&str> {
        let mut names: Vec<&str> = self.servers.iter().map(|s| s.name.as_str()).collect();
        names.sort_unstable();
        names
    }

    /// The one server fronting `agent`, worded as v0.7.0's `_environment_server_for_agent`.
    pub fn server_for_agent(&self, agent: &str) -> Result<&EnvironmentServer, String> {
        let fronting: Vec<&EnvironmentServer> = self
            .servers
            .iter()
            .filter(|s| s.agents.iter().any(|a| a == agent))
            .collect();
        match fronting.as_slice() {
            [one] => Ok(one),
            [] => Err(format!(
                "Agent '{agent}' has no environment server, so collection cannot reach it. \
                 Config validation should have caught this before any server started."
            )),
            many => {
                let mut names: Vec<&str> = many.iter().map(|s| s.name.as_str()).collect();
                names.sort_unstable();
                Err(format!(
                    "Agent '{agent}' is fronted by several environment servers: {}. Rows that \
                     route by agent cannot choose between them. Set \
                     environment_routing_mode=legacy with environment_server_name, or route \
                     these rows by taskset.",
                    py_str_list(&names)
                ))
            }
        }
    }

    /// Where a materialized row goes: its stamped server (which must exist and front the row's
    /// agent, v0.7.0 `_validate_environment_servers`), else its agent's one server, else (older
    /// head servers) the agent itself.
    pub fn destination(&self, row: &Row) -> Result<Destination, String> {
        let agent = agent_name(row);
        if let Some(name) = row.get(ENVIRONMENT_SERVER).and_then(Value::as_str) {
            let server = self.server(name).ok_or_else(|| {
                format!(
                    "Environment servers are not present in the running config: {} (available: {})",
                    py_str_list(&[name]),
                    py_str_list(&self.names())
                )
            })?;
            if let Some(agent) = agent {
                if !server.agents.is_empty() && !server.agents.iter().any(|a| a == agent) {
                    let listed: Vec<String> = server
                        .agents
                        .iter()
                        .map(|a| crate::gym::py::str_repr(a))
                        .collect();
                    return Err(format!(
                        "Row agent_ref {} is not an agent of environment server {}: {}",
                        crate::gym::py::str_repr(agent),
                        crate::gym::py::str_repr(name),
                        listed.join(", ")
                    ));
                }
            }
            return Ok(Destination::Server {
                name: server.name.clone(),
                kind: server.kind.clone(),
            });
        }
        let agent = agent.ok_or("the row names neither an agent (`agent_ref.name`) nor an environment server (`_ng_environment_server`)")?;
        if self.is_legacy() {
            return Ok(Destination::Agent(agent.to_string()));
        }
        let server = self.server_for_agent(agent)?;
        Ok(Destination::Server {
            name: server.name.clone(),
            kind: server.kind.clone(),
        })
    }

    /// The server a main-file row is aggregated under (v0.7.0 `_call_aggregate_metrics`): its
    /// stamp (which must be in the config), else its agent's one server; `None` for a row that
    /// names neither (skipped, as upstream).
    pub fn aggregation_server(&self, row: &Row) -> Result<Option<&EnvironmentServer>, String> {
        if let Some(name) = row.get(ENVIRONMENT_SERVER).and_then(Value::as_str) {
            return self.server(name).map(Some).ok_or_else(|| {
                format!(
                    "Result rows are stamped with environment server {}, which is not in the \
                     running config (available: {}); aggregate with the config that produced them",
                    crate::gym::py::str_repr(name),
                    py_str_list(&self.names())
                )
            });
        }
        match agent_name(row) {
            None => Ok(None),
            Some(agent) => self.server_for_agent(agent).map(Some),
        }
    }
}

impl Topology {
    /// v0.7.0's pairing check (`_validate_agent_pairings`): for each (agent, `task_source`) the
    /// rows route to, the task source and the agent's own resources server must accept the
    /// agent's type when they declare `allowed_agents`. `None` when every pairing is accepted.
    pub fn pairing_error(
        &self,
        routes: &std::collections::BTreeSet<(String, Option<String>)>,
    ) -> Option<String> {
        if self.allow_unsupported_pairing {
            return None;
        }
        let find = |name: &str| self.instances.iter().find(|i| i.name == name);
        let mut rejected: std::collections::BTreeMap<(String, String), String> =
            std::collections::BTreeMap::new();
        for (agent, task_source) in routes {
            let Some(instance) = find(agent) else {
                continue;
            };
            let Some(agent_type) = &instance.agent_type else {
                continue;
            };
            for (verifier, relation) in [
                (task_source.as_deref(), "their task_source"),
                (
                    instance.resources_server.as_deref(),
                    "the resources server it runs against",
                ),
            ] {
                let allowed = match verifier
                    .and_then(find)
                    .and_then(|v| v.allowed_agents.as_ref())
                {
                    None => continue,
                    Some(Err(e)) => return Some(e.clone()),
                    Some(Ok(allowed)) => allowed,
                };
                if allowed.iter().any(|a| a == agent_type) {
                    continue;
                }
                let verifier = verifier.unwrap_or_default();
                rejected.insert(
                    (agent.clone(), verifier.to_string()),
                    format!(
                        "  - rows routed to '{agent}' run '{agent_type}', but {relation} '{verifier}' accepts only: {}",
                        allowed.join(", ")
                    ),
                );
            }
        }
        if rejected.is_empty() {
            return None;
        }
        let lines: Vec<&str> = rejected.values().map(String::as_str).collect();
        Some(format!(
            "Rows would be scored by a verifier that does not accept the agent running them:\n{}\n\nRoute these rows to an agent running one of the accepted types, or pass --allow-unsupported-pairing (or set NEMO_GYM_ALLOW_UNSUPPORTED_PAIRING=1) to bypass the check.",
            lines.join("\n")
        ))
    }

    /// The group a rollout is counted under across shards (v0.7.0 `_metrics_group`): its
    /// stamp, else the one server fronting its agent, else the agent's name.
    pub fn metrics_group(&self, row: &Row) -> Option<String> {
        if let Some(stamp) = row.get(ENVIRONMENT_SERVER).and_then(Value::as_str) {
            return Some(stamp.to_string());
        }
        let agent = agent_name(row)?;
        match self.server_for_agent(agent) {
            Ok(s) => Some(s.name.clone()),
            Err(_) => Some(agent.to_string()),
        }
    }
}

/// Appends the server a row went through and its type (v0.7.0 stamps every result, main and
/// sidecar, after the row's own keys).
pub fn stamp(result: &mut Row, destination: &Destination) {
    if let Destination::Server { name, kind } = destination {
        result.insert(ENVIRONMENT_SERVER.into(), Value::from(name.as_str()));
        result.insert(RESULT_TYPE.into(), Value::from(kind.as_str()));
    }
}

/// The name progress and messages key a row by (v0.7.0 `_dispatch_name`): its stamped
/// environment server, else its agent.
pub fn dispatch_name(row: &Row) -> &str {
    row.get(ENVIRONMENT_SERVER)
        .and_then(Value::as_str)
        .or_else(|| agent_name(row))
        .unwrap_or_default()
}

fn agent_name(row: &Row) -> Option<&str> {
    row.get(AGENT_REF)?.get("name")?.as_str()
}

fn py_str_list(names: &[&str]) -> String {
    let items: Vec<String> = names.iter().map(|n| crate::gym::py::str_repr(n)).collect();
    format!("[{}]", items.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn server(name: &str, agents: &[&str]) -> EnvironmentServer {
        EnvironmentServer {
            name: name.into(),
            kind: "legacy_agent".into(),
            agents: agents.iter().map(ToString::to_string).collect(),
            attributed: agents.first().map(ToString::to_string),
        }
    }

    fn row(json: &str) -> Row {
        serde_json::from_str(json).unwrap()
    }

    #[test]
    fn rows_go_through_their_agents_one_server() {
        let t = Topology {
            servers: vec![server("a_env", &["a"]), server("b_env", &["b"])],
            instances: Vec::new(),
            allow_unsupported_pairing: false,
        };
        let d = t
            .destination(&row(r#"{"agent_ref":{"name":"b"}}"#))
            .unwrap();
        assert_eq!(
            d,
            Destination::Server {
                name: "b_env".into(),
                kind: "legacy_agent".into()
            }
        );
        let mut result = row(r#"{"reward":1}"#);
        stamp(&mut result, &d);
        assert_eq!(
            serde_json::to_string(&result).unwrap(),
            r#"{"reward":1,"_ng_environment_server":"b_env","_ng_result_type":"legacy_agent"}"#
        );
        let e = t
            .destination(&row(r#"{"agent_ref":{"name":"c"}}"#))
            .unwrap_err();
        assert!(e.starts_with("Agent 'c' has no environment server"), "{e}");
        // A stamped row goes to its server, which must exist and front the row's agent.
        let d = t
            .destination(&row(r#"{"_ng_environment_server":"a_env"}"#))
            .unwrap();
        assert!(matches!(d, Destination::Server { ref name, .. } if name == "a_env"));
        let e = t
            .destination(&row(r#"{"_ng_environment_server":"x_env"}"#))
            .unwrap_err();
        assert_eq!(e, "Environment servers are not present in the running config: ['x_env'] (available: ['a_env', 'b_env'])");
        let e = t
            .destination(&row(
                r#"{"_ng_environment_server":"a_env","agent_ref":{"name":"b"}}"#,
            ))
            .unwrap_err();
        assert_eq!(
            e,
            "Row agent_ref 'b' is not an agent of environment server 'a_env': 'a'"
        );
    }

    #[test]
    fn several_servers_for_one_agent_are_ambiguous_and_old_stacks_go_direct() {
        let t = Topology {
            servers: vec![server("z_env", &["a"]), server("y_env", &["a"])],
            instances: Vec::new(),
            allow_unsupported_pairing: false,
        };
        let e = t.server_for_agent("a").unwrap_err();
        assert!(
            e.starts_with(
                "Agent 'a' is fronted by several environment servers: ['y_env', 'z_env']."
            ),
            "{e}"
        );
        let old = Topology::default();
        assert_eq!(
            old.destination(&row(r#"{"agent_ref":{"name":"a"}}"#))
                .unwrap(),
            Destination::Agent("a".into())
        );
        let mut result = Row::new();
        stamp(&mut result, &Destination::Agent("a".into()));
        assert!(result.is_empty());
    }

    #[test]
    fn aggregation_groups_by_stamp_then_agent() {
        let t = Topology {
            servers: vec![server("a_env", &["a"])],
            instances: Vec::new(),
            allow_unsupported_pairing: false,
        };
        let by = |json: &str| {
            t.aggregation_server(&row(json))
                .map(|s| s.map(|s| s.name.clone()))
        };
        assert_eq!(
            by(r#"{"agent_ref":{"name":"a"}}"#).unwrap().as_deref(),
            Some("a_env")
        );
        assert_eq!(by(r#"{"reward":1}"#).unwrap(), None);
        let group = |json: &str| t.metrics_group(&row(json));
        assert_eq!(
            group(r#"{"agent_ref":{"name":"a"}}"#).as_deref(),
            Some("a_env")
        );
        assert_eq!(group(r#"{"agent_ref":{"name":"q"}}"#).as_deref(), Some("q"));
        assert_eq!(
            group(r#"{"_ng_environment_server":"s"}"#).as_deref(),
            Some("s")
        );
        let e = by(r#"{"_ng_environment_server":"gone"}"#).unwrap_err();
        assert!(
            e.contains("'gone', which is not in the running config (available: ['a_env'])"),
            "{e}"
        );
    }
}
