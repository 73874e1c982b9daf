//! Server discovery as upstream does it: `GET /global_config_dict_yaml` on the head server
//! returns a JSON string whose content is the merged YAML config; an agent's address is
//! `cfg[agent]` → first value → first value → `host`, `port`.
//!
//! The config holds secrets (model API keys): nothing here puts a config value other than an
//! agent's host and port into a message.

use gymscope_core::collect::environment::{EnvironmentServer, Instance, InstanceKind, Topology};
use serde_yaml::Value;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Address {
    pub host: String,
    pub port: u16,
}

/// Parses `host:port` (`--head-server`).
pub fn parse_address(s: &str) -> Result<Address, String> {
    let (host, port) = s
        .rsplit_once(':')
        .ok_or_else(|| format!("--head-server expects HOST:PORT, got `{s}`"))?;
    let port = port
        .parse()
        .map_err(|_| format!("--head-server expects HOST:PORT with a port number, got `{s}`"))?;
    let host = host.trim_start_matches('[').trim_end_matches(']');
    Ok(Address {
        host: host.to_string(),
        port,
    })
}

/// The head server's answer → the config tree.
pub fn parse_config(body: &[u8]) -> Result<Value, String> {
    let yaml = match serde_json::from_slice::<String>(body) {
        Ok(text) => text,
        // Not a JSON string: take the body itself as YAML (JSON is YAML too).
        Err(_) => String::from_utf8_lossy(body).into_owned(),
    };
    serde_yaml::from_str(&yaml).map_err(|e| {
        let at = e
            .location()
            .map(|l| format!(" (line {}, column {})", l.line(), l.column()))
            .unwrap_or_default();
        format!("the head server's config is not valid YAML{at}")
    })
}

/// The agent server's address from the config.
pub fn agent_address(cfg: &Value, agent: &str) -> Result<Address, String> {
    server_address(cfg, agent, "agent")
}

/// A server's address: `cfg[name]` → first value → first value → `host`, `port` (v0.7.0 looks up
/// environment servers as agents). `what` names it in messages ("agent", "environment server").
pub fn server_address(cfg: &Value, name: &str, what: &str) -> Result<Address, String> {
    let not_found = || {
        let agents = agent_names(cfg);
        format!(
            "{what} `{name}` is not in the head server's config (agents there: {})",
            if agents.is_empty() {
                "none".to_string()
            } else {
                agents.join(", ")
            }
        )
    };
    let first =
        |v: &Value| -> Option<Value> { v.as_mapping()?.iter().next().map(|(_, v)| v.clone()) };
    let server = cfg.get(name).ok_or_else(not_found)?;
    let inner = first(server).and_then(|t| first(&t)).ok_or_else(|| {
        format!("the head server's config entry for `{name}` has no server under it")
    })?;
    let host = match inner.get("host") {
        Some(Value::String(h)) => h.clone(),
        _ => {
            return Err(format!(
                "the head server's config gives {what} `{name}` no host"
            ))
        }
    };
    let port = match inner.get("port") {
        Some(Value::Number(n)) => n.as_u64().and_then(|p| u16::try_from(p).ok()),
        Some(Value::String(s)) => s.parse().ok(),
        _ => None,
    }
    .ok_or_else(|| format!("the head server's config gives {what} `{name}` no valid port"))?;
    Ok(Address { host, port })
}

