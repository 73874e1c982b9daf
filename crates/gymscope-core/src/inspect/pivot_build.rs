//! The build and the selection as the app shows them: the page's settings as plain data (turned
//! into the builder's options, the Gym config and the metrics' paths exactly as the CLI does with
//! `--relative-paths`), the counts kept and skipped by reason, the list of pivots written and a
//! pivot beside the source row it came from, its prefix and expected action marked.

use crate::conversation::{content_text, item, Item};
use crate::names;
use crate::pivot_build::config::{self, ConfigOptions};
use crate::pivot_build::select::{Class, SelectOptions, Sort};
use crate::pivot_build::skips::Reason;
use crate::pivot_build::turns::{classify, Kind};
use crate::pivot_build::{BuildOptions, Metrics, Paths};
use crate::reward_group::RewardGroup;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The page's build settings: the filters a user chooses; every other flag at its default.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PageBuild {
    pub agent_ref: String,
    pub min_reward: f64,
    pub source_groups: Vec<RewardGroup>,
    pub tool_calls_only: bool,
    pub multi_call_batch: bool,
    pub drop_reasoning: bool,
    pub limit: Option<u64>,
}

impl PageBuild {
    /// Reads the page's fields: `groups` are the mixed, all_success and all_failure boxes.
    pub fn parse(
        agent_ref: &str,
        min_reward: &str,
        groups: [bool; 3],
        limit: &str,
    ) -> Result<PageBuild, String> {
        let agent_ref = agent_ref.trim();
        if agent_ref.is_empty() {
            return Err("agent_ref name: required (the rows' `agent_ref.name`)".into());
        }
        let min_reward = match min_reward.trim() {
            "" => crate::reward_group::DEFAULT_THRESHOLD,
            s => s
                .parse::<f64>()
                .ok()
                .filter(|x| x.is_finite())
                .ok_or_else(|| format!("minimum reward: '{s}' is not a number"))?,
        };
        let source_groups: Vec<RewardGroup> = [
            RewardGroup::Mixed,
            RewardGroup::AllSuccess,
            RewardGroup::AllFailure,
        ]
        .into_iter()
        .zip(groups)
        .filter_map(|(g, on)| on.then_some(g))
        .collect();
        if source_groups.is_empty() {
            return Err("source reward groups: choose at least one".into());
        }
        let limit = match limit.trim() {
            "" => None,
            s => Some(
                s.parse::<u64>()
                    .ok()
                    .filter(|n| *n > 0)
                    .ok_or_else(|| format!("limit: '{s}' is not a positive whole number"))?,
            ),
        };
        Ok(PageBuild {
            agent_ref: agent_ref.to_string(),
            min_reward,
            source_groups,
            tool_calls_only: false,
            multi_call_batch: false,
            drop_reasoning: false,
            limit,
        })
    }

    pub fn build_options(&self) -> BuildOptions {
        let mut o = BuildOptions::new(&self.agent_ref);
        o.min_reward = self.min_reward;
        o.source_groups.clone_from(&self.source_groups);
        o.tool_calls_only = self.tool_calls_only;
        o.multi_call_batch = self.multi_call_batch;
        o.drop_reasoning = self.drop_reasoning;
        o.limit = self.limit;
        o
    }

    /// The Gym config of a build from `input` (the dataset path relative, as with
    /// `--relative-paths`: the app cannot know where the file will be saved).
    pub fn config_options(&self, input: &str) -> ConfigOptions {
        let out = names::built_pivots(input);
        ConfigOptions {
            agent_ref: self.agent_ref.clone(),
            train_path: out.clone(),
            validation_path: None,
            license: "TBD".into(),
            description: config::default_description(&out),
            comparator: self.build_options().comparator(),
        }
    }

    pub fn paths(&self, input: &str) -> Paths {
        let out = names::built_pivots(input);
        Paths {
            input: input.to_string(),
            config: names::pivot_gym_config(&out),
            skipped: names::pivot_skipped(&out),
            output: out,
            agent_ref: self.agent_ref.clone(),
        }
    }

    /// The same build on the command line (run in the folder of the source file).
    pub fn command(&self, input: &str) -> String {
        let groups: Vec<&str> = self.source_groups.iter().map(|g| g.as_str()).collect();
        let mut c = format!(
            "gymscope build-pivot --input {input} --output {} --agent-ref {} --min-reward {} --source-groups {} --relative-paths",
            names::built_pivots(input),
            self.agent_ref,
            self.min_reward,
            groups.join(",")
        );
        for (on, flag) in [
            (self.tool_calls_only, " --tool-calls-only"),
            (self.multi_call_batch, " --multi-call batch"),
            (self.drop_reasoning, " --reasoning drop"),
        ] {
            if on {
                c.push_str(flag);
            }
        }
        if let Some(n) = self.limit {
            c.push_str(&format!(" --limit {n}"));
        }
        c
    }
}

