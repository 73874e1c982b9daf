//! Writes a [`Profile`] as upstream's three files, `*_reward_profiling.jsonl`,
//! `*_agent_metrics.json` and `*_repeat_level_metrics.json` (`repeats`), and its printed
//! summary. Key order follows upstream; numbers are formatted as orjson formats them.

mod repeats;
mod task_rows;

pub use repeats::write_repeat_level_metrics;
pub use task_rows::write_task_rows;
use task_rows::KeyTexts;

use crate::gym::keys;
use crate::json;
use crate::profile::{AgentKey, Coverage, Profile};
use crate::read::jsonl::LineSpan;
use std::io::{self, Read, Seek, SeekFrom, Write};

/// Gives back a line of the materialized-inputs file by its span, so `sample` rows are read
/// again at write time instead of being held in memory.
pub trait LineSource {
    fn read_span(&mut self, span: LineSpan) -> io::Result<Vec<u8>>;
}

/// A whole file already in memory.
impl LineSource for &[u8] {
    fn read_span(&mut self, span: LineSpan) -> io::Result<Vec<u8>> {
        let start = usize::try_from(span.offset).map_err(io::Error::other)?;
        self.get(start..start + span.len as usize)
            .map(<[u8]>::to_vec)
            .ok_or_else(|| {
                io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "line beyond the end of the data",
                )
            })
    }
}

/// Lines fetched ahead of time by offset (the web app reads them from the file asynchronously).
impl LineSource for std::collections::HashMap<u64, Vec<u8>> {
    fn read_span(&mut self, span: LineSpan) -> io::Result<Vec<u8>> {
        self.get(&span.offset).cloned().ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::NotFound,
                format!("line {} was not fetched", span.line),
            )
        })
    }
}

/// Any seekable reader, such as a `std::fs::File`.
pub struct SeekSource<R>(pub R);

impl<R: Read + Seek> LineSource for SeekSource<R> {
    fn read_span(&mut self, span: LineSpan) -> io::Result<Vec<u8>> {
        self.0.seek(SeekFrom::Start(span.offset))?;
        let mut buf = vec![0; span.len as usize];
        self.0.read_exact(&mut buf)?;
        Ok(buf)
    }
}

/// Failure while writing: the output failed, or an input line changed since it was read.
#[derive(Debug, thiserror::Error)]
pub enum RenderError {
    #[error(
        "'{file}' line {line} changed while profiling (it no longer parses: {message}); run again"
    )]
    InputChanged {
        file: String,
        line: u64,
        message: String,
    },
    #[error(transparent)]
    Io(#[from] io::Error),
}

/// Writes `*_reward_profiling.jsonl`: one line per task with at least one matched rollout.
pub fn write_reward_profiling<W: Write>(
    p: &Profile,
    inputs: &mut dyn LineSource,
    inputs_file: &str,
    w: &mut W,
) -> Result<(), RenderError> {
    write_task_rows(p, 0..p.tasks.len(), inputs, inputs_file, w)
}

/// Writes a task's `sample`: its materialized row without the two index keys, as orjson writes
/// it. A row already written that way (compact, serde_json's escapes and number forms, as Gym and
/// gymscope write them) is copied member by member; any other is parsed and written again.
pub fn write_sample(
    inputs: &mut dyn LineSource,
    inputs_file: &str,
    span: LineSpan,
    out: &mut Vec<u8>,
) -> Result<(), RenderError> {
    let bytes = inputs.read_span(span)?;
    if copy_canonical_sample(&bytes, out) {
        return Ok(());
    }
    out.clear();
    let sample = read_sample(inputs, inputs_file, span)?;
    json::to_writer_orjson(out, &sample)?;
    Ok(())
}

/// Copies the members of the canonical object `line` except the index keys; `false` (with `out`
/// partly written) when `line` is not canonical.
fn copy_canonical_sample(line: &[u8], out: &mut Vec<u8>) -> bool {
    use crate::skim;
    if simdutf8::basic::from_utf8(line).is_err()
        || skim::has_control_bytes(line)
        || skim::canonical_value_end(line, 0) != Some(line.len())
        || line.first() != Some(&b'{')
    {
        return false;
    }
    // The line is a valid compact object: walk its members.
    out.push(b'{');
    let mut i = 1;
    let mut first = true;
    while line.get(i) == Some(&b'"') {
        let Some(key_end) = skim::string_end(line, i) else {
            return false;
        };
        let Some(end) = skim::value_end(line, key_end + 1) else {
            return false;
        };
        let key = &line[i + 1..key_end - 1];
        if key != keys::TASK_INDEX.as_bytes() && key != keys::ROLLOUT_INDEX.as_bytes() {
            if !first {
                out.push(b',');
            }
            first = false;
            out.extend_from_slice(&line[i..end]);
        }
        i = end + 1; // past the `,` or the closing `}`
    }
    out.push(b'}');
    true
}