/// The environment servers of the config (v0.7.0 `_environment_servers_by_agent`): every
/// top-level instance with an `environment_servers` mapping; its type is the first key under
/// it, its agents the fields whose value has `type: responses_api_agents` (and `agent_server`
/// when its type is absent), in config order.
pub fn topology(cfg: &Value) -> Topology {
    let Some(map) = cfg.as_mapping() else {
        return Topology::default();
    };
    let mut servers = Vec::new();
    let instances = map
        .iter()
        .filter_map(|(name, block)| Some(instance(name.as_str()?, block)))
        .collect();
    for (name, instance) in map {
        let (Some(name), Some(group)) = (
            name.as_str(),
            instance
                .get("environment_servers")
                .and_then(Value::as_mapping),
        ) else {
            continue;
        };
        let Some((kind, inner)) = group.iter().next() else {
            continue;
        };
        let refs: Vec<(&str, &Value)> = inner
            .as_mapping()
            .into_iter()
            .flatten()
            .filter_map(|(field, reference)| {
                let field = field.as_str()?;
                reference.as_mapping()?;
                let kind = reference.get("type");
                let is_agent = match kind {
                    Some(Value::String(t)) => t == "responses_api_agents",
                    None | Some(Value::Null) => field == "agent_server",
                    _ => false,
                };
                is_agent.then_some((field, reference))
            })
            .collect();
        let agents: Vec<String> = refs
            .iter()
            .filter_map(|(_, r)| yaml_text(r.get("name")?))
            .collect();
        let attributed = match inner.get("agent_server") {
            Some(r) if r.is_mapping() => r.get("name").and_then(yaml_text),
            _ if agents.len() == 1 => agents.first().cloned(),
            _ => None,
        };
        servers.push(EnvironmentServer {
            name: name.to_string(),
            kind: yaml_text(kind).unwrap_or_default(),
            agents,
            attributed,
        });
    }
    // v0.7.0 `pairing_override_enabled`: the head config's key, or the environment variable.
    let allow_unsupported_pairing = cfg
        .get("allow_unsupported_pairing")
        .is_some_and(yaml_truthy)
        || std::env::var("NEMO_GYM_ALLOW_UNSUPPORTED_PAIRING")
            .is_ok_and(|v| !matches!(v.to_lowercase().as_str(), "" | "0" | "false"));
    Topology {
        servers,
        instances,
        allow_unsupported_pairing,
    }
}

/// One top-level instance: its kind, an agent's resources server, its datasets' agent pins.
fn instance(name: &str, block: &Value) -> Instance {
    let kind = match block.as_mapping() {
        None => InstanceKind::Setting,
        Some(_) if block.get("responses_api_agents").is_some() => InstanceKind::Agent,
        Some(_) if block.get("resources_servers").is_some() => InstanceKind::Resources,
        Some(_) => InstanceKind::OtherServer,
    };
    let inner = block
        .as_mapping()
        .and_then(|m| m.iter().next())
        .and_then(|(_, t)| t.as_mapping()?.iter().next().map(|(_, v)| v));
    let resources_server = inner
        .and_then(|i| i.get("resources_server"))
        .and_then(|r| r.get("name"))
        .and_then(Value::as_str)
        .map(String::from);
    let mut pins: Vec<String> = Vec::new();
    for dataset in inner
        .and_then(|i| i.get("datasets"))
        .and_then(Value::as_sequence)
        .into_iter()
        .flatten()
    {
        if let Some(pin) = dataset.get("agent").and_then(Value::as_str) {
            if !pins.iter().any(|p| p == pin) {
                pins.push(pin.to_string());
            }
        }
    }
    let agent_type = (kind == InstanceKind::Agent)
        .then(|| {
            block
                .as_mapping()?
                .iter()
                .next()?
                .1
                .as_mapping()?
                .iter()
                .next()?
                .0
                .as_str()
                .map(String::from)
        })
        .flatten();
    let allowed_agents = (kind == InstanceKind::Resources)
        .then(|| {
            let servers = block.get("resources_servers")?.as_mapping()?;
            if servers.len() != 1 {
                return None;
            }
            let (implementation, server) = servers.iter().next()?;
            match server.get("allowed_agents")? {
                v if !yaml_truthy(v) => None,
                Value::String(s) => Some(Ok(vec![s.clone()])),
                Value::Sequence(items) => Some(Ok(items.iter().filter_map(yaml_text).collect())),
                other => Some(Err(format!(
                    "'{name}.resources_servers.{}.allowed_agents' must be a list of agent types, got {}.",
                    yaml_text(implementation).unwrap_or_default(),
                    match other {
                        Value::Mapping(_) => "DictConfig",
                        Value::Number(_) => "int",
                        Value::Bool(_) => "bool",
                        _ => "value",
                    }
                ))),
            }
        })
        .flatten();
    Instance {
        name: name.to_string(),
        kind,
        resources_server,
        pins,
        agent_type,
        allowed_agents,
    }
}

