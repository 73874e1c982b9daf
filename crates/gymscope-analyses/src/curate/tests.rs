use super::*;
use serde_json::json;

/// A profile row as `gym eval profile` writes it, reduced to what selection reads.
fn row(task: i64, rewards: &[Value], agent: &str, extra: Value) -> String {
    let infos: Vec<Value> = rewards
        .iter()
        .enumerate()
        .map(|(r, reward)| {
            let mut info = json!({"rollout_id": format!("{task}:{r}"), "_ng_task_index": task, "_ng_rollout_index": r});
            if !reward.is_string() || reward != "missing" {
                info["reward"] = reward.clone();
            }
            info
        })
        .collect();
    let mut sample = json!({"responses_create_params": {"input": [{"role": "user", "content": format!("task {task}")}]}, "agent_ref": {"name": agent}});
    if let Value::Object(m) = extra {
        for (k, v) in m {
            sample[k] = v;
        }
    }
    serde_json::to_string(&json!({"_ng_task_index": task, "mean/reward": 0.0, "sample": sample, "num_rollouts": rewards.len(), "rollout_infos": infos})).unwrap()
}

fn profile(rows: &[String]) -> String {
    rows.iter().map(|r| format!("{r}\n")).collect()
}

fn select(text: &str, options: &TaskOptions) -> Result<(Vec<TaskEntry>, TaskPlan), CurateError> {
    let mut reader = TaskReader::new("p.jsonl", options);
    // fed in small chunks: a row may straddle two
    for chunk in text.as_bytes().chunks(7) {
        if !reader.push(chunk) {
            break;
        }
    }
    let mut entries = reader.finish()?;
    let plan = plan(&mut entries, options);
    Ok((entries, plan))
}

fn kept_tasks(entries: &[TaskEntry], idx: &[usize]) -> Vec<i64> {
    idx.iter().map(|&i| entries[i].task).collect()
}

/// Five tasks of four rollouts passing 0, 1, 2, 3 and 4 times.
fn ladder() -> String {
    let rows: Vec<String> = (0..5)
        .map(|t| {
            let rewards: Vec<Value> = (0..4)
                .map(|r| json!(if r < t { 1.0 } else { 0.0 }))
                .collect();
            row(
                t,
                &rewards,
                if t % 2 == 0 { "math" } else { "code" },
                json!({}),
            )
        })
        .collect();
    profile(&rows)
}

#[test]
fn the_band_is_inclusive_at_both_ends() {
    let options = TaskOptions {
        min_pass: 0.25,
        max_pass: 0.75,
        ..Default::default()
    };
    let (entries, plan) = select(&ladder(), &options).unwrap();
    assert_eq!(kept_tasks(&entries, &plan.kept), vec![1, 2, 3]);
    assert_eq!(plan.counts.dropped(DropReason::PassRate), 2);
    let options = TaskOptions {
        min_pass: 0.5,
        max_pass: 0.5,
        ..Default::default()
    };
    let (entries, plan) = select(&ladder(), &options).unwrap();
    assert_eq!(kept_tasks(&entries, &plan.kept), vec![2]);
    let options = TaskOptions {
        drop_saturated: true,
        ..Default::default()
    };
    let (entries, plan) = select(&ladder(), &options).unwrap();
    assert_eq!(kept_tasks(&entries, &plan.kept), vec![1, 2, 3]);
    assert_eq!(plan.counts.dropped(DropReason::Saturated), 2);
    let options = TaskOptions {
        min_mean: Some(0.5),
        max_mean: Some(0.75),
        ..Default::default()
    };
    let (entries, plan) = select(&ladder(), &options).unwrap();
    assert_eq!(kept_tasks(&entries, &plan.kept), vec![2, 3]);
}

