//! Group by any field (docs/app.md, "Group by"): the Profile page's table beside the plot, one
//! line per group instead of per agent. A group is an agent, a task's reward group at the pass
//! threshold (the rule in its name: "sometimes ≥ 1"), or a value of a field of the materialized
//! rows (`dataset`, `difficulty`, `metadata.source`, …), each line the group's rollouts, mean
//! reward, pass@1 and output tokens, of the query's rollouts when one is applied (the rule of
//! docs/app.md: every table follows the query).
//!
//! A field's values are read from the materialized inputs (one row per task and repeat): a
//! task's value is its first row's, and a task without the field is in "(no value)". The
//! fields offered are the scalar ones (text, number, boolean) of the first rows, at the top
//! level or one object down, except the keys every row has (`_ng_*`, `agent_ref`, the prompt).

use super::model::{field_of, spans};
use super::run::RunView;
use crate::fast_map::FastMap;
use crate::reward_group::RewardGroup;
use crate::table::key_figures::{agent_lines, AgentLine, PointFacts};
use serde_json::Value;

/// Most groups a field shows; the rarer values are one group (`other values (12)`).
pub const MAX_GROUPS: usize = 20;

/// The group of a task without the field.
pub const NO_VALUE: &str = "(no value)";

/// Keys of every materialized row, never offered: the row's keys, the agent (a grouping of its
/// own) and the prompt.
const NOT_OFFERED: [&str; 3] = ["responses_create_params", "agent_ref", "_ng_"];

/// A field's groups: their labels and each task's group (in `view.tasks` order).
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct FieldGroups {
    pub field: String,
    pub labels: Vec<String>,
    /// Per task, its label's index.
    pub of_task: Vec<u32>,
}

/// A scalar as a group's label: text as it is, numbers and booleans as JSON writes them.
fn label(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(_) | Value::Bool(_) => Some(v.to_string()),
        _ => None,
    }
}

fn offered(key: &str) -> bool {
    !NOT_OFFERED.iter().any(|k| key.starts_with(k))
}

/// The fields a grouping can use, from a file's first bytes (complete lines only), in the order
/// they first appear: `dataset`, `metadata.difficulty`.
pub fn fields_in_head(head: &[u8]) -> Vec<String> {
    let complete = head
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(&head[..0], |end| &head[..end]);
    let mut fields: Vec<String> = Vec::new();
    let mut add = |name: String| {
        if !fields.contains(&name) {
            fields.push(name);
        }
    };
    for row in complete.split(|&b| b == b'\n') {
        let Ok(Value::Object(row)) = serde_json::from_slice::<Value>(row) else {
            continue;
        };
        for (key, v) in row.iter().filter(|(k, _)| offered(k)) {
            match v {
                Value::Object(inner) => {
                    for (k, v) in inner {
                        if label(v).is_some() {
                            add(format!("{key}.{k}"));
                        }
                    }
                }
                v if label(v).is_some() => add(key.clone()),
                _ => {}
            }
        }
    }
    fields
}

/// Reads a field's value of each task from the materialized rows, one line at a time.
pub struct FieldReader {
    path: Vec<String>,
    values: FastMap<i64, Option<String>>,
}

impl FieldReader {
    /// `field` as offered: `dataset`, or `metadata.difficulty` (one object down).
    pub fn new(field: &str) -> FieldReader {
        FieldReader {
            path: field.splitn(2, '.').map(str::to_string).collect(),
            values: FastMap::default(),
        }
    }

    /// One materialized row; a line that is not a JSON object with an integer
    /// `_ng_task_index` is an error saying so (the caller names the file and line).
    pub fn line(&mut self, line: &[u8]) -> Result<(), String> {
        if line.iter().all(u8::is_ascii_whitespace) {
            return Ok(());
        }
        let row: Value =
            serde_json::from_slice(line).map_err(|e| format!("not a JSON row: {e}"))?;
        let task = row
            .get("_ng_task_index")
            .and_then(Value::as_i64)
            .ok_or("no integer _ng_task_index")?;
        let mut v = Some(&row);
        for key in &self.path {
            v = v.and_then(|v| v.get(key));
        }
        self.values.entry(task).or_insert_with(|| v.and_then(label));
        Ok(())
    }

