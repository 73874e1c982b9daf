//! A stand-in for a NeMo Gym server stack: one HTTP server on a free 127.0.0.1 port acting as
//! head server and agent (the contract in the collection spec, §8). `start_v07` adds what
//! `gym env start` v0.7.0 adds: one `legacy_agent` environment server per agent
//! (`<agent>_environment_server`), on a second port, relaying `/run` and `/aggregate_metrics`;
//! `relayed` counts what went through it. Test hooks per row through
//! `fake_behavior`: `transient`, `terminal`, `kill`, `http500`, `http422` (with its reason phrase
//! as Python words it), `sleep:<seconds>`; and the live oracle stack's: `[[sleep=S]]` in the
//! row's text, a `temperature` given as text (422, as v0.7.0's agents refuse it). `start_shaped`
//! builds the stack a recorded case names (agents, their resources servers and relays).
//!
//! With a capture directory (`start_capturing`) it also plays the model server with
//! observability on: the exchanges a responder puts under `__model_calls` in its answer are
//! appended to `<dir>/<rollout id>.capture.jsonl` in upstream's capture format (one JSON object
//! per model exchange, written before `/run` answers), and removed from the answer; a responder
//! asking for `__capture_incomplete` also leaves the `.capture.incomplete` marker.

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use serde_json::{json, Map, Value};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// `(task, rollout, attempt)` of each `/run` received.
pub type RunLog = Arc<Mutex<Vec<(Value, Value, Option<Value>)>>>;

pub const SECRET: &str = "sk-STANDIN-SECRET-0123456789";

/// Answers a `/run` in place of the built-in echo: the result row for a request row. Used for
/// agents whose answer depends on the row (e.g. the pivot agent, scored by the core verifier).
pub type Responder = Arc<dyn Fn(&Map<String, Value>) -> Value + Send + Sync>;

/// A running stand-in; stops when dropped.
pub struct StandIn {
    pub addr: SocketAddr,
    /// `(task, rollout, attempt)` of every `/run` received, as JSON text of each.
    pub runs: RunLog,
    rt: Option<tokio::runtime::Runtime>,
    capture: Arc<Mutex<Option<std::path::PathBuf>>>,
    pub capture_dir: Option<std::path::PathBuf>,
    /// Requests (`/run`, `/aggregate_metrics`) received through an environment server.
    pub relayed: Arc<AtomicU64>,
}

impl StandIn {
    pub fn start(agents: &[&str]) -> StandIn {
        StandIn::start_full(agents, &[], None)
    }

    /// A v0.7.0-shaped stack: each agent fronted by its `<agent>_environment_server`.
    pub fn start_v07(agents: &[&str]) -> StandIn {
        StandIn::start_stack(agents, &[], None, true)
    }

    /// A v0.7.0-shaped stack of a given shape (a recorded case's `stack.json`): `agents` maps each
    /// agent to its resources server, `environment_servers` each `legacy_agent` server to the
    /// agent it fronts. Nothing else (no taskset server).
    pub fn start_shaped(shape: &Value) -> StandIn {
        StandIn::start_config(&[], &[], None, Some(shape))
    }

    /// Also lists `dead` agents in the config, at a port nobody listens on (connection refused).
    pub fn start_with(agents: &[&str], dead: &[&str]) -> StandIn {
        StandIn::start_full(agents, dead, None)
    }

    /// A stand-in whose agents answer with `responder` instead of the echo.
    pub fn start_responding(agents: &[&str], responder: Responder) -> StandIn {
        StandIn::start_full(agents, &[], Some(responder))
    }

    /// As `start_responding`, with the model server writing capture files into `dir`.
    pub fn start_capturing(
        agents: &[&str],
        responder: Responder,
        dir: &std::path::Path,
    ) -> StandIn {
        let mut s = StandIn::start_full(agents, &[], Some(responder));
        *s.capture.lock().unwrap() = Some(dir.to_path_buf());
        s.capture_dir = Some(dir.to_path_buf());
        s
    }

    fn start_full(agents: &[&str], dead: &[&str], responder: Option<Responder>) -> StandIn {
        StandIn::start_stack(agents, dead, responder, false)
    }

