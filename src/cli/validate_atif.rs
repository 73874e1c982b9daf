//! `gymscope validate-atif PATH...`: finds the ATIF files, has the core check each
//! ([`crate::atif::validate`]), checks that local images they name exist (beside the file,
//! never outside its folder), and lists every error.

use super::args::ValidateAtifArgs;
use crate::atif::validate::validate;
use crate::native::atif_input::{json_files, looks_atif, MAX_FILE_BYTES};
use crate::native::files::read_document;
use anyhow::Result;
use serde_json::Value;
use std::path::{Component, Path};
use std::process::ExitCode;

pub fn run(args: &ValidateAtifArgs) -> Result<ExitCode> {
    let mut files = Vec::new();
    let mut given = Vec::new();
    for p in &args.paths {
        if p.is_dir() {
            files.extend(json_files(p));
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
        let folders: Vec<String> = args
            .paths
            .iter()
            .filter(|p| p.is_dir())
            .map(|p| format!("'{}'", p.display()))
            .collect();
        crate::note!(
            "No ATIF file found: {} .json file(s) looked at under {}, none with `steps` or an ATIF `schema_version`.",
            from_folders,
            folders.join(", ")
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

/// One file, read whole by the rules of every command's documents ([`crate::native::files`]): a
/// FIFO waits for its writer, a device or a giant file stops at the cap.
fn read(file: &Path) -> Result<Value, String> {
    let bytes = read_document(file, "PATH", MAX_FILE_BYTES).map_err(|e| format!("{e:#}"))?;
    serde_json::from_slice(&bytes).map_err(|e| format!("invalid JSON: {e}"))
}
