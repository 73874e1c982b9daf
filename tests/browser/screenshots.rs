//! Screenshots of what a user sees, to look at (not a check): every page of the app and the
//! report at 1440×900 and 390×844 (`docs/screenshots/`), the selections' widgets.
//!
//!   cargo test --test browser screenshots -- --ignored

use crate::common;
use crate::common::browser::start_app_sized;
use common::browser::{dist, Browser};
use common::static_server::StaticServer;

async fn shot(b: &Browser, name: &str) {
    let png = b.client.screenshot().await.unwrap();
    let dir = common::repo_root().join("target/screenshots");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join(name), png).unwrap();
}

/// The app at 1440×900 with a run loaded and its profile shown.
async fn open_run(inputs: &std::path::Path, rollouts: &std::path::Path) -> (StaticServer, Browser) {
    let (server, b) = start_app_sized("", 1440, 900).await;
    b.choose_files("files", &[inputs.to_path_buf(), rollouts.to_path_buf()])
        .await;
    b.wait_testid("status", "Profile ready").await;
    tokio::time::sleep(std::time::Duration::from_millis(800)).await;
    (server, b)
}

/// Every page at 1440×900 and at 390×844 (issue 44), on the embedded example (three agents,
/// four repeats) and its comparison: Profile (first screen, a rollout open), Health, Compare,
/// the pivot builder with a pivot open, the pivot validator on the built pivots, and the
/// exported report. Into `docs/screenshots/` with `GYMSCOPE_DOCS_SHOTS=1`, else
/// `target/screenshots/pages/`.
#[tokio::test(flavor = "multi_thread")]
#[ignore = "writes pictures to look at; run by hand"]
async fn every_page_at_desktop_and_phone_width() {
    let dir = if std::env::var_os("GYMSCOPE_DOCS_SHOTS").is_some() {
        common::repo_root().join("docs/screenshots")
    } else {
        common::repo_root().join("target/screenshots/pages")
    };
    std::fs::create_dir_all(&dir).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    // The pivots the validator page shows: the example run's, built by the CLI.
    let example = common::repo_root().join("assets/example-run");
    let pivots = tmp.path().join("example_pivots.jsonl");
    let built = common::run_gymscope(&[
        "build-pivot",
        "--input",
        example.join("example_rollouts.jsonl").to_str().unwrap(),
        "--output",
        pivots.to_str().unwrap(),
        "--agent-ref",
        "example_single_step_tool_use_with_argument_comparison_agent",
    ]);
    assert!(built.status.success(), "{built:?}");
    let server = StaticServer::start(&dist());
    let b = Browser::start().await;
    let pause = |ms| tokio::time::sleep(std::time::Duration::from_millis(ms));
    for (width, height) in [(1440, 900), (390, 844)] {
        let save = |name: &str| {
            let (b, dir) = (&b, &dir);
            let name = format!("{name}-{width}.png");
            async move {
                let png = b.client.screenshot().await.unwrap();
                std::fs::write(dir.join(name), png).unwrap();
            }
        };
        b.client.set_window_size(width, height).await.unwrap();
        b.open_app(&server.url(), "").await;
        b.load_example().await;
        pause(800).await;
        save("profile").await;
        b.click("[data-testid=task-row]").await;
        b.wait_testid("rollout-title", "rollout").await;
        pause(800).await;
        save("profile-rollout").await;
        b.eval("window.scrollTo(0, 0)").await;
        b.click_testid("tab-health").await;
        b.wait_testid("health-headline", "rollouts").await;
        pause(500).await;
        save("health").await;
        b.click_testid("tab-compare").await;
        b.click_testid("compare-example").await;
        b.wait_testid("compare-status", "Compared").await;
        pause(800).await;
        save("compare").await;
        // Row-level differences: the flipped tasks best first, one opened with its two
        // transcripts aligned and what differs marked.
        b.click_testid("compare-flipped-only").await;
        b.click_testid("compare-sort-delta").await;
        b.click("[data-testid=compare-task-row]").await;
        b.wait_text("[data-testid=compare-diff] h3", "what differs")
            .await;
        b.eval("document.querySelector('[data-testid=compare-tasks]').scrollIntoView()")
            .await;
        pause(500).await;
        save("compare-diff").await;
        b.click_testid("tab-pivot-build").await;
        b.click_testid("pb-build").await;
        b.wait_testid("pb-headline", "pivots: ").await;
        b.click("[data-testid=pb-pivot]").await;
        b.wait_testid("pb-pair-title", "Pivot").await;
        pause(800).await;
        save("pivot-build").await;
        b.eval("window.scrollTo(0, 0)").await;
        b.click_testid("tab-pivot").await;
        b.choose_file("pivot-file", &pivots).await;
        b.wait_testid("pivot-verdict", "").await;
        pause(500).await;
        save("pivot-validate").await;
        // The pass-rate band on its numeric axis.
        b.open_app(&server.url(), "").await;
        b.load_example().await;
        crate::open_pass_band(&b).await;
        b.eval("document.querySelector('[data-testid=pass-band]').scrollIntoView()")
            .await;
        pause(500).await;
        save("band").await;
    }
    // A realistic three-agent run with continuous rewards (issue 60), a rollout open, and an
    // ATIF file without rewards: the Profile page (and Health) at both widths.
    let run = crate::round_three::continuous_run(tmp.path(), 1500);
    let atif = tmp.path().join("agent_run.json");
    std::fs::write(&atif, crate::round_three::atif_without_reward()).unwrap();
    for (width, height) in [(1440, 900), (390, 844)] {
        let save = |name: &str| {
            let (b, dir) = (&b, &dir);
            let name = format!("{name}-{width}.png");
            async move {
                let png = b.client.screenshot().await.unwrap();
                std::fs::write(dir.join(name), png).unwrap();
            }
        };
        b.client.set_window_size(width, height).await.unwrap();
        b.open_app(&server.url(), "").await;
        b.choose_files("files", &run).await;
        b.wait_testid("status", "Profile ready").await;
        pause(800).await;
        save("continuous").await;
        // Grouped by a field of the materialized rows.
        b.eval("const s = document.querySelector('[data-testid=group-by]'); s.value = 'field:metadata.difficulty'; s.dispatchEvent(new Event('change', {bubbles: true}));")
            .await;
        b.wait_testid("group-note", "values of").await;
        b.eval(
            "document.querySelector('[data-testid=agent-lines]').scrollIntoView({block: 'center'})",
        )
        .await;
        pause(500).await;
        save("continuous-group-by").await;
        b.eval("window.scrollTo(0, 0)").await;
        b.click("[data-testid=task-row]").await;
        b.wait_testid("rollout-title", "rollout").await;
        pause(800).await;
        save("continuous-rollout").await;
        b.eval("window.scrollTo(0, 0)").await;
        b.click_testid("tab-health").await;
        b.wait_testid("health-headline", "rollouts").await;
        pause(500).await;
        save("continuous-health").await;
        b.open_app(&server.url(), "").await;
        b.choose_files("files", std::slice::from_ref(&atif)).await;
        b.wait_testid("status", "Profile ready").await;
        pause(500).await;
        save("atif").await;
    }
    // The exported report of the example, from file://, at both widths.
    let page = tmp.path().join("report.html");
    common::write_report(
        &example.join("example_rollouts_materialized_inputs.jsonl"),
        &example.join("example_rollouts.jsonl"),
        &page,
        &["--title", "Example run: three agents, four repeats"],
    );
    for (width, height) in [(1440, 900), (390, 844)] {
        b.client.set_window_size(width, height).await.unwrap();
        b.client
            .goto(&format!("file://{}", page.display()))
            .await
            .unwrap();
        pause(1200).await;
        let png = b.client.screenshot().await.unwrap();
        std::fs::write(dir.join(format!("report-{width}.png")), png).unwrap();
    }
    b.close().await;
}

