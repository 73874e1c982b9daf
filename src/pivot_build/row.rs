//! Writing pivot rows (spec §b). Every item of a trajectory is cleaned and serialized once, in
//! both its compact form and its canonical (sorted-key) form; a row is then assembled from
//! those bytes, so a prefix repeated by every later pivot costs a copy, not a serialization.

use super::trajectory::{clean_item, Kind, Trajectory};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

/// Compact JSON of a value.
pub fn compact(v: &Value, out: &mut Vec<u8>) {
    serde_json::to_writer(out, v).expect("serializing a JSON value cannot fail");
}

/// Canonical JSON: object keys sorted (by code unit, recursively), no whitespace.
pub fn canonical(v: &Value, out: &mut Vec<u8>) {
    match v {
        Value::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            out.push(b'{');
            for (i, k) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                compact(&Value::String(k.clone()), out);
                out.push(b':');
                canonical(&m[k], out);
            }
            out.push(b'}');
        }
        Value::Array(a) => {
            out.push(b'[');
            for (i, x) in a.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                canonical(x, out);
            }
            out.push(b']');
        }
        other => compact(other, out),
    }
}

/// A trajectory's prefix material, serialized once.
pub struct Prepared {
    /// Per item of `T`: compact and canonical bytes; `None` when left out (`--reasoning drop`).
    items: Vec<Option<(Vec<u8>, Vec<u8>)>>,
    tools: (Vec<u8>, Vec<u8>),
    /// `instructions`, `reasoning`, `text` (compact, canonical), in that order.
    carried: Vec<(String, Vec<u8>, Vec<u8>)>,
    parallel_tool_calls: bool,
}

impl Prepared {
    /// Cleans and serializes items `..upto` (only what some prefix needs).
    pub fn new(t: &Trajectory, trajectory_id: u64, upto: usize, drop_reasoning: bool) -> Prepared {
        let both = |v: &Value| {
            let (mut a, mut b) = (Vec::new(), Vec::new());
            compact(v, &mut a);
            canonical(v, &mut b);
            (a, b)
        };
        let items = t.items[..upto]
            .iter()
            .enumerate()
            .map(|(i, item)| {
                (!(drop_reasoning && t.kinds[i] == Kind::Reasoning))
                    .then(|| both(&clean_item(item, trajectory_id, i)))
            })
            .collect();
        let tools = both(&Value::Array(t.tools.clone()));
        let carried = t
            .carried
            .iter()
            .map(|(k, v)| {
                let (a, b) = both(v);
                (k.clone(), a, b)
            })
            .collect();
        Prepared {
            items,
            tools,
            carried,
            parallel_tool_calls: t.parallel_tool_calls,
        }
    }

    /// `pivot_id`: first 32 hex of SHA-256 over the canonical JSON of
    /// `{"expected_action": …, "responses_create_params": …}`.
    pub fn pivot_id(&self, start: usize, expected_action: &Value) -> [u8; 16] {
        let mut h = Sha256::new();
        let mut ea = Vec::new();
        canonical(expected_action, &mut ea);
        h.update(b"{\"expected_action\":");
        h.update(&ea);
        h.update(b",\"responses_create_params\":{\"input\":[");
        let mut first = true;
        for (_, canon) in self.items[..start].iter().flatten() {
            if !first {
                h.update(b",");
            }
            first = false;
            h.update(canon);
        }
        h.update(b"]");
        // Sorted: input, instructions, parallel_tool_calls, reasoning, text, tool_choice, tools.
        let carried = |h: &mut Sha256, key: &str| {
            if let Some((k, _, canon)) = self.carried.iter().find(|c| c.0 == key) {
                h.update(format!(",\"{k}\":").as_bytes());
                h.update(canon);
            }
        };
        carried(&mut h, "instructions");
        h.update(if self.parallel_tool_calls {
            b",\"parallel_tool_calls\":true" as &[u8]
        } else {
            b",\"parallel_tool_calls\":false"
        });
        carried(&mut h, "reasoning");
        carried(&mut h, "text");
        h.update(b",\"tool_choice\":\"auto\",\"tools\":");
        h.update(&self.tools.1);
        h.update(b"}}");
        let digest = h.finalize();
        let mut id = [0u8; 16];
        id.copy_from_slice(&digest[..16]);
        id
    }

    /// Number of prefix items actually written for a prefix `T[..start]`.
    pub fn input_len(&self, start: usize) -> usize {
        self.items[..start].iter().flatten().count()
    }

    /// Appends one row and its newline. `middle` = the compact `meta_info` and `pivot_info`
    /// members after `expected_action`; `tail` = `agent_ref` and anything after it.
    pub fn write_row(
        &self,
        trajectory_id: u64,
        start: usize,
        expected_action: &Value,
        middle: &[u8],
        tail: &[u8],
        out: &mut Vec<u8>,
    ) {
        out.extend_from_slice(b"{\"trajectory_id\":");
        out.extend_from_slice(itoa::Buffer::new().format(trajectory_id).as_bytes());
        out.extend_from_slice(b",\"responses_create_params\":{\"input\":[");
        let mut first = true;
        for (bytes, _) in self.items[..start].iter().flatten() {
            if !first {
                out.push(b',');
            }
            first = false;
            out.extend_from_slice(bytes);
        }
        out.extend_from_slice(b"],\"tools\":");
        out.extend_from_slice(&self.tools.0);
        out.extend_from_slice(if self.parallel_tool_calls {
            b",\"parallel_tool_calls\":true,\"tool_choice\":\"auto\"" as &[u8]
        } else {
            b",\"parallel_tool_calls\":false,\"tool_choice\":\"auto\""
        });
        for (k, bytes, _) in &self.carried {
            out.extend_from_slice(format!(",\"{k}\":").as_bytes());
            out.extend_from_slice(bytes);
        }
        out.extend_from_slice(b"},\"expected_action\":");
        compact(expected_action, out);
        out.extend_from_slice(middle);
        out.extend_from_slice(tail);
        out.extend_from_slice(b"}\n");
    }
}

/// `,"meta_info":{…},"pivot_info":{…}` for a row.
pub fn middle(meta: [u64; 3], pivot_info: &Map<String, Value>, out: &mut Vec<u8>) {
    let [turn, step, depth] = meta;
    out.extend_from_slice(
        format!(",\"meta_info\":{{\"turn\":{turn},\"step\":{step},\"assistant_depth\":{depth},\"depth\":{depth}}},\"pivot_info\":")
            .as_bytes(),
    );
    serde_json::to_writer(&mut *out, pivot_info).expect("serializing a JSON map cannot fail");
}

pub fn hex(id: &[u8; 16]) -> String {
    id.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn canonical_sorts_keys_recursively() {
        let v = json!({"b": [{"z": 1, "a": "x"}], "a": null});
        let mut out = Vec::new();
        canonical(&v, &mut out);
        assert_eq!(
            String::from_utf8(out).unwrap(),
            r#"{"a":null,"b":[{"a":"x","z":1}]}"#
        );
    }
}