/// One skip reason's count.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SkipCount {
    pub reason: String,
    pub count: u64,
    /// Whether it skips a whole source row (else one decision point).
    pub row_level: bool,
}

/// The counts the page shows after a build.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BuildSummary {
    /// `build-pivot`'s outcome line.
    pub headline: String,
    pub source_format: String,
    pub kept: u64,
    pub source_rows: u64,
    pub skipped_rows: u64,
    /// Source rows that gave at least one pivot.
    #[serde(default)]
    pub rows_with_pivots: u64,
    pub decision_points: u64,
    pub skipped_decision_points: u64,
    /// Every reason, zeros included, in [`Reason`]'s order.
    pub skips: Vec<SkipCount>,
    /// Task groups and source rows by class: all_success, all_failure, mixed.
    pub groups: Vec<(String, u64, u64)>,
}

impl BuildSummary {
    /// Every source row accounted for, once: skipped whole, read with every decision point
    /// skipped, or giving pivots ("53 rows from 43 of 120 source rows (57 skipped)" left 20
    /// unsaid).
    pub fn funnel(&self) -> String {
        use crate::figures::count;
        let n = |v: u64| count(usize::try_from(v).unwrap_or(usize::MAX));
        let without = self
            .source_rows
            .saturating_sub(self.skipped_rows)
            .saturating_sub(self.rows_with_pivots);
        format!(
            "{} source rows: {} skipped whole (by reason below), {} read but every decision point in them skipped, {} gave the {} pivots.",
            n(self.source_rows),
            n(self.skipped_rows),
            n(without),
            n(self.rows_with_pivots),
            n(self.kept)
        )
    }

    pub fn new(m: &Metrics) -> BuildSummary {
        let skips: Vec<SkipCount> = Reason::ALL
            .iter()
            .map(|r| SkipCount {
                reason: r.as_str().to_string(),
                count: m.skip(*r),
                row_level: r.is_row_level(),
            })
            .collect();
        BuildSummary {
            headline: m.headline(),
            source_format: m.source_format.clone(),
            kept: m.pivot_rows_written,
            source_rows: m.source_rows_seen,
            skipped_rows: skips.iter().filter(|s| s.row_level).map(|s| s.count).sum(),
            rows_with_pivots: m.trajectories_with_pivots,
            decision_points: m.decision_points,
            skipped_decision_points: m.skipped_decision_points(),
            skips,
            groups: crate::pivot_build::metrics::GROUPS
                .iter()
                .enumerate()
                .map(|(i, g)| (g.to_string(), m.group_tasks[i], m.group_trajectories[i]))
                .collect(),
        }
    }
}

/// Whether a source line is blank: such lines are not rows (`trajectory_id` skips them), as in
/// the builder (a line that is not UTF-8 is a row, skipped as invalid).
pub fn is_blank_row(bytes: &[u8]) -> bool {
    std::str::from_utf8(bytes).is_ok_and(|t| t.trim().is_empty())
}

/// A pivot written, as the page lists it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PivotEntry {
    /// 1-based line in the pivot file.
    pub line: u64,
    pub offset: u64,
    pub len: u32,
    pub trajectory_id: u64,
    /// The expected action in a few words.
    pub action: String,
    /// The source row's byte span (offset, length).
    pub source: Option<(u64, u32)>,
}

#[derive(Deserialize)]
struct Head {
    trajectory_id: u64,
    expected_action: Value,
}

/// `trajectory_id` and the action label of a pivot row.
pub fn entry_of(row: &[u8]) -> Result<(u64, String), String> {
    let head: Head = serde_json::from_slice(row).map_err(|e| e.to_string())?;
    Ok((head.trajectory_id, action_label(&head.expected_action)))
}

fn short(s: &str, n: usize) -> String {
    let mut out: String = s.chars().take(n).collect();
    if s.chars().nth(n).is_some() {
        out.push('…');
    }
    out
}

