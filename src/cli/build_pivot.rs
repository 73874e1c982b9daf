//! `gymscope build-pivot`: streams the source twice through the core builder and writes the
//! pivot rows, the audit, the metrics, the markdown report and the Gym config, each atomically.

use super::args::{BuildPivotArgs, MultiCallArg, ReasoningArg, SelfcheckArg, SourceFormatArg};
use crate::names;
use crate::native::atomic::AtomicFile;
use crate::native::files::{clear_outputs, Cleared};
use crate::native::in_order::{read_stamped, ReadFile};
use crate::native::inputs::{check_input, Input};
use crate::native::parallel;
use crate::native::read::for_each_chunk;
use crate::native::UsageError;
use crate::pivot_build::config::{self, ConfigOptions};
use crate::pivot_build::pooled::{BatchStarts, ConvertedBatch, RangeConverter, RangeStart};
use crate::pivot_build::{tools, BuildOptions, Paths, PivotBuilder, SourceFormat};
use crate::read::batch::LineBatch;
use crate::read::job::Job;
use crate::read::jsonl::{LineTooLong, DEFAULT_MAX_LINE_BYTES};
use crate::record::RowKind;
use crate::reward_group::RewardGroup;
use anyhow::{bail, Context, Result};

/// The largest `--tools` file read: tool definitions are kilobytes.
const TOOLS_MAX_BYTES: u64 = 64 << 20;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

fn options(args: &BuildPivotArgs) -> Result<BuildOptions> {
    let mut o = BuildOptions::new(&args.agent_ref);
    o.source_format = match args.source_format {
        SourceFormatArg::Auto => None,
        SourceFormatArg::Responses => Some(SourceFormat::Responses),
        SourceFormatArg::Chat => Some(SourceFormat::Chat),
        SourceFormatArg::Conversational => Some(SourceFormat::Conversational),
        SourceFormatArg::Generic => Some(SourceFormat::Generic),
    };
    o.min_reward = args.min_reward;
    o.reward_field.clone_from(&args.reward_field);
    o.group_by.clone_from(&args.group_by);
    o.source_groups = args
        .source_groups
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| match RewardGroup::parse(s) {
            Some(g @ (RewardGroup::Mixed | RewardGroup::AllSuccess | RewardGroup::AllFailure)) => {
                Ok(g)
            }
            _ => Err(UsageError(format!(
                "--source-groups: '{s}' is not one of mixed, all_success, all_failure"
            ))),
        })
        .collect::<Result<_, _>>()?;
    o.include_input_turns = args.include_input_turns;
    o.drop_reasoning = args.reasoning == ReasoningArg::Drop;
    o.tool_calls_only = args.tool_calls_only;
    o.multi_call_batch = args.multi_call == MultiCallArg::Batch;
    o.check_tool_names = !args.no_check_tool_names;
    o.doom_loop_threshold = args.doom_loop_threshold;
    o.skip_tool_errors = args.skip_tool_errors;
    o.limit = args.limit;
    o.stamp_task_index = args.stamp_task_index;
    o.word_count_similarity_threshold = args.word_count_similarity_threshold;
    o.selfcheck_skip = args.on_selfcheck_fail == SelfcheckArg::Skip;
    if let Some(path) = &args.tools {
        // A whole document, bounded (`/dev/urandom` as --tools is not read forever).
        let bytes = crate::native::files::read_document(path, "--tools", TOOLS_MAX_BYTES)?;
        // From bytes: serde_json names the line and column of invalid UTF-8 as of bad JSON.
        let value: serde_json::Value = serde_json::from_slice(&bytes)
            .with_context(|| format!("'{}' (--tools): invalid JSON", path.display()))?;
        let Some(list) = value.as_array() else {
            bail!(
                "'{}': --tools must be a JSON array of tools",
                path.display()
            );
        };
        o.extra_tools = tools::normalize(list.clone()).0;
    }
    Ok(o)
}

/// Reads a file in chunks through the one native reader.
fn stream(path: &Path, each: impl FnMut(&[u8]) -> Result<bool>) -> Result<()> {
    for_each_chunk::<anyhow::Error>(path, &path.display().to_string(), each)
}

/// Refuses (exit 2, before anything is written) an output that is the input under any name:
/// compared by identity (device and inode), as every command does.
pub fn refuse_overwrite(input: &Path, outputs: &[&Path]) -> Result<Cleared> {
    let outputs: Vec<(&Path, &str)> = outputs.iter().map(|&p| (p, "output")).collect();
    refuse_overwrite_all(&[(input, "input")], &outputs)
}

/// Every output checked against every input and the other outputs (exit 2, before anything is
/// written): the outputs it clears are the only ones the command can create.
pub(super) fn refuse_overwrite_all(
    inputs: &[(&Path, &str)],
    outputs: &[(&Path, &str)],
) -> Result<Cleared> {
    let inputs: Vec<Input> = inputs
        .iter()
        .map(|&(path, flag)| Input { path, flag })
        .collect();
    Ok(clear_outputs(&inputs, outputs)?)
}

