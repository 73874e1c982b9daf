//! The rows a collection counts as scored zeros (native): v0.7.0's
//! `count_failure_classes_as_zero` (the last sidecar row of a rollout that never succeeded, of a
//! listed class) and `count_missing_rollouts_as_zero` (a materialized rollout with no row at
//! all), each given its task's dataset fields. They join the aggregate request only
//! (`collect::counted` has the rules).

use super::counted::{failure_row, routing_identity, zero_row, CarriedKeys};
use super::key::{parse_row, KeyPart};
use super::{CollectError, Row};
use crate::gym::keys::{FAILURE_CLASS, ROLLOUT_INDEX, TASK_INDEX};
use crate::native::read::for_each_line;
use anyhow::Result;
use serde_json::Value;
use std::collections::{HashMap, HashSet};
use std::path::Path;

type Key = (KeyPart, KeyPart);

fn key(row: &Row) -> Key {
    let part = |k: &str| KeyPart::of(row.get(k).unwrap_or(&Value::Null));
    (part(TASK_INDEX), part(ROLLOUT_INDEX))
}

/// What is counted, and how many of each kind.
#[derive(Default)]
pub struct Zeros {
    pub rows: Vec<Row>,
    pub failures: usize,
    pub imputed: usize,
}

/// Reads the three files once each (the materialized file twice when fields are filled in).
pub fn count(
    classes: &[String],
    missing: bool,
    materialized: &Path,
    output: &Path,
    failures: &Path,
    max_line: u64,
) -> Result<Zeros> {
    let mut success: HashSet<Key> = HashSet::new();
    let mut carried = CarriedKeys::default();
    let each = |path: &Path, f: &mut dyn FnMut(Row) -> Result<(), CollectError>| -> Result<()> {
        if !path.exists() {
            return Ok(());
        }
        let name = path.display().to_string();
        for_each_line::<CollectError>(path, &name, max_line, |span, line, _| {
            if line.iter().all(u8::is_ascii_whitespace) {
                return Ok(true);
            }
            let row = parse_row(line).map_err(|e| CollectError::line(&name, span.line, e))?;
            f(row)?;
            Ok(true)
        })?;
        Ok(())
    };
    each(output, &mut |row| {
        success.insert(key(&row));
        carried.add(&row);
        Ok(())
    })?;
    // The last attempt of each rollout stands.
    let mut latest: Latest<Key> = Latest::default();
    each(failures, &mut |row| {
        latest.put(key(&row), row);
        Ok(())
    })?;
    let mut zeros = Zeros::default();
    let mut scored = success;
    for (k, row) in &latest.rows {
        let class = row.get(FAILURE_CLASS).and_then(Value::as_str);
        if !scored.contains(k) && class.is_some_and(|c| classes.iter().any(|w| w == c)) {
            zeros.rows.push(failure_row(row));
        }
    }
    zeros.failures = zeros.rows.len();
    for r in &zeros.rows {
        scored.insert(key(r));
    }
    if missing {
        if !materialized.exists() {
            crate::say!(
                "[WARNING] {} is missing; rollouts owed by that shard cannot be counted",
                materialized.display()
            );
        }
        let mut unroutable = 0u64;
        each(materialized, &mut |row| {
            let k = key(&row);
            if scored.contains(&k) || latest.contains(&k) {
                return Ok(());
            }
            match zero_row(&row) {
                Some(z) => {
                    scored.insert(k);
                    zeros.rows.push(z);
                }
                None => unroutable += 1,
            }
            Ok(())
        })?;
        if unroutable > 0 {
            crate::say!("[WARNING] {unroutable} materialized rollout(s) name no agent or environment server and are not counted");
        }
        zeros.imputed = zeros.rows.len() - zeros.failures;
    }
    if !zeros.rows.is_empty() {
        // One run never reuses a (task, rollout): its rows need no server to tell them apart.
        let wanted: HashMap<(Option<String>, Key), usize> = zeros
            .rows
            .iter()
            .enumerate()
            .map(|(i, r)| ((routing_identity(r).map(String::from), key(r)), i))
            .collect();
        each(materialized, &mut |source| {
            let id = (routing_identity(&source).map(String::from), key(&source));
            if let Some(i) = wanted.get(&id) {
                carried.fill(&mut zeros.rows[*i], &source);
            }
            Ok(())
        })?;
    }
    Ok(zeros)
}

/// The last row of each key, in the order the keys first came (a later row replaces an earlier).
pub(super) struct Latest<K> {
    pub rows: Vec<(K, Row)>,
    at: HashMap<K, usize>,
}

impl<K> Default for Latest<K> {
    fn default() -> Self {
        Latest {
            rows: Vec::new(),
            at: HashMap::new(),
        }
    }
}

impl<K: Eq + std::hash::Hash + Clone> Latest<K> {
    /// Keeps `row` as the last of `k`.
    pub fn put(&mut self, k: K, row: Row) {
        if let Some(i) = self.at.get(&k) {
            self.rows[*i].1 = row;
        } else {
            self.at.insert(k.clone(), self.rows.len());
            self.rows.push((k, row));
        }
    }

    pub fn contains(&self, k: &K) -> bool {
        self.at.contains_key(k)
    }
}