/// Python's truthiness of a YAML value.
fn yaml_truthy(v: &Value) -> bool {
    match v {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64().is_some_and(|x| x != 0.0),
        Value::String(s) => !s.is_empty(),
        Value::Sequence(s) => !s.is_empty(),
        Value::Mapping(m) => !m.is_empty(),
        Value::Tagged(_) => true,
    }
}

/// A scalar as Python's `str()` would give it (names may be numbers in YAML).
fn yaml_text(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(if *b { "True" } else { "False" }.to_string()),
        _ => None,
    }
}

/// Top-level names that are agent servers: for a helpful message, names only.
fn agent_names(cfg: &Value) -> Vec<String> {
    let Some(map) = cfg.as_mapping() else {
        return Vec::new();
    };
    map.iter()
        .filter(|(_, v)| v.get("responses_api_agents").is_some())
        .filter_map(|(k, _)| k.as_str().map(String::from))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn environment_servers_as_v07_reads_them() {
        // The shape `gym env start` (v0.7.0) gives an agent: a generated legacy_agent relay.
        let yaml = "a_agent:\n  responses_api_agents:\n    simple_agent:\n      host: 127.0.0.1\n      port: 1\na_env:\n  environment_servers:\n    legacy_agent:\n      agent_server:\n        type: responses_api_agents\n        name: a_agent\n      host: 127.0.0.1\n      port: 2\nduo:\n  environment_servers:\n    two_player:\n      user:\n        type: responses_api_agents\n        name: u\n      assistant:\n        type: responses_api_agents\n        name: v\n      judge:\n        type: resources_servers\n        name: j\n";
        let cfg = parse_config(yaml.as_bytes()).unwrap();
        let t = topology(&cfg);
        assert_eq!(
            t.servers,
            [
                EnvironmentServer {
                    name: "a_env".into(),
                    kind: "legacy_agent".into(),
                    agents: vec!["a_agent".into()],
                    attributed: Some("a_agent".into()),
                },
                EnvironmentServer {
                    name: "duo".into(),
                    kind: "two_player".into(),
                    agents: vec!["u".into(), "v".into()],
                    attributed: None,
                }
            ]
        );
        assert_eq!(
            server_address(&cfg, "a_env", "environment server")
                .unwrap()
                .port,
            2
        );
    }

    #[test]
    fn finds_agent_and_keeps_secrets_out_of_messages() {
        let yaml = "policy_api_key: sk-SECRET\nmy_agent:\n  responses_api_agents:\n    simple_agent:\n      entrypoint: app.py\n      host: 127.0.0.1\n      port: 12345\n      model: ${policy_model_name}\nhead_server:\n  host: 127.0.0.1\n  port: 11000\n";
        let body = serde_json::to_vec(yaml).unwrap();
        let cfg = parse_config(&body).unwrap();
        assert_eq!(
            agent_address(&cfg, "my_agent").unwrap(),
            Address {
                host: "127.0.0.1".into(),
                port: 12345
            }
        );
        let e = agent_address(&cfg, "other").unwrap_err();
        assert_eq!(
            e,
            "agent `other` is not in the head server's config (agents there: my_agent)"
        );
        let e = parse_config(b"\"key: [sk-SECRET\"").unwrap_err();
        assert!(!e.contains("SECRET"), "{e}");
        assert_eq!(parse_address("127.0.0.1:11000").unwrap().port, 11000);
        assert!(topology(&cfg).is_legacy());
        assert!(parse_address("localhost").is_err());
    }
}