    fn start_stack(
        agents: &[&str],
        dead: &[&str],
        responder: Option<Responder>,
        environment_servers: bool,
    ) -> StandIn {
        if !environment_servers {
            return StandIn::start_config(agents, dead, responder, None);
        }
        // Each agent with its resources server (`task_source` rows resolve along this edge) and
        // its `legacy_agent` relay; a taskset server (v0.7.0 `single_agent_turn`) with an agent
        // of its own (an agent behind two servers could not be routed by agent): taskset rows
        // routed to it get episode replies.
        let mut shape = json!({"agents": {}, "environment_servers": {}, "tasksets": true});
        for a in agents {
            shape["agents"][*a] = json!(resources_server_name(a));
            shape["environment_servers"][environment_server_name(a)] = json!(a);
        }
        StandIn::start_config(&[], dead, responder, Some(&shape))
    }

    fn start_config(
        agents: &[&str],
        dead: &[&str],
        responder: Option<Responder>,
        shape: Option<&Value>,
    ) -> StandIn {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        let listener = rt
            .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
            .unwrap();
        let addr = listener.local_addr().unwrap();
        let relay = rt
            .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
            .unwrap();
        let relay_port = relay.local_addr().unwrap().port();
        let mut cfg = Map::new();
        cfg.insert("policy_api_key".into(), json!(SECRET));
        cfg.insert("policy_base_url".into(), json!("http://127.0.0.1:1/v1"));
        for a in agents {
            cfg.insert(
                a.to_string(),
                json!({"responses_api_agents": {"fake_agent": {"entrypoint": "app.py", "host": "127.0.0.1", "port": addr.port(), "api_key": SECRET}}}),
            );
        }
        if let Some(shape) = shape {
            for (a, rs) in shape["agents"].as_object().into_iter().flatten() {
                let rs = rs.as_str().unwrap();
                cfg.insert(
                    a.clone(),
                    json!({"responses_api_agents": {"fake_agent": {"entrypoint": "app.py", "host": "127.0.0.1", "port": addr.port(), "api_key": SECRET,
                        "resources_server": {"type": "resources_servers", "name": rs}}}}),
                );
                cfg.insert(
                    rs.to_string(),
                    json!({"resources_servers": {"fake_resources": {"entrypoint": "app.py", "host": "127.0.0.1", "port": 9}}}),
                );
            }
            if shape["tasksets"] == json!(true) {
                cfg.insert(
                    "taskset_runner_agent".into(),
                    json!({"responses_api_agents": {"fake_agent": {"entrypoint": "app.py", "host": "127.0.0.1", "port": addr.port()}}}),
                );
                cfg.insert(
                    "taskset_environment_server".into(),
                    json!({"environment_servers": {"single_agent_turn": {"entrypoint": "app.py", "agent_server": {"type": "responses_api_agents", "name": "taskset_runner_agent"}, "host": "127.0.0.1", "port": relay_port}}}),
                );
            }
            for (e, a) in shape["environment_servers"]
                .as_object()
                .into_iter()
                .flatten()
            {
                cfg.insert(
                    e.clone(),
                    json!({"environment_servers": {"legacy_agent": {"entrypoint": "app.py", "agent_server": {"type": "responses_api_agents", "name": a}, "host": "127.0.0.1", "port": relay_port}}}),
                );
            }
        }
        for a in dead {
            cfg.insert(
                a.to_string(),
                json!({"responses_api_agents": {"fake_agent": {"entrypoint": "app.py", "host": "127.0.0.1", "port": 9}}}),
            );
        }
        cfg.insert(
            "head_server".into(),
            json!({"host": "127.0.0.1", "port": addr.port()}),
        );
        // JSON is YAML: the body is a JSON string whose content is the config.
        let yaml = serde_json::to_string(&Value::Object(cfg)).unwrap();
        let config_body = Bytes::from(serde_json::to_vec(&yaml).unwrap());
        let runs = Arc::new(Mutex::new(Vec::new()));
        let capture = Arc::new(Mutex::new(None));
        let relayed = Arc::new(AtomicU64::new(0));
        let state = Arc::new(State {
            config_body,
            runs: runs.clone(),
            responder,
            capture: capture.clone(),
            relayed: relayed.clone(),
        });
        rt.spawn(serve(listener, state.clone(), false));
        rt.spawn(serve(relay, state, true));
        StandIn {
            addr,
            runs,
            rt: Some(rt),
            capture,
            capture_dir: None,
            relayed,
        }
    }

