//! Work spread over every core with results taken back in the order it was handed out: the
//! profile's line batches (`profile::batch`) and its output rows.
//!
//! Jobs go to the workers round-robin and come back in the same round-robin order, so nothing is
//! reordered; at most [`IN_FLIGHT`] jobs per worker are out at once, which bounds memory and means a
//! worker never blocks on sending its result.

use std::sync::mpsc::{sync_channel, Receiver, SyncSender};

/// Jobs handed to one worker and not yet taken back.
const IN_FLIGHT: usize = 2;

/// The number of worker threads: one per core (the calling thread mostly waits on them).
pub fn workers() -> usize {
    std::thread::available_parallelism().map_or(1, std::num::NonZero::get)
}

/// Hands jobs to worker threads and takes their results back in order.
pub struct OrderedPool<In, Out> {
    to_workers: Vec<SyncSender<In>>,
    from_workers: Vec<Receiver<Out>>,
    sent: usize,
    received: usize,
}

impl<In: Send, Out: Send> OrderedPool<In, Out> {
    /// Starts one thread in `scope` per worker function; they end when the pool is dropped.
    pub fn start<'scope, W>(
        scope: &'scope std::thread::Scope<'scope, '_>,
        workers: impl IntoIterator<Item = W>,
    ) -> Self
    where
        In: 'scope,
        Out: 'scope,
        W: FnMut(In) -> Out + Send + 'scope,
    {
        let mut to_workers = Vec::new();
        let mut from_workers = Vec::new();
        for mut work in workers {
            let (tx, rx) = sync_channel::<In>(IN_FLIGHT);
            let (result_tx, result_rx) = sync_channel::<Out>(IN_FLIGHT);
            scope.spawn(move || {
                for job in rx {
                    if result_tx.send(work(job)).is_err() {
                        break; // the pool is gone: an error ended the work
                    }
                }
            });
            to_workers.push(tx);
            from_workers.push(result_rx);
        }
        assert!(!to_workers.is_empty(), "a pool needs a worker");
        OrderedPool {
            to_workers,
            from_workers,
            sent: 0,
            received: 0,
        }
    }

    /// Sends `job` to the next worker, first taking back (and passing to `done`, in order)
    /// whatever must come back to keep the in-flight bound.
    pub fn send<E>(
        &mut self,
        job: In,
        done: &mut impl FnMut(Out) -> Result<(), E>,
    ) -> Result<(), E> {
        while self.sent - self.received >= IN_FLIGHT * self.to_workers.len() {
            self.take_one(done)?;
        }
        let worker = self.sent % self.to_workers.len();
        self.sent += 1;
        // A worker only stops early when its thread panicked; `take_one` then says so.
        let _ = self.to_workers[worker].send(job);
        Ok(())
    }

    /// Takes back every result still out, in order.
    pub fn finish<E>(mut self, done: &mut impl FnMut(Out) -> Result<(), E>) -> Result<(), E> {
        while self.received < self.sent {
            self.take_one(done)?;
        }
        Ok(())
    }

    fn take_one<E>(&mut self, done: &mut impl FnMut(Out) -> Result<(), E>) -> Result<(), E> {
        let worker = self.received % self.from_workers.len();
        self.received += 1;
        // Only a panic in a worker closes its channel early: a bug, which the scope's join
        // reports again; carrying on would lose results.
        let out = self.from_workers[worker]
            .recv()
            .expect("a worker thread stopped");
        done(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_come_back_in_order_whatever_each_job_costs() {
        let mut seen = Vec::new();
        std::thread::scope(|scope| {
            let workers = (0..3).map(|w| {
                move |job: u64| {
                    // Uneven work: later jobs often finish first.
                    std::thread::sleep(std::time::Duration::from_micros((job * 7 + w) % 5 * 100));
                    job * 2
                }
            });
            let mut pool = OrderedPool::start(scope, workers);
            let mut done = |out: u64| {
                seen.push(out);
                Ok::<_, ()>(())
            };
            for job in 0..200 {
                pool.send(job, &mut done).unwrap();
            }
            pool.finish(&mut done).unwrap();
        });
        assert_eq!(seen, (0..200).map(|j| j * 2).collect::<Vec<_>>());
    }

    #[test]
    fn an_error_stops_the_work_without_hanging() {
        let result = std::thread::scope(|scope| {
            let mut pool = OrderedPool::start(scope, (0..2).map(|_| |job: u32| job));
            let mut done = |out: u32| if out == 5 { Err(out) } else { Ok(()) };
            for job in 0..1000 {
                pool.send(job, &mut done)?;
            }
            pool.finish(&mut done)
        });
        assert_eq!(result, Err(5));
    }
}
