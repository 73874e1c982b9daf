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