#[test]
fn null_and_missing_rewards_are_not_counted_and_booleans_are_0_or_1() {
    let text = profile(&[
        row(
            0,
            &[json!(null), json!(true), json!(0), json!("missing")],
            "a",
            json!({}),
        ),
        row(1, &[json!(null), json!("missing")], "a", json!({})),
        row(2, &[json!(false), json!("1")], "a", json!({})),
    ]);
    let (entries, plan) = select(&text, &TaskOptions::default()).unwrap();
    assert_eq!(entries[0].rewards, vec![1.0, 0.0]);
    assert_eq!(entries[0].pass_rate(), Some(0.5));
    assert_eq!(entries[1].dropped, Some(DropReason::NoNumericReward));
    assert_eq!(
        entries[2].pass_rate(),
        Some(0.0),
        "a string reward is not a number"
    );
    assert_eq!(kept_tasks(&entries, &plan.kept), vec![0, 2]);
    let options = TaskOptions {
        min_rollouts: 2,
        ..Default::default()
    };
    let (_, plan) = select(&text, &options).unwrap();
    assert_eq!(plan.counts.dropped(DropReason::TooFewRollouts), 1);
    let options = TaskOptions {
        pass_threshold: 0.0,
        ..Default::default()
    };
    let (entries, _) = select(&text, &options).unwrap();
    assert_eq!(
        entries[2].pass_rate(),
        Some(1.0),
        "false (0) passes a threshold of 0"
    );
}

