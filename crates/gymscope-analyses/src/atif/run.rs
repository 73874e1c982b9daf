//! Many ATIF trajectories as one Gym run: each file placed at a (task, rollout) key and given its
//! reward, then written as a rollout row and a materialized-inputs row ([`super::to_gym`]).
//!
//! Where a trajectory sits, first that applies: Gym's `manifest.jsonl` (its indices), a
//! `trajectory_id` of the form `session:task:rollout` (what Gym's export writes), Harbor's trial
//! (trials of one task are its rollouts), else the file's order (one task each). Its reward:
//! Harbor's verifier result, else `--rewards` by trajectory id, else `--rewards` by key (a Gym
//! rollouts file is such a file); else none, and the run says how many have none.

use super::to_gym::to_gym;
pub use super::to_gym::Placement;
use super::trajectory::{self, Trajectory};
use super::Hint;
use crate::gym::keys;
use serde_json::Value;
use std::collections::{BTreeMap, HashMap};

/// Rewards from a `--rewards` file.
#[derive(Clone, Debug, Default)]
pub struct Rewards {
    pub by_id: HashMap<String, f64>,
    pub by_key: HashMap<(u64, u64), f64>,
}

fn number(v: Option<&Value>) -> Option<f64> {
    match v? {
        Value::Number(n) => n.as_f64(),
        Value::Bool(b) => Some(f64::from(u8::from(*b))),
        _ => None,
    }
}

/// Reads a rewards JSONL: each line `{"trajectory_id": ..., "reward": ...}` or a Gym row
/// (`_ng_task_index`, `_ng_rollout_index`, `reward`). `name` is how errors name the file.
pub fn parse_rewards(bytes: &[u8], name: &str) -> Result<Rewards, String> {
    let mut out = Rewards::default();
    for (i, line) in bytes.split(|b| *b == b'\n').enumerate() {
        out.add_line(name, i as u64 + 1, line)?;
    }
    Ok(out)
}

impl Rewards {
    /// Adds one line of a rewards file (see [`parse_rewards`]); blank lines are skipped. Only
    /// the ids and rewards are kept, so a whole rollouts file given as rewards is read a line at
    /// a time in the memory of its keys.
    pub fn add_line(&mut self, name: &str, line_no: u64, line: &[u8]) -> Result<(), String> {
        if line.iter().all(u8::is_ascii_whitespace) {
            return Ok(());
        }
        let at = format!("'{name}' line {line_no}");
        let row: Value =
            serde_json::from_slice(line).map_err(|e| format!("{at}: not JSON ({e})"))?;
        let reward = number(row.get("reward"))
            .ok_or_else(|| format!("{at}: field 'reward': expected a number"))?;
        if let Some(id) = row.get("trajectory_id").and_then(Value::as_str) {
            self.by_id.insert(id.to_string(), reward);
            return Ok(());
        }
        let index = |k: &str| row.get(k).and_then(Value::as_u64);
        match (index(keys::TASK_INDEX), index(keys::ROLLOUT_INDEX)) {
            (Some(t), Some(r)) => {
                self.by_key.insert((t, r), reward);
                Ok(())
            }
            _ => Err(format!(
                "{at}: expected 'trajectory_id' or '{}' and '{}' beside 'reward'",
                keys::TASK_INDEX,
                keys::ROLLOUT_INDEX
            )),
        }
    }
}

/// What placing a trajectory needs of it: its file's name, key, Harbor task and reward, and its
/// id (the trajectory itself is not kept, so a folder of any size is read in bounded memory).
struct Placed {
    name: String,
    key: Option<(u64, u64)>,
    harbor_task: Option<String>,
    reward: Option<f64>,
    trajectory_id: Option<String>,
}

/// The run being assembled, a file at a time: [`RunBuilder::add`] each file, [`RunBuilder::place`]
/// them all, then [`write_rows`] each file again with its placement.
#[derive(Default)]
pub struct RunBuilder {
    placed: Vec<Placed>,
}

/// Where each added file goes, in the order added, and how many have no reward.
pub struct Plan {
    pub placements: Vec<Placement>,
    pub without_reward: usize,
}

