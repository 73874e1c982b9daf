//! `gymscope compare BASELINE CANDIDATE…`: recognizes each run by content (a run's rollouts
//! file with its materialized inputs beside it, `INPUTS:ROLLOUTS`, or a
//! `*_reward_profiling.jsonl`), reduces it to the core's `RunTasks` (one profile in memory at a
//! time), pairs every candidate with the baseline and judges it, prints text, JSON or Markdown,
//! optionally writes the HTML report of the first candidate atomically, and exits 3 with
//! `--fail-if-worse` when a candidate's mean reward is worse.

use super::args::{CompareArgs, CompareFormat, PairByArg};
use super::profile::profile_run;
use crate::compare::aggregate::{read_aggregate, AggregateFile};
use crate::compare::multi::{self, RunLabel};
use crate::compare::unpaired::unpaired;
use crate::compare::{self, CompareOptions, PairBy, ProfilingFileReader, RunTasks};
use crate::inspect::detect::{classify, FileKind};
use crate::names;
use crate::native::files::{self, Cleared};
use crate::native::inputs;
use crate::native::read::for_each_chunk;
use crate::native::UsageError;
use crate::render::SeekSource;
use crate::report::{ReportMeta, Source};
use anyhow::{bail, Context, Result};
use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// One side, as found on disk.
enum Input {
    Run {
        inputs: PathBuf,
        rollouts: PathBuf,
    },
    Profiling(PathBuf),
    /// A `*_aggregate_metrics.json` (or `*_agent_metrics.json`, the same shape).
    Aggregate(PathBuf),
}

impl Input {
    /// The file the report's conversations are read back from.
    fn lines_file(&self) -> &Path {
        match self {
            Input::Run { rollouts, .. } => rollouts,
            Input::Profiling(p) | Input::Aggregate(p) => p,
        }
    }
    fn files(&self) -> Vec<&Path> {
        match self {
            Input::Run { inputs, rollouts } => vec![inputs, rollouts],
            Input::Profiling(p) | Input::Aggregate(p) => vec![p],
        }
    }
}

/// The baseline and the candidates, from `BASELINE CANDIDATE…` or `--baseline X --candidates
/// Y Z` (with `--baseline`, positional runs are candidates too).
fn runs(args: &CompareArgs) -> Result<(&str, Vec<&str>)> {
    let mut rest = args.runs.iter().map(String::as_str);
    let baseline = match &args.baseline {
        Some(b) => b.as_str(),
        None => rest.next().ok_or_else(|| {
            UsageError(
                "compare needs a baseline and at least one candidate: \
                 `gymscope compare BASELINE CANDIDATE…` or `--baseline X --candidates Y Z`"
                    .into(),
            )
        })?,
    };
    let candidates: Vec<&str> = args
        .candidates
        .iter()
        .map(String::as_str)
        .chain(rest)
        .collect();
    if candidates.is_empty() {
        return Err(UsageError(format!(
            "compare needs at least one candidate to compare with the baseline '{baseline}'"
        ))
        .into());
    }
    // An empty name (`--candidates ''`, `a,,b`) is the command line's mistake, not a missing file.
    if std::iter::once(baseline)
        .chain(candidates.iter().copied())
        .any(|r| r.trim().is_empty())
    {
        return Err(UsageError(
            "compare: a run is named by an empty string (check --baseline, --candidates and commas)"
                .into(),
        )
        .into());
    }
    Ok((baseline, candidates))
}

