//! `gymscope compare --baseline R --candidates R …`: NeMo Gym v0.7.0's `gym eval compare`
//! report beside gymscope's analysis. Each run's entries come from its
//! `<stem>_aggregate_metrics.json` (or the file given), or, when there is none and the rollouts
//! are there, from the rollouts' own profile ([`super::compare_entries`]). The core builds the
//! report (`gymscope::compare::gym_report`); this writes `compare_report.json` and
//! `compare_report.md` and prints upstream's recap.

use super::args::{CompareArgs, CompareFormat, ReportFormatArg};
use crate::compare::gym_report::{self, ReportFormat, RunFile, Selection};
use crate::native::files::{clear_outputs, read_document, DOCUMENT_CAP};
use crate::native::out::terminal_safe_str;
use crate::native::Input;
use anyhow::{bail, Context, Result};
use serde_json::Value;
use std::io::Write;
use std::path::{Component, Path, PathBuf};

/// Both sides loaded, ready to be compared and written.
pub struct GymCompare {
    baseline: RunFile,
    candidates: Vec<RunFile>,
}

/// A path as upstream resolves one given on the command line: absolute, under the working
/// directory, without `.` components (Python's `Path` drops them).
fn absolute(p: &Path) -> PathBuf {
    let joined = if p.is_absolute() {
        p.to_path_buf()
    } else {
        std::env::current_dir().unwrap_or_default().join(p)
    };
    joined
        .components()
        .filter(|c| *c != Component::CurDir)
        .collect()
}

/// `results/rollouts.jsonl` → `results/rollouts_aggregate_metrics.json` (upstream's
/// `aggregate_metrics_path_for`).
fn aggregate_sibling(rollouts: &Path) -> PathBuf {
    let stem = rollouts
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    rollouts.with_file_name(format!("{stem}_aggregate_metrics.json"))
}

fn side(
    role: &'static str,
    index: usize,
    rollouts: &str,
    override_path: Option<&Path>,
    args: &CompareArgs,
) -> Result<RunFile> {
    let rollouts_path = absolute(Path::new(rollouts));
    let aggregate_path = match override_path {
        Some(p) => absolute(p),
        None => aggregate_sibling(&rollouts_path),
    };
    let shown = aggregate_path.display().to_string();
    let entries = if aggregate_path.exists() {
        let flag = if override_path.is_none() {
            "the aggregate metrics beside the rollouts"
        } else if role == "baseline" {
            "--baseline-agg-metrics"
        } else {
            "--candidates-agg-metrics"
        };
        let bytes = read_document(&aggregate_path, flag, DOCUMENT_CAP)?;
        let mut entries = gym_report::read_entries(&bytes, &shown).map_err(anyhow::Error::msg)?;
        if gym_report::complete_legacy_entries(&mut entries).map_err(anyhow::Error::msg)? {
            crate::note!(
                "Warning: Repeat-level metrics are missing in '{shown}'; calculating them from \
                 stored rollout summaries."
            );
        }
        entries
    } else if override_path.is_none() && rollouts_path.is_file() {
        let entries = super::compare_entries::from_rollouts(&rollouts_path, args)?;
        crate::note!(
            "compare: no '{shown}': the {role}'s aggregate metrics are computed from its rollouts"
        );
        entries
    } else {
        bail!(
            "Aggregate metrics not found: '{shown}', derived from '{rollouts}'. The run may have \
             been collected with --disable-aggregation: run `gym eval aggregate` first, \
             give the rollouts' materialized inputs beside them, or point at the metrics file with --baseline-agg-metrics / \
             --candidates-agg-metrics."
        )
    };
    Ok(RunFile {
        role,
        index,
        rollouts_path: rollouts_path.display().to_string(),
        aggregate_path: shown,
        entries,
    })
}

/// Reads both sides' entries (upstream's `load_agg_metrics_file`), with its checks on the
/// per-candidate lists.
pub fn load(args: &CompareArgs, baseline: &str, candidates: &[&str]) -> Result<GymCompare> {
    let n = candidates.len();
    for (name, len) in [
        ("--candidate-agents", args.candidate_agents.len()),
        (
            "--candidates-agg-metrics",
            args.candidates_agg_metrics.len(),
        ),
    ] {
        if len != 0 && len != n {
            return Err(crate::native::UsageError(format!(
                "{name} has {len} entries but {n} candidate run(s) were given. Give one entry \
                 per candidate, in the same order."
            ))
            .into());
        }
    }
    let baseline = side(
        "baseline",
        0,
        baseline,
        args.baseline_agg_metrics.as_deref(),
        args,
    )?;
    let candidates = candidates
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let over = args.candidates_agg_metrics.get(i).map(PathBuf::as_path);
            side("candidate", i, c, over, args)
        })
        .collect::<Result<_>>()?;
    Ok(GymCompare {
        baseline,
        candidates,
    })
}

/// UTC now (or `SOURCE_DATE_EPOCH`'s time, for reproducible reports) as Python's
/// `datetime.isoformat(timespec="seconds")` writes it.
fn generated_at() -> String {
    let secs = std::env::var("SOURCE_DATE_EPOCH")
        .ok()
        .and_then(|s| s.trim().parse::<i64>().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_secs() as i64)
        });
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // Howard Hinnant's civil-from-days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}+00:00",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// Python's `shlex.quote`.
fn shell_quote(s: &str) -> String {
    let safe = |c: char| c.is_ascii_alphanumeric() || "@%+=:,./-_".contains(c);
    if !s.is_empty() && s.chars().all(safe) {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\"'\"'"))
    }
}

