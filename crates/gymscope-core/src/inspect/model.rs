//! A profile reduced to what the inspector shows, as compact columns: per-task statistics and
//! per-rollout points are flat `f64` arrays (NaN where missing) so a million rollouts cross from
//! the worker to the page as a few typed arrays, not a million objects.

use crate::conversation::{conversation, Item};
use crate::profile::Profile;
use crate::read::jsonl::LineSpan;
use crate::render::LineSource;
use crate::report::ReportInput;
use crate::table::key_figures::{key_figures, TaskSpan};
use crate::table::{self, Table};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

pub use crate::reward_group::RewardGroup;
use crate::reward_group::{classify, DEFAULT_THRESHOLD};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TaskMeta {
    pub task: i64,
    pub agents: Vec<String>,
    pub group: RewardGroup,
    /// The start of the task's last user message, for search and display.
    pub snippet: String,
    /// This task's rollouts are points `first_point .. first_point + num_rollouts`.
    pub first_point: u32,
    pub num_rollouts: u32,
}

pub use crate::table::key_figures::Totals;

/// The inspector's view of a run (the small part; the big arrays travel in [`Columns`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct InspectView {
    pub inputs_name: String,
    pub rollouts_name: String,
    pub summary: [String; 2],
    pub warnings: Vec<String>,
    pub totals: Totals,
    pub agents: Table,
    /// v0.7.0's per-repeat reward (`table::repeat_table`), when an agent has two repeats.
    #[serde(default)]
    pub repeats: Option<Table>,
    /// Masked rollouts and the reward across repeats, in words (`table::repeat_notes`).
    #[serde(default)]
    pub repeat_notes: Vec<String>,
    /// The run's key figures, the page's first cards (`key_figures`).
    #[serde(default)]
    pub figures: Vec<crate::table::key_figures::KeyFigure>,
    /// One line per agent beside the plot (`key_figures::agent_lines`).
    #[serde(default)]
    pub agent_lines: Vec<crate::table::key_figures::AgentLine>,
    /// Numeric fields of the rollouts (reward, tokens, verifier fields): the plot's axes.
    pub metrics: Vec<String>,
    /// Headers of the task table (`mean/reward`, …, `reward_profile_completion_pct`).
    pub task_headers: Vec<String>,
    pub tasks: Vec<TaskMeta>,
    /// Rollout health, computed in the same read as the profile (`inspect::health`).
    #[serde(default)]
    pub health: super::health_view::HealthState,
}

impl InspectView {
    /// The view as postcard bytes: the app's worker sends it to the page as one byte array,
    /// decoded in wasm, not as tens of thousands of JS objects read field by field (issue 61).
    pub fn to_bytes(&self) -> Result<Vec<u8>, String> {
        postcard::to_allocvec(self).map_err(|e| format!("the view cannot be encoded: {e}"))
    }

    pub fn from_bytes(bytes: &[u8]) -> Result<InspectView, String> {
        postcard::from_bytes(bytes).map_err(|e| format!("the view cannot be decoded: {e}"))
    }
}

/// The big arrays, row-major.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Columns {
    /// tasks × task_headers.
    pub task_stats: Vec<f64>,
    /// Per rollout point, in (task, rollout) order.
    pub point_task: Vec<f64>,
    pub point_rollout: Vec<f64>,
    /// The agent of each point: its row in `InspectView::agents` (NaN when not known, as in
    /// runs read back from profile files).
    pub point_agent: Vec<f64>,
    /// Byte offset and length of each rollout's line in the rollouts file.
    pub point_offset: Vec<f64>,
    pub point_len: Vec<f64>,
    /// rollouts × metrics.
    pub point_values: Vec<f64>,
    /// Per rollout point, its health flags as bits (`inspect::health::bits`) and its agent
    /// (index in the health view's agents); NaN where not known, empty without health.
    pub point_flags: Vec<f64>,
    pub point_health_agent: Vec<f64>,
    /// Per rollout point, NeMo Gym's verdict (index in the health view's `upstream.sets`); NaN
    /// where its file has none, empty without a verdict file.
    pub point_verdict: Vec<f64>,
}

