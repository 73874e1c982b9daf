//! Digests → task flags, coverage and the two report files (upstream's `_reduce` and
//! `_write_reports`): `quality_summary.json` as orjson's 2-space indent (no final newline),
//! `rollout_verdicts.jsonl` compact, sorted by task then rollout.

use super::digest::{Digest, Index};
use super::{Finding, Reads, REGISTRY};
use serde::ser::{SerializeMap, Serializer};
use serde::Serialize;
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;

/// The reports of one run, ready to write.
#[derive(Clone, Debug)]
pub struct Reports {
    /// The `run` part of `quality_summary.json`.
    pub run: Value,
    /// Its `tasks` part, in the document's order: kept as plain counts, not a JSON map (a run of
    /// unreadable lines has a task per line).
    pub tasks: Vec<(String, TaskCounts)>,
    /// The digests in the verdict file's order.
    pub digests: Vec<Digest>,
}

/// One task of `quality_summary.json`, its members in upstream's order.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TaskCounts {
    pub repeats: usize,
    pub healthy: usize,
    pub unhealthy: usize,
    pub unobserved: usize,
    pub flags: Vec<&'static str>,
}

/// `quality_summary.json` as serde writes it, the tasks streamed from their counts.
#[derive(Serialize)]
struct SummaryDoc<'a> {
    run: &'a Value,
    #[serde(serialize_with = "tasks_map")]
    tasks: &'a [(String, TaskCounts)],
}

fn tasks_map<S: Serializer>(tasks: &&[(String, TaskCounts)], s: S) -> Result<S::Ok, S::Error> {
    let mut map = s.serialize_map(Some(tasks.len()))?;
    for (name, counts) in *tasks {
        map.serialize_entry(name, counts)?;
    }
    map.end()
}

struct Repeat {
    verdict: &'static str,
    policy_calls_observed: bool,
    successful_model_calls: u64,
}

fn counts(evaluated: u64, unobserved: u64, ignored: u64) -> Value {
    json!({"evaluated": evaluated, "unobserved": unobserved, "ignored": ignored})
}

/// Groups by key in first-seen order (a Python dict); hashed, so a run of many tasks stays linear.
fn group<T, K: std::hash::Hash + Eq + Clone>(
    items: impl Iterator<Item = (K, T)>,
) -> Vec<(K, Vec<T>)> {
    let mut out: Vec<(K, Vec<T>)> = Vec::new();
    let mut at: std::collections::HashMap<K, usize> = std::collections::HashMap::new();
    for (k, v) in items {
        if let Some(i) = at.get(&k) {
            out[*i].1.push(v);
        } else {
            at.insert(k.clone(), out.len());
            out.push((k, vec![v]));
        }
    }
    out
}