    /// The groups of `tasks` (their indices, in the page's order): the most common values
    /// first, at most [`MAX_GROUPS`] (the rest one group), tasks without the field last.
    pub fn finish(self, field: &str, tasks: &[i64]) -> FieldGroups {
        let of: Vec<Option<&String>> = tasks
            .iter()
            .map(|t| self.values.get(t).and_then(Option::as_ref))
            .collect();
        let mut counts: Vec<(&String, usize)> = Vec::new();
        let mut at: FastMap<&String, usize> = FastMap::default();
        for v in of.iter().flatten() {
            let i = *at.entry(v).or_insert_with(|| {
                counts.push((v, 0));
                counts.len() - 1
            });
            counts[i].1 += 1;
        }
        // Most tasks first, then by value, so the order does not depend on the file's.
        counts.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(b.0)));
        let kept = if counts.len() > MAX_GROUPS {
            MAX_GROUPS - 1
        } else {
            counts.len()
        };
        let mut labels: Vec<String> = counts[..kept].iter().map(|(v, _)| (*v).clone()).collect();
        let index: FastMap<&String, u32> = counts[..kept]
            .iter()
            .enumerate()
            .map(|(i, (v, _))| (*v, i as u32))
            .collect();
        let other = (counts.len() > kept).then(|| {
            labels.push(format!("other values ({})", counts.len() - kept));
            labels.len() as u32 - 1
        });
        let none = of.iter().any(Option::is_none).then(|| {
            labels.push(NO_VALUE.into());
            labels.len() as u32 - 1
        });
        let of_task = of
            .iter()
            .map(|v| match v {
                Some(v) => index.get(v).copied().or(other).unwrap_or(0),
                None => none.unwrap_or(0),
            })
            .collect();
        FieldGroups {
            field: field.to_string(),
            labels,
            of_task,
        }
    }
}

impl RunView {
    /// One line per group of `of_task` (each task's group among `labels`), counting the points
    /// `keep` keeps (a query's; all without one).
    pub fn group_lines(
        &self,
        labels: &[String],
        of_task: &[u32],
        keep: Option<&[bool]>,
    ) -> Vec<AgentLine> {
        let metrics = &self.view.metrics;
        let (reward, output_tokens) = (
            field_of(metrics, &self.cols, "reward"),
            field_of(metrics, &self.cols, "output_tokens"),
        );
        let mut point_group = vec![usize::MAX; self.points()];
        for (t, g) in of_task.iter().enumerate() {
            for p in self.task_points(t) {
                if let Some(slot) = point_group.get_mut(p) {
                    *slot = *g as usize;
                }
            }
        }
        let kept = |p: usize| keep.is_none_or(|k| k.get(p).copied().unwrap_or(false));
        let lines = agent_lines(
            labels,
            &spans(&self.view.tasks),
            |p| PointFacts {
                agent: point_group.get(p).copied().filter(|_| kept(p)),
                reward: reward(p),
                output_tokens: output_tokens(p),
            },
            &[],
        );
        // A group the query keeps nothing of is left out.
        lines.into_iter().filter(|l| l.rollouts != "0").collect()
    }

