//! `gymscope watch PATH|GLOB…`: a run followed while it is collected. Finds the shards, reads
//! what each file gained every `--interval` seconds ([`crate::native::follow`]), and prints the
//! core's snapshot ([`crate::watch`]): redrawn in place on a terminal, plain text or JSON lines
//! elsewhere. Ends by itself when every shard is complete.

use super::watch_args::{WatchArgs, WatchFormat};
use crate::names;
use crate::native::files::{entries, glob_files, kind, note_read, Kind};
use crate::native::{follow, out, signals, UsageError};
use crate::watch::{text, FileKind, Snapshot, Watch};
use anyhow::Result;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

/// Without a terminal, a text snapshot is printed at most this often (seconds): logs stay short.
const PLAIN_EVERY: f64 = 30.0;

pub fn run(args: &WatchArgs) -> Result<ExitCode> {
    let rollouts = shards(&args.paths)?;
    let mut watch = Watch::new(args.max_line_bytes).with_stall_after(args.stall_after * 60.0);
    let mut files = Vec::new();
    for r in &rollouts {
        let sibling = |rule: fn(&str) -> String| names::beside(r, rule);
        let paths = [
            r.clone(),
            sibling(names::materialized_inputs),
            sibling(names::failures),
        ];
        for p in &paths {
            note_read(p, "PATH");
        }
        let shown = paths.clone().map(|p| p.display().to_string());
        let [a, b, c] = shown;
        watch.add_shard(a, b, c);
        files.push((paths, sibling(names::aggregate_metrics)));
    }
    let _handled = signals::handled_elsewhere();
    let redraw = args.format == WatchFormat::Text && !args.once && out::stdout_is_terminal();
    let mut printer = Printer {
        format: args.format,
        redraw,
        drawn: 0,
        printed_at: None,
        printed_finished: None,
    };
    let mut buf = Vec::new();
    let snapshot = loop {
        for (i, (paths, aggregate)) in files.iter().enumerate() {
            for file in FileKind::ALL {
                follow::refresh(&mut watch, i, file, &paths[file as usize], &mut buf)?;
            }
            if follow::writer_done(&paths[0], aggregate) {
                watch.declare_done(i);
            }
        }
        let now = follow::now();
        watch.tick(now);
        let complete = watch.complete();
        if complete || args.once {
            if complete {
                watch.finish(now);
            }
            let s = watch.snapshot(now);
            printer.print(&s, true);
            break s;
        }
        printer.print(&watch.snapshot(now), false);
        if out::stdout_gone() {
            return Ok(ExitCode::SUCCESS);
        }
        if let Some(sig) = pause(args.interval) {
            return Ok(crate::native::signals::exit_code(sig));
        }
    };
    if let Some(bad) = snapshot.unreadable.first() {
        crate::note!(
            "Error: {} unreadable row(s); the first: '{}' line {} column {}: {}",
            snapshot.unreadable_rows,
            bad.file,
            bad.line,
            bad.column,
            bad.message
        );
        return Ok(ExitCode::FAILURE);
    }
    Ok(ExitCode::SUCCESS)
}

/// Sleeps `seconds`, waking early for a signal (returned).
fn pause(seconds: f64) -> Option<i32> {
    let until = Instant::now() + Duration::from_secs_f64(seconds);
    while Instant::now() < until {
        if let Some(sig) = signals::caught() {
            return Some(sig);
        }
        std::thread::sleep(Duration::from_millis(50).min(until - Instant::now()));
    }
    signals::caught()
}

struct Printer {
    format: WatchFormat,
    redraw: bool,
    /// Lines of the snapshot on screen (redrawn over).
    drawn: usize,
    printed_at: Option<Instant>,
    printed_finished: Option<u64>,
}

impl Printer {
    fn print(&mut self, s: &Snapshot, last: bool) {
        if self.format == WatchFormat::Json {
            match serde_json::to_string(s) {
                Ok(line) => crate::say!("{line}"),
                Err(e) => crate::note!("Error: the snapshot could not be written: {e}"),
            }
            return;
        }
        let body = text(s);
        if self.redraw {
            let safe = out::terminal_safe_str(&body);
            let up = if self.drawn > 0 {
                format!("\x1b[{}F\x1b[J", self.drawn)
            } else {
                String::new()
            };
            self.drawn = safe.lines().count();
            out::stdout_styled_line(&format!("{up}{}", safe.trim_end_matches('\n')));
            return;
        }
        // Plain text (a log): the first snapshot, then at most one every PLAIN_EVERY seconds
        // when the counts moved, and the last.
        let finished = s.totals.done + s.totals.failed;
        let due = self.printed_at.is_none_or(|t| {
            t.elapsed().as_secs_f64() >= PLAIN_EVERY && self.printed_finished != Some(finished)
        });
        if last || due {
            crate::say!("{body}");
            self.printed_at = Some(Instant::now());
            self.printed_finished = Some(finished);
        }
    }
}

/// The rollouts file of every shard the paths name, in order, each once.
fn shards(paths: &[PathBuf]) -> Result<Vec<PathBuf>> {
    let mut found: Vec<PathBuf> = Vec::new();
    for p in paths {
        match kind(p)? {
            Kind::File => found.push(rollouts_of(p).unwrap_or_else(|| p.clone())),
            Kind::Folder => {
                let before = found.len();
                found.extend(entries(p)?.iter().filter_map(|e| shard_file(e)));
                if found.len() == before {
                    return Err(UsageError(format!(
                        "the folder '{}' holds no run: no X.jsonl with an X_materialized_inputs.jsonl beside it",
                        p.display()
                    ))
                    .into());
                }
            }
            Kind::Missing if is_glob(p) => {
                let pattern = p.to_string_lossy();
                let matched = glob_files(&pattern, "PATH")?;
                let before = found.len();
                found.extend(matched.iter().filter_map(|m| shard_file(m)));
                if found.len() == before {
                    return Err(UsageError(format!(
                        "No shards matched `{pattern}` (a shard is X.jsonl with an X_materialized_inputs.jsonl beside it)"
                    ))
                    .into());
                }
            }
            Kind::Missing => {
                return Err(UsageError(format!("'{}' does not exist", p.display())).into())
            }
            Kind::Fifo | Kind::Device | Kind::Socket => {
                return Err(UsageError(format!(
                    "'{}' is not a regular file: watch follows files that a collection appends to",
                    p.display()
                ))
                .into())
            }
        }
    }
    let mut seen = std::collections::HashSet::new();
    found.retain(|p| seen.insert(std::path::absolute(p).unwrap_or_else(|_| p.clone())));
    Ok(found)
}

fn is_glob(p: &Path) -> bool {
    p.to_string_lossy().contains(['*', '?', '['])
}

/// `X_materialized_inputs.jsonl` → `X.jsonl`.
fn rollouts_of(p: &Path) -> Option<PathBuf> {
    let name = names::file_name_of(p);
    names::rollouts_of_inputs(&name).map(|r| names::sibling(p, r))
}

/// A folder's or glob's file as a shard: a materialized-inputs file names its rollouts file; a
/// file with one beside it is a rollouts file; anything else is not a shard.
fn shard_file(p: &Path) -> Option<PathBuf> {
    if kind(p).ok()? != Kind::File {
        return None;
    }
    rollouts_of(p).or_else(|| {
        let inputs = names::beside(p, names::materialized_inputs);
        (kind(&inputs).ok()? == Kind::File).then(|| p.to_path_buf())
    })
}
