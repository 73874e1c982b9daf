//! A read's recorder (`read::in_order::InOrder` of a job's `Job`) with what follows it, behind
//! one type for every job the pool reads.

use super::super::super::protocol::{Failure, ReadStats};
use super::super::io::now_ms;
use crate::read::in_order::{InOrder, Part};
use crate::read::job::Job;
use serde::de::DeserializeOwned;
use serde::Serialize;

/// Where a read's recording is.
pub struct State {
    /// Every range is recorded.
    pub done: bool,
    /// The range being recorded.
    pub recording: usize,
    /// Bytes and lines of the ranges recorded.
    pub bytes: u64,
    pub lines: u64,
}

/// A read's recorder with what follows it, behind one type for every job.
pub trait Recording {
    /// Takes a part; returns the ms spent decoding it (the rest is recording).
    fn accept(&mut self, index: usize, bytes: &[u8]) -> Result<f64, Failure>;
    fn state(&self) -> State;
    fn finish(self: Box<Self>, read: ReadStats);
}

pub struct Then<R: Job> {
    pub order: InOrder<R>,
    pub then: Box<dyn FnOnce(R, ReadStats)>,
}

impl<R> Recording for Then<R>
where
    R: Job,
    R::Part: Serialize + DeserializeOwned,
    R::Error: Into<Failure>,
{
    fn accept(&mut self, index: usize, bytes: &[u8]) -> Result<f64, Failure> {
        let t0 = now_ms();
        let part = Part::<R::Part>::from_bytes(bytes)?;
        let decode_ms = now_ms() - t0;
        self.order.accept(index, part).map_err(Into::into)?;
        Ok(decode_ms)
    }

    fn state(&self) -> State {
        let (bytes, lines) = self.order.done();
        State {
            done: self.order.is_done(),
            recording: self.order.recording(),
            bytes,
            lines,
        }
    }

    fn finish(self: Box<Self>, read: ReadStats) {
        (self.then)(self.order.into_job(), read);
    }
}
