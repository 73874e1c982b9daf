//! Writing pivot rows (their keys: docs/pivots.md "Pivot datasets"). Every item of a trajectory is
//! cleaned and serialized once, in
//! both its compact form and its canonical (sorted-key) form; a row is then assembled from
//! those bytes, so a prefix repeated by every later pivot costs a copy, not a serialization.

use super::turns::{clean_entries, Kind, Piece, Trajectory};
use crate::json::{write_members, write_sorted};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

/// Compact JSON of a value.
pub fn compact(v: &Value, out: &mut Vec<u8>) {
    serde_json::to_writer(out, v).expect("serializing a JSON value cannot fail");
}

fn write_str(s: &str, out: &mut Vec<u8>) {
    serde_json::to_writer(out, s).expect("serializing a string cannot fail");
}

fn write_value(v: &Value, canon: bool, out: &mut Vec<u8>) {
    if canon {
        write_sorted(v, out);
    } else {
        compact(v, out);
    }
}

/// Writes an object from `(key, write member)` pairs, sorted by key when canonical.
fn write_object<T>(
    mut members: Vec<(&str, T)>,
    canon: bool,
    out: &mut Vec<u8>,
    mut member: impl FnMut(&T, &mut Vec<u8>),
) {
    if canon {
        members.sort_by(|a, b| a.0.cmp(b.0));
    }
    write_members(out, members.iter().map(|(k, v)| (*k, v)), |out, v| {
        member(v, out);
    });
}

/// A prefix item, cleaned (see [`clean_entries`]), compact or canonical.
fn write_item(item: &Value, trajectory_id: u64, index: usize, canon: bool, out: &mut Vec<u8>) {
    let Some(entries) = clean_entries(item, trajectory_id, index) else {
        return write_value(item, canon, out);
    };
    write_object(entries, canon, out, |piece, out| match piece {
        Piece::Value(v) => write_value(v, canon, out),
        Piece::Text(s) => write_str(s, out),
        Piece::Parts(parts) => {
            out.push(b'[');
            for (i, part) in parts.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                match part {
                    Value::Object(m) if m.contains_key("logprobs") => {
                        let kept: Vec<(&str, &Value)> = m
                            .iter()
                            .filter(|(k, _)| *k != "logprobs")
                            .map(|(k, v)| (k.as_str(), v))
                            .collect();
                        write_object(kept, canon, out, |v, out| write_value(v, canon, out));
                    }
                    other => write_value(other, canon, out),
                }
            }
            out.push(b']');
        }
    });
}

/// A list of values, compact or canonical.
fn write_list(values: &[Value], canon: bool, out: &mut Vec<u8>) {
    out.push(b'[');
    for (i, v) in values.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        write_value(v, canon, out);
    }
    out.push(b']');
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
            write_sorted(v, &mut b);
            (a, b)
        };
        let items = t.items[..upto]
            .iter()
            .enumerate()
            .map(|(i, item)| {
                (!(drop_reasoning && t.kinds[i] == Kind::Reasoning)).then(|| {
                    let (mut a, mut b) = (Vec::new(), Vec::new());
                    write_item(item, trajectory_id, i, false, &mut a);
                    write_item(item, trajectory_id, i, true, &mut b);
                    (a, b)
                })
            })
            .collect();
        let (mut tools_compact, mut tools_canon) = (Vec::new(), Vec::new());
        write_list(&t.tools, false, &mut tools_compact);
        write_list(&t.tools, true, &mut tools_canon);
        let tools = (tools_compact, tools_canon);
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
        write_sorted(expected_action, &mut ea);
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