/// `name(arguments)`, `message: text` or `batch: a, b`, shortened.
pub fn action_label(action: &Value) -> String {
    let field = |v: &Value, k: &str| v.get(k).and_then(Value::as_str).unwrap_or("").to_string();
    match action.get("type").and_then(Value::as_str) {
        Some("function_call") => short(
            &format!("{}({})", field(action, "name"), field(action, "arguments")),
            80,
        ),
        Some("function_call_batch") => {
            let calls = action.get("calls").and_then(Value::as_array);
            let names: Vec<String> = calls
                .into_iter()
                .flatten()
                .map(|c| field(c, "name"))
                .collect();
            short(&format!("batch: {}", names.join(", ")), 80)
        }
        _ => short(
            &format!("message: {}", content_text(action.get("content"))),
            80,
        ),
    }
}

/// Where an item of the source sits relative to the pivot.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Mark {
    /// Before the decision point: the pivot's context.
    Prefix,
    /// The turn the pivot asks the policy to reproduce.
    Action,
    After,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Marked {
    pub item: Item,
    pub mark: Mark,
}

/// A pivot row next to the row it came from.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PivotPair {
    pub trajectory_id: u64,
    pub pivot_id: String,
    /// The pivot's `responses_create_params.input`.
    pub prefix: Vec<Item>,
    /// Its expected action (a batch: one call each).
    pub expected: Vec<Item>,
    /// The source row, its items marked (empty when the layout has no items to mark).
    pub source: Vec<Marked>,
    /// Where the decision point is in the source, in words.
    pub place: String,
}

fn expected_items(action: &Value) -> Vec<Item> {
    match action.get("type").and_then(Value::as_str) {
        Some("function_call_batch") => action
            .get("calls")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .map(|c| {
                let mut c = c.clone();
                c["type"] = "function_call".into();
                item(&c)
            })
            .collect(),
        Some("function_call") => vec![item(action)],
        _ => vec![Item::Message {
            role: "assistant".into(),
            text: content_text(action.get("content")),
        }],
    }
}

/// Responses items `T` (input, then output), the turn at `at` marked up to its last model item.
fn responses_source(row: &Value, at: usize) -> Vec<Marked> {
    let mut items: Vec<Value> = match row.pointer("/responses_create_params/input") {
        Some(Value::String(s)) => vec![serde_json::json!({"role": "user", "content": s})],
        Some(Value::Array(a)) => a.clone(),
        _ => Vec::new(),
    };
    if let Some(Value::Array(out)) = row.pointer("/response/output") {
        items.extend(out.iter().cloned());
    }
    let turn_end = (at..items.len())
        .find(|&i| {
            !matches!(
                classify(&items[i]),
                Kind::Reasoning | Kind::Call | Kind::OtherCall | Kind::AssistantText
            )
        })
        .unwrap_or(items.len());
    items
        .iter()
        .enumerate()
        .map(|(i, v)| Marked {
            item: item(v),
            mark: if i < at {
                Mark::Prefix
            } else if i < turn_end {
                Mark::Action
            } else {
                Mark::After
            },
        })
        .collect()
}

/// Chat messages (`messages`, or tau2's `result.messages`), message `at` marked.
fn message_source(messages: &[Value], at: usize) -> Vec<Marked> {
    let mut out = Vec::new();
    for (i, m) in messages.iter().enumerate() {
        let mark = match i.cmp(&at) {
            std::cmp::Ordering::Less => Mark::Prefix,
            std::cmp::Ordering::Equal => Mark::Action,
            std::cmp::Ordering::Greater => Mark::After,
        };
        let role = m
            .get("role")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        let text = content_text(m.get("content"));
        if !text.is_empty() || m.get("tool_calls").is_none() {
            out.push(Marked {
                item: Item::Message { role, text },
                mark,
            });
        }
        for c in m
            .get("tool_calls")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let f = c.get("function").unwrap_or(c);
            let call = serde_json::json!({"type": "function_call", "name": f.get("name"),
                "arguments": f.get("arguments"), "call_id": c.get("id")});
            out.push(Marked {
                item: item(&call),
                mark,
            });
        }
    }
    out
}

