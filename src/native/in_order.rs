//! The native face's driver of a [`Job`] on every core: this thread reads each file in chunks
//! and cuts them into batches of lines, one thread per core parses the batches, and the job
//! records the parts in file order, so its result and its first error are a one-thread read's
//! (`read::job`). A line over the limit is reported after the lines before it are recorded (one
//! of them may hold an earlier error). The profile (`run_read`), a query (`query_read`), rollout
//! health and a pivot build's second pass run on it; the app's pool runs the same jobs over byte
//! ranges (`read::in_order`), since its readers share no memory.

use super::parallel::OrderedPool;
use super::read::{for_each_chunk, ReadError};
use crate::read::batch::{self, LineBatch};
use crate::read::job::Job;
use crate::read::jsonl::LineSplitter;
use crate::record::RowKind;
use std::path::Path;

/// A file to read: its path, how messages name it, and which of the run's files it is.
#[derive(Clone, Copy)]
pub struct ReadFile<'a> {
    pub path: &'a Path,
    pub name: &'a str,
    pub kind: RowKind,
}

/// Reads `files` one after the other through `job`, lines over `max_line` bytes refused, each
/// batch parsed by one of `parsers` (a thread each). `on_chunk` is told of each chunk (its
/// file and bytes) before it is cut, and may end the read with an error (a progress bar, Ctrl-C).
pub fn read_in_order<J, P, E>(
    files: &[ReadFile<'_>],
    max_line: u64,
    job: &mut J,
    parsers: impl IntoIterator<Item = P>,
    on_chunk: impl FnMut(&ReadFile<'_>, usize) -> Result<(), E>,
) -> Result<(), E>
where
    J: Job,
    J::Part: Send,
    P: FnMut(LineBatch) -> J::Part + Send,
    E: From<ReadError> + From<J::Error>,
{
    read_stamped(files, max_line, job, |b| b, parsers, on_chunk)
}

/// [`read_in_order`], each batch first `stamp`ed on the reading thread, in file order: what a
/// parse needs of the lines before its batch (a pivot build numbers the source's rows there).
pub fn read_stamped<J, B, P, E>(
    files: &[ReadFile<'_>],
    max_line: u64,
    job: &mut J,
    mut stamp: impl FnMut(LineBatch) -> B,
    parsers: impl IntoIterator<Item = P>,
    mut on_chunk: impl FnMut(&ReadFile<'_>, usize) -> Result<(), E>,
) -> Result<(), E>
where
    J: Job,
    J::Part: Send,
    B: Send,
    P: FnMut(B) -> J::Part + Send,
    E: From<ReadError> + From<J::Error>,
{
    std::thread::scope(|scope| {
        let mut pool = OrderedPool::start(scope, parsers);
        let mut cut = Vec::new();
        for file in files {
            let mut splitter = LineSplitter::with_max_line_bytes(max_line);
            let mut pending = None;
            let mut over = None;
            for_each_chunk::<E>(file.path, file.name, |chunk| {
                on_chunk(file, chunk.len())?;
                let cut_to = batch::cut(&mut splitter, &mut pending, file.kind, chunk, &mut |b| {
                    cut.push(b);
                });
                for b in cut.drain(..) {
                    pool.send(stamp(b), &mut |part| record::<J, E>(job, part))?;
                }
                over = cut_to.err();
                Ok(over.is_none() && !job.is_stopped())
            })?;
            if let Some(too_long) = over {
                pool.finish(&mut |part| record::<J, E>(job, part))?;
                if !job.is_stopped() {
                    job.too_long(file.kind, too_long)?;
                }
                return Ok(());
            }
            if job.is_stopped() {
                break;
            }
            batch::flush_last(&mut splitter, &mut pending, file.kind, &mut |b| cut.push(b));
            for b in cut.drain(..) {
                pool.send(stamp(b), &mut |part| record::<J, E>(job, part))?;
            }
        }
        pool.finish(&mut |part| record::<J, E>(job, part))
    })
}

/// Records a part, unless the job has stopped (the parts still in the pool are then dropped).
fn record<J: Job, E: From<J::Error>>(job: &mut J, part: J::Part) -> Result<(), E> {
    if !job.is_stopped() {
        job.record(part, 0)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use gymscope_read::read::job::testing::{parse, Line, Lines};

    impl From<ReadError> for String {
        fn from(e: ReadError) -> String {
            e.to_string()
        }
    }

    /// Reads an inputs file `a` and a rollouts file `b` with three parsers of uneven speed
    /// (later batches often finish first); the batches are a line each.
    fn run(job: &mut Lines, a: &str, b: &str, max: u64) -> Result<(), String> {
        let dir = tempfile::tempdir().unwrap();
        let (pa, pb) = (dir.path().join("a"), dir.path().join("b"));
        std::fs::write(&pa, a).unwrap();
        std::fs::write(&pb, b).unwrap();
        let files = [
            ReadFile {
                path: &pa,
                name: "a",
                kind: RowKind::Input,
            },
            ReadFile {
                path: &pb,
                name: "b",
                kind: RowKind::Rollout,
            },
        ];
        // Uneven parsing: later batches often finish first.
        let parsers = (0..3u64).map(|w| {
            move |batch: LineBatch| -> Vec<Line> {
                let first = batch.lines().next().map_or(0, |(span, _)| span.line);
                let pause = (first + w) % 3 * 20;
                std::thread::sleep(std::time::Duration::from_millis(pause));
                parse(&batch)
            }
        });
        read_in_order(&files, max, job, parsers, |_, _| Ok::<_, String>(()))
    }

    #[test]
    fn every_file_is_recorded_in_order_whatever_each_parse_costs() {
        let mut job = Lines::default();
        // 20 MB of rollouts: several batches (`batch::BATCH_BYTES`) on three threads.
        let pad = " ".to_string() + &"x".repeat(1 << 16);
        let rollouts: String = (1..=300).map(|i| format!("r{i}{pad}\n")).collect();
        assert_eq!(run(&mut job, "a1\na2", &rollouts, 1 << 20), Ok(()));
        let got = job.texts();
        assert_eq!(got[..3], ["Input1:a1", "Input2:a2", "Rollout1:r1"]);
        let want: Vec<String> = (1..=300).map(|i| format!("Rollout{i}:r{i}")).collect();
        assert_eq!(got[2..], want);
    }

    #[test]
    fn a_line_over_the_limit_comes_after_an_error_before_it() {
        let mut job = Lines::default();
        let result = run(&mut job, "a\n", "r\n!bad\nlong line\n", 5);
        assert_eq!(result, Err("bad line 2".to_string()));
        let mut job = Lines::default();
        let result = run(&mut job, "a\n", "r\ns\nlong line\nt\n", 5);
        assert_eq!(result, Err("line 3 too long".to_string()));
        assert_eq!(job.texts(), ["Input1:a", "Rollout1:r", "Rollout2:s"]);
    }

    #[test]
    fn a_stopped_job_records_nothing_more() {
        let mut job = Lines {
            stop_after: Some(2),
            ..Lines::default()
        };
        assert_eq!(run(&mut job, "a\nb\nc\n", "!\nlong line\n", 5), Ok(()));
        assert_eq!(job.texts(), ["Input1:a", "Input2:b"]);
    }

    #[test]
    fn a_missing_file_is_named() {
        let mut job = Lines::default();
        let parsers = (0..2).map(|_| |_: LineBatch| Vec::new());
        let file = ReadFile {
            path: Path::new("/nonexistent/x"),
            name: "x.jsonl",
            kind: RowKind::Rollout,
        };
        let result = read_in_order(&[file], 100, &mut job, parsers, |_, _| Ok::<_, String>(()));
        assert!(result.unwrap_err().contains("'x.jsonl'"));
    }
}
