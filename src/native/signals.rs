//! Temporary files are removed when a signal ends the process while they are being written
//! (Ctrl-C during a multi-GB profile used to leave hundreds of MB of `.NAME.PID.tmp` behind).
//!
//! A signal handler may only do async-signal-safe work, so the temporary paths live in a fixed
//! table of atomic pointers to C strings: the handler `unlink`s each one, then, unless a command
//! handles the signal itself (`collect`'s graceful stop), restores the default action and raises
//! the signal again, so the process ends as it would have without the handler.

#![allow(unsafe_code)] // a signal handler over raw C strings (SAFETY at each block)

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicPtr, Ordering};
use std::sync::Once;

const SLOTS: usize = 64;
const SIGNALS: [libc::c_int; 3] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP];

static TEMPS: [AtomicPtr<libc::c_char>; SLOTS] =
    [const { AtomicPtr::new(std::ptr::null_mut()) }; SLOTS];
/// Set while a command handles SIGINT/SIGTERM itself: the handler then only removes temp files.
static HANDLED_ELSEWHERE: AtomicBool = AtomicBool::new(false);
/// The same for SIGHUP (a closed terminal), for a command that stops between steps and cleans up
/// what it has made (`export`'s staging folder, not a single temp file the handler can unlink).
static HANGUP_HANDLED_ELSEWHERE: AtomicBool = AtomicBool::new(false);
/// The last signal caught (0: none), for a command that handles it itself and checks between
/// steps (`export`, which removes its staging folder and stops).
static CAUGHT: AtomicI32 = AtomicI32::new(0);
static INSTALL: Once = Once::new();

/// A registered temporary path; dropping it unregisters it (the file itself is not touched).
pub struct TempGuard {
    slot: Option<usize>,
}

impl TempGuard {
    pub fn register(path: &Path) -> TempGuard {
        install();
        let Ok(c) = CString::new(path.as_os_str().as_bytes()) else {
            return TempGuard { slot: None };
        };
        let ptr = c.into_raw();
        for (i, slot) in TEMPS.iter().enumerate() {
            if slot
                .compare_exchange(
                    std::ptr::null_mut(),
                    ptr,
                    Ordering::AcqRel,
                    Ordering::Acquire,
                )
                .is_ok()
            {
                return TempGuard { slot: Some(i) };
            }
        }
        // More than SLOTS outputs open at once does not happen; such a file is still removed on
        // every other path.
        drop(unsafe { CString::from_raw(ptr) });
        TempGuard { slot: None }
    }
}

impl TempGuard {
    /// A temporary folder of registered files: a signal removes it after them.
    pub fn register_folder(path: &Path) -> TempGuard {
        TempGuard::register(path)
    }
}

impl Drop for TempGuard {
    fn drop(&mut self) {
        if let Some(i) = self.slot {
            // The string is not freed: a handler running on another thread may have loaded the
            // pointer just before this swap. A path per output file is all that is kept.
            TEMPS[i].swap(std::ptr::null_mut(), Ordering::AcqRel);
        }
    }
}

/// While the returned guard lives, SIGINT/SIGTERM are the caller's to handle (tokio's signal
/// streams in `collect`): the handler removes temp files but does not end the process.
pub fn handled_elsewhere() -> HandledElsewhere {
    install();
    HANDLED_ELSEWHERE.store(true, Ordering::SeqCst);
    HandledElsewhere(())
}

/// [`handled_elsewhere`], and SIGHUP too: for a command that checks [`caught`] between steps
/// (`collect`'s tokio streams do not listen for SIGHUP, so it keeps the default there).
pub fn handled_elsewhere_with_hangup() -> HandledElsewhere {
    let guard = handled_elsewhere();
    HANGUP_HANDLED_ELSEWHERE.store(true, Ordering::SeqCst);
    guard
}

pub struct HandledElsewhere(());

thread_local! {
    /// A host's stop request for the work on this thread ([`stop_with`]).
    static STOP: std::cell::RefCell<Option<std::sync::Arc<AtomicBool>>> =
        const { std::cell::RefCell::new(None) };
}

/// Work on this thread stops, as on SIGINT, once `stop` is set: the Python module runs a call
/// on a thread of its own and sets it when Python raises `KeyboardInterrupt`, since the
/// process's signals are the host's (docs/python.md).
pub fn stop_with(stop: std::sync::Arc<AtomicBool>) {
    STOP.with(|s| *s.borrow_mut() = Some(stop));
}

