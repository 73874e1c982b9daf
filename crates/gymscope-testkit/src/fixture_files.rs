//! Every JSONL file under tests/fixtures, for tests that read them all; the case folders of a
//! recorded fixture set.

use std::path::{Path, PathBuf};

/// The `.jsonl` files under tests/fixtures (every depth), sorted.
pub fn every_jsonl() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).expect("tests/fixtures is readable") {
            let path = entry.expect("a directory entry").path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "jsonl") {
                out.push(path);
            }
        }
    }
    let mut files = Vec::new();
    walk(&crate::repo_root().join("tests/fixtures"), &mut files);
    files.sort();
    files
}

/// The folders directly under `root` that hold `marker` (a file of every case), sorted.
pub fn case_dirs(root: &Path, marker: &str) -> Vec<PathBuf> {
    let mut cases: Vec<PathBuf> = std::fs::read_dir(root)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join(marker).exists())
        .collect();
    cases.sort();
    cases
}