    /// The tasks' reward groups at `threshold` as groups: their labels with the rule
    /// (`sometimes ≥ 1`) and each task's.
    pub fn reward_group_groups(&self, threshold: f64) -> (Vec<String>, Vec<u32>) {
        let at = crate::figures::reward(Some(threshold));
        let labels = RewardGroup::ALL
            .iter()
            .map(|g| match g {
                RewardGroup::AllSuccess => format!("always ≥ {at}"),
                RewardGroup::Mixed => format!("sometimes ≥ {at}"),
                RewardGroup::AllFailure => format!("never ≥ {at}"),
                RewardGroup::NoReward => "no reward".into(),
            })
            .collect();
        let of_task = self
            .groups_at(threshold)
            .iter()
            .map(|g| RewardGroup::ALL.iter().position(|x| x == g).unwrap_or(0) as u32)
            .collect();
        (labels, of_task)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_head_offers_scalar_fields_but_not_the_rows_keys() {
        let head = br#"{"responses_create_params":{"input":[]},"agent_ref":{"name":"a"},"dataset":"gsm8k","metadata":{"difficulty":"hard","tags":["x"]},"level":3,"_ng_task_index":0,"_ng_rollout_index":0}
{"dataset":"mbpp","extra":true,"_ng_task_index":1}
{"cut":"#;
        assert_eq!(
            fields_in_head(head),
            ["dataset", "metadata.difficulty", "level", "extra"]
        );
    }

    #[test]
    fn a_field_reads_each_task_s_first_row_and_folds_rare_values() {
        let mut r = FieldReader::new("metadata.difficulty");
        for (t, d) in [
            (0, "hard"),
            (0, "easy"),
            (1, "easy"),
            (2, "hard"),
            (3, "easy"),
        ] {
            let line = format!(r#"{{"_ng_task_index":{t},"metadata":{{"difficulty":"{d}"}}}}"#);
            r.line(line.as_bytes()).unwrap();
        }
        r.line(br#"{"_ng_task_index":4}"#).unwrap();
        assert!(r.line(b"[1]").unwrap_err().contains("_ng_task_index"));
        let g = r.finish("metadata.difficulty", &[0, 1, 2, 3, 4, 9]);
        assert_eq!(g.labels, ["easy", "hard", NO_VALUE]);
        assert_eq!(g.of_task, [1, 0, 1, 0, 2, 2]);

        let mut many = FieldReader::new("id");
        let tasks: Vec<i64> = (0..30).collect();
        for t in &tasks {
            many.line(format!(r#"{{"_ng_task_index":{t},"id":{}}}"#, t % 25).as_bytes())
                .unwrap();
        }
        let g = many.finish("id", &tasks);
        assert_eq!(g.labels.len(), MAX_GROUPS);
        assert_eq!(g.labels[MAX_GROUPS - 1], "other values (6)");
        assert_eq!(g.of_task[29], 4); // id 4: one of the five values held by two tasks
    }

    fn run() -> RunView {
        let inputs = br#"{"responses_create_params":{"input":"a"},"agent_ref":{"name":"x"},"_ng_task_index":0,"_ng_rollout_index":0}
{"responses_create_params":{"input":"a"},"agent_ref":{"name":"x"},"_ng_task_index":0,"_ng_rollout_index":1}
{"responses_create_params":{"input":"b"},"agent_ref":{"name":"x"},"_ng_task_index":1,"_ng_rollout_index":0}
"#;
        let rollouts = br#"{"_ng_task_index":0,"_ng_rollout_index":1,"reward":1.0}
{"_ng_task_index":1,"_ng_rollout_index":0,"reward":0.0}
{"_ng_task_index":0,"_ng_rollout_index":0,"reward":0.0}
"#;
        let p =
            crate::output::profile_bytes(inputs, "i", rollouts, "r", Default::default()).unwrap();
        let (view, cols) = super::super::model::build(&p, "i", "r", &Default::default());
        RunView::new(view, cols)
    }

    #[test]
    fn each_group_counts_its_tasks_rollouts_and_the_query_s() {
        let r = run();
        let line = |l: &AgentLine| (l.agent.clone(), l.rollouts.clone(), l.mean_reward.clone());
        let labels = ["hard".to_string(), "easy".to_string()];
        let all: Vec<_> = r
            .group_lines(&labels, &[0, 1], None)
            .iter()
            .map(line)
            .collect();
        assert_eq!(
            all,
            [
                ("hard".into(), "2".into(), "0.5".into()),
                ("easy".into(), "1".into(), "0".into())
            ]
        );
        let rewards = r.metric_values(r.metric("reward"));
        let failed: Vec<bool> = rewards.iter().map(|v| *v == 0.0).collect();
        let some: Vec<_> = r
            .group_lines(&labels, &[0, 1], Some(&failed))
            .iter()
            .map(line)
            .collect();
        assert_eq!(
            some,
            [
                ("hard".into(), "1".into(), "0".into()),
                ("easy".into(), "1".into(), "0".into())
            ]
        );
        let (labels, of_task) = r.reward_group_groups(1.0);
        let groups: Vec<_> = r
            .group_lines(&labels, &of_task, None)
            .iter()
            .map(line)
            .collect();
        assert_eq!(groups.len(), 2, "{groups:?}");
        assert!(groups.contains(&("sometimes ≥ 1".into(), "2".into(), "0.5".into())));
        assert!(groups.contains(&("never ≥ 1".into(), "1".into(), "0".into())));
    }
}
