//! ATIF among the files chosen on the profile page, turned into a run's two files by the core
//! before the page reads them as any run ([`crate::atif::run::from_files`]).

use super::file_pick::bytes_file;
use crate::inspect::detect::FileKind;

/// ATIF among the files (dropped, picked, or a folder's): the trajectories, with Gym's manifest
/// and a Gym rollouts file for the rewards if they came along, turned into a run's two files by
/// the core; the other files are handed on as they are.
/// With the run, what the schema check ([`crate::atif::validate`], as `validate-atif`) found in
/// the trajectories: one line per problem, with its file and place.
pub async fn atif_as_run(
    files: Vec<(web_sys::File, FileKind)>,
) -> Result<(Vec<(web_sys::File, FileKind)>, Vec<String>), String> {
    async fn bytes(f: &web_sys::File) -> Result<Vec<u8>, String> {
        let blob = gloo_file::Blob::from(f.clone());
        gloo_file::futures::read_as_bytes(&blob)
            .await
            .map_err(|e| format!("could not read '{}': {e}", f.name()))
    }
    let (mut trajectories, mut manifest, mut rewards, mut rest) =
        (Vec::new(), None, None, Vec::new());
    let mut harbor_results = Vec::new();
    let mut first_name = None;
    for (file, kind) in files {
        let path = path_in_folder(&file);
        // A Harbor trial's result (its task and reward), matched to its trajectory by the core.
        if path.ends_with(&format!("/{}", crate::atif::harbor::RESULT)) {
            harbor_results.push((path, bytes(&file).await?));
            continue;
        }
        match kind {
            FileKind::Atif => {
                if file.size() > crate::atif::trajectory::MAX_FILE_BYTES as f64 {
                    return Err(format!(
                        "'{}' is over the {} MiB limit for one ATIF trajectory",
                        file.name(),
                        crate::atif::trajectory::MAX_FILE_BYTES >> 20
                    ));
                }
                first_name.get_or_insert_with(|| file.name());
                trajectories.push((path, bytes(&file).await?));
            }
            FileKind::AtifManifest => manifest = Some(bytes(&file).await?),
            // A Gym rollouts file dropped with ATIF gives the rewards (by the manifest's keys).
            FileKind::Rollouts => rewards = Some((file.name(), bytes(&file).await?)),
            _ => rest.push((file, kind)),
        }
    }
    let mut problems = Vec::new();
    for (name, bytes) in &trajectories {
        if let Ok(v) = serde_json::from_slice::<serde_json::Value>(bytes) {
            let (found, _) = crate::atif::validate::validate(&v);
            problems.extend(
                found
                    .into_iter()
                    .map(|p| format!("{name}: {}: {}", p.at, p.what)),
            );
        }
    }
    let run = crate::atif::run::from_files(
        &trajectories,
        manifest.as_deref(),
        rewards.as_ref().map(|(n, b)| (n.as_str(), b.as_slice())),
        &harbor_results,
    )?;
    let stem = if manifest.is_some() {
        "atif_export".to_string()
    } else if let Some((path, _)) = harbor_results.first() {
        // The job folder's name, as the CLI names a run read from it.
        path.split('/').next().unwrap_or("harbor_job").to_string()
    } else {
        first_name
            .unwrap_or_default()
            .trim_end_matches(".json")
            .to_string()
    };
    rest.push((
        bytes_file(&format!("{stem}_materialized_inputs.jsonl"), &run.inputs),
        FileKind::MaterializedInputs,
    ));
    rest.push((
        bytes_file(&format!("{stem}.jsonl"), &run.rollouts),
        FileKind::Rollouts,
    ));
    Ok((rest, problems))
}

/// A file's path in the folder picked (`webkitRelativePath`), else its name.
fn path_in_folder(file: &web_sys::File) -> String {
    js_sys::Reflect::get(file, &"webkitRelativePath".into())
        .ok()
        .and_then(|v| v.as_string())
        .filter(|p| !p.is_empty())
        .unwrap_or_else(|| file.name())
}