#[test]
fn where_takes_task_level_fields_and_refuses_rollout_ones() {
    let text = profile(&[
        row(
            0,
            &[json!(1), json!(0)],
            "math",
            json!({"difficulty": "hard"}),
        ),
        row(
            1,
            &[json!(1), json!(1)],
            "code",
            json!({"difficulty": "easy"}),
        ),
        row(
            2,
            &[json!(0), json!(0)],
            "math",
            json!({"difficulty": "easy"}),
        ),
    ]);
    let with = |expr: &str| {
        let options = TaskOptions {
            filter: Some(Query::parse(expr).unwrap()),
            ..Default::default()
        };
        options.check()?;
        let (entries, plan) = select(&text, &options).unwrap();
        Ok::<_, String>(kept_tasks(&entries, &plan.kept))
    };
    assert_eq!(with(r#"task.group == "mixed""#).unwrap(), vec![0]);
    assert_eq!(
        with(r#"task.pass_rate < 1 and agent == "math""#).unwrap(),
        vec![0, 2]
    );
    assert_eq!(with(r#"sample.difficulty == "easy""#).unwrap(), vec![1, 2]);
    assert_eq!(with("`mean/reward` == 0").unwrap(), vec![0, 1, 2]);
    assert_eq!(
        with("task.mean_reward >= 0.5 and not task == 1").unwrap(),
        vec![0]
    );
    assert_eq!(with("num_rollouts == 2").unwrap(), vec![0, 1, 2]);
    for rollout_level in [
        "reward == 0",
        "output ~ \"x\"",
        "health.loop",
        "tool == \"f\"",
        "usage.total_tokens > 3",
    ] {
        let e = with(rollout_level).unwrap_err();
        assert!(e.contains("is a rollout field"), "{rollout_level}: {e}");
    }
}

#[test]
fn a_capped_sample_is_seeded_in_task_order_and_keeps_each_agents_share() {
    let rows: Vec<String> = (0..200)
        .map(|t| {
            row(
                t,
                &[json!(1), json!(0)],
                if t % 4 == 0 { "rare" } else { "common" },
                json!({}),
            )
        })
        .collect();
    let text = profile(&rows);
    let capped = |seed, stratify: bool| {
        let options = TaskOptions {
            max_tasks: Some(40),
            seed,
            stratify: stratify.then(|| "agent".into()),
            ..Default::default()
        };
        let (entries, plan) = select(&text, &options).unwrap();
        (kept_tasks(&entries, &plan.kept), plan.counts)
    };
    let (a, counts) = capped(1, true);
    assert_eq!(a, capped(1, true).0, "the same seed, the same tasks");
    assert_ne!(a, capped(2, true).0);
    assert_eq!(a.len(), 40);
    assert!(a.windows(2).all(|w| w[0] < w[1]), "written in task order");
    assert_eq!(a.iter().filter(|t| *t % 4 == 0).count(), 10, "25 % rare");
    assert_eq!(
        counts.per_agent["rare"],
        AgentCounts {
            tasks: 50,
            kept: 10,
            validation: 0
        }
    );
    assert_eq!(counts.dropped(DropReason::OverMaxTasks), 160);
    // A task's place in the order is its own: a looser filter keeps what a tighter one chose.
    let (b, _) = capped(1, false);
    assert_eq!(b.len(), 40);
}

#[test]
fn target_pass_prefers_the_nearest_tasks() {
    let options = TaskOptions {
        max_tasks: Some(2),
        target_pass: Some(0.7),
        ..Default::default()
    };
    let (entries, plan) = select(&ladder(), &options).unwrap();
    assert_eq!(
        kept_tasks(&entries, &plan.kept),
        vec![2, 3],
        "0.75 and 0.5 are nearest 0.7"
    );
}

#[test]
fn splits_are_disjoint_with_round_f_n_and_whole_groups() {
    let rows: Vec<String> = (0..25)
        .map(|t| {
            row(
                t,
                &[json!(1), json!(0)],
                "a",
                json!({"source": format!("doc{}", t / 3)}),
            )
        })
        .collect();
    let text = profile(&rows);
    let options = TaskOptions {
        val_fraction: Some(0.1),
        seed: 3,
        ..Default::default()
    };
    let (entries, plan) = select(&text, &options).unwrap();
    assert_eq!(
        plan.validation.len(),
        2,
        "round(2.5) = 2, Python's rounding"
    );
    assert_eq!(plan.kept.len(), 23);
    let val = kept_tasks(&entries, &plan.validation);
    assert!(kept_tasks(&entries, &plan.kept)
        .iter()
        .all(|t| !val.contains(t)));
    // Grouped by source: 8 groups of 3 and one of 1; round(0.3 × 25) = 8 → 3 + 3 + 1 + … = 7 or
    // 9 (distance 1 each) → 7, the smaller.
    let options = TaskOptions {
        val_fraction: Some(0.3),
        seed: 3,
        group_by: Some("source".into()),
        ..Default::default()
    };
    let (entries, plan) = select(&text, &options).unwrap();
    assert_eq!(plan.validation.len(), 7);
    let group = |i: &usize| entries[*i].group.clone().unwrap();
    let val_groups: Vec<String> = plan.validation.iter().map(group).collect();
    assert!(
        plan.kept.iter().all(|i| !val_groups.contains(&group(i))),
        "no source in both"
    );
    assert_eq!(plan.counts.validation, 7);
    // the split comes after the cap
    let options = TaskOptions {
        max_tasks: Some(10),
        val_fraction: Some(0.2),
        ..Default::default()
    };
    let (_, plan) = select(&text, &options).unwrap();
    assert_eq!((plan.kept.len(), plan.validation.len()), (8, 2));
}

#[test]
fn annotate_carries_the_difficulty_and_rows_are_the_samples() {
    let text = profile(&[row(
        4,
        &[json!(1), json!(0), json!(0), json!(null)],
        "a",
        json!({"id": 9}),
    )]);
    let (entries, _) = select(&text, &TaskOptions::default()).unwrap();
    let info = entries[0].profile_info();
    assert_eq!(info["num_rollouts"], 3);
    assert_eq!(info["rewards"], json!([1.0, 0.0, 0.0]));
    assert_eq!(info["group"], "mixed");
    assert!((info["pass_rate"].as_f64().unwrap() - 1.0 / 3.0).abs() < 1e-12);
    assert!((info["reward_var"].as_f64().unwrap() - 1.0 / 3.0).abs() < 1e-12);
    let line = text.trim_end().as_bytes();
    let out: Value = serde_json::from_slice(&curated_row(line, Some(&info)).unwrap()).unwrap();
    let keys: Vec<&String> = out.as_object().unwrap().keys().collect();
    assert_eq!(
        keys,
        ["responses_create_params", "agent_ref", "id", "profile_info"]
    );
    assert_eq!(out["profile_info"], info);
}

#[test]
fn every_fixture_sample_is_written_as_the_profile_holds_it() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures");
    let mut checked = 0;
    let mut stack = vec![dir];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.to_string_lossy().ends_with("_reward_profiling.jsonl") {
                for line in std::fs::read(&p)
                    .unwrap()
                    .split(|&b| b == b'\n')
                    .filter(|l| !l.is_empty())
                {
                    #[derive(serde::Deserialize)]
                    struct Raw<'a> {
                        #[serde(borrow)]
                        sample: &'a serde_json::value::RawValue,
                    }
                    let raw: Raw = serde_json::from_slice(line).unwrap();
                    let written = curated_row(line, None).unwrap();
                    assert_eq!(
                        String::from_utf8_lossy(&written).trim_end(),
                        raw.sample.get(),
                        "{}",
                        p.display()
                    );
                    checked += 1;
                }
            }
        }
    }
    assert!(checked > 20, "{checked} fixture rows");
}

#[test]
fn files_that_are_not_profiles_are_refused_naming_what_they_look_like() {
    let refused = |text: &str| match select(text, &TaskOptions::default()) {
        Err(e) => e.0,
        Ok(_) => panic!("accepted {text}"),
    };
    let rollout =
        r#"{"_ng_task_index":0,"_ng_rollout_index":0,"response":{"output":[]},"reward":1}"#;
    assert!(refused(&format!("{rollout}\n"))
        .contains("line 1: field `rollout_infos` is missing: this looks like a rollout row"));
    let pivot = r#"{"responses_create_params":{},"expected_action":{},"pivot_info":{}}"#;
    assert!(refused(pivot).contains("a pivot dataset row"));
    let good = row(0, &[json!(1)], "a", json!({}));
    let e = refused(&format!("{good}\n\n{{not json\n"));
    assert!(e.starts_with("'p.jsonl' line 3: invalid JSON"), "{e}");
    // Said in words: neither "looks like not a profile row" nor "missing" when it is there.
    let other = refused(r#"{"_ng_task_index":0,"x":1}"#);
    assert!(
        other.contains("is missing: this is not a profile row"),
        "{other}"
    );
    let object = refused(r#"{"_ng_task_index":0,"rollout_infos":{},"sample":{}}"#);
    assert!(
        object.contains("field `rollout_infos` must be a list of rollouts, found an object"),
        "{object}"
    );
    let no_sample = r#"{"_ng_task_index":0,"rollout_infos":[]}"#;
    assert!(refused(no_sample).contains("field `sample` must be an object"));
    let bad_index = r#"{"_ng_task_index":"0","sample":{},"rollout_infos":[]}"#;
    assert!(refused(bad_index).contains("`_ng_task_index` must be an integer"));
}

#[test]
fn contradictory_options_are_usage_errors_and_empty_selections_say_why() {
    let empty_band = TaskOptions {
        min_pass: 0.9,
        max_pass: 0.1,
        ..Default::default()
    };
    assert!(empty_band.check().unwrap_err().contains("band is empty"));
    let bad_val = TaskOptions {
        val_fraction: Some(1.0),
        ..Default::default()
    };
    assert!(bad_val.check().is_err());
    let options = TaskOptions {
        min_pass: 0.4,
        max_pass: 0.45,
        ..Default::default()
    };
    let (_, plan) = select(&ladder(), &options).unwrap();
    assert_eq!(plan.counts.kept, 0);
    assert!(
        plan.counts.why_empty().contains("5 pass_rate_outside_band"),
        "{}",
        plan.counts.why_empty()
    );
    let (_, plan) = select("", &TaskOptions::default()).unwrap();
    assert!(plan.counts.why_empty().contains("no task rows"));
}

/// The page's band: one reading, decided again per band, counts and kept tasks as a fresh
/// selection with that band (the CLI's) gives.
#[test]
fn a_reading_redecided_for_a_band_is_a_fresh_selection() {
    let text = format!(
        "{}{}",
        ladder(),
        profile(&[row(9, &[json!(null)], "math", json!({}))])
    );
    let mut read = select(&text, &TaskOptions::default()).unwrap().0;
    for (lo, hi) in [(0.0, 1.0), (0.25, 0.75), (0.5, 0.5), (0.3, 0.3), (1.0, 1.0)] {
        for min_rollouts in [1, 5] {
            let options = TaskOptions {
                min_pass: lo,
                max_pass: hi,
                min_rollouts,
                max_tasks: Some(2),
                seed: 3,
                ..Default::default()
            };
            redecide(&mut read, &options).unwrap();
            let again = plan(&mut read, &options);
            let (fresh_entries, fresh) = select(&text, &options).unwrap();
            assert_eq!(again.counts, fresh.counts, "{lo}..{hi}");
            assert_eq!(
                kept_tasks(&read, &again.kept),
                kept_tasks(&fresh_entries, &fresh.kept)
            );
        }
    }
    for refused in [
        TaskOptions {
            filter: Some(crate::query::Query::parse("task.pass_rate > 0").unwrap()),
            ..Default::default()
        },
        TaskOptions {
            stratify: Some("agent".into()),
            ..Default::default()
        },
        TaskOptions {
            pass_threshold: 0.5,
            ..Default::default()
        },
    ] {
        assert!(redecide(&mut read, &refused).is_err());
    }
    assert_eq!(
        band_query(0.25, 1.0),
        "task.pass_rate >= 0.25 and task.pass_rate <= 1"
    );
    assert!(crate::query::Query::parse(&band_query(0.0, 0.5)).is_ok());
}

#[test]
fn a_task_listed_twice_is_refused_but_a_fan_out_runs_rows_per_agent_are_not() {
    // It was taken silently, and `--val-fraction` could split its copies.
    let r0 = row(0, &[json!(1), json!(0)], "a", json!({}));
    let r1 = row(1, &[json!(0)], "a", json!({}));
    let options = TaskOptions {
        val_fraction: Some(0.5),
        ..TaskOptions::default()
    };
    let e = select(&format!("{r0}\n{r1}\n{r0}\n"), &options)
        .unwrap_err()
        .0;
    assert!(
        e.contains("'p.jsonl' line 3: task 0 is listed twice (first at line 1)"),
        "{e}"
    );
    // v0.7.0's fan-out rows: one per task and agent, each with its `agent_ref`.
    let per_agent = |agent: &str| {
        let mut v: Value = serde_json::from_str(&r0).unwrap();
        v["agent_ref"] = json!({"name": agent});
        v.to_string()
    };
    let (entries, _) = select(
        &format!("{}\n{}\n", per_agent("x"), per_agent("y")),
        &options,
    )
    .unwrap();
    let agents: Vec<_> = entries.iter().map(|e| e.agent.clone().unwrap()).collect();
    assert_eq!(agents, ["x", "y"]);
    let e = select(
        &format!("{}\n{}\n", per_agent("x"), per_agent("x")),
        &options,
    )
    .unwrap_err()
    .0;
    assert!(e.contains("task 0 of agent 'x' is listed twice"), "{e}");
}

#[test]
fn a_group_by_field_no_task_has_is_refused_when_validation_is_asked_for() {
    // It gave an empty validation file, unsaid.
    let text: String = (0..6)
        .map(|t| row(t, &[json!(1), json!(0)], "a", json!({})) + "\n")
        .collect();
    let mut options = TaskOptions {
        val_fraction: Some(0.5),
        group_by: Some("nosuchfield".into()),
        ..TaskOptions::default()
    };
    let e = select(&text, &options).unwrap_err().0;
    assert!(
        e.contains("--group-by 'nosuchfield': no task of 'p.jsonl' has this field"),
        "{e}"
    );
    options.val_fraction = None;
    assert!(
        select(&text, &options).is_ok(),
        "without a validation share it is harmless"
    );
}
