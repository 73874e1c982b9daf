//! Talking to the head server and the servers around a run (native): the head's config (server
//! addresses; its text holds API keys and is never printed) and `/aggregate_metrics`, shared by a
//! fresh run, a resume, `--merge` and `aggregate`.

use super::environment::Topology;
use super::http::{self, Client};
use super::key::{parse_row, to_line, RolloutKey};
use super::{aggregate, discover, discover::Address, paths, CollectError, Row};
use crate::native::files::Cleared;
use crate::native::read::for_each_line;
use anyhow::{bail, Result};
use gymscope_core::profile::labels::label_run_names;
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

/// One aggregation request: where it goes, the rows and (v0.7.0) the agent that labels it.
struct Group {
    server: Option<String>,
    agent: Option<String>,
    rows: Vec<KeyedLine>,
}

#[derive(Default)]
struct Groups {
    groups: Vec<Group>,
    slot: HashMap<String, usize>,
}

impl Groups {
    /// Files a row under its environment server (its agent on older head servers); a row that
    /// names neither is skipped, as upstream skips it.
    fn add(&mut self, topology: &Topology, row: &Row) -> Result<(), String> {
        let Some(key) = RolloutKey::of(row) else {
            return Ok(());
        };
        let agent = aggregate::agent_of(row);
        let (group_key, server) = if topology.is_legacy() {
            let Some(agent) = agent else {
                return Ok(());
            };
            (agent.to_string(), None)
        } else {
            match topology.aggregation_server(row)? {
                None => return Ok(()),
                Some(s) => (s.name.clone(), Some(s)),
            }
        };
        let groups = &mut self.groups;
        let i = *self.slot.entry(group_key.clone()).or_insert_with(|| {
            // The first row's agent labels the server; a row naming none takes the server's own.
            let agent = agent
                .map(String::from)
                .or_else(|| server.and_then(|s| s.attributed.clone()));
            groups.push(Group {
                server: server.map(|s| s.name.clone()),
                agent: if server.is_some() {
                    agent
                } else {
                    Some(group_key)
                },
                rows: Vec::new(),
            });
            groups.len() - 1
        });
        let mut stripped = to_line(&aggregate::strip(row));
        stripped.pop();
        groups[i].rows.push((key, stripped));
        Ok(())
    }
}

/// POSTs the rows of the rollouts files `sources`, stripped, to `/aggregate_metrics` (one
/// request per environment server, v0.7.0; per agent on older head servers) and writes
/// `<output stem>_aggregate_metrics.json` (an output `cleared` names); `None` when there are no
/// rows (as upstream).
pub async fn aggregate_metrics(
    client: &Client,
    config: &serde_yaml::Value,
    topology: &Topology,
    sources: &[PathBuf],
    extra: &[Row],
    (output, cleared): (&Path, &Cleared),
    max_line_bytes: u64,
) -> Result<Option<PathBuf>> {
    let mut groups = Groups::default();
    for main in sources {
        let name = main.display().to_string();
        for_each_line::<CollectError>(main, &name, max_line_bytes, |span, line, _| {
            let row = parse_row(line).map_err(|e| CollectError::line(&name, span.line, e))?;
            groups
                .add(topology, &row)
                .map_err(|e| CollectError::line(&name, span.line, e))?;
            Ok(true)
        })?;
    }
    // Rows counted as scored zeros (`collect::counted`), scored with the rest.
    for row in extra {
        groups.add(topology, row).map_err(anyhow::Error::msg)?;
    }
    let mut groups = groups.groups;
    if groups.is_empty() {
        return Ok(None);
    }
    for g in &mut groups {
        g.rows.sort_by(|a, b| a.0.cmp(&b.0));
    }
    // Upstream groups the rows after sorting them by key: a server's place is its first key's.
    groups.sort_by(|a, b| a.rows[0].0.cmp(&b.rows[0].0));
    let labels = label_run_names(groups.iter().map(|g| {
        (
            Some(
                g.server
                    .as_deref()
                    .or(g.agent.as_deref())
                    .unwrap_or_default(),
            ),
            g.agent.as_deref(),
        )
    }));
    let mut entries = Vec::new();
    for g in groups {
        let target = g.server.clone().or(g.agent.clone()).unwrap_or_default();
        let label = labels
            .get(&target)
            .cloned()
            .unwrap_or_else(|| target.clone());
        let body = aggregate::request_body(g.rows.iter().map(|(_, b)| b.as_slice()));
        drop(g.rows);
        let (what, a) = match &g.server {
            Some(s) => (
                "environment server",
                discover::server_address(config, s, "environment server"),
            ),
            None => ("agent", discover::agent_address(config, &target)),
        };
        let a = a.map_err(anyhow::Error::msg)?;
        let url = http::uri(&a.host, a.port, "/aggregate_metrics").map_err(anyhow::Error::msg)?;
        let (status, answer) = client
            .send(Method::POST, &url, Some(body.into()))
            .await
            .map_err(|e| anyhow::anyhow!("POST {url} failed: {e}"))?;
        if !(200..300).contains(&status) {
            bail!(
                "{what} `{target}` answered /aggregate_metrics with HTTP {status}: {}",
                String::from_utf8_lossy(&answer[..answer.len().min(300)])
            );
        }
        let entry = match &g.server {
            Some(s) => aggregate::server_entry(&label, s, &answer),
            None => aggregate::entry(&label, &answer),
        }
        .map_err(|e| anyhow::anyhow!("{what} `{target}`: /aggregate_metrics: {e}"))?;
        drop(answer);
        let key_metrics: Value =
            crate::collect::key::parse_value(entry.key_metrics.get().as_bytes()).map_err(|e| {
                anyhow::anyhow!("{what} `{target}`: /aggregate_metrics key_metrics: {e}")
            })?;
        crate::say!("\nKey metrics for {label}:\n{}", pretty4(&key_metrics));
        entries.push(entry);
    }
    let path = paths::aggregate_metrics(output);
    cleared.write_file(&path, |w| -> Result<()> {
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
