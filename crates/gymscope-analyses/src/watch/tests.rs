use super::*;

fn input(task: i64, rollout: i64, agent: &str) -> String {
    format!(
        "{{\"_ng_task_index\":{task},\"_ng_rollout_index\":{rollout},\"agent_ref\":{{\"name\":\"{agent}\"}}}}\n"
    )
}

fn rollout(task: i64, rollout: i64, agent: &str, reward: f64) -> String {
    format!(
        "{{\"_ng_task_index\":{task},\"_ng_rollout_index\":{rollout},\"agent_ref\":{{\"name\":\"{agent}\"}},\"reward\":{reward},\"response\":{{\"output\":[{{\"type\":\"message\",\"role\":\"assistant\",\"content\":[{{\"type\":\"output_text\",\"text\":\"ok\"}}]}}],\"usage\":{{\"input_tokens\":5,\"output_tokens\":{},\"total_tokens\":9}}}}}}\n",
        task + 2
    )
}

/// Two agents, three tasks each, two repeats.
fn run() -> (String, String) {
    let (mut inputs, mut rollouts) = (String::new(), String::new());
    for (agent, base) in [("a", 0), ("b", 10)] {
        for t in 0..3 {
            for r in 0..2 {
                inputs.push_str(&input(base + t, r, agent));
                let reward = f64::from(u8::from((t + r) % 2 == 0));
                rollouts.push_str(&rollout(base + t, r, agent, reward));
            }
        }
    }
    (inputs, rollouts)
}

fn watch_of(inputs: &str, rollouts: &str, piece: usize) -> Watch {
    let mut w = Watch::default();
    w.add_shard(
        "r.jsonl".into(),
        "r_mat.jsonl".into(),
        "r_failures.jsonl".into(),
    );
    for (kind, bytes) in [(FileKind::Inputs, inputs), (FileKind::Rollouts, rollouts)] {
        let bytes = bytes.as_bytes();
        let head = &bytes[..bytes.len().min(HEAD_BYTES)];
        assert_eq!(w.check(0, kind, bytes.len() as u64, Some(1), head), 0);
        for chunk in bytes.chunks(piece) {
            w.feed(0, kind, chunk, 100.0);
        }
    }
    w
}

fn figures(w: &Watch) -> String {
    let mut s = serde_json::to_value(w.snapshot(200.0)).unwrap();
    s["shards"][0]["seconds_since_last_row"] = serde_json::Value::Null;
    s.to_string()
}

#[test]
fn the_figures_do_not_depend_on_how_the_bytes_arrive() {
    let (inputs, rollouts) = run();
    let whole = watch_of(&inputs, &rollouts, usize::MAX);
    let s = whole.snapshot(200.0);
    assert!(s.complete);
    assert_eq!(
        (s.totals.expected, s.totals.done, s.totals.remaining),
        (12, 12, 0)
    );
    let a = &s.agents[0];
    assert_eq!((a.agent.as_str(), a.rollouts), ("a", 6));
    assert_eq!(a.mean_reward, Some(0.5));
    // Repeat 0 passes tasks 0 and 2, repeat 1 task 1: pass@1 = mean(1/2, 1/2, 1/2).
    assert_eq!(a.pass_at_1, Some(0.5));
    assert_eq!(a.mean_output_tokens, Some(3.0));
    assert_eq!(a.interval.map(|i| i.repeats), Some(2));
    for piece in [1, 7, 64] {
        assert_eq!(
            figures(&watch_of(&inputs, &rollouts, piece)),
            figures(&whole),
            "{piece}"
        );
    }
}

#[test]
fn a_torn_line_is_not_counted_until_it_ends_and_is_an_error_at_the_finish() {
    let (inputs, rollouts) = run();
    let cut = rollouts.len() - 10;
    let mut w = watch_of(&inputs, &rollouts[..cut], usize::MAX);
    let s = w.snapshot(200.0);
    assert_eq!(s.totals.done, 11);
    assert!(!s.complete, "a torn line is still being written");
    w.finish(300.0);
    let s = w.snapshot(300.0);
    assert_eq!(s.unreadable_rows, 1);
    assert_eq!(s.unreadable[0].line, 12);
    assert_eq!(s.unreadable[0].file, "r.jsonl");
}

