//! The lines of `*_reward_profiling.jsonl` and the statistics of `*_agent_metrics.json`. Every row
//! repeats the same few names (`"mean/reward"`, `"input_tokens"`…), so each is escaped once per
//! writer ([`KeyTexts`]) instead of once per value; `rollout_infos` are built without a map or a
//! string per rollout (together a third of the writing's CPU time, perf).

use super::{write_sample, LineSource, RenderError};
use crate::fast_map::LastValues;
use crate::json::{self, Num};
use crate::profile::{ColumnSummaries, ColumnSummary, Profile, RolloutRecord, TaskProfile};
use crate::record::{key, IndexKind, KeyId, Reward};
use std::io::{self, Write};

/// The lines of `*_reward_profiling.jsonl` for the tasks in `tasks` (indices into `p.tasks`): a
/// part of the file that can be written apart from the rest, on another thread.
pub fn write_task_rows<W: Write>(
    p: &Profile,
    tasks: std::ops::Range<usize>,
    inputs: &mut dyn LineSource,
    inputs_file: &str,
    w: &mut W,
) -> Result<(), RenderError> {
    let mut sample = Vec::new();
    let mut rows = TaskRows::new(p);
    for task in &p.tasks[tasks] {
        sample.clear();
        write_sample(inputs, inputs_file, task.sample, &mut sample)?;
        rows.write(w, task, &sample)?;
    }
    Ok(())
}

const STATS: [&str; 5] = ["mean", "max", "min", "median", "std"];

fn stat_value(s: &ColumnSummary, stat: usize) -> Option<Num> {
    match stat {
        0 => s.mean.map(Num::Float),
        1 => s.max,
        2 => s.min,
        3 => s.median.map(Num::Float),
        _ => s.std.map(Num::Float),
    }
}

/// The profile's names as JSON text (`"name":`), each escaped on first use.
pub(super) struct KeyTexts<'p> {
    p: &'p Profile,
    /// By key id.
    fields: Vec<Option<Box<[u8]>>>,
    /// By statistic × column: `"mean/reward":`.
    stats: Vec<Option<Box<[u8]>>>,
}

impl<'p> KeyTexts<'p> {
    pub(super) fn new(p: &'p Profile) -> Self {
        KeyTexts {
            p,
            fields: vec![None; p.keys.len()],
            stats: vec![None; STATS.len() * p.columns.len()],
        }
    }

    fn field(&mut self, k: KeyId) -> &[u8] {
        let p = self.p;
        self.fields[k as usize].get_or_insert_with(|| member_name(p.keys.name(k)))
    }

    fn stat(&mut self, stat: usize, column: usize) -> &[u8] {
        let p = self.p;
        self.stats[stat * p.columns.len() + column].get_or_insert_with(|| {
            member_name(&format!("{}/{}", STATS[stat], p.column_name(column)))
        })
    }

    /// Writes `"mean/c":…,"max/c":…` for every present statistic; returns whether any was
    /// written.
    pub(super) fn write_stats<W: Write>(
        &mut self,
        w: &mut W,
        columns: &ColumnSummaries,
        mut first: bool,
    ) -> io::Result<bool> {
        for stat in 0..STATS.len() {
            for (c, summary) in columns.present() {
                if let Some(v) = stat_value(summary, stat) {
                    if !first {
                        w.write_all(b",")?;
                    }
                    first = false;
                    w.write_all(self.stat(stat, c))?;
                    v.write_json(w)?;
                }
            }
        }
        Ok(!first)
    }
}

/// `"name":` with the name escaped as orjson escapes it.
fn member_name(name: &str) -> Box<[u8]> {
    let mut text = Vec::with_capacity(name.len() + 3);
    // Writing to a Vec cannot fail.
    let _ = json::write_str(&mut text, name);
    text.push(b':');
    text.into_boxed_slice()
}

/// A name in a `rollout_infos` record: a field's key id, or `rollout_id` when no row has a field
/// of that name (a field named `rollout_id` overwrites the id in place, as in upstream's dict).
const ROLLOUT_ID: KeyId = KeyId::MAX;