/// Builds the view; `snippets` maps task index → prompt snippet (see [`snippet`]).
pub fn build(
    profile: &Profile,
    inputs_name: &str,
    rollouts_name: &str,
    snippets: &HashMap<i64, String>,
) -> (InspectView, Columns) {
    let metrics: Vec<String> = (0..profile.columns.len())
        .map(|c| profile.column_name(c).to_string())
        .collect();
    let width = metrics.len();
    let col_of: HashMap<u32, usize> = profile
        .columns
        .iter()
        .enumerate()
        .map(|(i, k)| (*k, i))
        .collect();
    let mut cols = Columns::default();
    for (i, r) in profile.rollouts.iter().enumerate() {
        cols.point_task.push(r.key.task as f64);
        cols.point_agent
            .push(profile.rollout_agent[i].map_or(f64::NAN, |a| a as f64));
        cols.point_rollout.push(r.key.rollout as f64);
        cols.point_offset.push(r.span.offset as f64);
        cols.point_len.push(f64::from(r.span.len));
        let start = cols.point_values.len();
        cols.point_values.resize(start + width, f64::NAN);
        r.metric_values(|k, v| {
            if let Some(&c) = col_of.get(&k) {
                cols.point_values[start + c] = v.as_f64();
            }
        });
    }
    let task_headers = table::task_headers(profile);
    cols.task_stats = table::task_stat_values(profile);
    let reward_col = metrics.iter().position(|m| m == "reward");
    let tasks: Vec<TaskMeta> = profile
        .tasks
        .iter()
        .map(|t| {
            let mut agents: Vec<String> = Vec::new();
            let mut rewards = Vec::new();
            for i in t.rollouts.clone() {
                if let Some(c) = reward_col {
                    let v = cols.point_values[i * width + c];
                    if !v.is_nan() {
                        rewards.push(v);
                    }
                }
            }
            for i in t.rollouts.clone() {
                if let Some(a) = profile.rollout_agent[i] {
                    let name = profile.agents[a].agent.name.to_string();
                    if !agents.contains(&name) {
                        agents.push(name);
                    }
                }
            }
            TaskMeta {
                task: t.task,
                agents,
                group: group(&rewards),
                snippet: snippets.get(&t.task).cloned().unwrap_or_default(),
                first_point: t.rollouts.start as u32,
                num_rollouts: t.num_rollouts as u32,
            }
        })
        .collect();
    let mean = |name: &str| -> Option<f64> {
        let c = metrics.iter().position(|m| m == name)?;
        let vals: Vec<f64> = (0..profile.rollouts.len())
            .map(|i| cols.point_values[i * width + c])
            .filter(|v| !v.is_nan())
            .collect();
        (!vals.is_empty()).then(|| crate::stats::np_sum(&vals) / vals.len() as f64)
    };
    let totals = Totals {
        tasks: profile.tasks.len(),
        rollouts: profile.rollouts.len(),
        expected_rollouts: profile.summary.expected_rollout_rows,
        agents: profile.agents.len(),
        mean_reward: mean("reward"),
        mean_output_tokens: mean("output_tokens"),
        mean_total_tokens: mean("total_tokens"),
    };
    let across = table::reward_across(profile);
    let task_spans = spans(&tasks);
    let figures = key_figures(
        &totals,
        &task_spans,
        field_of(&metrics, &cols, "reward"),
        &across,
    );
    let names: Vec<String> = profile
        .agents
        .iter()
        .map(|a| a.agent.name.to_string())
        .collect();
    let agent_lines = lines_of(&names, &task_spans, &metrics, &cols, &across, |_| true);
    let view = InspectView {
        inputs_name: inputs_name.into(),
        rollouts_name: rollouts_name.into(),
        summary: profile.summary.lines(),
        warnings: profile.warnings.clone(),
        totals,
        figures,
        agent_lines,
        agents: table::agent_table(profile),
        repeats: table::repeat_table(profile),
        repeat_notes: table::repeat_notes(profile),
        metrics,
        task_headers,
        tasks,
        health: super::health_view::HealthState::NotComputed,
    };
    (view, cols)
}