/// Reads a pivot row and (when given) its source row into a [`PivotPair`].
pub fn pair(pivot: &[u8], source: Option<&[u8]>) -> Result<PivotPair, String> {
    let row: Value =
        serde_json::from_slice(pivot).map_err(|e| format!("the pivot row: invalid JSON: {e}"))?;
    let info = row.get("pivot_info").cloned().unwrap_or(Value::Null);
    let index = |k: &str| info.get(k).and_then(Value::as_u64);
    let prefix = match row.pointer("/responses_create_params/input") {
        Some(Value::Array(a)) => a.iter().map(item).collect(),
        _ => Vec::new(),
    };
    let expected = row
        .get("expected_action")
        .map(expected_items)
        .unwrap_or_default();
    let source_row: Option<Value> = source
        .map(|s| {
            serde_json::from_slice(s).map_err(|e| format!("the source row: invalid JSON: {e}"))
        })
        .transpose()?;
    let (source, place) = match (
        &source_row,
        index("source_item_index"),
        index("source_message_index"),
    ) {
        (Some(s), Some(at), _) => (
            responses_source(s, usize::try_from(at).unwrap_or(usize::MAX)),
            format!("item {at} of the source's input + output"),
        ),
        (Some(s), None, Some(at)) => {
            let messages = s
                .get("messages")
                .or_else(|| s.pointer("/result/messages"))
                .and_then(Value::as_array);
            let place = format!("message {at} of the source");
            match messages {
                Some(m) => (
                    message_source(m, usize::try_from(at).unwrap_or(usize::MAX)),
                    place,
                ),
                None => (Vec::new(), place),
            }
        }
        (None, _, _) => (Vec::new(), "the source row is not available".into()),
        _ => (Vec::new(), "the pivot names no source index".into()),
    };
    Ok(PivotPair {
        trajectory_id: row
            .get("trajectory_id")
            .and_then(Value::as_u64)
            .unwrap_or(0),
        pivot_id: info
            .get("pivot_id")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string(),
        prefix,
        expected,
        source,
        place,
    })
}

