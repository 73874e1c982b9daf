//! What every command prints goes through here, so a closed pipe (`gymscope health run.jsonl |
//! head`, `… 2>&1 | true`) ends the output quietly and never panics, as `println!` does.
//!
//! [`say!`](crate::say) / [`say_part!`](crate::say_part) write to stdout and [`note!`](crate::note)
//! to stderr; neither fails. A stdout write that fails for another reason than a closed pipe
//! (`> /dev/full`: no space left) is remembered, and [`finish`] turns it into the command's
//! error, so the output is never lost silently. Nothing can be said about a failing stderr.

use std::fmt;
use std::io::{self, Write};
use std::sync::Mutex;

/// The first stdout write error that was not a closed pipe.
static STDOUT_ERROR: Mutex<Option<io::Error>> = Mutex::new(None);

/// Writes to stdout; errors are kept for [`finish`] (a closed pipe is no error).
pub fn stdout(args: fmt::Arguments, newline: bool) {
    let mut out = io::stdout().lock();
    let written = out.write_fmt(args).and_then(|()| {
        if newline {
            out.write_all(b"\n")
        } else {
            Ok(())
        }
    });
    if let Err(e) = written {
        remember(e);
    }
}

/// Writes to stderr; a closed or failing stderr is ignored (there is nowhere to say it).
pub fn stderr(args: fmt::Arguments) {
    let mut err = io::stderr().lock();
    let _ = err.write_fmt(args).and_then(|()| err.write_all(b"\n"));
}

/// A `Write` to stdout with [`say!`](crate::say)'s rules, for code that writes to a writer.
pub struct Stdout;

impl Write for Stdout {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if let Err(e) = io::stdout().lock().write_all(buf) {
            remember(e);
        }
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        if let Err(e) = io::stdout().lock().flush() {
            remember(e);
        }
        Ok(())
    }
}

/// A `Write` to stderr with [`note!`](crate::note)'s rules: it never fails.
pub struct Stderr;

impl Write for Stderr {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let _ = io::stderr().lock().write_all(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        let _ = io::stderr().lock().flush();
        Ok(())
    }
}

/// Whether an error is a closed pipe: the reader is done (`| head`), which is not a failure.
pub fn is_closed_pipe(e: &io::Error) -> bool {
    e.kind() == io::ErrorKind::BrokenPipe
}

fn remember(e: io::Error) {
    if is_closed_pipe(&e) {
        return;
    }
    if let Ok(mut first) = STDOUT_ERROR.lock() {
        first.get_or_insert(e);
    }
}

/// Flushes stdout; the first write error other than a closed pipe, if any.
pub fn finish() -> Result<(), io::Error> {
    if let Err(e) = io::stdout().lock().flush() {
        remember(e);
    }
    match STDOUT_ERROR.lock().ok().and_then(|mut e| e.take()) {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// `println!` that never panics: see [`crate::native::out`].
#[macro_export]
macro_rules! say {
    () => { $crate::native::out::stdout(format_args!(""), true) };
    ($($arg:tt)*) => { $crate::native::out::stdout(format_args!($($arg)*), true) };
}

/// `print!` that never panics: see [`crate::native::out`].
#[macro_export]
macro_rules! say_part {
    ($($arg:tt)*) => { $crate::native::out::stdout(format_args!($($arg)*), false) };
}

/// `eprintln!` that never panics: see [`crate::native::out`].
#[macro_export]
macro_rules! note {
    ($($arg:tt)*) => { $crate::native::out::stderr(format_args!($($arg)*)) };
}