/// The view of a profile read back from its files (`*_reward_profiling.jsonl` and maybe
/// `*_agent_metrics.json`): statistics and per-rollout numbers from `rollout_infos`; the rollouts'
/// text is not in those files, so points have no line to open (NaN spans).
pub fn from_report_input(input: &ReportInput) -> (InspectView, Columns) {
    let points = &input.points;
    let mut metrics = vec!["reward".to_string()];
    metrics.extend(points.fields.iter().cloned());
    let width = metrics.len();
    let mut cols = Columns::default();
    for i in 0..points.len() {
        cols.point_task.push(points.task[i] as f64);
        cols.point_rollout.push(points.rollout[i] as f64);
        cols.point_agent.push(f64::NAN);
        cols.point_offset.push(f64::NAN);
        cols.point_len.push(f64::NAN);
        cols.point_values.push(points.reward[i].unwrap_or(f64::NAN));
        for f in &points.values {
            cols.point_values.push(f[i].unwrap_or(f64::NAN));
        }
    }
    let headers = input.tasks.headers.clone();
    for row in &input.tasks.rows {
        cols.task_stats.extend(
            row.cells
                .iter()
                .map(|c| c.value.map_or(f64::NAN, crate::json::Num::as_f64)),
        );
    }
    let snippets: HashMap<i64, String> = input
        .prompts
        .iter()
        .map(|(task, c)| (*task, snippet_of(c)))
        .collect();
    let mut tasks = Vec::with_capacity(input.tasks.rows.len());
    let mut at = 0usize;
    for row in &input.tasks.rows {
        let task: i64 = row.key.parse().unwrap_or_default();
        let first = at;
        while at < points.len() && points.task[at] == task {
            at += 1;
        }
        let rewards: Vec<f64> = (first..at).filter_map(|i| points.reward[i]).collect();
        tasks.push(TaskMeta {
            task,
            agents: Vec::new(),
            group: group(&rewards),
            snippet: snippets.get(&task).cloned().unwrap_or_default(),
            first_point: first as u32,
            num_rollouts: (at - first) as u32,
        });
    }
    let mean = |m: &str| -> Option<f64> {
        let c = metrics.iter().position(|x| x == m)?;
        let vals: Vec<f64> = (0..points.len())
            .map(|i| cols.point_values[i * width + c])
            .filter(|v| !v.is_nan())
            .collect();
        (!vals.is_empty()).then(|| crate::stats::np_sum(&vals) / vals.len() as f64)
    };
    let agents = input.agents.clone().unwrap_or(Table {
        headers: Vec::new(),
        rows: Vec::new(),
    });
    let totals = Totals {
        tasks: tasks.len(),
        rollouts: points.len(),
        expected_rollouts: input.summary.expected_rollout_rows,
        agents: agents.rows.len(),
        mean_reward: mean("reward"),
        mean_output_tokens: mean("output_tokens"),
        mean_total_tokens: mean("total_tokens"),
    };
    let view = InspectView {
        inputs_name: String::new(),
        rollouts_name: input
            .meta
            .sources
            .first()
            .map(|s| s.name.clone())
            .unwrap_or_default(),
        summary: input.summary.lines(),
        warnings: input.summary_note.iter().cloned().collect(),
        figures: key_figures(
            &totals,
            &spans(&tasks),
            field_of(&metrics, &cols, "reward"),
            &[],
        ),
        agent_lines: Vec::new(),
        totals,
        agents,
        repeats: input.repeats.clone(),
        repeat_notes: input.repeat_notes.clone(),
        metrics,
        task_headers: headers,
        tasks,
        health: super::health_view::HealthState::NotComputed,
    };
    (view, cols)
}

/// Each task's points, for the key figures.
pub(crate) fn spans(tasks: &[TaskMeta]) -> Vec<TaskSpan> {
    tasks
        .iter()
        .map(|t| TaskSpan {
            first: t.first_point as usize,
            n: t.num_rollouts as usize,
        })
        .collect()
}

/// A point's value of the numeric field `name` from the columns (`None` without one); the
/// field's column found once, not per point (a run may have thousands of numeric fields).
pub(crate) fn field_of<'a>(
    metrics: &[String],
    cols: &'a Columns,
    name: &str,
) -> impl Fn(usize) -> Option<f64> + 'a {
    let width = metrics.len();
    let column = metrics.iter().position(|m| m == name);
    move |p| {
        let v = cols.point_values.get(p * width + column?)?;
        (!v.is_nan()).then_some(*v)
    }
}

