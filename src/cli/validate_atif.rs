//! `gymscope validate-atif PATH...`: finds the ATIF files, has the core check each
//! ([`crate::atif::validate`]), checks that local images they name exist (beside the file,
//! never outside its folder), and lists every error.

use super::args::ValidateAtifArgs;
use crate::atif::validate::validate;
use crate::native::atif_input::MAX_FILE_BYTES;
use anyhow::Result;
use serde_json::Value;
use std::path::{Component, Path, PathBuf};
use std::process::ExitCode;

/// How deep below a given folder files are looked for (a Harbor job: job/trial/agent/file).
const MAX_DEPTH: usize = 4;

fn collect(path: &Path, depth: usize, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(path) else {
        return;
    };
    let mut entries: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    entries.sort();
    for p in entries {
        let Ok(meta) = std::fs::symlink_metadata(&p) else {
            continue;
        };
        if meta.is_dir() && depth < MAX_DEPTH {
            collect(&p, depth + 1, out);
        } else if meta.is_file() && p.extension().is_some_and(|e| e == "json") {
            out.push(p);
        }
    }
}

/// Whether a JSON file in a folder is meant as ATIF (Harbor's `result.json` and `config.json`
/// sit beside trajectories and are not).
fn looks_atif(v: &Value) -> bool {
    v.get("steps").is_some() || crate::atif::trajectory::is_atif(v)
}

pub fn run(args: &ValidateAtifArgs) -> Result<ExitCode> {
    let mut files = Vec::new();
    let mut given = Vec::new();
    for p in &args.paths {
        if p.is_dir() {
            collect(p, 0, &mut files);
        } else if p.exists() {
            given.push(p.clone());
        } else {
            return Err(
                crate::native::UsageError(format!("'{}' does not exist", p.display())).into(),
            );
        }
    }
    let from_folders = files.len();
    files.extend(given.iter().cloned());
    let (mut checked, mut bad, mut errors) = (0usize, 0usize, 0usize);
    for file in &files {
        let shown = file.display().to_string();
        let explicit = given.contains(file);
        let problems: Vec<String> = match read(file) {
            Err(e) => vec![e],
            Ok(v) if !explicit && !looks_atif(&v) => continue,
            Ok(v) => {
                let (problems, images) = validate(&v);
                let mut out: Vec<String> = problems
                    .iter()
                    .map(|p| {
                        if p.at.is_empty() {
                            p.what.clone()
                        } else {
                            format!("{}: {}", p.at, p.what)
                        }
                    })
                    .collect();
                if !args.no_validate_images {
                    let base = file.parent().unwrap_or(Path::new("."));
                    for (at, rel) in images {
                        if Path::new(&rel)
                            .components()
                            .any(|c| !matches!(c, Component::Normal(_) | Component::CurDir))
                        {
                            out.push(format!("{at}: the image path {rel:?} leaves the trajectory's folder (not checked)"));
                        } else if !base.join(&rel).is_file() {
                            out.push(format!("{at}: referenced image file does not exist: {rel}"));
                        }
                    }
                }
                out
            }
        };
        checked += 1;
        if problems.is_empty() {
            continue;
        }
        bad += 1;
        errors += problems.len();
        for p in problems {
            crate::say!("{shown}: {p}");
        }
    }
    if checked == 0 {
        crate::note!(
            "No ATIF file found: {} .json file(s) looked at under the given folders, none with `steps` or an ATIF `schema_version`.",
            from_folders
        );
        return Ok(ExitCode::FAILURE);
    }
    if bad == 0 {
        crate::say!("{checked} ATIF file(s) valid.");
        Ok(ExitCode::SUCCESS)
    } else {
        crate::say!("{errors} error(s) in {bad} of {checked} ATIF file(s).");
        Ok(ExitCode::FAILURE)
    }
}

fn read(file: &Path) -> Result<Value, String> {
    let meta = std::fs::metadata(file).map_err(|e| format!("could not read it: {e}"))?;
    if meta.len() > MAX_FILE_BYTES {
        return Err(format!(
            "{} bytes: over the {} MiB limit for one ATIF trajectory",
            meta.len(),
            MAX_FILE_BYTES >> 20
        ));
    }
    let bytes = std::fs::read(file).map_err(|e| format!("could not read it: {e}"))?;
    serde_json::from_slice(&bytes).map_err(|e| format!("invalid JSON: {e}"))
}
