//! Screenshots of what a user sees, to look at (not a check): the app's profile page with a
//! generated three-agent run loaded, after a query, its Health page, the Compare page's pickers
//! and the run's report made with a query, at 1440×900, into
//! `target/screenshots/`. `docs/app.png` is the first of them.
//!
//!   cargo test --test browser screenshots -- --ignored

use crate::common;
use common::browser::{dist, Browser};
use common::static_server::StaticServer;

async fn shot(b: &Browser, name: &str) {
    let png = b.client.screenshot().await.unwrap();
    let dir = common::repo_root().join("target/screenshots");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join(name), png).unwrap();
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "writes pictures to look at; run by hand"]
async fn screenshots_of_a_three_agent_run() {
    let tmp = tempfile::tempdir().unwrap();
    let (inputs, rollouts) =
        common::gen_run::generate_agentic(tmp.path(), "rollouts", 120, 4, 6_000);
    let server = StaticServer::start(&dist());
    let b = Browser::start().await;
    b.client.set_window_size(1440, 900).await.unwrap();
    b.open_app(&server.url(), "").await;
    b.choose_files("files", &[inputs.clone(), rollouts.clone()])
        .await;
    b.wait_text("[data-testid=status]", "Profile ready").await;
    tokio::time::sleep(std::time::Duration::from_millis(800)).await;
    shot(&b, "profile.png").await;
    b.eval(
        "const i = document.querySelector('[data-testid=query-input]'); \
         i.value = 'reward == 0 and tool_calls > 2'; i.dispatchEvent(new Event('input')); \
         document.querySelector('[data-testid=query-apply]').click()",
    )
    .await;
    tokio::time::sleep(std::time::Duration::from_millis(1500)).await;
    shot(&b, "profile-query.png").await;
    b.click("[data-testid=task-table] [data-testid=task-row]")
        .await;
    tokio::time::sleep(std::time::Duration::from_millis(800)).await;
    b.click("[data-testid=open-rollout]").await;
    tokio::time::sleep(std::time::Duration::from_millis(1200)).await;
    shot(&b, "rollout.png").await;
    b.click_testid("tab-health").await;
    tokio::time::sleep(std::time::Duration::from_millis(800)).await;
    shot(&b, "health.png").await;
    b.click_testid("tab-compare").await;
    tokio::time::sleep(std::time::Duration::from_millis(800)).await;
    shot(&b, "compare-pick.png").await;

    // The shared report of the same run, made with a query, from file://.
    let page = tmp.path().join("report.html");
    let query = ["--query", "reward == 0 and tool_calls > 2"];
    common::write_report(&inputs, &rollouts, &page, &query);
    b.client
        .goto(&format!("file://{}#tasks", page.display()))
        .await
        .unwrap();
    tokio::time::sleep(std::time::Duration::from_millis(1500)).await;
    shot(&b, "report-query.png").await;
    b.close().await;
}
