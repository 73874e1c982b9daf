//! Server discovery as upstream does it: `GET /global_config_dict_yaml` on the head server
//! returns a JSON string whose content is the merged YAML config; an agent's address is
//! `cfg[agent]` → first value → first value → `host`, `port`.
//!
//! The config holds secrets (model API keys): nothing here puts a config value other than an
//! agent's host and port into a message.

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
    let not_found = || {
        let agents = agent_names(cfg);
        format!(
            "agent `{agent}` is not in the head server's config (agents there: {})",
            if agents.is_empty() {
                "none".to_string()
            } else {
                agents.join(", ")
            }
        )
    };
    let first =
        |v: &Value| -> Option<Value> { v.as_mapping()?.iter().next().map(|(_, v)| v.clone()) };
    let server = cfg.get(agent).ok_or_else(not_found)?;
    let inner = first(server).and_then(|t| first(&t)).ok_or_else(|| {
        format!("the head server's config entry for `{agent}` has no server under it")
    })?;
    let host = match inner.get("host") {
        Some(Value::String(h)) => h.clone(),
        _ => {
            return Err(format!(
                "the head server's config gives agent `{agent}` no host"
            ))
        }
    };
    let port = match inner.get("port") {
        Some(Value::Number(n)) => n.as_u64().and_then(|p| u16::try_from(p).ok()),
        Some(Value::String(s)) => s.parse().ok(),
        _ => None,
    }
    .ok_or_else(|| format!("the head server's config gives agent `{agent}` no valid port"))?;
    Ok(Address { host, port })
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
        assert!(parse_address("localhost").is_err());
    }
}