/// The shell's exit status of a command ended by signal `sig` (128 + its number).
pub fn exit_code(sig: i32) -> std::process::ExitCode {
    std::process::ExitCode::from(128u8.saturating_add(u8::try_from(sig).unwrap_or(0)))
}

/// The signal caught since the process started, if any (while [`handled_elsewhere`] is held,
/// the process goes on after SIGINT and SIGTERM; the command checks this to stop), or SIGINT
/// once this thread's host asked it to stop ([`stop_with`]).
pub fn caught() -> Option<i32> {
    let stopped = STOP.with(|s| {
        s.borrow()
            .as_ref()
            .is_some_and(|s| s.load(Ordering::SeqCst))
    });
    if stopped {
        return Some(libc::SIGINT);
    }
    Some(CAUGHT.load(Ordering::SeqCst)).filter(|s| *s != 0)
}

impl Drop for HandledElsewhere {
    fn drop(&mut self) {
        HANDLED_ELSEWHERE.store(false, Ordering::SeqCst);
        HANGUP_HANDLED_ELSEWHERE.store(false, Ordering::SeqCst);
    }
}

/// Whether SIGINT was ignored when the process started (a background job of a
/// non-interactive shell): it stays ignored, as Python leaves it (CPython installs its
/// `KeyboardInterrupt` handler only over the default action, so v0.7.0 runs on). Read once,
/// before any handler of ours replaces the disposition (`main` asks first).
pub fn sigint_ignored_at_start() -> bool {
    static IGNORED: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *IGNORED.get_or_init(|| {
        // SAFETY: a null new action only reads the current one into `old`.
        unsafe {
            let mut old: libc::sigaction = std::mem::zeroed();
            libc::sigaction(libc::SIGINT, std::ptr::null(), &raw mut old) == 0
                && old.sa_sigaction == libc::SIG_IGN
        }
    })
}

fn install() {
    // In a host's process (the Python module) its own handlers stay: Ctrl-C is the host's.
    if super::out::capturing() {
        return;
    }
    INSTALL.call_once(|| {
        for sig in SIGNALS {
            if sig == libc::SIGINT && sigint_ignored_at_start() {
                continue;
            }
            // SAFETY: `on_signal` only loads atomics and calls async-signal-safe libc functions.
            let _ = unsafe { signal_hook_registry::register(sig, move || on_signal(sig)) };
        }
    });
}

fn on_signal(sig: libc::c_int) {
    CAUGHT.store(sig, Ordering::SeqCst);
    for slot in &TEMPS {
        let ptr = slot.load(Ordering::Acquire);
        if !ptr.is_null() {
            // SAFETY: registered strings are never freed; unlink is async-signal-safe.
            unsafe { libc::unlink(ptr) };
        }
    }
    // Then the folders ([`TempGuard::register_folder`]), emptied by the pass above (`rmdir` of
    // a file, or of a folder still holding something, fails and does nothing).
    for slot in &TEMPS {
        let ptr = slot.load(Ordering::Acquire);
        if !ptr.is_null() {
            // SAFETY: as above; rmdir is async-signal-safe.
            unsafe { libc::rmdir(ptr) };
        }
    }
    let handled = if sig == libc::SIGHUP {
        &HANGUP_HANDLED_ELSEWHERE
    } else {
        &HANDLED_ELSEWHERE
    };
    if !handled.load(Ordering::SeqCst) {
        // SAFETY: signal and raise are async-signal-safe; the raised signal is delivered with
        // the default action once this handler returns.
        unsafe {
            libc::signal(sig, libc::SIG_DFL);
            libc::raise(sig);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{caught, stop_with};
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;

    #[test]
    fn a_host_stops_the_work_of_one_thread() {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let (seen, asked) = std::sync::mpsc::channel();
        let (go, wait) = std::sync::mpsc::channel::<()>();
        let worker = std::thread::spawn(move || {
            stop_with(flag);
            seen.send(caught()).unwrap();
            wait.recv().unwrap();
            seen.send(caught()).unwrap();
        });
        assert_eq!(asked.recv().unwrap(), None);
        stop.store(true, Ordering::SeqCst);
        go.send(()).unwrap();
        assert_eq!(asked.recv().unwrap(), Some(libc::SIGINT));
        worker.join().unwrap();
        // Other threads go on.
        assert_eq!(caught(), None);
    }
}
