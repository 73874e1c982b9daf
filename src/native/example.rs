//! The embedded example run (NeMo Gym's ether0 example, the one the app loads with "Load the
//! example run"), so `gymscope report --example`, `health --example` and `query --example` show
//! real output to someone with no run of their own yet.
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
        include_bytes!(
            "../../tests/fixtures/gym-examples/ether0/example_rollouts_materialized_inputs.jsonl"
        ),
    ),
    (
        "example_rollouts.jsonl",
        include_bytes!("../../tests/fixtures/gym-examples/ether0/example_rollouts.jsonl"),
    ),
];

/// The title the example's pages and messages give it.
pub const TITLE: &str = "NeMo Gym example run (ether0)";

/// The example on disk while this lives.
pub struct ExampleRun {
    pub inputs: PathBuf,
    pub rollouts: PathBuf,
    dir: PathBuf,
    _guards: Vec<TempGuard>,
}

impl ExampleRun {
    pub fn write() -> std::io::Result<ExampleRun> {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let dir =
            std::env::temp_dir().join(format!("gymscope-example.{}.{nanos}", std::process::id()));
        // A new folder of its own (an existing one is an error, never reused).
        std::fs::create_dir(&dir)?;
        let mut guards = Vec::new();
        for (name, bytes) in FILES {
            let path = dir.join(name);
            guards.push(TempGuard::register(&path));
            if let Err(e) = std::fs::write(&path, bytes) {
                let _ = std::fs::remove_dir_all(&dir);
                return Err(e);
            }
        }
        let run = ExampleRun {
            inputs: dir.join(FILES[0].0),
            rollouts: dir.join(FILES[1].0),
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
