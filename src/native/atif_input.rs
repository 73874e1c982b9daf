//! ATIF trajectories given where a command takes a Gym run: a folder Gym's `export --format
//! atif` wrote (its `manifest.jsonl` checked: paths stay in the folder, each file's SHA-256
//! matches), a Harbor job folder (each trial's `agent/trajectory.json` beside the `result.json`
//! that holds the verifier's reward), a folder of ATIF files, or one ATIF file. The core turns
//! them into a Gym run ([`crate::atif::run`]), written to a temporary folder for the command's
//! length, like the embedded example ([`super::example`]).
//!
//! Nothing outside the given folder is read: manifest paths that are absolute or climb out are
//! refused, and so is any file (or link) that resolves outside it.

use super::files;
use super::signals::TempGuard;
use crate::atif::harbor;
use crate::atif::run::{write_rows, RunBuilder};
use crate::atif::Hint;
use anyhow::{anyhow, bail, Context, Result};
use serde_json::Value;
use std::path::{Component, Path, PathBuf};

pub use crate::atif::trajectory::MAX_FILE_BYTES;

/// The converted run on disk; the folder goes when this is dropped.
pub struct AtifRunFiles {
    pub rollouts: PathBuf,
    pub inputs: PathBuf,
    dir: PathBuf,
    _guards: Vec<TempGuard>,
}

impl Drop for AtifRunFiles {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// The files read so far, in order: placing them needs every one (their keys), so each is read
/// here for its key and read again when its rows are written; only one is in memory at a time.
#[derive(Default)]
struct Sources {
    builder: RunBuilder,
    paths: Vec<PathBuf>,
}

impl Sources {
    fn add(&mut self, path: &Path, bytes: &[u8], hint: Hint) -> Result<()> {
        self.builder
            .add(&path.display().to_string(), bytes, hint)
            .map_err(anyhow::Error::msg)?;
        self.paths.push(path.to_path_buf());
        Ok(())
    }
}

/// Whether `path` holds ATIF rather than a Gym rollouts file: a folder with Gym's
/// `manifest.jsonl`, Harbor's trials or an ATIF `.json` file, or such a `.json` file itself. Any
/// other folder is left to the command (which says it is a folder).
pub fn is_atif_path(path: &Path) -> bool {
    if path.is_dir() {
        if path.join("manifest.jsonl").is_file() {
            return true;
        }
        let Ok(entries) = std::fs::read_dir(path) else {
            return false;
        };
        if entries
            .filter_map(Result::ok)
            .any(|e| e.path().join(harbor::TRAJECTORY).is_file())
        {
            return true;
        }
        // ATIF files anywhere below, as validate-atif finds them.
        return json_files(path).iter().any(|p| is_atif_file(p));
    }
    is_atif_file(path)
}

/// A regular `.json` file that names an ATIF `schema_version` anywhere in it (not only in its
/// first kilobytes: `validate-atif` accepts the key anywhere). A FIFO or device is never opened
/// here (it would wait for a writer or never end): the command's own checks judge it.
fn is_atif_file(path: &Path) -> bool {
    if path.extension().is_none_or(|e| e != "json") {
        return false;
    }
    if !matches!(files::kind(path), Ok(files::Kind::File)) {
        return false;
    }
    let Ok(f) = std::fs::File::open(path) else {
        return false;
    };
    let mut bytes = Vec::new();
    use std::io::Read;
    if f.take(MAX_FILE_BYTES).read_to_end(&mut bytes).is_err() {
        return false;
    }
    memchr::memmem::find(&bytes, b"\"schema_version\"").is_some()
        && memchr::memmem::find(&bytes, b"ATIF-v").is_some()
}

/// Whether a parsed JSON file in a folder is meant as ATIF (Harbor's `result.json` and
/// `config.json` sit beside trajectories and are not); `validate-atif` and the readers agree.
pub fn looks_atif(v: &Value) -> bool {
    v.get("steps").is_some() || crate::atif::trajectory::is_atif(v)
}

/// How deep below a given folder ATIF files are looked for (a Harbor job: job/trial/agent/file).
pub const MAX_DEPTH: usize = 4;

/// The `.json` files under `dir`, at most [`MAX_DEPTH`] folders down, sorted; links to folders
/// are not followed (a link loop is bounded), links to files are (checked to stay inside later).
pub fn json_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    collect(dir, 0, &mut out);
    out
}

