//! A plain-HTTP client for the Gym servers (no TLS: head and agents are `http://host:port`),
//! shaped like upstream's aiohttp session: no timeouts of its own, no cookies, pooled
//! keep-alive connections.

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::{Method, Request, Uri};
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use std::time::Duration;

#[derive(Clone)]
pub struct Client(hyper_util::client::legacy::Client<HttpConnector, Full<Bytes>>);

/// The request never got a complete answer (refused, reset, closed early): worth retrying.
#[derive(Debug)]
pub struct TransportError(pub String);

impl std::fmt::Display for TransportError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl Default for Client {
    fn default() -> Self {
        let mut connector = HttpConnector::new();
        connector.set_nodelay(true);
        connector.set_keepalive(Some(Duration::from_secs(60)));
        Client(
            hyper_util::client::legacy::Client::builder(TokioExecutor::new())
                .pool_idle_timeout(Duration::from_secs(15))
                .build(connector),
        )
    }
}

impl Client {
    /// Sends one request and reads the whole answer: `(status, body)`.
    pub async fn send(
        &self,
        method: Method,
        uri: &Uri,
        body: Option<Bytes>,
    ) -> Result<(u16, Bytes), TransportError> {
        let (status, _, body) = self.send_full(method, uri, body).await?;
        Ok((status, body))
    }

    /// [`Client::send`], with the reason phrase the server sent (`Unprocessable Content`), which
    /// v0.7.0's aiohttp puts in a failure's message: hyper keeps it when it is not the status's
    /// canonical one (`ext::ReasonPhrase`), so the canonical one stands for the rest.
    pub async fn send_full(
        &self,
        method: Method,
        uri: &Uri,
        body: Option<Bytes>,
    ) -> Result<(u16, String, Bytes), TransportError> {
        let mut req = Request::builder().method(method).uri(uri.clone());
        if body.is_some() {
            req = req.header("content-type", "application/json");
        }
        let req = req
            .body(Full::new(body.unwrap_or_default()))
            .map_err(|e| TransportError(e.to_string()))?;
        let resp = self
            .0
            .request(req)
            .await
            .map_err(|e| TransportError(chain(&e)))?;
        let status = resp.status().as_u16();
        let reason = match resp.extensions().get::<hyper::ext::ReasonPhrase>() {
            Some(phrase) => String::from_utf8_lossy(phrase.as_bytes()).into_owned(),
            None => resp.status().canonical_reason().unwrap_or("").to_string(),
        };
        let body = resp
            .into_body()
            .collect()
            .await
            .map_err(|e| TransportError(chain(&e)))?
            .to_bytes();
        Ok((status, reason, body))
    }
}

/// An error with its causes, `a: b: c`, since hyper's top-level messages say little.
fn chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut cur = e.source();
    while let Some(c) = cur {
        s.push_str(": ");
        s.push_str(&c.to_string());
        cur = c.source();
    }
    s
}

pub fn uri(host: &str, port: u16, path: &str) -> Result<Uri, String> {
    let host = if host.contains(':') && !host.starts_with('[') {
        format!("[{host}]")
    } else {
        host.to_string()
    };
    format!("http://{host}:{port}{path}")
        .parse()
        .map_err(|e| format!("bad server address {host}:{port}: {e}"))
}
