//! A byte progress bar for reading big files (`profile`, `report`): shown only on a terminal and
//! only when the files are big enough for a wait to be noticed; it never prints to a pipe or log.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::path::Path;

/// Below this many bytes in total the read takes well under a second: no bar.
const MIN_BYTES: u64 = 256 << 20;

/// The size from which the bar shows: [`MIN_BYTES`], or `GYMSCOPE_PROGRESS_MIN_BYTES` (for tests
/// that cannot afford a 256 MB file).
fn min_bytes() -> u64 {
    std::env::var("GYMSCOPE_PROGRESS_MIN_BYTES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(MIN_BYTES)
}

pub struct FileProgress {
    bar: Option<ProgressBar>,
}

impl FileProgress {
    pub fn new(files: &[&Path]) -> FileProgress {
        let total: u64 = files
            .iter()
            .filter_map(|p| std::fs::metadata(p).ok())
            .map(|m| m.len())
            .sum();
        let show = total >= min_bytes() && crate::native::out::stderr_is_terminal();
        let bar = show.then(|| {
            let bar =
                ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr_with_hz(4));
            bar.set_style(
                ProgressStyle::with_template(
                    "Reading {bar:25} {bytes}/{total_bytes} {bytes_per_sec} ETA {eta}",
                )
                .expect("valid template"),
            );
            bar
        });
        FileProgress { bar }
    }

    pub fn advance(&mut self, bytes: usize) {
        if let Some(bar) = &self.bar {
            bar.inc(bytes as u64);
        }
    }

    /// Clears the bar, so what follows prints on a clean line.
    pub fn finish(&mut self) {
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
    }
}

impl Drop for FileProgress {
    fn drop(&mut self) {
        self.finish();
    }
}
