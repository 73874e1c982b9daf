//! A row pretty-printed for display, split into segments so the value at a path can be marked.
//! The segments are plain text; the page escapes them like any other text.

use super::checks::{Path, Step};
use serde_json::Value;

#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Segment {
    pub text: String,
    /// Part of the value at the highlighted path.
    pub marked: bool,
}

/// Pretty-prints `line` (2-space indent, key order kept) marking the value at `path`; for a
/// path ending in a missing key, the object that lacks it is marked. Not JSON → one segment.
pub fn pretty_segments(line: &str, path: &Path) -> Vec<Segment> {
    let Ok(value) = serde_json::from_str::<Value>(line) else {
        return vec![Segment {
            text: line.to_string(),
            marked: false,
        }];
    };
    let target = existing_prefix(&value, path);
    let mut p = Printer {
        segments: Vec::new(),
        current: String::new(),
        marked: false,
    };
    p.value(&value, 0, &mut Vec::new(), &target);
    p.flush();
    p.segments
}

/// The longest prefix of `path` that exists in `value`.
fn existing_prefix(value: &Value, path: &Path) -> Vec<Step> {
    let mut at = value;
    let mut prefix = Vec::new();
    for step in &path.0 {
        let next = match (step, at) {
            (Step::Key(k), Value::Object(o)) => o.get(k),
            (Step::Index(i), Value::Array(a)) => a.get(*i),
            _ => None,
        };
        match next {
            Some(v) => {
                prefix.push(step.clone());
                at = v;
            }
            None => break,
        }
    }
    prefix
}

struct Printer {
    segments: Vec<Segment>,
    current: String,
    marked: bool,
}

impl Printer {
    fn set_marked(&mut self, marked: bool) {
        if marked != self.marked {
            self.flush();
            self.marked = marked;
        }
    }
    fn flush(&mut self) {
        if !self.current.is_empty() {
            self.segments.push(Segment {
                text: std::mem::take(&mut self.current),
                marked: self.marked,
            });
        }
    }
    fn push(&mut self, s: &str) {
        self.current.push_str(s);
    }

    fn value(&mut self, v: &Value, indent: usize, at: &mut Vec<Step>, target: &[Step]) {
        let is_target = at.as_slice() == target;
        if is_target {
            self.set_marked(true);
        }
        let pad = |n: usize| "  ".repeat(n);
        match v {
            Value::Object(o) if !o.is_empty() => {
                self.push("{\n");
                for (i, (k, item)) in o.iter().enumerate() {
                    self.push(&pad(indent + 1));
                    self.push(&serde_json::to_string(k).unwrap_or_default());
                    self.push(": ");
                    at.push(Step::Key(k.clone()));
                    self.value(item, indent + 1, at, target);
                    at.pop();
                    self.push(if i + 1 < o.len() { ",\n" } else { "\n" });
                }
                self.push(&pad(indent));
                self.push("}");
            }
            Value::Array(a) if !a.is_empty() => {
                self.push("[\n");
                for (i, item) in a.iter().enumerate() {
                    self.push(&pad(indent + 1));
                    at.push(Step::Index(i));
                    self.value(item, indent + 1, at, target);
                    at.pop();
                    self.push(if i + 1 < a.len() { ",\n" } else { "\n" });
                }
                self.push(&pad(indent));
                self.push("]");
            }
            other => self.push(&serde_json::to_string(other).unwrap_or_default()),
        }
        if is_target {
            self.set_marked(false);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marks_the_value_at_the_path() {
        let path = Path(vec![Step::Key("p".into()), Step::Key("m".into())]);
        let segs = pretty_segments(r#"{"p":{"m":null,"x":"<b>"}}"#, &path);
        let marked: Vec<&str> = segs
            .iter()
            .filter(|s| s.marked)
            .map(|s| s.text.as_str())
            .collect();
        assert_eq!(marked, ["null"]);
        let all: String = segs.iter().map(|s| s.text.as_str()).collect();
        assert_eq!(
            all,
            "{\n  \"p\": {\n    \"m\": null,\n    \"x\": \"<b>\"\n  }\n}"
        );
        let missing = Path(vec![Step::Key("p".into()), Step::Key("nope".into())]);
        let segs = pretty_segments(r#"{"p":{"m":1}}"#, &missing);
        assert_eq!(segs.iter().filter(|s| s.marked).count(), 1);
        assert!(segs
            .iter()
            .find(|s| s.marked)
            .unwrap()
            .text
            .starts_with('{'));
    }
}