pub fn run(args: &CompareArgs) -> Result<ExitCode> {
    let options = CompareOptions {
        pair_by: match args.pair_by {
            PairByArg::Content => PairBy::Content,
            PairByArg::Index => PairBy::Index,
        },
        pass_threshold: args.pass_threshold,
        seed: args.seed,
    };
    if !options.pass_threshold.is_finite() {
        bail!(compare::CompareError::BadThreshold(options.pass_threshold));
    }
    let (baseline, candidates) = runs(args)?;
    // `--baseline` is `gym eval compare`'s spelling: its report files are written too.
    let gym = match &args.baseline {
        Some(_) => Some(super::compare_gym::load(args, baseline, &candidates)?),
        None => None,
    };
    let analysed_runs = match &gym {
        Some(g) => g.analysis_runs(baseline, &candidates),
        None => (
            baseline.to_string(),
            candidates.iter().map(ToString::to_string).collect(),
        ),
    };
    let judged = judge(args, options, &analysed_runs.0, &analysed_runs.1);
    let Some(gym) = gym else {
        return match judged? {
            Judged::Paired(j) => present(args, *j),
            Judged::Unpaired(code) => Ok(code),
        };
    };
    // Upstream's report is written whatever gymscope's own analysis makes of the runs.
    match judged {
        Ok(Judged::Paired(j)) => {
            let ours = (
                compare::multi_to_json(&j.all),
                compare::markdown::format(&j.all),
            );
            let code = present(args, *j)?;
            gym.write(args, Some(ours))?;
            Ok(code)
        }
        Ok(Judged::Unpaired(code)) => {
            gym.write(args, None)?;
            Ok(code)
        }
        Err(e) => {
            crate::note!("Warning: gymscope's paired analysis is left out of the report: {e:#}");
            gym.write(args, None)?;
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// The runs judged: everything the outputs are made from.
struct Paired {
    input_a: Input,
    inputs: Vec<Input>,
    a: RunTasks,
    first: Option<RunTasks>,
    all: multi::MultiComparison,
    /// `--report`, checked against every input.
    report: Option<Cleared>,
}

enum Judged {
    Paired(Box<Paired>),
    /// Aggregate files without task indices: compared as independent samples, already printed.
    Unpaired(ExitCode),
}

/// Reads every run and judges each candidate against the baseline.
fn judge(
    args: &CompareArgs,
    options: CompareOptions,
    baseline: &str,
    candidates: &[String],
) -> Result<Judged> {
    // Errors name the run as the text does: A the baseline, then B, C, … the candidates.
    let input_a = resolve(baseline, "A")?;
    let inputs: Vec<Input> = candidates
        .iter()
        .enumerate()
        .map(|(i, arg)| resolve(arg, &side_name(i + 1)))
        .collect::<Result<_>>()?;
    let report = match &args.report {
        Some(out) => {
            let all: Vec<&Input> = std::iter::once(&input_a).chain(&inputs).collect();
            Some(refuse_overwrite(out, &all)?)
        }
        None => None,
    };
    // Labels from full paths, so `run1/rollouts.jsonl` and `run2/rollouts.jsonl` are told
    // apart however they were spelled on the command line.
    let paths: Vec<String> = std::iter::once(&input_a)
        .chain(&inputs)
        .map(|i| full_path(i.lines_file()))
        .collect();
    let labels = multi::labels(&paths.iter().map(String::as_str).collect::<Vec<_>>());
    let label = |i: usize, tasks: usize| RunLabel {
        label: labels[i].clone(),
        path: paths[i].clone(),
        tasks,
    };
    let aggregates: Vec<Option<AggregateFile>> = std::iter::once(&input_a)
        .chain(&inputs)
        .zip(&labels)
        .map(|(input, name)| match input {
            Input::Aggregate(p) => read_aggregate_file(p, name).map(Some),
            _ => Ok(None),
        })
        .collect::<Result<_>>()?;
    let mut options = options;
    if aggregates.iter().any(Option::is_some) {
        if args.report.is_some() {
            return Err(UsageError(
                "--report shows rollouts side by side: give rollouts or *_reward_profiling.jsonl \
                 files, not aggregate metrics"
                    .into(),
            )
            .into());
        }
        if aggregates.iter().flatten().any(|f| !f.indexed()) {
            return unpaired_run(args, &input_a, &inputs, &aggregates, label).map(Judged::Unpaired);
        }
        // An aggregate carries no task content: its tasks pair by index (said in a warning).
        options.pair_by = PairBy::Index;
    }
    let a = load(&input_a, aggregates[0].as_ref(), &labels[0], args)?;
    let mut judged = Vec::with_capacity(inputs.len());
    // The first candidate's tasks are kept for the report; the others are dropped once judged.
    let mut first: Option<RunTasks> = None;
    for (i, input) in inputs.iter().enumerate() {
        let b = load(input, aggregates[i + 1].as_ref(), &labels[i + 1], args)?;
        let mut cmp = compare::compare(&a, &b, options)?;
        if aggregates[0].is_some() || aggregates[i + 1].is_some() {
            cmp.warnings.push(
                "paired by _ng_task_index, not by content: an aggregate-metrics file carries no \
                 task content"
                    .into(),
            );
        }
        let run = label(i + 1, b.tasks.len());
        judged.push(multi::candidate(&a, &b, run, cmp, args.alpha, args.effect));
        if first.is_none() {
            first = Some(b);
        }
    }
    let all = multi::judge(label(0, a.tasks.len()), judged, args.alpha, args.effect);
    Ok(Judged::Paired(Box::new(Paired {
        input_a,
        inputs,
        a,
        first,
        all,
        report,
    })))
}

/// Prints the judged runs, writes the HTML report when asked, and says whether a candidate is
/// worse (`--fail-if-worse`).
fn present(args: &CompareArgs, judged: Paired) -> Result<ExitCode> {
    let Paired {
        input_a,
        inputs,
        a,
        first,
        all,
        report,
    } = judged;
    match args.format {
        CompareFormat::Text => crate::say_part!("{}", compare::text::format_multi(&all)),
        CompareFormat::Json => {
            crate::say!(
                "{}",
                serde_json::to_string_pretty(&compare::multi_to_json(&all))?
            );
        }
        CompareFormat::Md => crate::say_part!("{}", compare::markdown::format(&all)),
    }
    if let (Some(out), Some(cleared), Some(b), Some(first_candidate)) =
        (&args.report, &report, &first, all.candidates.first())
    {
        let cmp = &first_candidate.comparison;
        let input_b = &inputs[0];
        let meta = ReportMeta {
            title: args
                .title
                .clone()
                .unwrap_or_else(|| compare::report::default_title(cmp)),
            sources: [&input_a, input_b]
                .iter()
                .flat_map(|i| i.files())
                .map(source)
                .collect::<Result<_>>()?,
            date: args.date.clone(),
        };
        let open = |p: &Path| -> Result<SeekSource<File>> {
            Ok(SeekSource(
                File::open(p).with_context(|| format!("opening '{}'", p.display()))?,
            ))
        };
        let (la, lb) = (input_a.lines_file(), input_b.lines_file());
        let conversations = compare::conversations::read(
            cmp,
            (&a, &la.display().to_string(), &mut open(la)?),
            (b, &lb.display().to_string(), &mut open(lb)?),
            args.conversations,
        )?;
        let html = compare::report::render_multi(&all, &meta, &conversations)
            .context("no candidate to report on")?;
        super::report::write_html(cleared, out, &html)?;
        crate::note!(
            "Report: {} ({:.1} MB, {} paired tasks)",
            out.display(),
            html.len() as f64 / 1e6,
            cmp.tasks.len()
        );
    }
    if args.fail_if_worse && all.any_worse() {
        let worse: Vec<&str> = all
            .candidates
            .iter()
            .filter(|c| {
                c.metrics
                    .iter()
                    .any(|m| m.metric == "reward" && m.verdict == compare::verdict::Verdict::Down)
            })
            .map(|c| c.run.label.as_str())
            .collect();
        crate::note!(
            "compare: mean reward worse than the baseline for {} (--fail-if-worse)",
            worse.join(", ")
        );
        return Ok(ExitCode::from(3));
    }
    Ok(ExitCode::SUCCESS)
}

/// Reads a `*_aggregate_metrics.json` whole (one entry per agent and task: small).
fn read_aggregate_file(path: &Path, name: &str) -> Result<AggregateFile> {
    let bytes = files::read_document(path, name, files::DOCUMENT_CAP)?;
    Ok(read_aggregate(&bytes, &path.display().to_string(), name)?)
}

/// Runs that cannot be paired (an aggregate without task indices): per-task mean rewards as
/// independent samples.
fn unpaired_run(
    args: &CompareArgs,
    input_a: &Input,
    inputs: &[Input],
    aggregates: &[Option<AggregateFile>],
    label: impl Fn(usize, usize) -> RunLabel,
) -> Result<ExitCode> {
    let means = |i: usize, input: &Input| -> Result<(RunLabel, Vec<f64>)> {
        let (tasks, means) = if let Some(f) = &aggregates[i] {
            (f.tasks.len(), f.task_means())
        } else {
            let run = load(input, None, &label(i, 0).label, args)?;
            let means = run.tasks.iter().filter_map(|t| t.mean_reward).collect();
            (run.tasks.len(), means)
        };
        Ok((label(i, tasks), means))
    };
    let (base, base_means) = means(0, input_a)?;
    let candidates = inputs
        .iter()
        .enumerate()
        .map(|(i, input)| means(i + 1, input))
        .collect::<Result<Vec<_>>>()?;
    let result = unpaired(base, &base_means, candidates, args.alpha);
    match args.format {
        CompareFormat::Text => crate::say_part!("{}", result.text()),
        CompareFormat::Json => {
            crate::say!("{}", serde_json::to_string_pretty(&result.to_json())?);
        }
        CompareFormat::Md => crate::say_part!("{}", result.markdown()),
    }
    Ok(if args.fail_if_worse && result.any_worse() {
        crate::note!("compare: mean reward worse than the baseline (--fail-if-worse)");
        ExitCode::from(3)
    } else {
        ExitCode::SUCCESS
    })
}

/// `B`, `C`, … for the candidates (`run 27` past `Z`).
fn side_name(i: usize) -> String {
    match u8::try_from(i) {
        Ok(k) if k < 26 => char::from(b'A' + k).to_string(),
        _ => format!("run {}", i + 1),
    }
}

/// A run's path as shown in the JSON and used for the labels: absolute when it can be made so.
fn full_path(p: &Path) -> String {
    p.canonicalize()
        .unwrap_or_else(|_| p.to_path_buf())
        .display()
        .to_string()
}

fn not_found(path: &Path, side: &str) -> anyhow::Error {
    anyhow::anyhow!(
        "Input file not found: '{}' ({side}). Check the path is spelled correctly.",
        path.display()
    )
}

/// The first bytes of a file, enough for `inspect::detect` to tell what it is.
fn head(path: &Path) -> Result<Vec<u8>> {
    let mut buf = Vec::with_capacity(64 << 10);
    File::open(path)
        .with_context(|| format!("opening '{}'", path.display()))?
        .take(64 << 10)
        .read_to_end(&mut buf)
        .with_context(|| format!("reading '{}'", path.display()))?;
    Ok(buf)
}

/// What a file is, said after its name: "is empty", "looks like a rollouts file", …
fn described(path: &Path, kind: FileKind) -> String {
    match kind {
        FileKind::Unknown if std::fs::metadata(path).is_ok_and(|m| m.len() == 0) => {
            "is empty".to_string()
        }
        FileKind::Unknown => "is none of the files gymscope reads".into(),
        kind => format!("looks like {}", kind.label()),
    }
}

/// What a file is, by its content. A pipe is refused first (exit 2): its head would be consumed
/// here, and a run's files are read twice.
fn kind(path: &Path) -> Result<FileKind> {
    inputs::check_input(
        inputs::Input {
            path,
            flag: "input",
        },
        true,
    )?;
    Ok(classify(&head(path)?, &names::file_name_of(path)))
}

/// Which files a command-line argument names, by their content.
fn resolve(arg: &str, side: &str) -> Result<Input> {
    let whole = Path::new(arg);
    if !whole.exists() {
        if let Some((x, y)) = arg.split_once(':') {
            let (x, y) = (PathBuf::from(x), PathBuf::from(y));
            for p in [&x, &y] {
                if !p.exists() {
                    return Err(not_found(p, side));
                }
            }
            return match (kind(&x)?, kind(&y)?) {
                (FileKind::MaterializedInputs, FileKind::Rollouts) => Ok(Input::Run {
                    inputs: x,
                    rollouts: y,
                }),
                // Given the other way round: the contents say which is which.
                (FileKind::Rollouts, FileKind::MaterializedInputs) => Ok(Input::Run {
                    inputs: y,
                    rollouts: x,
                }),
                (kx, ky) => bail!(
                    "{side} '{arg}': expected INPUTS:ROLLOUTS, but '{}' {} and '{}' {}",
                    x.display(),
                    described(&x, kx),
                    y.display(),
                    described(&y, ky)
                ),
            };
        }
        return Err(not_found(whole, side));
    }
    let path = whole.to_path_buf();
    let name = names::file_name_of(&path);
    match kind(&path)? {
        FileKind::RewardProfiling => Ok(Input::Profiling(path)),
        FileKind::AgentMetrics => Ok(Input::Aggregate(path)),
        FileKind::Rollouts => {
            let inputs = names::beside(&path, names::materialized_inputs);
            if !inputs.exists() {
                bail!(
                    "{side} '{}' is a rollouts file, but its materialized inputs '{}' are not \
                     next to it: give both as INPUTS:ROLLOUTS",
                    path.display(),
                    inputs.display()
                );
            }
            Ok(Input::Run {
                inputs,
                rollouts: path,
            })
        }
        FileKind::MaterializedInputs => match names::rollouts_of_inputs(&name) {
            Some(rollouts) if names::sibling(&path, &rollouts).exists() => Ok(Input::Run {
                rollouts: names::sibling(&path, rollouts),
                inputs: path,
            }),
            _ => bail!(
                "{side} '{}' holds materialized inputs; give the rollouts file (or INPUTS:ROLLOUTS)",
                path.display()
            ),
        },
        other => {
            bail!(
                "{side} '{}' is not a run or a reward profile (it {}); give a rollouts \
                 file, INPUTS:ROLLOUTS, a *_reward_profiling.jsonl or a *_aggregate_metrics.json",
                path.display(),
                described(&path, other)
            )
        }
    }
}

/// Reduces one side to the core's per-task summary; a run's profile is dropped right after.
fn load(
    input: &Input,
    aggregate: Option<&AggregateFile>,
    name: &str,
    args: &CompareArgs,
) -> Result<RunTasks> {
    if let Some(file) = aggregate {
        return Ok(file.to_run_tasks());
    }
    match input {
        Input::Aggregate(path) => {
            let file = read_aggregate_file(path, name)?;
            Ok(file.to_run_tasks())
        }
        Input::Profiling(path) => {
            let file = path.display().to_string();
            let mut reader = ProfilingFileReader::new(&file, name);
            for_each_chunk::<anyhow::Error>(path, &file, |c| {
                reader.push(c)?;
                Ok(true)
            })?;
            Ok(reader.finish()?)
        }
        Input::Run { inputs, rollouts } => {
            let inputs_name = inputs.display().to_string();
            let profile = profile_run(
                inputs,
                rollouts,
                args.allow_partial_rollouts,
                args.max_line_bytes,
            )?;
            let mut samples =
                SeekSource(File::open(inputs).with_context(|| format!("opening '{inputs_name}'"))?);
            Ok(RunTasks::from_profile(
                &profile,
                &mut samples,
                &inputs_name,
                name,
            )?)
        }
    }
}

/// The report must not replace one of the files it is made from.
/// Refuses (exit 2, before anything is written) a `--report` that is one of the inputs, by
/// identity as every command does.
fn refuse_overwrite(out: &Path, inputs: &[&Input]) -> Result<Cleared> {
    let files: Vec<inputs::Input> = inputs
        .iter()
        .flat_map(|i| i.files())
        .map(|path| inputs::Input {
            path,
            flag: "input",
        })
        .collect();
    Ok(files::clear_outputs(&files, &[(out, "--report")])?)
}

fn source(path: &Path) -> Result<Source> {
    let meta = std::fs::metadata(path).with_context(|| format!("reading '{}'", path.display()))?;
    Ok(Source {
        name: names::file_name_of(path),
        bytes: meta.len(),
    })
}