enum InfoValue<'a> {
    /// `rollout_id`: the two indices as Python's `str()` of what was read (`"0:True"`).
    Id(i64, i64, (IndexKind, IndexKind)),
    Index(i64, IndexKind),
    Num(Num),
    Json(&'a serde_json::Value),
}

/// Writes task rows, keeping names and a `rollout_infos` record's buffers between rows.
struct TaskRows<'p> {
    texts: KeyTexts<'p>,
    rollout_id: KeyId,
    fields: LastValues<KeyId, InfoValue<'p>>,
    /// By key id: a top-level field `rollout_infos` leaves out (v0.7.0: `_`-prefixed keys and
    /// the mask flag).
    hidden_top: Vec<bool>,
}

impl<'p> TaskRows<'p> {
    fn new(p: &'p Profile) -> Self {
        TaskRows {
            texts: KeyTexts::new(p),
            rollout_id: p.keys.get("rollout_id").unwrap_or(ROLLOUT_ID),
            fields: LastValues::default(),
            hidden_top: (0..p.keys.len())
                .map(|k| {
                    let name = p.keys.name(k as KeyId);
                    name.starts_with('_') || name == crate::gym::keys::MASK_SAMPLE
                })
                .collect(),
        }
    }

    /// Writes one task row, newline-terminated.
    fn write<W: Write>(&mut self, w: &mut W, task: &TaskProfile, sample: &[u8]) -> io::Result<()> {
        let p = self.texts.p;
        w.write_all(b"{\"_ng_task_index\":")?;
        task.task_kind.write_json(w, task.task)?;
        self.texts.write_stats(w, &task.columns, false)?;
        if let Some(agent) = &task.agent {
            w.write_all(b",\"agent_ref\":{\"name\":")?;
            super::write_agent_name(w, agent)?;
            w.write_all(b"}")?;
        }
        w.write_all(b",\"sample\":")?;
        w.write_all(sample)?;
        write!(
            w,
            ",\"num_rollouts\":{},\"expected_num_rollouts\":{},\"missing_num_rollouts\":{},\"reward_profile_completion_pct\":",
            task.num_rollouts,
            task.expected_num_rollouts,
            task.missing_num_rollouts()
        )?;
        json::write_f64(w, task.completion_pct())?;
        w.write_all(b",\"rollout_infos\":[")?;
        for (i, r) in p.rollouts[task.rollouts.clone()].iter().enumerate() {
            if i > 0 {
                w.write_all(b",")?;
            }
            self.write_rollout_info(w, r)?;
        }
        w.write_all(b"]}\n")
    }

    /// One `rollout_infos` record: id, indices, `reward` verbatim, numeric usage fields, then
    /// numeric top-level fields but `_`-prefixed ones and `mask_sample` (which overwrite
    /// same-named usage fields in place).
    fn write_rollout_info<W: Write>(&mut self, w: &mut W, r: &'p RolloutRecord) -> io::Result<()> {
        let fields = &mut self.fields;
        fields.clear();
        fields.set(
            self.rollout_id,
            InfoValue::Id(r.key.task, r.key.rollout, r.kinds),
        );
        fields.set(key::TASK_INDEX, InfoValue::Index(r.key.task, r.kinds.0));
        fields.set(
            key::ROLLOUT_INDEX,
            InfoValue::Index(r.key.rollout, r.kinds.1),
        );
        match &r.reward {
            Some(Reward::Num(n)) => fields.set(key::REWARD, InfoValue::Num(*n)),
            Some(Reward::Other(v)) => fields.set(key::REWARD, InfoValue::Json(v)),
            None => {}
        }
        for (k, v) in r.usage_numbers() {
            fields.set(k, InfoValue::Num(v));
        }
        for (k, v) in r.top_numbers() {
            if !self.hidden_top[k as usize] {
                fields.set(k, InfoValue::Num(v));
            }
        }
        w.write_all(b"{")?;
        for (i, (name, value)) in fields.entries().iter().enumerate() {
            if i > 0 {
                w.write_all(b",")?;
            }
            if *name == ROLLOUT_ID {
                w.write_all(b"\"rollout_id\":")?;
            } else {
                w.write_all(self.texts.field(*name))?;
            }
            match value {
                InfoValue::Id(task, rollout, (IndexKind::Int, IndexKind::Int)) => {
                    let (mut t, mut r) = (itoa::Buffer::new(), itoa::Buffer::new());
                    w.write_all(b"\"")?;
                    w.write_all(t.format(*task).as_bytes())?;
                    w.write_all(b":")?;
                    w.write_all(r.format(*rollout).as_bytes())?;
                    w.write_all(b"\"")?;
                }
                InfoValue::Id(task, rollout, (task_kind, rollout_kind)) => {
                    w.write_all(b"\"")?;
                    task_kind.write_str(w, *task)?;
                    w.write_all(b":")?;
                    rollout_kind.write_str(w, *rollout)?;
                    w.write_all(b"\"")?;
                }
                InfoValue::Index(v, kind) => kind.write_json(w, *v)?,
                InfoValue::Num(n) => n.write_json(w)?,
                InfoValue::Json(v) => json::to_writer_orjson(w, *v)?,
            }
        }
        w.write_all(b"}")
    }
}