/// The agent lines from the columns: a point's agent is its row in the agent table; only the
/// points `keep` keeps are counted (a query's).
pub(crate) fn lines_of(
    names: &[String],
    tasks: &[TaskSpan],
    metrics: &[String],
    cols: &Columns,
    across: &[table::RewardAcross],
    keep: impl Fn(usize) -> bool,
) -> Vec<crate::table::key_figures::AgentLine> {
    let (reward, output_tokens) = (
        field_of(metrics, cols, "reward"),
        field_of(metrics, cols, "output_tokens"),
    );
    crate::table::key_figures::agent_lines(
        names,
        tasks,
        |p| crate::table::key_figures::PointFacts {
            agent: cols
                .point_agent
                .get(p)
                .filter(|a| a.is_finite() && keep(p))
                .map(|a| *a as usize),
            reward: reward(p),
            output_tokens: output_tokens(p),
        },
        across,
    )
}

fn group(rewards: &[f64]) -> RewardGroup {
    classify(rewards.iter().map(|&r| Some(r)), DEFAULT_THRESHOLD)
}

/// The start of a materialized row's last user message (or its last input item), one line.
pub fn snippet(sample_line: &[u8]) -> String {
    // Only the prompt is built: the rest of the row (tools, settings, keys) is checked and
    // skipped without a tree. Objects only (serde would read a struct from an array too); a row
    // that does not read so (a repeated key, an odd shape) is read whole, so the snippet is the
    // whole row's conversation's whenever serde_json reads the row whole.
    if let Some(params) = prompt_params(sample_line) {
        let mut kept = serde_json::Map::new();
        if let Some(i) = params.instructions {
            kept.insert("instructions".into(), i);
        }
        if let Some(i) = params.input {
            kept.insert("input".into(), i);
        }
        let row = serde_json::json!({ "responses_create_params": kept });
        return snippet_of(&conversation(&row));
    }
    let Ok(row) = serde_json::from_slice::<serde_json::Value>(sample_line) else {
        return String::new();
    };
    snippet_of(&conversation(&row))
}

/// A [`LineSource`] that keeps the prompt snippet of each line read through it: a profile's
/// task snippets taken while its reward-profiling file is written (each task's sample line is
/// read for that), so the app shows the profile before it has read them (issue 61).
pub struct SnippetTap<'a> {
    inner: &'a mut dyn LineSource,
    by_offset: HashMap<u64, String>,
}

impl<'a> SnippetTap<'a> {
    pub fn new(inner: &'a mut dyn LineSource) -> SnippetTap<'a> {
        SnippetTap {
            inner,
            by_offset: HashMap::new(),
        }
    }

    /// Each task's snippet in `profile.tasks` order (the view's), empty where none was read.
    pub fn snippets(&self, profile: &Profile) -> Vec<String> {
        let of = |t: &crate::profile::TaskProfile| self.by_offset.get(&t.sample.offset).cloned();
        profile
            .tasks
            .iter()
            .map(|t| of(t).unwrap_or_default())
            .collect()
    }
}

impl LineSource for SnippetTap<'_> {
    fn read_span(&mut self, span: LineSpan) -> std::io::Result<Vec<u8>> {
        let line = self.inner.read_span(span)?;
        (self.by_offset)
            .entry(span.offset)
            .or_insert_with(|| snippet(&line));
        Ok(line)
    }
}

/// `responses_create_params` of a row that is an object whose params are an object, absent or
/// null (then empty); `None` when the row does not read so.
fn prompt_params(line: &[u8]) -> Option<SampleParams> {
    let is_object = |raw: &[u8]| raw.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'{');
    if !is_object(line) {
        return None;
    }
    let row: SampleRow = serde_json::from_slice(line).ok()?;
    match row.params {
        None => Some(SampleParams::default()),
        Some(raw) if is_object(raw.get().as_bytes()) => serde_json::from_str(raw.get()).ok(),
        Some(_) => None,
    }
}

fn snippet_of(c: &crate::conversation::Conversation) -> String {
    let text = c
        .input
        .iter()
        .rev()
        .find_map(|item| match item {
            Item::Message { role, text } if role == "user" => Some(text.as_str()),
            _ => None,
        })
        .or_else(|| {
            c.input.iter().rev().find_map(|item| match item {
                Item::Message { text, .. } => Some(text.as_str()),
                _ => None,
            })
        })
        .unwrap_or_default();
    let one_line: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    one_line.chars().take(160).collect()
}

