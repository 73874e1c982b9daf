//! The native face's one driver for a read on every core: this thread reads each file in chunks
//! and the job cuts them into batches, one thread per core parses the batches, and the job
//! records the results in file order, so its result and its first error are a one-thread
//! read's. A line over the limit is reported after the lines before it are recorded (one of them
//! may hold an earlier error). The profile (`run_read`), a query (`query_read`), rollout health
//! and a pivot build's second pass are such jobs; the app's pool has its own driver over byte
//! ranges (`read::in_order`), since its readers share no memory.

use super::parallel::OrderedPool;
use super::read::{for_each_chunk, ReadError};
use std::path::Path;

/// What a job does on the reading thread; its parsing is the `parsers` of [`read_in_order`].
pub trait InOrderJob {
    /// A batch of lines cut on the reading thread, parsed on another.
    type Batch: Send;
    /// A batch's parse, recorded on the reading thread in file order.
    type Parsed: Send;
    type Error: From<ReadError>;

    /// Called before each chunk of file `file` is cut: an error ends the read at once (Ctrl-C).
    fn start_chunk(&mut self, _file: usize) -> Result<(), Self::Error> {
        Ok(())
    }
    /// Cuts the next bytes of file `file` into `out`. `Ok(false)` ends the read quietly and
    /// `Err` with that error, each after the batches out so far are recorded.
    fn cut(
        &mut self,
        file: usize,
        chunk: &[u8],
        out: &mut Vec<Self::Batch>,
    ) -> Result<bool, Self::Error>;
    /// File `file` is over: its last line and partial batch into `out`.
    fn cut_end(&mut self, file: usize, out: &mut Vec<Self::Batch>);
    /// Records a parsed batch; an error ends the read at once.
    fn record(&mut self, parsed: Self::Parsed) -> Result<(), Self::Error>;
    /// A chunk of `bytes` was cut (a progress bar).
    fn chunk_done(&mut self, _bytes: usize) {}
}

/// Reads `files` (path, and how messages name it) one after the other through `job`, a batch
/// parsed by each of `parsers` (one thread each) in turn.
pub fn read_in_order<J, P>(
    files: &[(&Path, &str)],
    job: &mut J,
    parsers: impl IntoIterator<Item = P>,
) -> Result<(), J::Error>
where
    J: InOrderJob,
    P: FnMut(J::Batch) -> J::Parsed + Send,
{
    std::thread::scope(|scope| {
        let mut pool = OrderedPool::start(scope, parsers);
        let mut cut = Vec::new();
        let mut ended: Option<Result<(), J::Error>> = None;
        for (i, (path, name)) in files.iter().enumerate() {
            for_each_chunk::<J::Error>(path, name, |chunk| {
                job.start_chunk(i)?;
                let go_on = job.cut(i, chunk, &mut cut);
                for batch in cut.drain(..) {
                    pool.send(batch, &mut |parsed| job.record(parsed))?;
                }
                match go_on {
                    Ok(true) => {
                        job.chunk_done(chunk.len());
                        Ok(true)
                    }
                    Ok(false) => {
                        ended = Some(Ok(()));
                        Ok(false)
                    }
                    Err(e) => {
                        ended = Some(Err(e));
                        Ok(false)
                    }
                }
            })?;
            if ended.is_some() {
                break;
            }
            job.cut_end(i, &mut cut);
            for batch in cut.drain(..) {
                pool.send(batch, &mut |parsed| job.record(parsed))?;
            }
        }
        pool.finish(&mut |parsed| job.record(parsed))?;
        ended.unwrap_or(Ok(()))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Cuts each chunk into its bytes (one batch a byte, tagged with its file), fails the cut at
    /// byte `cut_fails_at` of the second file and the recording at `record_fails_at`.
    struct Bytes {
        recorded: Vec<(usize, u8)>,
        cut_fails_at: Option<usize>,
        record_fails_at: Option<(usize, u8)>,
        cut: usize,
    }

    impl InOrderJob for Bytes {
        type Batch = (usize, u8);
        type Parsed = (usize, u8);
        type Error = String;

        fn cut(
            &mut self,
            file: usize,
            chunk: &[u8],
            out: &mut Vec<(usize, u8)>,
        ) -> Result<bool, String> {
            for b in chunk {
                if file == 1 && Some(self.cut) == self.cut_fails_at {
                    return Err(format!("cut failed at {}", self.cut));
                }
                out.push((file, *b));
                self.cut += usize::from(file == 1);
            }
            Ok(true)
        }

        fn cut_end(&mut self, file: usize, out: &mut Vec<(usize, u8)>) {
            out.push((file, b'$'));
        }

        fn record(&mut self, parsed: (usize, u8)) -> Result<(), String> {
            if Some(parsed) == self.record_fails_at {
                return Err(format!("record failed at {parsed:?}"));
            }
            self.recorded.push(parsed);
            Ok(())
        }
    }

    impl From<ReadError> for String {
        fn from(e: ReadError) -> String {
            e.to_string()
        }
    }

    fn run(
        cut_fails_at: Option<usize>,
        record_fails_at: Option<(usize, u8)>,
    ) -> (Vec<(usize, u8)>, Result<(), String>) {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a"), dir.path().join("b"));
        std::fs::write(&a, "abc").unwrap();
        std::fs::write(&b, "0123456789").unwrap();
        let mut job = Bytes {
            recorded: Vec::new(),
            cut_fails_at,
            record_fails_at,
            cut: 0,
        };
        // Uneven parsing: later batches often finish first.
        let parsers = (0..3).map(|w| {
            move |(file, byte): (usize, u8)| {
                std::thread::sleep(std::time::Duration::from_micros(
                    u64::from(byte % 5 + w) * 200,
                ));
                (file, byte.to_ascii_uppercase())
            }
        });
        let result = read_in_order(&[(&a, "a"), (&b, "b")], &mut job, parsers);
        (job.recorded, result)
    }

    fn recorded(text: &str) -> Vec<(usize, u8)> {
        let (a, b) = text.split_once('|').unwrap();
        a.bytes()
            .map(|c| (0, c))
            .chain(b.bytes().map(|c| (1, c)))
            .collect()
    }

    #[test]
    fn every_file_is_recorded_in_order_whatever_each_parse_costs() {
        let (got, result) = run(None, None);
        assert_eq!(result, Ok(()));
        assert_eq!(got, recorded("ABC$|0123456789$"));
    }

    #[test]
    fn a_cut_error_comes_after_what_was_cut_before_it() {
        let (got, result) = run(Some(4), None);
        assert_eq!(result, Err("cut failed at 4".to_string()));
        assert_eq!(got, recorded("ABC$|0123"));
    }

    #[test]
    fn a_recording_error_ends_the_read_and_wins_over_a_later_cut_error() {
        let (got, result) = run(Some(8), Some((1, b'2')));
        assert_eq!(result, Err("record failed at (1, 50)".to_string()));
        assert_eq!(got, recorded("ABC$|01"));
    }

    #[test]
    fn a_missing_file_is_named() {
        let mut job = Bytes {
            recorded: Vec::new(),
            cut_fails_at: None,
            record_fails_at: None,
            cut: 0,
        };
        let parsers = (0..2).map(|_| |x: (usize, u8)| x);
        let result = read_in_order(
            &[(Path::new("/nonexistent/x"), "x.jsonl")],
            &mut job,
            parsers,
        );
        assert!(result.unwrap_err().contains("'x.jsonl'"));
    }
}