#[test]
fn a_truncated_or_replaced_file_is_read_again_with_a_note() {
    let (inputs, rollouts) = run();
    let mut w = watch_of(&inputs, &rollouts, usize::MAX);
    let short = &rollouts[..rollouts.len() / 2];
    let short = &short[..=short.rfind('\n').unwrap()];
    let from = w.check(
        0,
        FileKind::Rollouts,
        short.len() as u64,
        Some(1),
        short.as_bytes(),
    );
    assert_eq!(from, 0);
    w.feed(0, FileKind::Rollouts, short.as_bytes(), 150.0);
    let s = w.snapshot(200.0);
    assert_eq!(s.totals.done as usize, short.lines().count());
    assert!(
        s.notes[0].contains("'r.jsonl' was truncated"),
        "{:?}",
        s.notes
    );
    // Replaced by another inode: read again, nothing counted twice.
    assert_eq!(
        w.check(
            0,
            FileKind::Rollouts,
            rollouts.len() as u64,
            Some(2),
            rollouts.as_bytes()
        ),
        0
    );
    w.feed(0, FileKind::Rollouts, rollouts.as_bytes(), 150.0);
    assert_eq!(w.snapshot(200.0).totals.done, 12);
    // New inputs (a fresh run under the same name) reset the shard.
    let other = input(0, 0, "z");
    assert_eq!(
        w.check(
            0,
            FileKind::Inputs,
            other.len() as u64,
            Some(3),
            other.as_bytes()
        ),
        0
    );
    w.feed(0, FileKind::Inputs, other.as_bytes(), 150.0);
    assert_eq!(
        w.check(
            0,
            FileKind::Rollouts,
            rollouts.len() as u64,
            Some(2),
            rollouts.as_bytes()
        ),
        0
    );
    let s = w.snapshot(200.0);
    assert_eq!((s.totals.expected, s.totals.done), (1, 0));
}

#[test]
fn failures_count_by_class_and_a_key_only_in_the_sidecar_is_failed() {
    let (inputs, rollouts) = run();
    let first_five: String = rollouts.lines().take(5).map(|l| format!("{l}\n")).collect();
    let mut w = watch_of(&inputs, &first_five, usize::MAX);
    let side = "{\"_ng_task_index\":0,\"_ng_rollout_index\":0,\"_ng_failure_class\":\"timeout_exceeded\"}\n{\"_ng_task_index\":11,\"_ng_rollout_index\":1,\"_ng_failure_class\":\"agent_run_error\"}\n\n";
    w.check(
        0,
        FileKind::Failures,
        side.len() as u64,
        Some(4),
        side.as_bytes(),
    );
    w.feed(0, FileKind::Failures, side.as_bytes(), 120.0);
    let s = w.snapshot(200.0);
    assert_eq!(
        (s.totals.done, s.totals.failed, s.totals.remaining),
        (5, 1, 6)
    );
    assert_eq!(s.failures.len(), 2);
    let rate = s.health.iter().find(|h| h.rate.rate == "failures").unwrap();
    assert_eq!((rate.rate.count, rate.rate.of), (2, 7));
}

#[test]
fn rates_eta_and_stalls_come_from_the_refreshes() {
    let (inputs, rollouts) = run();
    let lines: Vec<&str> = rollouts.split_inclusive('\n').collect();
    let mut w = watch_of(&inputs, "", usize::MAX).with_stall_after(60.0);
    w.tick(0.0);
    for (i, l) in lines.iter().take(6).enumerate() {
        w.feed(0, FileKind::Rollouts, l.as_bytes(), 10.0 * (i + 1) as f64);
        w.tick(10.0 * (i + 1) as f64);
    }
    let s = w.snapshot(60.0);
    // 6 rows in 60 s: 6 a minute, 6 left: a minute to go.
    assert_eq!(s.totals.rows_per_minute, Some(6.0));
    assert_eq!(s.totals.eta_seconds, Some(60.0));
    // Before the refreshes span a window (and for `--once`): the average since the inputs were
    // written (at 100 s here, the time `watch_of` fed them).
    let mut once = watch_of(&inputs, &lines[..3].concat(), usize::MAX);
    once.tick(160.0);
    let s = once.snapshot(160.0);
    assert_eq!(s.shards[0].rows_per_minute, Some(3.0));
    assert_eq!(s.totals.eta_seconds, Some(180.0));
    assert!(!s.shards[0].stalled);
    w.tick(200.0);
    let s = w.snapshot(200.0);
    assert!(s.shards[0].stalled, "140 s without a row");
    assert_eq!(s.totals.stalled_shards, 1);
    assert_eq!(
        s.totals.eta_seconds, None,
        "a stalled shard has no end in sight"
    );
}

#[test]
fn the_text_fits_eighty_columns() {
    let (inputs, rollouts) = run();
    let long = rollouts.replace("\"a\"", &format!("\"{}\"", "agent_".repeat(20)));
    let long_inputs = inputs.replace("\"a\"", &format!("\"{}\"", "agent_".repeat(20)));
    let mut w = watch_of(&long_inputs, &long[..long.len() - 5], usize::MAX);
    w.add_shard(
        format!("/very/long/{}/rollouts-shard17-of-64.jsonl", "x".repeat(90)),
        "i".into(),
        "f".into(),
    );
    w.tick(100.0);
    let t = text(&w.snapshot(5000.0));
    for line in t.lines() {
        assert!(
            line.chars().count() <= WIDTH,
            "{} chars: {line}",
            line.chars().count()
        );
    }
    assert!(t.contains("rollouts-shard17-of-64.jsonl"), "{t}");
    assert!(t.contains("STALLED"), "{t}");
}
