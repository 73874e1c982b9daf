//! Aggregation (upstream's `_call_aggregate_metrics`): each main-file row stripped of its bulky
//! fields is sent to the `/aggregate_metrics` of the environment server it ran through (v0.7.0;
//! its agent on older head servers); the answers become `<stem>_aggregate_metrics.json`. The
//! servers compute the numbers; the client only forwards.

use super::Row;
use crate::gym::keys::{AGENT_REF, ENVIRONMENT_SERVER, RESPONSES_CREATE_PARAMS};
use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::Value;
use std::io;

const DROPPED: [&str; 5] = [
    "response",
    RESPONSES_CREATE_PARAMS,
    "ng_agent_observations",
    "ng_model_call_capture",
    "ng_trajectory",
];

/// The row as sent for aggregation: bulky fields dropped; of `response`, `usage` and
/// `incomplete_details` kept when not null (v0.7.0 `_call_aggregate_metrics`).
pub fn strip(result: &Row) -> Row {
    let mut out: Row = result
        .iter()
        .filter(|(k, _)| !DROPPED.contains(&k.as_str()))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let response = result.get("response").and_then(Value::as_object);
    let kept: Row = ["usage", "incomplete_details"]
        .into_iter()
        .filter_map(|k| {
            let v = response?.get(k).filter(|v| !v.is_null())?;
            Some((k.to_string(), v.clone()))
        })
        .collect();
    if !kept.is_empty() {
        out.insert("response".into(), Value::Object(kept));
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

/// One entry of the metrics file: a label, the environment server, and the parts of its
/// `/aggregate_metrics` answer, kept as raw JSON text. Per-task metrics of a large run are big;
/// building a `Value` tree of them took 592 MB for 100,000 tasks, the raw text a tenth of that.
pub struct Entry {
    /// `agent_ref.name`: the agent, or the server's name where the agent names no single run
    /// (v0.7.0 `label_runs`).
    pub agent: String,
    /// `_ng_environment_server` (v0.7.0 stacks; `None` on older head servers).
    pub server: Option<String>,
    pub agent_metrics: Box<RawValue>,
    pub key_metrics: Box<RawValue>,
    pub group_level_metrics: Box<RawValue>,
    /// Every other field of the answer, in its order (v0.6 servers add `repeat_level_metrics`
    /// and `perf_summary`): kept as the server returns them, after the three above.
    pub extra: Vec<(String, Box<RawValue>)>,
}

/// An environment server's answer as v0.7.0 writes it: exactly `agent_ref`,
/// `_ng_environment_server`, the three metric fields, `repeat_level_metrics` (default `[]`) and
/// `perf_summary` when not null; other answer fields are dropped.
pub fn server_entry(label: &str, server: &str, answer: &[u8]) -> Result<Entry, String> {
    let mut e = entry(label, answer)?;
    let field = |k: &str| {
        e.extra
            .iter()
            .find(|(name, _)| name == k)
            .map(|(_, v)| v.clone())
    };
    let repeats = field("repeat_level_metrics")
        .unwrap_or_else(|| RawValue::from_string("[]".into()).expect("valid"));
    let perf = field("perf_summary");
    e.extra = std::iter::once(("repeat_level_metrics".to_string(), repeats))
        .chain(perf.map(|p| ("perf_summary".to_string(), p)))
        .collect();
    e.server = Some(server.to_string());
    Ok(e)
}

/// A field of the answer is a dict (`list`: a list of dicts), as v0.7.0's model requires.
fn check_shape(name: &str, v: &RawValue, list: bool) -> Result<(), String> {
    let value: serde_json::Value =
        serde_json::from_str(v.get()).map_err(|e| format!("{name}: {e}"))?;
    let ok = if list {
        value
            .as_array()
            .is_some_and(|items| items.iter().all(serde_json::Value::is_object))
    } else {
        value.is_object()
    };
    if ok {
        Ok(())
    } else {
        Err(format!(
            "{name}: expected {}, got {}",
            if list {
                "a list of objects"
            } else {
                "an object"
            },
            crate::gym::py::repr(&value)
        ))
    }
}

/// Reads an answer (fields default to empty, as upstream's `AggregateMetrics` model does); on
/// head servers older than v0.7.0 every other field is kept as the agent returned it.
pub fn entry(agent: &str, answer: &[u8]) -> Result<Entry, String> {
    let fields = serde_json::from_slice::<RawFields>(answer)
        .map_err(|e| format!("the answer is not a JSON object: {e}"))?
        .0;
    let mut agent_metrics = None;
    let mut key_metrics = None;
    let mut group_level_metrics = None;
    let mut extra = Vec::new();
    for (k, v) in fields {
        // `null` is the model's default, as for a missing field.
        let v = (v.get() != "null").then_some(v);
        match k.as_str() {
            "agent_metrics" => agent_metrics = v,
            "key_metrics" => key_metrics = v,
            "group_level_metrics" => group_level_metrics = v,
            _ => extra.extend(v.map(|v| (k, v))),
        }
    }
    let or = |v: Option<Box<RawValue>>, empty: &str| {
        v.unwrap_or_else(|| RawValue::from_string(empty.into()).expect("valid"))
    };
    // v0.7.0 validates the answer into its `AggregateMetrics` model: dicts where it has dicts
    // and lists of dicts where it has lists; anything else fails the run, not the file.
    for (name, v, list) in [
        ("agent_metrics", &agent_metrics, false),
        ("key_metrics", &key_metrics, false),
        ("group_level_metrics", &group_level_metrics, true),
    ] {
        if let Some(v) = v {
            check_shape(name, v, list)?;
        }
    }
    if let Some((_, v)) = extra.iter().find(|(k, _)| k == "repeat_level_metrics") {
        check_shape("repeat_level_metrics", v, true)?;
    }
    Ok(Entry {
        agent: agent.to_string(),
        server: None,
        agent_metrics: or(agent_metrics, "{}"),
        key_metrics: or(key_metrics, "{}"),
        group_level_metrics: or(group_level_metrics, "[]"),
        extra,
    })
}

/// A JSON object's members as raw text, in their order (duplicates kept, last one wins later).
struct RawFields(Vec<(String, Box<RawValue>)>);

impl<'de> serde::Deserialize<'de> for RawFields {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = RawFields;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut a: A,
            ) -> Result<RawFields, A::Error> {
                let mut out: Vec<(String, Box<RawValue>)> = Vec::new();
                while let Some((k, v)) = a.next_entry::<String, Box<RawValue>>()? {
                    out.retain(|(o, _)| *o != k);
                    out.push((k, v));
                }
                Ok(RawFields(out))
            }
        }
        d.deserialize_map(V)
    }
}