    pub fn head(&self) -> String {
        format!("127.0.0.1:{}", self.addr.port())
    }
}

impl Drop for StandIn {
    fn drop(&mut self) {
        if let Some(rt) = self.rt.take() {
            rt.shutdown_background();
        }
    }
}

/// The relay `gym env start` v0.7.0 generates for an agent (`global_config.py`): the agent's
/// name without its type (`simple_agent`, the stand-in's) or `_agent`, then
/// `_environment_server`.
pub fn environment_server_name(agent: &str) -> String {
    let base = agent
        .strip_suffix("_simple_agent")
        .or_else(|| agent.strip_suffix("_agent"))
        .unwrap_or(agent);
    format!("{base}_environment_server")
}

/// The resources server of a v0.7.0 stand-in agent: its name without `_simple_agent` or
/// `_agent` (`example_single_tool_call_simple_agent` → `example_single_tool_call`), else
/// `<agent>_resources`.
pub fn resources_server_name(agent: &str) -> String {
    match agent
        .strip_suffix("_simple_agent")
        .or_else(|| agent.strip_suffix("_agent"))
    {
        Some(base) => base.to_string(),
        None => format!("{agent}_resources"),
    }
}

/// Accepts connections for ever; `relay`: this is the environment servers' port.
async fn serve(listener: tokio::net::TcpListener, state: Arc<State>, relay: bool) {
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            continue;
        };
        let state = state.clone();
        tokio::spawn(async move {
            let svc = hyper::service::service_fn(move |req| handle(state.clone(), req, relay));
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), svc)
                .await;
        });
    }
}

struct State {
    relayed: Arc<AtomicU64>,
    config_body: Bytes,
    runs: RunLog,
    responder: Option<Responder>,
    capture: Arc<Mutex<Option<std::path::PathBuf>>>,
}

/// The capture key upstream's model server files a rollout's calls under.
fn capture_id(row: &Map<String, Value>) -> String {
    let base = match row.get("_ng_rollout_id").and_then(Value::as_str) {
        Some(id) => id.to_string(),
        None => format!("{}-{}", row["_ng_task_index"], row["_ng_rollout_index"]),
    };
    match row.get("_ng_attempt_index").and_then(Value::as_i64) {
        Some(a) if a > 0 => format!("{base}-a{a}"),
        _ => base,
    }
}

fn reply(status: u16, body: impl Into<Bytes>) -> Response<Full<Bytes>> {
    Response::builder()
        .status(status)
        .header("content-type", "application/json")
        .body(Full::new(body.into()))
        .unwrap()
}