/// The page's selection settings: the pivots kept are those whose group was mixed (the
/// default `--keep`), as `select-pivot` decides.
pub fn select_options(
    min_rollouts: &str,
    success_threshold: &str,
    max_pivots: &str,
) -> Result<SelectOptions, String> {
    let d = SelectOptions::default();
    let min_rollouts = match min_rollouts.trim() {
        "" => d.min_rollouts,
        s => s
            .parse()
            .map_err(|_| format!("minimum rollouts: '{s}' is not a whole number"))?,
    };
    let success_threshold = match success_threshold.trim() {
        "" => d.success_threshold,
        s => s
            .parse::<f64>()
            .ok()
            .filter(|x| x.is_finite())
            .ok_or_else(|| format!("success threshold: '{s}' is not a number"))?,
    };
    let max_pivots = match max_pivots.trim() {
        "" => None,
        s => Some(
            s.parse()
                .map_err(|_| format!("maximum pivots: '{s}' is not a whole number"))?,
        ),
    };
    Ok(SelectOptions {
        min_rollouts,
        success_threshold,
        keep: vec![Class::Mixed],
        max_pivots,
        sort: Sort::None,
        ..SelectOptions::default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const WORKPLACE: &[u8] = include_bytes!(
        "../../../../tests/fixtures/pivot-build/upstream/workplace_assistant.example_rollouts.jsonl"
    );

    #[test]
    fn page_fields_are_read_or_refused_with_the_field_named() {
        let b = PageBuild::parse(" a_agent ", "0.5", [true, false, false], "3").unwrap();
        assert_eq!(b.agent_ref, "a_agent");
        assert_eq!(b.source_groups, vec![RewardGroup::Mixed]);
        assert_eq!(b.limit, Some(3));
        let o = b.build_options();
        assert!((o.min_reward - 0.5).abs() < f64::EPSILON);
        assert_eq!(o.limit, Some(3));
        let d = PageBuild::parse("a", "", [true, true, false], "").unwrap();
        assert_eq!(
            d.build_options().source_groups,
            BuildOptions::new("a").source_groups
        );
        assert!(PageBuild::parse("", "1", [true; 3], "")
            .unwrap_err()
            .contains("agent_ref"));
        assert!(PageBuild::parse("a", "x", [true; 3], "")
            .unwrap_err()
            .contains("minimum reward"));
        assert!(PageBuild::parse("a", "NaN", [true; 3], "").is_err());
        assert!(PageBuild::parse("a", "1", [false; 3], "")
            .unwrap_err()
            .contains("groups"));
        assert!(PageBuild::parse("a", "1", [true; 3], "0")
            .unwrap_err()
            .contains("limit"));
        assert_eq!(
            d.command("r.jsonl"),
            "gymscope build-pivot --input r.jsonl --output r_pivots.jsonl --agent-ref a --min-reward 1 --source-groups mixed,all_success --relative-paths"
        );
        let p = d.paths("r.jsonl");
        assert_eq!(
            (p.output.as_str(), p.skipped.as_str()),
            ("r_pivots.jsonl", "r_pivots.skipped.jsonl")
        );
        assert_eq!(d.config_options("r.jsonl").train_path, "r_pivots.jsonl");
    }

    #[test]
    fn a_pivot_sits_beside_its_rollout_with_the_action_marked() {
        let b = PageBuild::parse("a_agent", "1", [true, true, false], "").unwrap();
        let built =
            crate::pivot_build::build_bytes("w.jsonl", WORKPLACE, b.build_options(), 4096).unwrap();
        let summary = BuildSummary::new(&built.metrics);
        assert_eq!(summary.kept, built.metrics.pivot_rows_written);
        assert_eq!(summary.skips.len(), Reason::ALL.len());
        let sources: Vec<&[u8]> = WORKPLACE
            .split(|b| *b == b'\n')
            .filter(|l| !is_blank_row(l))
            .collect();
        let rows: Vec<&[u8]> = built
            .rows
            .split(|b| *b == b'\n')
            .filter(|l| !l.is_empty())
            .collect();
        assert_eq!(rows.len() as u64, summary.kept);
        for row in rows {
            let (tid, label) = entry_of(row).unwrap();
            let v: Value = serde_json::from_slice(row).unwrap();
            let at = v["pivot_info"]["source_item_index"].as_u64().unwrap() as usize;
            let p = pair(row, Some(sources[tid as usize])).unwrap();
            assert_eq!(p.trajectory_id, tid);
            // The prefix is every source item before the decision point.
            let before: Vec<&Item> = p
                .source
                .iter()
                .filter(|m| m.mark == Mark::Prefix)
                .map(|m| &m.item)
                .collect();
            assert_eq!(before.len(), at);
            assert_eq!(before.len(), p.prefix.len());
            // The expected action is among the marked items, and the label names it.
            let expected = &p.expected[0];
            match expected {
                Item::FunctionCall { name, .. } => {
                    assert!(label.starts_with(&format!("{name}(")), "{label}");
                }
                Item::Message { .. } => assert!(label.starts_with("message: "), "{label}"),
                other => panic!("{other:?}"),
            }
            assert!(p
                .source
                .iter()
                .any(|m| m.mark == Mark::Action && same_action(&m.item, expected)));
            assert_eq!(p.source[at].mark, Mark::Action);
        }
    }

    fn same_action(a: &Item, b: &Item) -> bool {
        match (a, b) {
            (
                Item::FunctionCall {
                    name: n1,
                    arguments: a1,
                    ..
                },
                Item::FunctionCall {
                    name: n2,
                    arguments: a2,
                    ..
                },
            ) => n1 == n2 && a1 == a2,
            (Item::Message { text: t1, .. }, Item::Message { text: t2, .. }) => t1 == t2,
            _ => false,
        }
    }

    #[test]
    fn chat_messages_are_marked_by_message_index_and_bad_rows_say_which() {
        let src = br#"{"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"","tool_calls":[{"id":"c1","function":{"name":"f","arguments":"{}"}}]},{"role":"tool","content":"ok"}]}"#;
        let piv = br#"{"trajectory_id":0,"responses_create_params":{"input":[{"role":"user","content":"hi"}]},"expected_action":{"type":"message","content":"<b>x</b>"},"pivot_info":{"pivot_id":"p","source_message_index":1}}"#;
        let p = pair(piv, Some(src)).unwrap();
        let marks: Vec<Mark> = p.source.iter().map(|m| m.mark).collect();
        assert_eq!(marks, [Mark::Prefix, Mark::Action, Mark::After]);
        assert!(matches!(&p.source[1].item, Item::FunctionCall { name, .. } if name == "f"));
        assert_eq!(
            p.expected,
            [Item::Message {
                role: "assistant".into(),
                text: "<b>x</b>".into()
            }]
        );
        assert!(pair(b"{", None).unwrap_err().contains("pivot row"));
        assert!(pair(piv, Some(b"nope")).unwrap_err().contains("source row"));
        assert!(is_blank_row(b" \t\r") && !is_blank_row(b"\xff") && !is_blank_row(b"{}"));
    }

    #[test]
    fn selection_fields() {
        let o = select_options("", "", "").unwrap();
        assert_eq!(o, SelectOptions::default());
        let o = select_options("4", "0.5", "10").unwrap();
        assert_eq!((o.min_rollouts, o.max_pivots), (4, Some(10)));
        assert!(select_options("x", "", "")
            .unwrap_err()
            .contains("minimum rollouts"));
        assert!(select_options("", "inf", "").is_err());
    }
}
