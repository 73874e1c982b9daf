//! Long calls run on a thread of their own while the caller waits in short steps, checking
//! Python's signals between them: Ctrl-C raises `KeyboardInterrupt` within a step (issue 57: a
//! 1 GB read used to finish first), and the call's work is told to stop as on SIGINT
//! (`gymscope::native::signals::stop_with`; the reads stop between batches).

use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

/// How often the waiting caller checks for signals: well within the 0.5 s a user waits.
const STEP: Duration = Duration::from_millis(50);

/// Interrupted calls that may be writing files: joined before the interpreter exits
/// ([`finish_stopped`]), so a temporary file is always removed by its command.
static STOPPED: Mutex<Vec<JoinHandle<()>>> = Mutex::new(Vec::new());

/// Whether an interrupted call's work must end before the process does.
#[derive(Clone, Copy, PartialEq)]
pub enum OnStop {
    /// It only reads: nothing is left behind when the process ends.
    Abandon,
    /// It may write files: [`finish_stopped`] waits for it.
    Finish,
}

/// Runs `work` on its own thread, the GIL released; a signal's exception (`KeyboardInterrupt`)
/// is raised as soon as Python's handler raises it, and `work` is told to stop.
pub fn interruptible<T: Send + 'static>(
    py: Python<'_>,
    on_stop: OnStop,
    work: impl FnOnce() -> T + Send + 'static,
) -> PyResult<T> {
    let stop = Arc::new(AtomicBool::new(false));
    let (tx, mut rx) = mpsc::sync_channel(1);
    let flag = Arc::clone(&stop);
    let handle = std::thread::Builder::new()
        .name("gymscope-call".into())
        .spawn(move || {
            gymscope::native::signals::stop_with(flag);
            let _ = tx.send(work());
        })
        .map_err(|e| PyRuntimeError::new_err(format!("could not start a thread: {e}")))?;
    loop {
        let (back, got) = py.detach(move || {
            let got = rx.recv_timeout(STEP);
            (rx, got)
        });
        rx = back;
        match got {
            Ok(out) => {
                let _ = handle.join();
                return Ok(out);
            }
            Err(RecvTimeoutError::Timeout) => {
                if let Err(e) = py.check_signals() {
                    stop.store(true, Ordering::SeqCst);
                    if on_stop == OnStop::Finish {
                        if let Ok(mut stopped) = STOPPED.lock() {
                            stopped.push(handle);
                        }
                    }
                    return Err(e);
                }
            }
            Err(RecvTimeoutError::Disconnected) => {
                let why = match handle.join() {
                    Err(panic) => panic
                        .downcast_ref::<&str>()
                        .map(|s| (*s).to_string())
                        .or_else(|| panic.downcast_ref::<String>().cloned())
                        .unwrap_or_default(),
                    Ok(()) => String::new(),
                };
                return Err(PyRuntimeError::new_err(format!(
                    "gymscope's call ended without a result (a bug; please report it): {why}"
                )));
            }
        }
    }
}

/// Waits for the interrupted calls that may be writing (registered with `atexit`).
#[pyfunction]
pub fn finish_stopped(py: Python<'_>) {
    let stopped = STOPPED
        .lock()
        .map(|mut s| std::mem::take(&mut *s))
        .unwrap_or_default();
    py.detach(move || {
        for handle in stopped {
            let _ = handle.join();
        }
    });
}
