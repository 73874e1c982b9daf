//! The embedded example run (`assets/example-run/`: three agents, 30 tasks × 4 repeats; the one the app loads with "Load the
//! example run") and example comparison, so `gymscope report --example`, `health --example`,
//! `query --example` and `compare --example` show real output to someone with no run of their
//! own yet.
//!
//! The commands read files (the report seeks back into the rollouts), so the example is written
//! to a temporary folder for the command's length: its two files are registered with the signal
//! handler like every temporary output, and the folder is removed when the command ends.

use super::signals::TempGuard;
use std::path::PathBuf;

/// The example's two files, as `gym eval run` names them.
const FILES: [(&str, &[u8]); 2] = [
    (
        "example_rollouts_materialized_inputs.jsonl",
        include_bytes!("../../assets/example-run/example_rollouts_materialized_inputs.jsonl"),
    ),
    (
        "example_rollouts.jsonl",
        include_bytes!("../../assets/example-run/example_rollouts.jsonl"),
    ),
];

/// The example comparison's runs (the app's "Load the example comparison"), each with its
/// materialized inputs: a baseline and a candidate checkpoint of the same 24 tasks.
const COMPARISON: [(&str, &[u8]); 4] = [
    (
        "base_materialized_inputs.jsonl",
        include_bytes!("../../assets/example-compare/base_materialized_inputs.jsonl"),
    ),
    (
        "base.jsonl",
        include_bytes!("../../assets/example-compare/base.jsonl"),
    ),
    (
        "step200_materialized_inputs.jsonl",
        include_bytes!("../../assets/example-compare/step200_materialized_inputs.jsonl"),
    ),
    (
        "step200.jsonl",
        include_bytes!("../../assets/example-compare/step200.jsonl"),
    ),
];

/// The title the example's pages and messages give it.
pub const TITLE: &str = "Example run: three agents, four repeats";

/// The example on disk while this lives.
pub struct ExampleRun {
    pub inputs: PathBuf,
    pub rollouts: PathBuf,
    dir: PathBuf,
    _guards: Vec<TempGuard>,
}

impl ExampleRun {
    /// The example run (`inputs`, `rollouts`).
    pub fn write() -> std::io::Result<ExampleRun> {
        Self::write_files(&FILES, [0, 1])
    }

    /// The example comparison: `inputs` is the baseline's rollouts, `rollouts` the candidate's
    /// (each with its materialized inputs beside it, where `compare` finds them).
    pub fn write_comparison() -> std::io::Result<ExampleRun> {
        Self::write_files(&COMPARISON, [1, 3])
    }

    /// `files` in a new temporary folder; `[a, b]` are the two of them named by the fields.
    fn write_files(files: &[(&str, &[u8])], [a, b]: [usize; 2]) -> std::io::Result<ExampleRun> {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let dir =
            std::env::temp_dir().join(format!("gymscope-example.{}.{nanos}", std::process::id()));
        // A new folder of its own (an existing one is an error, never reused).
        std::fs::create_dir(&dir)?;
        let mut guards = Vec::new();
        for (name, bytes) in files {
            let path = dir.join(name);
            guards.push(TempGuard::register(&path));
            if let Err(e) = std::fs::write(&path, bytes) {
                let _ = std::fs::remove_dir_all(&dir);
                return Err(e);
            }
        }
        let run = ExampleRun {
            inputs: dir.join(files[a].0),
            rollouts: dir.join(files[b].0),
            dir,
            _guards: guards,
        };
        Ok(run)
    }
}

impl Drop for ExampleRun {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
