//! The language on hand-made rows with known answers: precedence, errors with columns, every
//! field kind and text scope, missing values; the prefilter against the full evaluation on
//! every fixture line and on seeded mutations; `health.*` against `gymscope health`.

use super::*;
use serde_json::json;

fn rollout(task: i64, rollout: i64, reward: Value, output: Value, extra: Value) -> String {
    let mut row = json!({
        "responses_create_params": {"input": [{"role": "user", "content": "Solve 2+2, please"}]},
        "response": {"status": "completed", "output": output,
                     "usage": {"input_tokens": 10, "output_tokens": 7, "total_tokens": 17,
                               "output_tokens_details": {"reasoning_tokens": 3}}},
        "reward": reward, "_ng_task_index": task, "_ng_rollout_index": rollout,
        "agent_ref": {"type": "responses_api_agents", "name": "math"}});
    for (k, v) in extra.as_object().unwrap() {
        row[k] = v.clone();
    }
    row.to_string()
}

fn answer(text: &str) -> Value {
    json!([{"type": "reasoning", "summary": [{"type": "summary_text", "text": "I could give up here"}]},
           {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": text}]}])
}

fn tool_run() -> Value {
    json!([{"type": "function_call", "name": "edgar_search", "arguments": "{\"q\": \"10-K\\nfiling\"}", "call_id": "a"},
           {"type": "function_call_output", "call_id": "a", "output": "Error: rate limited"},
           {"type": "function_call", "name": "calc", "arguments": {"expr": "2+2"}, "call_id": "b"},
           {"type": "function_call_output", "call_id": "b", "output": [{"type": "output_text", "text": "4"}]},
           {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "\\boxed{4}"}]}])
}

/// A run of five rows: task 0 mixed (1, 0), task 1 all failure, task 2 with tools and odd fields.
fn run() -> Vec<String> {
    vec![
        rollout(
            0,
            0,
            json!(1.0),
            answer("The answer is \\boxed{4}"),
            json!({"timed_out": false}),
        ),
        rollout(
            0,
            1,
            json!(0),
            answer("I don't know"),
            json!({"timed_out": true, "wer": 0.25}),
        ),
        rollout(
            1,
            0,
            json!(0.0),
            json!([]),
            json!({"my-field": "x y", "nested": {"deep": {"n": 3}}}),
        ),
        rollout(2, 0, json!(true), tool_run(), json!({"note": null})),
        rollout(
            3,
            0,
            json!(null),
            answer("caf\u{e9}"),
            json!({"agent_ref": {"name": "other"}}),
        ),
    ]
}

fn facts(lines: &[String]) -> RunFacts {
    let mut f = RunFacts {
        pass_threshold: 1.0,
        ..RunFacts::default()
    };
    for l in lines {
        let row = read_keyed(l.as_bytes()).unwrap().unwrap();
        let reward = row
            .reward
            .as_ref()
            .and_then(crate::reward_group::reward_value);
        f.tasks.entry(row.key.0).or_default().add(reward, 1.0);
    }
    f
}

/// The keys of the rows matching `expr`, checking the prefilter gives the full evaluation's answer.
fn keys(lines: &[String], expr: &str) -> Vec<(i64, i64)> {
    let q = Query::parse(expr).unwrap_or_else(|e| panic!("{expr}: {e}"));
    let f = facts(lines);
    lines
        .iter()
        .filter_map(|l| {
            let row = read_keyed(l.as_bytes()).unwrap().unwrap();
            let fast = q.matches(l.as_bytes(), row.clone(), &f, &[]);
            assert_eq!(
                fast.is_some(),
                q.matches_slowly(l.as_bytes(), row, &f),
                "{expr} on {l}"
            );
            fast.map(|m| m.key)
        })
        .collect()
}

fn error(expr: &str) -> String {
    Query::parse(expr).unwrap_err().to_string()
}

#[test]
fn precedence_is_comparison_then_not_then_and_then_or() {
    let rows = run();
    // `not a > 0 and b` is `(not (a > 0)) and b`.
    assert_eq!(keys(&rows, "not reward > 0 and timed_out"), [(0, 1)]);
    assert_eq!(keys(&rows, "not (reward > 0 and timed_out)").len(), 5);
    // `a or b and c` is `a or (b and c)`.
    assert_eq!(
        keys(&rows, "task == 3 or task == 0 and rollout == 1"),
        [(0, 1), (3, 0)]
    );
    assert_eq!(
        keys(&rows, "(task == 3 or task == 0) and rollout == 1"),
        [(0, 1)]
    );
    assert_eq!(keys(&rows, "not not task == 1"), [(1, 0)]);
}

#[test]
fn a_malformed_expression_names_the_column_and_what_was_expected() {
    assert_eq!(error("reward >> 1"), "column 9: expected a value after `>`");
    assert_eq!(error(""), "column 1: the expression is empty");
    assert_eq!(
        error("reward == 1 and"),
        "column 16: expected a field or `(` after `and`"
    );
    assert_eq!(
        error("(reward == 1"),
        "column 13: expected `)` to close the `(` at column 1"
    );
    assert_eq!(error("reward == 1)"), "column 12: a `)` without its `(`");
    assert_eq!(
        error("reward = 1"),
        "column 8: `=` alone: write `==` to compare"
    );
    assert_eq!(
        error("output == \"x\""),
        "column 1: `output` is text: match it with `~ \"…\"` or `~ /…/`"
    );
    assert_eq!(
        error("output ~ 3"),
        "column 10: expected a string or /regex/ after `~`"
    );
    assert_eq!(
        error("agent == \"a"),
        "column 10: a string without its closing quote"
    );
    assert!(error("output ~ /(/").starts_with("column 10: the regex does not compile"));
    assert_eq!(
        error("output ~ /x/g"),
        "column 10: unknown regex flag `g` (the flag is `i`)"
    );
    assert!(error("health.loops").starts_with("column 1: `health.loops`: health flags are "));
    assert_eq!(
        error("reward 1"),
        "column 8: expected `and`, `or` or the end, found the number 1"
    );
    assert_eq!(
        error("reward && 1"),
        "column 8: `&` is not an operator: write `and` or `or`"
    );
    // Columns count characters, not bytes.
    assert_eq!(
        error("agent == \"é\" >"),
        "column 14: expected `and`, `or` or the end, found `>`"
    );
}

#[test]
fn numbers_compare_as_numbers_and_a_boolean_is_never_one() {
    let rows = run();
    assert_eq!(keys(&rows, "reward == 0"), [(0, 1), (1, 0)], "0 and 0.0");
    assert_eq!(keys(&rows, "reward == 1.0"), [(0, 0)], "true is not 1");
    assert_eq!(keys(&rows, "reward == true"), [(2, 0)]);
    assert_eq!(keys(&rows, "reward >= 0"), [(0, 0), (0, 1), (1, 0)]);
    assert_eq!(keys(&rows, "reward < 1e0"), [(0, 1), (1, 0)]);
    assert_eq!(keys(&rows, "reward == -0"), [(0, 1), (1, 0)]);
}

#[test]
fn missing_and_null_make_every_comparison_false_but_the_null_test() {
    let rows = run();
    assert_eq!(
        keys(&rows, "wer != 1"),
        [(0, 1)],
        "!= is false when missing"
    );
    assert_eq!(keys(&rows, "wer == null").len(), 4);
    assert_eq!(keys(&rows, "wer != null"), [(0, 1)]);
    assert_eq!(keys(&rows, "note == null").len(), 5, "null and missing");
    assert_eq!(keys(&rows, "reward == null"), [(3, 0)]);
    assert_eq!(keys(&rows, "reward != null").len(), 4);
    assert!(keys(&rows, "reward < 100 and reward > -100").len() == 3);
    assert!(keys(&rows, "unknown_field > 0 or unknown_field <= 0").is_empty());
}

#[test]
fn fields_of_every_kind() {
    let rows = run();
    assert_eq!(keys(&rows, "task == 2 and rollout == 0"), [(2, 0)]);
    assert_eq!(keys(&rows, "agent == \"other\""), [(3, 0)]);
    assert_eq!(keys(&rows, "agent != \"math\""), [(3, 0)]);
    assert_eq!(keys(&rows, "timed_out == true"), [(0, 1)]);
    assert_eq!(
        keys(&rows, "timed_out"),
        [(0, 1)],
        "a bare field is `== true`"
    );
    assert_eq!(keys(&rows, "`my-field` == \"x y\""), [(1, 0)]);
    assert_eq!(keys(&rows, "nested.deep.n == 3"), [(1, 0)]);
    assert_eq!(keys(&rows, "usage.output_tokens == 7").len(), 5);
    // A plain name the row lacks is its usage field, as the profile's columns flatten usage.
    assert_eq!(keys(&rows, "output_tokens == 7").len(), 5);
    assert!(
        keys(&rows, "reasoning_tokens == 3").is_empty(),
        "only usage's own keys"
    );
    assert_eq!(
        keys(&rows, "usage.output_tokens_details.reasoning_tokens > 2").len(),
        5
    );
    assert_eq!(keys(&rows, "tool_calls == 2"), [(2, 0)]);
    assert_eq!(keys(&rows, "tool_calls == 0").len(), 4);
    assert_eq!(keys(&rows, "tool == \"calc\""), [(2, 0)]);
    assert_eq!(
        keys(&rows, "tool != \"calc\"").len(),
        4,
        "true without calls"
    );
    assert_eq!(keys(&rows, "tool != \"nope\"").len(), 5);
    assert_eq!(keys(&rows, "tool ~ /^edgar/"), [(2, 0)]);
    assert_eq!(
        keys(&rows, "agent ~ \"th\""),
        [(0, 0), (0, 1), (1, 0), (2, 0), (3, 0)]
    );
}

#[test]
fn task_aggregates_are_over_the_rollouts_present() {
    let rows = run();
    assert_eq!(keys(&rows, "task.group == \"mixed\""), [(0, 0), (0, 1)]);
    assert_eq!(keys(&rows, "task.group == \"all_failure\""), [(1, 0)]);
    assert_eq!(
        keys(&rows, "task.group == \"all_success\""),
        [(2, 0)],
        "true passes"
    );
    assert_eq!(keys(&rows, "task.group == \"no_reward\""), [(3, 0)]);
    assert_eq!(keys(&rows, "task.mean_reward == 0.5"), [(0, 0), (0, 1)]);
    assert_eq!(
        keys(&rows, "task.pass_rate == 0.5 and reward == 0"),
        [(0, 1)]
    );
    assert_eq!(keys(&rows, "task.pass_rate == null"), [(3, 0)]);
    assert!(Query::parse("task.mean_reward > 0").unwrap().needs_tasks());
    assert!(!Query::parse("task > 0").unwrap().needs_tasks());
}

#[test]
fn text_scopes_match_each_part_after_one_unescaping() {
    let rows = run();
    assert_eq!(keys(&rows, r#"output ~ "\\boxed""#), [(0, 0), (2, 0)]);
    assert_eq!(keys(&rows, r#"reward == 0 and output ~ "know""#), [(0, 1)]);
    assert_eq!(keys(&rows, "reasoning ~ /give up/").len(), 3);
    assert_eq!(keys(&rows, "reasoning ~ /GIVE UP/i").len(), 3);
    assert_eq!(
        keys(&rows, "reasoning ~ /GIVE UP/").len(),
        0,
        "case-sensitive without i"
    );
    // An arguments string holding JSON is matched as that JSON text (one unescaping).
    assert_eq!(keys(&rows, r#"args ~ "\"q\": \"10-K""#), [(2, 0)]);
    assert_eq!(
        keys(&rows, r#"args ~ "10-K\\nfiling""#),
        [(2, 0)],
        "the inner escape stays"
    );
    assert_eq!(
        keys(&rows, r#"args ~ "2+2""#),
        [(2, 0)],
        "an arguments object: its strings"
    );
    assert_eq!(keys(&rows, r#"tool_output ~ "rate limited""#), [(2, 0)]);
    assert_eq!(
        keys(&rows, "tool_output ~ /^4$/"),
        [(2, 0)],
        "a content part"
    );
    assert_eq!(keys(&rows, r#"prompt ~ "2+2""#).len(), 5);
    assert_eq!(
        keys(&rows, r#"text ~ "2+2""#),
        [(2, 0)],
        "text is not the prompt"
    );
    assert_eq!(
        keys(&rows, r#"text ~ "rate limited" and text ~ "boxed""#),
        [(2, 0)]
    );
    // Parts are matched alone, never joined to their neighbours.
    assert!(keys(&rows, r#"text ~ "upThe""#).is_empty());
    assert!(keys(&rows, "output ~ /up.*answer/").is_empty());
    // A character the line escapes (`é` as `\u00e9` in Python's JSON) is found decoded.
    let escaped = rows[4].replace('é', "\\u00e9");
    assert_eq!(
        keys(std::slice::from_ref(&escaped), r#"output ~ "café""#),
        [(3, 0)]
    );
    assert_eq!(
        keys(&[escaped.replace("caf", "\\u0063af")], r#"output ~ "caf""#),
        [(3, 0)]
    );
}

#[test]
fn the_first_hit_is_kept_outside_a_not() {
    let rows = run();
    let q = Query::parse(r#"not output ~ "zzz" and args ~ "10-K""#).unwrap();
    let f = facts(&rows);
    let row = read_keyed(rows[3].as_bytes()).unwrap().unwrap();
    let m = q
        .matches(rows[3].as_bytes(), row, &f, &[Field::Reward])
        .unwrap();
    let hit = m.hit.unwrap();
    assert_eq!(hit.scope, "args");
    assert_eq!(&hit.text[hit.range.0..hit.range.1], "10-K");
    assert_eq!(m.fields, [Some(json!(true))]);
}

#[test]
fn health_fields_are_the_health_commands_flags() {
    let rows = run();
    assert_eq!(keys(&rows, "health.empty_answer"), [(1, 0)]);
    assert_eq!(keys(&rows, "health.empty_output"), [(1, 0)]);
    assert_eq!(keys(&rows, "health.tool_error == true"), [(2, 0)]);
    assert_eq!(keys(&rows, "health.loop").len(), 0);
    for flag in crate::health::Flag::ALL {
        for l in &rows {
            let signals = crate::health::row_signals(l.as_bytes(), false).unwrap();
            let k = keys(
                std::slice::from_ref(l),
                &format!("health.{}", flag.as_str()),
            );
            assert_eq!(!k.is_empty(), signals.has(flag), "{flag:?} on {l}");
        }
    }
}

#[test]
fn the_prefilter_agrees_with_the_full_evaluation_on_every_fixture_and_mutation() {
    let queries = [
        r#"output ~ "the""#,
        r#"text ~ "Error""#,
        r#"args ~ "query" or tool_output ~ "result""#,
        r#"reward == 0 and text ~ "answer""#,
        r#"prompt ~ "a" and not output ~ "b""#,
        r#"reasoning ~ "step" or reward > 0.5"#,
        r"text ~ /AnSwEr/i",
        r"output ~ /th(e|is) \w+/",
        r"args ~ /^\{/ or tool_output ~ /result$/",
    ]
    .map(|q| Query::parse(q).unwrap());
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures");
    let mut seed = 7u64;
    let mut checked = 0;
    for entry in walk(&dir) {
        if !entry.to_string_lossy().ends_with("rollouts.jsonl")
            || entry.to_string_lossy().contains("materialized")
        {
            continue;
        }
        let text = std::fs::read(&entry).unwrap();
        for line in text
            .split(|&b| b == b'\n')
            .filter(|l| !l.is_empty())
            .take(40)
        {
            let mut variants = vec![line.to_vec()];
            // Seeded mutations: a word of the line rewritten with escapes the prefilter must see.
            for _ in 0..3 {
                seed = seed
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let mut m = String::from_utf8_lossy(line).into_owned();
                let words = [
                    "the", "Error", "answer", "query", "result", "step", "a", "b",
                ];
                let w = words[(seed >> 33) as usize % words.len()];
                let escaped: String = w.chars().map(|c| format!("\\u{:04x}", c as u32)).collect();
                m = m.replacen(w, &escaped, 1 + (seed >> 40) as usize % 3);
                variants.push(m.into_bytes());
            }
            for v in variants {
                let Ok(Some(row)) = read_keyed(&v) else {
                    continue;
                };
                let f = facts(&[String::from_utf8_lossy(&v).into_owned()]);
                for q in &queries {
                    assert_eq!(
                        q.matches(&v, row.clone(), &f, &[]).is_some(),
                        q.matches_slowly(&v, row.clone(), &f),
                        "{} on {}",
                        q.source,
                        entry.display()
                    );
                    checked += 1;
                }
            }
        }
    }
    assert!(checked > 1000, "{checked}");
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out.sort();
    out
}

#[test]
fn the_skimmed_key_agent_and_reward_are_the_profile_readers() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures");
    let mut seed = 11u64;
    let (mut skimmed, mut left) = (0, 0);
    let mut keys = crate::record::KeyTable::default();
    let mut lines: Vec<Vec<u8>> = run().into_iter().map(String::into_bytes).collect();
    for entry in walk(&dir)
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
    {
        let text = std::fs::read(&entry).unwrap();
        lines.extend(
            text.split(|&b| b == b'\n')
                .filter(|l| !l.is_empty())
                .take(20)
                .map(<[u8]>::to_vec),
        );
    }
    let cases = [
        r#"{"_ng_task_index": 1, "_ng_rollout_index": 2, "reward": 1e2, "agent_ref": {"name": "a"}}"#,
        r#"{"_ng_task_index": -0, "_ng_rollout_index": 0}"#,
        r#"{"_ng_task_index": 1, "_ng_task_index": 2, "_ng_rollout_index": 0}"#,
        r#"{"_ng_task_index": 1.0, "_ng_rollout_index": 0}"#,
        r#"{"_ng_task_index": 01, "_ng_rollout_index": 0}"#,
        r#"{"_ng_task_index": 1, "_ng_rollout_index": 0, "agent_ref": {"name": 3}}"#,
        r#"{"_ng_task_index": 1, "_ng_rollout_index": 0, "agent_ref": "x"}"#,
        r#"{"_ng_task_index": 1, "_ng_rollout_index": 0, "agent_ref": null, "reward": null}"#,
        r#"{"_ng_task_index": 1, "_ng_rollout_index": 0, "reward": true}"#,
        r#"{"\u005fng_task_index": 1, "_ng_rollout_index": 0}"#,
        r#"{"_ng_task_index": 1, "_ng_rollout_index": 0} x"#,
        r#"{"_ng_task_index": 99999999999999999999, "_ng_rollout_index": 0}"#,
    ];
    lines.extend(cases.iter().map(|c| c.as_bytes().to_vec()));
    let mut variants = Vec::new();
    for l in &lines {
        variants.push(l.clone());
        for _ in 0..4 {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let mut m = l.clone();
            if m.is_empty() {
                continue;
            }
            let at = (seed >> 33) as usize % m.len();
            let set = b"{}[]\",:0-1e. \\";
            m[at] = set[(seed >> 20) as usize % set.len()];
            variants.push(m);
        }
    }
    for v in &variants {
        let reference = read_keyed_by_profile(v, &mut keys);
        match keyed::skim_keyed(v) {
            Some(row) => {
                skimmed += 1;
                assert_eq!(Ok(row), reference, "{}", String::from_utf8_lossy(v));
            }
            None => left += 1,
        }
    }
    assert!(
        skimmed > 300 && left > 100,
        "{skimmed} skimmed, {left} left to the profile's reader"
    );
}

#[test]
fn a_query_nested_past_the_bound_is_a_usage_error_at_its_column() {
    use super::parse::MAX_DEPTH;
    // 6,000 `(` or `not`s overflowed the stack (exit 134) before the bound.
    let parens = format!("{}reward == 0{}", "(".repeat(6000), ")".repeat(6000));
    let nots = format!("{}reward == 0", "not ".repeat(6000));
    for (q, column) in [(&parens, MAX_DEPTH + 1), (&nots, 4 * MAX_DEPTH + 1)] {
        let e = Query::parse(q).unwrap_err();
        assert!(
            e.message.contains("nests more than 100 levels"),
            "{}",
            e.message
        );
        assert_eq!(e.column, column);
    }
    // Up to the bound, nesting parses and evaluates.
    let deep = format!(
        "{}reward == 1{}",
        "(".repeat(MAX_DEPTH - 1),
        ")".repeat(MAX_DEPTH - 1)
    );
    assert_eq!(keys(&run(), &deep), keys(&run(), "reward == 1"));
}

#[test]
fn a_list_of_ten_thousand_terms_is_a_shallow_tree_with_the_same_answers() {
    // Chains were left-nested, 10,000 deep: now balanced, evaluated in the same order.
    let any = (2..10_002)
        .map(|t| format!("task == {t}"))
        .collect::<Vec<_>>()
        .join(" or ");
    assert_eq!(keys(&run(), &any), keys(&run(), "task >= 2"));
    let all = vec!["reward == 1"; 10_000].join(" and ");
    assert_eq!(keys(&run(), &all), keys(&run(), "reward == 1"));
    assert!(!keys(&run(), "reward == 1").is_empty());
}

#[test]
fn integers_above_two_to_the_53_compare_as_integers() {
    // As floats, 9007199254740993 == 9007199254740992: the query matched both.
    let big = 9_007_199_254_740_992_i64;
    let lines = vec![
        rollout(
            big,
            0,
            json!(1),
            answer("a"),
            json!({"id": big + 1, "w": 2.0}),
        ),
        rollout(
            big + 1,
            0,
            json!(0),
            answer("b"),
            json!({"id": big, "w": 2.5}),
        ),
    ];
    assert_eq!(keys(&lines, "task == 9007199254740993"), [(big + 1, 0)]);
    assert_eq!(keys(&lines, "id == 9007199254740993"), [(big, 0)]);
    assert_eq!(keys(&lines, "id > 9007199254740992"), [(big, 0)]);
    assert_eq!(keys(&lines, "id != 9007199254740992"), [(big, 0)]);
    // A whole float equals its integer; others order as numbers.
    assert_eq!(keys(&lines, "w == 2"), [(big, 0)]);
    assert_eq!(keys(&lines, "w > 2"), [(big + 1, 0)]);
    assert_eq!(keys(&lines, "w >= 2.5"), [(big + 1, 0)]);
}