/// The run: JSONL bytes of both files, and what a reader should know.
pub struct AtifRun {
    pub rollouts: Vec<u8>,
    pub inputs: Vec<u8>,
    pub count: usize,
    pub without_reward: usize,
}

fn read(name: &str, bytes: &[u8]) -> Result<Trajectory, String> {
    let value: Value =
        serde_json::from_slice(bytes).map_err(|e| format!("'{name}': not JSON ({e})"))?;
    trajectory::read(&value).map_err(|e| format!("'{name}': {e}"))
}

impl RunBuilder {
    /// Reads one file (`name` names it in errors) and keeps what placing it needs.
    pub fn add(&mut self, name: &str, bytes: &[u8], hint: Hint) -> Result<(), String> {
        let trajectory = read(name, bytes)?;
        let key = hint.manifest_key.or_else(|| {
            if hint.harbor_task.is_some() {
                None
            } else {
                trajectory.gym_indices()
            }
        });
        self.placed.push(Placed {
            name: name.to_string(),
            key,
            harbor_task: hint.harbor_task,
            reward: hint.harbor_reward,
            trajectory_id: trajectory.trajectory_id,
        });
        Ok(())
    }

    /// Places every trajectory and gives each its reward.
    pub fn place(&self, rewards: Option<&Rewards>) -> Result<Plan, String> {
        if self.placed.is_empty() {
            return Err("no ATIF trajectory found".into());
        }
        // Harbor's tasks in name order; files without any key after every keyed one.
        let tasks: BTreeMap<&str, u64> = {
            let names: std::collections::BTreeSet<&str> = self
                .placed
                .iter()
                .filter_map(|p| p.harbor_task.as_deref())
                .collect();
            names.into_iter().zip(0..).collect()
        };
        let mut next_rollout: HashMap<u64, u64> = HashMap::new();
        let mut free_task = self
            .placed
            .iter()
            .filter_map(|p| p.key.map(|k| k.0))
            .max()
            .map_or(tasks.len() as u64, |m| (m + 1).max(tasks.len() as u64));
        let mut seen: HashMap<(u64, u64), &str> = HashMap::new();
        let mut placements = Vec::with_capacity(self.placed.len());
        let mut without_reward = 0;
        for p in &self.placed {
            let key = match (p.key, p.harbor_task.as_deref()) {
                (Some(k), _) => k,
                (None, Some(task)) => {
                    let t = tasks[task];
                    let r = next_rollout.entry(t).or_insert(0);
                    *r += 1;
                    (t, *r - 1)
                }
                (None, None) => {
                    free_task += 1;
                    (free_task - 1, 0)
                }
            };
            if let Some(other) = seen.insert(key, &p.name) {
                return Err(format!(
                    "'{}' and '{other}' are both task {} rollout {}: each trajectory needs its own key",
                    p.name, key.0, key.1
                ));
            }
            let reward = p.reward.or_else(|| {
                let r = rewards?;
                p.trajectory_id
                    .as_ref()
                    .and_then(|id| r.by_id.get(id).copied())
                    .or_else(|| r.by_key.get(&key).copied())
            });
            without_reward += usize::from(reward.is_none());
            placements.push(Placement {
                task: key.0,
                rollout: key.1,
                reward,
            });
        }
        Ok(Plan {
            placements,
            without_reward,
        })
    }
}

/// One file's rollout row and materialized-inputs row, each a JSONL line, appended to the two
/// buffers (the same bytes [`RunBuilder::add`] read, now with its placement).
pub fn write_rows(
    name: &str,
    bytes: &[u8],
    placement: &Placement,
    rollouts: &mut Vec<u8>,
    inputs: &mut Vec<u8>,
) -> Result<(), String> {
    let (row, input) = to_gym(&read(name, bytes)?, placement);
    serde_json::to_writer(&mut *rollouts, &row).map_err(|e| e.to_string())?;
    rollouts.push(b'\n');
    serde_json::to_writer(&mut *inputs, &input).map_err(|e| e.to_string())?;
    inputs.push(b'\n');
    Ok(())
}

