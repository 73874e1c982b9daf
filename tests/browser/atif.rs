//! ATIF in the app, in real headless Chromium: a folder NeMo Gym v0.7.0's export wrote
//! (`tests/fixtures/atif-v07/*/expected/out`, its manifest checked), with the Gym rollouts for
//! the rewards, opens as a run by the file picker, the folder picker and a drop, and the rollout
//! view shows a trajectory's steps: its tool call, the observation and the final message. A file
//! changed after the export is refused by name. Needs `dist/` and chromium: scripts/test.sh.

use crate::common;
use crate::common::assert_contains;
use crate::common::browser::start_app;

use common::browser::Browser;
use serde_json::json;
use std::path::{Path, PathBuf};

fn case(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/atif-v07")
        .join(name)
}

fn export_files(name: &str) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(case(name).join("expected/out"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    files
}

/// Opens the first task's first rollout and checks what the trajectory's steps became.
async fn shows_the_trajectory(b: &Browser) {
    b.wait_testid("status", "Profile ready").await;
    assert_eq!(b.count("[data-testid=task-row]").await, 2);
    b.open_first_rollout("get_weather").await;
    b.wait_testid_holding("rollout-view", "It is cold in SF", "San Francisco")
        .await;
    let kinds = b
        .eval("return Array.from(document.querySelectorAll('[data-testid=rollout-view] [data-testid=rollout-item]')).map(i => i.dataset.kind)")
        .await;
    let kinds: Vec<String> = serde_json::from_value(kinds).unwrap();
    for want in ["function_call", "function_call_output", "message"] {
        assert!(kinds.iter().any(|k| k == want), "{want} in {kinds:?}");
    }
    let reward = b.wait_testid("rollout-reward", "1").await;
    assert!(reward.starts_with('1'), "{reward}");
    if let Ok(path) = std::env::var("GYMSCOPE_ATIF_SCREENSHOT") {
        b.client.set_window_size(1200, 2200).await.unwrap();
        std::fs::write(path, b.client.screenshot().await.unwrap()).unwrap();
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn an_exported_folder_opens_by_picker_and_shows_its_steps() {
    let (_server, b) = start_app("").await;
    let mut files = export_files("tool_then_answer");
    files.push(case("tool_then_answer").join("rollouts.jsonl"));
    b.choose_files("files", &files).await;
    shows_the_trajectory(&b).await;
    b.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn an_exported_folder_opens_by_the_folder_picker() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("eval_atif");
    std::fs::create_dir(&dir).unwrap();
    for f in export_files("tool_then_answer") {
        std::fs::copy(&f, dir.join(f.file_name().unwrap())).unwrap();
    }
    let (_server, b) = start_app("").await;
    b.choose_file("atif-folder", &dir).await;
    // No rewards came with the folder: the run opens, its rollouts without a reward.
    b.wait_testid("status", "Profile ready").await;
    b.open_first_rollout("get_weather").await;
    b.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn an_exported_folder_opens_by_drop_and_a_changed_file_is_refused() {
    let (server, b) = start_app("").await;
    let drop_files = |files: Vec<(String, String)>| {
        format!(
            "const files = {};
             const dt = new DataTransfer();
             for (const [name, text] of files) dt.items.add(new File([text], name));
             document.querySelector('[data-testid=drop-zone]').dispatchEvent(
                 new DragEvent('drop', {{dataTransfer: dt, bubbles: true, cancelable: true}}));
             return dt.files.length;",
            serde_json::to_string(&files).unwrap()
        )
    };
    let mut files: Vec<(String, String)> = export_files("tool_then_answer")
        .into_iter()
        .map(|p| {
            (
                p.file_name().unwrap().to_string_lossy().into_owned(),
                std::fs::read_to_string(&p).unwrap(),
            )
        })
        .collect();
    files.push((
        "rollouts.jsonl".into(),
        std::fs::read_to_string(case("tool_then_answer").join("rollouts.jsonl")).unwrap(),
    ));
    assert_eq!(b.eval(&drop_files(files.clone())).await, json!(files.len()));
    shows_the_trajectory(&b).await;

    // The same folder with one file changed after the export: named, not opened.
    let b2 = Browser::start().await;
    b2.open_app(&server.url(), "").await;
    for f in &mut files {
        if f.0 == "0-1.json" {
            f.1 = f.1.replace("It is cold", "It is warm");
        }
    }
    b2.eval(&drop_files(files)).await;
    let status = b2.wait_testid("status", "expected_sha256").await;
    assert!(status.contains("0-1.json"), "{status}");
    b2.close().await;
    b.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn the_app_lists_what_the_schema_check_finds_and_still_opens_the_run() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("agent_run.json");
    let trajectory = json!({"schema_version": "ATIF-v1.7", "bogus": 1,
        "agent": {"name": "any-agent"},
        "steps": [{"step_id": 1, "source": "user", "message": "list the files"},
                  {"step_id": 2, "source": "agent", "message": "",
                   "tool_calls": [{"tool_call_id": "c1", "function_name": "bash", "arguments": {"cmd": "ls"}}],
                   "observation": {"results": [{"source_call_id": "c1", "content": "notes.txt"}]},
                   "metrics": {"prompt_tokens": 12, "completion_tokens": 5}},
                  {"step_id": 3, "source": "agent", "message": "There is notes.txt.",
                   "metrics": {"prompt_tokens": 20, "completion_tokens": 6}}]});
    std::fs::write(&file, serde_json::to_vec_pretty(&trajectory).unwrap()).unwrap();
    let (_server, b) = start_app("").await;
    b.choose_files("files", &[file]).await;
    b.wait_testid("status", "Profile ready").await;
    let problems = b
        .eval("return document.querySelector('[data-testid=atif-problems]').textContent")
        .await;
    let problems = problems.as_str().unwrap();
    assert!(problems.contains("2 problem(s)"), "{problems}");
    assert!(problems.contains("bogus: unexpected field"), "{problems}");
    assert_contains(problems, "agent.version: required field is missing");
    b.open_first_rollout("notes.txt").await;
    b.close().await;
}

/// A Harbor job folder picked whole: each trial's trajectory is placed by its `result.json`
/// (trials of one task are its rollouts) and rewarded by its verifier; the job's logs and its
/// own `result.json` are left aside.
#[tokio::test(flavor = "multi_thread")]
async fn a_harbor_job_folder_opens_with_its_tasks_and_rewards() {
    let tmp = tempfile::tempdir().unwrap();
    let job = common::harbor_job::write(tmp.path());
    let (_server, b) = start_app("").await;
    b.choose_file("atif-folder", &job).await;
    b.wait_testid("status", "Profile ready").await;
    let tasks = b
        .eval("return Array.from(document.querySelectorAll('[data-testid=task-row]')).map(r => r.innerText)")
        .await;
    let tasks: Vec<String> = serde_json::from_value(tasks).unwrap();
    assert_eq!(tasks.len(), 2, "two tasks (fix-bug, hello): {tasks:?}");
    let figure = |key: &str| {
        format!("return document.querySelector('[data-testid=figure][data-key=\"{key}\"] .figure-value').textContent")
    };
    assert_eq!(b.eval(&figure("rollouts")).await, json!("3"));
    // Two of the three trials passed: the verifier's rewards, from each trial's result.json.
    let mean = b.eval(&figure("mean-reward")).await;
    assert!(
        mean.as_str().is_some_and(|m| m.starts_with("0.66")),
        "mean reward 2/3: {mean}"
    );
    b.open_first_rollout("file.txt").await;
    let reward = b.wait_testid("rollout-reward", "").await;
    assert!(
        reward.starts_with('1') || reward.starts_with('0'),
        "a reward: {reward}"
    );
    b.close().await;
}