/// A raw JSON value re-serialized through the caller's serializer (so it takes the file's
/// indentation and number format) without being built in memory.
struct Transcoded<'a>(&'a RawValue);

impl Serialize for Transcoded<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut de = serde_json::Deserializer::from_str(self.0.get());
        serde_transcode::Transcoder::new(&mut de).serialize(serializer)
    }
}

impl Serialize for Entry {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut m = serializer.serialize_map(Some(5 + self.extra.len()))?;
        m.serialize_entry(AGENT_REF, &serde_json::json!({ "name": self.agent }))?;
        if let Some(server) = &self.server {
            m.serialize_entry(ENVIRONMENT_SERVER, server)?;
        }
        m.serialize_entry("agent_metrics", &Transcoded(&self.agent_metrics))?;
        m.serialize_entry("key_metrics", &Transcoded(&self.key_metrics))?;
        m.serialize_entry(
            "group_level_metrics",
            &Transcoded(&self.group_level_metrics),
        )?;
        for (k, v) in &self.extra {
            m.serialize_entry(k, &Transcoded(v))?;
        }
        m.end()
    }
}

/// Writes the metrics file: orjson `OPT_INDENT_2` (2-space indent, no trailing newline).
pub fn write_file<W: io::Write>(w: W, entries: &[Entry]) -> io::Result<()> {
    crate::json::to_writer_orjson_pretty(w, entries)
}