#[cfg(test)]
mod tests {
    use crate::output::{profile_bytes, render_in_memory};
    use crate::profile::ProfileOptions;
    use serde_json::{json, Value};

    /// The text of the `rollout_infos` list of a one-task run with the given rollout rows (task
    /// -3, rollouts 0..); text, because key order is part of what is checked.
    fn infos(rollouts: &[Value]) -> String {
        let mut inputs = String::new();
        let mut lines = String::new();
        for (i, r) in rollouts.iter().enumerate() {
            inputs.push_str(&format!(
                "{{\"_ng_task_index\":-3,\"_ng_rollout_index\":{i}}}\n"
            ));
            let mut r = r.clone();
            r["_ng_task_index"] = json!(-3);
            r["_ng_rollout_index"] = json!(i);
            lines.push_str(&format!("{r}\n"));
        }
        let options = ProfileOptions::default();
        let p = profile_bytes(inputs.as_bytes(), "i", lines.as_bytes(), "r", options).unwrap();
        let out = render_in_memory(&p, inputs.as_bytes(), "i").unwrap();
        let text = String::from_utf8(out.reward_profiling).unwrap();
        let start = text.find("\"rollout_infos\":[").unwrap() + "\"rollout_infos\":[".len();
        text[start..].strip_suffix("]}\n").unwrap().to_string()
    }

    #[test]
    fn top_level_fields_overwrite_usage_and_the_id_in_place() {
        let got = infos(&[
            json!({"reward": true, "rollout_id": 7, "x": 1.5, "response": {"usage": {"x": 2, "input_tokens": 3}}}),
            json!({"reward": "1", "response": {"usage": null}}),
        ]);
        assert_eq!(
            got,
            r#"{"rollout_id":7,"_ng_task_index":-3,"_ng_rollout_index":0,"reward":true,"x":1.5,"input_tokens":3},"#
                .to_string()
                + r#"{"rollout_id":"-3:1","_ng_task_index":-3,"_ng_rollout_index":1,"reward":"1"}"#
        );
    }

    #[test]
    fn a_row_with_many_fields_keeps_the_first_position_of_each_name() {
        // 20 usage fields, then top-level fields that repeat some of them: past 16 names the
        // record finds repeats through a map, with the same result.
        let mut usage = serde_json::Map::new();
        for i in 0..20 {
            usage.insert(format!("u{i}"), json!(i));
        }
        let mut row =
            json!({"reward": 0.5, "u3": 30, "u19": 190, "t": 1, "response": {"usage": usage}});
        row["u0"] = json!(100);
        let got = infos(&[row]);
        let mut expected = String::from(
            r#"{"rollout_id":"-3:0","_ng_task_index":-3,"_ng_rollout_index":0,"reward":0.5"#,
        );
        for i in 0..20 {
            let v = match i {
                0 => 100,
                3 => 30,
                19 => 190,
                _ => i,
            };
            expected.push_str(&format!(",\"u{i}\":{v}"));
        }
        expected.push_str(",\"t\":1}");
        assert_eq!(got, expected);
    }
}