fn collect(path: &Path, depth: usize, out: &mut Vec<PathBuf>) {
    let Ok(entries) = files::entries(path) else {
        return;
    };
    for p in entries {
        let Ok(meta) = std::fs::symlink_metadata(&p) else {
            continue;
        };
        if meta.is_dir() && depth < MAX_DEPTH {
            collect(&p, depth + 1, out);
        } else if !meta.is_dir() && p.extension().is_some_and(|e| e == "json") {
            out.push(p);
        }
    }
}

fn read_capped(path: &Path, shown: &str) -> Result<Vec<u8>> {
    if !matches!(files::kind(path)?, files::Kind::File) {
        bail!("'{shown}' is not a regular file");
    }
    let bytes = files::read_document(path, "an ATIF file", MAX_FILE_BYTES)?;
    files::note_read(path, "an ATIF file");
    Ok(bytes)
}

/// `rel` inside `root`, or an error when it is absolute, climbs out, or resolves outside.
fn inside(root: &Path, rel: &str, what: &str) -> Result<PathBuf> {
    let p = Path::new(rel);
    if rel.is_empty() || p.components().any(|c| !matches!(c, Component::Normal(_))) {
        bail!("{what}: the path {rel:?} leaves the folder (only plain relative paths are read)");
    }
    let full = root.join(p);
    let real_root = root
        .canonicalize()
        .with_context(|| format!("could not read '{}'", root.display()))?;
    let real = full
        .canonicalize()
        .with_context(|| format!("{what}: '{}' cannot be read", full.display()))?;
    if !real.starts_with(&real_root) {
        bail!("{what}: '{}' resolves outside the folder", full.display());
    }
    Ok(full)
}

/// Gym's export folder: each manifest line's file, hash checked.
fn from_manifest(dir: &Path, sources: &mut Sources) -> Result<String> {
    let manifest = dir.join("manifest.jsonl");
    let text = String::from_utf8(read_capped(&manifest, &manifest.display().to_string())?)
        .map_err(|_| anyhow!("'{}' is not UTF-8", manifest.display()))?;
    for (i, line) in text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
    {
        let at = format!("'{}' line {}", manifest.display(), i + 1);
        let row: Value = serde_json::from_str(line).map_err(|e| anyhow!("{at}: not JSON ({e})"))?;
        let field = |k: &str| {
            row.get(k)
                .ok_or_else(|| anyhow!("{at}: field '{k}' is missing"))
        };
        let rel = field("trajectory_path")?
            .as_str()
            .ok_or_else(|| anyhow!("{at}: field 'trajectory_path': expected a string"))?;
        let index = |k: &str| -> Result<u64> {
            field(k)?
                .as_u64()
                .ok_or_else(|| anyhow!("{at}: field '{k}': expected a non-negative integer"))
        };
        let key = (index("_ng_task_index")?, index("_ng_rollout_index")?);
        let want = field("expected_sha256")?
            .as_str()
            .ok_or_else(|| anyhow!("{at}: field 'expected_sha256': expected a string"))?;
        let path = inside(dir, rel, &at)?;
        let bytes = read_capped(&path, &path.display().to_string())?;
        let got = crate::atif::export_batch::sha256_hex(&bytes);
        if !got.eq_ignore_ascii_case(want) {
            bail!("{at}: '{rel}' hashes to {got}, not the manifest's expected_sha256 {want}: the file changed since the export");
        }
        let hint = Hint {
            manifest_key: Some(key),
            ..Hint::default()
        };
        sources.add(&path, &bytes, hint)?;
    }
    Ok("manifest checked".into())
}