/// What the score leaves out, in v0.7.0's words (`_coverage_report`): empty when it covers
/// every expected rollout; the classes named are the failures routed this run (`hint` says
/// where they are).
pub fn coverage_report(expected: u64, scored: u64, routed: &[(String, u64)], hint: &str) -> String {
    let Some(missing) = expected.checked_sub(scored).filter(|m| *m > 0) else {
        return String::new();
    };
    let mut routed: Vec<&(String, u64)> = routed.iter().collect();
    routed.sort();
    let routed: Vec<String> = routed.iter().map(|(k, n)| format!("{n} {k}")).collect();
    let routed = if routed.is_empty() {
        String::new()
    } else {
        format!("{} routed this run; ", routed.join(", "))
    };
    format!(
        "\nRollouts missing from the score: {missing} of {expected} materialized ({routed}see {hint})\nMetrics cover: {scored} of {expected} rollouts"
    )
}

/// The lines v0.7.0 prints before scoring with counted zeros: failures of the listed classes
/// (when some are listed) and materialized rollouts without a row (when asked for).
pub fn counted_zero_lines(
    classes: &[String],
    failures: usize,
    missing: bool,
    imputed: usize,
) -> Vec<String> {
    let mut lines = Vec::new();
    if !classes.is_empty() {
        let listed: Vec<String> = classes
            .iter()
            .map(|c| crate::gym::py::str_repr(c))
            .collect();
        lines.push(format!(
            "Counting {failures} failure row(s) as scored zeros: [{}]",
            listed.join(", ")
        ));
    }
    if missing {
        lines.push(format!(
            "Counting {imputed} materialized rollout(s) with no row as scored zeros"
        ));
    }
    lines
}

/// The coverage line for imputed zeros, after [`coverage_report`]'s.
pub fn imputed_line(imputed: usize, expected: u64) -> String {
    if imputed == 0 {
        return String::new();
    }
    format!("\nScored as zero because they left no row: {imputed} of {expected} rollouts")
}