/// What of a materialized row its snippet reads.
#[derive(serde::Deserialize)]
struct SampleRow<'a> {
    #[serde(default, borrow, rename = "responses_create_params")]
    params: Option<&'a serde_json::value::RawValue>,
}

#[derive(Default, serde::Deserialize)]
struct SampleParams {
    #[serde(default)]
    instructions: Option<serde_json::Value>,
    #[serde(default)]
    input: Option<serde_json::Value>,
}

#[cfg(test)]
mod tests {

    #[test]
    fn the_totals_line_counts_in_words() {
        let mut t = Totals {
            tasks: 1,
            rollouts: 4,
            expected_rollouts: 4,
            agents: 1,
            mean_reward: Some(0.5),
            mean_output_tokens: None,
            mean_total_tokens: None,
        };
        assert!(t
            .line()
            .starts_with("1 task · 4 of 4 rollouts · 1 agent · mean reward 0.5"));
        (t.tasks, t.agents) = (6, 3);
        assert!(
            t.line()
                .starts_with("6 tasks · 4 of 4 rollouts · 3 agents ·"),
            "{}",
            t.line()
        );
        // Numbers for people (issue 44): separators, whole tokens, rewards at 4 digits.
        (t.tasks, t.rollouts, t.expected_rollouts) = (12_000, 48_000, 48_000);
        (t.mean_reward, t.mean_output_tokens) = (Some(0.433_912_5), Some(4058.6979));
        assert_eq!(
            t.line(),
            "12,000 tasks · 48,000 of 48,000 rollouts · 3 agents · mean reward 0.4339 · mean output tokens 4,059 · mean total tokens –"
        );
    }

    use super::*;

    #[test]
    fn groups_and_snippets() {
        assert_eq!(group(&[0.0, 0.0]), RewardGroup::AllFailure);
        assert_eq!(group(&[1.0]), RewardGroup::AllSuccess);
        assert_eq!(group(&[1.0, 0.0]), RewardGroup::Mixed);
        assert_eq!(group(&[]), RewardGroup::NoReward);
        let line = br#"{"responses_create_params":{"input":[{"role":"system","content":"sys"},{"role":"user","content":"What is\n  2+2?"}]}}"#;
        assert_eq!(snippet(line), "What is 2+2?");
    }

    /// The snippet read from the prompt alone is the one of the whole row's conversation.
    #[test]
    fn a_snippet_is_the_whole_rows_conversations() {
        let whole = |line: &[u8]| {
            serde_json::from_slice::<serde_json::Value>(line)
                .map(|row| snippet_of(&conversation(&row)))
                .unwrap_or_default()
        };
        let mut lines: Vec<Vec<u8>> = [
            r#"{"responses_create_params":{"input":"plain   text\nprompt","tools":[{"type":"function","name":"f"}]},"agent_ref":{"name":"a"}}"#,
            r#"{"responses_create_params":{"instructions":"Be brief.","input":[]}}"#,
            r#"{"responses_create_params":{"instructions":null,"input":[{"role":"assistant","content":[{"type":"output_text","text":"only"}]}]}}"#,
            r#"{"responses_create_params":{"input":[{"role":"user","content":"first"}],"input":[{"role":"user","content":"second"}]}}"#,
            r#"{"responses_create_params":null}"#,
            r#"{"responses_create_params":"text"}"#,
            r#"{"responses_create_params":[null,"an array is no struct"]}"#,
            r#"[{"input":"an array row"}]"#,
            r#"  {"responses_create_params":{"input":"leading space"}}"#,
            r#"{"responses_create_params":{"input":[{"role":"user","content":"a"}]},"responses_create_params":{"input":[{"role":"user","content":"b"}]}}"#,
            "[1, 2]",
            r#"{"responses_create_params":{"input":[{"role":"user","content":"#,
            "{}",
        ]
        .iter()
        .map(|l| l.as_bytes().to_vec())
        .collect();
        // NeMo Gym's examples: every shape of prompt upstream writes.
        let examples = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../tests/fixtures/gym-examples");
        let before = lines.len();
        for example in std::fs::read_dir(&examples).unwrap().flatten() {
            for file in std::fs::read_dir(example.path()).unwrap().flatten() {
                let path = file.path();
                if path
                    .to_string_lossy()
                    .ends_with("_materialized_inputs.jsonl")
                {
                    let text = std::fs::read(&path).unwrap();
                    lines.extend(text.split(|&b| b == b'\n').take(20).map(<[u8]>::to_vec));
                }
            }
        }
        assert!(lines.len() > before + 100, "the examples' inputs were read");
        for line in &lines {
            assert_eq!(
                snippet(line),
                whole(line),
                "{}",
                String::from_utf8_lossy(line)
            );
        }
    }