pub(super) fn reduce(digests: Vec<Digest>, ignored: &[String]) -> Reports {
    let is_ignored = |id: &str| ignored.iter().any(|i| i == id);
    // Tasks in first-seen order, each with its repeats (copies of a rollout collapsed).
    let tasks = group(digests.iter().map(|d| (d.task.key(), d)));
    let mut task_rows: Vec<(&Index, Vec<Repeat>)> = Vec::new();
    for (_, records) in &tasks {
        let repeats = group(records.iter().map(|d| (d.rollout.key(), *d)))
            .into_iter()
            .map(|(_, copies)| {
                let first = copies[0].verdict;
                Repeat {
                    verdict: if copies.iter().all(|c| c.verdict == first) {
                        first
                    } else {
                        "unobserved"
                    },
                    policy_calls_observed: copies.iter().all(|c| c.policy_calls_observed),
                    successful_model_calls: copies
                        .iter()
                        .map(|c| c.successful_model_calls)
                        .max()
                        .unwrap_or(0),
                }
            })
            .collect();
        task_rows.push((&records[0].task, repeats));
    }
    drop(tasks); // a task a line when every line is unreadable: gone before the summary is built

    let mut coverage: Vec<(&'static str, [u64; 3])> =
        REGISTRY.iter().map(|s| (s.id, [0; 3])).collect();
    let mut bump = |id: &str, slot: usize| {
        if let Some((_, c)) = coverage.iter_mut().find(|(k, _)| *k == id) {
            c[slot] += 1;
        }
    };
    let mut task_flags: Vec<Vec<Finding>> = Vec::new();
    for (_, repeats) in &task_rows {
        let mut flags = Vec::new();
        if is_ignored("task_consistently_unhealthy") {
            bump("task_consistently_unhealthy", 2);
        } else {
            let computable: Vec<&Repeat> = repeats
                .iter()
                .filter(|r| r.verdict != "unobserved")
                .collect();
            if computable.len() >= 2 {
                bump("task_consistently_unhealthy", 0);
                if computable.iter().all(|r| r.verdict == "unhealthy") {
                    flags.push(Finding::new(
                        "task_consistently_unhealthy",
                        None,
                        json!({"computable_repeats": computable.len()}),
                    ));
                }
            } else {
                bump("task_consistently_unhealthy", 1);
            }
        }
        if is_ignored("task_no_successful_model_calls") {
            bump("task_no_successful_model_calls", 2);
        } else if !repeats.is_empty() && repeats.iter().all(|r| r.policy_calls_observed) {
            bump("task_no_successful_model_calls", 0);
            if repeats.iter().all(|r| r.successful_model_calls == 0) {
                flags.push(Finding::new(
                    "task_no_successful_model_calls",
                    None,
                    json!({"repeats": repeats.len()}),
                ));
            }
        } else {
            bump("task_no_successful_model_calls", 1);
        }
        task_flags.push(flags);
    }
    for d in &digests {
        for spec in REGISTRY.iter().filter(|s| s.reads != Reads::Task) {
            let slot = if is_ignored(spec.id) {
                2
            } else {
                usize::from(d.unobserved & super::digest::bit(spec.id) != 0)
            };
            bump(spec.id, slot);
        }
    }

    let mut issues: BTreeMap<&str, u64> = BTreeMap::new();
    for f in digests
        .iter()
        .flat_map(|d| d.findings.iter())
        .chain(task_flags.iter().flatten())
    {
        *issues.entry(f.check).or_insert(0) += 1;
    }
    let verdict_count = |v: &str| digests.iter().filter(|d| d.verdict == v).count();
    let mut by_status: BTreeMap<String, u64> = BTreeMap::new();
    for d in &digests {
        for (k, n) in &d.errors_by_status {
            *by_status.entry(k.clone()).or_insert(0) += n;
        }
    }

    // Tasks sorted as upstream: by (is a string, str(value)), so task 10 comes before task 2.
    let mut order: Vec<usize> = (0..task_rows.len()).collect();
    order.sort_by(|a, b| {
        let key = |i: usize| {
            let t = task_rows[i].0;
            (matches!(t, Index::Str(_)), t.text())
        };
        key(*a).cmp(&key(*b))
    });
    // A Python dict: two tasks of one text (`1` and `"1"`) share the first one's place and take
    // the last one's counts. Found through a set of the texts' hashes (no copy of each text): only
    // a hash seen before is looked for among the entries.
    let mut tasks_doc: Vec<(String, TaskCounts)> = Vec::with_capacity(order.len());
    let mut seen: std::collections::HashSet<u64, foldhash::fast::RandomState> =
        std::collections::HashSet::with_capacity_and_hasher(order.len(), Default::default());
    for i in order {
        let (task, repeats) = &task_rows[i];
        let n = |v: &str| repeats.iter().filter(|r| r.verdict == v).count();
        let counts = TaskCounts {
            repeats: repeats.len(),
            healthy: n("healthy"),
            unhealthy: n("unhealthy"),
            unobserved: n("unobserved"),
            flags: task_flags[i].iter().map(|f| f.check).collect(),
        };
        let text = task.text();
        let hash = std::hash::BuildHasher::hash_one(seen.hasher(), &text);
        let earlier = if seen.insert(hash) {
            None
        } else {
            tasks_doc.iter_mut().find(|(t, _)| *t == text)
        };
        match earlier {
            Some((_, c)) => *c = counts,
            None => tasks_doc.push((text, counts)),
        }
    }
    let mut ignored_sorted: Vec<&String> = ignored.iter().collect();
    ignored_sorted.sort();
    let sum = |f: &dyn Fn(&Digest) -> i64| digests.iter().map(f).sum::<i64>();
    let count = |f: &dyn Fn(&Digest) -> bool| digests.iter().filter(|d| f(d)).count();
    let run = json!({
            "ignored_checks": ignored_sorted,
            "artifacts": {
                "records": digests.len(),
                "captures": count(&|d| d.capture_observed),
                "coverage": coverage.iter().map(|(k, c)| ((*k).to_string(), counts(c[0], c[1], c[2]))).collect::<Map<_, _>>(),
            },
            "verdicts": {
                "healthy": verdict_count("healthy"),
                "unhealthy": verdict_count("unhealthy"),
                "unobserved": verdict_count("unobserved"),
            },
            "issues": REGISTRY.iter().map(|s| (s.id.to_string(), Value::from(issues.get(s.id).copied().unwrap_or(0)))).collect::<Map<_, _>>(),
            "stats": {
                "model_call_errors": {
                    "total": sum(&|d| d.model_call_errors as i64),
                    "by_status": by_status,
                    "rollouts_affected": count(&|d| d.model_call_errors > 0),
                    "ended_on_error": count(&|d| d.ended_on_error),
                },
                "duplicated_calls": {
                    "replayed": sum(&|d| d.duplicated_calls as i64),
                    "rollouts": count(&|d| d.duplicated_calls > 0),
                },
                "tokens": {
                    "prompt": sum(&|d| d.transcript_prompt),
                    "completion": sum(&|d| d.transcript_completion),
                    "capture_prompt": sum(&|d| d.capture_prompt),
                    "capture_completion": sum(&|d| d.capture_completion),
                },
            },
    });
    drop(task_rows);

    let mut digests = digests;
    digests.sort_by(|a, b| {
        sort_part(&a.task)
            .cmp(&sort_part(&b.task))
            .then(sort_part(&a.rollout).cmp(&sort_part(&b.rollout)))
            .then(stage_sort_part(a.stage.as_ref()).cmp(&stage_sort_part(b.stage.as_ref())))
    });
    Reports {
        run,
        tasks: tasks_doc,
        digests,
    }
}

/// `(0, int)` before `(1, str(value))`, as upstream's `_sort_key`.
fn sort_part(i: &Index) -> (u8, i64, String) {
    match i {
        Index::Int(n) => (0, *n, String::new()),
        other => (1, 0, other.text()),
    }
}

/// A stage as `sort_part` orders it, no stage as Python's `str(None)`.
fn stage_sort_part(i: Option<&Index>) -> (u8, i64, String) {
    i.map_or((1, 0, "None".to_string()), sort_part)
}

/// `v` as compact JSON (writing to a `Vec` cannot fail).
fn push_json<T: Serialize + ?Sized>(line: &mut Vec<u8>, v: &T) {
    let _ = serde_json::to_writer(&mut *line, v);
}

impl Reports {
    /// `quality_summary.json`'s bytes (2-space indent, no final newline, as orjson writes).
    pub fn summary_bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        let _ = self.write_summary(&mut out);
        out
    }

    /// [`Self::summary_bytes`] written to `w` as they are made (a run of unreadable lines has a
    /// task a line: its summary is tens of megabytes).
    pub fn write_summary(&self, w: impl std::io::Write) -> std::io::Result<()> {
        let doc = SummaryDoc {
            run: &self.run,
            tasks: &self.tasks,
        };
        serde_json::to_writer_pretty(w, &doc).map_err(std::io::Error::from)
    }

    /// The whole `quality_summary.json` document as a value.
    pub fn summary(&self) -> Value {
        serde_json::from_slice(&self.summary_bytes()).unwrap_or_default()
    }

    /// `rollout_verdicts.jsonl`'s lines, each newline-terminated: written from the digests'
    /// parts, the findings' JSON text as it is.
    pub fn verdict_lines(&self) -> impl Iterator<Item = Vec<u8>> + '_ {
        self.digests.iter().map(|d| {
            let mut line = Vec::with_capacity(256);
            line.push(b'{');
            for (i, (key, value)) in [
                (crate::gym::keys::TASK_INDEX, d.task.to_value()),
                (crate::gym::keys::ROLLOUT_INDEX, d.rollout.to_value()),
                ("rollout_id", Value::from(d.rollout_id().as_ref())),
                ("verdict", Value::from(d.verdict)),
            ]
            .iter()
            .enumerate()
            {
                if i > 0 {
                    line.push(b',');
                }
                push_json(&mut line, key);
                line.push(b':');
                push_json(&mut line, value);
            }
            line.extend_from_slice(b",\"findings\":[");
            for (i, f) in d.findings.iter().enumerate() {
                if i > 0 {
                    line.push(b',');
                }
                line.extend_from_slice(b"{\"check\":");
                push_json(&mut line, &f.check);
                if let Some(l) = &f.locator {
                    line.extend_from_slice(b",\"locator\":");
                    line.extend_from_slice(l.as_bytes());
                }
                line.extend_from_slice(b",\"detail\":");
                line.extend_from_slice(f.detail.as_bytes());
                line.push(b'}');
            }
            line.extend_from_slice(b"],\"unobserved\":");
            push_json(&mut line, &d.unobserved_ids());
            if let Some(stage) = &d.stage {
                line.extend_from_slice(b",\"stage_index\":");
                push_json(&mut line, &stage.to_value());
            }
            line.extend_from_slice(b"}\n");
            line
        })
    }

    /// The verdict counts `(healthy, unhealthy, unobserved)`.
    pub fn verdicts(&self) -> (u64, u64, u64) {
        let v = &self.run["verdicts"];
        let n = |k: &str| v[k].as_u64().unwrap_or(0);
        (n("healthy"), n("unhealthy"), n("unobserved"))
    }

    /// Upstream's two terminal lines, naming the summary file as `summary_path`.
    pub fn lines(&self, summary_path: &str) -> String {
        let (h, u, o) = self.verdicts();
        let ignored: Vec<&str> = self.run["ignored_checks"]
            .as_array()
            .map(|a| a.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let note = if ignored.is_empty() {
            String::new()
        } else {
            format!(" (ignored: {})", ignored.join(", "))
        };
        format!(
            "Rollout health: {} checked, {h} healthy, {u} unhealthy, {o} unobserved{note}\nQuality summary: {summary_path}",
            h + u + o
        )
    }
}