async fn handle(
    state: Arc<State>,
    req: Request<Incoming>,
    relay: bool,
) -> Result<Response<Full<Bytes>>, hyper::Error> {
    let (parts, body) = req.into_parts();
    let body = body.collect().await?.to_bytes();
    if relay && parts.method == "POST" {
        state.relayed.fetch_add(1, Ordering::Relaxed);
    }
    Ok(match (parts.method.as_str(), parts.uri.path()) {
        ("GET", "/") => reply(200, r#"{"status":"ok"}"#),
        ("GET", "/global_config_dict_yaml") => reply(200, state.config_body.clone()),
        ("GET", "/server_instances") => reply(200, "[]"),
        ("POST", "/run") => run(&state, &body).await,
        ("POST", "/aggregate_metrics") => aggregate(&body),
        _ => reply(404, r#"{"detail":"Not Found"}"#),
    })
}

async fn run(state: &State, body: &[u8]) -> Response<Full<Bytes>> {
    let Ok(Value::Object(row)) = serde_json::from_slice::<Value>(body) else {
        return reply(422, r#"{"detail":"bad body"}"#);
    };
    if let (Some(episode), Some(task)) = (row.get("episode_id"), row.get("task")) {
        return episode_reply(state, episode, task);
    }
    if let Some(refused) = unprocessable(&row) {
        return refused;
    }
    // The live oracle stack's model hook (`[[sleep=S]]` in a row's text) plays here too, so a
    // recorded case's input runs at the same pace on both.
    let text = String::from_utf8_lossy(body);
    if let Some(s) = text
        .split("[[sleep=")
        .nth(1)
        .and_then(|t| t.split("]]").next())
        .and_then(|t| t.parse::<f64>().ok())
    {
        tokio::time::sleep(std::time::Duration::from_secs_f64(s)).await;
    }
    state.runs.lock().unwrap().push((
        row.get("_ng_task_index").cloned().unwrap_or(Value::Null),
        row.get("_ng_rollout_index").cloned().unwrap_or(Value::Null),
        row.get("_ng_attempt_index").cloned(),
    ));
    if let Some(responder) = &state.responder {
        let mut answer = responder(&row);
        let calls = answer
            .as_object_mut()
            .and_then(|a| a.remove("__model_calls"));
        let incomplete = answer
            .as_object_mut()
            .and_then(|a| a.remove("__capture_incomplete"));
        let dir = state.capture.lock().unwrap().clone();
        if let Some(dir) = dir {
            use std::io::Write;
            let id = capture_id(&row);
            let mut f = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(dir.join(format!("{id}.capture.jsonl")))
                .unwrap();
            for call in calls
                .and_then(|c| c.as_array().cloned())
                .unwrap_or_default()
            {
                match call {
                    // A torn or garbled line, as a crashed writer leaves one.
                    Value::String(raw) => writeln!(f, "{raw}").unwrap(),
                    call => writeln!(f, "{call}").unwrap(),
                }
            }
            if incomplete.is_some() {
                std::fs::write(dir.join(format!("{id}.capture.incomplete")), b"").unwrap();
            }
        }
        return reply(200, serde_json::to_vec(&answer).unwrap());
    }
    let behavior = row
        .get("fake_behavior")
        .and_then(Value::as_str)
        .unwrap_or("ok")
        .to_string();
    if let Some(s) = behavior.strip_prefix("sleep:") {
        tokio::time::sleep(std::time::Duration::from_secs_f64(s.parse().unwrap_or(0.0))).await;
    }
    if behavior == "http500" {
        return reply(500, r#""Internal Server Error: model call failed""#);
    }
    if behavior == "http422" {
        // As v0.7.0's servers (Python 3.13's `http.HTTPStatus`) word it, not hyper's canonical
        // "Unprocessable Entity".
        let mut r = reply(422, r#"{"detail":"bad input"}"#);
        r.extensions_mut()
            .insert(hyper::ext::ReasonPhrase::from_static(
                b"Unprocessable Content",
            ));
        return r;
    }
    let mut result = row.clone();
    result.insert(
        "response".into(),
        json!({"id": "resp_standin", "object": "response", "model": "fake-model", "status": "completed",
               "output": [{"type": "message", "role": "assistant", "id": "msg_1", "status": "completed",
                           "content": [{"type": "output_text", "text": "ok \\boxed{4}", "annotations": []}]}],
               "usage": {"input_tokens": 10, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 5,
                         "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 15}}),
    );
    result.insert(
        "reward".into(),
        row.get("fake_reward").cloned().unwrap_or(json!(1.0)),
    );
    match behavior.as_str() {
        "transient" => {
            result.insert("_ng_failure_class".into(), json!("transient"));
        }
        "terminal" => {
            result.insert("_ng_failure_class".into(), json!("timeout_exceeded"));
            result.insert("_ng_failure_terminal".into(), json!(true));
        }
        "kill" => {
            result.insert("_ng_failure_class".into(), json!("kill_shaped"));
            result.insert("_ng_no_persist".into(), json!(true));
        }
        _ => {}
    }
    reply(200, serde_json::to_vec(&result).unwrap())
}

/// A `/run` body v0.7.0's agents refuse before running: a `temperature` given as text fails the
/// request model, and FastAPI answers 422 in pydantic's words (Python 3.13 names the status
/// "Unprocessable Content").
fn unprocessable(row: &Map<String, Value>) -> Option<Response<Full<Bytes>>> {
    let t = row
        .get("responses_create_params")?
        .get("temperature")?
        .as_str()?;
    let detail = json!({"detail": [{"type": "float_parsing", "loc": ["body", "responses_create_params", "temperature"],
        "msg": "Input should be a valid number, unable to parse string as a number", "input": t}]});
    let mut r = reply(422, serde_json::to_vec(&detail).unwrap());
    r.extensions_mut()
        .insert(hyper::ext::ReasonPhrase::from_static(
            b"Unprocessable Content",
        ));
    Some(r)
}

/// The `taskset_environment_server`'s answer to an episode request (v0.7.0's episode reply):
/// a result with the reward the task input asks for, or a failure when it says `fail`.
fn episode_reply(state: &State, episode: &Value, task: &Value) -> Response<Full<Bytes>> {
    state.runs.lock().unwrap().push((
        episode["rollout_id"].clone(),
        Value::Null,
        Some(episode["attempt"].clone()),
    ));
    let input = &task["task_input"];
    let answer = if input["fail"].as_bool() == Some(true) {
        json!({"episode_id": episode, "task_id": task["task_id"],
               "failure": {"failure_reason": "the task asked to fail", "terminal": false, "stage": null}})
    } else {
        json!({"episode_id": episode, "task_id": task["task_id"],
               "result": {"reward": input.get("reward").cloned().unwrap_or(json!(1.0)), "answer": "ok"}})
    };
    reply(200, serde_json::to_vec(&answer).unwrap())
}

/// Mean/max/min/median/std of numeric top-level and `response.usage` fields, overall and per task.
fn aggregate(body: &[u8]) -> Response<Full<Bytes>> {
    let v: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
    let rows = v["verify_responses"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let numbers = |r: &Value| -> Vec<(String, f64)> {
        let mut out = Vec::new();
        for (k, x) in r.as_object().into_iter().flatten() {
            if let Some(f) = x.as_f64() {
                if !k.starts_with('_') {
                    out.push((k.clone(), f));
                }
            }
        }
        for (k, x) in r["response"]["usage"].as_object().into_iter().flatten() {
            if let Some(f) = x.as_f64() {
                out.push((format!("response.usage.{k}"), f));
            }
        }
        out
    };
    let stats = |rows: &[&Value]| -> Map<String, Value> {
        let mut cols: Vec<(String, Vec<f64>)> = Vec::new();
        for r in rows {
            for (k, f) in numbers(r) {
                match cols.iter_mut().find(|c| c.0 == k) {
                    Some(c) => c.1.push(f),
                    None => cols.push((k, vec![f])),
                }
            }
        }
        let mut m = Map::new();
        for (k, mut xs) in cols {
            xs.sort_by(f64::total_cmp);
            let n = xs.len() as f64;
            let mean = xs.iter().sum::<f64>() / n;
            let var = if xs.len() > 1 {
                xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0)
            } else {
                0.0
            };
            let median = if xs.len() % 2 == 1 {
                xs[xs.len() / 2]
            } else {
                f64::midpoint(xs[xs.len() / 2 - 1], xs[xs.len() / 2])
            };
            m.insert(format!("mean/{k}"), json!(mean));
            m.insert(format!("max/{k}"), json!(xs[xs.len() - 1]));
            m.insert(format!("min/{k}"), json!(xs[0]));
            m.insert(format!("median/{k}"), json!(median));
            m.insert(format!("std/{k}"), json!(var.sqrt()));
        }
        m
    };
    if rows.is_empty() {
        return reply(
            200,
            r#"{"group_level_metrics":[],"agent_metrics":{},"key_metrics":{}}"#,
        );
    }
    let mut tasks: Vec<(Value, Vec<&Value>)> = Vec::new();
    for r in &rows {
        let t = r["_ng_task_index"].clone();
        match tasks.iter_mut().find(|x| x.0 == t) {
            Some(x) => x.1.push(r),
            None => tasks.push((t, vec![r])),
        }
    }
    let groups: Vec<Value> = tasks
        .iter()
        .map(|(t, rs)| {
            let mut m = Map::new();
            m.insert("_ng_task_index".into(), t.clone());
            m.extend(stats(rs));
            Value::Object(m)
        })
        .collect();
    let all: Vec<&Value> = rows.iter().collect();
    let agent = stats(&all);
    let key: Map<String, Value> = agent
        .iter()
        .filter(|(k, _)| k.starts_with("mean/"))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    reply(
        200,
        serde_json::to_vec(
            &json!({"group_level_metrics": groups, "agent_metrics": agent, "key_metrics": key}),
        )
        .unwrap(),
    )
}

/// A harness agent (Hermes-like) with observability on: instead of an `ng_trajectory` it returns
/// `ng_agent_observations` (source `hermes`): a root invocation whose conversation holds one
/// tool call and its output, referencing its two model calls by `(model_ref, response_id)`; a
/// subagent spawned by that tool call, referencing its call by `model_call_id`; the tool's
/// harness timing. Its model server captured those three calls and one nobody claims. Row
/// `case`s: `invalid` (a record kind upstream does not know), `unmatched` (the subagent names a
/// call that was never captured).
pub fn harness_agent(model: &str) -> Responder {
    let model_ref = json!({"type": "responses_api_models", "name": model});
    Arc::new(move |row: &Map<String, Value>| {
        let case = row.get("case").and_then(Value::as_str).unwrap_or("ok");
        let exchange = |id: &str, rid: &str, start: f64, output: Value| {
            json!({"model_call_id": id, "dialect": "responses", "model_ref": model_ref,
                "started_at": start, "completed_at": start + 0.5, "latency_ms": 500, "status_code": 200,
                "request": {"model": "policy", "input": "question"},
                "response": {"id": rid, "model": "policy", "status": "completed", "output": output,
                    "usage": {"input_tokens": 30, "output_tokens": 6}}})
        };
        let by_pair = |rid: &str| json!({"model_ref": model_ref, "response_id": rid});
        let tool = json!([{"type": "function_call", "call_id": "call-1", "name": "delegate", "arguments": "{}"}]);
        let answer = json!([{"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "done"}]}]);
        let sub_call = if case == "unmatched" {
            "never-captured"
        } else {
            "hermes-call-sub"
        };
        let records = if case == "invalid" {
            json!([{"kind": "turn", "invocation_id": "root"}])
        } else {
            json!([
                {"kind": "agent_invocation", "invocation_id": "root", "status": "completed",
                 "model_calls": [by_pair("resp-1"), by_pair("resp-2")],
                 "conversation": [
                    {"type": "message", "role": "user", "content": "question"},
                    {"type": "function_call", "call_id": "call-1", "name": "delegate", "arguments": "{}"},
                    {"type": "function_call_output", "call_id": "call-1", "output": "sub answer"},
                    {"type": "message", "role": "assistant", "content": "done"}]},
                {"kind": "agent_invocation", "invocation_id": "sub", "parent_invocation_id": "root",
                 "spawned_by_tool_call_id": "call-1", "status": "completed",
                 "model_calls": [{"model_call_id": sub_call}]},
                {"kind": "tool_call", "invocation_id": "root", "tool_call_id": "call-1", "tool_name": "delegate",
                 "started_at": 10.5, "completed_at": 11.5, "duration_ms": 1000.0, "timing_source": "harness",
                 "status": "completed"}])
        };
        let mut result = row.clone();
        result.insert(
            "response".into(),
            json!({"id": "resp-2", "status": "completed", "output": answer,
                "usage": {"input_tokens": 90, "output_tokens": 18}}),
        );
        result.insert("reward".into(), json!(1.0));
        result.insert(
            "ng_agent_observations".into(),
            json!({"source": "hermes", "records": records, "gaps": []}),
        );
        result.insert(
            "__model_calls".into(),
            json!([
                exchange("hermes-call-1", "resp-1", 10.0, tool),
                exchange("hermes-call-sub", "resp-sub", 10.6, answer.clone()),
                exchange("hermes-call-2", "resp-2", 11.6, answer),
                exchange("hermes-call-stray", "resp-stray", 12.0, json!([])),
            ]),
        );
        Value::Object(result)
    })
}