    #[test]
    fn the_snippets_read_while_the_profiling_file_is_written_are_each_tasks() {
        // Three tasks of two rollouts, each prompt its own; one sample has instructions too.
        let (mut inputs, mut rollouts) = (String::new(), String::new());
        for t in 0..3 {
            for r in 0..2 {
                let extra = if t == 1 {
                    r#""instructions":"be brief","#
                } else {
                    ""
                };
                inputs.push_str(&format!(
                    r#"{{"_ng_task_index":{t},"_ng_rollout_index":{r},"responses_create_params":{{{extra}"input":[{{"role":"user","content":"question  {t}\nplease"}}]}}}}"#
                ));
                inputs.push('\n');
                rollouts.push_str(&format!(
                    r#"{{"_ng_task_index":{t},"_ng_rollout_index":{r},"reward":{r}}}"#
                ));
                rollouts.push('\n');
            }
        }
        let (inputs, rollouts) = (inputs.into_bytes(), rollouts.into_bytes());
        let p =
            crate::output::profile_bytes(&inputs, "i", &rollouts, "r", Default::default()).unwrap();
        let (mut plain, mut tapped) = (Vec::new(), Vec::new());
        crate::render::write_reward_profiling(&p, &mut &inputs[..], "i", &mut plain).unwrap();
        let mut source = &inputs[..];
        let mut tap = SnippetTap::new(&mut source);
        crate::render::write_reward_profiling(&p, &mut tap, "i", &mut tapped).unwrap();
        assert_eq!(tapped, plain, "the tap changes nothing written");
        let want: Vec<String> = p
            .tasks
            .iter()
            .map(|t| {
                let start = t.sample.offset as usize;
                snippet(&inputs[start..start + t.sample.len as usize])
            })
            .collect();
        assert!(p.tasks.len() > 1 && want.iter().all(|s| !s.is_empty()));
        assert_eq!(tap.snippets(&p), want);
        // In the view's order: the view built with them shows the same.
        let by_task = p.tasks.iter().map(|t| t.task).zip(want.clone()).collect();
        let (view, _) = build(&p, "i", "r", &by_task);
        let shown: Vec<String> = view.tasks.iter().map(|t| t.snippet.clone()).collect();
        assert_eq!(shown, want);
    }

    #[test]
    fn columns_from_a_fixture() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../tests/fixtures/gym-examples/blackjack");
        let inputs = std::fs::read(dir.join("example_rollouts_materialized_inputs.jsonl")).unwrap();
        let rollouts = std::fs::read(dir.join("example_rollouts.jsonl")).unwrap();
        let p =
            crate::output::profile_bytes(&inputs, "i", &rollouts, "r", Default::default()).unwrap();
        let (view, cols) = build(&p, "i", "r", &HashMap::new());
        assert_eq!(view.totals.rollouts, 5);
        assert_eq!(view.totals.mean_reward, Some(0.2));
        assert_eq!(cols.point_task.len(), 5);
        assert_eq!(cols.point_values.len(), 5 * view.metrics.len());
        assert_eq!(cols.task_stats.len(), view.task_headers.len());
        assert_eq!(view.tasks[0].group, RewardGroup::Mixed);
        assert_eq!(view.tasks[0].agents, ["blackjack_gymnasium_agent"]);
        // Every point names its agent by its row in the agent table.
        assert_eq!(cols.point_agent, [0.0; 5]);
        assert_eq!(view.agents.rows[0].key, "blackjack_gymnasium_agent");