/// The metrics file in memory.
#[cfg(test)]
pub fn file_bytes(entries: &[Entry]) -> Vec<u8> {
    let mut out = Vec::new();
    write_file(&mut out, entries).expect("writing to a Vec cannot fail");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::collect::key::parse_row;
    use serde_json::json;

    #[test]
    fn an_answer_of_the_wrong_shape_is_refused_as_v07s_model_refuses_it() {
        for bad in [
            r#"{"group_level_metrics": "x"}"#,
            r#"{"group_level_metrics": [1]}"#,
            r#"{"agent_metrics": [1]}"#,
            r#"{"key_metrics": "x"}"#,
        ] {
            let e = entry("a", bad.as_bytes()).err().unwrap();
            assert!(e.contains("expected"), "{bad}: {e}");
        }
        let e = server_entry("a", "s", br#"{"repeat_level_metrics": {"x": 1}}"#)
            .err()
            .unwrap();
        assert!(e.starts_with("repeat_level_metrics"), "{e}");
        assert!(entry(
            "a",
            br#"{"group_level_metrics": [{"x": 1}], "key_metrics": null}"#
        )
        .is_ok());
    }

    #[test]
    fn strip_keeps_usage_and_incomplete_details_only() {
        let r = parse_row(br#"{"responses_create_params":{},"response":{"output":[],"incomplete_details":{"reason":"max_output_tokens"},"usage":{"total_tokens":3}},"reward":1.0,"ng_trajectory":1,"agent_ref":{"name":"a"}}"#).unwrap();
        let s = strip(&r);
        assert_eq!(
            serde_json::to_string(&s).unwrap(),
            r#"{"reward":1.0,"agent_ref":{"name":"a"},"response":{"usage":{"total_tokens":3},"incomplete_details":{"reason":"max_output_tokens"}}}"#
        );
        let r = parse_row(br#"{"response":{"usage":null,"incomplete_details":null},"reward":0}"#)
            .unwrap();
        assert_eq!(Value::Object(strip(&r)), json!({"reward":0}));
        assert_eq!(agent_of(&r), None);
        // v0.7.0 keeps a usage that is not null, even an empty one.
        let r = parse_row(br#"{"response":{"usage":{}}}"#).unwrap();
        assert_eq!(Value::Object(strip(&r)), json!({"response":{"usage":{}}}));
    }

    #[test]
    fn a_servers_entry_has_v07s_keys_only() {
        let e = server_entry(
            "a",
            "a_env",
            br#"{"perf_summary":{"turns":{"mean":2.0}},"key_metrics":{"k":1},"other":5,"agent_metrics":null}"#,
        )
        .unwrap();
        let got = String::from_utf8(file_bytes(&[e])).unwrap();
        let want = "[\n  {\n    \"agent_ref\": {\n      \"name\": \"a\"\n    },\n    \"_ng_environment_server\": \"a_env\",\n    \"agent_metrics\": {},\n    \"key_metrics\": {\n      \"k\": 1\n    },\n    \"group_level_metrics\": [],\n    \"repeat_level_metrics\": [],\n    \"perf_summary\": {\n      \"turns\": {\n        \"mean\": 2.0\n      }\n    }\n  }\n]";
        assert_eq!(got, want);
        let e = server_entry("a", "a_env", br#"{"perf_summary":null}"#).unwrap();
        let got: Value = serde_json::from_slice(&file_bytes(&[e])).unwrap();
        assert!(got[0].get("perf_summary").is_none());
    }

    #[test]
    fn fields_beyond_the_v05_three_are_kept_as_returned() {
        let e = entry(
            "a",
            br#"{"perf_summary":{"turns":{"mean":2.0}},"key_metrics":{"k":1},"repeat_level_metrics":[{"r":0}],"agent_metrics":null}"#,
        )
        .unwrap();
        let got: Value = serde_json::from_slice(&file_bytes(&[e])).unwrap();
        let keys: Vec<&String> = got[0].as_object().unwrap().keys().collect();
        assert_eq!(
            keys,
            [
                "agent_ref",
                "agent_metrics",
                "key_metrics",
                "group_level_metrics",
                "perf_summary",
                "repeat_level_metrics"
            ]
        );
        assert_eq!(got[0]["agent_metrics"], json!({}));
        assert_eq!(got[0]["perf_summary"], json!({"turns": {"mean": 2.0}}));
        assert_eq!(got[0]["repeat_level_metrics"], json!([{"r": 0}]));
        assert!(entry("a", b"[1]").is_err());
    }

    #[test]
    fn coverage_names_the_missing_by_class() {
        assert_eq!(coverage_report(4, 4, &[], "x"), "");
        let dropped = [("b".to_string(), 1), ("a".to_string(), 2)];
        assert_eq!(
            coverage_report(7, 4, &dropped, "s.jsonl"),
            "\nRollouts missing from the score: 3 of 7 materialized (2 a, 1 b routed this run; see s.jsonl)\nMetrics cover: 4 of 7 rollouts"
        );
        assert_eq!(
            coverage_report(5, 4, &[], "s.jsonl"),
            "\nRollouts missing from the score: 1 of 5 materialized (see s.jsonl)\nMetrics cover: 4 of 5 rollouts"
        );
    }

    #[test]
    fn metrics_file_is_orjson_indent_2() {
        let e = entry(
            "a",
            br#"{"agent_metrics":{"mean/reward":1.0,"x":1e16},"key_metrics":{}}"#,
        )
        .unwrap();
        let got = String::from_utf8(file_bytes(&[e])).unwrap();
        let want = "[\n  {\n    \"agent_ref\": {\n      \"name\": \"a\"\n    },\n    \"agent_metrics\": {\n      \"mean/reward\": 1.0,\n      \"x\": 1e+16\n    },\n    \"key_metrics\": {},\n    \"group_level_metrics\": []\n  }\n]";
        assert_eq!(got, want);
        assert_eq!(
            request_body([&b"{}"[..], b"{\"a\":1}"].into_iter()),
            b"{\"verify_responses\":[{},{\"a\":1}]}"
        );
    }
}
