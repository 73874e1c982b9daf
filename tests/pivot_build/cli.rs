//! The `build-pivot` command: file names next to OUT, printed names, exit codes, no temp files,
//! the Gym config, and never writing over the input.