        // The same run read back from upstream's profile files shows the same table and points.
        let profiling =
            std::fs::read(dir.join("expected/example_rollouts_reward_profiling.jsonl")).unwrap();
        let metrics =
            std::fs::read(dir.join("expected/example_rollouts_agent_metrics.json")).unwrap();
        let input = crate::report::ReportInput::from_profile_files(
            Default::default(),
            ("p.jsonl", &profiling),
            Some(("m.json", &metrics)),
            100,
        )
        .unwrap();
        let (files_view, files_cols) = from_report_input(&input);
        assert_eq!(files_view.task_headers, view.task_headers);
        assert_eq!(files_view.totals.mean_reward, view.totals.mean_reward);
        assert_eq!(files_view.tasks[0].group, RewardGroup::Mixed);
        assert_eq!(files_view.agents.rows.len(), 1);
        for (a, b) in files_cols.task_stats.iter().zip(&cols.task_stats) {
            assert!(
                a == b
                    || (a.is_nan() && b.is_nan())
                    || (a - b).abs() <= 1e-9 * a.abs().max(b.abs()),
                "{a} vs {b}"
            );
        }
        assert_eq!(files_cols.point_rollout, cols.point_rollout);
    }
}

#[cfg(test)]
mod bare_run {
    use super::*;

    /// One rollout with no reward and no usage: the view is built, and its health attached.
    #[test]
    fn a_run_without_any_number_builds_its_view() {
        let inputs = br#"{"_ng_task_index":0,"_ng_rollout_index":0,"agent_ref":{"name":"a"},"responses_create_params":{"input":[]}}
"#;
        let rollouts = br#"{"_ng_task_index":0,"_ng_rollout_index":0,"response":{"output":[]}}
"#;
        let p =
            crate::output::profile_bytes(inputs, "i", rollouts, "r", Default::default()).unwrap();
        let (mut view, mut cols) = build(&p, "i", "r", &HashMap::new());
        let mut h = crate::health::HealthBuilder::new("r", 0.5);
        h.expect_inputs();
        h.push_inputs("i", inputs).unwrap();
        h.push_rollouts(rollouts).unwrap();
        h.end_rollouts().unwrap();
        let points = crate::inspect::health::PointSignals::of(&h);
        let report = h.finish().unwrap();
        crate::inspect::health::attach(&mut view, &mut cols, &report, &points);
        assert_eq!(view.totals.rollouts, 1);
    }

    /// Every example run's view, with health, survives its bytes (postcard has no
    /// self-describing forms: a field serde skips or reads loosely would break here).
    #[test]
    fn a_views_bytes_give_the_same_view() {
        use crate::health::HealthBuilder;
        use crate::inspect::health::{attach, PointSignals};
        let examples = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../tests/fixtures/gym-examples");
        let mut seen = 0;
        for example in std::fs::read_dir(&examples).unwrap().flatten() {
            let file = |suffix: &str| {
                std::fs::read_dir(example.path())
                    .unwrap()
                    .flatten()
                    .map(|f| f.path())
                    .find(|p| p.to_string_lossy().ends_with(suffix))
            };
            let (Some(i), Some(r)) = (file("_materialized_inputs.jsonl"), file("_rollouts.jsonl"))
            else {
                continue;
            };
            let (inputs, rollouts) = (std::fs::read(&i).unwrap(), std::fs::read(&r).unwrap());
            let Ok(p) =
                crate::output::profile_bytes(&inputs, "i", &rollouts, "r", Default::default())
            else {
                continue;
            };
            let (mut view, mut cols) = build(&p, "i", "r", &HashMap::new());
            let mut h = HealthBuilder::new("r", 0.5);
            h.push_rollouts(&rollouts).unwrap();
            h.end_rollouts().unwrap();
            let points = PointSignals::of(&h);
            attach(&mut view, &mut cols, &h.finish().unwrap(), &points);
            assert!(matches!(
                view.health,
                super::super::health_view::HealthState::Ready(_)
            ));
            let back = InspectView::from_bytes(&view.to_bytes().unwrap()).unwrap();
            assert_eq!(back, view, "{}", example.path().display());
            seen += 1;
        }
        assert!(seen >= 10, "the examples were read: {seen}");
    }
}
