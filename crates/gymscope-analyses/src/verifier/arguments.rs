//! `compare_tool_call` and `compare_tool_call_arguments`: one expected call against one actual
//! call, names first, then the arguments compared recursively with upstream's rules.

use super::{Call, Category, ComparatorConfig};
use serde_json::{Map, Value};

/// `compare_tool_call`: names, then arguments parsed and compared recursively.
pub fn compare_call(config: &ComparatorConfig, expected: &Call, actual: &Call) -> (f64, Category) {
    if expected.name != actual.name {
        return (0.0, Category::UnexpectedTool);
    }
    // Upstream parses the expected arguments without a guard (a non-JSON string crashes the
    // server); here it simply cannot match.
    let Ok(exp) = serde_json::from_str::<Value>(&expected.arguments) else {
        return (0.0, Category::ArgumentsDecodeError);
    };
    let Ok(act) = serde_json::from_str::<Value>(&actual.arguments) else {
        return (0.0, Category::ArgumentsDecodeError);
    };
    match compare_values(config, &exp, &act) {
        None => (1.0, Category::ExpectedToolCall),
        Some(category) => (0.0, category),
    }
}

/// `compare_tool_call_arguments`: `None` when they match, else the first reason (expected-key order).
fn compare_values(config: &ComparatorConfig, exp: &Value, act: &Value) -> Option<Category> {
    use Value::{Array, Bool, Null, Number, Object, String};
    let same_type = match (exp, act) {
        (Object(_), Object(_)) | (Array(_), Array(_)) | (String(_), String(_)) | (Null, Null) => {
            true
        }
        (Bool(_), Bool(_)) => true,
        // Python: bool is a subclass of int, so an expected int accepts a bool.
        (Number(e), Bool(_)) => !e.is_f64(),
        (Number(e), Number(a)) => e.is_f64() == a.is_f64(),
        _ => false,
    };
    if !same_type {
        return Some(Category::ArgumentValueTypeDifferent);
    }
    match (exp, act) {
        (Object(e), Object(a)) => compare_objects(config, e, a),
        (Array(e), Array(a)) => {
            if e.len() != a.len() {
                return Some(Category::ArgumentListLengthDifferent);
            }
            e.iter()
                .zip(a)
                .find_map(|(x, y)| compare_values(config, x, y))
        }
        (Number(e), Number(a)) if e.is_f64() => {
            let diff = (a.as_f64().unwrap_or(f64::NAN) - e.as_f64().unwrap_or(f64::NAN)).abs();
            // Upstream: `abs(a - e) < threshold`; NaN compares false, so it fails.
            let close = diff.partial_cmp(&config.floating_point_comparison_threshold)
                == Some(std::cmp::Ordering::Less);
            (!close).then_some(Category::ArgumentValueDifferent)
        }
        (String(e), String(a)) => compare_strings(config, e, a),
        (Number(e), Bool(b)) => {
            (e.as_i64() != Some(i64::from(*b))).then_some(Category::ArgumentValueDifferent)
        }
        _ => (exp != act).then_some(Category::ArgumentValueDifferent),
    }
}

fn compare_objects(
    config: &ComparatorConfig,
    e: &Map<String, Value>,
    a: &Map<String, Value>,
) -> Option<Category> {
    if e.len() != a.len() || e.keys().any(|k| !a.contains_key(k)) {
        return Some(Category::ArgumentObjectKeysDifferent);
    }
    e.iter().find_map(|(k, v)| compare_values(config, v, &a[k]))
}

/// Word bags of `s.strip().lower().split()`; fewer than two words on either side → exact match.
fn compare_strings(config: &ComparatorConfig, e: &str, a: &str) -> Option<Category> {
    let (ew, aw) = (words(e), words(a));
    if ew.len() < 2 || aw.len() < 2 {
        return (e != a).then_some(Category::ArgumentValueDifferent);
    }
    let mut rest = aw.clone();
    let mut common = 0usize;
    for w in &ew {
        if let Some(i) = rest.iter().position(|x| x == w) {
            rest.swap_remove(i);
            common += 1;
        }
    }
    let similarity = common as f64 / (ew.len() + aw.len()) as f64;
    (similarity < config.word_count_similarity_threshold)
        .then_some(Category::ArgumentValueDifferent)
}

/// Python's `str.split()` separators: Unicode whitespace plus U+001C..U+001F.
fn words(s: &str) -> Vec<String> {
    s.to_lowercase()
        .split(|c: char| c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c))
        .filter(|w| !w.is_empty())
        .map(String::from)
        .collect()
}