/// Harbor's job folder: one trial per sub-folder with `agent/trajectory.json` and `result.json`.
fn from_harbor(dir: &Path, trials: &[PathBuf], sources: &mut Sources) -> Result<String> {
    for trial in trials {
        let rel_trial = trial
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .to_string();
        let traj = inside(
            dir,
            &format!("{rel_trial}/{}", harbor::TRAJECTORY),
            "Harbor trial",
        )?;
        let result_path = inside(
            dir,
            &format!("{rel_trial}/{}", harbor::RESULT),
            "Harbor trial",
        )?;
        let result_name = result_path.display().to_string();
        let hint = harbor::trial_hint(
            &rel_trial,
            &read_capped(&result_path, &result_name)?,
            &result_name,
        )
        .map_err(anyhow::Error::msg)?;
        let bytes = read_capped(&traj, &traj.display().to_string())?;
        sources.add(&traj, &bytes, hint)?;
    }
    Ok(format!("Harbor job, {} trials", trials.len()))
}

/// `--rewards`: read a line at a time, only ids and rewards kept (a whole Gym rollouts file may
/// be given), by the stream rules every command's files follow ([`files`]).
fn read_rewards(path: &Path) -> Result<crate::atif::run::Rewards> {
    let name = path.display().to_string();
    super::inputs::check_input(
        super::Input {
            path,
            flag: "--rewards",
        },
        false,
    )?;
    files::note_read(path, "--rewards");
    let mut rewards = crate::atif::run::Rewards::default();
    super::read::for_each_line::<anyhow::Error>(
        path,
        &name,
        crate::read::jsonl::DEFAULT_MAX_LINE_BYTES,
        |span, line, _| {
            rewards
                .add_line(&name, span.line, line)
                .map_err(anyhow::Error::msg)?;
            Ok(true)
        },
    )?;
    Ok(rewards)
}