/// The Profile page's pass-rate band on the example run and the pivot builder's λ_diff slider
/// (issue 27), into `target/screenshots/band.png` and `lambda.png`.
#[tokio::test(flavor = "multi_thread")]
#[ignore = "writes pictures to look at; run by hand"]
async fn screenshots_of_the_selections() {
    let (_server, b) = start_app_sized("#profile", 1440, 900).await;
    b.load_example().await;
    crate::open_pass_band(&b).await;
    b.eval(
        "const s = document.querySelector('[data-testid=band-min]'); s.value = '0.5'; \
         s.dispatchEvent(new Event('input', {bubbles: true})); s.dispatchEvent(new Event('change', {bubbles: true})); \
         document.querySelector('[data-testid=pass-band]').scrollIntoView()",
    )
    .await;
    tokio::time::sleep(std::time::Duration::from_millis(1200)).await;
    shot(&b, "band.png").await;
    let dir = tempfile::tempdir().unwrap();
    let src = common::repo_root().join("tests/fixtures/pivot-build/upstream");
    let name = "workplace_assistant.example_rollouts.jsonl";
    std::fs::copy(src.join(name), dir.path().join(name)).unwrap();
    let status = std::process::Command::new(env!("CARGO_BIN_EXE_gymscope"))
        .current_dir(dir.path())
        .args([
            "build-pivot",
            "--input",
            name,
            "--output",
            "p.jsonl",
            "--agent-ref",
            "a",
        ])
        .args(["--relative-paths"])
        .status()
        .unwrap();
    assert!(status.success());
    let pivots = std::fs::read_to_string(dir.path().join("p.jsonl")).unwrap();
    let profile: String = pivots
        .lines()
        .enumerate()
        .map(|(i, _)| {
            let infos: Vec<_> = (0..8)
                .map(|r| serde_json::json!({"reward": f64::from(u8::from(r < (i * 5) % 9))}))
                .collect();
            format!(
                "{}\n",
                serde_json::json!({"_ng_task_index": i, "rollout_infos": infos})
            )
        })
        .collect();
    std::fs::write(dir.path().join("prof.jsonl"), profile).unwrap();
    b.click_testid("tab-pivot-build").await;
    crate::select_with_lambda(
        &b,
        &dir.path().join("p.jsonl"),
        &dir.path().join("prof.jsonl"),
        &dir.path().join("p.gym.yaml"),
    )
    .await;
    b.eval("document.querySelector('[data-testid=pb-lambda]').scrollIntoView()")
        .await;
    tokio::time::sleep(std::time::Duration::from_millis(800)).await;
    shot(&b, "lambda.png").await;
    b.close().await;
}

