//! Helpers shared by the integration tests.
#![allow(dead_code)]

use serde_json::Value;
use std::path::{Path, PathBuf};

pub fn fixtures_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/gym-examples")
}

/// The fixtures' comparison rule: numbers equal within a relative 1e-9 (an int and a float of
/// the same value are equal), everything else exactly; key order is free.
pub fn assert_json_eq(got: &Value, want: &Value, path: &str) {
    match (got, want) {
        (Value::Number(a), Value::Number(b)) => {
            let (a, b) = (a.as_f64().unwrap(), b.as_f64().unwrap());
            let tol = 1e-9 * a.abs().max(b.abs());
            assert!(
                a == b || (a - b).abs() <= tol,
                "{path}: got {a:?}, want {b:?}"
            );
        }
        (Value::Object(a), Value::Object(b)) => {
            let mut ka: Vec<_> = a.keys().collect();
            let mut kb: Vec<_> = b.keys().collect();
            ka.sort();
            kb.sort();
            assert_eq!(ka, kb, "{path}: keys differ");
            for (k, v) in b {
                assert_json_eq(&a[k], v, &format!("{path}.{k}"));
            }
        }
        (Value::Array(a), Value::Array(b)) => {
            assert_eq!(a.len(), b.len(), "{path}: lengths differ");
            for (i, (x, y)) in a.iter().zip(b).enumerate() {
                assert_json_eq(x, y, &format!("{path}[{i}]"));
            }
        }
        _ => assert_eq!(got, want, "{path}"),
    }
}

/// Compares two `*_reward_profiling.jsonl` texts row by row, keyed by `_ng_task_index`.
pub fn assert_profiles_eq(got: &str, want: &str, what: &str) {
    let rows = |text: &str| -> Vec<Value> {
        text.lines()
            .map(|l| {
                serde_json::from_str(l).unwrap_or_else(|e| panic!("{what}: bad line {l}: {e}"))
            })
            .collect()
    };
    let (got, want) = (rows(got), rows(want));
    let tasks = |rows: &[Value]| {
        rows.iter()
            .map(|r| r["_ng_task_index"].clone())
            .collect::<Vec<_>>()
    };
    assert_eq!(tasks(&got), tasks(&want), "{what}: task rows differ");
    for (g, w) in got.iter().zip(&want) {
        assert_json_eq(g, w, &format!("{what} task {}", w["_ng_task_index"]));
    }
}

pub fn run_gymscope(args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_gymscope"))
        .args(args)
        .output()
        .expect("run gymscope")
}

#[cfg(not(target_arch = "wasm32"))]
pub mod browser;
pub mod static_server;