pub fn run(args: &BuildPivotArgs) -> Result<ExitCode> {
    // Two passes over the input: a pipe would hang the second (exit 2 at once instead).
    check_input(Input::new(&args.input, "--input"), true)?;
    let options = options(args)?;
    let out_name = names::file_name_of(&args.output);
    let beside = |name: fn(&str) -> String| names::sibling(&args.output, name(&out_name));
    let skipped_path = beside(names::pivot_skipped);
    let metrics_path = beside(names::pivot_metrics);
    let info_path = beside(names::pivot_info);
    let config_path = args
        .config_out
        .clone()
        .unwrap_or_else(|| beside(names::pivot_gym_config));
    let mut inputs = vec![(args.input.as_path(), "--input")];
    if let Some(tools) = &args.tools {
        inputs.push((tools.as_path(), "--tools"));
    }
    let cleared = refuse_overwrite_all(
        &inputs,
        &[
            (&args.output, "--output"),
            (&skipped_path, "the skipped file"),
            (&metrics_path, "the metrics file"),
            (&info_path, "the info file"),
            (&config_path, "--config-out"),
        ],
    )?;
    let train_path = if args.relative_paths {
        args.output.display().to_string()
    } else {
        absolute(&args.output)?.display().to_string()
    };
    let config_options = ConfigOptions {
        agent_ref: args.agent_ref.clone(),
        train_path,
        validation_path: args.validation_path.clone(),
        license: args.license.clone(),
        description: args
            .description
            .clone()
            .unwrap_or_else(|| config::default_description(&out_name)),
        comparator: options.comparator(),
    };
    // Every check there is of a flag's value: a usage error (exit 2).
    config::validate(&config_options).map_err(UsageError)?;

    let input_name = args.input.display().to_string();
    let mut builder = PivotBuilder::new(&input_name, options);
    stream(&args.input, |chunk| Ok(builder.scan(chunk)))?;
    builder.start_conversion()?;
    let rows = cleared.create(&args.output)?;
    let audit = cleared.create(&skipped_path)?;
    // Writing is about as costly as converting (the output is several times the input): a
    // writer thread overlaps the two.
    let (send, receive) = std::sync::mpsc::sync_channel::<(Vec<u8>, Vec<u8>)>(2);
    let spare = Spare::default();
    let writer = {
        let spare = spare.clone();
        std::thread::spawn(move || -> Result<(AtomicFile, AtomicFile)> {
            let (mut rows, mut audit) = (rows, audit);
            for (r, a) in receive {
                rows.write_all(&r)?;
                audit.write_all(&a)?;
                spare.put(r);
            }
            Ok((rows, audit))
        })
    };
    // A long trajectory's rows go out while it is converted (memory follows one row, not the
    // trajectory's output).
    let rows_out = send.clone();
    builder.set_row_sink(Box::new(move |rows| {
        let _ = rows_out.send((rows, Vec::new()));
    }));
    let converted = convert_on_every_core(&args.input, &mut builder, &spare, |rows, audit| {
        send.send((rows, audit)).is_ok()
    });
    let converted = converted.and_then(|()| Ok(builder.finish()?));
    if converted.is_ok() {
        let _ = send.send((builder.take_rows(), builder.take_audit()));
    }
    drop(send);
    drop(builder); // its row sink holds the channel open
    let written = writer
        .join()
        .map_err(|_| anyhow::anyhow!("the writer thread panicked"))?;
    let metrics = converted?;
    let (rows, audit) = written?;

    let paths = Paths {
        input: input_name,
        output: args.output.display().to_string(),
        config: config_path.display().to_string(),
        skipped: skipped_path.display().to_string(),
        agent_ref: args.agent_ref.clone(),
    };
    // Every file is written in full before any is renamed into place, and the dataset first:
    // a full disk or a signal on the way never leaves new metrics beside an old dataset.
    let prepare = |path: &PathBuf, text: &str| -> Result<AtomicFile> {
        let mut f = cleared.create(path)?;
        f.write_all(text.as_bytes())?;
        Ok(f)
    };
    let metrics_file = prepare(&metrics_path, &metrics.json_text(&paths))?;
    let info_file = prepare(&info_path, &metrics.markdown(&paths))?;
    let stdout = &mut crate::native::out::Stdout;
    if metrics.pivot_rows_written == 0 {
        drop(rows); // no dataset: nothing to train on, so no pivot file and no config
        audit.commit()?;
        metrics_file.commit()?;
        info_file.commit()?;
        let mut msg = format!(
            "no pivot written: {} source rows, {} decision points; top skip reasons:\n",
            metrics.source_rows_seen, metrics.decision_points
        );
        for (reason, count) in metrics.top_skips(5) {
            msg.push_str(&format!("  {}: {count}\n", reason.as_str()));
        }
        msg.push_str(&format!(
            "details: {}\nmetrics: {}",
            skipped_path.display(),
            metrics_path.display()
        ));
        crate::note!("{msg}");
        return Ok(ExitCode::FAILURE);
    }
    let yaml = config::render(&config_options);
    check_yaml(&yaml, &args.agent_ref)?;
    let config_file = prepare(&config_path, &yaml)?;
    rows.commit()?;
    audit.commit()?;
    metrics_file.commit()?;
    info_file.commit()?;
    config_file.commit()?;
    writeln!(stdout, "{}", metrics.headline())?;
    for (label, path) in [
        ("pivot rows", &args.output),
        ("skipped", &skipped_path),
        ("metrics", &metrics_path),
        ("report", &info_path),
        ("gym config", &config_path),
    ] {
        writeln!(stdout, "{label}: {}", path.display())?;
    }
    Ok(ExitCode::SUCCESS)
}

