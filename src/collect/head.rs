//! Talking to the head server and the agents around a run (native): the head's config (agent
//! addresses; its text holds API keys and is never printed) and `/aggregate_metrics`, shared by a
//! fresh run, a resume and `--merge`.

use super::http::{self, Client};
use super::key::{parse_row, to_line, RolloutKey};
use super::{aggregate, discover, discover::Address, paths, CollectError};
use crate::native::atomic::write_file;
use crate::native::read::for_each_line;
use anyhow::{bail, Result};
use hyper::Method;
use serde_json::Value;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// The head server's config; its text is never printed (it holds API keys).
pub async fn fetch_config(client: &Client, head: &Address) -> Result<serde_yaml::Value> {
    let url =
        http::uri(&head.host, head.port, "/global_config_dict_yaml").map_err(anyhow::Error::msg)?;
    let (status, body) = client.send(Method::GET, &url, None).await.map_err(|_| {
        anyhow::anyhow!(
            "Could not connect to the head server at http://{}:{}. Perhaps you are not running a server or your head server is on a different port? (--head-server)",
            head.host, head.port
        )
    })?;
    if !(200..300).contains(&status) {
        bail!(
            "the head server at http://{}:{} answered /global_config_dict_yaml with HTTP {status}",
            head.host,
            head.port
        );
    }
    discover::parse_config(&body).map_err(anyhow::Error::msg)
}

/// A rollout key and the stripped row's compact JSON.
type KeyedLine = (RolloutKey, Vec<u8>);

/// POSTs the main file's rows, stripped, to each agent's `/aggregate_metrics` and writes
/// `<stem>_aggregate_metrics.json`; `None` when there are no rows (as upstream).
pub async fn aggregate_metrics(
    client: &Client,
    config: &serde_yaml::Value,
    main: &Path,
    max_line_bytes: u64,
) -> Result<Option<PathBuf>> {
    let mut agents: Vec<(String, Vec<KeyedLine>)> = Vec::new();
    let mut slot: HashMap<String, usize> = HashMap::new();
    let name = main.display().to_string();
    for_each_line::<CollectError>(main, &name, max_line_bytes, |span, line, _| {
        let row = parse_row(line).map_err(|e| CollectError::line(&name, span.line, e))?;
        let (Some(agent), Some(key)) = (aggregate::agent_of(&row), RolloutKey::of(&row)) else {
            return Ok(true);
        };
        let i = *slot.entry(agent.to_string()).or_insert_with(|| {
            agents.push((agent.to_string(), Vec::new()));
            agents.len() - 1
        });
        let mut stripped = to_line(&aggregate::strip(&row));
        stripped.pop();
        agents[i].1.push((key, stripped));
        Ok(true)
    })?;
    if agents.is_empty() {
        return Ok(None);
    }
    let mut entries = Vec::new();
    for (agent, mut rows) in agents {
        rows.sort_by(|a, b| a.0.cmp(&b.0));
        let body = aggregate::request_body(rows.iter().map(|(_, b)| b.as_slice()));
        drop(rows);
        let a = discover::agent_address(config, &agent).map_err(anyhow::Error::msg)?;
        let url = http::uri(&a.host, a.port, "/aggregate_metrics").map_err(anyhow::Error::msg)?;
        let (status, answer) = client
            .send(Method::POST, &url, Some(body.into()))
            .await
            .map_err(|e| anyhow::anyhow!("POST {url} failed: {e}"))?;
        if !(200..300).contains(&status) {
            bail!(
                "agent `{agent}` answered /aggregate_metrics with HTTP {status}: {}",
                String::from_utf8_lossy(&answer[..answer.len().min(300)])
            );
        }
        let entry = aggregate::entry(&agent, &answer)
            .map_err(|e| anyhow::anyhow!("agent `{agent}`: /aggregate_metrics: {e}"))?;
        drop(answer);
        let key_metrics: Value =
            crate::collect::key::parse_value(entry.key_metrics.get().as_bytes()).map_err(|e| {
                anyhow::anyhow!("agent `{agent}`: /aggregate_metrics key_metrics: {e}")
            })?;
        crate::say!("\nKey metrics for {agent}:\n{}", pretty4(&key_metrics));
        entries.push(entry);
    }
    let path = paths::aggregate_metrics(main);
    write_file(&path, |w| -> Result<()> {
        Ok(aggregate::write_file(w, &entries)?)
    })?;
    Ok(Some(path))
}

fn pretty4(v: &Value) -> String {
    let mut out = Vec::new();
    let mut ser = serde_json::Serializer::with_formatter(
        &mut out,
        serde_json::ser::PrettyFormatter::with_indent(b"    "),
    );
    serde::Serialize::serialize(v, &mut ser).expect("writing to a Vec cannot fail");
    String::from_utf8(out).unwrap_or_default()
}
