//! Parses line batches on every core while the calling thread reads, cuts and records them in
//! order (see `profile::batch`): the profile's read natively.
//!
//! Batches go to the workers round-robin and come back in the same round-robin order, so no
//! reordering is needed; at most [`IN_FLIGHT`] batches per worker are out at once, which bounds
//! memory and means a worker never blocks on sending its result.

use crate::profile::{parse_batch, LineBatch, ParsedBatch};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};

/// Batches handed to one worker and not yet taken back.
const IN_FLIGHT: usize = 2;

/// The number of parsing threads: one per core (the reading thread mostly waits on them).
pub fn workers() -> usize {
    std::thread::available_parallelism().map_or(1, std::num::NonZero::get)
}

/// Hands batches to parsing threads and takes their results back in order.
pub struct BatchPool<'scope> {
    to_workers: Vec<SyncSender<LineBatch>>,
    from_workers: Vec<Receiver<ParsedBatch>>,
    sent: usize,
    received: usize,
    _scope: std::marker::PhantomData<&'scope ()>,
}

impl<'scope> BatchPool<'scope> {
    /// Starts `workers` threads in `scope`; they end when the pool is dropped.
    pub fn start<'env>(scope: &'scope std::thread::Scope<'scope, 'env>, workers: usize) -> Self {
        let mut to_workers = Vec::new();
        let mut from_workers = Vec::new();
        for _ in 0..workers.max(1) {
            let (tx, rx) = sync_channel::<LineBatch>(IN_FLIGHT);
            let (result_tx, result_rx) = sync_channel::<ParsedBatch>(IN_FLIGHT);
            scope.spawn(move || {
                for batch in rx {
                    if result_tx.send(parse_batch(&batch)).is_err() {
                        break; // the pool is gone: an error ended the read
                    }
                }
            });
            to_workers.push(tx);
            from_workers.push(result_rx);
        }
        BatchPool {
            to_workers,
            from_workers,
            sent: 0,
            received: 0,
            _scope: std::marker::PhantomData,
        }
    }

    /// Sends `batch` to the next worker, first taking back (and passing to `done`, in order)
    /// whatever must come back to keep the in-flight bound.
    pub fn send<E>(
        &mut self,
        batch: LineBatch,
        done: &mut impl FnMut(ParsedBatch) -> Result<(), E>,
    ) -> Result<(), E> {
        while self.sent - self.received >= IN_FLIGHT * self.to_workers.len() {
            self.take_one(done)?;
        }
        let worker = self.sent % self.to_workers.len();
        self.sent += 1;
        // A worker only stops early when its thread panicked; its batch is then lost and
        // `take_one` reports it.
        let _ = self.to_workers[worker].send(batch);
        Ok(())
    }

    /// Takes back every batch still out, in order.
    pub fn finish<E>(
        mut self,
        done: &mut impl FnMut(ParsedBatch) -> Result<(), E>,
    ) -> Result<(), E> {
        while self.received < self.sent {
            self.take_one(done)?;
        }
        Ok(())
    }

    fn take_one<E>(
        &mut self,
        done: &mut impl FnMut(ParsedBatch) -> Result<(), E>,
    ) -> Result<(), E> {
        let worker = self.received % self.from_workers.len();
        self.received += 1;
        // Only a panic in `parse_batch` closes the channel early: a bug, which the scope's join
        // reports again; carrying on would lose rows.
        let parsed = self.from_workers[worker]
            .recv()
            .expect("a parsing thread stopped");
        done(parsed)
    }
}