/// The `sample` of a task: its materialized row without the two index keys, re-serialized.
pub fn read_sample(
    inputs: &mut dyn LineSource,
    inputs_file: &str,
    span: LineSpan,
) -> Result<serde_json::Value, RenderError> {
    let bytes = inputs.read_span(span)?;
    let changed = |e: serde_json::Error| RenderError::InputChanged {
        file: inputs_file.to_string(),
        line: span.line,
        message: e.to_string(),
    };
    let mut value: serde_json::Value = serde_json::from_slice(&bytes).map_err(changed)?;
    if has_negative_zero(&value) {
        if let Some(fixed) = json::rewrite_negative_zero_ints(&bytes) {
            value = serde_json::from_slice(&fixed).map_err(changed)?;
        }
    }
    if let Some(obj) = value.as_object_mut() {
        obj.shift_remove(keys::TASK_INDEX);
        obj.shift_remove(keys::ROLLOUT_INDEX);
    }
    Ok(value)
}

fn has_negative_zero(v: &serde_json::Value) -> bool {
    use serde_json::Value;
    match v {
        Value::Number(n) => {
            n.as_f64().is_some_and(|f| f == 0.0 && f.is_sign_negative()) && n.is_f64()
        }
        Value::Array(a) => a.iter().any(has_negative_zero),
        Value::Object(o) => o.values().any(has_negative_zero),
        _ => false,
    }
}

/// Writes `*_agent_metrics.json`: a JSON list, no trailing newline. Each agent row: its
/// statistics, `agent_ref`, the `*_across_repeats/*` keys and `coverage/*` (v0.7.0); then the
/// coverage-only entries.
pub fn write_agent_metrics<W: Write>(w: &mut W, p: &Profile) -> io::Result<()> {
    let mut texts = KeyTexts::new(p);
    w.write_all(b"[")?;
    for (i, agent) in p.agents.iter().enumerate() {
        if i > 0 {
            w.write_all(b",")?;
        }
        w.write_all(b"{")?;
        let wrote = texts.write_stats(w, &agent.columns, true)?;
        if wrote {
            w.write_all(b",")?;
        }
        w.write_all(b"\"agent_ref\":{\"name\":")?;
        write_agent_name(w, &agent.agent)?;
        w.write_all(b"}")?;
        repeats::write_across(w, p, &agent.across)?;
        if let Some(c) = &agent.coverage {
            w.write_all(b",")?;
            write_coverage(w, c)?;
        }
        w.write_all(b"}")?;
    }
    for (i, (name, c)) in p.coverage_only.iter().enumerate() {
        if i > 0 || !p.agents.is_empty() {
            w.write_all(b",")?;
        }
        w.write_all(b"{\"agent_ref\":{\"name\":")?;
        write_agent_name(w, name)?;
        w.write_all(b"},")?;
        write_coverage(w, c)?;
        w.write_all(b"}")?;
    }
    w.write_all(b"]")
}

fn write_coverage<W: Write>(w: &mut W, c: &Coverage) -> io::Result<()> {
    write!(
        w,
        "\"coverage/measured_rollouts\":{},\"coverage/masked_rollouts\":{},\"coverage/measured_tasks\":{},\"coverage/fully_masked_tasks\":{}",
        c.measured_rollouts, c.masked_rollouts, c.measured_tasks, c.fully_masked_tasks
    )
}

pub(crate) fn write_agent_name<W: Write>(w: &mut W, agent: &AgentKey) -> io::Result<()> {
    if agent.numeric {
        w.write_all(agent.name.as_bytes())
    } else {
        json::write_str(w, &agent.name)
    }
}

/// The lines upstream prints after writing the files (v0.7.0 `cli/eval.py` `reward_profile`).
pub fn summary_text(
    p: &Profile,
    reward_profiling_path: &str,
    agent_metrics_path: &str,
    repeat_level_metrics_path: &str,
) -> String {
    let s = &p.summary;
    let [completion, input_rows] = s.lines();
    format!(
        "Profiling outputs:\n{completion}\n{input_rows}\n\
         Masked from quality metrics: {} rollout rows (kept in completion accounting above).\n\
         Reward profiling outputs: {reward_profiling_path}\n\
         Agent-level metrics: {agent_metrics_path}\n\
         Repeat-level metrics: {repeat_level_metrics_path}\n",
        p.masked.len()
    )
}
