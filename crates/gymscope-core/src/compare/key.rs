//! A task's identity across runs: the sorted-key compact JSON ([`write_sorted`]) of its first
//! materialized row without `_ng_*` keys and `agent_ref`, and with `responses_create_params`
//! reduced to `input`, `tools` and `instructions` (sampling settings such as temperature differ
//! between runs of the same tasks). Only a 128-bit digest of that text is kept, so memory grows
//! with the number of tasks, not with the prompts' length.

use crate::json::{write_members, write_sorted};
use serde_json::Value;
use sha2::{Digest, Sha256};

/// The digest of a task's identity text.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TaskKey(pub [u8; 16]);

/// The parts of `responses_create_params` that say what the task is.
const TASK_PARAMS: [&str; 3] = ["input", "tools", "instructions"];

impl TaskKey {
    /// The key of a materialized row (or a profile's `sample`); `buf` is reused between calls.
    pub fn of_row(row: &Value, buf: &mut Vec<u8>) -> TaskKey {
        buf.clear();
        identity_text(row, buf);
        let digest = Sha256::digest(&buf[..]);
        let mut key = [0u8; 16];
        key.copy_from_slice(&digest[..16]);
        TaskKey(key)
    }
}

/// The row's identity text, as hashed by [`TaskKey::of_row`] (public for tests and debugging).
pub fn identity_text(row: &Value, out: &mut Vec<u8>) {
    let Value::Object(map) = row else {
        return write_sorted(row, out);
    };
    let mut members: Vec<(&str, &Value)> = map
        .iter()
        .filter(|(k, _)| !k.starts_with("_ng_") && k.as_str() != "agent_ref")
        .map(|(k, v)| (k.as_str(), v))
        .collect();
    members.sort_unstable_by(|a, b| a.0.cmp(b.0));
    let keyed = members.into_iter().map(|(k, v)| (k, (k, v)));
    write_members(out, keyed, |out, member| match member {
        // Only what says what the task is; TASK_PARAMS is already in sorted order.
        ("responses_create_params", Value::Object(params)) => {
            let task_params = TASK_PARAMS
                .iter()
                .filter_map(|name| params.get(*name).map(|p| (*name, p)));
            write_members(out, task_params, |out, p| write_sorted(p, out));
        }
        (_, v) => write_sorted(v, out),
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn text(v: &Value) -> String {
        let mut s = Vec::new();
        identity_text(v, &mut s);
        String::from_utf8(s).unwrap()
    }

    #[test]
    fn sorts_keys_and_drops_what_varies_between_runs() {
        let a = json!({
            "responses_create_params": {"temperature": 0.6, "input": [{"role": "user", "content": "2+2?"}], "tools": []},
            "agent_ref": {"name": "x"}, "_ng_task_index": 3, "_ng_rollout_index": 0,
            "z": {"b": 1, "a": 2.5}
        });
        assert_eq!(
            text(&a),
            r#"{"responses_create_params":{"input":[{"content":"2+2?","role":"user"}],"tools":[]},"z":{"a":2.5,"b":1}}"#
        );
        let b = json!({
            "z": {"a": 2.5, "b": 1}, "_ng_task_index": 9, "_ng_rollout_index": 2,
            "responses_create_params": {"tools": [], "input": [{"content": "2+2?", "role": "user"}], "top_p": 0.9, "metadata": {"seed": 4}},
            "agent_ref": {"name": "y"}
        });
        let mut buf = Vec::new();
        assert_eq!(TaskKey::of_row(&a, &mut buf), TaskKey::of_row(&b, &mut buf));
    }

    #[test]
    fn different_content_gives_different_keys() {
        let mut buf = Vec::new();
        let k = |v: Value, buf: &mut Vec<u8>| TaskKey::of_row(&v, buf);
        let base = k(
            json!({"responses_create_params": {"input": "a"}, "x": 1}),
            &mut buf,
        );
        assert_ne!(
            base,
            k(
                json!({"responses_create_params": {"input": "b"}, "x": 1}),
                &mut buf
            )
        );
        // An int and a float are different values, as in the files.
        assert_ne!(
            base,
            k(
                json!({"responses_create_params": {"input": "a"}, "x": 1.0}),
                &mut buf
            )
        );
        assert_ne!(
            base,
            k(
                json!({"responses_create_params": {"input": "a", "instructions": "be brief"}, "x": 1}),
                &mut buf
            )
        );
    }
}
