//! The run header and moving through transcripts (issue 60's additions), on the example run at
//! 1440×900. Needs `dist/` and chromium: scripts/test.sh.

use crate::common::browser::Browser;
use crate::round_three::{apply_query, json, open, soft_wait, Checks, AGENTS};

/// The panel's header names the agent; previous / next (buttons and ←/→) step through the
/// rollouts in the table's order and the query's; the task's other repeats open in one click;
/// find marks the items holding a text.
/// Presses `key` on the page; whether the rollout's place then reads `place` (within 3 s).
async fn press(b: &Browser, key: &str, place: &str) -> bool {
    b.eval(&format!(
        "document.body.dispatchEvent(new KeyboardEvent('keydown', {{key: '{key}', bubbles: true}}))"
    ))
    .await;
    soft_wait(b, "[data-testid=rollout-place]", place, 3)
        .await
        .is_some()
}

#[tokio::test(flavor = "multi_thread")]
async fn the_rollout_panel_moves_through_transcripts() {
    let (_server, b) = open(None, 1440, 900).await;
    let mut checks = Checks::default();
    b.click("[data-testid=task-row]").await;
    let title = b.wait_testid("rollout-title", "rollout").await;
    checks.check(
        AGENTS.iter().any(|a| title.ends_with(a)),
        format!("no agent in {title}"),
    );
    let place = soft_wait(&b, "[data-testid=rollout-place]", "1 of 120 shown", 3).await;
    checks.check(place.is_some(), "no place among the rollouts shown");
    if place.is_some() {
        b.click_testid("rollout-next").await;
        let second = soft_wait(&b, "[data-testid=rollout-place]", "2 of 120 shown", 3).await;
        let title2 = b.wait_testid("rollout-title", "rollout").await;
        checks.check(second.is_some() && title2 != title, "next → did not move");
        b.eval("document.activeElement.blur()").await;
        let moved = press(&b, "ArrowRight", "3 of 120 shown").await;
        checks.check(moved, "→ did not move");
        let moved = press(&b, "ArrowLeft", "2 of 120 shown").await;
        checks.check(moved, "← did not move");
        // The task's other repeats.
        let repeats: usize = json(
            &b,
            "return document.querySelectorAll('[data-testid=rollout-repeat]').length",
        )
        .await;
        checks.check(repeats == 4, format!("{repeats} repeats"));
        b.eval("Array.from(document.querySelectorAll('[data-testid=rollout-repeat]')).find(x => !x.disabled).click()").await;
        tokio::time::sleep(std::time::Duration::from_millis(400)).await;
        let title3 = b.wait_testid("rollout-title", "rollout").await;
        checks.check(title3 != title2, "a repeat did not open");
        // Find in the transcript.
        b.eval(
            "const i = document.querySelector('[data-testid=rollout-find]'); i.value = 'a';
             i.dispatchEvent(new Event('input', {bubbles: true}));",
        )
        .await;
        let found = soft_wait(&b, "[data-testid=rollout-found]", "items", 3).await;
        let marked: usize = json(
            &b,
            "return document.querySelectorAll('[data-testid=rollout-view] [data-found]').length",
        )
        .await;
        checks.check(
            marked >= 1
                && found
                    .as_ref()
                    .is_some_and(|f| f.starts_with(&marked.to_string())),
            format!("find: {found:?}, {marked} marked"),
        );
    }
    // Under a query, a task row opens the query's first rollout and the order is the query's.
    let (matched, _) = apply_query(&b, "reward == 0").await;
    b.click("[data-testid=task-row]").await;
    checks.check(
        soft_wait(
            &b,
            "[data-testid=rollout-place]",
            &format!("1 of {matched} shown"),
            3,
        )
        .await
        .is_some(),
        "the query's order",
    );
    checks.done(b).await;
}

/// The run header: each agent's model, sampling parameters and agent config, from its first
/// row, at the top of the run.
#[tokio::test(flavor = "multi_thread")]
async fn the_run_header_names_each_agent_s_model_and_sampling() {
    let (_server, b) = open(None, 1440, 900).await;
    let header = soft_wait(&b, "[data-testid=run-header]", "temperature", 5)
        .await
        .expect("no run header");
    let agents: Vec<String> = json(
        &b,
        "return Array.from(document.querySelectorAll('[data-testid=run-header-agent]')).map(l => l.dataset.headerAgent)",
    )
    .await;
    assert_eq!(agents.len(), 3, "{agents:?}");
    for want in [
        "model",
        "nvidia/NVIDIA-Nemotron-Nano-9B-v2",
        "max_output_tokens",
        "4,096",
        "agent_ref.type",
    ] {
        assert!(header.contains(want), "{want} in {header}");
    }
    let top: (f64, f64) = json(
        &b,
        "return [document.querySelector('[data-testid=run-header]').getBoundingClientRect().top, document.querySelector('[data-testid=key-figures]').getBoundingClientRect().top]",
    )
    .await;
    assert!(top.0 < top.1, "the header heads the run: {top:?}");
    b.close().await;
}