/// The invocation, for the report's provenance (upstream's `invoked_command`).
fn invoked_command() -> String {
    let mut parts = vec!["gymscope".to_string()];
    parts.extend(super::invocation().into_iter().skip(1));
    parts
        .iter()
        .map(|p| shell_quote(p))
        .collect::<Vec<_>>()
        .join(" ")
}

impl GymCompare {
    /// What gymscope's own analysis reads per side: the rollouts when they are there, else the
    /// aggregate file (upstream never opens the rollouts).
    pub fn analysis_runs(&self, baseline: &str, candidates: &[&str]) -> (String, Vec<String>) {
        let pick = |given: &str, f: &RunFile| {
            if Path::new(given).exists() {
                given.to_string()
            } else {
                f.aggregate_path.clone()
            }
        };
        (
            pick(baseline, &self.baseline),
            candidates
                .iter()
                .zip(&self.candidates)
                .map(|(c, f)| pick(c, f))
                .collect(),
        )
    }

    /// Compares, writes the report files (with gymscope's analysis, when there is one, under
    /// `gymscope`) and prints upstream's tables and recap.
    pub fn write(self, args: &CompareArgs, ours: Option<(Value, String)>) -> Result<()> {
        let selection = Selection {
            agent: args.agent.clone(),
            baseline_agent: args.baseline_agent.clone(),
            candidate_agents: (!args.candidate_agents.is_empty())
                .then(|| args.candidate_agents.clone()),
        };
        let out_dir = match &args.output_dir {
            Some(d) => absolute(d),
            None => Path::new(
                &self
                    .candidates
                    .last()
                    .map_or(String::new(), |c| c.rollouts_path.clone()),
            )
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_default(),
        };
        let inputs: Vec<PathBuf> = std::iter::once(&self.baseline)
            .chain(&self.candidates)
            .flat_map(|f| {
                [
                    PathBuf::from(&f.rollouts_path),
                    PathBuf::from(&f.aggregate_path),
                ]
            })
            .collect();
        let result = gym_report::build(
            self.baseline,
            self.candidates,
            &selection,
            generated_at(),
            invoked_command(),
        )
        .map_err(anyhow::Error::msg)?;
        if out_dir.exists() && !out_dir.is_dir() {
            bail!(
                "--output-dir '{}' exists and is not a directory.",
                out_dir.display()
            );
        }
        let format = match args.report_format {
            ReportFormatArg::Md => ReportFormat::Md,
            ReportFormatArg::Json => ReportFormat::Json,
            ReportFormatArg::Both => ReportFormat::Both,
        };
        let mut files: Vec<(PathBuf, Vec<u8>)> = Vec::new();
        if format.markdown() {
            let extra = ours
                .as_ref()
                .map(|(_, md)| format!("## gymscope: paired analysis\n\n{}", md.trim_end()));
            let md = gym_report::render_markdown(&result, extra.as_deref());
            files.push((out_dir.join(gym_report::MARKDOWN_REPORT), md.into_bytes()));
        }
        if format.json() {
            let bytes = result.json_bytes(ours.as_ref().map(|(doc, _)| ("gymscope", doc)));
            files.push((out_dir.join(gym_report::JSON_REPORT), bytes));
        }
        // By identity against every file read (the materialized inputs beside a rollouts file
        // too), as every command checks its outputs.
        let read: Vec<PathBuf> = inputs
            .iter()
            .flat_map(|p| {
                [
                    p.clone(),
                    crate::names::beside(p, crate::names::materialized_inputs),
                ]
            })
            .collect();
        let read: Vec<Input> = read
            .iter()
            .map(|path| Input {
                path,
                flag: "a compared run",
            })
            .collect();
        let outs: Vec<(&Path, &str)> = files
            .iter()
            .map(|(p, _)| (p.as_path(), "--output-dir"))
            .collect();
        let cleared = clear_outputs(&read, &outs)?;
        std::fs::create_dir_all(&out_dir)
            .with_context(|| format!("Cannot write to --output-dir '{}'", out_dir.display()))?;
        let mut written = Vec::new();
        for (path, bytes) in files {
            let mut file = cleared.create(&path)?;
            file.write_all(&bytes)?;
            file.commit()?;
            written.push(path.display().to_string());
        }
        let mut lines = Vec::new();
        for (agent, rows) in gym_report::key_metric_tables(&result) {
            lines.push(format!("Key metrics — {agent}"));
            lines.extend(aligned(&gym_report::KEY_METRIC_HEADERS, &rows));
            lines.push(String::new());
        }
        lines.extend(gym_report::recap_lines(&result, &written));
        for w in &result.warnings {
            crate::note!("Warning: {w}");
        }
        let text = terminal_safe_str(&lines.join("\n")).into_owned();
        // The recap follows the analysis on stdout, unless stdout holds a document.
        if args.format == CompareFormat::Text {
            crate::say!("{text}");
        } else {
            crate::note!("{text}");
        }
        Ok(())
    }
}

/// A plain-text table: columns padded to their widest cell.
fn aligned(headers: &[&str], rows: &[Vec<String>]) -> Vec<String> {
    let width = |i: usize| {
        rows.iter()
            .map(|r| r[i].chars().count())
            .chain(std::iter::once(headers[i].chars().count()))
            .max()
            .unwrap_or(0)
    };
    let widths: Vec<usize> = (0..headers.len()).map(width).collect();
    let line = |cells: Vec<&str>| {
        cells
            .iter()
            .zip(&widths)
            .map(|(c, w)| format!("{c:<w$}"))
            .collect::<Vec<_>>()
            .join("  ")
            .trim_end()
            .to_string()
    };
    let mut out = vec![line(headers.to_vec())];
    out.extend(
        rows.iter()
            .map(|r| line(r.iter().map(String::as_str).collect())),
    );
    out
}