/// Reads ATIF at `path` (see the module's note) and writes it as a Gym run. `rewards` is the
/// `--rewards` file. The note says what was read and what is missing.
pub fn load(path: &Path, rewards: Option<&Path>) -> Result<(AtifRunFiles, String)> {
    let mut sources = Sources::default();
    let shown = path.display().to_string();
    let how = if path.is_dir() {
        if path.join("manifest.jsonl").exists() {
            from_manifest(path, &mut sources)?
        } else {
            let entries = files::entries(path)?;
            let trials: Vec<PathBuf> = entries
                .iter()
                .filter(|p| {
                    p.join(harbor::TRAJECTORY).is_file() && p.join(harbor::RESULT).is_file()
                })
                .cloned()
                .collect();
            if trials.is_empty() {
                let mut n = 0;
                for p in json_files(path) {
                    let rel = p.strip_prefix(path).unwrap_or(&p).display().to_string();
                    let file = inside(path, &rel, &shown)?;
                    let bytes = read_capped(&file, &file.display().to_string())?;
                    // As validate-atif: a JSON file that is not a trajectory (a stray
                    // config.json) is passed over, not refused.
                    if !serde_json::from_slice::<Value>(&bytes).is_ok_and(|v| looks_atif(&v)) {
                        continue;
                    }
                    sources.add(&file, &bytes, Hint::default())?;
                    n += 1;
                }
                if n == 0 {
                    bail!("'{shown}' holds no ATIF trajectory: no manifest.jsonl, no Harbor trials (TRIAL/agent/trajectory.json), no .json files with `steps` or an ATIF `schema_version`");
                }
                "a folder of ATIF files".to_string()
            } else {
                // A trial without its trajectory or its result (a crashed agent, an unfinished
                // verifier) is named: a pass rate must not lose it without a word.
                let incomplete: Vec<String> = entries
                    .iter()
                    .filter(|p| p.is_dir() && !trials.contains(p))
                    .filter(|p| {
                        p.join(harbor::TRAJECTORY).exists() || p.join(harbor::RESULT).exists()
                    })
                    .map(|p| {
                        let missing = if p.join(harbor::RESULT).is_file() {
                            harbor::TRAJECTORY
                        } else {
                            harbor::RESULT
                        };
                        format!(
                            "{} (no {missing})",
                            p.file_name().unwrap_or_default().to_string_lossy()
                        )
                    })
                    .collect();
                if !incomplete.is_empty() {
                    crate::note!(
                        "Warning: {} Harbor trial(s) of '{shown}' are left out, not counted in any rate: {}",
                        incomplete.len(),
                        incomplete.join(", ")
                    );
                }
                from_harbor(path, &trials, &mut sources)?
            }
        }
    } else {
        let bytes = read_capped(path, &shown)?;
        sources.add(path, &bytes, Hint::default())?;
        "one ATIF file".to_string()
    };
    let rewards = rewards.map(read_rewards).transpose()?;
    let plan = sources
        .builder
        .place(rewards.as_ref())
        .map_err(|e| anyhow!("'{shown}': {e}"))?;
    let tmp = std::env::temp_dir();
    if !tmp.is_dir() {
        bail!(
            "the temporary folder '{}' (TMPDIR) does not exist: an ATIF run is converted there",
            tmp.display()
        );
    }
    let dir = tmp.join(format!("gymscope-atif-{}-{}", std::process::id(), unique()));
    // Registered before it exists, so a signal never leaves it behind (its files go first).
    let dir_guard = TempGuard::register_folder(&dir);
    std::fs::create_dir(&dir).with_context(|| format!("could not create '{}'", dir.display()))?;
    // Named after the source, so outputs named after the rollouts file (`profile`'s) say which run.
    let name = path
        .canonicalize()
        .ok()
        .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_else(|| "atif".into());
    let stem = name.strip_suffix(".json").unwrap_or(&name);
    let rollouts = dir.join(format!("{stem}.jsonl"));
    let inputs = dir.join(format!("{stem}_materialized_inputs.jsonl"));
    let guards = vec![
        TempGuard::register(&rollouts),
        TempGuard::register(&inputs),
        dir_guard,
    ];
    let files = AtifRunFiles {
        rollouts: rollouts.clone(),
        inputs: inputs.clone(),
        dir,
        _guards: guards,
    };
    write_run(&sources.paths, &plan.placements, &files)?;
    let mut note = format!(
        "Read {} ATIF trajectories from '{shown}' ({how}).",
        sources.paths.len()
    );
    if plan.without_reward > 0 {
        note.push_str(&format!(
            " {} of them have no reward: rewards come from Harbor's results, or from --rewards FILE (a Gym rollouts file, or JSONL rows of trajectory_id and reward).",
            plan.without_reward
        ));
    }
    Ok((files, note))
}

/// The run's two files, a trajectory at a time (each file read again: see [`Sources`]).
fn write_run(
    paths: &[PathBuf],
    placements: &[crate::atif::run::Placement],
    files: &AtifRunFiles,
) -> Result<()> {
    use std::io::Write;
    let create = |p: &Path| {
        std::fs::File::create(p)
            .map(std::io::BufWriter::new)
            .with_context(|| format!("could not write '{}'", p.display()))
    };
    let (mut rollouts, mut inputs) = (create(&files.rollouts)?, create(&files.inputs)?);
    let (mut row, mut input) = (Vec::new(), Vec::new());
    for (path, placement) in paths.iter().zip(placements) {
        let name = path.display().to_string();
        let bytes = read_capped(path, &name)?;
        row.clear();
        input.clear();
        write_rows(&name, &bytes, placement, &mut row, &mut input).map_err(anyhow::Error::msg)?;
        rollouts
            .write_all(&row)
            .with_context(|| format!("could not write '{}'", files.rollouts.display()))?;
        inputs
            .write_all(&input)
            .with_context(|| format!("could not write '{}'", files.inputs.display()))?;
    }
    for (mut w, p) in [(rollouts, &files.rollouts), (inputs, &files.inputs)] {
        w.flush()
            .with_context(|| format!("could not write '{}'", p.display()))?;
    }
    Ok(())
}

fn unique() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    N.fetch_add(1, Ordering::Relaxed)
}