/// Written row buffers, refilled by the converters instead of fresh memory for every batch (the
/// output is several GB: fresh pages cost more system time than the copying they hold).
#[derive(Clone, Default)]
struct Spare(std::sync::Arc<std::sync::Mutex<Vec<Vec<u8>>>>);

impl Spare {
    /// A few are enough: one per converter and one for the builder.
    const KEEP: usize = 8;

    fn put(&self, buffer: Vec<u8>) {
        if let Ok(mut list) = self.0.lock() {
            if list.len() < Self::KEEP {
                list.push(buffer);
            }
        }
    }

    fn take(&self) -> Option<Vec<u8>> {
        self.0.lock().ok()?.pop()
    }
}

/// The second pass: lines cut on this thread (each batch's first row counted there), converted
/// on every core, taken back in file order by the builder (`PivotBuilder` as a `Job`, as the
/// app's pool takes its ranges, so the output is the one-thread output), and each batch's rows
/// and audit handed to `write`, which returns false when the writer failed.
fn convert_on_every_core(
    input: &Path,
    builder: &mut PivotBuilder,
    spare: &Spare,
    write: impl FnMut(Vec<u8>, Vec<u8>) -> bool,
) -> Result<()> {
    let converter = builder.converter();
    let workers = (0..parallel::workers()).map(|_| {
        let mut converter = converter.clone();
        move |(batch, start): (LineBatch, RangeStart)| {
            if let Some(buffer) = spare.take() {
                converter.give_back(buffer);
            }
            RangeConverter::new(&mut converter, start).lines(&batch)
        }
    });
    let name = input.display().to_string();
    let mut job = SecondPass {
        builder,
        spare,
        write,
        write_failed: false,
    };
    let file = ReadFile {
        path: input,
        name: &name,
        kind: RowKind::Rollout,
    };
    let mut starts = BatchStarts::default();
    let stamp = |batch: LineBatch| {
        let start = starts.next(&batch);
        (batch, start)
    };
    let max_line = DEFAULT_MAX_LINE_BYTES;
    read_stamped(&[file], max_line, &mut job, stamp, workers, |_, _| Ok(()))
}

/// The second pass as a job: the builder takes each converted batch back, whose output goes to
/// the writer; a line over the limit is the builder's error, which `finish` returns.
struct SecondPass<'a, W> {
    builder: &'a mut PivotBuilder,
    spare: &'a Spare,
    write: W,
    write_failed: bool,
}

impl<W: FnMut(Vec<u8>, Vec<u8>) -> bool> Job for SecondPass<'_, W> {
    type Part = ConvertedBatch;
    type Error = anyhow::Error;

    fn record(&mut self, part: ConvertedBatch, before: u64) -> Result<()> {
        if let Some(buffer) = self.spare.take() {
            self.builder.give_back(buffer);
        }
        self.builder.record(part, before)?;
        let rows = self.builder.take_rows();
        self.write_failed = !(self.write)(rows, self.builder.take_audit());
        Ok(())
    }

    fn too_long(&mut self, _: RowKind, t: LineTooLong) -> Result<()> {
        let e = self.builder.line_too_long(t);
        self.builder.keep_error(e);
        Ok(())
    }

    fn read_failed(&mut self, kind: RowKind, cause: String) -> anyhow::Error {
        self.builder.read_failed(kind, cause).into()
    }

    /// `--limit` reached, the build failed (`finish` says why) or the writer failed.
    fn is_stopped(&self) -> bool {
        self.write_failed || self.builder.is_stopped()
    }
}

fn absolute(path: &Path) -> Result<PathBuf> {
    Ok(if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir()?.join(path)
    })
}

/// The config parses and its agent block is the rows' `agent_ref.name`.
fn check_yaml(yaml: &str, agent_ref: &str) -> Result<()> {
    let value: serde_yaml::Value =
        serde_yaml::from_str(yaml).context("the generated Gym config does not parse")?;
    let agent = value
        .get(agent_ref)
        .and_then(|a| a.get("responses_api_agents"))
        .and_then(|a| a.get("tool_simulation_agent"));
    if agent.is_none() {
        bail!("the generated Gym config has no agent block named '{agent_ref}'");
    }
    Ok(())
}
