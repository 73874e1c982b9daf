//! Harbor's job folder: one trial per sub-folder, its trajectory at `TRIAL/agent/trajectory.json`
//! beside `TRIAL/result.json`, which holds the task's name and the verifier's reward. Trials of
//! one task are its rollouts ([`super::run`] places them). Read here for both faces: the CLI from
//! the folder on disk, the app from a folder picked (each file named by its path in the folder).

use super::Hint;
use serde_json::Value;

/// Where a trial keeps its trajectory, from the trial's folder.
pub const TRAJECTORY: &str = "agent/trajectory.json";
/// Where a trial keeps its result, from the trial's folder.
pub const RESULT: &str = "result.json";

/// The trial folder of a trajectory at `…/TRIAL/agent/trajectory.json` (a `/`-separated path),
/// or `None` for any other path.
pub fn trial_of(path: &str) -> Option<&str> {
    let trial = path.strip_suffix(TRAJECTORY)?.strip_suffix('/')?;
    (!trial.is_empty()).then_some(trial)
}

/// The verifier's reward: `verifier_result.rewards.reward`, else the first number among the
/// rewards (a verifier that names its reward otherwise).
fn reward(result: &Value) -> Option<f64> {
    let rewards = result.get("verifier_result")?.get("rewards")?;
    rewards
        .get("reward")
        .and_then(Value::as_f64)
        .or_else(|| rewards.as_object()?.values().find_map(Value::as_f64))
}

/// A trial's place in the run from its `result.json` (`name` names it in errors): its task is
/// `task_name`, else the trial folder's name up to `__` (Harbor names trials `TASK__ID`).
pub fn trial_hint(trial: &str, result: &[u8], name: &str) -> Result<Hint, String> {
    let result: Value =
        serde_json::from_slice(result).map_err(|e| format!("'{name}': not JSON ({e})"))?;
    let folder = trial.rsplit('/').next().unwrap_or(trial);
    let task = result.get("task_name").and_then(Value::as_str).map_or_else(
        || folder.split("__").next().unwrap_or(folder).to_string(),
        str::to_string,
    );
    Ok(Hint {
        harbor_task: Some(task),
        harbor_reward: reward(&result),
        ..Hint::default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trials_are_found_by_their_paths() {
        assert_eq!(
            trial_of("job/fix__a1/agent/trajectory.json"),
            Some("job/fix__a1")
        );
        assert_eq!(trial_of("fix__a1/agent/trajectory.json"), Some("fix__a1"));
        assert_eq!(trial_of("agent/trajectory.json"), None);
        assert_eq!(trial_of("job/fix__a1/trajectory.json"), None);
        assert_eq!(trial_of("job/fix__a1/xagent/trajectory.json"), None);
    }

    #[test]
    fn a_trial_is_named_by_its_result_else_its_folder() {
        let h = trial_hint(
            "job/fix__a1",
            br#"{"task_name": "fix-bug", "verifier_result": {"rewards": {"reward": 0.5}}}"#,
            "r",
        )
        .unwrap();
        assert_eq!(h.harbor_task.as_deref(), Some("fix-bug"));
        assert_eq!(h.harbor_reward, Some(0.5));
        let h = trial_hint(
            "job/hello__c3",
            br#"{"verifier_result": {"rewards": {"pass": 1}}}"#,
            "r",
        )
        .unwrap();
        assert_eq!(h.harbor_task.as_deref(), Some("hello"));
        assert_eq!(h.harbor_reward, Some(1.0));
        let h = trial_hint("t", br#"{"verifier_result": null}"#, "r").unwrap();
        assert_eq!(h.harbor_reward, None);
        let e = trial_hint("t", b"{", "job/t/result.json").unwrap_err();
        assert!(e.contains("'job/t/result.json': not JSON"), "{e}");
    }
}
