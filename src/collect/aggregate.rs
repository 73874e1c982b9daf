//! Aggregation (upstream's `_call_aggregate_metrics`): each main-file row stripped of its bulky
//! fields is sent to its agent's `/aggregate_metrics`; the answers become
//! `<stem>_aggregate_metrics.json`. The servers compute the numbers; the client only forwards.

use super::{Row, AGENT_REF, RESPONSES_CREATE_PARAMS};
use serde::Serialize;
use serde_json::ser::{Formatter, PrettyFormatter};
use serde_json::Value;
use std::io;

const DROPPED: [&str; 5] = [
    "response",
    RESPONSES_CREATE_PARAMS,
    "ng_agent_observations",
    "ng_model_call_capture",
    "ng_trajectory",
];

/// The row as sent for aggregation: bulky fields dropped; `response.usage` kept when truthy.
pub fn strip(result: &Row) -> Row {
    let mut out: Row = result
        .iter()
        .filter(|(k, _)| !DROPPED.contains(&k.as_str()))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let usage = result
        .get("response")
        .and_then(Value::as_object)
        .and_then(|r| r.get("usage"));
    if super::key::truthy(usage) {
        let mut response = Row::new();
        response.insert("usage".into(), usage.cloned().unwrap_or(Value::Null));
        out.insert("response".into(), Value::Object(response));
    }
    out
}

/// The agent a main-file row is aggregated under (`agent_ref.name`), if any.
pub fn agent_of(result: &Row) -> Option<&str> {
    result.get(AGENT_REF)?.get("name")?.as_str()
}

/// `{"verify_responses":[…]}` from rows already serialized as compact JSON (one per element).
pub fn request_body<'a>(rows: impl Iterator<Item = &'a [u8]>) -> Vec<u8> {
    let mut body = b"{\"verify_responses\":[".to_vec();
    for (i, row) in rows.enumerate() {
        if i > 0 {
            body.push(b',');
        }
        body.extend_from_slice(row);
    }
    body.extend_from_slice(b"]}");
    body
}

/// One entry of the metrics file from an `/aggregate_metrics` answer (fields default to empty,
/// as upstream's `AggregateMetrics` model does).
pub fn entry(agent: &str, answer: Value) -> Result<Value, String> {
    let Value::Object(mut obj) = answer else {
        return Err("the answer is not a JSON object".into());
    };
    let mut field = |name: &str, empty: Value| obj.remove(name).unwrap_or(empty);
    let mut agent_ref = Row::new();
    agent_ref.insert("name".into(), agent.into());
    let mut e = Row::new();
    e.insert(AGENT_REF.into(), Value::Object(agent_ref));
    e.insert(
        "agent_metrics".into(),
        field("agent_metrics", Value::Object(Row::new())),
    );
    e.insert(
        "key_metrics".into(),
        field("key_metrics", Value::Object(Row::new())),
    );
    e.insert(
        "group_level_metrics".into(),
        field("group_level_metrics", Value::Array(vec![])),
    );
    Ok(Value::Object(e))
}

/// The metrics file: orjson `OPT_INDENT_2` (2-space indent, no trailing newline).
pub fn file_bytes(entries: &[Value]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut ser =
        serde_json::Serializer::with_formatter(&mut out, OrjsonPretty(PrettyFormatter::new()));
    entries
        .serialize(&mut ser)
        .expect("writing to a Vec cannot fail");
    out
}

/// serde_json's pretty layout (which is orjson's `OPT_INDENT_2`) with orjson's float digits.
struct OrjsonPretty<'a>(PrettyFormatter<'a>);

impl Formatter for OrjsonPretty<'_> {
    fn write_f64<W: ?Sized + io::Write>(&mut self, w: &mut W, v: f64) -> io::Result<()> {
        crate::json::OrjsonFormatter.write_f64(w, v)
    }
    fn begin_array<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.begin_array(w)
    }
    fn end_array<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.end_array(w)
    }
    fn begin_array_value<W: ?Sized + io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> io::Result<()> {
        self.0.begin_array_value(w, first)
    }
    fn end_array_value<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.end_array_value(w)
    }
    fn begin_object<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.begin_object(w)
    }
    fn end_object<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.end_object(w)
    }
    fn begin_object_key<W: ?Sized + io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> io::Result<()> {
        self.0.begin_object_key(w, first)
    }
    fn begin_object_value<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.begin_object_value(w)
    }
    fn end_object_value<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.end_object_value(w)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::collect::key::parse_row;
    use serde_json::json;

    #[test]
    fn strip_keeps_usage_only() {
        let r = parse_row(br#"{"responses_create_params":{},"response":{"output":[],"usage":{"total_tokens":3}},"reward":1.0,"ng_trajectory":1,"agent_ref":{"name":"a"}}"#).unwrap();
        let s = strip(&r);
        assert_eq!(
            Value::Object(s),
            json!({"reward":1.0,"agent_ref":{"name":"a"},"response":{"usage":{"total_tokens":3}}})
        );
        let r = parse_row(br#"{"response":{"usage":null},"reward":0}"#).unwrap();
        assert_eq!(Value::Object(strip(&r)), json!({"reward":0}));
        assert_eq!(agent_of(&r), None);
    }

    #[test]
    fn metrics_file_is_orjson_indent_2() {
        let e = entry(
            "a",
            json!({"agent_metrics":{"mean/reward":1.0,"x":1e16},"key_metrics":{}}),
        )
        .unwrap();
        let got = String::from_utf8(file_bytes(&[e])).unwrap();
        let want = "[\n  {\n    \"agent_ref\": {\n      \"name\": \"a\"\n    },\n    \"agent_metrics\": {\n      \"mean/reward\": 1.0,\n      \"x\": 1e16\n    },\n    \"key_metrics\": {},\n    \"group_level_metrics\": []\n  }\n]";
        assert_eq!(got, want);
        assert_eq!(
            request_body([&b"{}"[..], b"{\"a\":1}"].into_iter()),
            b"{\"verify_responses\":[{},{\"a\":1}]}"
        );
    }
}