/// A Harbor trial's hint for the trajectory at `name`, if its `result.json` came along.
fn harbor_hint(name: &str, results: &[(String, Vec<u8>)]) -> Result<Option<Hint>, String> {
    let Some(trial) = super::harbor::trial_of(name) else {
        return Ok(None);
    };
    let want = format!("{trial}/{}", super::harbor::RESULT);
    results
        .iter()
        .find(|(n, _)| *n == want)
        .map(|(n, bytes)| super::harbor::trial_hint(trial, bytes, n))
        .transpose()
}

/// A run from files as the app gets them (dropped or picked): ATIF trajectories, Gym's
/// `manifest.jsonl` if it came along (its indices, each file's SHA-256 checked), a Gym rollouts
/// file for the rewards if one came too, and the `result.json` of Harbor's trials when a job
/// folder was picked ([`super::harbor`]). A file is named by its path in the folder picked, else
/// by its own name (a manifest path is matched by its last part).
pub fn from_files(
    trajectories: &[(String, Vec<u8>)],
    manifest: Option<&[u8]>,
    rewards: Option<(&str, &[u8])>,
    harbor_results: &[(String, Vec<u8>)],
) -> Result<AtifRun, String> {
    let mut hints: HashMap<&str, Hint> = HashMap::new();
    if let Some(m) = manifest {
        let text = std::str::from_utf8(m).map_err(|_| "manifest.jsonl: not UTF-8".to_string())?;
        for (i, line) in text
            .lines()
            .enumerate()
            .filter(|(_, l)| !l.trim().is_empty())
        {
            let at = format!("manifest.jsonl line {}", i + 1);
            let row: Value =
                serde_json::from_str(line).map_err(|e| format!("{at}: not JSON ({e})"))?;
            let field = |k: &str| {
                row.get(k)
                    .ok_or_else(|| format!("{at}: field '{k}' is missing"))
            };
            let path = field("trajectory_path")?
                .as_str()
                .ok_or_else(|| format!("{at}: trajectory_path: expected a string"))?;
            let index = |k: &str| {
                field(k)?
                    .as_u64()
                    .ok_or_else(|| format!("{at}: {k}: expected a non-negative integer"))
            };
            let key = (index(keys::TASK_INDEX)?, index(keys::ROLLOUT_INDEX)?);
            let want = field("expected_sha256")?
                .as_str()
                .unwrap_or_default()
                .to_ascii_lowercase();
            let last = |p: &str| p.rsplit('/').next().unwrap_or(p).to_string();
            let name = last(path);
            let (file, bytes) = trajectories
                .iter()
                .find(|(n, _)| last(n) == name)
                .ok_or_else(|| format!("{at}: '{path}' is not among the files given"))?;
            let got = super::export_batch::sha256_hex(bytes);
            if got != want {
                return Err(format!(
                    "{at}: '{file}' hashes to {got}, not the manifest's expected_sha256 {want}: the file changed since the export"
                ));
            }
            hints.insert(
                file.as_str(),
                Hint {
                    manifest_key: Some(key),
                    ..Hint::default()
                },
            );
        }
    }
    let mut builder = RunBuilder::default();
    for (name, bytes) in trajectories {
        let hint = match hints.remove(name.as_str()) {
            Some(hint) => hint,
            None => harbor_hint(name, harbor_results)?.unwrap_or_default(),
        };
        builder.add(name, bytes, hint)?;
    }
    let rewards = rewards
        .map(|(name, bytes)| parse_rewards(bytes, name))
        .transpose()?;
    let plan = builder.place(rewards.as_ref())?;
    let mut run = AtifRun {
        rollouts: Vec::new(),
        inputs: Vec::new(),
        count: trajectories.len(),
        without_reward: plan.without_reward,
    };
    for ((name, bytes), placement) in trajectories.iter().zip(&plan.placements) {
        write_rows(name, bytes, placement, &mut run.rollouts, &mut run.inputs)?;
    }
    Ok(run)
}