/// A v0.7.0 run whose first agent ran behind two environment servers (so its runs are labelled
/// by server, as v0.7.0 labels them) and whose others ran behind one each: the Profile and
/// Health pages, into `target/screenshots/env-profile.png` and `env-health.png`.
#[tokio::test(flavor = "multi_thread")]
#[ignore = "writes pictures to look at; run by hand"]
async fn screenshots_of_an_environment_server_run() {
    let tmp = tempfile::tempdir().unwrap();
    let (inputs, rollouts) =
        common::gen_run::generate_agentic(tmp.path(), "rollouts", 60, 4, 3_000);
    // Stamp each row with the server it ran through: the first agent's even tasks through
    // `<agent>_env_a`, odd ones through `<agent>_env_b`; every other agent through its own.
    let first = {
        let line = std::fs::read_to_string(&inputs).unwrap();
        let row: serde_json::Value = serde_json::from_str(line.lines().next().unwrap()).unwrap();
        row["agent_ref"]["name"].as_str().unwrap().to_string()
    };
    for path in [&inputs, &rollouts] {
        let text = std::fs::read_to_string(path).unwrap();
        let stamped: String = text
            .lines()
            .map(|l| {
                let mut row: serde_json::Value = serde_json::from_str(l).unwrap();
                let agent = row["agent_ref"]["name"].as_str().unwrap().to_string();
                let task = row["_ng_task_index"].as_i64().unwrap();
                let server = if agent == first {
                    format!("{agent}_env_{}", if task % 2 == 0 { "a" } else { "b" })
                } else {
                    format!("{agent}_env")
                };
                row["_ng_environment_server"] = server.into();
                format!("{row}\n")
            })
            .collect();
        std::fs::write(path, stamped).unwrap();
    }
    let (_server, b) = open_run(&inputs, &rollouts).await;
    shot(&b, "env-profile.png").await;
    b.click_testid("tab-health").await;
    tokio::time::sleep(std::time::Duration::from_secs(1)).await;
    shot(&b, "env-health.png").await;
    b.close().await;
}

/// The profile page following a growing run (docs/watch.md): the example's first 80 rows, Follow
/// on, then 20 more appended; the badge and the figures after the refresh. Into
/// `docs/screenshots/follow-1440.png` with `GYMSCOPE_DOCS_SHOTS=1`, else `target/screenshots/`.
#[tokio::test(flavor = "multi_thread")]
#[ignore = "writes a picture to look at; run by hand"]
async fn following_a_growing_run() {
    use crate::follow::{append, chunk, lines, open_followed, FIRST};
    let (_server, b) = open_followed(1440, 900).await;
    b.click_testid("follow-switch").await;
    b.wait_testid("follow-badge", "80 of 120 rollouts").await;
    tokio::time::sleep(std::time::Duration::from_secs(3)).await;
    let all = lines();
    let half = all[FIRST].len() / 2;
    let (more, torn) = chunk(&all, FIRST + 1, 100);
    append(&b, &format!("{}{more}{torn}", &all[FIRST][half..])).await;
    b.wait_testid("follow-badge", "100 of 120 rollouts").await;
    b.wait_testid("totals", "100 of 120 rollouts").await;
    tokio::time::sleep(std::time::Duration::from_millis(2500)).await;
    let png = b.client.screenshot().await.unwrap();
    let dir = if std::env::var_os("GYMSCOPE_DOCS_SHOTS").is_some() {
        common::repo_root().join("docs/screenshots")
    } else {
        common::repo_root().join("target/screenshots")
    };
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("follow-1440.png"), png).unwrap();
    b.close().await;
}
